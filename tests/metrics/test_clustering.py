"""Clustering agreement metrics and k-means over seeds."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from sklearn.cluster import MiniBatchKMeans

from audiobench.metrics import (
    InsufficientClassesError,
    InvalidEmbeddingsError,
    adjusted_rand_index,
    cluster_scores,
    labelling_scores,
    normalized_mutual_information,
    purity_score,
    v_measure,
)

from .data import clustered_embeddings


@pytest.fixture(autouse=True)
def _single_openmp_thread():
    """k-means on a few dozen points: OpenMP threads cost more than they save (and spin
    badly when other processes share the cores), so the tests run it on one thread."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="openmp"):
        yield


# Six samples, two classes, three clusters. Contingency (class × cluster):
#
#             k0  k1  k2
#   class a    2   1   0
#   class b    0   1   2
#
# purity = (2 + 1 + 2) / 6 = 5/6.
# ARI: Σ C(n_ck, 2) = 1 + 1 = 2; class sizes 3, 3 -> Σ C(a, 2) = 6; cluster sizes 2, 2, 2 ->
#      Σ C(b, 2) = 3; E = 6 · 3 / C(6, 2) = 1.2; ARI = (2 − 1.2) / ((6 + 3)/2 − 1.2) = 8/33.
# H(C) = ln 2, H(K) = ln 3, I = 2 · (1/3) ln((1/3) / (1/2 · 1/3)) = (2/3) ln 2 (the two cells of
#      1 contribute ln 1 = 0); NMI = I / ((H(C) + H(K)) / 2) = 4 ln 2 / (3 ln 6).
# V-measure: h = I / H(C) = 2/3, c = I / H(K); 2hc / (h + c) = 2I / (H(C) + H(K)) = NMI.
TRUE = ["a", "a", "a", "b", "b", "b"]
PRED = [0, 0, 1, 1, 2, 2]
NMI = 4 * math.log(2) / (3 * math.log(6))


def test_hand_computed_values() -> None:
    assert purity_score(TRUE, PRED) == pytest.approx(5 / 6)
    assert adjusted_rand_index(TRUE, PRED) == pytest.approx(8 / 33)
    assert normalized_mutual_information(TRUE, PRED) == pytest.approx(NMI)
    assert v_measure(TRUE, PRED) == pytest.approx(NMI)
    assert labelling_scores(TRUE, PRED) == {
        "v_measure": pytest.approx(NMI),
        "nmi": pytest.approx(NMI),
        "ari": pytest.approx(8 / 33),
        "purity": pytest.approx(5 / 6),
    }


def test_purity_is_not_symmetric_and_rewards_singletons() -> None:
    # Swapping roles: clusters a, b hold classes {0,0,1} and {1,2,2} -> (2 + 2) / 6.
    assert purity_score(PRED, TRUE) == pytest.approx(4 / 6)
    assert purity_score(TRUE, list(range(6))) == 1.0
    assert purity_score(TRUE, [7] * 6) == pytest.approx(0.5)


def test_perfect_and_degenerate_labellings() -> None:
    renamed = ["x", "x", "y", "y", "z", "z"]
    truth = [1, 1, 2, 2, 3, 3]
    assert labelling_scores(truth, renamed) == {
        "v_measure": 1.0,
        "nmi": 1.0,
        "ari": 1.0,
        "purity": 1.0,
    }
    # One class, one cluster: both entropies 0 -> defined as perfect agreement.
    single = labelling_scores([0, 0, 0], ["c", "c", "c"])
    assert single["v_measure"] == single["nmi"] == single["ari"] == single["purity"] == 1.0
    # One class, many clusters: I = 0, so V-measure and NMI are 0; purity is 1.
    split = labelling_scores([0, 0, 0, 0], [0, 1, 2, 3])
    assert split["v_measure"] == 0.0 and split["nmi"] == 0.0 and split["purity"] == 1.0


