"""Clustering of frozen embeddings, scored against the labels.

Every subset's pooled embeddings (one per clip, collated as in the other families) are
clustered with ``MiniBatchKMeans`` with k = the number of distinct labels, once per seed in
``seeds`` (:func:`audiobench.metrics.cluster_scores`). Each run's labelling is scored with
V-measure, NMI, ARI and purity; the result holds, per subset, the mean over seeds of each
metric, its population standard deviation (``std``) and the value of every seed
(``per_seed``). ``main_score`` names one metric (``"v_measure"``, as MTEB); with several
subsets it is their unweighted mean (``aggregates["mean"]``).

Data contract: every clip carries one ``label``; an unlabelled clip is an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from audiobench.audio import Clip
from audiobench.families.classification import error_in_context
from audiobench.families.score_checks import count_problem, number_problem
from audiobench.pooling import collate
from audiobench.task import DEFAULT_SUBSET, Embedder, Task, TaskFamily, TaskScores

__all__ = ["METRIC_RANGES", "ClusteringTask"]

#: Range of each reported metric: V-measure, NMI and purity in [0, 1]; ARI in [-1, 1]
#: (its attainable minimum is -0.5, the wider bound leaves room for rounding conventions).
METRIC_RANGES: dict[str, tuple[float, float]] = {
    "v_measure": (0.0, 1.0),
    "nmi": (0.0, 1.0),
    "ari": (-1.0, 1.0),
    "purity": (0.0, 1.0),
}
_COUNTS = ("n_clusters", "n_samples")


class ClusteringTask(Task):
    """Base class of clustering tasks; subclasses declare metadata (and seeds)."""

    family: ClassVar[TaskFamily] = TaskFamily.CLUSTERING
    #: ``random_state`` of each MiniBatchKMeans run.
    seeds: ClassVar[tuple[int, ...]] = (0, 1, 2, 3, 4)
    batch_size: ClassVar[int] = 1024
    n_init: ClassVar[int] = 1

    def __init__(self, *, seeds: Sequence[int] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.run_seeds = tuple(seeds) if seeds is not None else self.seeds
        if not self.run_seeds:
            raise ValueError(f"task {self.name}: seeds must not be empty")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        meta = cls.__dict__.get("metadata")
        if meta is not None and meta.main_score not in METRIC_RANGES:
            raise ValueError(
                f"task {meta.name}: main score {meta.main_score!r} is not one of "
                f"{list(METRIC_RANGES)}"
            )

    @classmethod
    def score_problems(cls, scores: dict[str, Any]) -> list[str]:
        """Unknown subsets and metrics, and values outside their range.

        Takes a result's ``scores`` (one entry per subset, ``default`` without subsets) or
        its ``aggregates`` (``mean`` over subsets). Ranges: :data:`METRIC_RANGES`; a
        standard deviation lies in [0, half the range]; counts are non-negative integers.
        """
        declared = cls.metadata.subsets or (DEFAULT_SUBSET,)
        problems: list[str] = []
        for key, entry in scores.items():
            if not isinstance(entry, dict):
                problems.append(f"{key}: must be a mapping of metric names")
                continue
            if key == "mean" and key not in declared:
                problems += _mean_problems(key, entry, declared)
                continue
            if key not in declared:
                problems.append(f"{key}: unknown subset; the task declares {', '.join(declared)}")
            problems += _subset_problems(key, entry)
        return problems

    def evaluate(self, embedder: Embedder, clips: Sequence[Clip]) -> TaskScores:
        from audiobench.metrics import cluster_scores

        if not clips:
            raise ValueError(f"task {self.name}: no clips to evaluate")
        per_subset: dict[str, dict[str, Any]] = {}
        for subset, group in self.clips_by_subset(clips).items():
            where = f"task {self.name}" + (f", subset {subset}" if subset != DEFAULT_SUBSET else "")
            unlabelled = [c.id for c in group if c.label is None]
            if unlabelled:
                from audiobench.metrics.validation import describe_clips

                raise ValueError(
                    f"{where}: {len(unlabelled)} clip(s) have no label: "
                    f"{describe_clips(unlabelled)}"
                )
            label = self.name + (f" {subset}" if subset != DEFAULT_SUBSET else "")
            kept, arrays = embedder.embed(group, label)
            if len(kept) < 2:
                raise ValueError(f"{where}: fewer than 2 clips left to cluster")
            try:
                result = cluster_scores(
                    collate(arrays),
                    [c.label for c in kept],
                    seeds=self.run_seeds,
                    batch_size=self.batch_size,
                    n_init=self.n_init,
                )
            except ValueError as exc:
                raise error_in_context(exc, where) from exc
            per_subset[subset] = {
                **result.mean,
                "std": result.std,
                "per_seed": {k: list(v) for k, v in result.per_seed.items()},
                "n_clusters": result.n_clusters,
                "n_samples": result.n_samples,
            }
        metric = self.metadata.main_score
        aggregates: dict[str, dict[str, Any]] = {}
        if len(per_subset) > 1:
            aggregates["mean"] = {
                "subsets": list(per_subset),
                **{m: float(np.mean([s[m] for s in per_subset.values()])) for m in METRIC_RANGES},
            }
            main = aggregates["mean"][metric]
        else:
            main = next(iter(per_subset.values()))[metric]
        return TaskScores(
            main_score=main,
            scores=per_subset,
            aggregates=aggregates,
            details={
                "algorithm": "MiniBatchKMeans",
                "n_clusters": "number of distinct labels",
                "seeds": list(self.run_seeds),
                "batch_size": self.batch_size,
                "n_init": self.n_init,
                "init": "k-means++",
                "std": "population (ddof=0) over seeds",
            },
        )


def _subset_problems(key: str, entry: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    for name, value in entry.items():
        here = f"{key}.{name}"
        if name in METRIC_RANGES:
            problems += number_problem(here, value, *METRIC_RANGES[name])
        elif name in _COUNTS:
            problems += count_problem(here, value)
        elif name == "std":

            def spread(where: str, value: Any, low: float, high: float) -> list[str]:
                return number_problem(where, value, 0.0, (high - low) / 2)

            problems += _per_metric(here, value, spread)
        elif name == "per_seed":

            def check(where: str, values: Any, low: float, high: float) -> list[str]:
                if not isinstance(values, list):
                    return [f"{where}: must be a list of per-seed values"]
                return [
                    p
                    for i, v in enumerate(values)
                    for p in number_problem(f"{where}[{i}]", v, low, high)
                ]

            problems += _per_metric(here, value, check)
        else:
            problems.append(
                f"{here}: unknown field; known: {', '.join([*METRIC_RANGES, 'std', 'per_seed'])}"
            )
    return problems


def _per_metric(where: str, mapping: Any, check: Any) -> list[str]:
    if not isinstance(mapping, dict):
        return [f"{where}: must be a mapping of metric names"]
    problems: list[str] = []
    for metric, value in mapping.items():
        if metric not in METRIC_RANGES:
            problems.append(f"{where}.{metric}: unknown metric")
        else:
            problems += check(f"{where}.{metric}", value, *METRIC_RANGES[metric])
    return problems


def _mean_problems(key: str, entry: dict[str, Any], declared: Sequence[str]) -> list[str]:
    problems: list[str] = []
    subsets = entry.get("subsets")
    if not isinstance(subsets, list) or not all(s in declared for s in subsets):
        problems.append(f"{key}.subsets: must list declared subsets")
    for name, value in entry.items():
        if name == "subsets":
            continue
        if name in METRIC_RANGES:
            problems += number_problem(f"{key}.{name}", value, *METRIC_RANGES[name])
        else:
            problems.append(f"{key}.{name}: unknown metric")
    return problems
