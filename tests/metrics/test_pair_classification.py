"""Pair classification: similarities, best-threshold accuracy / F1, average precision."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from sklearn import metrics as skm

from audiobench.metrics import InvalidEmbeddingsError
from audiobench.metrics.pair_classification import (
    PAIR_SIMILARITIES,
    average_precision,
    best_accuracy_threshold,
    best_f1_threshold,
    pair_classification_metrics,
    pair_classification_scores,
    pair_similarities,
)

# Scores 0.9 0.8 0.7 0.6 with labels 1 0 1 0 (already in decreasing order). Thresholds sit
# between consecutive scores: 0.85 (1 pair predicted same), 0.75 (2), 0.65 (3).
#   accuracy: 0.85 -> TP 1, TN 2 -> 3/4; 0.75 -> 2/4; 0.65 -> TP 2, TN 1 -> 3/4:
#             best 3/4, the highest threshold among equals: 0.85
#   F1:       0.85 -> P 1, R 1/2, F1 2/3; 0.75 -> P 1/2, R 1/2, F1 1/2;
#             0.65 -> P 2/3, R 1, F1 4/5 (best)
#   AP:       precision at the positives' ranks 1 and 3: (1 + 2/3) / 2 = 5/6
HAND_SCORES = np.array([0.9, 0.8, 0.7, 0.6])
HAND_LABELS = np.array([1, 0, 1, 0])

# Ties: 0.9 0.5 0.5 0.1 with labels 1 1 0 0. No threshold splits the two 0.5s, so the
# candidates are 0.7 (1 pair "same") and 0.3 (3 pairs):
#   accuracy: 0.7 -> 3/4, 0.3 -> TP 2, FP 1, TN 1 -> 3/4: best 3/4 at 0.7
#   F1:       0.7 -> P 1, R 1/2 -> 2/3; 0.3 -> P 2/3, R 1 -> 4/5: best at 0.3
#   AP:       the 0.5s enter together: 1/2 · 1 + 1/2 · 2/3 = 5/6
TIED_SCORES = np.array([0.5, 0.1, 0.9, 0.5])
TIED_LABELS = np.array([0, 0, 1, 1])


def test_hand_computed_thresholds_and_ap() -> None:
    assert best_accuracy_threshold(HAND_SCORES, HAND_LABELS) == pytest.approx((0.75, 0.85))
    assert best_f1_threshold(HAND_SCORES, HAND_LABELS) == pytest.approx((0.8, 2 / 3, 1.0, 0.65))
    assert average_precision(HAND_SCORES, HAND_LABELS) == pytest.approx(5 / 6)


def test_tied_scores_are_never_split() -> None:
    assert best_accuracy_threshold(TIED_SCORES, TIED_LABELS) == pytest.approx((0.75, 0.7))
    assert best_f1_threshold(TIED_SCORES, TIED_LABELS) == pytest.approx((0.8, 2 / 3, 1.0, 0.3))
    assert average_precision(TIED_SCORES, TIED_LABELS) == pytest.approx(5 / 6)
    # Swapping the labels of the tied pairs changes nothing (their order never matters).
    swapped = np.array([1, 0, 1, 0])
    assert pair_classification_metrics(TIED_SCORES, swapped) == pytest.approx(
        pair_classification_metrics(TIED_SCORES, TIED_LABELS)
    )


def test_all_scores_tied_has_no_threshold() -> None:
    scores = np.full(5, 0.3)
    labels = np.array([1, 0, 1, 0, 0])
    accuracy, threshold = best_accuracy_threshold(scores, labels)
    assert accuracy == 0.0 and math.isnan(threshold)
    f1, precision, recall, threshold = best_f1_threshold(scores, labels)
    assert (f1, precision, recall) == (0.0, 0.0, 0.0) and math.isnan(threshold)
    # One threshold: everything predicted "same", precision 2/5 at recall 1.
    assert average_precision(scores, labels) == pytest.approx(2 / 5)


def test_f1_without_a_true_positive_above_any_threshold() -> None:
    # The only positive has the lowest score: every candidate threshold leaves TP = 0.
    f1, precision, recall, threshold = best_f1_threshold([0.9, 0.8, 0.1], [0, 0, 1])
    assert (f1, precision, recall) == (0.0, 0.0, 0.0) and math.isnan(threshold)


def brute_force(scores: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """Every candidate threshold tried with plain loops, the highest one kept among equals."""
    distinct = sorted(set(scores.tolist()), reverse=True)
    thresholds = [(hi + lo) / 2 for hi, lo in itertools.pairwise(distinct)]
    best_acc, acc_t = 0.0, math.nan
    best_f1, f1_p, f1_r, f1_t = 0.0, 0.0, 0.0, math.nan
    n_pos = int(labels.sum())
    for t in thresholds:  # decreasing, so a strict ">" keeps the highest threshold
        tp = sum(1 for s, y in zip(scores, labels, strict=True) if s > t and y == 1)
        fp = sum(1 for s, y in zip(scores, labels, strict=True) if s > t and y == 0)
        tn = sum(1 for s, y in zip(scores, labels, strict=True) if s <= t and y == 0)
        acc = (tp + tn) / len(labels)
        if acc > best_acc:
            best_acc, acc_t = acc, t
        if tp > 0:
            p, r = tp / (tp + fp), tp / n_pos
            f1 = 2 * p * r / (p + r)
            if f1 > best_f1:
                best_f1, f1_p, f1_r, f1_t = f1, p, r, t
    return {
        "accuracy": best_acc,
        "accuracy_threshold": acc_t,
        "f1": best_f1,
        "f1_threshold": f1_t,
        "precision": f1_p,
        "recall": f1_r,
        "ap": float(skm.average_precision_score(labels, scores)),
    }


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("decimals", [None, 1])
def test_matches_brute_force_and_scikit_learn(seed: int, decimals: int | None) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 60))
    scores = rng.normal(size=n)
    if decimals is not None:
        scores = scores.round(decimals)  # many ties
    labels = (rng.random(n) < 1 / (1 + np.exp(-2 * scores))).astype(int)
    labels[:2] = [0, 1]  # both classes present
    if np.ptp(scores) == 0:
        pytest.skip("all scores tied")
    ours = pair_classification_metrics(scores, labels)
    expected = brute_force(scores, labels)
    assert ours == pytest.approx(expected, abs=1e-12, nan_ok=True)
    # Order of the pairs does not matter.
    order = rng.permutation(n)
    assert pair_classification_metrics(scores[order], labels[order]) == pytest.approx(
        ours, abs=1e-12, nan_ok=True
    )


def test_similarities_by_hand() -> None:
    a = np.array([[1.0, 0.0], [3.0, 4.0]])
    b = np.array([[0.0, 2.0], [3.0, 4.0]])
    sims = pair_similarities(a, b)
    assert list(sims) == list(PAIR_SIMILARITIES)
    assert sims["cosine"] == pytest.approx([0.0, 1.0])
    assert sims["dot"] == pytest.approx([0.0, 25.0])
    assert sims["euclidean"] == pytest.approx([-math.sqrt(5), 0.0])
    assert sims["manhattan"] == pytest.approx([-3.0, 0.0])
    assert set(pair_similarities(a, b, ["dot"])) == {"dot"}


def test_distance_thresholds_are_negated_distances() -> None:
    # Distances 1, 2, 3, 4 for labels 1 1 0 0: "same" below distance 2.5.
    a = np.zeros((4, 1))
    b = np.array([[1.0], [2.0], [3.0], [4.0]])
    report = pair_classification_scores(
        a, b, [1, 1, 0, 0], functions=["euclidean"], model_similarity=None
    )
    assert report["euclidean_accuracy"] == 1.0
    assert report["euclidean_accuracy_threshold"] == pytest.approx(-2.5)
    assert report["euclidean_ap"] == pytest.approx(1.0)


def test_report_keys_and_maxima() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(40, 6)), rng.normal(size=(40, 6))
    labels = rng.integers(0, 2, size=40)
    labels[:2] = [0, 1]
    report = pair_classification_scores(a, b, labels)
    sims = pair_similarities(a, b)
    for name in PAIR_SIMILARITIES:
        assert {
            key: report[f"{name}_{key}"] for key in pair_classification_metrics(sims[name], labels)
        } == pytest.approx(pair_classification_metrics(sims[name], labels), nan_ok=True)
    for metric in ("accuracy", "f1", "precision", "recall", "ap"):
        assert report[f"max_{metric}"] == max(report[f"{n}_{metric}"] for n in PAIR_SIMILARITIES)
        assert report[f"similarity_{metric}"] == report[f"cosine_{metric}"]
    without = pair_classification_scores(a, b, labels, model_similarity=None)
    assert not any(key.startswith("similarity_") for key in without)


@pytest.mark.parametrize(
    ("scores", "labels", "message"),
    [
        ([0.1, 0.2, 0.3], [0, 1, 2], "0 \\(different\\) or 1"),
        ([0.1, 0.2, 0.3], [1, 1, 1], "no different"),
        ([0.1, 0.2, 0.3], [0, 0, 0], "no same"),
        ([0.1, 0.2], [0, 1, 1], "one value per pair"),
        ([0.1, float("nan"), 0.3], [0, 1, 1], "NaN"),
        ([[0.1, 0.2]], [0, 1], "1-D"),
    ],
)
def test_invalid_scores_and_labels(scores: object, labels: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        pair_classification_metrics(scores, labels)


def test_invalid_embeddings() -> None:
    a = np.ones((3, 2))
    with pytest.raises(ValueError, match="same shape"):
        pair_similarities(a, np.ones((4, 2)))
    with pytest.raises(ValueError, match="unknown similarity"):
        pair_similarities(a, a, ["cityblock"])
    zero = np.array([[1.0, 0.0], [0.0, 0.0], [1.0, 1.0]])
    with pytest.raises(InvalidEmbeddingsError, match="zero vectors") as caught:
        pair_similarities(zero, a)
    assert caught.value.clip_ids == (1,)
    assert set(pair_similarities(zero, a, ["dot", "euclidean"])) == {"dot", "euclidean"}
    with pytest.raises(ValueError, match="model_similarity"):
        pair_classification_scores(a, a, [0, 1, 1], functions=["dot"])


# ---------------------------------------------------------------------------- float32 (MTEB)


def test_float32_pair_scores_by_hand() -> None:
    from audiobench.metrics.pair_classification import pair_similarities

    a = np.array([[3.0, 4.0], [1.0, 0.0]])
    b = np.array([[4.0, 3.0], [0.0, 2.0]])
    out = pair_similarities(a, b, precision="float32")
    f32 = np.float32
    assert out["cosine"].tolist() == pytest.approx([0.96, 0.0], abs=1e-7)
    assert out["dot"].tolist() == [24.0, 0.0]
    assert out["euclidean"].tolist() == [float(-np.sqrt(f32(2))), float(-np.sqrt(f32(5)))]
    assert out["manhattan"].tolist() == [-2.0, -3.0]
    assert out["similarity"].tolist() == pytest.approx([0.96, 0.0], abs=1e-7)
    # Every value is a float32 number.
    for values in out.values():
        assert np.array_equal(values, values.astype(np.float32).astype(np.float64))


def test_float32_pair_scores_match_sklearns_paired_distances() -> None:
    from sklearn.metrics.pairwise import (
        paired_cosine_distances,
        paired_euclidean_distances,
        paired_manhattan_distances,
    )

    from audiobench.metrics.pair_classification import pair_similarities

    rng = np.random.default_rng(3)
    a = rng.standard_normal((50, 16)).astype(np.float32)
    b = rng.standard_normal((50, 16)).astype(np.float32)
    out = pair_similarities(a, b, precision="float32")
    np.testing.assert_allclose(out["cosine"], 1 - paired_cosine_distances(a, b), rtol=0, atol=2e-7)
    np.testing.assert_allclose(out["euclidean"], -paired_euclidean_distances(a, b), rtol=1e-6)
    np.testing.assert_allclose(out["manhattan"], -paired_manhattan_distances(a, b), rtol=1e-6)
    exact = pair_similarities(a, b)  # float64: within float32 rounding of it
    for name in ("cosine", "dot", "euclidean", "manhattan"):
        np.testing.assert_allclose(out[name], exact[name], rtol=1e-5, atol=1e-6)


def test_float32_report_scores_the_models_similarity_separately() -> None:
    from audiobench.metrics.pair_classification import pair_classification_scores

    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((40, 8)), rng.standard_normal((40, 8))
    labels = np.arange(40) % 2
    r32 = pair_classification_scores(a, b, labels, precision="float32")
    r64 = pair_classification_scores(a, b, labels)
    assert set(r32) == set(r64)
    for key, value in r64.items():
        assert r32[key] == pytest.approx(value, abs=1e-5), key
