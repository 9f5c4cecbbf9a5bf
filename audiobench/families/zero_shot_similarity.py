"""Zero-shot similarity (VocSim): are recordings of the same sound event close together?

No training: every subset's pooled embeddings go, as they are, through the
(PCA × distance) grid of :func:`audiobench.metrics.zero_shot_similarity`,
which reports P@k and GSR (and optionally CSR, CS, CSCF, silhouette) with
permutation baselines and bootstrap margins. Subsets are scored separately
and macro-averaged, public and blind apart; for blind subsets only the
averages are written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from audiobench.audio import Clip
from audiobench.pooling import collate
from audiobench.task import Embedder, Task, TaskFamily, TaskScores

__all__ = ["ZeroShotSimilarityTask", "aggregate_score", "parse_main_score"]

DEFAULT_SUBSET = "default"


def parse_main_score(spec: str) -> tuple[str, str]:
    """``"pca100/spearman:gsr"`` -> (configuration, metric)."""
    config, sep, metric = spec.rpartition(":")
    if not sep or not config or not metric:
        raise ValueError(f"main score {spec!r} must read '<pca>/<distance>:<metric>'")
    return config, metric


def aggregate_score(
    aggregates: Mapping[str, Mapping[str, Any]], group: str, spec: str
) -> float | None:
    """The macro-averaged ``spec`` (``"<config>:<metric>"``) of aggregate ``group``, or None."""
    config, metric = parse_main_score(spec)
    return aggregates.get(group, {}).get("configs", {}).get(config, {}).get(metric)


def parse_config(config: str) -> tuple[int | None, str]:
    """``"pca100/spearman"`` -> (100, "spearman"); ``"raw/cosine"`` -> (None, "cosine")."""
    reduction, sep, distance = config.partition("/")
    if not sep or not (reduction == "raw" or reduction.removeprefix("pca").isdigit()):
        raise ValueError(
            f"configuration {config!r} must read 'raw/<distance>' or 'pca<N>/<distance>'"
        )
    return (None if reduction == "raw" else int(reduction.removeprefix("pca"))), distance


class ZeroShotSimilarityTask(Task):
    """Base class of VocSim-style tasks; subclasses only declare metadata and defaults."""

    family: ClassVar[TaskFamily] = TaskFamily.ZERO_SHOT_SIMILARITY
    distances: ClassVar[tuple[str, ...]] = ("cosine", "euclidean", "spearman")
    pca: ClassVar[tuple[int | None, ...]] = (None, 100)
    ks: ClassVar[tuple[int, ...]] = (1, 5)
    metrics: ClassVar[tuple[str, ...]] = ("precision", "gsr")

    def __init__(
        self,
        *,
        distances: Sequence[str] | None = None,
        pca: Sequence[int | None] | None = None,
        metrics: Sequence[str] | None = None,
        n_permutations: int = 1000,
        n_bootstrap: int = 300,
        min_class_size: int = 2,
        seed: int = 0,
        device: str | None = None,
        max_duration_percentile: float | None = None,
        min_clips_per_class: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if max_duration_percentile is not None and not 0 < max_duration_percentile <= 100:
            raise ValueError("max_duration_percentile must be in (0, 100]")
        # The paper's filters for user data (the published dataset is already filtered).
        self.filters = {
            "max_duration_percentile": max_duration_percentile,
            "min_clips_per_class": min_clips_per_class,
        }
        # The headline configuration is always evaluated, whatever grid is asked for.
        main_pca, main_distance = parse_config(parse_main_score(self.metadata.main_score)[0])
        distances = tuple(distances or self.distances)
        pcas = tuple(pca if pca is not None else self.pca)
        self.grid: dict[str, Any] = {
            "distances": distances + ((main_distance,) if main_distance not in distances else ()),
            "pca": pcas + ((main_pca,) if main_pca not in pcas else ()),
            "ks": self.ks,
            "metrics": tuple(metrics or self.metrics),
            "n_permutations": n_permutations,
            "n_bootstrap": n_bootstrap,
            "min_class_size": min_class_size,
            "seed": seed,
        }
        self.device = device

    def _groups(self, clips: Sequence[Clip]) -> dict[str, list[Clip]]:
        groups: dict[str, list[Clip]] = {}
        for clip in clips:
            groups.setdefault(clip.subset or DEFAULT_SUBSET, []).append(clip)
        order = {s: i for i, s in enumerate(self.metadata.subsets)}
        return dict(sorted(groups.items(), key=lambda kv: order.get(kv[0], len(order))))

    def _filter(
        self, clips: list[Clip], arrays: list[Any], durations: dict[str, float]
    ) -> tuple[list[Clip], list[Any], dict[str, int]]:
        """Apply the paper's optional filters within one subset, in this order."""
        keep = np.ones(len(clips), dtype=bool)
        n_long = n_small = 0
        percentile = self.filters["max_duration_percentile"]
        if percentile is not None and clips:
            secs = np.array([durations[c.id] for c in clips])
            keep &= secs <= np.percentile(secs, percentile)
            n_long = int((~keep).sum())
        minimum = self.filters["min_clips_per_class"]
        if minimum is not None:
            counts: dict[str | None, int] = {}
            for clip, k in zip(clips, keep, strict=True):
                if k:
                    counts[clip.label] = counts.get(clip.label, 0) + 1
            small = np.array([counts.get(c.label, 0) < minimum for c in clips]) & keep
            n_small = int(small.sum())
            keep &= ~small
        kept = [c for c, k in zip(clips, keep, strict=True) if k]
        kept_arrays = [a for a, k in zip(arrays, keep, strict=True) if k]
        return kept, kept_arrays, {"n_long_clips": n_long, "n_small_class_clips": n_small}

    def evaluate(self, embedder: Embedder, clips: Sequence[Clip]) -> TaskScores:
        from audiobench.metrics import zero_shot_similarity

        if not clips:
            raise ValueError(f"task {self.name}: no clips to evaluate")
        blind = set(self.metadata.blind_subsets)
        per_subset: dict[str, dict[str, Any]] = {}
        for subset, group in self._groups(clips).items():
            kept, arrays = embedder.embed(group, f"{self.name} {subset}")
            kept, arrays, dropped = self._filter(kept, arrays, embedder.durations)
            if len(kept) < 2:
                raise ValueError(
                    f"task {self.name}, subset {subset}: fewer than 2 clips left to compare"
                )
            bar = _LazyBar(embedder, f"{self.name} {subset} scoring")
            try:
                report = zero_shot_similarity(
                    collate(arrays),
                    [c.label for c in kept],
                    ids=[c.id for c in kept],
                    device=self.device,
                    progress=bar,
                    **self.grid,
                )
            finally:
                bar.close()
            per_subset[subset] = report.to_dict()
            if any(v is not None for v in self.filters.values()):
                per_subset[subset]["filtered"] = dropped
        aggregates = {}
        for name, members in (
            ("public", [s for s in per_subset if s not in blind]),
            ("blind", [s for s in per_subset if s in blind]),
        ):
            if members:
                aggregates[name] = macro_average([per_subset[s] for s in members])
                aggregates[name]["n_subsets"] = len(members)
                aggregates[name]["subsets"] = members
        headline = "public" if "public" in aggregates else "blind"
        return TaskScores(
            main_score=aggregate_score(aggregates, headline, self.metadata.main_score),
            # Blind subsets leave the machine only as averages.
            scores={s: v for s, v in per_subset.items() if s not in blind},
            aggregates=aggregates,
            details={
                "grid": {k: list(v) if isinstance(v, tuple) else v for k, v in self.grid.items()},
                "filters": self.filters,
            },
        )


class _LazyBar:
    """Opens a progress bar on the metrics engine's first report, when its total is known."""

    def __init__(self, embedder: Embedder, description: str) -> None:
        self._embedder = embedder
        self._description = description
        self._bar: Any = None

    def __call__(self, _what: str, advance: int, total: int) -> None:
        if self._bar is None:
            self._bar = self._embedder.track(self._description, total, "steps")
        self._bar.advance(advance)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def macro_average(reports: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Unweighted mean over subsets of every metric value (and its permutation baseline).

    A value missing or undefined (None) in any subset makes the average
    undefined rather than silently averaging fewer subsets.
    """
    configs: dict[str, dict[str, float | None]] = {}
    names = reports[0]["configs"].keys()
    for config in names:
        metrics = reports[0]["configs"][config].keys()
        for metric in metrics:
            for field, key in (("value", metric), ("baseline_mean", f"{metric}_baseline")):
                vals = [r["configs"].get(config, {}).get(metric, {}).get(field) for r in reports]
                if all(v is None for v in vals) and field != "value":
                    continue
                configs.setdefault(config, {})[key] = (
                    None if any(v is None for v in vals) else float(np.mean(vals))
                )
    return {"configs": configs}
