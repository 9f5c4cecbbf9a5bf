"""Which documents MTEB's search returns for each query id, and with which score.

MTEB keys its search results by id: ``results[query_id][corpus_id] = score``. Rows that share
an id therefore collapse there, and how they collapse is a consequence of how the results are
gathered, which this module reproduces step by step:

- **Full-corpus search** (retrieval). The corpus is read in chunks of ``chunk_size`` rows.
  For each chunk and each query row, the chunk's ``min(top_k + 1, n)`` best documents, best
  first, are pushed as ``(score, corpus_id)`` tuples on the heap of the query's *id* (one heap
  per id, shared by every row with that id), which holds at most ``top_k`` tuples: while it is
  short a tuple is pushed, afterwards it is pushed and the smallest tuple popped.
- **Reranking.** Each query row's candidates (a list of corpus ids, in the order given) are
  scored and their ``min(top_k, len)`` best, best first, pushed on its id's heap, which is not
  bounded. A query row without candidates pushes nothing (the query is still scored: every
  metric 0).

The results are then read from each heap *in its array order*, ``results[qid][cid] = score``,
so when a corpus id occurs several times on a heap (repeated rows, or one row pushed by
several query rows) the one latest in the heap array wins. Scores are float32 values compared
as Python floats, ties between tuples going to the larger corpus id, as tuples compare.

The outcome is a :class:`SearchResults`: the distinct query ids (first occurrence order) and
corpus ids, and a score matrix with a mask of the retrieved (query, document) pairs, ready
for :func:`.trec_retrieval.trec_retrieval_scores` (``candidates=`` the mask).

When no id repeats, the full-corpus result of a query is its ``top_k`` largest
``(score, corpus_id)`` tuples, which is computed directly (without the heap); the tests check
that both give the same.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["MTEB_CHUNK_SIZE", "MTEB_TOP_K", "SearchResults", "corpus_search", "rerank_search"]

#: MTEB's search depth (the largest of its retrieval cut-offs) and corpus chunk size.
MTEB_TOP_K = 1000
MTEB_CHUNK_SIZE = 50_000


@dataclass(frozen=True)
class SearchResults:
    """Each distinct query id's retrieved documents and their scores."""

    query_ids: list[str]
    corpus_ids: list[str]
    #: ``[n_query_ids, n_corpus_ids]`` float32 scores; 0 where not retrieved.
    scores: np.ndarray
    #: ``[n_query_ids, n_corpus_ids]``: whether the document is among the query's results.
    retrieved: np.ndarray

    def retrieved_scores(self, q: int) -> np.ndarray:
        """Query ``q``'s result scores (float64 values of the float32 scores)."""
        return np.asarray(self.scores[q, self.retrieved[q]], dtype=np.float64)


def _check(scores: np.ndarray, query_ids: Sequence[str], corpus_ids: Sequence[str]) -> np.ndarray:
    matrix = np.asarray(scores, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape != (len(query_ids), len(corpus_ids)):
        raise ValueError(
            f"scores of shape {matrix.shape} do not match {len(query_ids)} query ids and "
            f"{len(corpus_ids)} corpus ids"
        )
    if not np.isfinite(matrix).all():
        raise ValueError("scores must be finite")
    return matrix


def _from_heaps(
    heaps: dict[str, list[tuple[float, str]]], corpus_order: Sequence[str]
) -> SearchResults:
    query_ids = list(heaps)
    column = {cid: j for j, cid in enumerate(dict.fromkeys(corpus_order))}
    scores = np.zeros((len(query_ids), len(column)), dtype=np.float32)
    retrieved = np.zeros(scores.shape, dtype=bool)
    for q, qid in enumerate(query_ids):
        for score, cid in heaps[qid]:  # array order: the latest entry of an id wins
            scores[q, column[cid]] = score
            retrieved[q, column[cid]] = True
    return SearchResults(query_ids, list(column), scores, retrieved)


def _best_first(row: np.ndarray, n: int) -> np.ndarray:
    """Indices of the ``n`` largest values of ``row``, largest first (ties: lower index)."""
    return np.argsort(-row, kind="stable")[:n]


def corpus_search(
    scores: np.ndarray,
    query_ids: Sequence[str],
    corpus_ids: Sequence[str],
    *,
    top_k: int = MTEB_TOP_K,
    chunk_size: int = MTEB_CHUNK_SIZE,
) -> SearchResults:
    """MTEB's full-corpus search results of a ``[n_query_rows, n_corpus_rows]`` score matrix
    (see the module docstring)."""
    matrix = _check(scores, query_ids, corpus_ids)
    qids, cids = [str(q) for q in query_ids], [str(c) for c in corpus_ids]
    if len(set(qids)) == len(qids) and len(set(cids)) == len(cids):
        return _unique_search(matrix, qids, cids, top_k)
    heaps: dict[str, list[tuple[float, str]]] = {qid: [] for qid in qids}
    for start in range(0, len(cids), chunk_size):
        chunk = matrix[:, start : start + chunk_size]
        depth = min(top_k + 1, chunk.shape[1])
        for row, qid in enumerate(qids):
            heap = heaps[qid]
            for j in _best_first(chunk[row], depth):
                entry = (float(chunk[row, j]), cids[start + int(j)])
                if len(heap) < top_k:
                    heapq.heappush(heap, entry)
                else:
                    heapq.heappushpop(heap, entry)
    return _from_heaps(heaps, cids)


def _unique_search(
    matrix: np.ndarray, qids: list[str], cids: list[str], top_k: int
) -> SearchResults:
    """Each query's ``top_k`` largest ``(score, corpus_id)`` tuples, when no id repeats."""
    retrieved = np.ones(matrix.shape, dtype=bool)
    if len(cids) > top_k:
        id_rank = np.empty(len(cids), dtype=np.int64)
        id_rank[sorted(range(len(cids)), key=cids.__getitem__)] = np.arange(len(cids))
        retrieved[:] = False
        for q in range(len(qids)):
            # lexsort: the last key is the primary one; ascending, so the best are last.
            order = np.lexsort((id_rank, matrix[q]))
            retrieved[q, order[-top_k:]] = True
    return SearchResults(qids, cids, np.where(retrieved, matrix, np.float32(0)), retrieved)


def rerank_search(
    scores: np.ndarray,
    query_ids: Sequence[str],
    corpus_ids: Sequence[str],
    candidates: Sequence[Sequence[int]],
    *,
    top_k: int = MTEB_TOP_K,
) -> SearchResults:
    """MTEB's reranking results: each query row scores its ``candidates`` (corpus row indices,
    in the order its ranked list gives them; empty for a query without one)."""
    matrix = _check(scores, query_ids, corpus_ids)
    if len(candidates) != len(query_ids):
        raise ValueError(f"got candidates for {len(candidates)} of {len(query_ids)} queries")
    cids = [str(c) for c in corpus_ids]
    heaps: dict[str, list[tuple[float, str]]] = {str(qid): [] for qid in query_ids}
    for row, (qid, listed) in enumerate(zip(query_ids, candidates, strict=True)):
        listed = [int(j) for j in listed]
        if not listed:
            continue
        values = matrix[row, listed]
        for i in _best_first(values, min(top_k, len(listed))):
            heapq.heappush(heaps[str(qid)], (float(values[i]), cids[listed[int(i)]]))
    return _from_heaps(heaps, cids)
