"""Zero-shot similarity (VocSim): are recordings of the same sound event close together?

No training: every subset's pooled embeddings go, as they are, through the
(PCA × distance) grid of :func:`audiobench.vocsim.zero_shot_similarity`,
which reports P@k and GSR (and optionally CSR, CS, CSCF, silhouette) with
permutation baselines and bootstrap margins. Subsets are scored separately
and macro-averaged, public and blind apart; for blind subsets only the
averages are written. The main score reads ``"<pca>/<distance>:<metric>"``,
e.g. ``"pca100/spearman:gsr"``, inside ``configs`` of the public average.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from itertools import compress
from typing import Annotated, Any, ClassVar

import numpy as np
from pydantic import AfterValidator, Field, model_validator

from audiobench import reports as _reports
from audiobench.audio import Clip
from audiobench.errors import DataError
from audiobench.pooling import collate
from audiobench.reports import Count, Report, Signed, Summary, Unit, mean_or_none, score_at
from audiobench.task import Embedder, Subset, Task, TaskFamily, TaskOptions, TaskScores

__all__ = ["SimilarityReport", "SimilaritySummary", "ZeroShotSimilarityTask", "metric_range"]

#: Distances the engine computes (kept here so that reading options imports no numerics).
DISTANCES = ("cosine", "euclidean", "spearman")
#: The paper's optional filters of user data (options; None: off).
_FILTERS = ("max_duration_percentile", "min_clips_per_class")


def parse_config(config: str) -> tuple[int | None, str]:
    """``"pca100/spearman"`` -> (100, "spearman"); ``"raw/cosine"`` -> (None, "cosine")."""
    reduction, sep, distance = config.partition("/")
    if not sep or not (reduction == "raw" or reduction.removeprefix("pca").isdigit()):
        raise ValueError(
            f"configuration {config!r} must read 'raw/<distance>' or 'pca<N>/<distance>'"
        )
    if distance not in DISTANCES:
        raise ValueError(f"unknown distance {distance!r}; known: {', '.join(DISTANCES)}")
    return (None if reduction == "raw" else int(reduction.removeprefix("pca"))), distance


# Metric group -> range of its values: P@k, GSR, CSR, CS (a mean of 1 / (1 + F)),
# CSCF (a fraction) and purity lie in [0, 1], silhouette in [-1, 1].
_GROUP_RANGES: dict[str, tuple[float, float]] = {
    **dict.fromkeys(("precision", "gsr", "csr", "cs", "cscf"), (0.0, 1.0)),
    "silhouette": (-1.0, 1.0),
    "purity": (0.0, 1.0),
}


def metric_range(metric: str) -> tuple[float, float] | None:
    """Range of a reported metric (``"p@5"``, ``"gsr"``, ...); None for an unknown name."""
    if _reports.cutoff_of(metric, "p@") is not None:
        return _GROUP_RANGES["precision"]
    return _GROUP_RANGES.get(metric) if metric != "precision" else None


def _in(value: float | None, low: float, high: float, what: str) -> None:
    if value is not None and not low - 1e-9 <= value <= high + 1e-9:
        raise ValueError(f"{what} {value!r} is outside [{low:g}, {high:g}]")


def _config_name(name: str) -> str:
    parse_config(name)
    return name


def _metric_name(name: str) -> str:
    if metric_range(name.removesuffix("_baseline")) is None:
        raise ValueError(
            "unknown metric; known: p@<k>, "
            + ", ".join(g for g in _GROUP_RANGES if g != "precision")
        )
    return name


ConfigName = Annotated[str, AfterValidator(_config_name)]
MetricName = Annotated[str, AfterValidator(_metric_name)]


class MetricEntry(Report):
    """One metric of one configuration: value, permutation baseline, bootstrap margin."""

    value: Signed | None
    raw: Signed | None = None
    baseline_mean: Signed | None = None
    baseline_ci: tuple[Signed, Signed] | None = None
    lift: Annotated[float, Field(ge=-2.0, le=2.0)] | None = None
    p_value: Unit | None = None
    margin: Annotated[float, Field(ge=0.0, le=2.0)] | None = None
    n_evaluated: Count | None = None
    n_skipped: Count | None = None
    noise_fraction: Unit | None = None
    n_clusters: Count | None = None

    @model_validator(mode="after")
    def _ordered_interval(self) -> MetricEntry:
        ci = self.baseline_ci
        if ci is not None and ci[0] > ci[1]:
            raise ValueError(f"baseline_ci: low {ci[0]!r} > high {ci[1]!r}")
        return self


def _metric_entries(metrics: dict[str, MetricEntry]) -> dict[str, MetricEntry]:
    for name, entry in metrics.items():
        if name.endswith("_baseline"):
            raise ValueError(f"{name}: baselines sit inside each metric's entry")
        low, high = metric_range(name) or (-1.0, 1.0)
        width = high - low
        _in(entry.value, low, high, f"{name}.value")
        _in(entry.baseline_mean, low, high, f"{name}.baseline_mean")
        for bound in entry.baseline_ci or ():
            _in(bound, low, high, f"{name}.baseline_ci")
        _in(entry.lift, -width, width, f"{name}.lift")
        _in(entry.margin, 0.0, width, f"{name}.margin")
    return metrics


def _metric_means(metrics: dict[str, float | None]) -> dict[str, float | None]:
    for name, value in metrics.items():
        _in(value, *(metric_range(name.removesuffix("_baseline")) or (-1.0, 1.0)), name)
    return metrics


class Counts(Report):
    """Clip and class counts of the evaluated subset."""

    n_clips: Count
    n_labelled: Count
    n_unlabelled: Count
    n_classes: Count
    n_evaluated_classes: Count
    n_excluded_classes: Count
    n_excluded_clips: Count
    n_evaluated: Count

    @model_validator(mode="after")
    def _consistent(self) -> Counts:
        # Labelled clips are evaluated or excluded with their class; classes likewise.
        for total, parts in (
            ("n_clips", ("n_labelled", "n_unlabelled")),
            ("n_labelled", ("n_evaluated", "n_excluded_clips")),
            ("n_classes", ("n_evaluated_classes", "n_excluded_classes")),
        ):
            values = [getattr(self, name) for name in parts]
            if sum(values) != getattr(self, total):
                shown = " + ".join(f"{n} ({v})" for n, v in zip(parts, values, strict=True))
                raise ValueError(f"{shown} is not {total} ({getattr(self, total)})")
        if self.n_evaluated_classes > self.n_evaluated:
            raise ValueError(
                f"n_evaluated_classes ({self.n_evaluated_classes}) exceeds the clips in them "
                f"(n_evaluated {self.n_evaluated})"
            )
        return self


class Settings(Report):
    """The grid the subset was scored with."""

    distances: list[str]
    pca: list[Annotated[int, Field(ge=1)] | None]
    ks: list[Annotated[int, Field(ge=1)]]
    metrics: list[str]
    n_permutations: Count
    n_bootstrap: Count
    min_class_size: Count
    seed: int


class ConfigInfo(Report):
    pca_components: Annotated[int, Field(ge=1)] | None
    dim: Count
    distance: str


class Filtered(Report):
    """Clips dropped by the paper's filters for user data."""

    n_long_clips: Count
    n_small_class_clips: Count


