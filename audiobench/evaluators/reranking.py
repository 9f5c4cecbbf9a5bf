"""audiobench's own protocol for reranking: each query orders its candidates; mAP, MRR, nDCG.

Each candidate's score is the cosine similarity (float64, unit rows) between the query
clip's pooled audio embedding and the candidate's; candidates are ranked by decreasing
score, ties to the earlier candidate (:mod:`audiobench.metrics.reranking`). For text
candidates the top-ranked candidate is also read as a transcript of the query: ``wer`` and
``char_error_rate`` (corpus level) and ``candidate_error_rate`` (MSEB's reranking "CER": the
share of queries whose top candidate has any word error), each against the positive with the
fewest edits (:mod:`audiobench.metrics.text_errors`). A query with an empty list or no
relevant candidate is an error (``on_missing="raise"``) or is left out of every mean and
counted (``"skip"``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, cast

import numpy as np
from pydantic import AfterValidator, Field, model_validator

from audiobench import reports as _reports
from audiobench.errors import DataError
from audiobench.evaluators.consistency import check_at_most, check_share_of
from audiobench.evaluators.evaluator import Evaluator
from audiobench.evaluators.registry import register
from audiobench.metrics.naming import describe_clips
from audiobench.reports import Count, KeyedReport, NonNegative, Summary, Unit, metric_names
from audiobench.task import Embedder, Subset, Task, TaskFamily

if TYPE_CHECKING:
    from audiobench.families.reranking import RerankingTask

__all__ = ["ERROR_RATES", "RANKING_METRICS", "RerankingEvaluator", "RerankingReport"]

#: Metrics that are means over queries of [0, 1] values, and the error rates (≥ 0).
RANKING_METRICS = ("map", "mrr", "ndcg")
ERROR_RATES = ("wer", "candidate_error_rate", "char_error_rate")

NdcgAt = Annotated[
    str, AfterValidator(metric_names((*RANKING_METRICS, *ERROR_RATES), ("ndcg@", "")))
]


class RerankingScores(KeyedReport):
    """mAP, MRR, nDCG over the whole list and at the cut-off (``ndcg@<k>``), WER/CER."""

    __pydantic_extra__: dict[NdcgAt, Unit | None] = Field(init=False)
    map: Unit | None
    mrr: Unit | None
    ndcg: Unit | None
    #: Text candidates only: error rates of the top candidate (corpus level, may exceed 1).
    wer: NonNegative | None = None
    #: MSEB's reranking "CER": share of queries whose top candidate has any word error.
    candidate_error_rate: Unit | None = None
    char_error_rate: NonNegative | None = None


class RerankingReport(RerankingScores):
    """One subset: the metrics over its evaluated queries, and what was counted."""

    n_queries: Count
    n_skipped: Count
    n_skipped_empty: Count
    n_skipped_no_relevant: Count
    n_candidates: Count
    n_queries_unembedded: Count
    n_candidates_unembedded: Count

    @model_validator(mode="after")
    def _consistent(self) -> RerankingReport:
        """The counts add up, and the metrics are what that many queries can give.

        Skipped queries are the empty ones and those without a relevant candidate; each
        evaluated query holds at least one candidate, so its reciprocal rank and average
        precision are at least 1 over the candidates of all queries; the candidate error
        rate is a share of the evaluated queries; the three error rates come together.
        """
        skipped = self.n_skipped_empty + self.n_skipped_no_relevant
        if self.n_skipped != skipped:
            raise ValueError(
                f"n_skipped: {self.n_skipped} is not n_skipped_empty + n_skipped_no_relevant "
                f"({skipped})"
            )
        if self.n_candidates < self.n_queries:
            raise ValueError(
                f"n_candidates: {self.n_candidates} is below n_queries ({self.n_queries}); "
                "every evaluated query has a candidate"
            )
        extra = self.model_extra or {}
        metrics = [self.map, self.mrr, self.ndcg, *extra.values()]
        if self.n_queries == 0 and any(v is not None for v in metrics):
            raise ValueError("n_queries: 0, but metrics are defined")
        if self.n_queries > 0:
            floor = self.n_queries / self.n_candidates
            for name in ("map", "mrr"):
                check_at_most("n_queries / n_candidates", floor, name, getattr(self, name))
        rates = {r: getattr(self, r) for r in ERROR_RATES}
        if len({v is None for v in rates.values()}) > 1:
            given = sorted(r for r, v in rates.items() if v is not None)
            raise ValueError(f"{', '.join(given)}: the three error rates come together")
        check_share_of(
            "candidate_error_rate", self.candidate_error_rate, self.n_queries, "n_queries"
        )
        return self


class RerankingSummary(Summary, RerankingScores):
    """Unweighted mean over subsets of every metric (None if undefined in any subset)."""

    n_subsets: Count


@register
class RerankingEvaluator(Evaluator):
    family = TaskFamily.RERANKING
    protocol = "audiobench"
    Report = RerankingReport
    Summary = RerankingSummary

    @classmethod
    def check_main_score(cls, task: type[Task], path: tuple[str, ...]) -> None:
        o = cast("RerankingTask.Options", task.options)
        text = o.candidate_modality == "text"
        ndcg_k = f"ndcg@{o.ndcg_k}"
        task.require_main_score(path, [*RANKING_METRICS, ndcg_k, *(ERROR_RATES if text else ())])

    @classmethod
    def describe(cls, task: Task) -> dict[str, Any]:
        o = cast("RerankingTask.Options", task.options)
        protocol: dict[str, Any] = {
            "candidate_modality": o.candidate_modality,
            "similarity": "cosine",
            **o.model_dump(include={"ndcg_k", "on_missing"}),
        }
        if o.candidate_modality == "text":
            protocol["text_normalization"] = {
                "lowercase": True,
                "strip_punctuation": o.strip_punctuation,
                "reference": "closest positive",
            }
        return protocol

    @classmethod
    def evaluate_subset(cls, task: Task, embedder: Embedder, subset: Subset) -> _reports.Report:
        # Imported here: the families import this module (its Report), not it them.
        from audiobench.families.ranking_inputs import MAX_LISTED_IDS, SKIP_HINT, unit_rows
        from audiobench.metrics import multi_reference_error_rates, reranking_scores, top_candidates

        family = cast("RerankingTask", task)
        o = family.options
        inputs = family.reranking_inputs(embedder, subset)
        kept, cand_rows, cand_matrix = inputs.kept, inputs.candidate_rows, inputs.candidate_matrix
        if not kept:
            raise DataError(f"{subset.where}: no query could be embedded")
        q_unit = unit_rows(inputs.query_matrix, [clip.id for clip, _, _ in kept], "query")
        empty = [clip.id for clip, cands, _ in kept if not cands]
        no_relevant = [clip.id for clip, cands, pos in kept if cands and not set(cands) & set(pos)]
        parts = [
            f"{len(ids)} {what} ({describe_clips(ids)})"
            for ids, what in (
                (empty, "with an empty candidate list"),
                (no_relevant, "without a relevant candidate"),
            )
            if ids
        ]
        if parts and o.on_missing == "raise":
            raise DataError(
                f"{subset.where}: of {len(kept)} queries, {' and '.join(parts)}" + SKIP_HINT
            )
        if len(empty) + len(no_relevant) == len(kept):
            raise DataError(
                f"{subset.where}: no query has a non-empty candidate list with a relevant candidate"
            )
        score_lists: list[np.ndarray] = []
        for row, (clip, cands, _) in zip(q_unit, kept, strict=True):
            names = [f"{clip.id} candidate {c!r}" for c in cands]
            matrix = unit_rows(cand_matrix[[cand_rows[c] for c in cands]], names, "candidate")
            score_lists.append(matrix @ row if cands else np.zeros(0))
        relevance = [np.array([c in pos for c in cands], dtype=bool) for _, cands, pos in kept]
        scores: dict[str, Any] = reranking_scores(
            relevance, score_lists, ndcg_k=o.ndcg_k, on_missing=o.on_missing
        )
        if o.candidate_modality == "text":
            # The top candidate of each evaluated query is read as its transcript.
            evaluated = [i for i, r in enumerate(relevance) if r.any()]
            best = top_candidates([score_lists[i] for i in evaluated])
            scores |= multi_reference_error_rates(
                [kept[i][2] for i in evaluated],
                [kept[i][1][b] for i, b in zip(evaluated, best, strict=True)],
                strip_punctuation=o.strip_punctuation,
            )
        n_unembedded = len(inputs.queries) - len(kept)
        subset.details["skipped_queries"] = {
            "n_empty": len(empty),
            "n_no_relevant": len(no_relevant),
            "n_unembedded": n_unembedded,
            "empty_ids": empty[:MAX_LISTED_IDS],
            "no_relevant_ids": no_relevant[:MAX_LISTED_IDS],
        }
        n_candidates = sum(len(cands) for _, cands, _ in kept)
        return RerankingReport(
            **scores,
            n_candidates=n_candidates,
            n_queries_unembedded=n_unembedded,
            n_candidates_unembedded=sum(len(c) for _, c, _ in inputs.embedded) - n_candidates,
        )
