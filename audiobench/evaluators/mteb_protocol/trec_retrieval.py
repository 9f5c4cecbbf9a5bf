"""Retrieval and reranking metrics as ``trec_eval`` defines them, at MTEB's cut-offs.

MTEB scores its retrieval and reranking tasks with ``trec_eval`` (through ``pytrec_eval``)
at k ∈ {1, 3, 5, 10, 20, 100, 1000}, plus its own MRR@k; this module computes the same
numbers from a query × document score matrix.

**Ranking.** Query q ranks its documents by decreasing score; **ties are broken by document
id in decreasing string order**, as ``trec_eval`` does (the ids default to the column
indices written as strings, ``"0"``, ``"1"``, …). Only the first max(k) documents count as
retrieved. For reranking, ``candidates`` restricts each query to its own candidate list:
other documents are never retrieved for it (a relevant one still counts in R_q below).

**Relevance.** Integer grades ≥ 0 (a matrix ``[n_queries, n_docs]``, or per query a collection
of relevant document indices (grade 1) or a mapping index → grade); a document is relevant
when its grade is ≥ 1, and the grade is its nDCG gain. R_q = number of relevant documents of
q, r_d the rank of document d (∞ when not retrieved), Rel_q(k) = {d relevant: r_d ≤ k}:

- ``precision_at_k`` = |Rel_q(k)| / k (always divided by k, even when fewer documents exist)
- ``recall_at_k`` = |Rel_q(k)| / R_q, ``hit_rate_at_k`` = [|Rel_q(k)| > 0]
- ``map_at_k`` = (1/R_q) Σ_{d ∈ Rel_q(k)} i_d / r_d, with i_d the number of relevant
  documents ranked at or above d (the divisor is R_q, not min(R_q, k))
- ``ndcg_at_k`` = Σ_{d ∈ Rel_q(k)} g_d / log2(r_d + 1) divided by the same sum for the ideal
  order (the R_q relevant grades in decreasing order, first k of them)
- ``mrr_at_k`` = 1 / r of the best-ranked relevant document if that rank is ≤ k, else 0
- ``accuracy`` = ``recall_at_1``

Each is averaged over the queries. MTEB rounds the trec_eval means (all but MRR) to 5
decimals; ``decimals`` does the same (None keeps full precision).

**Queries without a relevant document** are an error by default (``on_missing="raise"``);
``"zero"`` keeps them with every metric 0 (what trec_eval does with a query judged but without
a relevant document), ``"skip"`` leaves them out (what MTEB does with a query that has no
judgement at all).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Literal

import numpy as np

from audiobench.metrics.retrieval import ranks_from_scores, relevance_pairs
from audiobench.metrics.validation import check_ks, describe_clips, real_matrix

__all__ = ["TREC_K_VALUES", "TREC_METRICS", "trec_means", "trec_per_query", "trec_retrieval_scores"]

#: MTEB's retrieval cut-offs.
TREC_K_VALUES: tuple[int, ...] = (1, 3, 5, 10, 20, 100, 1000)

#: The metric families, each reported at every k as ``{family}_at_{k}``.
TREC_METRICS: tuple[str, ...] = ("ndcg", "map", "recall", "precision", "mrr", "hit_rate")

#: The metric families MTEB rounds.
ROUNDED_METRICS: frozenset[str] = frozenset({"ndcg", "map", "recall", "precision", "hit_rate"})

OnMissingRelevant = Literal["raise", "zero", "skip"]


def _corpus_order(corpus_ids: Sequence[object] | None, n_docs: int) -> np.ndarray:
    """Column permutation that lists the documents by decreasing id string."""
    if corpus_ids is None:
        names = [str(j) for j in range(n_docs)]
    else:
        if isinstance(corpus_ids, str | bytes):
            raise ValueError("corpus_ids must be a sequence with one id per document")
        names = [str(name) for name in corpus_ids]
        if len(names) != n_docs:
            raise ValueError(f"got {len(names)} corpus_ids for {n_docs} documents")
        if len(set(names)) != n_docs:
            raise ValueError("corpus_ids must be unique")
    return np.asarray(sorted(range(n_docs), key=lambda j: names[j], reverse=True), dtype=np.int64)


def _candidate_mask(
    candidates: object, n_queries: int, n_docs: int, allow_empty: bool = False
) -> np.ndarray:
    if isinstance(candidates, np.ndarray) and candidates.ndim == 2:
        if candidates.shape != (n_queries, n_docs) or candidates.dtype != np.bool_:
            raise ValueError(
                f"a candidates matrix must be boolean with shape {(n_queries, n_docs)}, got "
                f"{candidates.dtype} {candidates.shape}"
            )
        mask = candidates.copy()
    else:
        if isinstance(candidates, str | bytes) or not isinstance(candidates, Sequence):
            raise ValueError(
                "candidates must be a boolean matrix or one collection of document indices "
                "per query"
            )
        if len(candidates) != n_queries:
            raise ValueError(f"candidates lists {len(candidates)} queries, expected {n_queries}")
        mask = np.zeros((n_queries, n_docs), dtype=bool)
        for q, entry in enumerate(candidates):
            if not isinstance(entry, np.ndarray | Collection) or isinstance(entry, str | bytes):
                raise ValueError(f"candidates of query {q} must be a collection of indices")
            indices = np.asarray(
                list(entry.tolist() if isinstance(entry, np.ndarray) else entry), dtype=object
            )
            if not all(
                isinstance(i, int | np.integer) and not isinstance(i, bool) for i in indices
            ):
                raise ValueError(f"candidates of query {q} must be integer document indices")
            indices = indices.astype(np.int64)
            if indices.size and (indices.min() < 0 or indices.max() >= n_docs):
                raise ValueError(
                    f"candidates of query {q} must be document indices in [0, {n_docs})"
                )
            mask[q, indices] = True
    empty = np.flatnonzero(~mask.any(axis=1))
    if empty.size and not allow_empty:
        raise ValueError(
            f"{empty.size} queries have no candidate (indices: {describe_clips(empty.tolist())})"
        )
    return mask


def trec_retrieval_scores(
    scores: object,
    relevance: object,
    *,
    candidates: object | None = None,
    corpus_ids: Sequence[object] | None = None,
    k_values: Sequence[int] = TREC_K_VALUES,
    on_missing: OnMissingRelevant = "raise",
    decimals: int | None = 5,
    allow_empty_candidates: bool = False,
) -> dict[str, float]:
    """trec_eval's retrieval metrics at each k, and MRR@k (see the module docstring).

    Parameters
    ----------
    scores:
        ``[n_queries, n_docs]`` finite similarity scores (higher = better). float32 scores are
        compared as float32, so ties are those of the given values.
    relevance:
        Integer relevance grades: a matrix ``[n_queries, n_docs]``, or one entry per query
        (a collection of relevant document indices, or a mapping index → grade).
    candidates:
        For reranking: a boolean matrix ``[n_queries, n_docs]`` or one collection of document
        indices per query; only a query's candidates are ranked for it. None ranks the whole
        corpus.
    corpus_ids:
        One unique id per document, for the tie rule (decreasing id string).
    k_values:
        Cut-offs (positive integers); at most max(k_values) documents are retrieved.
    on_missing:
        What to do with queries without a relevant document: ``"raise"``, ``"zero"`` or
        ``"skip"``.
    decimals:
        Round every mean except MRR to this many decimals (MTEB's 5); None to keep them exact.
    allow_empty_candidates:
        Accept a query with no candidate (nothing is ranked for it: every metric 0, as MTEB
        scores a reranking query without a ranked list); otherwise an error.

    Returns
    -------
    dict
        ``{family}_at_{k}`` for each family of :data:`TREC_METRICS` and k, and ``accuracy``.
    """
    ks = sorted(set(check_ks(k_values, name="k_values")))
    per_query = trec_per_query(
        scores,
        relevance,
        candidates=candidates,
        corpus_ids=corpus_ids,
        k_values=ks,
        on_missing=on_missing,
        allow_empty_candidates=allow_empty_candidates,
    )
    return trec_means(per_query, decimals)


def trec_means(per_query: dict[str, np.ndarray], decimals: int | None = 5) -> dict[str, float]:
    """The means of :func:`trec_per_query`'s values, every family but MRR rounded to
    ``decimals`` (None: exact), and ``accuracy`` (``recall_at_1``) when k = 1 is among them."""
    report: dict[str, float] = {}
    for key, values in per_query.items():
        mean = float(np.mean(values))
        if decimals is not None and key.rsplit("_at_", 1)[0] in ROUNDED_METRICS:
            mean = round(mean, decimals)
        report[key] = mean
    if "recall_at_1" in report:
        report["accuracy"] = report["recall_at_1"]
    return report


def trec_per_query(
    scores: object,
    relevance: object,
    *,
    candidates: object | None = None,
    corpus_ids: Sequence[object] | None = None,
    k_values: Sequence[int] = TREC_K_VALUES,
    on_missing: OnMissingRelevant = "raise",
    allow_empty_candidates: bool = False,
) -> dict[str, np.ndarray]:
    """Each evaluated query's ``{family}_at_{k}`` (unrounded), in query order: the values
    :func:`trec_retrieval_scores` averages (same parameters)."""
    if on_missing not in ("raise", "zero", "skip"):
        raise ValueError(f"on_missing must be 'raise', 'zero' or 'skip', got {on_missing!r}")
    ks = sorted(set(check_ks(k_values, name="k_values")))
    matrix = real_matrix(scores, "scores")
    n_queries, n_docs = matrix.shape
    query, doc, gain, _ = relevance_pairs(relevance, n_queries, n_docs)
    if gain.size and not np.array_equal(gain, np.round(gain)):
        raise ValueError("relevance grades must be whole numbers (trec_eval reads integers)")
    # Grades below 1 are not relevant (relevance_pairs already dropped grade 0).
    keep = gain >= 1
    query, doc, gain = query[keep], doc[keep], gain[keep]

    order = _corpus_order(corpus_ids, n_docs)
    position_of = np.empty(n_docs, dtype=np.int64)
    position_of[order] = np.arange(n_docs)
    ranked = matrix[:, order]
    retrievable = None
    if candidates is not None:
        retrievable = _candidate_mask(
            candidates, n_queries, n_docs, allow_empty=allow_empty_candidates
        )[:, order]
        ranked = np.where(retrievable, ranked, -np.inf)
    # Stable ranking of the id-ordered columns breaks ties by decreasing id.
    rank = ranks_from_scores(ranked, query, position_of[doc])
    if retrievable is not None:
        rank[~retrievable[query, position_of[doc]]] = np.inf
    rank[rank > ks[-1]] = np.inf

    counts = np.bincount(query, minlength=n_queries)
    missing = np.flatnonzero(counts == 0)
    if missing.size and on_missing == "raise":
        raise ValueError(
            f"{missing.size} of {n_queries} queries have no relevant document (indices: "
            f"{describe_clips(missing.tolist())}); pass on_missing='zero' or 'skip'"
        )
    evaluated = np.arange(n_queries) if on_missing == "zero" else np.flatnonzero(counts > 0)
    if evaluated.size == 0:
        raise ValueError(f"none of the {n_queries} queries has a relevant document")

    # Relevant pairs sorted by (query, rank): i_d is the position within the query.
    by_rank = np.lexsort((rank, query))
    q_sorted, r_sorted, g_sorted = query[by_rank], rank[by_rank], gain[by_rank]
    starts = np.searchsorted(q_sorted, np.arange(n_queries))
    position = np.arange(q_sorted.shape[0]) - starts[q_sorted] + 1.0
    # Not sklearn.metrics.ndcg_score: ties go by decreasing document id here, and only the
    # first max(k) documents are retrieved.
    # Ideal order: each query's grades in decreasing order.
    ideal = np.lexsort((-gain, query))
    ideal_gain = gain[ideal]
    ideal_discount = 1.0 / np.log2(position + 1.0)
    discount = np.where(np.isfinite(r_sorted), 1.0 / np.log2(r_sorted + 1.0), 0.0)
    size = np.maximum(counts, 1).astype(np.float64)
    best = np.full(n_queries, np.inf)
    np.minimum.at(best, q_sorted, r_sorted)

    def per_query(values: np.ndarray) -> np.ndarray:
        return np.bincount(q_sorted, weights=values, minlength=n_queries)

    per_q: dict[str, np.ndarray] = {}
    for k in ks:
        within = r_sorted <= k
        found = per_query(within.astype(np.float64))
        dcg = per_query(np.where(within, g_sorted * discount, 0.0))
        idcg = per_query(np.where(position <= k, ideal_gain * ideal_discount, 0.0))
        values = {
            "ndcg": np.divide(dcg, idcg, out=np.zeros(n_queries), where=idcg > 0),
            "map": per_query(np.where(within, position / r_sorted, 0.0)) / size,
            "recall": found / size,
            "precision": found / k,
            "mrr": np.where(best <= k, 1.0 / best, 0.0),
            "hit_rate": (found > 0).astype(np.float64),
        }
        for family, values_k in values.items():
            per_q[f"{family}_at_{k}"] = values_k[evaluated]
    return {key: per_q[key] for key in [f"{family}_at_{k}" for family in TREC_METRICS for k in ks]}