def _nearest(share: float, whole: int) -> float:
    """The fraction ``m / whole`` closest to ``share`` (m a whole number)."""
    return round(share * whole) / whole


class SimilarityReport(Report):
    """One subset: the metrics engine's report (configuration -> metric -> entry)."""

    counts: Counts
    settings: Settings
    config_info: dict[str, ConfigInfo]
    configs: dict[
        ConfigName, Annotated[dict[MetricName, MetricEntry], AfterValidator(_metric_entries)]
    ]
    filtered: Filtered | None = None

    @model_validator(mode="after")
    def _consistent(self) -> SimilarityReport:
        """Each metric counts at most the subset's clips; derived values follow their parts."""
        for config, metrics in self.configs.items():
            for name, entry in metrics.items():
                where = f"configs.{config}.{name}"
                counted = (entry.n_evaluated or 0) + (entry.n_skipped or 0)
                if counted > self.counts.n_clips:
                    raise ValueError(
                        f"{where}: n_evaluated + n_skipped ({counted}) exceed the subset's "
                        f"n_clips ({self.counts.n_clips})"
                    )
                # GSR and CSR are (raw + 1) / 2; the lift is the value less the null's mean.
                derived: list[tuple[str, float | None, float | None]] = []
                if entry.value is not None and entry.baseline_mean is not None:
                    derived.append(("lift", entry.lift, entry.value - entry.baseline_mean))
                if name in ("gsr", "csr") and entry.raw is not None:
                    derived.append(("value", entry.value, (entry.raw + 1.0) / 2.0))
                # P@k is a share of n * k neighbours; a p-value (1 + m) / (1 + permutations).
                k = _reports.cutoff_of(name, "p@")
                if k is not None and entry.value is not None and entry.n_evaluated:
                    derived.append(
                        ("value", entry.value, _nearest(entry.value, entry.n_evaluated * k))
                    )
                n_null = self.settings.n_permutations
                if entry.p_value is not None and n_null:
                    # At least 1 / (1 + permutations): the observed labelling counts itself.
                    least = 1.0 / (n_null + 1)
                    nearest = max(least, _nearest(entry.p_value, n_null + 1))
                    derived.append(("p_value", entry.p_value, nearest))
                for field, given, expected in derived:
                    if given is None or expected is None:
                        continue
                    if not _reports.same_number(given, expected):
                        raise ValueError(
                            f"{where}.{field}: {given!r} does not follow from the entry's other "
                            f"numbers ({expected!r})"
                        )
        return self


