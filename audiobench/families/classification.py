"""Classification by probes trained on frozen embeddings.

A task names its probes (:data:`audiobench.probes.PROBES`): vector probes (``linear``,
``knn``, ``mlp``) train on one pooled embedding per clip, token probes (``attentive``,
``protobin``) on the encoder's token map: its unpooled frame sequence
(``embed(..., pooled=False)``) without the tokens that do not stand for the audio, as the
encoder declares them (:class:`~audiobench.encoder.ModelMeta`): the ``n_prefix_tokens`` it puts
first (AST's class and distillation tokens) and, for a model that pads clips to a fixed window
(``padded_frame_rate``, Whisper), the frames past ``ceil(duration × rate)``
(:mod:`audiobench.probes.paper`; a maximum or an attention over padding measures the padding).
For a model whose tokens are a patch grid over a padded window (``patch_grid``,
:class:`~audiobench.encoder.PatchGrid`; AST under the paper protocol), the grid's columns that
start past the clip's last input frame hold only padding and are left out, row by row.
Token probes need an encoder whose output kind is ``sequence``; for any other encoder they
are skipped and the reason is written into the scores (``skipped_probes``). A subset's pooled
vectors are collated together (zero-padded to the longest, :func:`audiobench.pooling.collate`)
so that every split shares one feature space. All probes see the same clips: a clip left out
of the unpooled pass (``--on-error skip``) leaves the vector probes too, and is counted
(``details["splits"][subset]["n_dropped_unpooled"]``).

Data contract. Every clip carries a ``label`` (multi-label tasks: class names joined by the
``label_separator`` option). The evaluation splits come from the first of these that applies:

1. ``folds`` declared by the task: each clip's ``metadata[fold_key]`` (ESC-50's ``fold``)
   must be one of them; leave-one-fold-out, one split per fold;
2. ``Clip.split`` values other than ``train`` (the dataset's own ``train`` / ``validation``
   / ``test``): one split; the validation part, when present, chooses hyper-parameters,
   otherwise probes use inner cross-validation on the training part;
3. otherwise ``generated_folds`` seeded folds, stratified by class; with ``grouped`` they
   are group folds on ``Clip.group`` (no speaker or individual on both sides).

With ``grouped`` every split is checked for group leakage (a clip without a group is an
error); without it, a given split whose clips carry groups records how many groups span
several parts (``groups_in_several_parts``), for information. Every split is checked for
classes that occur in its validation or test part but never in its training part: an error
naming the task, the split (``fold-3``) and the class, never a silently capped score.

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

Seeds. A token probe trained with several seeds (``token_seeds``; 5 under the paper protocol)
is fitted once per seed on every split; its metrics are the mean over seeds of each seed's
mean over splits, ``per_seed`` holds those per-seed means and ``seed_std`` their population
standard deviation (the "mean ± std over seeds" of a paper), ``per_split`` the mean over
seeds of each split, ``std`` the spread of those across folds. The first seed chooses the
hyper-parameters; the other seeds reuse its choice.

Token protocol. ``token_protocol="default"`` trains the token probes with the family's shared
neural recipe (:mod:`audiobench.probes.neural`): standardised tokens, cross-entropy or binary
cross-entropy, batches of 32, AdamW with a cosine schedule and early stopping on the
validation loss when there is a validation split, fixed learning rate and weight decay, a
128-wide attentive probe, one seed. ``"paper"`` follows the probing paper (Rauch et al.,
"Unmute the Patch Tokens", ICLR 2026; :mod:`audiobench.probes.paper`): raw tokens (protobin's
prototypes compared with the frozen tokens themselves, no per-feature centring), the
asymmetric loss for multi-label tasks, batches of 128, 30 epochs of AdamW with a cosine
schedule and no early stopping, a small learning-rate × weight-decay grid chosen on
validation mAP (accuracy for multi-class tasks), the attentive probe at the model's full
width, 5 seeds. The default stays because it is cheaper (one fit per split, no grid) and
puts every neural probe of the family, the MLP included, under one recipe, so that their
differences come from the architecture; the paper protocol is the one to use to compare with
the paper's figures. Either way the token map is the same. Under the paper protocol,
``token_search="paper"`` replaces the grid with the paper's own search (``token_trials``
trials, Sobol then TPE under successive halving, a validation fold designated a priori on
cross-validated tasks; :mod:`audiobench.probes.search`, needs ``audiobench[search]``); the
probe's configuration records every trial and the choice.

With ``grouped``, every choice of hyper-parameters inside a training part (inner folds, a
held-out part) keeps each group on one side too, so a probe is tuned for new speakers or
individuals, as it is scored.

``protocol="mteb"`` scores as MTEB scores MAEB's classification tasks instead (few-shot
logistic regression, main score ``accuracy``, or ``lrap`` for multi-label tasks; probes, folds
and grouping are then not used; :mod:`audiobench.families.mteb_protocol`).
"""

