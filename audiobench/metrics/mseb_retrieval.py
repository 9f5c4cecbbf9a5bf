"""MSEB's retrieval metrics: a top-10 list per query, scored against its reference documents.

**Ranking** (:func:`dot_product_top_k`). MSEB ranks the documents of an index by the raw dot
product with the query's vector (both in float32) and keeps the **10** best. Ties go to the
earlier document (MSEB's ``argpartition`` leaves their order undefined).

**Per query** (:func:`mseb_retrieval_scores`), with the list cut to its first 10 documents and
the reference a set of relevant documents:

- ``mrr``: 1 / the rank of the first listed document in the reference set, 0 if none is: MRR@10.
- ``em``: 1 if the first listed document is in the reference set.
- ``recall_at_10``: 1 if **any** of the first 10 is (a hit rate, not a share of the relevant).
- ``recall_at_inf``: the same over the whole list, which is already cut to 10: it equals
  ``recall_at_10``, as in every MSEB result line.
- ``ndcg_at_10``: 1 / log2(rank + 1) at the rank of the reference, else 0. MSEB compares the
  listed ids with its reference by string equality, so a query whose reference is **several**
  documents (a list) always scores 0: reproduced here for references of more than one document.
- A query whose answer is :data:`~audiobench.metrics.mseb_conventions.INVALID_ANSWER` or
  :data:`~audiobench.metrics.mseb_conventions.NO_RESPONSE` (a text encoder's sentinels; an
  embedding encoder's clip that could not be embedded is a missing response) scores 0 on all
  five and counts in ``invalid_result_rate`` / ``no_result_rate``.

Each metric is the mean over queries with MSEB's population std (``<name>_std``;
:func:`~audiobench.metrics.mseb_conventions.weighted_mean_and_std` with unit weights).

Source: ``mseb/evaluators/retrieval_evaluator.py``, ``mseb/metrics.py``, ``mseb/types.py``.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable, Sequence

import numpy as np

from audiobench.metrics.mseb_conventions import (
    INVALID_ANSWER,
    NO_RESPONSE,
    weighted_mean_and_std,
)
from audiobench.metrics.validation import real_array

__all__ = [
    "MSEB_RETRIEVAL_METRICS",
    "TOP_K",
    "dot_product_top_k",
    "mseb_retrieval_scores",
    "reciprocal_rank_at",
    "single_reference_ndcg",
]

#: MSEB's searcher returns this many documents per query.
TOP_K = 10
#: The metrics of :func:`mseb_retrieval_scores`, each also with ``_std``.
MSEB_RETRIEVAL_METRICS = (
    "mrr",
    "em",
    "recall_at_10",
    "recall_at_inf",
    "ndcg_at_10",
    "invalid_result_rate",
    "no_result_rate",
)

#: One query's answer: its ranked document keys, or a sentinel string.
Answer = Sequence[Hashable] | str


def dot_product_top_k(queries: object, documents: object, k: int = TOP_K) -> np.ndarray:
    """Each query's ``min(k, n_documents)`` best documents by raw dot product, best first.

    ``queries`` is ``[n_queries, D]`` and ``documents`` ``[n_documents, D]``; both are cast to
    float32 and each query is scored as its own ``[1, D]`` product with the documents, as MSEB's
    brute-force searcher does (so the float32 sums are MSEB's, to the last bit). Ties rank the
    lower document index first. Returns int64 indices ``[n_queries, min(k, n_documents)]``.
    """
    q = real_array(queries, "queries", 2, "[n_queries, D]").astype(np.float32)
    d = real_array(documents, "documents", 2, "[n_documents, D]").astype(np.float32)
    if q.shape[1] != d.shape[1]:
        raise ValueError(f"queries have width {q.shape[1]}, documents {d.shape[1]}")
    if d.shape[0] == 0:
        raise ValueError("no documents to rank")
    if k < 1:
        raise ValueError(f"k must be ≥ 1, got {k}")
    depth = min(k, d.shape[0])
    ranked = np.empty((q.shape[0], depth), dtype=np.int64)
    for i in range(q.shape[0]):
        scores = np.matmul(q[i : i + 1], d.T)[0]
        # A stable sort of the negated scores: equal scores keep the document order.
        ranked[i] = np.argsort(-scores, kind="stable")[:depth]
    return ranked


def reciprocal_rank_at(ranked: Sequence[Hashable], reference: Collection[Hashable]) -> float:
    """1 / the 1-based rank of the first item of ``ranked`` in ``reference``; 0 if none."""
    for rank, item in enumerate(ranked, start=1):
        if item in reference:
            return 1.0 / rank
    return 0.0


def single_reference_ndcg(
    ranked: Sequence[Hashable], reference: Collection[Hashable], k: int = TOP_K
) -> float:
    """MSEB's NDCG@k: 1 / log2(rank + 1) where the one reference document is ranked within
    the first ``k``; 0 when it is not, and 0 for a reference of several documents."""
    if len(reference) != 1:
        return 0.0
    (target,) = tuple(reference)
    for rank, item in enumerate(ranked[:k], start=1):
        if item == target:
            return float(1.0 / np.log2(rank + 1))
    return 0.0


def mseb_retrieval_scores(
    answers: Sequence[Answer], references: Sequence[Collection[Hashable]], *, k: int = TOP_K
) -> dict[str, float]:
    """MSEB's retrieval metrics over queries (module docstring).

    ``answers[i]`` is query i's ranked document keys (any hashable; only the first ``k``
    count) or a sentinel string (``""`` invalid, ``"NO_RESPONSE"`` missing);
    ``references[i]`` the keys of its relevant documents (possibly empty: it then scores 0).
    Returns each of :data:`MSEB_RETRIEVAL_METRICS` and its ``_std``.
    """
    if len(answers) != len(references):
        raise ValueError(f"got {len(answers)} answers and {len(references)} references")
    if not answers:
        raise ValueError("no queries to score")
    values: dict[str, list[float]] = {name: [] for name in MSEB_RETRIEVAL_METRICS}
    for position, (answer, reference) in enumerate(zip(answers, references, strict=True)):
        if isinstance(answer, str):
            if answer not in (INVALID_ANSWER, NO_RESPONSE):
                raise ValueError(
                    f"answers[{position}] is the string {answer!r}; a ranked list or one of "
                    f"{INVALID_ANSWER!r} (invalid), {NO_RESPONSE!r} (no response) is expected"
                )
            for name in ("mrr", "em", "recall_at_10", "recall_at_inf", "ndcg_at_10"):
                values[name].append(0.0)
            values["invalid_result_rate"].append(float(answer == INVALID_ANSWER))
            values["no_result_rate"].append(float(answer == NO_RESPONSE))
            continue
        # A repeated key keeps its first place (MSEB's dict of ids, unscored lists).
        ranked = list(dict.fromkeys(answer))[:k]
        hit = float(any(item in reference for item in ranked))
        values["mrr"].append(reciprocal_rank_at(ranked, reference))
        values["em"].append(float(bool(ranked) and ranked[0] in reference))
        values["recall_at_10"].append(hit)
        values["recall_at_inf"].append(hit)
        values["ndcg_at_10"].append(single_reference_ndcg(ranked, reference, k=10))
        values["invalid_result_rate"].append(0.0)
        values["no_result_rate"].append(0.0)
    scores: dict[str, float] = {}
    for name, column in values.items():
        mean, std = weighted_mean_and_std(column)
        scores[name], scores[f"{name}_std"] = mean, std
    assert all(math.isfinite(v) for v in scores.values())
    return scores
