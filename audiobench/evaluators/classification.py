"""audiobench's own protocol for classification: probes trained on frozen embeddings.

The task names its probes (:data:`audiobench.probes.PROBE_NAMES`): vector probes (``linear``,
``knn``, ``mlp``) train on one pooled embedding per clip, token probes (``attentive``,
``protobin``) on the encoder's token map (:mod:`audiobench.probes.tokens`: its unpooled frame
sequence without the tokens that do not stand for the audio, as the encoder declares them).
Token probes need an encoder whose output kind is ``sequence``; for any other encoder they
are skipped and the reason is written into the scores (``skipped_probes``). A subset's pooled
vectors are collated together (zero-padded to the longest, :func:`audiobench.pooling.collate`)
so that every split shares one feature space. All probes see the same clips: a clip left out
of the unpooled pass (``--on-error skip``) leaves the vector probes too, and is counted
(``details["splits"][subset]["n_dropped_unpooled"]``). Every probe is fitted on every split
the task gives (:meth:`~audiobench.families.ClassificationTask.evaluation_splits`) and tested
there (:func:`audiobench.probes.fitting.fit_probes`).

Scores. ``main_score`` reads ``"<probe>:<metric>"`` (``"linear:accuracy"``,
``"linear:map"``): the metric of the task's primary probe, averaged over the splits (and,
for tasks with several subsets, over subsets, in ``aggregates["mean"]``). The primary
probe always runs. Multi-class metrics: ``accuracy``, ``balanced_accuracy``, ``f1_macro``,
``top_5_accuracy`` (only with more than 5 classes); multi-label: ``map`` (macro mAP),
``f1_micro``, ``f1_macro`` at threshold 0.5. Per probe, ``scores[subset][probe]`` holds
the mean over splits, their ``std`` (population standard deviation across folds, i.e. splits;
not across seeds), and every split's own report under ``per_split``. ``details`` records the
protocol, each split's sizes, and each fitted probe's configuration (fixed grid, selection
scores, chosen values, seed).

Seeds. A token probe trained with several seeds (``token_seeds``; 5 under the paper recipe)
is fitted once per seed on every split; its metrics are the mean over seeds of each seed's
mean over splits, ``per_seed`` holds those per-seed means and ``seed_std`` their population
standard deviation (the "mean ± std over seeds" of a paper), ``per_split`` the mean over
seeds of each split, ``std`` the spread of those across folds. The first seed chooses the
hyper-parameters; the other seeds reuse its choice.

Token recipe (option ``token_recipe``). ``"default"`` trains the token probes with the
family's shared neural recipe (:mod:`audiobench.probes.neural`): standardised tokens,
cross-entropy or binary cross-entropy, batches of 32, AdamW with a cosine schedule and early
stopping on the validation loss when there is a validation split, fixed learning rate and
weight decay, a 128-wide attentive probe, one seed. ``"paper"`` follows the probing paper
(Rauch et al., "Unmute the Patch Tokens", ICLR 2026; :mod:`audiobench.probes.paper`): raw
tokens (protobin's prototypes compared with the frozen tokens themselves, no per-feature
centring), the asymmetric loss for multi-label tasks, batches of 128, 30 epochs of AdamW with
a cosine schedule and no early stopping, a small learning-rate × weight-decay grid chosen on
validation mAP (accuracy for multi-class tasks), the attentive probe at the model's full
width, 5 seeds. The default stays because it is cheaper (one fit per split, no grid) and
puts every neural probe of the family, the MLP included, under one recipe, so that their
differences come from the architecture; the paper recipe is the one to use to compare with
the paper's figures. Either way the token map is the same. Under the paper recipe,
``token_search="paper"`` replaces the grid with the paper's own search (``token_trials``
trials, Sobol then TPE under successive halving, a validation fold designated a priori on
cross-validated tasks; :mod:`audiobench.probes.search`, needs ``audiobench[search]``); the
probe's configuration records every trial and the choice.

With ``grouped``, every choice of hyper-parameters inside a training part (inner folds, a
held-out part) keeps each group on one side too, so a probe is tuned for new speakers or
individuals, as it is scored.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import closing
from typing import TYPE_CHECKING, Annotated, Any, Generic, TypeVar, cast

import numpy as np
from pydantic import AfterValidator, Field, model_serializer, model_validator
from pydantic_core.core_schema import SerializerFunctionWrapHandler

from audiobench import reports as _reports
from audiobench.errors import DataError
from audiobench.evaluators.evaluator import Evaluator
from audiobench.evaluators.registry import register
from audiobench.pooling import collate
from audiobench.probes.registry import PROBE_NAMES, TOKEN_PROBES, ProbeName, probe_level
from audiobench.reports import Count, Unit, mean_or_none, metric_names, parse_score_path, score_at
from audiobench.task import Embedder, Subset, Task, TaskFamily, error_in_context

if TYPE_CHECKING:
    from audiobench.encoder import Encoder
    from audiobench.families.classification import ClassificationTask
    from audiobench.probes.base import ProbeLevel
    from audiobench.probes.fitting import FitSettings
    from audiobench.probes.splits import Split

__all__ = [
    "MULTICLASS_METRICS",
    "MULTILABEL_METRICS",
    "ClassificationEvaluator",
    "ClassificationReport",
    "ClassificationSummary",
    "MulticlassReport",
    "MulticlassSummary",
    "MultilabelReport",
    "MultilabelSummary",
]

#: Metrics averaged over splits (multi-class); ``top_<k>_accuracy`` joins them when C > k.
MULTICLASS_METRICS: tuple[str, ...] = ("accuracy", "balanced_accuracy", "f1_macro")
#: Metrics averaged over splits (multi-label).
MULTILABEL_METRICS: tuple[str, ...] = ("map", "f1_micro", "f1_macro")


MulticlassMetric = Annotated[
    str, AfterValidator(metric_names(MULTICLASS_METRICS, ("top_", "_accuracy")))
]
MultilabelMetric = Annotated[str, AfterValidator(metric_names(MULTILABEL_METRICS))]
#: The metric names of a report: :data:`MulticlassMetric` or :data:`MultilabelMetric`.
M = TypeVar("M")
#: Spread of a [0, 1] metric over splits: at most half its range.
_HalfUnit = Annotated[float, Field(ge=0.0, le=0.5)]


class _Variant:
    """Names a parametrised report ``ProbeEntry[multiclass]`` in JSON Schema titles, rather
    than by the metric type's repr."""

    @classmethod
    def model_parametrized_name(cls, params: tuple[Any, ...]) -> str:
        return f"{cls.__name__}[{'multilabel' if params[0] is MultilabelMetric else 'multiclass'}]"


