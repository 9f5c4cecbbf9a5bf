"""Retrieval metrics from a score matrix or a ranking, and exact / faiss top-k search.

**Ranking.** Each query ranks every document by decreasing score; **ties are broken by lower
document index** (a stable sort of −score), the same rule as :func:`precision_at_k`. The rank
r_qd of document d for query q runs from 1 (best) to n_docs. Instead of scores, a ranking
``[n_queries, L]`` of document indices (best first, e.g. from :func:`top_k`) may be given;
documents absent from a query's row count as not retrieved (rank ∞).

**Relevance.** Either a matrix ``[n_queries, n_docs]`` (a NumPy array or tensor: bool for
binary relevance, non-negative numbers for graded relevance where the value is the gain;
a document is relevant when its gain is > 0), or a sequence with one entry per query holding
that query's relevant document indices (a set, list, tuple or 1-D array of ints: binary) or a
mapping ``{doc index: gain}`` (graded). A plain Python list is *always* read as per-query
index collections, never as a matrix: pass a matrix as an array.

**Metrics** (Rel_q the relevant documents of q, R_q = |Rel_q|, g_qd the gain):

- MRR = mean_q 1 / min_{d ∈ Rel_q} r_qd (0 when none is retrieved)
- hit@k = mean_q [min_{d ∈ Rel_q} r_qd ≤ k]
- recall@k = mean_q |{d ∈ Rel_q : r_qd ≤ k}| / R_q
- mAP = mean_q AP_q, AP_q = (1/R_q) Σ_{i=1..R_q} i / r_(i), r_(1) < r_(2) < ... the ranks of
  q's relevant documents (a relevant document not retrieved adds 0)
- nDCG@k = DCG@k / IDCG@k, DCG@k = Σ_{d: r_qd ≤ k} g_qd / log2(r_qd + 1) (linear gain),
  IDCG@k the DCG@k of the ideal order (gains sorted decreasingly); nDCG over the full list
  when k is None

All in [0, 1]. With a ranking of depth L < n_docs, MRR and mAP are MRR@L and AP@L, and every
cutoff k must be ≤ L.

**Queries without a relevant document** make MRR, recall, AP and nDCG undefined: by default
(``on_missing="raise"``) they are a ValueError naming the queries; with ``on_missing="skip"``
they are left out of every mean and counted as ``n_skipped``.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

if TYPE_CHECKING:
    import torch

from audiobench.metrics.runtime import is_tensor, limited_cpu_threads
from audiobench.metrics.validation import (
    check_ks,
    check_positive_int,
    describe_clips,
    invalid_clips_error,
    real_matrix,
)

__all__ = [
    "OnMissing",
    "RankedPairs",
    "hit_at_k",
    "mean_average_precision",
    "mean_reciprocal_rank",
    "metrics_from_ranks",
    "ndcg_at_k",
    "recall_at_k",
    "retrieval_scores",
    "top_k",
]

OnMissing = Literal["raise", "skip"]

#: Elements of a score block handled at once when sorting or searching (~32 MB of float64).
BLOCK_ELEMENTS: int = 1 << 22

#: Rank relevant documents by counting (not sorting) up to this many · log2(n_docs) relevant
#: pairs per query on average.
COUNTING_FACTOR: float = 1.0


def check_on_missing(on_missing: str) -> None:
    if on_missing not in ("raise", "skip"):
        raise ValueError(f"on_missing must be 'raise' or 'skip', got {on_missing!r}")


@dataclass(frozen=True, eq=False)
class RankedPairs:
    """The (query, relevant document) pairs with their ranks and gains, sorted by query.

    Attributes
    ----------
    query, rank, gain:
        Parallel arrays, one entry per relevant pair: query index (int64, ascending), rank
        (float64, 1-based, ``inf`` when not retrieved) and gain (float64, > 0).
    n_queries:
        Number of queries (including those without pairs).
    """

    query: np.ndarray
    rank: np.ndarray
    gain: np.ndarray
    n_queries: int


def _is_int(value: object) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def relevance_pairs(
    relevance: object, n_queries: int, n_docs: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int | None]:
    """``(query, doc, gain, n_docs)`` of every relevant pair, sorted by query then doc.

    ``n_docs`` comes back as given, or as the matrix's column count when relevance is a matrix.
    """
    if is_tensor(relevance):
        relevance = relevance.detach().cpu().numpy()  # type: ignore[attr-defined]
    if isinstance(relevance, np.ndarray):
        if relevance.ndim != 2:
            raise ValueError(
                f"a relevance matrix must be 2-D (queries × documents), got shape "
                f"{relevance.shape}; pass per-query index sets as a list"
            )
        if relevance.shape[0] != n_queries or (n_docs is not None and relevance.shape[1] != n_docs):
            expected = f"({n_queries}, {n_docs if n_docs is not None else '…'})"
            raise ValueError(f"relevance has shape {relevance.shape}, expected {expected}")
        if relevance.dtype == np.bool_:
            query, doc = np.nonzero(relevance)
            return query, doc, np.ones(query.shape[0]), relevance.shape[1]
        if not (
            np.issubdtype(relevance.dtype, np.integer)
            or np.issubdtype(relevance.dtype, np.floating)
        ):
            raise ValueError(f"relevance must be bool or numeric gains, got {relevance.dtype}")
        gains = relevance.astype(np.float64)
        bad = np.argwhere(~np.isfinite(gains) | (gains < 0))
        if bad.size:
            q, d = (int(v) for v in bad[0])
            raise ValueError(
                f"relevance gains must be finite and ≥ 0, got {relevance[q, d].item()!r} for query "
                f"{q}, document {d} ({bad.shape[0]} such value(s))"
            )
        query, doc = np.nonzero(gains > 0)
        return query, doc, gains[query, doc], relevance.shape[1]
    if isinstance(relevance, str | bytes) or not isinstance(relevance, Sequence):
        raise ValueError(
            "relevance must be a matrix (array) or a sequence of per-query relevant document "
            f"collections, got {type(relevance).__name__}"
        )
    if len(relevance) != n_queries:
        raise ValueError(f"relevance lists {len(relevance)} queries, expected {n_queries}")
    queries: list[int] = []
    docs: list[int] = []
    gains_list: list[float] = []
    for q, entry in enumerate(relevance):
        seen: set[int] = set()
        if isinstance(entry, Mapping):
            items = list(entry.items())
        elif isinstance(entry, np.ndarray | Collection) and not isinstance(entry, str | bytes):
            values = entry.tolist() if isinstance(entry, np.ndarray) else list(entry)
            if any(isinstance(v, bool | np.bool_) for v in values):
                raise ValueError(
                    f"relevant documents of query {q} are booleans; a relevance matrix must be "
                    "passed as an array, not a list of lists"
                )
            items = [(value, 1.0) for value in values]
        else:
            raise ValueError(
                f"relevance of query {q} must be a collection of document indices or a "
                f"mapping index → gain, got {type(entry).__name__}"
            )
        for doc, gain in items:
            if not _is_int(doc) or doc < 0 or (n_docs is not None and doc >= n_docs):
                bound = f" below {n_docs}" if n_docs is not None else ""
                raise ValueError(
                    f"relevant document of query {q} must be a non-negative integer index"
                    f"{bound}, got {doc!r}"
                )
            if isinstance(gain, bool) or not isinstance(gain, int | float | np.number):
                raise ValueError(f"gain of document {doc} for query {q} must be a number")
            if not math.isfinite(float(gain)) or gain < 0:
                raise ValueError(
                    f"gain of document {doc} for query {q} must be finite and ≥ 0, got {gain!r}"
                )
            if doc in seen:
                raise ValueError(
                    f"relevant documents of query {q} list document {doc} twice; a 0/1 "
                    "relevance matrix must be passed as an array, not a list of lists"
                )
            seen.add(int(doc))
            if gain > 0:
                queries.append(q)
                docs.append(int(doc))
                gains_list.append(float(gain))
    query = np.asarray(queries, dtype=np.int64)
    doc = np.asarray(docs, dtype=np.int64)
    order = np.lexsort((doc, query))
    return query[order], doc[order], np.asarray(gains_list, dtype=np.float64)[order], n_docs


def ranks_from_scores(scores: np.ndarray, query: np.ndarray, doc: np.ndarray) -> np.ndarray:
    """1-based rank of each (query, doc) pair: decreasing score, ties by lower doc index.

    rank = 1 + #{j: s_qj > s_qd} + #{j < d: s_qj = s_qd}. With few relevant pairs per query
    (at most :data:`COUNTING_FACTOR` · log2(n_docs) on average) that count is taken directly,
    O(n_docs) per pair; otherwise each row is sorted once (stable sort of −score), O(n_docs ·
    log n_docs) per query. Both give the same ranks. ``query`` must be sorted.
    """
    n_queries, n_docs = scores.shape
    if query.shape[0] <= COUNTING_FACTOR * n_queries * max(1.0, math.log2(n_docs)):
        return _ranks_by_counting(scores, query, doc)
    return _ranks_by_sorting(scores, query, doc)


def _ranks_by_counting(scores: np.ndarray, query: np.ndarray, doc: np.ndarray) -> np.ndarray:
    n_docs = scores.shape[1]
    ranks = np.empty(query.shape[0], dtype=np.float64)
    step = max(1, BLOCK_ELEMENTS // n_docs)
    columns = np.arange(n_docs)
    for start in range(0, query.shape[0], step):
        q, d = query[start : start + step], doc[start : start + step]
        rows = scores[q]
        own = rows[np.arange(q.shape[0]), d][:, None]
        ahead = (rows > own).sum(axis=1) + ((rows == own) & (columns < d[:, None])).sum(axis=1)
        ranks[start : start + step] = ahead + 1.0
    return ranks


def _ranks_by_sorting(scores: np.ndarray, query: np.ndarray, doc: np.ndarray) -> np.ndarray:
    n_queries, n_docs = scores.shape
    ranks = np.empty(query.shape[0], dtype=np.float64)
    step = max(1, BLOCK_ELEMENTS // n_docs)
    positions = np.arange(1, n_docs + 1, dtype=np.float64)
    bounds = np.searchsorted(query, np.arange(0, n_queries + step, step))
    for block, start in enumerate(range(0, n_queries, step)):
        lo, hi = bounds[block], bounds[block + 1]
        if lo == hi:
            continue
        order = np.argsort(-scores[start : start + step], axis=1, kind="stable")
        block_ranks = np.empty(order.shape, dtype=np.float64)
        np.put_along_axis(block_ranks, order, np.broadcast_to(positions, order.shape), axis=1)
        ranks[lo:hi] = block_ranks[query[lo:hi] - start, doc[lo:hi]]
    return ranks


def ranks_from_ranking(ranking: np.ndarray, query: np.ndarray, doc: np.ndarray) -> np.ndarray:
    """1-based position of each (query, doc) pair in the ranking rows, ``inf`` when absent."""
    n_queries, depth = ranking.shape
    width = int(max(ranking.max(initial=0), doc.max(initial=0))) + 1
    keys = (np.arange(n_queries)[:, None] * width + ranking).ravel()
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    wanted = query * width + doc
    found = np.searchsorted(sorted_keys, wanted)
    found = np.minimum(found, sorted_keys.shape[0] - 1)
    hit = sorted_keys[found] == wanted
    return np.where(hit, order[found] % depth + 1.0, np.inf)


def _ranking_matrix(ranking: object, n_docs: int | None) -> np.ndarray:
    if is_tensor(ranking):
        ranking = ranking.detach().cpu().numpy()  # type: ignore[attr-defined]
    array = np.asarray(ranking)
    if array.ndim != 2 or array.shape[0] < 1 or array.shape[1] < 1:
        raise ValueError(
            f"ranking must be a non-empty 2-D array (queries × ranked documents), got shape "
            f"{array.shape}"
        )
    if not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"ranking must hold integer document indices, got dtype {array.dtype}")
    if array.min() < 0 or (n_docs is not None and array.max() >= n_docs):
        bound = f"[0, {n_docs})" if n_docs is not None else "≥ 0"
        raise ValueError(f"ranking holds document indices outside {bound}")
    ordered = np.sort(array, axis=1)
    duplicated = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
    if duplicated.size:
        raise ValueError(
            "ranking lists a document twice for "
            f"{duplicated.size} query(ies) (indices: {describe_clips(duplicated.tolist())})"
        )
    return array.astype(np.int64)


def ranked_pairs(
    relevance: object,
    scores: object | None,
    ranking: object | None,
    cutoffs: Sequence[int],
) -> tuple[RankedPairs, int | None]:
    """Validate the inputs and rank every relevant pair; returns the pairs and ranking depth.

    ``cutoffs`` are the ks the caller will use; with a ranking shallower than the corpus each
    must be ≤ its depth. The depth is None for scores (full ranking).
    """
    if (scores is None) == (ranking is None):
        raise ValueError("give exactly one of scores (a score matrix) or ranking")
    if scores is not None:
        matrix = real_matrix(scores, "scores")
        query, doc, gain, _ = relevance_pairs(relevance, matrix.shape[0], matrix.shape[1])
        ranks = ranks_from_scores(matrix, query, doc)
        return RankedPairs(query, ranks, gain, matrix.shape[0]), None
    n_docs = None
    shape = getattr(relevance, "shape", None)
    if (isinstance(relevance, np.ndarray) or is_tensor(relevance)) and len(shape) == 2:  # type: ignore[arg-type]
        n_docs = int(shape[1])  # type: ignore[index]
    rows = _ranking_matrix(ranking, n_docs)
    query, doc, gain, n_docs = relevance_pairs(relevance, rows.shape[0], n_docs)
    depth = rows.shape[1]
    if n_docs is None or depth < n_docs:
        too_deep = [k for k in cutoffs if k > depth]
        if too_deep:
            raise ValueError(
                f"the ranking lists {depth} documents per query, too few for cutoff "
                f"k = {max(too_deep)}; rank deeper or use smaller ks"
            )
    return RankedPairs(query, ranks_from_ranking(rows, query, doc), gain, rows.shape[0]), depth


def metrics_from_ranks(
    pairs: RankedPairs,
    *,
    ks: Sequence[int] = (),
    ndcg_ks: Sequence[int | None] = (),
    on_missing: OnMissing = "raise",
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Per-query metrics from the ranks of the relevant pairs.

    Returns
    -------
    (per_query, evaluated)
        ``per_query`` maps ``"mrr"``, ``"map"``, ``"hit@k"``, ``"recall@k"`` (each k in ``ks``)
        and ``"ndcg@k"`` (``"ndcg"`` for k None) to float64 arrays over the evaluated queries;
        ``evaluated`` holds their indices (ascending).

    Raises
    ------
    ValueError
        If a query has no relevant document and ``on_missing="raise"``, or none has one.
    """
    check_on_missing(on_missing)
    n = pairs.n_queries
    counts = np.bincount(pairs.query, minlength=n)
    missing = np.flatnonzero(counts == 0)
    if missing.size and on_missing == "raise":
        raise ValueError(
            f"{missing.size} of {n} queries have no relevant document (indices: "
            f"{describe_clips(missing.tolist())}); pass on_missing='skip' to leave them out"
        )
    evaluated = np.flatnonzero(counts > 0)
    if evaluated.size == 0:
        raise ValueError(f"none of the {n} queries has a relevant document")
    # Sort the pairs by (query, rank): within a query, relevant documents best first.
    order = np.lexsort((pairs.rank, pairs.query))
    query, rank, gain = pairs.query[order], pairs.rank[order], pairs.gain[order]
    starts = np.searchsorted(query, evaluated)
    size = counts[evaluated].astype(np.float64)
    position = np.arange(query.shape[0]) - np.repeat(starts, counts[evaluated]) + 1.0
    group = np.repeat(np.arange(evaluated.size), counts[evaluated])

    def per_query_sum(values: np.ndarray) -> np.ndarray:
        return np.bincount(group, weights=values, minlength=evaluated.size)

    best = rank[starts]
    # By rank, not sklearn.metrics.average_precision_score per query: that one lets tied scores
    # enter together instead of ranking them by lower index, and needs every query's full row.
    per_query: dict[str, np.ndarray] = {
        "mrr": 1.0 / best,
        "map": per_query_sum(position / rank) / size,
    }
    for k in ks:
        per_query[f"hit@{k}"] = (best <= k).astype(np.float64)
        per_query[f"recall@{k}"] = per_query_sum((rank <= k).astype(np.float64)) / size
    if ndcg_ks:
        # Not sklearn.metrics.ndcg_score: it averages the gains of tied scores (or orders them
        # arbitrarily), not by lower index, needs dense matrices and cannot take a ranking.
        discount = np.where(np.isfinite(rank), 1.0 / np.log2(rank + 1.0), 0.0)
        ideal_order = np.lexsort((-gain, query))
        ideal_gain = gain[ideal_order]
        ideal_discount = 1.0 / np.log2(position + 1.0)
        for cutoff in ndcg_ks:
            limit = np.inf if cutoff is None else cutoff
            dcg = per_query_sum(np.where(rank <= limit, gain * discount, 0.0))
            idcg = per_query_sum(np.where(position <= limit, ideal_gain * ideal_discount, 0.0))
            per_query["ndcg" if cutoff is None else f"ndcg@{cutoff}"] = dcg / idcg
    return per_query, evaluated


