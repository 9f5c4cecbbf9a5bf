"""Retrieval metrics and top-k search."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from sklearn import metrics as skm

from audiobench.metrics import (
    InvalidEmbeddingsError,
    hit_at_k,
    mean_average_precision,
    mean_reciprocal_rank,
    ndcg_at_k,
    recall_at_k,
    retrieval_scores,
    top_k,
)

# Two queries, five documents (ties broken by lower document index):
#
#   q0 scores 0.1 0.9 0.5 0.5 0.3, relevant {2, 4}
#      ranking: d1 d2 d3 d4 d0 (d2 before d3: same score, lower index) -> relevant ranks 2, 4
#      RR 1/2, AP (1/2 + 2/4) / 2 = 1/2, recall@3 1/2, DCG 1/log2(3) + 1/log2(5),
#      IDCG 1 + 1/log2(3)
#   q1 scores all 0.2, relevant {3}: the index order d0 d1 d2 d3 d4 -> rank 4
#      RR 1/4, AP 1/4, hit@3 0, nDCG 1/log2(5)
SCORES = np.array([[0.1, 0.9, 0.5, 0.5, 0.3], [0.2, 0.2, 0.2, 0.2, 0.2]])
RELEVANT = [{2, 4}, {3}]
NDCG_Q0 = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
NDCG_Q1 = 1 / math.log2(5)


def _matrix(relevant: list[set[int]], n_docs: int) -> np.ndarray:
    matrix = np.zeros((len(relevant), n_docs), dtype=bool)
    for q, docs in enumerate(relevant):
        matrix[q, list(docs)] = True
    return matrix


def test_hand_computed_values() -> None:
    report = retrieval_scores(RELEVANT, SCORES, ks=(1, 3, 5))
    assert report == {
        "mrr": pytest.approx((1 / 2 + 1 / 4) / 2),
        "map": pytest.approx((1 / 2 + 1 / 4) / 2),
        "ndcg@10": pytest.approx((NDCG_Q0 + NDCG_Q1) / 2),
        "hit@1": 0.0,
        "hit@3": pytest.approx(0.5),
        "hit@5": 1.0,
        "recall@1": 0.0,
        "recall@3": pytest.approx((1 / 2 + 0) / 2),
        "recall@5": 1.0,
        "n_queries": 2,
        "n_skipped": 0,
    }
    matrix = _matrix(RELEVANT, 5)
    assert retrieval_scores(matrix, SCORES, ks=(1, 3, 5)) == report
    assert mean_reciprocal_rank(matrix, SCORES) == pytest.approx(3 / 8)
    assert mean_average_precision(RELEVANT, SCORES) == pytest.approx(3 / 8)
    assert hit_at_k(RELEVANT, SCORES, 3) == pytest.approx(0.5)
    assert recall_at_k(RELEVANT, SCORES, 3) == pytest.approx(0.25)
    assert ndcg_at_k(RELEVANT, SCORES, 10) == pytest.approx((NDCG_Q0 + NDCG_Q1) / 2)
    # nDCG@1: neither query has a relevant document first.
    assert ndcg_at_k(RELEVANT, SCORES, 1) == 0.0


def test_ties_are_broken_by_lower_document_index() -> None:
    flat = np.zeros((1, 4))
    for doc in range(4):
        assert mean_reciprocal_rank([{doc}], flat) == pytest.approx(1 / (doc + 1))
    # d1 and d2 tie at the top: d1 is first whichever is relevant.
    scores = np.array([[0.0, 1.0, 1.0, 0.5]])
    assert mean_reciprocal_rank([{1}], scores) == 1.0
    assert mean_reciprocal_rank([{2}], scores) == 0.5


def test_graded_relevance() -> None:
    # Gains 0 3 0 1 2 in score order d0..d4:
    # DCG = 3/log2(3) + 1/log2(5) + 2/log2(6); ideal 3 2 1 -> 3 + 2/log2(3) + 1/log2(4).
    gains = np.array([[0, 3, 0, 1, 2]])
    scores = np.array([[0.5, 0.4, 0.3, 0.2, 0.1]])
    expected = (3 / math.log2(3) + 1 / math.log2(5) + 2 / math.log2(6)) / (
        3 + 2 / math.log2(3) + 1 / math.log2(4)
    )
    assert ndcg_at_k(gains, scores, 10) == pytest.approx(expected)
    assert ndcg_at_k(gains, scores, 10) == pytest.approx(skm.ndcg_score(gains, scores, k=10))
    assert ndcg_at_k([{1: 3, 3: 1, 4: 2.0}], scores) == pytest.approx(expected)
    # The binary metrics treat every gain > 0 as relevant: ranks 2, 4, 5.
    assert mean_average_precision(gains, scores) == pytest.approx((1 / 2 + 2 / 4 + 3 / 5) / 3)


def test_ranking_input() -> None:
    full = np.argsort(-SCORES, axis=1, kind="stable")
    assert retrieval_scores(RELEVANT, ranking=full, ks=(1, 3, 5), ndcg_k=5) == retrieval_scores(
        RELEVANT, SCORES, ks=(1, 3, 5), ndcg_k=5
    )
    # A ranking of depth 3: q1's relevant d3 (rank 4) is not retrieved -> RR 0, AP 0.
    # q0: ranks 2 (found) and 4 (not retrieved) -> AP = (1/2 + 0) / 2 = 1/4.
    shallow = full[:, :3]
    report = retrieval_scores(RELEVANT, ranking=shallow, ks=(1, 3), ndcg_k=3)
    assert report["mrr"] == pytest.approx((1 / 2 + 0) / 2)
    assert report["map"] == pytest.approx((1 / 4 + 0) / 2)
    assert report["recall@3"] == pytest.approx(1 / 4)
    assert report["ndcg@3"] == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)) / 2)
    with pytest.raises(ValueError, match=r"3 documents per query, too few for cutoff k = 10"):
        retrieval_scores(RELEVANT, ranking=shallow)
    # With index sets the corpus size is unknown, so a ranking of 5 cannot serve k = 10; with a
    # relevance matrix of 5 columns it is a full ranking and any cutoff is fine.
    with pytest.raises(ValueError, match="too few for cutoff k = 10"):
        retrieval_scores(RELEVANT, ranking=full)
    assert retrieval_scores(_matrix(RELEVANT, 5), ranking=full)["hit@10"] == 1.0


def test_queries_without_relevant_documents() -> None:
    relevant = [{2, 4}, set(), {3}, set()]
    scores = np.vstack([SCORES[0], SCORES[1], SCORES[1], SCORES[0]])
    with pytest.raises(ValueError, match=r"2 of 4 queries have no relevant document.*1, 3"):
        retrieval_scores(relevant, scores)
    report = retrieval_scores(relevant, scores, on_missing="skip")
    assert (report["n_queries"], report["n_skipped"]) == (2, 2)
    assert report["mrr"] == pytest.approx(3 / 8)
    matrix = _matrix(relevant, 5)
    assert retrieval_scores(matrix, scores, on_missing="skip") == report
    with pytest.raises(ValueError, match="none of the 2 queries"):
        mean_reciprocal_rank([set(), set()], SCORES, on_missing="skip")


def _reference(
    scores: np.ndarray, gains: np.ndarray, ks: tuple[int, ...], ndcg_k: int
) -> dict[str, float]:
    """Plain loops over each query's full ranking (sorted by (−score, index))."""
    per: dict[str, list[float]] = {}
    for row, gain in zip(scores.tolist(), gains.tolist(), strict=True):
        if not any(g > 0 for g in gain):
            continue
        order = sorted(range(len(row)), key=lambda d: (-row[d], d))
        rel = [gain[d] > 0 for d in order]
        n_rel = sum(rel)
        first = rel.index(True) + 1
        values = {"mrr": 1 / first}
        hits, ap = 0, 0.0
        for position, is_rel in enumerate(rel, start=1):
            if is_rel:
                hits += 1
                ap += hits / position
        values["map"] = ap / n_rel
        for k in ks:
            values[f"hit@{k}"] = float(first <= k)
            values[f"recall@{k}"] = sum(rel[:k]) / n_rel
        dcg = sum(gain[d] / math.log2(i + 2) for i, d in enumerate(order[:ndcg_k]))
        ideal = sorted(gain, reverse=True)[:ndcg_k]
        values[f"ndcg@{ndcg_k}"] = dcg / sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
        for name, value in values.items():
            per.setdefault(name, []).append(value)
    return {name: math.fsum(values) / len(values) for name, values in per.items()}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("ranks_by", ["counting", "sorting"])
