"""audiobench's own protocol for pair classification: four similarities, best thresholds.

Each pair of a subset (:meth:`~audiobench.families.PairClassificationTask.embed_pairs`) is
scored by four similarities of its two pooled embeddings: cosine, dot product, and the negated
euclidean and manhattan distances
(:func:`audiobench.metrics.pair_classification.pair_classification_scores`). For each:
``accuracy`` and ``f1`` (with its ``precision`` and ``recall``) at their best threshold, the
thresholds, and ``ap`` (average precision); then ``max_<metric>`` over the four functions.
``main_score`` is ``max_ap`` (or ``<function>:<metric>``, e.g. ``cosine:ap``). With several
subsets, ``aggregates["mean"]`` holds the unweighted mean of the ``max_*`` values and of each
function's metrics (thresholds are not averaged).
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import product
from typing import TYPE_CHECKING, Any, cast

from pydantic import Field, model_validator

from audiobench import reports as _reports
from audiobench.evaluators.evaluator import Evaluator
from audiobench.evaluators.registry import register
from audiobench.metrics.pair_classification import PAIR_METRICS as METRICS
from audiobench.metrics.pair_classification import PAIR_SIMILARITIES as SIMILARITIES
from audiobench.metrics.pair_classification import Precision
from audiobench.reports import Count, Report, Summary, Unit, finite_or_none, mean_or_none
from audiobench.task import Embedder, Subset, Task, TaskFamily, error_in_context

if TYPE_CHECKING:
    from audiobench.families.pair_classification import EmbeddedPairs, PairClassificationTask

__all__ = [
    "PairClassificationEvaluator",
    "PairClassificationReport",
    "PairClassificationSummary",
    "SimilarityScores",
    "similarity_scores",
]


def similarity_scores(
    pairs: EmbeddedPairs, where: str, precision: Precision = "float64"
) -> dict[str, float]:
    """:func:`~audiobench.metrics.pair_classification.pair_classification_scores` of
    ``pairs`` (``precision="float32"``: MTEB's arithmetic); an error names ``where``."""
    from audiobench.metrics.pair_classification import pair_classification_scores

    try:
        return pair_classification_scores(
            pairs.first, pairs.second, pairs.labels, precision=precision
        )
    except ValueError as exc:
        raise error_in_context(exc, where) from exc


class SimilarityScores(Report):
    """One similarity function's metrics at its best thresholds."""

    accuracy: Unit
    accuracy_threshold: float | None = Field(description="None when every score is tied.")
    f1: Unit
    f1_threshold: float | None
    precision: Unit
    recall: Unit
    ap: Unit


class PairClassificationReport(Report):
    """One subset: the best value of each metric over the similarity functions, every
    function's metrics, and the counts."""

    max_accuracy: Unit
    max_f1: Unit
    max_precision: Unit
    max_recall: Unit
    max_ap: Unit
    cosine: SimilarityScores
    dot: SimilarityScores
    euclidean: SimilarityScores
    manhattan: SimilarityScores
    n_pairs: Count
    n_positive: Count
    n_pairs_unembedded: Count
    n_clips: Count

    @model_validator(mode="after")
    def _consistent(self) -> PairClassificationReport:
        """Each ``max_<metric>`` is the best function's value; positives are among the pairs."""
        for metric in METRICS:
            given = getattr(self, f"max_{metric}")
            best = max(getattr(getattr(self, name), metric) for name in SIMILARITIES)
            if not _reports.same_number(given, best):
                raise ValueError(
                    f"max_{metric}: {given!r} is not the best function's {metric} ({best!r})"
                )
        if self.n_positive > self.n_pairs:
            raise ValueError(f"n_positive ({self.n_positive}) exceeds n_pairs ({self.n_pairs})")
        return self


class PairClassificationSummary(Summary):
    """Unweighted mean over subsets of the maxima and of each function's metrics."""

    max_accuracy: Unit | None
    max_f1: Unit | None
    max_precision: Unit | None
    max_recall: Unit | None
    max_ap: Unit | None
    cosine: dict[str, Unit | None]
    dot: dict[str, Unit | None]
    euclidean: dict[str, Unit | None]
    manhattan: dict[str, Unit | None]
    n_subsets: Count


@register
class PairClassificationEvaluator(Evaluator):
    family = TaskFamily.PAIR_CLASSIFICATION
    protocol = "audiobench"
    Report = PairClassificationReport
    Summary = PairClassificationSummary

    @classmethod
    def check_main_score(cls, task: type[Task], path: tuple[str, ...]) -> None:
        if path not in {(f"max_{m}",) for m in METRICS} | set(product(SIMILARITIES, METRICS)):
            raise ValueError(
                f"task {task.metadata.name}: main score {':'.join(path)!r} is not "
                f"'max_<metric>' or '<similarity>:<metric>' (similarities {list(SIMILARITIES)}, "
                f"metrics {list(METRICS)})"
            )

    @classmethod
    def describe(cls, task: Task) -> dict[str, Any]:
        return {
            **_family(task).pairs_layout(),
            "similarities": list(SIMILARITIES),
            "thresholds": "best accuracy and best F1, between distinct scores",
            "ap": "average precision over the distinct scores",
        }

    @classmethod
    def evaluate_subset(cls, task: Task, embedder: Embedder, subset: Subset) -> _reports.Report:
        pairs = _family(task).embed_pairs(embedder, subset)
        scores = similarity_scores(pairs, subset.where)
        fields = SimilarityScores.model_fields
        return PairClassificationReport.model_validate(
            {
                **{f"max_{m}": scores[f"max_{m}"] for m in METRICS},
                **{
                    n: {k: finite_or_none(scores[f"{n}_{k}"]) for k in fields} for n in SIMILARITIES
                },
                "n_pairs": pairs.n_scored,
                "n_positive": int(pairs.labels.sum()),
                "n_pairs_unembedded": pairs.n_pairs - pairs.n_scored,
                "n_clips": pairs.n_clips,
            }
        )

    @classmethod
    def summarize(cls, task: Task, reports: Mapping[str, _reports.Report]) -> _reports.Summary:
        functions = {
            name: {
                m: mean_or_none(_reports.score_at(r, (name, m)) for r in reports.values())
                for m in METRICS
            }
            for name in SIMILARITIES
        }
        return _reports.mean_summary(PairClassificationSummary, reports, **functions)


def _family(task: Task) -> PairClassificationTask:
    """``task`` as what it is: a task of the pair classification family."""
    return cast("PairClassificationTask", task)