def _cutoffs(ks: Sequence[int]) -> tuple[int, ...]:
    return tuple(dict.fromkeys(check_ks(ks)))


def retrieval_scores(
    relevance: object,
    scores: object | None = None,
    *,
    ranking: object | None = None,
    ks: Sequence[int] = (1, 5, 10),
    ndcg_k: int = 10,
    on_missing: OnMissing = "raise",
) -> dict[str, float]:
    """The retrieval family's report: every metric of the module docstring, plus counts.

    Parameters
    ----------
    relevance:
        Relevance matrix ``[n_queries, n_docs]`` (array: bool or gains ≥ 0) or one collection of
        relevant document indices (or mapping index → gain) per query.
    scores:
        ``[n_queries, n_docs]`` finite scores, higher = more similar. Exactly one of
        ``scores`` and ``ranking``.
    ranking:
        ``[n_queries, L]`` document indices, best first, no repeats within a row.
    ks:
        Cutoffs for hit@k and recall@k.
    ndcg_k:
        Cutoff for nDCG.
    on_missing:
        ``"raise"`` (default) or ``"skip"`` queries without relevant documents.

    Returns
    -------
    dict
        ``mrr``, ``map``, ``ndcg@{ndcg_k}``, ``hit@{k}`` and ``recall@{k}`` for each k (means
        over the evaluated queries), ``n_queries`` (evaluated) and ``n_skipped``.
    """
    checked = _cutoffs(ks)
    ndcg_k = check_positive_int(ndcg_k, "ndcg_k")
    pairs, _ = ranked_pairs(relevance, scores, ranking, (*checked, ndcg_k))
    per_query, evaluated = metrics_from_ranks(
        pairs, ks=checked, ndcg_ks=(ndcg_k,), on_missing=on_missing
    )
    report = {"mrr": per_query["mrr"], "map": per_query["map"]}
    report[f"ndcg@{ndcg_k}"] = per_query[f"ndcg@{ndcg_k}"]
    for k in checked:
        report[f"hit@{k}"] = per_query[f"hit@{k}"]
    for k in checked:
        report[f"recall@{k}"] = per_query[f"recall@{k}"]
    result: dict[str, float] = {name: float(np.mean(values)) for name, values in report.items()}
    result["n_queries"] = int(evaluated.size)
    result["n_skipped"] = int(pairs.n_queries - evaluated.size)
    return result