def test_matches_brute_force(seed: int, ranks_by: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from audiobench.metrics import retrieval

    monkeypatch.setattr(retrieval, "BLOCK_ELEMENTS", 64)  # several row / pair blocks
    monkeypatch.setattr(retrieval, "COUNTING_FACTOR", math.inf if ranks_by == "counting" else 0)
    rng = np.random.default_rng(seed)
    n_queries, n_docs = 17, 23
    scores = rng.normal(size=(n_queries, n_docs))
    if seed % 2:
        scores = np.round(scores)  # many ties
    gains = rng.integers(0, 4, size=(n_queries, n_docs)) * (rng.random((n_queries, n_docs)) < 0.2)
    gains[3] = 0  # a query without relevant documents
    report = retrieval_scores(gains, scores, ks=(1, 5, 10), on_missing="skip")
    expected = _reference(scores, gains, (1, 5, 10), 10)
    for name, value in expected.items():
        assert report[name] == pytest.approx(value, abs=1e-12), name
    assert report["n_skipped"] == int((gains.sum(axis=1) == 0).sum()) >= 1
    # The same from the equivalent per-query index sets / mappings and from a full ranking.
    sets = [{d: int(g) for d, g in enumerate(row) if g > 0} for row in gains]
    assert retrieval_scores(sets, scores, on_missing="skip") == pytest.approx(
        retrieval_scores(gains, scores, on_missing="skip")
    )
    ranking = np.argsort(-scores, axis=1, kind="stable")
    assert retrieval_scores(gains, ranking=ranking, on_missing="skip") == pytest.approx(
        retrieval_scores(gains, scores, on_missing="skip")
    )


def test_matches_sklearn_without_ties() -> None:
    rng = np.random.default_rng(11)
    scores = rng.normal(size=(12, 30))
    gains = rng.integers(0, 3, size=(12, 30)) * (rng.random((12, 30)) < 0.3)
    gains[:, 0] = 1  # every query has a relevant document
    for k in (5, 10, 30):
        assert ndcg_at_k(gains, scores, k) == pytest.approx(skm.ndcg_score(gains, scores, k=k))
    binary = gains > 0
    expected = np.mean(
        [skm.average_precision_score(b, s) for b, s in zip(binary, scores, strict=True)]
    )
    assert mean_average_precision(binary, scores) == pytest.approx(expected)


def test_relevance_errors() -> None:
    with pytest.raises(ValueError, match="exactly one of scores"):
        retrieval_scores(RELEVANT)
    with pytest.raises(ValueError, match="exactly one of scores"):
        retrieval_scores(RELEVANT, SCORES, ranking=np.zeros((2, 1), dtype=int))
    with pytest.raises(ValueError, match=r"shape \(2, 4\), expected \(2, 5\)"):
        retrieval_scores(np.zeros((2, 4), dtype=bool), SCORES)
    with pytest.raises(ValueError, match="lists 1 queries, expected 2"):
        retrieval_scores([{1}], SCORES)
    with pytest.raises(ValueError, match=r"query 1 must be a non-negative integer index below 5"):
        retrieval_scores([{1}, {5}], SCORES)
    with pytest.raises(ValueError, match=r"query 0 list document 0 twice.*passed as an array"):
        retrieval_scores([[0, 1, 0, 0, 1], [1, 0, 0, 0, 0]], SCORES)
    with pytest.raises(ValueError, match="non-negative integer index below 5, got"):
        retrieval_scores([[[0, 1]], [1]], SCORES)
    with pytest.raises(ValueError, match="must be passed as an array"):
        retrieval_scores([[True, False, True, False, False]] * 2, SCORES)
    with pytest.raises(ValueError, match=r"finite and ≥ 0, got -1.*query 0, document 2"):
        retrieval_scores(np.array([[0, 0, -1, 0, 0], [1, 0, 0, 0, 0]]), SCORES)
    with pytest.raises(ValueError, match="gain of document 1 for query 0"):
        retrieval_scores([{1: -2.0}, {0: 1}], SCORES)
    bad = SCORES.copy()
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match=r"NaN or infinite values in 1 row\(s\) \(indices: 1\)"):
        retrieval_scores(RELEVANT, bad)
    with pytest.raises(ValueError, match="on_missing"):
        retrieval_scores(RELEVANT, SCORES, on_missing="ignore")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ks must not be empty"):
        retrieval_scores(RELEVANT, SCORES, ks=())
    with pytest.raises(ValueError, match="k must be a positive integer"):
        hit_at_k(RELEVANT, SCORES, 0)
    with pytest.raises(ValueError, match="twice"):
        retrieval_scores(RELEVANT, ranking=np.array([[1, 1], [0, 2]]), ks=(1,), ndcg_k=1)
    with pytest.raises(ValueError, match="outside"):
        retrieval_scores(_matrix(RELEVANT, 5), ranking=np.array([[1, 7], [0, 2]]), ks=(1,))
    with pytest.raises(ValueError, match="integer document indices"):
        retrieval_scores(RELEVANT, ranking=np.array([[1.0, 2.0], [0.0, 2.0]]), ks=(1,))