class SimilaritySummary(Summary):
    """Macro average over subsets: configuration -> metric (and ``<metric>_baseline``)."""

    configs: dict[
        ConfigName, Annotated[dict[MetricName, float | None], AfterValidator(_metric_means)]
    ]
    n_subsets: Count

    @model_validator(mode="after")
    def _counted(self) -> SimilaritySummary:
        if self.n_subsets != len(self.subsets):
            raise ValueError(f"n_subsets is {self.n_subsets} but {len(self.subsets)} listed")
        return self


class ZeroShotSimilarityTask(Task):
    """Base class of VocSim-style tasks; subclasses only declare metadata and defaults."""

    family: ClassVar[TaskFamily] = TaskFamily.ZERO_SHOT_SIMILARITY
    Report = SimilarityReport
    Summary = SimilaritySummary
    public_group = "public"
    always_aggregate = True
    score_root = ("configs",)
    needs_labels = False  # unlabelled clips are counted and left out of the queries

    class Options(TaskOptions):
        distances: tuple[str, ...] = Field(DISTANCES, min_length=1)
        pca: tuple[Annotated[int, Field(ge=1)] | None, ...] = Field((None, 100), min_length=1)
        ks: tuple[Annotated[int, Field(ge=1)], ...] = (1, 5)
        metrics: tuple[str, ...] = Field(("precision", "gsr"), min_length=1)
        n_permutations: int = Field(1000, ge=0, description="Label permutations (baseline).")
        n_bootstrap: int = Field(300, ge=0, description="Bootstrap resamples (margin).")
        min_class_size: int = Field(2, ge=1)
        seed: int = 0
        max_duration_percentile: float | None = Field(
            None, gt=0, le=100, description="Paper filter: drop clips above this percentile."
        )
        min_clips_per_class: int | None = Field(
            None, ge=1, description="Paper filter: then drop classes with fewer clips."
        )

    options = Options()

    @classmethod
    def check_main_score(cls, path: tuple[str, ...]) -> None:
        if len(path) != 2:
            raise ValueError(
                f"task {cls.metadata.name}: main score must read '<pca>/<distance>:<metric>'"
            )
        parse_config(path[0])
        if metric_range(path[1]) is None:
            raise ValueError(f"task {cls.metadata.name}: unknown metric {path[1]!r}")

    def grid(self) -> dict[str, Any]:
        """The engine's arguments; the headline configuration is always evaluated."""
        o = self.options
        main_pca, main_distance = parse_config(
            _reports.parse_score_path(self.metadata.main_score)[0]
        )
        return {
            "distances": o.distances
            + ((main_distance,) if main_distance not in o.distances else ()),
            "pca": o.pca + ((main_pca,) if main_pca not in o.pca else ()),
            # The family's own options only: a task's Options may add more (folder columns).
            **o.model_dump(
                include=set(ZeroShotSimilarityTask.Options.model_fields),
                exclude={"distances", "pca", *_FILTERS},
            ),
        }

    def _filter(
        self, clips: list[Clip], arrays: list[Any], durations: dict[str, float]
    ) -> tuple[list[Clip], list[Any], Filtered]:
        """Apply the paper's optional filters within one subset, in this order."""
        if len(arrays) != len(clips):  # compress would silently drop the tail
            raise RuntimeError(f"{len(arrays)} embeddings for {len(clips)} clips")
        o = self.options
        keep = np.ones(len(clips), dtype=bool)
        if o.max_duration_percentile is not None and clips:
            secs = np.array([durations[c.id] for c in clips])
            keep &= secs <= np.percentile(secs, o.max_duration_percentile)
        n_long = int((~keep).sum())
        if o.min_clips_per_class is not None:
            counts = Counter(c.label for c in compress(clips, keep))
            keep &= np.array([counts[c.label] >= o.min_clips_per_class for c in clips], bool)
        filtered = Filtered(n_long_clips=n_long, n_small_class_clips=int((~keep).sum()) - n_long)
        return list(compress(clips, keep)), list(compress(arrays, keep)), filtered

    def evaluate_subset(self, embedder: Embedder, subset: Subset) -> SimilarityReport:
        from audiobench.vocsim import zero_shot_similarity

        kept, arrays = embedder.embed(subset.clips, f"{self.name} {subset.name}")
        kept, arrays, dropped = self._filter(kept, arrays, embedder.durations)
        if len(kept) < 2:
            raise DataError(f"{subset.where}: fewer than 2 clips left to compare")
        bars: list[Any] = []  # opened on the engine's first report, when its total is known

        def progress(_what: str, advance: int, total: int) -> None:
            if not bars:
                bars.append(embedder.track(f"{self.name} {subset.name} scoring", total, "steps"))
            bars[0].advance(advance)

        _refuse_padded_constants(arrays, [c.id for c in kept])
        try:
            report = zero_shot_similarity(
                collate(arrays),
                [c.label for c in kept],
                ids=[c.id for c in kept],
                device=self.device,
                progress=progress,
                **self.grid(),
            )
        finally:
            for bar in bars:
                bar.close()
        data = report.to_dict()
        if any(getattr(self.options, f) is not None for f in _FILTERS):
            data["filtered"] = dropped.to_json()
        return SimilarityReport.model_validate(data)

    def summarize(self, reports: Mapping[str, _reports.Report]) -> SimilaritySummary:
        """Unweighted mean over subsets of every metric value and its permutation baseline.

        A value missing or undefined (None) in any subset makes the average
        undefined rather than silently averaging fewer subsets.
        """
        typed = [r for r in reports.values() if isinstance(r, SimilarityReport)]
        configs: dict[str, dict[str, float | None]] = {}
        for config, metrics in typed[0].configs.items():
            means = configs[config] = {}
            for metric in metrics:
                means[metric] = mean_or_none(score_at(r.configs, (config, metric)) for r in typed)
                baselines = [score_at(r.configs, (config, metric, "baseline_mean")) for r in typed]
                if any(b is not None for b in baselines):
                    means[f"{metric}_baseline"] = mean_or_none(baselines)
        return SimilaritySummary(configs=configs, n_subsets=len(typed), subsets=list(reports))

    def highlights(self, scores: TaskScores) -> list[str]:
        """P@1, P@5 and GSR at the headline configuration, beside their permutation baselines.

        The main score alone can rank a near-chance encoder high on few large
        classes; the lift over the label-permutation baseline shows what is learnt.
        """
        config = _reports.parse_score_path(self.metadata.main_score)[0]
        lines = []
        for group, summary in scores.aggregates.items():
            metrics = summary.get("configs", {}).get(config, {})
            for metric in ("p@1", "p@5", "gsr"):
                value, baseline = metrics.get(metric), metrics.get(f"{metric}_baseline")
                if value is None:
                    continue
                line = f"{group} {config} {metric} = {value:.4f}"
                if baseline is not None:
                    line += f" (permutation baseline {baseline:.4f}, lift {value - baseline:+.4f})"
                lines.append(line)
        return lines or super().highlights(scores)

    def run_facts(self) -> dict[str, Any]:
        grid = {k: list(v) if isinstance(v, tuple) else v for k, v in self.grid().items()}
        return {"grid": grid, "filters": self.options.model_dump(include=set(_FILTERS))}


def _refuse_padded_constants(arrays: list[Any], ids: list[str]) -> None:
    """Refuse a constant embedding (silence) that zero padding would make look informative.

    Unpadded, a constant vector is refused by the distances that cannot compare it (Spearman);
    padded to the longest clip it is no longer constant, and would be scored on its length.
    """
    from audiobench.metrics.validation import invalid_clips_error

    longest = max(a.shape[0] for a in arrays)
    bad = [i for i, a in enumerate(arrays) if a.shape[0] < longest and a.size and np.ptp(a) == 0]
    if bad:
        raise invalid_clips_error(
            "constant embeddings (silent audio?), which zero padding to the longest clip "
            "would score by their length alone",
            bad,
            ids,
        )