def _single(
    name: str,
    relevance: object,
    scores: object | None,
    ranking: object | None,
    on_missing: OnMissing,
    ks: tuple[int, ...] = (),
    ndcg_ks: tuple[int, ...] = (),
) -> float:
    pairs, _ = ranked_pairs(relevance, scores, ranking, (*ks, *ndcg_ks))
    per_query, _ = metrics_from_ranks(pairs, ks=ks, ndcg_ks=ndcg_ks, on_missing=on_missing)
    return float(np.mean(per_query[name]))


def mean_reciprocal_rank(
    relevance: object,
    scores: object | None = None,
    *,
    ranking: object | None = None,
    on_missing: OnMissing = "raise",
) -> float:
    """MRR = mean over queries of 1 / (rank of the best-ranked relevant document), in [0, 1]."""
    return _single("mrr", relevance, scores, ranking, on_missing)


def mean_average_precision(
    relevance: object,
    scores: object | None = None,
    *,
    ranking: object | None = None,
    on_missing: OnMissing = "raise",
) -> float:
    """mAP over queries, AP_q = (1/R_q) Σ_i i / r_(i) (relevant ranks ascending), in [0, 1]."""
    return _single("map", relevance, scores, ranking, on_missing)


def hit_at_k(
    relevance: object,
    scores: object | None = None,
    k: int = 10,
    *,
    ranking: object | None = None,
    on_missing: OnMissing = "raise",
) -> float:
    """Fraction of queries with a relevant document in their top k, in [0, 1]."""
    k = check_positive_int(k)
    return _single(f"hit@{k}", relevance, scores, ranking, on_missing, ks=(k,))