# --- top_k ---------------------------------------------------------------------------------

# Query (1, 0) against d0 (1, 0), d1 (0, 1), d2 (1, 1), d3 (2, 0):
#   cosine    1, 0, 1/√2, 1      -> d0, d3 (tie, lower index first), d2, d1
#   dot       1, 0, 1, 2         -> d3, d0, d2 (tie at 1), d1
#   euclidean 0, √2, 1, 1        -> scores −0, −1, −1, −√2: d0, d2, d3 (tie), d1
QUERY = np.array([[1.0, 0.0]])
DOCS = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 0.0]])


@pytest.mark.parametrize(
    ("metric", "order", "values"),
    [
        ("cosine", [0, 3, 2, 1], [1, 1, 1 / math.sqrt(2), 0]),
        ("dot", [3, 0, 2, 1], [2, 1, 1, 0]),
        ("euclidean", [0, 2, 3, 1], [0, -1, -1, -math.sqrt(2)]),
    ],
)
def test_top_k_hand_computed(metric: str, order: list[int], values: list[float]) -> None:
    scores, indices = top_k(QUERY, DOCS, 4, metric=metric)  # type: ignore[arg-type]
    assert indices.tolist() == [order]
    np.testing.assert_allclose(scores[0], values, atol=1e-6)
    assert scores.dtype == np.float32 and indices.dtype == np.int64
    first_two = top_k(QUERY, DOCS, 2, metric=metric)[1]  # type: ignore[arg-type]
    assert first_two.tolist() == [order[:2]]


