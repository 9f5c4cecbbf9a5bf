"""audiobench's own protocol for retrieval: exact (or faiss) cosine ranking, IR metrics.

Each query's embedding (L2-normalised, float64) scores every document by cosine similarity;
``index="exact"`` ranks the whole corpus (MRR and mAP exact), ``index="faiss"`` the ``depth``
best documents (MRR@depth, mAP@depth; exact again when ``depth`` covers the corpus). Ties
rank the lower document index first. In the ``all`` layout a query's own clip is ranked last
and is not relevant (leave-one-out). The metrics (:mod:`audiobench.metrics.retrieval`) are
``mrr``, ``map``, ``ndcg@<k>``, ``hit@<k>`` and ``recall@<k>``, means over the evaluated
queries. A query without a relevant document is an error (``on_missing="raise"``) or is left
out and counted (``"skip"``).
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING, Annotated, Any, cast

import numpy as np
from pydantic import AfterValidator, Field, model_validator

from audiobench import reports as _reports
from audiobench.errors import DataError
from audiobench.evaluators.consistency import check_at_most, check_share_of, cutoffs
from audiobench.evaluators.evaluator import Evaluator
from audiobench.evaluators.registry import register
from audiobench.metrics.naming import describe_clips
from audiobench.reports import Count, KeyedReport, Summary, Unit, metric_names
from audiobench.task import Embedder, Subset, Task, TaskFamily

if TYPE_CHECKING:
    from audiobench.families.retrieval import RetrievalTask

__all__ = ["RetrievalEvaluator", "RetrievalReport", "RetrievalSummary"]

#: Metrics reported at a cut-off k: ``ndcg@<k>``, ``hit@<k>``, ``recall@<k>``.
CutoffMetric = Annotated[
    str,
    AfterValidator(metric_names(("mrr", "map"), ("ndcg@", ""), ("hit@", ""), ("recall@", ""))),
]


class RetrievalScores(KeyedReport):
    """MRR and mAP, and the cut-off metrics (``ndcg@<k>``, ``hit@<k>``, ``recall@<k>``)."""

    __pydantic_extra__: dict[CutoffMetric, Unit | None] = Field(init=False)
    mrr: Unit | None
    map: Unit | None


class RetrievalReport(RetrievalScores):
    """One subset: the metrics over its evaluated queries, and what was counted."""

    n_queries: Count
    n_skipped: Count
    n_documents: Count
    n_queries_unembedded: Count
    n_documents_unembedded: Count
    #: Split layout only: clips in neither the query nor the corpus splits.
    n_clips_unused: Count | None = None

    @model_validator(mode="after")
    def _consistent(self) -> RetrievalReport:
        """The metrics agree with the counts and with each other.

        Per query hit@k is 0 or 1, so its mean is a share of ``n_queries``; hit@k and
        recall@k grow with k, and recall@k ≤ hit@k; the reciprocal rank is 1 where hit@1
        is, and at most 1/(k+1) where hit@k is 0; at k ≥ ``n_documents`` every relevant
        document is ranked (hit@k = recall@k = 1).
        """
        extra = self.model_extra or {}
        defined = [self.mrr, self.map, *extra.values()]
        if self.n_queries == 0 and any(v is not None for v in defined):
            raise ValueError("n_queries: 0, but metrics are defined")
        if self.n_queries > 0 and self.n_documents == 0:
            raise ValueError("n_documents: 0 documents cannot be ranked for n_queries > 0")
        hits = cutoffs(list(extra), "hit@")
        recall_list = cutoffs(list(extra), "recall@")
        recalls = dict(recall_list)
        for ranked in (hits, recall_list):  # both grow with k
            for (_, low), (_, high) in pairwise(ranked):
                check_at_most(low, extra[low], high, extra[high])
        for k, name in hits:
            hit = extra[name]
            check_share_of(name, hit, self.n_queries, "n_queries")
            if k in recalls:
                check_at_most(recalls[k], extra[recalls[k]], name, hit)
            if hit is not None and self.mrr is not None:
                if k == 1:
                    check_at_most(name, hit, "mrr", self.mrr)
                bound = hit + (1.0 - hit) / (k + 1)
                check_at_most("mrr", self.mrr, f"what {name} allows", bound)
            if k >= self.n_documents > 0 and self.n_queries > 0:
                for field in (name, recalls.get(k)):
                    value = extra.get(field) if field else None
                    if value is not None and not _reports.same_number(value, 1.0):
                        raise ValueError(
                            f"{field}: {value!r}, but k = {k} ranks all n_documents = "
                            f"{self.n_documents} documents (1.0)"
                        )
        return self


class RetrievalSummary(Summary, RetrievalScores):
    """Unweighted mean over subsets of every metric (None if undefined in any subset)."""

    n_subsets: Count


@register
class RetrievalEvaluator(Evaluator):
    family = TaskFamily.RETRIEVAL
    protocol = "audiobench"
    Report = RetrievalReport
    Summary = RetrievalSummary
    #: Texts split by ``text_separator`` are stripped, and empty pieces dropped.
    strip_texts = True
    #: Layout ``all``: a query's own clip is not relevant (and is ranked last).
    leave_one_out = True

    @classmethod
    def check_main_score(cls, task: type[Task], path: tuple[str, ...]) -> None:
        o = cast("RetrievalTask.Options", task.options)
        cut = [f"{m}@{k}" for m in ("hit", "recall") for k in o.ks]
        task.require_main_score(path, ["mrr", "map", f"ndcg@{o.ndcg_k}", *cut])

    @classmethod
    def describe(cls, task: Task) -> dict[str, Any]:
        o = cast("RetrievalTask.Options", task.options)
        sides = o.model_dump(include={"query_modality", "document_modality", "layout"})
        ranking = o.model_dump(mode="json", include={"index", "ks", "ndcg_k", "on_missing"})
        depth = {"depth": o.depth} if o.index == "faiss" else {}
        return {**sides, "similarity": "cosine", **ranking, **depth}

    @classmethod
    def evaluate_subset(cls, task: Task, embedder: Embedder, subset: Subset) -> _reports.Report:
        # Imported here: the families import this module (its Report), not it them.
        from audiobench.families.ranking_inputs import MAX_LISTED_IDS, SKIP_HINT, unit_rows
        from audiobench.metrics import retrieval_scores

        family = cast("RetrievalTask", task)
        o = family.options
        inputs = family.retrieval_inputs(
            embedder, subset, strip_texts=cls.strip_texts, leave_one_out=cls.leave_one_out
        )
        q_ids = [it.clip.id for it in inputs.queries]
        d_ids = [it.clip.id for it in inputs.documents]
        relevance = inputs.relevance
        missing = [i for i, rel in zip(q_ids, relevance, strict=True) if not rel]
        if missing and (o.on_missing == "raise" or len(missing) == len(q_ids)):
            hint = SKIP_HINT if o.on_missing == "raise" else ""
            raise DataError(
                f"{subset.where}: {len(missing)} of {len(q_ids)} queries have no relevant "
                f"document (query clips: {describe_clips(missing)}){hint}"
            )

        q_unit = unit_rows(inputs.query_matrix, q_ids, f"{task.name}: query")
        d_unit = unit_rows(inputs.document_matrix, d_ids, f"{task.name}: document")
        if o.index == "exact":
            ranked: dict[str, Any] = {"scores": q_unit @ d_unit.T}
            if o.layout == "all":  # leave-one-out: a query's own clip ranks last, below any cosine
                ranked["scores"][np.array(q_ids)[:, None] == np.array(d_ids)] = -2.0
        else:
            ranked = _faiss_ranked(q_unit, d_unit, o.depth)
        scores = retrieval_scores(
            relevance, **ranked, ks=o.ks, ndcg_k=o.ndcg_k, on_missing=o.on_missing
        )
        if inputs.n_clips_unused is not None:
            scores["n_clips_unused"] = inputs.n_clips_unused
        subset.details["skipped_queries"] = {
            "n_no_relevant": len(missing),
            "n_unembedded": inputs.n_queries_unembedded,
            "no_relevant_ids": list(dict.fromkeys(missing))[:MAX_LISTED_IDS],
        }
        return RetrievalReport(
            **scores,
            n_documents=len(d_ids),
            n_queries_unembedded=inputs.n_queries_unembedded,
            n_documents_unembedded=inputs.n_documents_unembedded,
        )


def _faiss_ranked(queries: np.ndarray, docs: np.ndarray, depth: int) -> dict[str, Any]:
    """The ``ranking`` (or, when it covers the corpus, the ``scores``) that faiss gives."""
    from audiobench.metrics import top_k

    depth = min(depth, docs.shape[0])
    _, ranking = top_k(queries, docs, depth, metric="cosine", index="faiss")
    if depth < docs.shape[0]:
        return {"ranking": ranking}
    # The whole corpus is ranked: minus the rank is a score with the same order, and it
    # allows cutoffs beyond a small corpus, as the exact path does.
    scores = np.empty(ranking.shape, dtype=np.float64)
    np.put_along_axis(scores, ranking, -np.arange(depth, dtype=np.float64)[None], axis=1)
    return {"scores": scores}