from __future__ import annotations

import sys
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, closing, nullcontext
from itertools import product
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Generic, Literal, Self, TypeVar, cast

import numpy as np
from pydantic import AfterValidator, Field, model_serializer, model_validator
from pydantic_core.core_schema import SerializerFunctionWrapHandler

from audiobench import reports as _reports
from audiobench.audio import Clip
from audiobench.errors import DataError
from audiobench.families import mteb_protocol
from audiobench.families.mteb_protocol import ByProtocol, MtebReport, MtebSummary, ProtocolOptions
from audiobench.metrics.naming import describe_clips
from audiobench.pooling import collate
from audiobench.probes.registry import PROBE_NAMES
from audiobench.reports import Count, Unit, mean_or_none, metric_names, parse_score_path, score_at
from audiobench.task import Embedder, Subset, Task, TaskFamily, error_in_context

if TYPE_CHECKING:
    from audiobench.encoder import Encoder
    from audiobench.probes import Split
    from audiobench.probes.base import FitProgress, ProbeLevel, ProgressCallback

__all__ = [
    "MULTICLASS_METRICS",
    "MULTILABEL_METRICS",
    "PROBE_NAMES",
    "ClassificationReport",
    "ClassificationSummary",
    "ClassificationTask",
]

#: Metrics averaged over splits (multi-class); ``top_<k>_accuracy`` joins them when C > k.
MULTICLASS_METRICS: tuple[str, ...] = ("accuracy", "balanced_accuracy", "f1_macro")
#: Metrics averaged over splits (multi-label).
MULTILABEL_METRICS: tuple[str, ...] = ("map", "f1_micro", "f1_macro")


def _probe_name(name: str) -> str:
    if name not in PROBE_NAMES:
        raise ValueError(f"unknown probe {name!r}; known: {', '.join(PROBE_NAMES)}")
    return name


ProbeName = Annotated[str, AfterValidator(_probe_name)]
MulticlassMetric = Annotated[
    str, AfterValidator(metric_names(MULTICLASS_METRICS, ("top_", "_accuracy")))
]
MultilabelMetric = Annotated[str, AfterValidator(metric_names(MULTILABEL_METRICS))]
#: The metric names of a report: :data:`MulticlassMetric` or :data:`MultilabelMetric`.
M = TypeVar("M")
_R = TypeVar("_R", bound=_reports.Report)
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


class _ByLabels(ByProtocol[_R]):
    """:class:`ByProtocol`, whose own model follows ``multilabel``: the metric names differ."""

    def __init__(self, multiclass: type[_R], multilabel: type[_R], mteb: type[_R]) -> None:
        super().__init__(multiclass, mteb)
        self.multilabel = multilabel

    def __get__(self, instance: object, owner: type) -> type[_R]:
        chosen = super().__get__(instance, owner)
        options = getattr(instance if instance is not None else owner, "options", None)
        if chosen is self.own and getattr(options, "multilabel", False):
            return self.multilabel
        return chosen


