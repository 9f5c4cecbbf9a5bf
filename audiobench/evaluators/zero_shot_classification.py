"""audiobench's own protocol for zero-shot classification: cosine to class prompts, arg-max.

Each clip's class scores are the cosine similarities (float64, unit rows) of its pooled audio
embedding to the class prompts' text embeddings; the predicted class is the arg-max (ties: the
earlier class). Scores: :func:`audiobench.metrics.classification_scores` (accuracy, balanced
accuracy, macro F1, ``top_<k>_accuracy`` when there are more than k classes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, cast

from pydantic import AfterValidator, Field, model_validator

from audiobench import reports as _reports
from audiobench.evaluators.consistency import check_at_most, check_share_of, cutoffs
from audiobench.evaluators.evaluator import Evaluator
from audiobench.evaluators.registry import register
from audiobench.reports import Count, KeyedReport, Summary, Unit, metric_names
from audiobench.task import Embedder, Subset, Task, TaskFamily

if TYPE_CHECKING:
    from audiobench.families.zero_shot_classification import ZeroShotClassificationTask

__all__ = [
    "METRICS",
    "ZeroShotClassificationEvaluator",
    "ZeroShotClassificationReport",
    "ZeroShotClassificationSummary",
]

#: Metrics always reported; ``top_<k>_accuracy`` joins them when there are more than k classes.
METRICS = ("accuracy", "balanced_accuracy", "f1_macro")

TopKMetric = Annotated[str, AfterValidator(metric_names(METRICS, ("top_", "_accuracy")))]


class ZeroShotScores(KeyedReport):
    """Accuracy, balanced accuracy, macro F1, and ``top_<k>_accuracy`` where defined."""

    __pydantic_extra__: dict[TopKMetric, Unit | None] = Field(init=False)
    accuracy: Unit | None
    balanced_accuracy: Unit | None
    f1_macro: Unit | None


class ZeroShotClassificationReport(ZeroShotScores):
    """One subset: the metrics over its embedded clips, and the counts."""

    n_samples: Count
    n_classes: Count
    n_unembedded: Count

    @model_validator(mode="after")
    def _consistent(self) -> ZeroShotClassificationReport:
        """Accuracy and each top-k accuracy are shares of ``n_samples`` (a clip is right or
        wrong), top-k accuracy is at least the accuracy and grows with k, and it is reported
        only where k is below ``n_classes`` (at or above it, it is trivially 1)."""
        if self.n_classes < 2:
            raise ValueError(f"n_classes: {self.n_classes}; zero-shot needs two classes")
        extra = self.model_extra or {}
        check_share_of("accuracy", self.accuracy, self.n_samples, "n_samples")
        previous = ("accuracy", self.accuracy)
        for k, name in cutoffs(list(extra), "top_", "_accuracy"):
            if k >= self.n_classes:
                raise ValueError(
                    f"{name}: reported with n_classes = {self.n_classes} (only when k < n_classes)"
                )
            check_share_of(name, extra[name], self.n_samples, "n_samples")
            check_at_most(previous[0], previous[1], name, extra[name])
            previous = (name, extra[name])
        return self


class ZeroShotClassificationSummary(Summary, ZeroShotScores):
    """Unweighted mean over subsets of every metric (None if undefined in any subset)."""

    n_subsets: Count


@register
class ZeroShotClassificationEvaluator(Evaluator):
    family = TaskFamily.ZERO_SHOT_CLASSIFICATION
    protocol = "audiobench"
    Report = ZeroShotClassificationReport
    Summary = ZeroShotClassificationSummary

    @classmethod
    def check_main_score(cls, task: type[Task], path: tuple[str, ...]) -> None:
        top_k = cast("ZeroShotClassificationTask.Options", task.options).top_k
        task.require_main_score(path, [*METRICS, f"top_{top_k}_accuracy"])

    @classmethod
    def describe(cls, task: Task) -> dict[str, Any]:
        family = cast("ZeroShotClassificationTask", task)
        return {
            "prompt_template": family.options.prompt_template,
            "prompts": family.class_prompts(),
            "similarity": "cosine",
            "top_k": family.options.top_k,
        }

    @classmethod
    def evaluate_subset(cls, task: Task, embedder: Embedder, subset: Subset) -> _reports.Report:
        # Imported here: the families import this module (its Report), not it them.
        from audiobench.families.ranking_inputs import unit_rows
        from audiobench.metrics import classification_scores

        family = cast("ZeroShotClassificationTask", task)
        kept, audio = family.embedded_clips(embedder, subset)
        scores = classification_scores(
            [c.label for c in kept],
            unit_rows(audio, [c.id for c in kept], "audio") @ family.prompt_unit.T,
            classes=family.classes,
            top_k=family.options.top_k,
        )
        return ZeroShotClassificationReport(**scores, n_unembedded=len(subset.clips) - len(kept))
