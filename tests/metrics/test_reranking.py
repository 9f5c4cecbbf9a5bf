"""Reranking metrics over per-query candidate lists."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn import metrics as skm

from audiobench.metrics import reranking_scores, top_candidates, word_error_rate

# q0: scores 0.1 0.5 0.3 0.2, relevant c1 and c3 -> order c1 c2 c3 c0, relevant ranks 1 and 3
#     AP (1/1 + 2/3) / 2 = 5/6, RR 1, DCG 1 + 1/log2(4) = 1.5, IDCG 1 + 1/log2(3),
#     DCG@2 = 1 (c2 in second place is not relevant)
# q1: scores 1.0 1.0 (a tie: c0 first), relevant c1 -> rank 2
#     AP 1/2, RR 1/2, nDCG = nDCG@2 = 1/log2(3)
SCORES = [np.array([0.1, 0.5, 0.3, 0.2]), np.array([1.0, 1.0])]
RELEVANCE = [np.array([0, 1, 0, 1]), np.array([False, True])]
IDCG_Q0 = 1 + 1 / math.log2(3)


def test_hand_computed_values() -> None:
    report = reranking_scores(RELEVANCE, SCORES, ndcg_k=2)
    assert report == {
        "map": pytest.approx((5 / 6 + 1 / 2) / 2),
        "mrr": pytest.approx((1 + 1 / 2) / 2),
        "ndcg": pytest.approx((1.5 / IDCG_Q0 + 1 / math.log2(3)) / 2),
        "ndcg@2": pytest.approx((1 / IDCG_Q0 + 1 / math.log2(3)) / 2),
        "n_queries": 2,
        "n_skipped": 0,
        "n_skipped_empty": 0,
        "n_skipped_no_relevant": 0,
    }
    # Lists shorter than k: nDCG@10 is the full-list nDCG.
    default = reranking_scores(RELEVANCE, SCORES)
    assert default["ndcg@10"] == pytest.approx(default["ndcg"])


def test_ties_are_broken_by_lower_candidate_index() -> None:
    flat = [np.zeros(3)]
    for position in range(3):
        relevance = [np.eye(3, dtype=bool)[position]]
        assert reranking_scores(relevance, flat)["mrr"] == pytest.approx(1 / (position + 1))
    assert top_candidates([np.array([0.1, 0.5, 0.5]), np.array([2.0])]) == [1, 0]


def test_graded_relevance() -> None:
    # Gains 2 0 1 in score order: DCG = 2 + 1/log2(4) = 2.5; ideal 2 1 -> 2 + 1/log2(3).
    report = reranking_scores([np.array([2, 0, 1])], [np.array([0.9, 0.5, 0.1])])
    assert report["ndcg"] == pytest.approx(2.5 / (2 + 1 / math.log2(3)))
    assert report["map"] == pytest.approx((1 / 1 + 2 / 3) / 2)


def test_degenerate_queries_raise_or_are_skipped_and_counted() -> None:
    # Query 1 has an empty list, query 2 no relevant candidate.
    scores = [SCORES[0], np.array([]), np.array([0.3, 0.2]), SCORES[1]]
    relevance = [RELEVANCE[0], np.array([], dtype=bool), np.array([0, 0]), RELEVANCE[1]]
    with pytest.raises(ValueError, match=r"1 of 4 queries have an empty candidate list.*: 1\)"):
        reranking_scores(relevance, scores)
    keep = [0, 2, 3]
    with pytest.raises(ValueError, match=r"1 of 3 queries have no relevant candidate.*: 1\)"):
        reranking_scores([relevance[i] for i in keep], [scores[i] for i in keep])
    report = reranking_scores(relevance, scores, ndcg_k=2, on_missing="skip")
    assert report == reranking_scores(RELEVANCE, SCORES, ndcg_k=2) | {
        "n_skipped": 2,
        "n_skipped_empty": 1,
        "n_skipped_no_relevant": 1,
    }
    # Nothing left to evaluate: the query is named by its position in the caller's list.
    # Lists [empty, no relevant]: after skipping the empty one, the other is still query 1.
    with pytest.raises(ValueError, match=r"no relevant candidate \(indices: 1\)"):
        reranking_scores(relevance[1:3], scores[1:3], on_missing="skip")


def _reference(relevance: list[np.ndarray], scores: list[np.ndarray], k: int) -> dict[str, float]:
    values: dict[str, list[float]] = {"map": [], "mrr": [], "ndcg": [], f"ndcg@{k}": []}
    for gains, row in zip(relevance, scores, strict=True):
        order = sorted(range(len(row)), key=lambda c: (-row[c], c))
        rel = [gains[c] > 0 for c in order]
        hits, ap = 0, 0.0
        for position, is_rel in enumerate(rel, start=1):
            if is_rel:
                hits += 1
                ap += hits / position
        values["map"].append(ap / sum(rel))
        values["mrr"].append(1 / (rel.index(True) + 1))
        ideal = sorted(gains.tolist(), reverse=True)
        for name, cut in (("ndcg", len(row)), (f"ndcg@{k}", k)):
            dcg = sum(gains[c] / math.log2(i + 2) for i, c in enumerate(order[:cut]))
            values[name].append(dcg / sum(g / math.log2(i + 2) for i, g in enumerate(ideal[:cut])))
    return {name: math.fsum(v) / len(v) for name, v in values.items()}


@pytest.mark.parametrize("seed", range(4))
def test_matches_brute_force_and_sklearn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    relevance, scores = [], []
    for _ in range(25):
        m = int(rng.integers(1, 30))
        gains = rng.integers(0, 3, m) * (rng.random(m) < 0.4)
        gains[rng.integers(0, m)] = 1 + int(rng.integers(0, 2))
        row = rng.normal(size=m)
        if seed % 2:
            row = np.round(row)
        relevance.append(gains)
        scores.append(row)
    report = reranking_scores(relevance, scores, ndcg_k=5)
    for name, value in _reference(relevance, scores, 5).items():
        assert report[name] == pytest.approx(value, abs=1e-12), name
    if seed % 2 == 0:  # no ties: scikit-learn agrees (per query, lists of at least 2)
        long = [i for i in range(25) if len(scores[i]) > 1]
        ndcg = np.mean([skm.ndcg_score([relevance[i]], [scores[i]], k=5) for i in long])
        ap = np.mean([skm.average_precision_score(relevance[i] > 0, scores[i]) for i in long])
        subset = reranking_scores([relevance[i] for i in long], [scores[i] for i in long], ndcg_k=5)
        assert subset["ndcg@5"] == pytest.approx(ndcg)
        assert subset["map"] == pytest.approx(ap)


def test_top_candidate_transcripts_feed_word_error_rate() -> None:
    candidates = [["a cat sat", "the cat sat"], ["hello word", "hello world", "yellow world"]]
    scores = [np.array([0.2, 0.9]), np.array([0.7, 0.7, 0.1])]  # tie -> first "hello word"
    best = top_candidates(scores)
    assert best == [1, 0]
    hypotheses = [texts[i] for texts, i in zip(candidates, best, strict=True)]
    # References "the cat sat" / "hello world": 0 + 1 substitutions over 3 + 2 words.
    assert word_error_rate(["the cat sat", "hello world"], hypotheses) == pytest.approx(1 / 5)


def test_errors() -> None:
    with pytest.raises(ValueError, match="scores for 2 queries and relevance for 1"):
        reranking_scores(RELEVANCE[:1], SCORES)
    with pytest.raises(ValueError, match="query 1 has 2 candidate scores but 3 relevance"):
        reranking_scores([RELEVANCE[0], np.array([0, 1, 0])], SCORES)
    with pytest.raises(ValueError, match=r"scores of query 0 have NaN.*candidates: 2"):
        reranking_scores(RELEVANCE, [np.array([0.1, 0.2, np.nan, 0.3]), SCORES[1]])
    with pytest.raises(ValueError, match=r"relevance of query 0 must be bool or gains ≥ 0, got -1"):
        reranking_scores([np.array([0, 1, -1, 0]), RELEVANCE[1]], SCORES)
    with pytest.raises(ValueError, match="1-D"):
        reranking_scores([np.ones((2, 2))], [np.ones((2, 2))])
    with pytest.raises(ValueError, match="at least one query"):
        reranking_scores([], [])
    with pytest.raises(ValueError, match="all 1 queries have an empty candidate list"):
        reranking_scores([np.array([])], [np.array([])], on_missing="skip")
    with pytest.raises(ValueError, match="on_missing"):
        reranking_scores(RELEVANCE, SCORES, on_missing="drop")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="query 1 has an empty candidate list"):
        top_candidates([np.array([1.0]), np.array([])])
