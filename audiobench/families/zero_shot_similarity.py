"""Zero-shot similarity (VocSim): are recordings of the same sound event close together?

No training: every subset's pooled embeddings go, as they are, through the
(PCA × distance) grid of :func:`audiobench.metrics.zero_shot_similarity`,
which reports P@k and GSR (and optionally CSR, CS, CSCF, silhouette) with
permutation baselines and bootstrap margins. Subsets are scored separately
and macro-averaged, public and blind apart; for blind subsets only the
averages are written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from audiobench.audio import Clip
from audiobench.families.score_checks import count_problem, number_problem, show
from audiobench.pooling import collate
from audiobench.task import DEFAULT_SUBSET, Embedder, Task, TaskFamily, TaskMetadata, TaskScores

__all__ = ["ZeroShotSimilarityTask", "aggregate_score", "metric_range", "parse_main_score"]


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

    @classmethod
    def score_problems(cls, scores: dict[str, Any]) -> list[str]:
        """Unknown subsets, configurations and metrics, and values outside their range.

        Takes either a result's ``scores`` (one metrics-engine report per
        subset) or its ``aggregates`` (``public``/``blind`` macro averages).
        Blind subsets may appear only inside the averages. Ranges follow
        VOCSIM_PROTOCOL.md; see :func:`metric_range`.
        """
        problems: list[str] = []
        for key, entry in scores.items():
            if key in AGGREGATE_GROUPS and key not in cls.metadata.subsets:
                problems += _aggregate_problems(cls.metadata, key, entry)
            else:
                problems += _subset_problems(cls.metadata, key, entry)
        return problems

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
        for subset, group in self.clips_by_subset(clips).items():
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


AGGREGATE_GROUPS = ("public", "blind")

# Metric group (audiobench.metrics.METRIC_GROUPS) -> range of its values, from
# VOCSIM_PROTOCOL.md: P@k, GSR, CSR, CS (a mean of 1 / (1 + F)), CSCF (a fraction)
# and purity lie in [0, 1], silhouette in [-1, 1].
_GROUP_RANGES: dict[str, tuple[float, float]] = {
    "precision": (0.0, 1.0),
    "gsr": (0.0, 1.0),
    "csr": (0.0, 1.0),
    "cs": (0.0, 1.0),
    "cscf": (0.0, 1.0),
    "silhouette": (-1.0, 1.0),
    "purity": (0.0, 1.0),
}
# Floating-point slack on range ends, far below any reported precision.
_SUBSET_FIELDS = frozenset({"counts", "settings", "config_info", "configs", "filtered"})
_AGGREGATE_FIELDS = frozenset({"configs", "n_subsets", "subsets"})


def metric_range(metric: str) -> tuple[float, float] | None:
    """Range of a reported metric (``"p@5"``, ``"gsr"``, ...); None for an unknown name."""
    from audiobench.metrics import METRIC_GROUPS

    k = metric.removeprefix("p@")
    if k != metric:
        group = "precision" if k.isdigit() and int(k) >= 1 else ""
    else:
        group = metric if metric != "precision" else ""
    return _GROUP_RANGES.get(group) if group in METRIC_GROUPS else None


def _config_problem(where: str, config: str) -> list[str]:
    from audiobench.metrics import DISTANCE_METRICS

    try:
        _, distance = parse_config(config)
    except ValueError as exc:
        return [f"{where}: unknown configuration: {exc}"]
    if distance not in DISTANCE_METRICS:
        return [f"{where}: unknown distance {distance!r}; known: {', '.join(DISTANCE_METRICS)}"]
    return []


def _unknown_fields(where: str, entry: Mapping[str, Any], known: frozenset[str]) -> list[str]:
    return [f"{where}.{key}: unknown field" for key in entry if key not in known]


def _summary_problems(where: str, summary: Any, low: float, high: float) -> list[str]:
    """One subset's entry for one metric: value, calibration and counts."""
    if not isinstance(summary, dict):
        return [f"{where}: must be a mapping with a 'value', not {show(summary)}"]
    if "value" not in summary:
        return [f"{where}.value: missing field"]
    width = high - low
    problems = number_problem(f"{where}.value", summary["value"], low, high)
    problems += number_problem(f"{where}.baseline_mean", summary.get("baseline_mean"), low, high)
    problems += number_problem(f"{where}.raw", summary.get("raw"), -1.0, 1.0)
    problems += number_problem(f"{where}.lift", summary.get("lift"), -width, width)
    problems += number_problem(f"{where}.margin", summary.get("margin"), 0.0, width)
    problems += number_problem(f"{where}.p_value", summary.get("p_value"), 0.0, 1.0)
    problems += number_problem(f"{where}.noise_fraction", summary.get("noise_fraction"), 0, 1)
    for field in ("n_evaluated", "n_skipped", "n_clusters"):
        problems += count_problem(f"{where}.{field}", summary.get(field), nullable=True)
    interval = summary.get("baseline_ci")
    if interval is not None:
        if not (isinstance(interval, list) and len(interval) == 2):
            problems.append(f"{where}.baseline_ci: must be [low, high] or null")
        else:
            for i, bound in enumerate(interval):
                problems += number_problem(f"{where}.baseline_ci[{i}]", bound, low, high)
            if not problems and None not in interval and interval[0] > interval[1]:
                problems.append(f"{where}.baseline_ci: low {interval[0]!r} > high {interval[1]!r}")
    return problems


