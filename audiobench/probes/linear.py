"""Linear probe: standardised features and an L2-regularised logistic regression.

The standard linear evaluation of frozen embeddings. Features are standardised with the
training clips' mean and standard deviation (logistic regression's regularisation and solver
are scale-sensitive; embeddings from different models differ wildly in scale). Multi-class
uses the multinomial (softmax) model; multi-label one binary model per class (one-vs-rest).

The inverse regularisation strength C comes from a fixed log-spaced grid, chosen by accuracy
(multi-label: micro-averaged average precision) on the validation split when one is given,
else by seeded stratified inner cross-validation on the training clips (the scaler is refitted
inside each fold; group folds when ``fit`` is given groups: no speaker on both sides); ties
go to the smaller C (the stronger regularisation). The chosen model is then fitted on the
training clips. ``seed`` fixes the inner folds.

Every fit minimises scikit-learn's ``LogisticRegression`` objective (lbfgs; ``tol``,
``max_iter``), computed by :mod:`audiobench.probes.logistic`. Two solvers:

- ``"preconditioned"`` (default): the standardised features written in an eigenbasis of their
  covariance (or of the training rows' span when wide; :mod:`audiobench.probes.design`, exact),
  L-BFGS in coordinates where the objective's Hessian starts near the identity, and along the
  C grid each fit starts at the previous C's optimum (ascending C, in two chains per fold: the
  smaller and the larger half of the grid). Same objective and optimum; fits stop near the
  optimum rather than where the raw gradient is small (at large C the two differ, see
  :mod:`audiobench.probes.logistic`). The search's fits, which only rank the C values, compute
  their two products per step in float32 (three times faster; on the benchmark data their
  selection scores equal float64's); the final model is fitted in float64;
- ``"lbfgs"``: scikit-learn's own iterates (from zero, raw coefficients), up to rounding, with
  the row-space reduction for wide inputs (features at least twice the training clips).

What makes real-sized inputs fast, besides the solver:

- the fits of the search are independent per inner fold and run on all usable cores, one
  BLAS thread each (many small products gain nothing from threaded BLAS, and on a busy
  machine its threads wait on each other); the numbers do not depend on how many run at once;
- each fold is standardised once for the whole grid, not once per C, and the eigenbasis of the
  training clips' covariance is computed once and shared by the inner folds;
- with ``device="cuda"`` the loss and gradient run on the GPU.

``fit(..., progress=callback)`` reports every fit as it finishes (:class:`FitProgress`).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np

from audiobench.probes.base import (
    Inputs,
    Probe,
    ProbeLevel,
    ProgressCounter,
    inner_cv_folds,
    select_best,
    selection_metric,
    selection_score,
)
from audiobench.probes.design import Design, prepare_design
from audiobench.probes.logistic import LogisticFit, fit_logistic, logistic_scores

if TYPE_CHECKING:
    import torch

__all__ = ["DEFAULT_C_GRID", "LinearProbe"]

#: Inverse regularisation strengths searched: 1e-4 … 1e4, one per decade. On standardised
#: features this spans "nearly constant" to "nearly unregularised".
DEFAULT_C_GRID: tuple[float, ...] = tuple(float(c) for c in np.logspace(-4, 4, 9))

Solver = Literal["preconditioned", "lbfgs"]


@dataclass(frozen=True)
class _Head:
    """One fitted classifier on a design's features.

    Multi-class: the model over the classes present in the fit (``present``, codes into the
    probe's classes). Multi-label: one model per class, or that class's constant value when
    the fit's clips all agree on it.
    """

    present: np.ndarray
    models: tuple[LogisticFit | float, ...]

    @property
    def n_iter(self) -> list[int]:
        return [m.n_iter for m in self.models if isinstance(m, LogisticFit)]


@dataclass(frozen=True)
class _FitSet:
    """Training rows (and the held-out rows that score them) of one search fold."""

    train: np.ndarray
    targets: np.ndarray
    evaluation: np.ndarray
    eval_targets: np.ndarray
    label: str


class LinearProbe(Probe):
    """Logistic-regression probe on standardised clip embeddings.

    Parameters
    ----------
    C:
        A fixed inverse regularisation strength (no search), or ``None`` to choose from
        ``C_grid``.
    C_grid:
        Values searched when ``C`` is ``None``.
    max_iter:
        L-BFGS-B iterations per fit. A weakly regularised fit on separable data may stop at
        the limit without harm (recorded as ``converged`` in ``config()``).
    tol:
        L-BFGS-B's gradient tolerance (in the solver's coordinates, see the module docstring).
    solver:
        ``"preconditioned"`` (default) or ``"lbfgs"`` (scikit-learn's iterates).
    n_splits:
        Inner cross-validation folds when no validation split is given.
    device:
        ``None`` or ``"cpu"``: NumPy on the CPU. A CUDA device: the loss and gradient (and the
        basis change's products) run there, in float64.
    n_jobs:
        Fits run at once on the CPU (``None``: the usable cores). Does not change results.
    multilabel, seed:
        See :class:`Probe`.
    """

    name: ClassVar[str] = "linear"
    level: ClassVar[ProbeLevel] = "vector"
    accepts_device: ClassVar[bool] = True

    def __init__(
        self,
        *,
        C: float | None = None,
        C_grid: Sequence[float] = DEFAULT_C_GRID,
        max_iter: int = 1000,
        tol: float = 1e-4,
        solver: Solver = "preconditioned",
        n_splits: int = 5,
        device: str | torch.device | None = None,
        n_jobs: int | None = None,
        multilabel: bool = False,
        seed: int = 0,
    ) -> None:
        super().__init__(multilabel=multilabel, seed=seed)
        grid = tuple(float(value) for value in ([C] if C is not None else C_grid))
        if not grid or any(not value > 0 for value in grid):
            raise ValueError(f"C values must be positive, got {grid}")
        if max_iter < 1:
            raise ValueError(f"max_iter must be positive, got {max_iter}")
        if solver not in ("preconditioned", "lbfgs"):
            raise ValueError(f"solver must be 'preconditioned' or 'lbfgs', got {solver!r}")
        if n_splits < 2:
            raise ValueError(f"n_splits must be at least 2, got {n_splits}")
        if n_jobs is not None and n_jobs < 1:
            raise ValueError(f"n_jobs must be positive, got {n_jobs}")
        self.C = None if C is None else float(C)
        self.C_grid: tuple[float, ...] = tuple(sorted(set(grid)))
        self.max_iter = int(max_iter)
        self.tol = float(tol)
        self.solver: Solver = solver
        self.n_splits = int(n_splits)
        self.device = device
        self.n_jobs = n_jobs
        self._mean: np.ndarray | None = None
        self._scale: np.ndarray | None = None
        self._head: _Head | None = None
        self._weights: list[tuple[np.ndarray, np.ndarray] | float] = []
        self._n_classes = 0
        self._chosen_C: float | None = None
        self._converged: bool | None = None
        self._rank: int | None = None
        self._selection: dict[str, Any] | None = None

    @property
    def _preconditioned(self) -> bool:
        return self.solver == "preconditioned"

    # ------------------------------------------------------------------ fitting

    def _design(
        self,
        train: np.ndarray,
        evaluation: np.ndarray | None,
        device: torch.device | None,
        *,
        keep_lift: bool = False,
        basis: np.ndarray | None = None,
    ) -> Design:
        return prepare_design(
            train,
            evaluation,
            device=device,
            keep_lift=keep_lift,
            eigenbasis=self._preconditioned,
            basis=basis if self._preconditioned else None,
        )

    def _train(
        self, design: Design, targets: np.ndarray, C: float, start: _Head | None = None
    ) -> _Head | None:
        """Fit one model on a design (from ``start`` when given); ``None`` when a multi-class
        fold holds a single class."""
        options: dict[str, Any] = {
            "C": C,
            "max_iter": self.max_iter,
            "tol": self.tol,
            "second_moments": design.second_moments if self._preconditioned else None,
        }
        if self.multilabel:
            models: list[LogisticFit | float] = []
            for j, column in enumerate(targets.T):
                if column.min() == column.max():
                    # One-vs-rest predicts a class constant within the fold as that constant.
                    models.append(float(column[0]))
                    continue
                previous = None if start is None else start.models[j]
                models.append(
                    fit_logistic(
                        design.train,
                        column,
                        binary=True,
                        start=previous if isinstance(previous, LogisticFit) else None,
                        **options,
                    )
                )
            return _Head(np.arange(targets.shape[1]), tuple(models))
        present = np.unique(targets)
        if present.size < 2:
            return None
        codes = np.searchsorted(present, targets)
        binary = present.size == 2
        warm = None if start is None else start.models[0]
        return _Head(
            present,
            (
                fit_logistic(
                    design.train,
                    codes,
                    binary=binary,
                    start=warm if isinstance(warm, LogisticFit) else None,
                    **options,
                ),
            ),
        )

    def _head_scores(self, head: _Head, features: np.ndarray | torch.Tensor) -> np.ndarray:
        """Probabilities ``[n, C]`` over all training classes (absent ones score 0)."""
        n = int(features.shape[0])
        if self.multilabel:
            columns = [
                np.full(n, model) if isinstance(model, float) else logistic_scores(model, features)
                for model in head.models
            ]
            return np.stack(columns, axis=1)
        (model,) = head.models
        assert isinstance(model, LogisticFit)
        proba = logistic_scores(model, features)
        if model.binary:
            proba = np.stack([1.0 - proba, proba], axis=1)
        full = np.zeros((n, self._n_classes), dtype=np.float64)
        full[:, head.present] = proba
        return full

    def _device(self) -> torch.device | None:
        if self.device is None:
            return None
        from audiobench.metrics.runtime import resolve_device

        device = resolve_device(self.device)
        return None if device.type == "cpu" else device

    def _search(
        self,
        fit_sets: list[_FitSet],
        device: torch.device | None,
        report: ProgressCounter,
        basis: np.ndarray | None,
        keep: Design | None = None,
    ) -> tuple[np.ndarray, list[_Head | None]]:
        """Selection scores ``[fold, C]``: every fold's fits along the grid, on all workers.

        The preconditioned solver runs each fold's grid as two chains (the smaller half of
        the C values and the larger half), each in ascending C with every fit starting at the
        previous one's optimum: two chains per fold keep two or more cores busy to the end,
        and the split does not depend on the number of workers, so neither do the numbers.
        The plain solver starts every fit at zero, each its own task. Fits report to the
        calling thread as they finish. With ``keep`` (the design of the one fit set), the
        heads of that fit set are returned too, one per C.
        """
        n_grid = len(self.C_grid)
        if not self._preconditioned:
            segments = [(j, j + 1) for j in range(n_grid)]
        elif n_grid >= 4:
            segments = [(0, n_grid // 2), (n_grid // 2, n_grid)]
        else:
            segments = [(0, n_grid)]
        scores = np.full((len(fit_sets), n_grid), np.nan)
        heads: list[_Head | None] = [None] * n_grid
        events: queue.Queue[tuple[int, int, float] | BaseException] = queue.Queue()
        designs: dict[int, Design] = {}
        remaining = [len(segments)] * len(fit_sets)
        locks = [threading.Lock() for _ in fit_sets]

        def design_of(index: int) -> Design:
            with locks[index]:
                if index not in designs:
                    fit_set = fit_sets[index]
                    design = keep or self._design(
                        fit_set.train, fit_set.evaluation, device, basis=basis
                    )
                    designs[index] = self._search_precision(design)
                return designs[index]

        def release(index: int) -> None:
            with locks[index]:
                remaining[index] -= 1
                if not remaining[index]:
                    designs.pop(index, None)  # free the fold's features once its grid is done

        def run(index: int, first: int, stop: int) -> None:
            try:
                fit_set = fit_sets[index]
                design = design_of(index)
                previous: _Head | None = None
                for j in range(first, stop):
                    C = self.C_grid[j]
                    head = self._train(design, fit_set.targets, C, previous)
                    if head is None:
                        events.put((index, j, float("nan")))
                        continue
                    if self._preconditioned:
                        previous = head
                    if keep is not None:
                        heads[j] = head
                    assert design.evaluation is not None
                    scores_j = self._head_scores(head, design.evaluation)
                    events.put((index, j, selection_score(fit_set.eval_targets, scores_j)))
                release(index)
            except BaseException as exc:  # handed to the calling thread
                events.put(exc)

        tasks = [(i, first, stop) for i in range(len(fit_sets)) for first, stop in segments]
        workers = self._workers(len(tasks), device)
        with _one_blas_thread(workers > 1), ThreadPoolExecutor(workers) as pool:
            futures = [pool.submit(run, *task) for task in tasks]
            for _ in range(len(fit_sets) * n_grid):
                event = events.get()
                if isinstance(event, BaseException):
                    for future in futures:
                        future.cancel()
                    raise event
                i, j, score = event
                scores[i, j] = score
                report(f"C={self.C_grid[j]:g}, {fit_sets[i].label}", score=score)
        return scores, heads

    def _search_precision(self, design: Design) -> Design:
        """The search's copy of a design: float32 features for the preconditioned solver on
        the CPU (its fits only rank the C values; see the module docstring), else as is."""
        if not self._preconditioned or not isinstance(design.train, np.ndarray):
            return design
        evaluation = design.evaluation
        return replace(
            design,
            train=design.train.astype(np.float32),
            evaluation=None if evaluation is None else np.asarray(evaluation, dtype=np.float32),
        )

    def _workers(self, n_tasks: int, device: torch.device | None) -> int:
        if device is not None:
            return 1  # one accelerator: the fits queue on it anyway
        from audiobench.metrics.runtime import available_cores

        return max(1, min(n_tasks, self.n_jobs or available_cores()))

    def _fit(
        self,
        inputs: Inputs,
        targets: np.ndarray,
        n_classes: int,
        validation: tuple[Inputs, np.ndarray] | None,
    ) -> None:
        assert isinstance(inputs, np.ndarray)
        device = self._device()
        self._n_classes = n_classes
        n_splits: int | None = None
        scores: list[float] = []
        fit_sets: list[_FitSet] = []
        design: Design | None = None
        heads: list[_Head | None] = []
        if len(self.C_grid) == 1:
            method = "fixed"
        elif validation is not None:
            method = "validation"
            val_inputs, val_targets = validation
            assert isinstance(val_inputs, np.ndarray)
            fit_sets = [_FitSet(inputs, targets, val_inputs, val_targets, "validation")]
            # One fit set, the training clips: its design also serves the final model.
            design = self._design(inputs, val_inputs, device, keep_lift=True)
        else:
            method = "inner_cv"
            folds = inner_cv_folds(
                targets, n_splits=self.n_splits, seed=self.seed, groups=self.fit_groups
            )
            n_splits = len(folds)
            fit_sets = [
                _FitSet(
                    inputs[tr], targets[tr], inputs[te], targets[te], f"inner fold {k}/{n_splits}"
                )
                for k, (tr, te) in enumerate(folds, start=1)
            ]
        report = self._progress_counter(len(fit_sets) * len(self.C_grid) + 1)
        n_rows, dim = inputs.shape
        if design is None and method == "inner_cv" and self._preconditioned and dim <= n_rows:
            # The final design first: its eigenbasis serves the inner folds too.
            design = self._design(inputs, None, device, keep_lift=True)
        if fit_sets:
            basis = design.basis if design is not None else None
            keep = design if method == "validation" else None
            per_fold, heads = self._search(fit_sets, device, report, basis, keep)
            scores = [
                float(np.nanmean(column)) if np.isfinite(column).any() else float("nan")
                for column in per_fold.T
            ]
        chosen = (
            self.C_grid[0]
            if method == "fixed"
            else select_best(self.C_grid, scores, prefer="first")
        )
        if design is None:
            design = self._design(inputs, None, device, keep_lift=True)
        # The final model in full precision, from a start near its optimum when there is one:
        # the validation method's search fit at the chosen C (on the same clips), else a
        # float32 fit (the preconditioned solver; the plain one starts at zero).
        start = heads[self.C_grid.index(chosen)] if method == "validation" else None
        if start is None and self._preconditioned and isinstance(design.train, np.ndarray):
            start = self._train(self._search_precision(design), targets, chosen)
        head = self._train(design, targets, chosen, start if self._preconditioned else None)
        assert head is not None  # fit() guarantees at least two training classes
        report(f"final fit, C={chosen:g}")
        self._mean, self._scale, self._rank = design.mean, design.scale, design.rank
        self._weights = [
            model if isinstance(model, float) else (design.lift(model.coef), model.intercept)
            for model in head.models
        ]
        self._head = head
        self._converged = all(count < self.max_iter for count in head.n_iter)
        self._chosen_C = float(chosen)
        self._selection = {
            "method": method,
            "metric": None if method == "fixed" else selection_metric(self.multilabel),
            "n_splits": n_splits,
            "scores": [{"C": c, "score": s} for c, s in zip(self.C_grid, scores, strict=False)],
            "tie_break": "smaller C",
        }

    # ------------------------------------------------------------------ prediction

    def _predict_scores(self, inputs: Inputs) -> np.ndarray:
        assert isinstance(inputs, np.ndarray) and self._head is not None
        assert self._mean is not None and self._scale is not None
        features = inputs.astype(np.float64)
        features -= self._mean
        features /= self._scale
        lifted = tuple(
            weights
            if isinstance(weights, float)
            else LogisticFit(coef=weights[0], intercept=weights[1], n_iter=0)
            for weights in self._weights
        )
        return self._head_scores(_Head(self._head.present, lifted), features)

    def _config(self) -> dict[str, Any]:
        return {
            "params": {
                "scaler": "standard",
                "solver": self.solver,
                "warm_start": self._preconditioned,
                "max_iter": self.max_iter,
                "tol": self.tol,
                "n_splits": self.n_splits,
                "scheme": "one_vs_rest" if self.multilabel else "multinomial",
            },
            "grid": {"C": list(self.C_grid)},
            "selection": self._selection,
            "chosen": None
            if self._chosen_C is None
            else {"C": self._chosen_C, "converged": self._converged, "row_space_rank": self._rank},
        }


def _one_blas_thread(active: bool) -> Any:
    """One BLAS thread per worker while several fits run at once."""
    if not active:
        return nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")