def recall_at_k(
    relevance: object,
    scores: object | None = None,
    k: int = 10,
    *,
    ranking: object | None = None,
    on_missing: OnMissing = "raise",
) -> float:
    """Mean over queries of |relevant ∩ top k| / |relevant|, in [0, 1]."""
    k = check_positive_int(k)
    return _single(f"recall@{k}", relevance, scores, ranking, on_missing, ks=(k,))


def ndcg_at_k(
    relevance: object,
    scores: object | None = None,
    k: int = 10,
    *,
    ranking: object | None = None,
    on_missing: OnMissing = "raise",
) -> float:
    """Mean nDCG@k (linear gains, log2(rank + 1) discount), in [0, 1]."""
    k = check_positive_int(k)
    return _single(f"ndcg@{k}", relevance, scores, ranking, on_missing, ndcg_ks=(k,))


# --- search -----------------------------------------------------------------------------


def _embedding_matrix(values: object, name: str) -> np.ndarray:
    if is_tensor(values):
        values = values.detach().cpu().numpy()  # type: ignore[attr-defined]
    array = np.asarray(values)
    if array.ndim != 2 or array.shape[0] < 1 or array.shape[1] < 1:
        raise ValueError(f"{name} must be a non-empty 2-D array (rows × dim), got {array.shape}")
    if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise ValueError(f"{name} must hold real numbers, got dtype {array.dtype}")
    bad = np.flatnonzero(~np.isfinite(array).all(axis=1))
    if bad.size:
        raise invalid_clips_error(f"{name} contain NaN or infinite values", bad, None)
    return array