def _configs_problems(
    where: str, configs: Any, check: Callable[[str, str, Any, float, float], list[str]]
) -> list[str]:
    if not isinstance(configs, dict):
        return [f"{where}: missing field or not a mapping"]
    problems: list[str] = []
    for config, metrics in configs.items():
        here = f"{where}.{config}"
        problems += _config_problem(here, config)
        if not isinstance(metrics, dict):
            problems.append(f"{here}: must be a mapping of metric names")
            continue
        for metric, summary in metrics.items():
            bounds = metric_range(metric.removesuffix("_baseline"))
            if bounds is None:
                problems.append(
                    f"{here}.{metric}: unknown metric; known: p@<k>, "
                    + ", ".join(g for g in _GROUP_RANGES if g != "precision")
                )
                continue
            problems += check(f"{here}.{metric}", metric, summary, *bounds)
    return problems


def _subset_problems(meta: TaskMetadata, key: str, entry: dict[str, Any]) -> list[str]:
    declared = meta.subsets or (DEFAULT_SUBSET,)
    problems: list[str] = []
    if key in meta.blind_subsets:
        problems.append(f"{key}: blind subset: only its public/blind averages may be written")
    elif key not in declared:
        problems.append(f"{key}: unknown subset; the task declares {', '.join(declared)}")
    problems += _unknown_fields(key, entry, _SUBSET_FIELDS)

    def check(where: str, metric: str, summary: Any, low: float, high: float) -> list[str]:
        if metric.endswith("_baseline"):
            return [f"{where}: unknown metric (baselines sit inside each metric's entry)"]
        return _summary_problems(where, summary, low, high)

    return problems + _configs_problems(f"{key}.configs", entry.get("configs"), check)


def _aggregate_problems(meta: TaskMetadata, key: str, entry: dict[str, Any]) -> list[str]:
    problems = _unknown_fields(key, entry, _AGGREGATE_FIELDS)
    for field in ("n_subsets", "subsets"):
        if field not in entry:
            problems.append(f"{key}.{field}: missing field")
    members = entry.get("subsets", [])
    n_subsets = entry.get("n_subsets", len(members) if isinstance(members, list) else 0)
    if not isinstance(members, list) or not all(isinstance(m, str) for m in members):
        problems.append(f"{key}.subsets: must be a list of subset names")
    elif n_subsets != len(members):
        problems.append(f"{key}.n_subsets: {show(n_subsets)} but {len(members)} subsets listed")
    else:
        blind = key == "blind"
        for i, member in enumerate(members):
            if member not in meta.subsets and not (member == DEFAULT_SUBSET and not meta.subsets):
                problems.append(f"{key}.subsets[{i}]: unknown subset {show(member)}")
            elif (member in meta.blind_subsets) != blind:
                problems.append(
                    f"{key}.subsets[{i}]: {member} is a {'public' if blind else 'blind'} subset"
                )

    def check(where: str, _metric: str, value: Any, low: float, high: float) -> list[str]:
        return number_problem(where, value, low, high)

    return problems + _configs_problems(f"{key}.configs", entry.get("configs"), check)


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
