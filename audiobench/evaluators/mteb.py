"""MTEB's protocol (``protocol="mteb"``): each family scored as MTEB scores its MAEB tasks.

The reproductions of the reference's evaluators and their fixed settings are in
:mod:`audiobench.evaluators.mteb_protocol.subset_scores`; this module registers them as evaluators.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from audiobench import reports as _reports
from audiobench.evaluators.evaluator import Evaluator
from audiobench.evaluators.mteb_protocol import subset_scores as mteb_protocol
from audiobench.evaluators.mteb_protocol.subset_scores import MtebReport, MtebSummary
from audiobench.evaluators.registry import register
from audiobench.task import Embedder, Subset, Task, TaskFamily

if TYPE_CHECKING:
    from audiobench.families.pair_classification import PairClassificationTask

__all__ = ["MtebClusteringEvaluator", "MtebEvaluator"]


class MtebEvaluator(Evaluator):
    """The reference's keys as the report, their mean over subsets as the summary."""

    protocol = "mteb"
    Report = MtebReport
    Summary = MtebSummary

    @classmethod
    def check_main_score(cls, task: type[Task], path: tuple[str, ...]) -> None:
        mteb_protocol.check_main_score(task, path)

    @classmethod
    def describe(cls, task: Task) -> dict[str, Any]:
        return mteb_protocol.describe(task)


@register
class MtebClusteringEvaluator(MtebEvaluator):
    family = TaskFamily.CLUSTERING

    @classmethod
    def evaluate_subset(cls, task: Task, embedder: Embedder, subset: Subset) -> _reports.Report:
        return mteb_protocol.clustering_report(embedder, subset)


# --- retrieval, reranking, zero-shot classification ---


@register
class MtebRetrievalEvaluator(MtebEvaluator):
    """MAEB's retrieval: texts split as the reference splits them (unstripped, empty pieces
    kept), and in layout ``all`` a query's own clip ranked and relevant."""

    family = TaskFamily.RETRIEVAL
    Report = mteb_protocol.MtebRankingReport
    strip_texts = False
    leave_one_out = False

    @classmethod
    def describe(cls, task: Task) -> dict[str, Any]:
        sides = task.options.model_dump(include={"query_modality", "document_modality", "layout"})
        return mteb_protocol.describe(task, **sides)

    @classmethod
    def evaluate_subset(cls, task: Task, embedder: Embedder, subset: Subset) -> _reports.Report:
        from audiobench.families.retrieval import RetrievalTask

        assert isinstance(task, RetrievalTask)
        inputs = task.retrieval_inputs(
            embedder, subset, strip_texts=cls.strip_texts, leave_one_out=cls.leave_one_out
        )
        return mteb_protocol.retrieval_report(
            subset,
            inputs.queries,
            inputs.documents,
            inputs.query_matrix,
            inputs.document_matrix,
            inputs.relevance,
        )


@register
class MtebRerankingEvaluator(MtebEvaluator):
    """MAEB's reranking: each query ranks its own candidates; a positive outside them still
    counts in recall and mAP."""

    family = TaskFamily.RERANKING
    Report = mteb_protocol.MtebRankingReport

    @classmethod
    def describe(cls, task: Task) -> dict[str, Any]:
        modality = task.options.model_dump(include={"candidate_modality"})
        return mteb_protocol.describe(task, **modality)

    @classmethod
    def evaluate_subset(cls, task: Task, embedder: Embedder, subset: Subset) -> _reports.Report:
        from audiobench.families.reranking import RerankingTask

        assert isinstance(task, RerankingTask)
        inputs = task.reranking_inputs(embedder, subset)
        return mteb_protocol.reranking_report(
            subset,
            inputs.kept,
            inputs.query_matrix,
            inputs.candidate_rows,
            inputs.candidate_matrix,
            len(inputs.queries),
        )


@register
class MtebZeroShotClassificationEvaluator(MtebEvaluator):
    """MAEB's zero-shot classification: float32 cosine to the prompts as the encoder gave
    them, arg-max with ties to the first class."""

    family = TaskFamily.ZERO_SHOT_CLASSIFICATION
    Report = mteb_protocol.MtebZeroShotReport

    @classmethod
    def describe(cls, task: Task) -> dict[str, Any]:
        from audiobench.families.zero_shot_classification import ZeroShotClassificationTask

        assert isinstance(task, ZeroShotClassificationTask)
        return mteb_protocol.describe(task, prompts=task.class_prompts())

    @classmethod
    def evaluate_subset(cls, task: Task, embedder: Embedder, subset: Subset) -> _reports.Report:
        from audiobench.families.zero_shot_classification import ZeroShotClassificationTask

        assert isinstance(task, ZeroShotClassificationTask)
        kept, audio = task.embedded_clips(embedder, subset)
        targets = [task.classes.index(str(c.label)) for c in kept]
        return mteb_protocol.zero_shot_report(audio, task.prompt_embeddings, targets)


# --- classification, pair classification ---


@register
class MtebClassificationEvaluator(MtebEvaluator):
    """Few-shot logistic regression (``accuracy``; multi-label: ``lrap``)."""

    family = TaskFamily.CLASSIFICATION

    @classmethod
    def evaluate_subset(cls, task: Task, embedder: Embedder, subset: Subset) -> _reports.Report:
        o = cast(Any, task.options)
        return mteb_protocol.classification_report(
            embedder, subset, multilabel=o.multilabel, separator=o.label_separator
        )

    @classmethod
    def describe(cls, task: Task) -> dict[str, Any]:
        return mteb_protocol.describe(task, multilabel=cast(Any, task.options).multilabel)


@register
class MtebPairClassificationEvaluator(MtebEvaluator):
    """The pair scores in the reference's flat keys (``cosine_ap``, ``max_ap``, ...), computed
    in float32 as the reference computes them."""

    family = TaskFamily.PAIR_CLASSIFICATION

    @classmethod
    def evaluate_subset(cls, task: Task, embedder: Embedder, subset: Subset) -> _reports.Report:
        from audiobench.evaluators.pair_classification import similarity_scores

        pairs = cast("PairClassificationTask", task).embed_pairs(embedder, subset)
        return mteb_protocol.pair_report(
            similarity_scores(pairs, subset.where, precision="float32"), n_pairs=pairs.n_scored
        )

    @classmethod
    def describe(cls, task: Task) -> dict[str, Any]:
        return mteb_protocol.describe(task, **cast("PairClassificationTask", task).pairs_layout())