def _reference(true: list[object], pred: list[object]) -> dict[str, float]:
    """The four metrics from the contingency table, with plain loops and math."""
    n = len(true)
    cells = Counter(zip(true, pred, strict=True))
    classes = Counter(true)
    clusters = Counter(pred)
    h_c = -sum(a / n * math.log(a / n) for a in classes.values())
    h_k = -sum(b / n * math.log(b / n) for b in clusters.values())
    mi = sum(
        v / n * math.log((v / n) / (classes[c] / n * clusters[k] / n))
        for (c, k), v in cells.items()
    )
    nmi = 1.0 if h_c == h_k == 0 else mi / ((h_c + h_k) / 2)
    h = 1.0 if h_c == 0 else mi / h_c
    c = 1.0 if h_k == 0 else mi / h_k
    v = 0.0 if h + c == 0 else 2 * h * c / (h + c)
    pairs = sum(math.comb(v, 2) for v in cells.values())
    a = sum(math.comb(v, 2) for v in classes.values())
    b = sum(math.comb(v, 2) for v in clusters.values())
    expected = a * b / math.comb(n, 2)
    ari = (pairs - expected) / ((a + b) / 2 - expected)
    majority = {k: max(v for (_, kk), v in cells.items() if kk == k) for k in clusters}
    return {"v_measure": v, "nmi": nmi, "ari": ari, "purity": sum(majority.values()) / n}


@pytest.mark.parametrize("seed", range(6))
def test_matches_contingency_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(10, 80))
    true = [f"class{int(c)}" for c in rng.integers(0, rng.integers(2, 7), n)]
    pred = rng.integers(0, rng.integers(2, 9), n).tolist()
    expected = _reference(true, pred)
    got = labelling_scores(true, pred)
    for name, value in expected.items():
        assert got[name] == pytest.approx(value, abs=1e-12), name


def test_cluster_scores_on_separated_classes() -> None:
    rng = np.random.default_rng(0)
    X, y = clustered_embeddings(rng, [15, 12, 10], dim=6, spread=0.01)
    labels = [f"w{v}" for v in y]
    result = cluster_scores(X, labels, seeds=(0, 1), batch_size=64)
    assert result.n_clusters == 3 and result.n_samples == 37
    assert result.seeds == (0, 1)
    for name in ("v_measure", "nmi", "ari", "purity"):
        assert result.per_seed[name] == pytest.approx((1.0, 1.0))
        assert result.mean[name] == pytest.approx(1.0)
        assert result.std[name] == pytest.approx(0.0, abs=1e-12)
    as_dict = result.to_dict()
    assert as_dict["seeds"] == [0, 1] and as_dict["per_seed"]["ari"] == pytest.approx([1.0] * 2)
    assert set(as_dict) == {"mean", "std", "per_seed", "seeds", "n_clusters", "n_samples"}


def test_cluster_scores_per_seed_match_a_direct_run() -> None:
    rng = np.random.default_rng(3)
    X, y = clustered_embeddings(rng, [20, 20, 20, 20], dim=4, spread=0.9)
    result = cluster_scores(X, y, seeds=(5, 11), batch_size=32)
    for position, seed in enumerate((5, 11)):
        model = MiniBatchKMeans(n_clusters=4, batch_size=32, n_init=1, random_state=seed)
        expected = labelling_scores(y, model.fit_predict(X))
        for name, value in expected.items():
            assert result.per_seed[name][position] == pytest.approx(value)
    # (So a run is reproducible from its seeds.)
    for name, values in result.per_seed.items():
        assert result.mean[name] == pytest.approx(np.mean(values))
        assert result.std[name] == pytest.approx(np.std(values))  # population std, ddof = 0


def test_label_errors() -> None:
    with pytest.raises(ValueError, match="labels_pred has 5 values for 6 samples"):
        purity_score(TRUE, PRED[:5])
    with pytest.raises(ValueError, match="empty"):
        v_measure([], [])
    with pytest.raises(ValueError, match=r"missing values.*indices: 1"):
        adjusted_rand_index(["a", None, "b"], [0, 1, 1])
    with pytest.raises(ValueError, match="not a string"):
        normalized_mutual_information("aab", [0, 0, 1])


def test_cluster_scores_errors() -> None:
    X = np.random.default_rng(0).normal(size=(6, 3))
    with pytest.raises(InsufficientClassesError, match="at least 2 distinct labels"):
        cluster_scores(X, ["a"] * 6)
    bad = X.copy()
    bad[2, 0] = np.nan
    with pytest.raises(InvalidEmbeddingsError, match="indices: 2"):
        cluster_scores(bad, TRUE)
    with pytest.raises(ValueError, match="labels has 5 values for 6 samples"):
        cluster_scores(X, TRUE[:5])
    with pytest.raises(ValueError, match="seeds must not be empty"):
        cluster_scores(X, TRUE, seeds=())
    with pytest.raises(ValueError, match="distinct"):
        cluster_scores(X, TRUE, seeds=(1, 1))
    with pytest.raises(ValueError, match="non-negative integers"):
        cluster_scores(X, TRUE, seeds=(-1,))
    with pytest.raises(ValueError, match="batch_size"):
        cluster_scores(X, TRUE, batch_size=0)
