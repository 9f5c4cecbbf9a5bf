"""trec_eval-style retrieval / reranking metrics at MTEB's cut-offs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from audiobench.evaluators.mteb_protocol.trec_retrieval import (
    TREC_K_VALUES,
    TREC_METRICS,
    trec_retrieval_scores,
)

# Two queries over documents d0 d1 d2 (ids "0" "1" "2"):
#   q0: scores 0.5 0.7 0.7, relevant d0 (grade 1). d1 and d2 tie: the larger id ("2") first,
#       so the order is d2 d1 d0 and d0 has rank 3.
#       P@1 = P@2 = 0, P@3 = 1/3; recall@3 = 1; map@3 = (1/3)/1; nDCG@3 = (1/log2 4)/1 = 1/2;
#       MRR@3 = 1/3, MRR@1 = 0.
#   q1: scores 0.9 0.1 0.5, grades d0 = 1, d2 = 2 (graded). Order d0 d2 d1.
#       P@1 = P@2 = 1, P@3 = 2/3; recall@1 = 1/2; map@1 = (1/1)/2 = 1/2, map@3 = (1 + 2/2)/2 = 1;
#       nDCG@1 = 1/2 (ideal puts grade 2 first); nDCG@3 = (1 + 2/log2 3)/(2 + 1/log2 3);
#       MRR@1 = 1.
SCORES = np.array([[0.5, 0.7, 0.7], [0.9, 0.1, 0.5]])
GRADES = np.array([[1, 0, 0], [1, 0, 2]])


def test_hand_computed_values() -> None:
    r = trec_retrieval_scores(SCORES, GRADES, k_values=[1, 2, 3], decimals=None)
    ndcg3_q1 = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    expected = {
        "precision_at_1": 0.5,
        "precision_at_2": 0.5,
        "precision_at_3": (1 / 3 + 2 / 3) / 2,
        "recall_at_1": 0.25,
        "recall_at_3": 1.0,
        "map_at_1": 0.25,
        "map_at_3": (1 / 3 + 1) / 2,
        "ndcg_at_1": 0.25,
        "ndcg_at_3": (0.5 + ndcg3_q1) / 2,
        "mrr_at_1": 0.5,
        "mrr_at_3": (1 / 3 + 1) / 2,
        "hit_rate_at_1": 0.5,
        "hit_rate_at_2": 0.5,
        "hit_rate_at_3": 1.0,
        "accuracy": 0.25,
    }
    assert {key: r[key] for key in expected} == pytest.approx(expected)
    assert list(r) == [f"{m}_at_{k}" for m in TREC_METRICS for k in (1, 2, 3)] + ["accuracy"]


def test_default_cutoffs_rounding_and_precision_divided_by_k() -> None:
    r = trec_retrieval_scores(SCORES, GRADES)
    assert {int(key.rsplit("_", 1)[1]) for key in r if key != "accuracy"} == set(TREC_K_VALUES)
    assert r["precision_at_1000"] == pytest.approx(round((1 + 2) / 1000 / 2, 5))
    assert r["precision_at_3"] == round(0.5, 5)
    # MRR is not rounded (MTEB computes it outside trec_eval); the others are, to 5 decimals.
    assert r["mrr_at_3"] == (1 / 3 + 1) / 2
    assert r["ndcg_at_3"] == round(
        trec_retrieval_scores(SCORES, GRADES, decimals=None)["ndcg_at_3"], 5
    )


def test_ties_follow_the_corpus_ids() -> None:
    scores = np.array([[0.3, 0.3]])
    relevant_first = trec_retrieval_scores(scores, np.array([[1, 0]]), k_values=[1])
    assert relevant_first["hit_rate_at_1"] == 0.0  # "1" > "0": d1 is ranked first
    named = trec_retrieval_scores(scores, np.array([[1, 0]]), corpus_ids=["b", "a"], k_values=[1])
    assert named["hit_rate_at_1"] == 1.0  # "b" > "a": d0 first
    # Ids compare as strings: "10" < "9".
    ids = [str(j) for j in range(11)]
    tie = np.zeros((1, 11))
    relevant_9 = np.zeros((1, 11), dtype=int)
    relevant_9[0, 9] = 1
    assert trec_retrieval_scores(tie, relevant_9, corpus_ids=ids, k_values=[1])["mrr_at_1"] == 1.0


def test_candidates_restrict_the_ranking_but_not_the_relevant_count() -> None:
    scores = np.array([[0.9, 0.8, 0.1, 0.5]])
    grades = np.array([[1, 0, 1, 0]])
    # Candidates d2 and d3 only: d2 (relevant) ranks 2nd behind d3; d0 is never retrieved.
    r = trec_retrieval_scores(scores, grades, candidates=[[2, 3]], k_values=[1, 2], decimals=None)
    assert r["recall_at_2"] == 0.5  # R = 2 counts d0
    assert r["map_at_2"] == pytest.approx((1 / 2) / 2)
    assert r["mrr_at_2"] == 0.5 and r["hit_rate_at_1"] == 0.0
    mask = np.array([[False, False, True, True]])
    assert trec_retrieval_scores(scores, grades, candidates=mask, k_values=[1, 2]) == (
        trec_retrieval_scores(scores, grades, candidates=[np.array([3, 2])], k_values=[1, 2])
    )


def test_queries_without_relevant_documents() -> None:
    grades = np.array([[1, 0, 0], [0, 0, 0]])
    with pytest.raises(ValueError, match="no relevant document"):
        trec_retrieval_scores(SCORES, grades)
    zero = trec_retrieval_scores(SCORES, grades, on_missing="zero", k_values=[3], decimals=None)
    skip = trec_retrieval_scores(SCORES, grades, on_missing="skip", k_values=[3], decimals=None)
    assert zero["recall_at_3"] == 0.5 and skip["recall_at_3"] == 1.0
    assert zero["mrr_at_3"] == pytest.approx(1 / 6) and skip["mrr_at_3"] == pytest.approx(1 / 3)


def naive(
    scores: np.ndarray,
    grades: np.ndarray,
    ids: list[str],
    candidates: list[list[int]] | None,
    ks: list[int],
) -> dict[str, float]:
    """Plain loops: sort by (score, id) descending, keep the first max(k)."""
    sums: dict[str, float] = {f"{m}_at_{k}": 0.0 for m in TREC_METRICS for k in ks}
    n_q, n_d = scores.shape
    for q in range(n_q):
        pool = range(n_d) if candidates is None else candidates[q]
        order = sorted(pool, key=lambda j: (float(scores[q, j]), ids[j]), reverse=True)[: max(ks)]
        gains = [int(g) for g in grades[q]]
        n_rel = sum(1 for g in gains if g > 0)
        ideal = sorted((g for g in gains if g > 0), reverse=True)
        for k in ks:
            top = order[:k]
            rel_ranks = [i + 1 for i, j in enumerate(top) if gains[j] > 0]
            dcg = sum(gains[j] / math.log2(i + 2) for i, j in enumerate(top) if gains[j] > 0)
            idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal[:k]))
            sums[f"precision_at_{k}"] += len(rel_ranks) / k
            sums[f"recall_at_{k}"] += len(rel_ranks) / n_rel
            sums[f"hit_rate_at_{k}"] += 1.0 if rel_ranks else 0.0
            sums[f"map_at_{k}"] += sum((i + 1) / r for i, r in enumerate(rel_ranks)) / n_rel
            sums[f"ndcg_at_{k}"] += dcg / idcg
            sums[f"mrr_at_{k}"] += 1 / rel_ranks[0] if rel_ranks else 0.0
    return {key: value / n_q for key, value in sums.items()}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("rerank", [False, True])
def test_matches_naive_loops(seed: int, rerank: bool) -> None:
    rng = np.random.default_rng(seed)
    n_q, n_d = int(rng.integers(1, 12)), int(rng.integers(2, 40))
    scores = rng.normal(size=(n_q, n_d)).round(1).astype(np.float32)  # ties
    grades = rng.choice([0, 0, 0, 1, 2], size=(n_q, n_d))
    grades[np.arange(n_q), rng.integers(0, n_d, size=n_q)] = 1
    ids = [f"doc{rng.integers(0, 1000)}_{j}" for j in range(n_d)]
    candidates = None
    if rerank:
        candidates = [
            rng.choice(n_d, size=int(rng.integers(1, n_d + 1)), replace=False).tolist()
            for _ in range(n_q)
        ]
    ks = [1, 2, 5, 10]
    ours = trec_retrieval_scores(
        scores, grades, candidates=candidates, corpus_ids=ids, k_values=ks, decimals=None
    )
    expected = naive(scores, grades, ids, candidates, ks)
    assert {key: ours[key] for key in expected} == pytest.approx(expected, abs=1e-12)
    # Per-query collections give the same result as the matrix.
    per_query = [{j: int(g) for j, g in enumerate(row) if g > 0} for row in grades]
    assert trec_retrieval_scores(
        scores, per_query, candidates=candidates, corpus_ids=ids, k_values=ks, decimals=None
    ) == pytest.approx(ours)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"relevance": np.array([[0.5, 1, 0], [1, 0, 0]])}, "whole numbers"),
        ({"corpus_ids": ["a", "a", "b"]}, "unique"),
        ({"corpus_ids": ["a", "b"]}, "2 corpus_ids for 3"),
        ({"candidates": [[0], []]}, "no candidate"),
        ({"candidates": [[0], [3]]}, "indices in"),
        ({"candidates": np.ones((2, 3))}, "boolean"),
        ({"k_values": []}, "non-empty"),
        ({"k_values": [0]}, "positive integer"),
        ({"on_missing": "drop"}, "on_missing"),
    ],
)
def test_invalid_inputs(kwargs: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {"scores": SCORES, "relevance": GRADES} | kwargs
    with pytest.raises(ValueError, match=message):
        trec_retrieval_scores(**arguments)  # type: ignore[arg-type]


def test_per_query_values_average_to_the_scores_and_an_empty_list_scores_zero() -> None:
    from audiobench.evaluators.mteb_protocol.trec_retrieval import trec_per_query

    scores = np.array([[0.9, 0.1, 0.5], [0.2, 0.8, 0.4], [0.3, 0.3, 0.3]])
    relevance = [{0: 2, 2: 1}, [1], [2]]
    candidates = [[0, 1, 2], [0, 1], []]  # the last query has nothing to rank
    per_query = trec_per_query(
        scores, relevance, candidates=candidates, on_missing="zero", allow_empty_candidates=True
    )
    means = trec_retrieval_scores(
        scores,
        relevance,
        candidates=candidates,
        on_missing="zero",
        allow_empty_candidates=True,
        decimals=None,
    )
    for key, values in per_query.items():
        assert values.shape == (3,) and means[key] == pytest.approx(values.mean())
    assert all(values[2] == 0 for values in per_query.values())
    # Query 0: d0 (gain 2) at rank 1, d2 (gain 1) at rank 2 -> the ideal order, nDCG 1.
    assert per_query["ndcg_at_10"][0] == pytest.approx(1.0)
    assert per_query["mrr_at_1"].tolist() == [1.0, 1.0, 0.0]
