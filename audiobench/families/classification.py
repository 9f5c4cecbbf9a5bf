"""Classification by probes trained on frozen embeddings.

A task names its probes (:data:`audiobench.probes.PROBES`): vector probes (``linear``,
``knn``, ``mlp``) train on one pooled embedding per clip, token probes (``attentive``,
``protobin``) on the encoder's unpooled frame sequences (``embed(..., pooled=False)``).
Token probes need an encoder whose output kind is ``sequence``; for any other encoder they
are skipped and the reason is written into the scores (``skipped_probes``). A subset's pooled
vectors are collated together (zero-padded to the longest, :func:`audiobench.pooling.collate`)
so that every split shares one feature space. All probes see the same clips: a clip left out
of the unpooled pass (``--on-error skip``) leaves the vector probes too, and is counted
(``details["splits"][subset]["n_dropped_unpooled"]``).

Data contract. Every clip carries a ``label`` (multi-label tasks: class names joined by
``label_separator``). The evaluation splits come from the first of these that applies:

1. ``folds`` declared by the task: each clip's ``metadata[fold_key]`` (ESC-50's ``fold``)
   must be one of them; leave-one-fold-out, one split per fold;
2. ``Clip.split`` values other than ``train`` (the dataset's own ``train`` / ``validation``
   / ``test``): one split; the validation part, when present, chooses hyper-parameters,
   otherwise probes use inner cross-validation on the training part;
3. otherwise ``generated_folds`` seeded folds, stratified by class; with ``grouped = True``
   they are group folds on ``Clip.group`` (no speaker or individual on both sides).

With ``grouped = True`` every split is checked for group leakage (a clip without a group
is an error); without it, a given split whose clips carry groups records how many groups
span several parts (``groups_in_several_parts``), for information. Every split is
checked for classes that occur in its validation or test part but never in its training
part: an error naming the task, the split (``fold-3``) and the class, never a silently
capped score.

Scores. ``main_score`` reads ``"<probe>:<metric>"`` (``"linear:accuracy"``,
``"linear:map"``): the metric of the task's primary probe, averaged over the splits (and,
for tasks with several subsets, over subsets, in ``aggregates["mean"]``). The primary
probe always runs. Multi-class metrics: ``accuracy``, ``balanced_accuracy``, ``f1_macro``,
``top_5_accuracy`` (only with more than 5 classes); multi-label: ``map`` (macro mAP),
``f1_micro``, ``f1_macro`` at threshold 0.5. Per probe, ``scores[subset][probe]`` holds
the mean over splits, their ``std`` (population), and every split's own report under
``per_split``. ``details`` records the protocol, each split's sizes, and each fitted
probe's configuration (fixed grid, selection scores, chosen values, seed).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from audiobench.audio import Clip
from audiobench.families.score_checks import count_problem, number_problem
from audiobench.pooling import collate
from audiobench.task import DEFAULT_SUBSET, Embedder, Task, TaskFamily, TaskScores

if TYPE_CHECKING:
    from audiobench.encoder import Encoder
    from audiobench.probes import Split

__all__ = [
    "MULTICLASS_METRICS",
    "MULTILABEL_METRICS",
    "ClassificationTask",
    "error_in_context",
    "parse_probe_score",
]

#: Metrics averaged over splits (multi-class); ``top_<k>_accuracy`` joins them when C > k.
MULTICLASS_METRICS: tuple[str, ...] = ("accuracy", "balanced_accuracy", "f1_macro")
#: Metrics averaged over splits (multi-label).
MULTILABEL_METRICS: tuple[str, ...] = ("map", "f1_micro", "f1_macro")
_COUNTS = ("n_samples", "n_classes", "n_splits", "n_classes_without_positives")


def parse_probe_score(spec: str) -> tuple[str, str]:
    """``"linear:accuracy"`` -> ("linear", "accuracy")."""
    probe, sep, metric = spec.partition(":")
    if not sep or not probe or not metric:
        raise ValueError(
            f"main score {spec!r} must read '<probe>:<metric>', e.g. 'linear:accuracy'"
        )
    return probe, metric


class ClassificationTask(Task):
    """Base class of probe-classification tasks; subclasses declare metadata and options."""

    family: ClassVar[TaskFamily] = TaskFamily.CLASSIFICATION
    #: Probes run by default (the primary probe of ``main_score`` is added when missing).
    probes: ClassVar[tuple[str, ...]] = ("linear", "knn")
    multilabel: ClassVar[bool] = False
    label_separator: ClassVar[str] = ","
    #: Declared cross-validation folds (as text); empty: the dataset has none.
    folds: ClassVar[tuple[str, ...]] = ()
    #: ``Clip.metadata`` key holding a clip's fold.
    fold_key: ClassVar[str] = "fold"
    #: No ``Clip.group`` (speaker, individual) on two sides of any split.
    grouped: ClassVar[bool] = False
    #: Seeded folds made when the dataset defines neither folds nor a test split.
    generated_folds: ClassVar[int] = 5
    #: Fixed keyword arguments per probe (e.g. ``{"mlp": {"epochs": 30}}``), recorded.
    probe_params: ClassVar[Mapping[str, Mapping[str, Any]]] = {}
    top_k: ClassVar[int] = 5
    #: Multi-label decision threshold on the probes' probabilities (F1 scores).
    threshold: ClassVar[float] = 0.5

    def __init__(
        self,
        *,
        probes: Sequence[str] | None = None,
        seed: int = 0,
        device: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        from audiobench.probes import PROBES

        primary, _ = parse_probe_score(self.metadata.main_score)
        names = tuple(dict.fromkeys([primary, *(probes if probes is not None else self.probes)]))
        unknown = [n for n in names if n not in PROBES]
        if unknown:
            raise ValueError(
                f"task {self.name}: unknown probe(s) {unknown}; known: {', '.join(PROBES)}"
            )
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ValueError(f"seed must be an integer, got {seed!r}")
        self.probe_names = names
        self.seed = seed
        self.device = device

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        meta = cls.__dict__.get("metadata")
        if meta is None:
            return
        from audiobench.probes import PROBES

        probe, metric = parse_probe_score(meta.main_score)
        if probe not in PROBES:
            raise ValueError(f"task {meta.name}: main score names unknown probe {probe!r}")
        known = _metric_names(cls.multilabel, cls.top_k)
        if metric not in known:
            raise ValueError(
                f"task {meta.name}: main score metric {metric!r} is not one of {list(known)}"
            )

    # ------------------------------------------------------------------ checks

    @classmethod
    def check_encoder(cls, encoder: Encoder) -> None:
        """A token-level primary probe needs frame sequences; nothing else is required."""
        from audiobench.probes import PROBES

        primary, _ = parse_probe_score(cls.metadata.main_score)
        reason = _token_skip_reason(encoder)
        if PROBES[primary].level == "token" and reason is not None:
            raise ValueError(f"task {cls.metadata.name}: primary probe {primary!r}: {reason}")

    @classmethod
    def score_problems(cls, scores: dict[str, Any]) -> list[str]:
        """Unknown subsets, probes and metrics, and values outside their range.

        Takes a result's ``scores`` (one entry per subset, ``default`` without subsets) or
        its ``aggregates`` (``mean`` over subsets). Metrics lie in [0, 1]; their spread over
        splits (``std``) in [0, 0.5]; counts are non-negative integers.
        """
        problems: list[str] = []
        declared = cls.metadata.subsets or (DEFAULT_SUBSET,)
        metrics = _metric_names(cls.multilabel, cls.top_k)
        for key, entry in scores.items():
            if key == "mean" and key not in declared:
                problems += _mean_problems(key, entry, metrics)
                continue
            if key not in declared:
                problems.append(f"{key}: unknown subset; the task declares {', '.join(declared)}")
            if not isinstance(entry, dict):
                problems.append(f"{key}: must be a mapping of probe names")
                continue
            for name, value in entry.items():
                here = f"{key}.{name}"
                if name == "skipped_probes":
                    problems += _skipped_problems(here, value)
                elif name not in _probe_names():
                    problems.append(f"{here}: unknown probe; known: {', '.join(_probe_names())}")
                else:
                    problems += _probe_entry_problems(here, value, metrics)
        return problems

    # ------------------------------------------------------------------ evaluation

    def evaluate(self, embedder: Embedder, clips: Sequence[Clip]) -> TaskScores:
        from audiobench.probes import PROBES

        if not clips:
            raise ValueError(f"task {self.name}: no clips to evaluate")
        reason = _token_skip_reason(embedder.encoder)
        skipped = {
            n: reason for n in self.probe_names if PROBES[n].level == "token" and reason is not None
        }
        run = tuple(n for n in self.probe_names if n not in skipped)
        per_subset: dict[str, dict[str, Any]] = {}
        split_details: dict[str, Any] = {}
        probe_details: dict[str, Any] = {}
        for subset, group in self.clips_by_subset(clips).items():
            entry, splits_info, configs = self._evaluate_subset(embedder, subset, group, run)
            if skipped:
                entry["skipped_probes"] = dict(skipped)
            per_subset[subset] = entry
            split_details[subset] = splits_info
            probe_details[subset] = configs
        primary, metric = parse_probe_score(self.metadata.main_score)
        aggregates: dict[str, dict[str, Any]] = {}
        if len(per_subset) > 1:
            aggregates["mean"] = _mean_over_subsets(per_subset)
            main = aggregates["mean"].get(primary, {}).get(metric)
        else:
            main = next(iter(per_subset.values())).get(primary, {}).get(metric)
        return TaskScores(
            main_score=main,
            scores=per_subset,
            aggregates=aggregates,
            details={
                "protocol": {
                    "probes": list(self.probe_names),
                    "primary_probe": primary,
                    "multilabel": self.multilabel,
                    "label_separator": self.label_separator if self.multilabel else None,
                    "grouped": self.grouped,
                    "folds": list(self.folds),
                    "fold_key": self.fold_key if self.folds else None,
                    "generated_folds": self.generated_folds,
                    "seed": self.seed,
                    "top_k": self.top_k,
                    "threshold": self.threshold if self.multilabel else None,
                    "probe_params": {k: dict(v) for k, v in self.probe_params.items()},
                },
                "splits": split_details,
                "probes": probe_details,
            },
        )

    def evaluation_splits(self, clips: Sequence[Clip]) -> tuple[str, list[Split]]:
        """How the probes split ``clips`` (one subset): the method and the checked splits.

        The method is ``"folds"``, ``"given"``, ``"grouped_folds"`` or ``"generated_folds"``
        (see the module docstring); split indices are positions in ``clips``.
        """
        where = f"task {self.name}"
        targets, class_names = self._targets(list(clips), where)
        return self._splits(list(clips), targets, class_names, where)

    def _evaluate_subset(
        self, embedder: Embedder, subset: str, clips: list[Clip], run: tuple[str, ...]
    ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        from audiobench.probes import PROBES

        where = f"task {self.name}" + (f", subset {subset}" if subset != DEFAULT_SUBSET else "")
        unlabelled = [c.id for c in clips if c.label is None]
        if unlabelled:
            raise ValueError(
                f"{where}: {len(unlabelled)} clip(s) have no label: {_ids(unlabelled)}"
            )
        vector = [n for n in run if PROBES[n].level == "vector"]
        token = [n for n in run if PROBES[n].level == "token"]
        label = f"{self.name}" + (f" {subset}" if subset != DEFAULT_SUBSET else "")
        kept = clips
        vectors: list[np.ndarray] = []
        frames: list[np.ndarray] = []
        if vector:
            kept, vectors = embedder.embed(clips, label)
        n_dropped_unpooled = 0
        if token:
            kept_frames, frames = embedder.embed(kept, f"{label} frames", pooled=False)
            if len(kept_frames) != len(kept):
                # All probes see the same clips: drop those the unpooled pass left out.
                ids = {c.id for c in kept_frames}
                n_dropped_unpooled = len(kept) - len(kept_frames)
                vectors = [v for c, v in zip(kept, vectors, strict=True) if c.id in ids]
                kept = kept_frames
        if len(kept) < 2:
            raise ValueError(f"{where}: fewer than 2 clips left to evaluate")
        _check_finite(kept, vectors, frames, where)
        targets, class_names = self._targets(kept, where)
        method, splits = self._splits(kept, targets, class_names, where)
        X = collate(vectors) if vector else None
        results: dict[str, dict[str, dict[str, Any]]] = {n: {} for n in run}
        configs: dict[str, dict[str, Any]] = {n: {} for n in run}
        bar = embedder.track(f"{label} probes", len(splits) * len(run), "fits")
        try:
            for split in splits:
                for name in run:
                    inputs = X if PROBES[name].level == "vector" else frames
                    report, config = self._fit_and_score(
                        name, inputs, targets, class_names, split, where
                    )
                    results[name][split.name] = report
                    configs[name][split.name] = config
                    bar.advance(1)
        finally:
            bar.close()
        entry = {
            name: _average_splits(results[name], self._metrics(), len(class_names)) for name in run
        }
        info: dict[str, Any] = {
            "method": method,
            "n_clips": len(kept),
            "n_classes": len(class_names),
            "splits": {
                s.name: {
                    "n_train": int(s.train.size),
                    "n_validation": 0 if s.validation is None else int(s.validation.size),
                    "n_test": int(s.test.size),
                }
                for s in splits
            },
        }
        if n_dropped_unpooled:
            info["n_dropped_unpooled"] = n_dropped_unpooled
        if method == "given" and not self.grouped:
            shared = _groups_in_several_parts(kept, splits[0])
            if shared is not None:
                info["groups_in_several_parts"] = shared
        return entry, info, configs

    def _metrics(self) -> tuple[str, ...]:
        return MULTILABEL_METRICS if self.multilabel else MULTICLASS_METRICS

    def _targets(self, clips: list[Clip], where: str) -> tuple[Any, list[str]]:
        """Multi-class: the label strings and sorted class names; multi-label: indicator rows."""
        if not self.multilabel:
            labels = [str(c.label) for c in clips]
            return labels, sorted(set(labels))
        sets = []
        empty = []
        for clip in clips:
            names = {p.strip() for p in str(clip.label).split(self.label_separator)} - {""}
            if not names:
                empty.append(clip.id)
            sets.append(names)
        if empty:
            raise ValueError(
                f"{where}: {len(empty)} clip(s) have an empty label list: {_ids(empty)}"
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
        from audiobench.probes import (
            check_split,
            fold_splits,
            grouped_folds,
            split_from_labels,
        )

        groups: list[str] | None = None
        if self.grouped:
            missing = [c.id for c in clips if c.group is None]
            if missing:
                raise ValueError(
                    f"{where}: grouped splits need a group (speaker, individual) for every "
                    f"clip; {len(missing)} have none: {_ids(missing)}"
                )
            groups = [str(c.group) for c in clips]
        split_values = {c.split for c in clips}
        try:
            if self.folds:
                method = "folds"
                splits = fold_splits(self._fold_ids(clips, where))
            elif split_values - {"train", None}:
                method = "given"
                splits = [split_from_labels([c.split for c in clips])]  # type: ignore[misc]
            else:
                method = "grouped_folds" if self.grouped else "generated_folds"
                splits = grouped_folds(
                    targets,
                    groups if groups is not None else [c.id for c in clips],
                    n_splits=self.generated_folds,
                    seed=self.seed,
                    multilabel=self.multilabel,
                )
            for split in splits:
                check_split(
                    split,
                    targets,
                    groups,
                    multilabel=self.multilabel,
                    class_names=class_names if self.multilabel else None,
                )
        except ValueError as exc:
            raise error_in_context(exc, where) from exc
        return method, splits

    def _fold_ids(self, clips: list[Clip], where: str) -> list[int | str]:
        """Each clip's fold, checked against the declared ones (integers when all are)."""
        declared = {str(f) for f in self.folds}
        values = [c.metadata.get(self.fold_key) for c in clips]
        missing = [c.id for c, v in zip(clips, values, strict=True) if v is None or v == ""]
        if missing:
            raise ValueError(
                f"{where}: {len(missing)} clip(s) have no {self.fold_key!r}: {_ids(missing)}"
            )
        text = [str(v) for v in values]
        odd = sorted({v for v in text if v not in declared})
        if odd:
            raise ValueError(
                f"{where}: fold value(s) {odd} are not among the declared folds {sorted(declared)}"
            )
        if all(v.lstrip("-").isdigit() for v in text):
            return [int(v) for v in text]  # numeric order: fold-2 before fold-10
        return list(text)

    def _fit_and_score(
        self,
        name: str,
        inputs: Any,
        targets: Any,
        class_names: list[str],
        split: Split,
        where: str,
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        from audiobench.metrics import classification_scores
        from audiobench.probes import PROBES, make_probe
        from audiobench.probes.neural import TorchProbe

        kwargs: dict[str, Any] = dict(self.probe_params.get(name, {}))
        if issubclass(PROBES[name], TorchProbe) and self.device is not None:
            kwargs.setdefault("device", self.device)
        probe = make_probe(name, multilabel=self.multilabel, seed=self.seed, **kwargs)

        def part(values: Any, index: np.ndarray) -> Any:
            if isinstance(values, np.ndarray):
                return values[index]
            return [values[int(i)] for i in index]

        fit_kwargs: dict[str, Any] = {}
        if split.validation is not None:
            fit_kwargs = {
                "X_val": part(inputs, split.validation),
                "y_val": part(targets, split.validation),
            }
        try:
            with _blas_threads(inputs), warnings.catch_warnings():
                # Cached embeddings are read-only; the torch probes only read them, so
                # torch's "not writable" warning is a false alarm (copying would double
                # the memory of frame sequences).
                warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
                probe.fit(part(inputs, split.train), part(targets, split.train), **fit_kwargs)
                scores = probe.predict_scores(part(inputs, split.test))
        except ValueError as exc:
            raise error_in_context(exc, f"{where}, split {split.name!r}, probe {name!r}") from exc
        y_test = part(targets, split.test)
        if self.multilabel:
            report = classification_scores(
                y_test,
                scores,
                multilabel=True,
                classes=class_names,
                top_k=self.top_k,
                threshold=self.threshold,
            )
        else:
            report = classification_scores(
                y_test, scores, classes=[str(c) for c in probe.classes_], top_k=self.top_k
            )
        return report, probe.config()


# ---------------------------------------------------------------------- helpers


def _ids(ids: Sequence[str]) -> str:
    from audiobench.metrics.validation import describe_clips

    return describe_clips(list(ids))


def error_in_context(exc: ValueError, where: str) -> ValueError:
    """The same kind of error, its message prefixed with where it happened."""
    from audiobench.metrics.errors import InvalidEmbeddingsError
    from audiobench.probes import GroupLeakError, MissingClassError

    message = f"{where}: {exc}"
    if isinstance(exc, MissingClassError):
        return MissingClassError(message, exc.classes, exc.split)
    if isinstance(exc, GroupLeakError):
        return GroupLeakError(message, exc.groups, exc.split)
    if isinstance(exc, InvalidEmbeddingsError):
        return InvalidEmbeddingsError(message, exc.clip_ids)
    try:
        return type(exc)(message)
    except TypeError:  # an exception type with a richer constructor
        return ValueError(message)


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

        return threadpool_limits(limits=1, user_api="blas")
    return nullcontext()


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


def _check_finite(
    clips: list[Clip], vectors: list[np.ndarray], frames: list[np.ndarray], where: str
) -> None:
    """Embeddings must be finite; the error names the clips by id."""
    from audiobench.metrics.validation import invalid_clips_error

    for arrays, what in ((vectors, "embeddings"), (frames, "frame sequences")):
        bad = [i for i, a in enumerate(arrays) if not np.isfinite(a).all()]
        if bad:
            raise invalid_clips_error(
                f"{where}: {what} contain NaN or infinite values", bad, [c.id for c in clips]
            )


def _metric_names(multilabel: bool, top_k: int) -> tuple[str, ...]:
    if multilabel:
        return MULTILABEL_METRICS
    return (*MULTICLASS_METRICS, f"top_{top_k}_accuracy")


def _average_splits(
    reports: dict[str, dict[str, Any]], metrics: tuple[str, ...], n_classes: int
) -> dict[str, Any]:
    """Mean and population std over splits of every metric present in all of them."""
    first = next(iter(reports.values()))
    names = [m for m in first if m not in _COUNTS]
    names = [m for m in names if all(m in r for r in reports.values())]
    entry: dict[str, Any] = {}
    std: dict[str, float] = {}
    for metric in names:
        values = [float(r[metric]) for r in reports.values()]
        entry[metric] = float(np.mean(values))
        std[metric] = float(np.std(values))
    entry["n_samples"] = int(sum(int(r["n_samples"]) for r in reports.values()))
    entry["n_classes"] = n_classes
    entry["n_splits"] = len(reports)
    entry["std"] = std
    entry["per_split"] = reports
    assert set(metrics) <= set(entry), (metrics, entry)
    return entry


def _mean_over_subsets(per_subset: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Unweighted mean over subsets of every probe's metrics (None if a subset lacks one)."""
    subsets = list(per_subset)
    mean: dict[str, Any] = {"subsets": subsets}
    probes = [p for p in per_subset[subsets[0]] if p != "skipped_probes"]
    for probe in probes:
        entry = per_subset[subsets[0]][probe]
        metrics = [m for m in entry if m not in _COUNTS and m not in ("std", "per_split")]
        mean[probe] = {}
        for metric in metrics:
            values = [per_subset[s].get(probe, {}).get(metric) for s in subsets]
            mean[probe][metric] = None if any(v is None for v in values) else float(np.mean(values))
    return mean


def _groups_in_several_parts(clips: list[Clip], split: Split) -> int | None:
    """How many groups have clips in more than one part of a given split (None: no groups)."""
    owner: dict[str, set[str]] = {}
    for part, indices in split.parts().items():
        for i in indices.tolist():
            group = clips[i].group
            if group is not None:
                owner.setdefault(group, set()).add(part)
    if not owner:
        return None
    return sum(1 for parts in owner.values() if len(parts) > 1)


def _probe_names() -> tuple[str, ...]:
    from audiobench.probes import PROBES

    return tuple(PROBES)


def _report_problems(where: str, report: Any, metrics: tuple[str, ...]) -> list[str]:
    """One metrics mapping: known metric names in [0, 1], counts non-negative integers."""
    if not isinstance(report, dict):
        return [f"{where}: must be a mapping of metric names"]
    problems: list[str] = []
    for key, value in report.items():
        if key in metrics:
            problems += number_problem(f"{where}.{key}", value, 0.0, 1.0)
        elif key in _COUNTS:
            problems += count_problem(f"{where}.{key}", value)
        else:
            problems.append(f"{where}.{key}: unknown metric; known: {', '.join(metrics)}")
    return problems


def _probe_entry_problems(where: str, entry: Any, metrics: tuple[str, ...]) -> list[str]:
    if not isinstance(entry, dict):
        return [f"{where}: must be a mapping of metric names"]
    flat = {k: v for k, v in entry.items() if k not in ("std", "per_split")}
    problems = _report_problems(where, flat, metrics)
    std = entry.get("std", {})
    if not isinstance(std, dict):
        problems.append(f"{where}.std: must be a mapping of metric names")
    else:
        for key, value in std.items():
            if key not in metrics:
                problems.append(f"{where}.std.{key}: unknown metric")
            else:
                problems += number_problem(f"{where}.std.{key}", value, 0.0, 0.5)
    per_split = entry.get("per_split", {})
    if not isinstance(per_split, dict):
        problems.append(f"{where}.per_split: must be a mapping of split names")
    else:
        for split, report in per_split.items():
            problems += _report_problems(f"{where}.per_split.{split}", report, metrics)
    return problems


def _skipped_problems(where: str, value: Any) -> list[str]:
    if not isinstance(value, dict):
        return [f"{where}: must map probe names to reasons"]
    return [
        f"{where}.{name}: unknown probe or a reason that is not text"
        for name, reason in value.items()
        if name not in _probe_names() or not isinstance(reason, str)
    ]


def _mean_problems(where: str, entry: Any, metrics: tuple[str, ...]) -> list[str]:
    if not isinstance(entry, dict):
        return [f"{where}: must be a mapping"]
    problems: list[str] = []
    subsets = entry.get("subsets")
    if not isinstance(subsets, list) or not all(isinstance(s, str) for s in subsets):
        problems.append(f"{where}.subsets: must be a list of subset names")
    for name, value in entry.items():
        if name == "subsets":
            continue
        if name not in _probe_names():
            problems.append(f"{where}.{name}: unknown probe")
        else:
            problems += _report_problems(f"{where}.{name}", value, metrics)
    return problems
