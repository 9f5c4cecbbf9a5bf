"""audiobench's own protocol for clustering: seeded mini-batch k-means, four metrics.

Every subset's pooled embeddings (one per clip) are clustered with ``MiniBatchKMeans`` with
k = the number of distinct labels, once per seed in the ``seeds`` option
(:func:`audiobench.metrics.cluster_scores`). Each run's labelling is scored with V-measure,
NMI, ARI and purity; the report holds, per subset, the mean over seeds of each metric, its
population standard deviation over seeds (``std``) and the value of every seed
(``per_seed``).
"""

from __future__ import annotations

import statistics
from typing import Annotated, Any, cast

from pydantic import Field, model_validator

from audiobench import reports as _reports
from audiobench.errors import DataError
from audiobench.evaluators.evaluator import Evaluator
from audiobench.evaluators.registry import register
from audiobench.reports import Count, Report, Signed, Summary, Unit
from audiobench.task import Embedder, Subset, Task, TaskFamily, error_in_context

__all__ = ["METRICS", "ClusteringEvaluator", "ClusteringReport", "ClusteringSummary"]

#: Metrics reported per seed: V-measure, NMI and purity in [0, 1]; ARI in [-1, 1].
METRICS = ("v_measure", "nmi", "ari", "purity")

#: Spread over seeds: at most half the metric's range.
_HalfUnit = Annotated[float, Field(ge=0.0, le=0.5)]
_HalfSigned = Annotated[float, Field(ge=0.0, le=1.0)]


class ClusteringScores(Report):
    v_measure: Unit
    nmi: Unit
    ari: Signed
    purity: Unit


class SeedSpread(Report):
    """Population standard deviation (ddof=0) of each metric over seeds."""

    v_measure: _HalfUnit
    nmi: _HalfUnit
    ari: _HalfSigned
    purity: _HalfUnit


class PerSeed(Report):
    v_measure: list[Unit]
    nmi: list[Unit]
    ari: list[Signed]
    purity: list[Unit]


class ClusteringReport(ClusteringScores):
    """One subset: mean over seeds, their spread, every seed's value, and the sizes."""

    std: SeedSpread
    per_seed: PerSeed
    n_clusters: Count
    n_samples: Count

    @model_validator(mode="after")
    def _consistent(self) -> ClusteringReport:
        """Each mean and spread is that of the seeds' values; every seed has every metric."""
        lengths = {len(getattr(self.per_seed, m)) for m in ClusteringScores.model_fields}
        if len(lengths) != 1 or 0 in lengths:
            raise ValueError(f"per_seed: every metric needs one value per seed (got {lengths})")
        for metric in ClusteringScores.model_fields:
            values = getattr(self.per_seed, metric)
            for field, given, expected in (
                (metric, getattr(self, metric), statistics.fmean(values)),
                (f"std.{metric}", getattr(self.std, metric), statistics.pstdev(values)),
            ):
                if not _reports.same_number(given, expected):
                    raise ValueError(
                        f"{field}: {given!r} is not what per_seed.{metric} gives ({expected!r})"
                    )
        if self.n_clusters > self.n_samples:
            raise ValueError(f"n_clusters ({self.n_clusters}) exceeds n_samples ({self.n_samples})")
        return self


class ClusteringSummary(Summary, ClusteringScores):
    """Unweighted mean over subsets of each metric's mean over seeds."""


@register
class ClusteringEvaluator(Evaluator):
    family = TaskFamily.CLUSTERING
    protocol = "audiobench"
    Report = ClusteringReport
    Summary = ClusteringSummary

    @classmethod
    def check_main_score(cls, task: type[Task], path: tuple[str, ...]) -> None:
        task.require_main_score(path, METRICS)

    @classmethod
    def evaluate_subset(cls, task: Task, embedder: Embedder, subset: Subset) -> _reports.Report:
        from audiobench.metrics import cluster_scores

        kept, X = embedder.embed_matrix(subset.clips, subset.label)
        if len(kept) < 2:
            raise DataError(f"{subset.where}: fewer than 2 clips left to cluster")
        o = cast(Any, task.options)
        try:
            result = cluster_scores(
                X, [c.label for c in kept], seeds=o.seeds, batch_size=o.batch_size, n_init=o.n_init
            )
        except ValueError as exc:
            raise error_in_context(exc, subset.where) from exc
        return ClusteringReport(
            **result.mean,
            std=SeedSpread(**result.std),
            per_seed=PerSeed(**{k: list(v) for k, v in result.per_seed.items()}),
            n_clusters=result.n_clusters,
            n_samples=result.n_samples,
        )

    @classmethod
    def describe(cls, task: Task) -> dict[str, Any]:
        return {
            "algorithm": "MiniBatchKMeans",
            "n_clusters": "number of distinct labels",
            **task.options.model_dump(mode="json", exclude={"protocol"}),
            "init": "k-means++",
            "std": "population (ddof=0) over seeds",
        }