class _KeyedFirst(_Variant, _reports.KeyedReport):
    """A report keyed by names (metrics, probes) held in its extra fields, written first.

    The names come before the fixed fields in the JSON, as they always have.
    """

    @model_serializer(mode="wrap")
    def _names_first(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        names = [k for k in self.model_extra or {} if k in data]
        return {**{k: data[k] for k in names}, **{k: v for k, v in data.items() if k not in names}}


class SplitScores(_KeyedFirst, Generic[M]):
    """One split's test report: metric name -> value, and its sizes."""

    __pydantic_extra__: dict[M, Unit] = Field(init=False)  # type: ignore[assignment]
    n_samples: Count
    n_classes: Count
    #: Multi-label only: classes without a positive test clip (left out of mAP).
    n_classes_without_positives: Count | None = None


class ProbeEntry(_KeyedFirst, Generic[M]):
    """One probe on one subset: each metric's mean over splits, its spread, every split."""

    __pydantic_extra__: dict[M, Unit] = Field(init=False)  # type: ignore[assignment]
    n_samples: Count
    n_classes: Count
    n_splits: Count
    std: dict[M, _HalfUnit] = Field(
        description="Population standard deviation across folds (the splits) of each "
        "metric; with several seeds, of every split's mean over seeds. Not a spread over seeds."
    )
    per_split: dict[str, SplitScores[M]]
    n_seeds: Count | None = Field(
        default=None, description="Seeds the probe was trained with; absent: one."
    )
    seed_std: dict[M, _HalfUnit] | None = Field(
        default=None,
        description="Population standard deviation over seeds of each seed's mean over "
        "splits (per_seed); the metric itself is their mean.",
    )
    per_seed: dict[str, dict[M, Unit]] | None = Field(
        default=None, description="Seed -> each metric's mean over splits with that seed."
    )

    @model_validator(mode="after")
    def _consistent(self) -> ProbeEntry[M]:
        """Means, spreads and counts are those of the splits (and seeds) the entry lists."""
        splits = list(self.per_split.values())
        if self.n_splits != len(splits):
            raise ValueError(f"n_splits is {self.n_splits} but per_split lists {len(splits)}")
        n_samples = sum(s.n_samples for s in splits)
        if self.n_samples != n_samples:
            raise ValueError(f"n_samples is {self.n_samples} but the splits hold {n_samples}")
        # Read through plain mappings: the metric names are the entry's type parameter.
        std: Mapping[str, float] = cast("Mapping[str, float]", self.std)
        seed_std: Mapping[str, float] = cast("Mapping[str, float]", self.seed_std or {})
        seeds: list[Mapping[str, float]] = list(
            cast("dict[str, Mapping[str, float]]", self.per_seed or {}).values()
        )
        if self.per_seed is not None and self.n_seeds != len(seeds):
            raise ValueError(f"n_seeds is {self.n_seeds} but per_seed lists {len(seeds)}")
        checks: list[tuple[str, float, float]] = []
        for metric, value in (self.model_extra or {}).items():
            for source, name, spread, values in (
                ("split", "std", std, [(s.model_extra or {}).get(metric) for s in splits]),
                ("seed", "seed_std", seed_std, [seed.get(metric) for seed in seeds]),
            ):
                if source == "seed" and not seeds:
                    continue
                known = [float(v) for v in values if v is not None]
                if len(known) != len(values):
                    raise ValueError(f"{metric}: not reported by every {source}")
                checks += [
                    (str(metric), value, float(np.mean(known))),
                    (f"{name}.{metric}", spread.get(metric, -1.0), float(np.std(known))),
                ]
        for where, given, expected in checks:
            if not _reports.same_number(given, expected):
                raise ValueError(
                    f"{where}: {given!r} is not what the splits and seeds give ({expected!r})"
                )
        return self


class ClassificationReport(_KeyedFirst, Generic[M]):
    """One subset: probe name -> :class:`ProbeEntry` for every probe that ran."""

    __pydantic_extra__: dict[ProbeName, ProbeEntry[M]] = Field(init=False)
    skipped_probes: dict[ProbeName, str] | None = Field(
        default=None, description="Probes that could not run on this encoder, and why."
    )


class ClassificationSummary(_Variant, _reports.Summary, _reports.KeyedReport, Generic[M]):
    """Unweighted mean over subsets: probe name -> metric name -> mean (None if undefined)."""

    __pydantic_extra__: dict[ProbeName, dict[M, Unit | None]] = Field(init=False)


class MulticlassReport(ClassificationReport[MulticlassMetric]):
    """One subset of a multi-class task."""


class MultilabelReport(ClassificationReport[MultilabelMetric]):
    """One subset of a multi-label task."""


class MulticlassSummary(ClassificationSummary[MulticlassMetric]):
    """Mean over subsets of a multi-class task."""


class MultilabelSummary(ClassificationSummary[MultilabelMetric]):
    """Mean over subsets of a multi-label task."""


@register
class ClassificationEvaluator(Evaluator):
    family = TaskFamily.CLASSIFICATION
    protocol = "audiobench"
    Report = MulticlassReport
    Summary = MulticlassSummary

    @classmethod
    def report_model(cls, task: Task | type[Task]) -> type[_reports.Report]:
        """The metric names differ: multi-class or multi-label, as the task's labels are."""
        return MultilabelReport if _multilabel(task) else MulticlassReport

    @classmethod
    def summary_model(cls, task: Task | type[Task]) -> type[_reports.Summary]:
        return MultilabelSummary if _multilabel(task) else MulticlassSummary

    @classmethod
    def check_main_score(cls, task: type[Task], path: tuple[str, ...]) -> None:
        """``<probe>:<metric>``: a known probe and a metric this task reports."""
        o, where = cast(Any, task.options), f"task {task.metadata.name}: main score"
        if len(path) != 2:
            raise DataError(
                f"{where} {':'.join(path)!r} must read '<probe>:<metric>', e.g. 'linear:accuracy'"
            )
        probe, metric = path
        if probe not in PROBE_NAMES:
            raise DataError(f"{where} names unknown probe {probe!r}")
        top_k = f"top_{o.top_k}_accuracy"
        known = MULTILABEL_METRICS if o.multilabel else (*MULTICLASS_METRICS, top_k)
        if metric not in known:
            raise DataError(f"{where} metric {metric!r} is not one of {list(known)}")

    @classmethod
    def check_encoder(cls, task: type[Task], encoder: Encoder) -> None:
        """A token-level primary probe needs frame sequences; nothing else is required."""
        from audiobench.probes.tokens import token_skip_reason

        primary = parse_score_path(task.metadata.main_score)[0]
        if primary in TOKEN_PROBES and (reason := token_skip_reason(encoder)) is not None:
            raise ValueError(f"task {task.metadata.name}: primary probe {primary!r}: {reason}")

    @classmethod
    def embedding_passes(cls, task: Task, encoder: Encoder) -> tuple[bool, ...]:
        """Pooled vectors for the vector probes, frame sequences for the token probes."""
        levels = set(_levels(_family(task), encoder)[0].values())
        passes = [p for p, level in ((True, "vector"), (False, "token")) if level in levels]
        return tuple(passes) or (True,)

    @classmethod
    def describe(cls, task: Task) -> dict[str, Any]:
        t = _family(task)
        o = t.options
        return {
            "protocol": {
                "probes": list(t.probe_names),
                "primary_probe": t.probe_names[0],
                **o.model_dump(mode="json", exclude={"protocol", "probes"}),
                # Options that do not apply are recorded as None.
                "label_separator": o.label_separator if o.multilabel else None,
                "fold_key": o.fold_key if o.folds else None,
                "threshold": o.threshold if o.multilabel else None,
                "token_seeds": t.token_seeds,
            }
        }

    @classmethod
    def evaluate_subset(cls, task: Task, embedder: Embedder, subset: Subset) -> _reports.Report:
        from audiobench.metrics.validation import check_finite
        from audiobench.probes import groups_in_several_parts
        from audiobench.probes.fitting import FitLines, fit_probes, n_fits, probe_entry
        from audiobench.probes.tokens import embed_token_maps

        t = _family(task)
        o, where = t.options, subset.where
        levels, skipped = _levels(t, embedder.encoder)
        vector = "vector" in levels.values()
        kept = subset.clips
        vectors: list[np.ndarray] = []
        frames: list[np.ndarray] = []
        token_info: dict[str, Any] = {}
        if vector:
            kept, vectors = embedder.embed(kept, subset.label)
        if "token" in levels.values():
            framed, frames, token_map = embed_token_maps(kept, embedder, subset)
            if vector:  # all probes see the same clips: drop those the unpooled pass left out
                left = {c.id for c in framed}
                vectors = [v for c, v in zip(kept, vectors, strict=True) if c.id in left]
            token_info = {"n_dropped_unpooled": len(kept) - len(framed), "token_map": token_map}
            kept = framed
        if len(kept) < 2:
            raise DataError(f"{where}: fewer than 2 clips left to evaluate")
        ids = [c.id for c in kept]
        check_finite(vectors, ids, f"{where}: embeddings")
        check_finite(frames, ids, f"{where}: frame sequences")
        targets, class_names = t.targets_of(kept, where)
        method, splits = t.splits_of(kept, targets, class_names, where)
        inputs = {"vector": collate(vectors) if vector else None, "token": frames}
        settings = _fit_settings(t)
        # Grouped tasks choose hyper-parameters inside training along the same groups.
        groups = [str(c.group) for c in kept] if o.grouped else None
        token_splits = _token_splits(t, method, splits, targets, groups, class_names, where)
        total = n_fits(levels, len(splits), settings)
        with closing(embedder.track(f"{subset.label} probes", total, "fits")) as bar:
            results, configs = fit_probes(
                levels,
                inputs,
                targets,
                splits,
                settings,
                where=where,
                lines=FitLines(getattr(embedder, "progress", None), subset.label),
                bar=bar,
                groups=groups,
                token_splits=token_splits,
            )
        info: dict[str, Any] = {
            "method": method,
            "n_clips": len(kept),
            "n_classes": len(class_names),
            "splits": {
                s.name: {k: v for k, v in s.to_dict().items() if k != "name"} for s in splits
            },
            # Only when a clip was dropped, or the encoder declares tokens to leave out.
            **{k: v for k, v in token_info.items() if v},
        }
        if method == "given" and not o.grouped:
            shared = groups_in_several_parts(splits[0], [c.group for c in kept])
            if shared is not None:
                info["groups_in_several_parts"] = shared
        subset.details |= {"splits": info, "probes": configs}
        entries: dict[str, Any] = {n: probe_entry(results[n], len(class_names)) for n in levels}
        if skipped:
            entries["skipped_probes"] = skipped
        return cls.report_model(task).model_validate(entries)

    @classmethod
    def summarize(cls, task: Task, reports: Mapping[str, _reports.Report]) -> _reports.Summary:
        """Unweighted mean over subsets of every probe's metrics (None if a subset lacks one)."""
        first = next(iter(reports.values()))
        means: dict[str, dict[str, float | None]] = {}
        for probe, entry in (first.model_extra or {}).items():
            means[probe] = {
                metric: mean_or_none(score_at(r, (probe, metric)) for r in reports.values())
                for metric in entry.model_extra or {}
            }
        return cls.summary_model(task).model_validate({"subsets": list(reports), **means})


def _family(task: Task) -> ClassificationTask:
    """``task`` as what it is: a task of the classification family."""
    return cast("ClassificationTask", task)


def _multilabel(task: Task | type[Task]) -> bool:
    return bool(getattr(task.options, "multilabel", False))


def _levels(
    task: ClassificationTask, encoder: Encoder
) -> tuple[dict[str, ProbeLevel], dict[str, str]]:
    """The probes that run on ``encoder``, each with its level, and those that cannot
    (token probes on an encoder without frame sequences), each with the reason."""
    from audiobench.probes.tokens import token_skip_reason

    reason = token_skip_reason(encoder)
    levels: dict[str, ProbeLevel] = {name: probe_level(name) for name in task.probe_names}
    skipped = {n: reason for n, level in levels.items() if level == "token" and reason}
    return {n: level for n, level in levels.items() if n not in skipped}, skipped


def _fit_settings(task: ClassificationTask) -> FitSettings:
    from audiobench.probes.fitting import FitSettings

    o = task.options
    return FitSettings(
        multilabel=o.multilabel,
        seed=o.seed,
        token_seeds=task.token_seeds,
        paper=o.token_recipe == "paper",
        search=o.token_search,
        trials=o.token_trials,
        probe_params=o.probe_params,
        top_k=o.top_k,
        threshold=o.threshold,
        device=task.device,
    )


def _token_splits(
    task: ClassificationTask,
    method: str,
    splits: list[Split],
    targets: Any,
    groups: list[str] | None,
    class_names: list[str],
    where: str,
) -> dict[str, Split]:
    """The paper's search on a cross-validated task: each fold split with its validation
    fold designated a priori (:func:`~audiobench.probes.splits.with_validation_folds`),
    by split name, for the token probes; otherwise none."""
    from audiobench.probes.splits import check_split, with_validation_folds

    o = task.options
    if not (method == "folds" and o.token_recipe == "paper" and o.token_search == "paper"):
        return {}
    try:
        designated = with_validation_folds(splits)
        for s in designated:
            check_split(s, targets, groups, multilabel=o.multilabel, class_names=class_names)
    except ValueError as exc:
        raise error_in_context(exc, f"{where}, token probes' validation folds") from exc
    return {s.name: s for s in designated}
