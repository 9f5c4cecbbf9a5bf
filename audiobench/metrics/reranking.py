"""Reranking metrics: each query orders its own candidate list.

Query q has m_q candidates with scores s_q (higher = better) and relevance labels (bool, or
gains ≥ 0 for graded relevance; relevant means gain > 0). Candidates are ranked by decreasing
score with **ties broken by lower candidate index** (as in :mod:`~audiobench.metrics.retrieval`),
and the metrics are the retrieval ones over that list:

- mAP = mean_q (1/R_q) Σ_i i / r_(i) over the ranks r_(1) < r_(2) < ... of q's relevant
  candidates
- MRR = mean_q 1 / r_(1)
- nDCG = DCG / IDCG over the whole list, and nDCG@k over the first k (linear gains,
  discount 1 / log2(rank + 1))

**Degenerate queries.** An empty candidate list, or a list without a relevant candidate, makes
the metrics undefined: a ValueError naming the queries by default (``on_missing="raise"``);
with ``on_missing="skip"`` such queries are left out and counted (``n_skipped_empty``,
``n_skipped_no_relevant``, and their sum ``n_skipped``).

For text candidates, :func:`top_candidates` gives each query's top-ranked candidate (same
tie rule), whose transcript can be scored with :func:`~audiobench.metrics.word_error_rate`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from audiobench.metrics.retrieval import (
    OnMissing,
    RankedPairs,
    check_on_missing,
    metrics_from_ranks,
)
from audiobench.metrics.validation import check_positive_int, describe_clips

__all__ = ["reranking_scores", "top_candidates"]


def _vector(values: object, what: str, query: int) -> np.ndarray:
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().numpy()
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{what} of query {query} must be 1-D, got shape {array.shape}")
    if array.size and not (
        np.issubdtype(array.dtype, np.floating)
        or np.issubdtype(array.dtype, np.integer)
        or array.dtype == np.bool_
    ):
        raise ValueError(f"{what} of query {query} must be numbers, got dtype {array.dtype}")
    return array


def _candidate_scores(values: object, query: int) -> np.ndarray:
    array = _vector(values, "scores", query)
    if array.dtype == np.bool_:
        raise ValueError(f"scores of query {query} must be numbers, got booleans")
    array = array.astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        raise ValueError(
            f"scores of query {query} have NaN or infinite values "
            f"(candidates: {describe_clips(bad.tolist())})"
        )
    return array


def _candidate_gains(values: object, query: int, n_candidates: int) -> np.ndarray:
    array = _vector(values, "relevance", query)
    if array.shape[0] != n_candidates:
        raise ValueError(
            f"query {query} has {n_candidates} candidate scores but {array.shape[0]} relevance "
            "labels"
        )
    gains = array.astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(gains) | (gains < 0))
    if bad.size:
        raise ValueError(
            f"relevance of query {query} must be bool or gains ≥ 0, got {array[bad[0]].item()!r} "
            f"(candidates: {describe_clips(bad.tolist())})"
        )
    return gains


def _per_query(values: object, name: str) -> list[object]:
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray):
        raise ValueError(f"{name} must be a sequence with one candidate list per query")
    items = list(values)
    if not items:
        raise ValueError(f"{name} is empty: need at least one query")
    return items


def reranking_scores(
    relevance: Sequence[object],
    scores: Sequence[object],
    *,
    ndcg_k: int = 10,
    on_missing: OnMissing = "raise",
) -> dict[str, float]:
    """mAP, MRR, nDCG and nDCG@k of per-query candidate lists.

    Parameters
    ----------
    relevance:
        One 1-D array per query: bool labels or gains ≥ 0, one per candidate.
    scores:
        One 1-D array of finite scores per query, same lengths as ``relevance``.
    ndcg_k:
        Cutoff of ``ndcg@{k}``.
    on_missing:
        ``"raise"`` or ``"skip"`` for queries with an empty list or no relevant candidate.

    Returns
    -------
    dict
        ``map``, ``mrr``, ``ndcg``, ``ndcg@{ndcg_k}`` (means over evaluated queries),
        ``n_queries`` (evaluated), ``n_skipped``, ``n_skipped_empty``,
        ``n_skipped_no_relevant``.
    """
    check_on_missing(on_missing)
    ndcg_k = check_positive_int(ndcg_k, "ndcg_k")
    score_lists = _per_query(scores, "scores")
    relevance_lists = _per_query(relevance, "relevance")
    if len(score_lists) != len(relevance_lists):
        raise ValueError(
            f"got scores for {len(score_lists)} queries and relevance for {len(relevance_lists)}"
        )
    queries: list[np.ndarray] = []
    ranks: list[np.ndarray] = []
    gains: list[np.ndarray] = []
    empty: list[int] = []
    kept = 0
    for q, (values, labels) in enumerate(zip(score_lists, relevance_lists, strict=True)):
        candidate_scores = _candidate_scores(values, q)
        candidate_gains = _candidate_gains(labels, q, candidate_scores.shape[0])
        if candidate_scores.shape[0] == 0:
            empty.append(q)
            continue
        order = np.argsort(-candidate_scores, kind="stable")
        rank = np.empty(order.shape[0], dtype=np.float64)
        rank[order] = np.arange(1, order.shape[0] + 1)
        relevant = np.flatnonzero(candidate_gains > 0)
        queries.append(np.full(relevant.shape[0], kept, dtype=np.int64))
        ranks.append(rank[relevant])
        gains.append(candidate_gains[relevant])
        kept += 1
    if empty and on_missing == "raise":
        raise ValueError(
            f"{len(empty)} of {len(score_lists)} queries have an empty candidate list "
            f"(indices: {describe_clips(empty)}); pass on_missing='skip' to leave them out"
        )
    if kept == 0:
        raise ValueError(f"all {len(score_lists)} queries have an empty candidate list")
    kept_ids = np.setdiff1d(np.arange(len(score_lists)), np.asarray(empty, dtype=np.int64))
    pairs = RankedPairs(
        query=np.concatenate(queries),
        rank=np.concatenate(ranks),
        gain=np.concatenate(gains),
        n_queries=kept,
    )
    try:
        per_query, evaluated = metrics_from_ranks(
            pairs, ndcg_ks=(None, ndcg_k), on_missing=on_missing
        )
    except ValueError as error:
        # Re-number the queries named in the message after removing empty lists.
        missing = np.setdiff1d(np.arange(kept), np.unique(pairs.query))
        raise ValueError(
            f"{missing.size} of {len(score_lists)} queries have no relevant candidate "
            f"(indices: {describe_clips(kept_ids[missing].tolist())})"
            + ("; pass on_missing='skip' to leave them out" if on_missing == "raise" else "")
        ) from error
    result: dict[str, float] = {
        "map": float(np.mean(per_query["map"])),
        "mrr": float(np.mean(per_query["mrr"])),
        "ndcg": float(np.mean(per_query["ndcg"])),
        f"ndcg@{ndcg_k}": float(np.mean(per_query[f"ndcg@{ndcg_k}"])),
    }
    no_relevant = kept - int(evaluated.size)
    result.update(
        n_queries=int(evaluated.size),
        n_skipped=len(empty) + no_relevant,
        n_skipped_empty=len(empty),
        n_skipped_no_relevant=no_relevant,
    )
    return result


def top_candidates(scores: Sequence[object]) -> list[int]:
    """Index of each query's top-ranked candidate (highest score; ties → lowest index).

    Raises
    ------
    ValueError
        If a query's list is empty (there is no top candidate) or holds NaN/inf.
    """
    best: list[int] = []
    for q, values in enumerate(_per_query(scores, "scores")):
        candidate_scores = _candidate_scores(values, q)
        if candidate_scores.shape[0] == 0:
            raise ValueError(f"query {q} has an empty candidate list: no top candidate")
        best.append(int(np.argmax(candidate_scores)))
    return best