@pytest.mark.parametrize("metric", ["cosine", "dot", "euclidean"])
def test_top_k_matches_brute_force(metric: str) -> None:
    rng = np.random.default_rng(2)
    queries, docs = rng.normal(size=(9, 6)), rng.normal(size=(40, 6))
    if metric == "cosine":
        normed_q = queries / np.linalg.norm(queries, axis=1, keepdims=True)
        full = normed_q @ (docs / np.linalg.norm(docs, axis=1, keepdims=True)).T
    elif metric == "dot":
        full = queries @ docs.T
    else:
        full = -np.sqrt(((queries[:, None] - docs[None]) ** 2).sum(-1))
    expected = np.argsort(-full, axis=1, kind="stable")[:, :7]
    for batch_size in (None, 1, 4):
        scores, indices = top_k(queries, docs, 7, metric=metric, batch_size=batch_size)  # type: ignore[arg-type]
        np.testing.assert_array_equal(indices, expected)
        np.testing.assert_allclose(scores, np.take_along_axis(full, expected, 1), atol=1e-5)


def test_top_k_ties_are_broken_by_index_across_blocks() -> None:
    rng = np.random.default_rng(4)
    docs = rng.integers(-2, 3, size=(30, 3)).astype(float)  # many exact duplicates and ties
    queries = rng.integers(-2, 3, size=(11, 3)).astype(float)
    full = queries @ docs.T  # small integers: exact in float32
    expected = np.argsort(-full, axis=1, kind="stable")[:, :8]
    for batch_size in (1, 3, None):
        _, indices = top_k(queries, docs, 8, metric="dot", batch_size=batch_size)
        np.testing.assert_array_equal(indices, expected)
    # The result feeds retrieval_scores as a ranking.
    relevance = [set(np.flatnonzero(full[q] == full[q].max()).tolist()) for q in range(11)]
    assert mean_reciprocal_rank(relevance, ranking=expected) == 1.0


