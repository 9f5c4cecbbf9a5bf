"""MTEB's search results (rows sharing an id) and its abstention scores (nAUC), against values
computed by hand and brute-force implementations."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import auc

from audiobench.evaluators.mteb_protocol.search import corpus_search, rerank_search
from audiobench.metrics.abstention import (
    ABSTENTION_RATES,
    confidence_scores,
    nauc,
    nauc_scores,
)


def _f32(x: float) -> float:
    return float(np.float32(x))


# ---------------------------------------------------------------------------- search


def test_repeated_ids_collapse_as_the_heap_leaves_them() -> None:
    # Two query rows with id "a"; corpus rows x, y, x. Pushed on a's heap, best first per row:
    # (.9,x) (.5,y) (.1,x) then (.8,y) (.7,x) (.2,x). The heap array is then
    # [.1x, .7x, .2x, .9x, .8y, .5y] (worked by hand): the latest x is .9, the latest y .5.
    scores = np.array([[0.9, 0.5, 0.1], [0.2, 0.8, 0.7]], dtype=np.float32)
    out = corpus_search(scores, ["a", "a"], ["x", "y", "x"])
    assert out.query_ids == ["a"] and out.corpus_ids == ["x", "y"]
    assert out.scores.tolist() == [[_f32(0.9), _f32(0.5)]]
    assert out.retrieved.all()


def test_depth_keeps_the_largest_score_then_id_tuples() -> None:
    scores = np.array([[0.5, 0.5, 0.1]], dtype=np.float32)
    out = corpus_search(scores, ["q"], ["a", "b", "c"], top_k=1)
    assert out.retrieved.tolist() == [[False, True, False]]  # (.5, "b") > (.5, "a")


def test_unique_ids_search_equals_the_heap() -> None:
    rng = np.random.default_rng(0)
    scores = np.round(rng.random((6, 40)), 1).astype(np.float32)  # many ties
    qids, cids = [f"q{i}" for i in range(6)], [f"d{j:02d}" for j in range(40)]
    fast = corpus_search(scores, qids, cids, top_k=7)
    # The heap path, forced by a repeated corpus id in a last column that no query keeps.
    low = np.full((6, 1), -1.0, dtype=np.float32)
    slow = corpus_search(np.hstack([scores, low]), qids, [*cids, "d00"], top_k=7, chunk_size=9)
    assert slow.corpus_ids == cids
    np.testing.assert_array_equal(fast.retrieved, slow.retrieved)
    np.testing.assert_array_equal(fast.scores, slow.scores)
    # Brute force: the 7 largest (score, id) tuples of each row.
    for q in range(6):
        best = sorted(zip(scores[q].tolist(), cids, strict=True), reverse=True)[:7]
        assert {c for _, c in best} == {cids[j] for j in np.flatnonzero(fast.retrieved[q])}


def test_reranking_query_without_candidates_has_no_results() -> None:
    scores = np.array([[0.3, 0.9], [0.5, 0.1]], dtype=np.float32)
    out = rerank_search(scores, ["q0", "q1"], ["d0", "d1"], [[1, 0, 1], []])
    assert out.query_ids == ["q0", "q1"]
    assert out.retrieved.tolist() == [[True, True], [False, False]]
    assert out.retrieved_scores(0).tolist() == [_f32(0.3), _f32(0.9)]
    assert out.retrieved_scores(1).size == 0


# ---------------------------------------------------------------------------- abstention


def test_confidence_scores_by_hand() -> None:
    assert confidence_scores([0.2, 0.8, 0.5]) == pytest.approx(
        {"max": 0.8, "std": np.sqrt(((0.3) ** 2 + 0.3**2 + 0) / 3), "diff1": 0.3}
    )
    assert confidence_scores([0.4]) == {"max": 0.4, "std": 0.0, "diff1": 0.0}
    assert confidence_scores([]) == {"max": 0.0, "std": 0.0, "diff1": 0.0}


def test_nauc_by_hand() -> None:
    metric = np.array([0.0, 1.0, 0.0, 1.0])
    # A confidence that orders the queries as the metric does is the oracle: 1.
    assert nauc(np.array([0.1, 0.4, 0.2, 0.3]), metric) == pytest.approx(1.0)
    # The reverse: curve .5 .5 1/3 1/3 0 ... (area .141667), oracle .5 .5 2/3 2/3 1 ...
    # (area .758333), flat .45: (.141667 - .45) / (.758333 - .45) = -1.
    assert nauc(np.array([0.4, 0.1, 0.3, 0.2]), metric) == pytest.approx(-1.0)
    # Every query with the same metric: the oracle is flat, nAUC undefined.
    assert nauc(np.array([0.1, 0.2]), np.array([1.0, 1.0])) is None


def _nauc_brute(conf: list[float], metric: list[float]) -> float | None:
    n = len(conf)

    def curve(by: list[float]) -> list[float]:
        order = sorted(range(n), key=lambda i: (by[i], i))
        out = []
        for rate in ABSTENTION_RATES:
            drop = min(round(float(rate) * n), n - 1)
            kept = [metric[i] for i in order[drop:]]
            out.append(sum(kept) / len(kept))
        return out

    raw, oracle = curve(conf), curve(metric)
    flat = oracle[0] * 0.9
    area, best = auc(ABSTENTION_RATES, raw), auc(ABSTENTION_RATES, oracle)
    return None if best == flat else (area - flat) / (best - flat)


@pytest.mark.parametrize("seed", range(5))
def test_nauc_against_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 40))
    conf = np.round(rng.random(n), 2)
    metric = np.round(rng.random(n), 1)
    expected = _nauc_brute(conf.tolist(), metric.tolist())
    got = nauc(conf, metric)
    assert (got is None) == (expected is None)
    if expected is not None:
        assert got == pytest.approx(expected, abs=1e-12)


def test_nauc_scores_keys() -> None:
    per_query = {"ndcg_at_1": np.array([1.0, 0.0]), "mrr_at_1": np.array([0.0, 1.0])}
    out = nauc_scores(per_query, [np.array([0.9, 0.1]), np.array([0.5])])
    assert list(out) == [
        f"nauc_{m}_at_1_{f}" for m in ("ndcg", "mrr") for f in ("max", "std", "diff1")
    ]
    # max: query 0 (.9) is the more confident and has ndcg 1: oracle order.
    assert out["nauc_ndcg_at_1_max"] == pytest.approx(1.0)
    assert out["nauc_mrr_at_1_max"] == pytest.approx(-1.0)
