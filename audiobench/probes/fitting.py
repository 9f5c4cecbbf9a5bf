"""Fitting a task's probes: every probe on every split, once per seed, and their entries.

:func:`fit_probes` fits each probe on each split of a subset and tests it there
(:func:`fit_seeds`: a token probe once per seed, the first seed choosing its
hyper-parameters); :func:`probe_entry` averages a probe's test reports into its entry (mean
over splits of each seed, then over seeds; spreads across splits and across seeds).
:class:`FitSettings` holds what a task's options say about fitting, typed once.
"""

from __future__ import annotations

import sys
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from itertools import product
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np

from audiobench.task import error_in_context

if TYPE_CHECKING:
    from audiobench.probes.base import FitProgress, ProbeLevel, ProgressCallback
    from audiobench.probes.splits import Split

__all__ = ["FitLines", "FitSettings", "fit_probes", "fit_seeds", "n_fits", "probe_entry"]

#: probe -> split -> seed -> the split's test report (metric -> value, and sizes).
Runs = dict[str, dict[str, dict[int, dict[str, Any]]]]


@dataclass(frozen=True)
class FitSettings:
    """How a task's probes are built, fitted and tested."""

    multilabel: bool
    #: Seed of every probe (a token probe's seeds are ``seed``, ``seed + 1``, ...).
    seed: int
    #: Seeds each token probe is trained with.
    token_seeds: int = 1
    #: Token probes follow the probing paper's recipe (:func:`~.paper.paper_params`).
    paper: bool = False
    search: Literal["grid", "paper"] = "grid"
    trials: int = 50
    #: Fixed keyword arguments per probe name.
    probe_params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    top_k: int = 5
    threshold: float = 0.5
    #: Torch device of the neural probes (None: theirs).
    device: str | None = None


def n_fits(levels: Mapping[str, ProbeLevel], n_splits: int, settings: FitSettings) -> int:
    """Fits :func:`fit_probes` makes: a token probe's per seed, on every split."""
    return n_splits * sum(settings.token_seeds if v == "token" else 1 for v in levels.values())


def fit_probes(
    levels: Mapping[str, ProbeLevel],
    inputs: Mapping[str, Any],
    targets: Any,
    splits: Sequence[Split],
    settings: FitSettings,
    *,
    where: str,
    lines: FitLines,
    bar: Any,
    groups: list[str] | None = None,
    token_splits: Mapping[str, Split] | None = None,
) -> tuple[Runs, dict[str, dict[str, Any]]]:
    """Each probe of ``levels`` fitted on each split of ``splits`` (a token probe on its
    ``token_splits`` entry, where one is given), split by split.

    ``inputs`` holds the inputs of each level (``"vector"``: a matrix, ``"token"``: the token
    maps); ``bar`` advances once per fit. Returns the test reports (probe -> split -> seed ->
    report) and the fitted configurations (probe -> split -> configuration).
    """
    results: Runs = {n: {} for n in levels}
    configs: dict[str, dict[str, Any]] = {n: {} for n in levels}
    for split, name in product(splits, levels):
        token = levels[name] == "token"
        used = (token_splits or {}).get(split.name, split) if token else split
        results[name][split.name], configs[name][split.name] = fit_seeds(
            name, inputs[levels[name]], targets, used, settings, where, lines, bar, groups
        )
    return results, configs


def fit_seeds(
    name: str,
    X: Any,
    y: Any,
    split: Split,
    settings: FitSettings,
    where: str,
    lines: FitLines,
    bar: Any,
    groups: list[str] | None = None,
) -> tuple[dict[int, dict[str, Any]], dict[str, Any]]:
    """Probe ``name`` fitted on ``split`` of inputs ``X`` and targets ``y`` once per seed:
    each seed's test report, and the probe's configuration (seed -> configuration with
    several seeds). The first seed chooses the hyper-parameters (a token probe's learning
    rate and weight decay); the other seeds reuse its choice."""
    from audiobench.metrics import classification_scores
    from audiobench.probes.base import subset as part
    from audiobench.probes.neural import TorchProbe
    from audiobench.probes.paper import paper_params
    from audiobench.probes.registry import make_probe, probe_class, probe_level

    s, level = settings, probe_level(name)
    paper = s.paper and level == "token"
    kwargs = (
        paper_params(name, multilabel=s.multilabel, search=s.search, trials=s.trials)
        if paper
        else {}
    )
    kwargs |= s.probe_params.get(name, {})
    if issubclass(probe_class(name), TorchProbe) and s.device is not None:
        kwargs.setdefault("device", s.device)
    train = part(X, split.train), part(y, split.train)
    val = split.validation
    held_out = {} if val is None else {"X_val": part(X, val), "y_val": part(y, val)}
    n_seeds = s.token_seeds if level == "token" else 1
    context = f"{where}, split {split.name!r}, probe {name!r}"
    reports: dict[int, dict[str, Any]] = {}
    configs: dict[str, Any] = {}
    for seed in range(s.seed, s.seed + n_seeds):
        label = f"{split.name} {name}" + (f" seed {seed}" if n_seeds > 1 else "")
        probe = make_probe(name, multilabel=s.multilabel, seed=seed, **kwargs)
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
            multilabel=s.multilabel,
            classes=[str(c) for c in probe.classes_],
            top_k=s.top_k,
            threshold=s.threshold,
        )
        metric = "map" if s.multilabel else "accuracy"
        lines.say(f"{label}: {metric} {report[metric]:.4f} ({time.perf_counter() - t0:.1f} s)")
        configs[str(seed)] = probe.config()
        if isinstance(probe, TorchProbe) and seed == s.seed:
            kwargs |= probe.fixed_choice()
        bar.advance(1)
    return reports, configs if n_seeds > 1 else configs[str(s.seed)]


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


class FitLines:
    """A line per probe fit on stderr, and one every :attr:`every` seconds inside a long fit.

    Lines rather than a redrawn bar, so that they reach a log file too; while a live progress
    display runs in a terminal it prints them above its bars. Silent when ``progress`` is
    None (the embedder's: ``--no-progress``, tests).
    """

    every: float = 30.0

    def __init__(self, progress: object, label: str) -> None:
        self.active = progress is not None
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


#: Keys of a split's report that are sizes, not metrics.
_COUNTS = ("n_samples", "n_classes", "n_classes_without_positives")


def probe_entry(runs: dict[str, dict[int, dict[str, Any]]], n_classes: int) -> dict[str, Any]:
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
