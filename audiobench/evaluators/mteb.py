"""MTEB's protocol (``protocol="mteb"``): each family scored as MTEB scores its MAEB tasks.

The reproductions of the reference's evaluators and their fixed settings are in
:mod:`audiobench.families.mteb_protocol`; this module registers them as evaluators.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from audiobench import reports as _reports
from audiobench.evaluators.evaluator import Evaluator
from audiobench.evaluators.registry import register
from audiobench.families import mteb_protocol
from audiobench.families.mteb_protocol import MtebReport, MtebSummary
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
    """The pair scores in the reference's flat keys (``cosine_ap``, ``max_ap``, ...)."""

    family = TaskFamily.PAIR_CLASSIFICATION

    @classmethod
    def evaluate_subset(cls, task: Task, embedder: Embedder, subset: Subset) -> _reports.Report:
        from audiobench.evaluators.pair_classification import similarity_scores

        pairs = cast("PairClassificationTask", task).embed_pairs(embedder, subset)
        return mteb_protocol.pair_report(
            similarity_scores(pairs, subset.where), n_pairs=pairs.n_scored
        )

    @classmethod
    def describe(cls, task: Task) -> dict[str, Any]:
        return mteb_protocol.describe(task, **cast("PairClassificationTask", task).pairs_layout())