class ClassificationTask(Task):
    """Base class of probe-classification tasks; subclasses declare metadata and options."""

    family: ClassVar[TaskFamily] = TaskFamily.CLASSIFICATION
    Report = _ByLabels(MulticlassReport, MultilabelReport, MtebReport)
    Summary = _ByLabels(MulticlassSummary, MultilabelSummary, MtebSummary)

    class Options(ProtocolOptions):
        probes: tuple[ProbeName, ...] = Field(
            ("linear", "knn"), description="Probes run; the main score's probe always runs (first)."
        )
        multilabel: bool = Field(
            False, description="Labels are lists of class names joined by label_separator."
        )
        label_separator: str = Field(",", min_length=1, description="Multi-label separator.")
        folds: tuple[str, ...] = Field(
            (), description="The dataset's cross-validation folds (as text); empty: none."
        )
        fold_key: str = Field("fold", min_length=1, description="Clip.metadata key of the fold.")
        grouped: bool = Field(
            False, description="No Clip.group (speaker, individual) on two sides of any split."
        )
        generated_folds: int = Field(
            5, ge=2, description="Seeded folds when the data has neither folds nor a test split."
        )
        probe_params: dict[ProbeName, dict[str, Any]] = Field(
            default_factory=dict,
            description="Fixed keyword arguments per probe, e.g. {'mlp': {'epochs': 30}}.",
        )
        top_k: int = Field(5, ge=1, description="k of top_<k>_accuracy (reported when C > k).")
        threshold: float = Field(
            0.5, ge=0.0, le=1.0, description="Multi-label decision threshold (F1 scores)."
        )
        seed: int = Field(0, description="Seed of generated folds and of every probe.")
        token_protocol: Literal["default", "paper"] = Field(
            "default",
            description="Token probes' recipe: 'default' (the family's neural recipe) or "
            "'paper' (the probing paper's: raw tokens, asymmetric multi-label loss, batch 128, "
            "30 epochs without early stopping, lr/weight-decay grid, full-width attention, "
            "5 seeds).",
        )
        token_search: Literal["grid", "paper"] = Field(
            "grid",
            description="Paper protocol: how the token probes' learning rate and weight decay "
            "are chosen: 'grid' (a 2 × 2 grid inside the paper's ranges) or 'paper' (the "
            "paper's search: Sobol then TPE trials under successive halving, the best few "
            "re-run with 5 seeds; needs pip install 'audiobench[search]').",
        )
        token_trials: int = Field(
            50, ge=1, description="Trials of token_search='paper' (the paper: 50)."
        )
        token_seeds: int | None = Field(
            None,
            ge=1,
            description="Seeds per token probe (seed, seed + 1, ...; mean ± std over them). "
            "None: 5 under the paper protocol, else 1.",
        )

        @model_validator(mode="after")
        def _search_needs_paper(self) -> Self:
            if self.token_search == "paper" and self.token_protocol != "paper":
                raise ValueError(
                    "token_search='paper' is the paper protocol's search: add "
                    "-O token_protocol=paper (the default protocol has no search)"
                )
            return self

    options: Options = Options()

    @classmethod
    def check_main_score(cls, path: tuple[str, ...]) -> None:
        """``<probe>:<metric>``: a known probe and a metric this task reports."""
        o, where = cls.options, f"task {cls.metadata.name}: main score"
        if o.protocol == "mteb":
            return mteb_protocol.check_main_score(cls, path)
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
    def resolve_options(cls, values: Mapping[str, Any]) -> Options:
        """As :meth:`Task.resolve_options`; ``multilabel`` follows the labels, not the run."""
        options = super().resolve_options(values)
        assert isinstance(options, cls.Options)
        if options.multilabel != cls.options.multilabel:
            raise ValueError(
                f"task {cls.metadata.name}: multilabel is fixed by the task's labels "
                f"({cls.options.multilabel}); it cannot be set per run"
            )
        return options

    @property
    def probe_names(self) -> tuple[str, ...]:
        """The probes run: the main score's (primary) probe first, then the others."""
        primary = parse_score_path(self.metadata.main_score)[0]
        # A reference-protocol main score names no probe.
        first = [primary] if primary in PROBE_NAMES else []
        return tuple(dict.fromkeys([*first, *self.options.probes]))

    @classmethod
    def check_encoder(cls, encoder: Encoder) -> None:
        """A token-level primary probe needs frame sequences; nothing else is required."""
        from audiobench.probes import TOKEN_PROBES

        primary = parse_score_path(cls.metadata.main_score)[0]
        if primary in TOKEN_PROBES and (reason := _token_skip_reason(encoder)) is not None:
            raise ValueError(f"task {cls.metadata.name}: primary probe {primary!r}: {reason}")

    def embedding_passes(self, encoder: Encoder) -> tuple[bool, ...]:
        """Pooled vectors for the vector probes, frame sequences for the token probes."""
        if self.options.protocol == "mteb":
            return (True,)
        levels = set(self._levels(encoder)[0].values())
        passes = [p for p, level in ((True, "vector"), (False, "token")) if level in levels]
        return tuple(passes) or (True,)

    def _levels(self, encoder: Encoder) -> tuple[dict[str, ProbeLevel], dict[str, str]]:
        """The probes that run on ``encoder``, each with its level, and those that cannot
        (token probes on an encoder without frame sequences), each with the reason."""
        from audiobench.probes import PROBES

        reason = _token_skip_reason(encoder)
        levels = {name: PROBES[name].level for name in self.probe_names}
        skipped = {n: reason for n, level in levels.items() if level == "token" and reason}
        return {n: level for n, level in levels.items() if n not in skipped}, skipped

    def protocol(self) -> dict[str, Any]:
        o = self.options
        if o.protocol == "mteb":
            return mteb_protocol.describe(self, multilabel=o.multilabel)
        return {
            "protocol": {
                "probes": list(self.probe_names),
                "primary_probe": self.probe_names[0],
                **o.model_dump(mode="json", exclude={"protocol", "probes"}),
                # Options that do not apply are recorded as None.
                "label_separator": o.label_separator if o.multilabel else None,
                "fold_key": o.fold_key if o.folds else None,
                "threshold": o.threshold if o.multilabel else None,
                "token_seeds": self.token_seeds,
            }
        }

    @property
    def token_seeds(self) -> int:
        """Seeds each token probe is trained with."""
        from audiobench.probes.paper import PAPER_SEEDS

        o = self.options
        return o.token_seeds or (PAPER_SEEDS if o.token_protocol == "paper" else 1)

    # ------------------------------------------------------------------ evaluation

    def evaluate_subset(self, embedder: Embedder, subset: Subset) -> _reports.Report:
        from audiobench.metrics.validation import check_finite
        from audiobench.probes import groups_in_several_parts

        o, where = self.options, subset.where
        if o.protocol == "mteb":
            return mteb_protocol.classification_report(
                embedder, subset, multilabel=o.multilabel, separator=o.label_separator
            )
        levels, skipped = self._levels(embedder.encoder)
        vector = "vector" in levels.values()
        kept = subset.clips
        vectors: list[np.ndarray] = []
        frames: list[np.ndarray] = []
        token_info: dict[str, Any] = {}
        if vector:
            kept, vectors = embedder.embed(kept, subset.label)
        if "token" in levels.values():
            framed, frames, token_map = _embed_token_maps(kept, embedder, subset)
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
        targets, class_names = self._targets(kept, where)
        method, splits = self._splits(kept, targets, class_names, where)
        inputs = {"vector": collate(vectors) if vector else None, "token": frames}
        # probe -> split -> seed -> the split's test report
        results: dict[str, dict[str, dict[int, dict[str, Any]]]] = {n: {} for n in levels}
        configs: dict[str, dict[str, Any]] = {n: {} for n in levels}
        lines = _FitLines(embedder, subset.label)
        # Grouped tasks choose hyper-parameters inside training along the same groups.
        groups = [str(c.group) for c in kept] if o.grouped else None
        n_fits = len(splits) * sum(self.token_seeds if v == "token" else 1 for v in levels.values())
        token_splits = self._token_splits(method, splits, targets, groups, class_names, where)
        with closing(embedder.track(f"{subset.label} probes", n_fits, "fits")) as bar:
            for split, name in product(splits, levels):
                used = token_splits.get(split.name, split) if levels[name] == "token" else split
                results[name][split.name], configs[name][split.name] = self._fit_seeds(
                    name, inputs[levels[name]], targets, used, where, lines, bar, groups
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
        entries: dict[str, Any] = {n: _average(results[n], len(class_names)) for n in levels}
        if skipped:
            entries["skipped_probes"] = skipped
        return self.Report.model_validate(entries)

    def summarize(self, reports: Mapping[str, _reports.Report]) -> _reports.Summary:
        """Unweighted mean over subsets of every probe's metrics (None if a subset lacks one)."""
        if self.options.protocol == "mteb":
            return super().summarize(reports)
        first = next(iter(reports.values()))
        means: dict[str, dict[str, float | None]] = {}
        for probe, entry in (first.model_extra or {}).items():
            means[probe] = {
                metric: mean_or_none(score_at(r, (probe, metric)) for r in reports.values())
                for metric in entry.model_extra or {}
            }
        return self.Summary.model_validate({"subsets": list(reports), **means})

    def evaluation_splits(self, clips: Sequence[Clip]) -> tuple[str, list[Split]]:
        """How the probes split ``clips`` (one subset): the method and the checked splits.

        The method is ``"folds"``, ``"given"``, ``"grouped_folds"`` or ``"generated_folds"``
        (see the module docstring); split indices are positions in ``clips``.
        """
        where = f"task {self.name}"
        targets, class_names = self._targets(list(clips), where)
        return self._splits(list(clips), targets, class_names, where)

    def _targets(self, clips: list[Clip], where: str) -> tuple[Any, list[str]]:
        """Multi-class: the label strings and sorted class names; multi-label: indicator rows."""
        o = self.options
        if not o.multilabel:
            labels = [str(c.label) for c in clips]
            return labels, sorted(set(labels))
        sets = [{p.strip() for p in str(c.label).split(o.label_separator)} - {""} for c in clips]
        if empty := [c.id for c, names in zip(clips, sets, strict=True) if not names]:
            raise DataError(
                f"{where}: {len(empty)} clip(s) have an empty label list: {describe_clips(empty)}"
            )
        class_names = sorted(set().union(*sets))
        column = {name: j for j, name in enumerate(class_names)}
        matrix = np.zeros((len(clips), len(class_names)), dtype=np.int64)
        for i, names in enumerate(sets):
            matrix[i, [column[n] for n in names]] = 1
        return matrix, class_names

    def _splits(
        self, clips: list[Clip], targets: Any, class_names: list[str], where: str
    ) -> tuple[str, list[Split]]:
        from audiobench.probes import check_split, fold_splits, grouped_folds, split_from_labels

        o = self.options
        if o.grouped and (missing := [c.id for c in clips if c.group is None]):
            raise DataError(
                f"{where}: grouped splits need a group (speaker, individual) for every "
                f"clip; {len(missing)} have none: {describe_clips(missing)}"
            )
        groups = [str(c.group) for c in clips] if o.grouped else None
        try:
            if o.folds:
                method, splits = "folds", fold_splits(self._fold_ids(clips, where))
            elif {c.split for c in clips} - {"train", None}:
                method, splits = "given", [split_from_labels([c.split for c in clips])]  # type: ignore[misc]
            else:
                method = "grouped_folds" if o.grouped else "generated_folds"
                by = groups or [c.id for c in clips]  # ungrouped: every clip its own group
                splits = grouped_folds(
                    targets, by, n_splits=o.generated_folds, seed=o.seed, multilabel=o.multilabel
                )
            for s in splits:
                check_split(s, targets, groups, multilabel=o.multilabel, class_names=class_names)
        except ValueError as exc:
            raise error_in_context(exc, where) from exc
        return method, splits

    def _token_splits(
        self,
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

        o = self.options
        if not (method == "folds" and o.token_protocol == "paper" and o.token_search == "paper"):
            return {}
        try:
            designated = with_validation_folds(splits)
            for s in designated:
                check_split(s, targets, groups, multilabel=o.multilabel, class_names=class_names)
        except ValueError as exc:
            raise error_in_context(exc, f"{where}, token probes' validation folds") from exc
        return {s.name: s for s in designated}

    def _fold_ids(self, clips: list[Clip], where: str) -> list[int | str]:
        """Each clip's fold, checked against the declared ones (integers when all are)."""
        o = self.options
        values = [c.metadata.get(o.fold_key) for c in clips]
        if missing := [c.id for c, v in zip(clips, values, strict=True) if v is None or v == ""]:
            raise DataError(
                f"{where}: {len(missing)} clip(s) have no {o.fold_key!r}: {describe_clips(missing)}"
            )
        text = [str(v) for v in values]
        if odd := sorted({v for v in text if v not in o.folds}):
            raise DataError(
                f"{where}: fold value(s) {odd} are not among the declared folds "
                f"{sorted(set(o.folds))}"
            )
        # Integers when all are, so that fold-2 sorts before fold-10.
        return [int(v) for v in text] if all(v.lstrip("-").isdigit() for v in text) else list(text)

    def _fit_seeds(
        self,
        name: str,
        X: Any,
        y: Any,
        split: Split,
        where: str,
        lines: _FitLines,
        bar: Any,
        groups: list[str] | None = None,
    ) -> tuple[dict[int, dict[str, Any]], dict[str, Any]]:
        """Probe ``name`` fitted on ``split`` of inputs ``X`` and targets ``y`` once per seed:
        each seed's test report, and the probe's configuration (seed -> configuration with
        several seeds). The first seed chooses the hyper-parameters (a token probe's learning
        rate and weight decay); the other seeds reuse its choice."""
        from audiobench.metrics import classification_scores
        from audiobench.probes import PROBES, make_probe
        from audiobench.probes.base import subset as part
        from audiobench.probes.neural import TorchProbe
        from audiobench.probes.paper import paper_params

        o, level = self.options, PROBES[name].level
        paper = o.token_protocol == "paper" and level == "token"
        kwargs = (
            paper_params(
                name, multilabel=o.multilabel, search=o.token_search, trials=o.token_trials
            )
            if paper
            else {}
        )
        kwargs |= o.probe_params.get(name, {})
        if issubclass(PROBES[name], TorchProbe) and self.device is not None:
            kwargs.setdefault("device", self.device)
        train = part(X, split.train), part(y, split.train)
        val = split.validation
        held_out = {} if val is None else {"X_val": part(X, val), "y_val": part(y, val)}
        n_seeds = self.token_seeds if level == "token" else 1
        context = f"{where}, split {split.name!r}, probe {name!r}"
        reports: dict[int, dict[str, Any]] = {}
        configs: dict[str, Any] = {}
        for seed in range(o.seed, o.seed + n_seeds):
            label = f"{split.name} {name}" + (f" seed {seed}" if n_seeds > 1 else "")
            probe = make_probe(name, multilabel=o.multilabel, seed=seed, **kwargs)
            t0 = time.perf_counter()
            try:
                with _blas_threads(X), warnings.catch_warnings():
                    # Cached embeddings are read-only; the torch probes only read them, so
                    # torch's "not writable" warning is a false alarm (copying would double
                    # the memory of frame sequences).
                    warnings.filterwarnings("ignore", "The given NumPy array is not writable")
                    probe.fit(
                        *train,
                        groups=None if groups is None else [groups[i] for i in split.train],
                        progress=lines.during(f"{label}: "),
                        **held_out,
                    )
                    scores = probe.predict_scores(part(X, split.test))
            except ValueError as exc:
                raise error_in_context(exc, context) from exc
            report = reports[seed] = classification_scores(
                part(y, split.test),
                scores,
                multilabel=o.multilabel,
                classes=[str(c) for c in probe.classes_],
                top_k=o.top_k,
                threshold=o.threshold,
            )
            metric = "map" if o.multilabel else "accuracy"
            lines.say(f"{label}: {metric} {report[metric]:.4f} ({time.perf_counter() - t0:.1f} s)")
            configs[str(seed)] = probe.config()
            if isinstance(probe, TorchProbe) and seed == o.seed:
                kwargs |= probe.fixed_choice()
            bar.advance(1)
        return reports, configs if n_seeds > 1 else configs[str(o.seed)]


# ---------------------------------------------------------------------- helpers


#: Below this many input values, vector probes run with one BLAS thread (see _blas_threads).
_SMALL_INPUT = 4_000_000


def _blas_threads(inputs: Any) -> AbstractContextManager[Any]:
    """One BLAS thread for small vector inputs, the library default otherwise.

    The linear probe's many small lbfgs fits (grid × inner folds) spend their time in
    thread hand-offs when BLAS threads: measured 10x slower on a loaded 2-core machine for a
    48 × 6400 matrix. Large matrices keep the threads, where they pay off.
    """
    if isinstance(inputs, np.ndarray) and inputs.size < _SMALL_INPUT:
        from threadpoolctl import threadpool_limits

        return cast(AbstractContextManager[Any], threadpool_limits(limits=1, user_api="blas"))
    return nullcontext()


class _FitLines:
    """A line per probe fit on stderr, and one every :attr:`every` seconds inside a long fit.

    Lines rather than a redrawn bar, so that they reach a log file too; while a live progress
    display runs in a terminal it prints them above its bars. Silent when the embedder shows
    no progress (``progress`` is None or absent: ``--no-progress``, tests).
    """

    every: float = 30.0

    def __init__(self, embedder: Embedder, label: str) -> None:
        self.active = getattr(embedder, "progress", None) is not None
        self.label = label
        self.last = time.monotonic()

    def say(self, text: str) -> None:
        if self.active:
            print(f"  {self.label} probes: {text}", file=sys.stderr, flush=True)
            self.last = time.monotonic()

    def during(self, prefix: str) -> ProgressCallback | None:
        """A ``fit(progress=...)`` callback that speaks at most every :attr:`every` seconds."""

        def callback(event: FitProgress) -> None:
            if time.monotonic() - self.last >= self.every:
                self.say(f"{prefix}{event}")

        return callback if self.active else None


#: Clips embedded frame-level at a time: each chunk is cut to its token maps (and the padded
#: windows freed) before the next, so a subset never holds every clip's window at once
#: (Whisper pads every clip to 1500 frames: 2,000 clips would be 15 GB at d = 1280).
FRAME_CHUNK = 512


def _embed_token_maps(
    clips: list[Clip], embedder: Embedder, subset: Subset
) -> tuple[list[Clip], list[np.ndarray], dict[str, Any] | None]:
    """The clips of ``subset`` that could be embedded frame-level, their token maps, and what
    was left out of them (:func:`_token_maps`), chunk by chunk (:data:`FRAME_CHUNK`)."""
    kept: list[Clip] = []
    maps: list[np.ndarray] = []
    info: dict[str, Any] | None = None
    n_frames = 0
    description = f"{subset.label} frames"
    for start in range(0, len(clips), FRAME_CHUNK):
        part, frames = embedder.embed(clips[start : start + FRAME_CHUNK], description, pooled=False)
        part_maps, info = _token_maps(part, frames, embedder, subset.where)
        kept += part
        maps += part_maps
        n_frames += sum(int(f.shape[0]) for f in frames)
    if info is not None:  # the counts of every chunk, not only the last one's
        n_tokens = sum(int(m.shape[0]) for m in maps)
        info |= {"n_tokens": n_tokens, "n_left_out": n_frames - n_tokens}
    return kept, maps, info


def _token_maps(
    clips: list[Clip], frames: list[np.ndarray], embedder: Embedder, where: str
) -> tuple[list[np.ndarray], dict[str, Any] | None]:
    """Every clip's token map (:func:`audiobench.probes.paper.token_map`; copies, so that the
    full sequences can be freed), and what was left out (None when the encoder declares
    nothing to leave out: then the sequences themselves)."""
    from audiobench.probes.paper import token_map, valid_frames

    meta = embedder.encoder.meta
    n_prefix = int(getattr(meta, "n_prefix_tokens", 0) or 0)
    rate = getattr(meta, "padded_frame_rate", None)
    grid = getattr(meta, "patch_grid", None)
    timed = rate is not None or grid is not None  # padding is told from the clip's duration
    if not n_prefix and not timed:
        return frames, None
    if missing := [c.id for c in clips if timed and embedder.durations.get(c.id) is None]:
        raise DataError(
            f"{where}: model {meta.name!r} pads clips to a window, and {len(missing)} clip(s) "
            f"have no decoded duration to tell its padding frames: {describe_clips(missing)}"
        )
    maps: list[np.ndarray] = []
    for clip, seq in zip(clips, frames, strict=True):
        seconds = embedder.durations.get(clip.id, 0.0)
        try:  # a grid counts its input frames, a padded model its own
            n_valid = (
                grid.valid_frames(seconds)
                if grid is not None
                else (valid_frames(seconds, float(rate)) if rate is not None else None)
            )
            maps.append(np.array(token_map(seq, n_prefix=n_prefix, n_valid=n_valid, grid=grid)))
        except ValueError as exc:
            raise DataError(f"{where}: clip {clip.id!r}: {exc}") from None
    kept = sum(int(m.shape[0]) for m in maps)
    return maps, {
        "n_prefix_tokens": n_prefix,
        "padded_frame_rate": rate,
        "n_tokens": kept,
        "n_left_out": sum(int(f.shape[0]) for f in frames) - kept,
        **({"patch_grid": grid.model_dump()} if grid is not None else {}),
    }


def _token_skip_reason(encoder: Encoder) -> str | None:
    """Why token-level probes cannot run on ``encoder`` (None: they can)."""
    from audiobench.encoder import OutputKind

    kind = encoder.meta.output_kind
    if kind == OutputKind.SEQUENCE:
        return None
    what = "one vector per clip" if kind == OutputKind.VECTOR else "discrete codes"
    return (
        f"model {encoder.meta.name!r} outputs {what} (output kind {str(kind)!r}); "
        "token-level probes need frame sequences"
    )


#: Keys of a split's report that are sizes, not metrics.
_COUNTS = ("n_samples", "n_classes", "n_classes_without_positives")


def _average(runs: dict[str, dict[int, dict[str, Any]]], n_classes: int) -> dict[str, Any]:
    """A probe's entry from its test reports, ``runs``: split -> seed -> report.

    ``per_split`` holds each split's metrics averaged over the seeds. Each metric present in
    every split is averaged over the splits for each seed, then over the seeds; ``std`` is
    the population standard deviation across splits of the per-split means. With several
    seeds, ``per_seed`` holds each seed's means and ``seed_std`` their population spread.
    """
    seeds = list(next(iter(runs.values())))
    per_split: dict[str, dict[str, Any]] = {}
    for split, by_seed in runs.items():
        reports = list(by_seed.values())
        per_split[split] = {
            key: value if key in _COUNTS else float(np.mean([float(r[key]) for r in reports]))
            for key, value in reports[0].items()
            if key in _COUNTS or all(r.get(key) is not None for r in reports)
        }
    first = next(iter(per_split.values()))
    names = [m for m in first if m not in _COUNTS and all(m in r for r in per_split.values())]
    per_seed = {
        str(seed): {m: float(np.mean([float(r[seed][m]) for r in runs.values()])) for m in names}
        for seed in seeds
    }

    def over(entries: Iterable[Mapping[str, Any]], stat: Callable[..., Any]) -> dict[str, float]:
        return {m: float(stat([e[m] for e in entries])) for m in names}

    entry: dict[str, Any] = {
        **over(per_seed.values(), np.mean),
        "n_samples": sum(int(r["n_samples"]) for r in per_split.values()),
        "n_classes": n_classes,
        "n_splits": len(runs),
        "std": over(per_split.values(), np.std),
        "per_split": per_split,
    }
    if len(seeds) > 1:
        seed_std = over(per_seed.values(), np.std)
        entry |= {"n_seeds": len(seeds), "seed_std": seed_std, "per_seed": per_seed}
    return entry