@pytest.mark.parametrize("metric", ["cosine", "dot", "euclidean"])
def test_faiss_agrees_with_exact(metric: str) -> None:
    pytest.importorskip("faiss")
    rng = np.random.default_rng(5)
    queries, docs = rng.normal(size=(13, 8)), rng.normal(size=(60, 8))
    exact_scores, exact_indices = top_k(queries, docs, 10, metric=metric)  # type: ignore[arg-type]
    scores, indices = top_k(queries, docs, 10, metric=metric, index="faiss")  # type: ignore[arg-type]
    np.testing.assert_array_equal(indices, exact_indices)
    np.testing.assert_allclose(scores, exact_scores, atol=1e-4)
    assert scores.dtype == np.float32 and indices.dtype == np.int64


def test_missing_faiss_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "faiss", None)  # makes `import faiss` raise ImportError
    with pytest.raises(ImportError, match=r"pip install 'audiobench\[faiss\]'"):
        top_k(QUERY, DOCS, 2, index="faiss")


def test_top_k_errors() -> None:
    with pytest.raises(ValueError, match=r"k = 5 exceeds the number of documents \(4\)"):
        top_k(QUERY, DOCS, 5)
    with pytest.raises(ValueError, match="k must be a positive integer"):
        top_k(QUERY, DOCS, 0)
    with pytest.raises(ValueError, match="dimension 3, documents 2"):
        top_k(np.ones((1, 3)), DOCS, 1)
    with pytest.raises(ValueError, match="metric"):
        top_k(QUERY, DOCS, 1, metric="manhattan")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="index"):
        top_k(QUERY, DOCS, 1, index="hnsw")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="2-D"):
        top_k(np.ones(2), DOCS, 1)
    bad = DOCS.copy()
    bad[2, 1] = np.inf
    with pytest.raises(InvalidEmbeddingsError, match=r"document embeddings.*indices: 2"):
        top_k(QUERY, bad, 1)
    zero = DOCS.copy()
    zero[1] = 0.0
    with pytest.raises(InvalidEmbeddingsError, match=r"zero vectors.*indices: 1"):
        top_k(QUERY, zero, 1)
    assert top_k(QUERY, zero, 1, metric="dot")[1].tolist() == [[3]]  # fine without cosine