def _prepare(array: np.ndarray, name: str, metric: str) -> np.ndarray:
    """float32 rows, L2-normalised (in float64 first) for cosine."""
    if metric != "cosine":
        return np.ascontiguousarray(array, dtype=np.float32)
    values = array.astype(np.float64)
    norms = np.linalg.norm(values, axis=1)
    zero = np.flatnonzero(norms == 0)
    if zero.size:
        raise invalid_clips_error(f"{name} have zero vectors (no cosine similarity)", zero, None)
    return np.ascontiguousarray(values / norms[:, None], dtype=np.float32)


def _deterministic_top(similarity: torch.Tensor, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k best columns of each row: decreasing value, ties by lower column index."""
    import torch

    kth = torch.topk(similarity, k, dim=1).values[:, -1:]
    rows, columns = torch.nonzero(similarity >= kth, as_tuple=True)  # row-major
    values = similarity[rows, columns].numpy()
    rows_np, columns_np = rows.numpy(), columns.numpy()
    order = np.lexsort((columns_np, -values, rows_np))
    rows_np, columns_np, values = rows_np[order], columns_np[order], values[order]
    counts = np.bincount(rows_np, minlength=similarity.shape[0])
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    keep = (np.arange(rows_np.shape[0]) - np.repeat(starts, counts)) < k
    shape = (similarity.shape[0], k)
    return values[keep].reshape(shape), columns_np[keep].reshape(shape).astype(np.int64)


def top_k(
    query_emb: object,
    doc_emb: object,
    k: int,
    *,
    metric: Literal["cosine", "dot", "euclidean"] = "cosine",
    index: Literal["exact", "faiss"] = "exact",
    batch_size: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The k most similar documents of every query.

    Similarity: ``"cosine"`` (rows L2-normalised, then inner product), ``"dot"`` (inner
    product) or ``"euclidean"`` (the *negated* L2 distance, so that higher is always more
    similar). Computed in float32 (as faiss does).

    ``index="exact"`` multiplies blocks of ``batch_size`` queries (default: blocks of about
    :data:`BLOCK_ELEMENTS` scores) against all documents with torch; ties are broken by lower
    document index, exactly. ``index="faiss"`` uses a flat (exact) faiss index
    (``IndexFlatIP`` / ``IndexFlatL2``) from the optional ``faiss-cpu`` package; its result is
    re-sorted by (−score, index), but which of several documents tied at the k-th score make
    the cut is faiss's choice; ``batch_size`` applies to the exact search only.

    Returns
    -------
    (scores, indices)
        float32 ``[n_queries, k]`` similarities, best first, and int64 ``[n_queries, k]``
        document indices (usable as ``ranking=`` in :func:`retrieval_scores`).

    Raises
    ------
    ValueError
        Malformed inputs, k not in [1, n_docs], unknown metric or index.
    InvalidEmbeddingsError
        Rows with NaN/inf, or zero vectors under cosine (names them).
    ImportError
        ``index="faiss"`` without faiss-cpu installed (``pip install 'audiobench[faiss]'``).
    """
    import torch

    if metric not in ("cosine", "dot", "euclidean"):
        raise ValueError(f"metric must be 'cosine', 'dot' or 'euclidean', got {metric!r}")
    if index not in ("exact", "faiss"):
        raise ValueError(f"index must be 'exact' or 'faiss', got {index!r}")
    queries = _embedding_matrix(query_emb, "query embeddings")
    docs = _embedding_matrix(doc_emb, "document embeddings")
    if queries.shape[1] != docs.shape[1]:
        raise ValueError(
            f"query embeddings have dimension {queries.shape[1]}, documents {docs.shape[1]}"
        )
    k = check_positive_int(k)
    if k > docs.shape[0]:
        raise ValueError(f"k = {k} exceeds the number of documents ({docs.shape[0]})")
    if batch_size is not None:
        batch_size = check_positive_int(batch_size, "batch_size")
    q32 = _prepare(queries, "query embeddings", metric)
    d32 = _prepare(docs, "document embeddings", metric)
    if index == "faiss":
        return _faiss_top_k(q32, d32, k, metric)
    step = batch_size or max(1, BLOCK_ELEMENTS // docs.shape[0])
    scores = np.empty((q32.shape[0], k), dtype=np.float32)
    indices = np.empty((q32.shape[0], k), dtype=np.int64)
    doc_tensor = torch.from_numpy(d32)
    doc_norms = (doc_tensor * doc_tensor).sum(dim=1) if metric == "euclidean" else None
    with limited_cpu_threads(), torch.no_grad():
        for start in range(0, q32.shape[0], step):
            block = torch.from_numpy(q32[start : start + step])
            similarity = block @ doc_tensor.T
            if doc_norms is not None:
                block_norms = (block * block).sum(dim=1, keepdim=True)
                squared = block_norms + doc_norms[None] - 2 * similarity
                similarity = -torch.sqrt(torch.clamp(squared, min=0.0))
            values, columns = _deterministic_top(similarity, k)
            scores[start : start + step] = values
            indices[start : start + step] = columns
    return scores, indices


def _faiss_top_k(
    queries: np.ndarray, docs: np.ndarray, k: int, metric: str
) -> tuple[np.ndarray, np.ndarray]:
    try:
        import faiss
    except ImportError as error:
        raise ImportError(
            "top_k(index='faiss') needs faiss-cpu, which is an optional dependency: "
            "pip install 'audiobench[faiss]'"
        ) from error
    dim = docs.shape[1]
    flat = faiss.IndexFlatL2(dim) if metric == "euclidean" else faiss.IndexFlatIP(dim)
    flat.add(docs)
    values, columns = flat.search(queries, k)
    if metric == "euclidean":
        values = -np.sqrt(np.maximum(values, 0.0))
    # Deterministic order within the k found: decreasing score, then lower index.
    rows = np.repeat(np.arange(values.shape[0]), k)
    order = np.lexsort((columns.ravel(), -values.ravel(), rows))
    values = values.ravel()[order].reshape(values.shape)
    columns = columns.ravel()[order].reshape(columns.shape)
    return values.astype(np.float32), columns.astype(np.int64)
