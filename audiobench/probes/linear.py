"""Linear probe: standardised features and an L2-regularised logistic regression.

The standard linear evaluation of frozen embeddings. Features are standardised with the
training clips' mean and standard deviation (logistic regression's regularisation and solver
are scale-sensitive; embeddings from different models differ wildly in scale). Multi-class
uses the multinomial (softmax) model; multi-label one binary model per class (one-vs-rest).

The inverse regularisation strength C comes from a fixed log-spaced grid, chosen by accuracy
(multi-label: micro-averaged average precision) on the validation split when one is given,
else by seeded stratified inner cross-validation on the training clips (the scaler is refitted
inside each fold); ties go to the smaller C (the stronger regularisation). The chosen model is
then fitted on the training clips. The lbfgs solver is deterministic; ``seed`` fixes the inner
folds.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler

from audiobench.probes.base import (
    Inputs,
    Probe,
    ProbeLevel,
    inner_cv_folds,
    select_best,
    selection_metric,
    selection_score,
)

__all__ = ["DEFAULT_C_GRID", "LinearProbe"]

#: Inverse regularisation strengths searched: 1e-4 … 1e4, one per decade. On standardised
#: features this spans "nearly constant" to "nearly unregularised".
DEFAULT_C_GRID: tuple[float, ...] = tuple(float(c) for c in np.logspace(-4, 4, 9))


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
        lbfgs iterations per fit. 1000 is ample on standardised features; a weakly
        regularised fit on separable data may stop early without harm (recorded as
        ``converged`` in ``config()``).
    tol:
        lbfgs tolerance.
    n_splits:
        Inner cross-validation folds when no validation split is given.
    multilabel, seed:
        See :class:`Probe`.
    """

    name: ClassVar[str] = "linear"
    level: ClassVar[ProbeLevel] = "vector"

    def __init__(
        self,
        *,
        C: float | None = None,
        C_grid: Sequence[float] = DEFAULT_C_GRID,
        max_iter: int = 1000,
        tol: float = 1e-4,
        n_splits: int = 5,
        multilabel: bool = False,
        seed: int = 0,
    ) -> None:
        super().__init__(multilabel=multilabel, seed=seed)
        grid = tuple(float(value) for value in ([C] if C is not None else C_grid))
        if not grid or any(not value > 0 for value in grid):
            raise ValueError(f"C values must be positive, got {grid}")
        if max_iter < 1:
            raise ValueError(f"max_iter must be positive, got {max_iter}")
        if n_splits < 2:
            raise ValueError(f"n_splits must be at least 2, got {n_splits}")
        self.C = None if C is None else float(C)
        self.C_grid: tuple[float, ...] = tuple(sorted(set(grid)))
        self.max_iter = int(max_iter)
        self.tol = float(tol)
        self.n_splits = int(n_splits)
        self._model: Pipeline | None = None
        self._n_classes = 0
        self._chosen_C: float | None = None
        self._converged: bool | None = None
        self._selection: dict[str, Any] | None = None

    def _make_model(self, C: float) -> Pipeline:
        regression = LogisticRegression(
            C=C, max_iter=self.max_iter, tol=self.tol, random_state=self.seed
        )
        head = OneVsRestClassifier(regression) if self.multilabel else regression
        return make_pipeline(StandardScaler(), head)

    def _train(self, X: np.ndarray, targets: np.ndarray, C: float) -> Pipeline | None:
        """Fit one model; ``None`` when a multi-class fold holds a single class."""
        if targets.ndim == 1 and np.unique(targets).size < 2:
            return None
        model = self._make_model(C)
        with warnings.catch_warnings():
            # Weak regularisation on separable data stops at max_iter: expected in a search.
            warnings.simplefilter("ignore", ConvergenceWarning)
            # One-vs-rest warns about a class constant within an inner fold; it then predicts
            # that constant, which is the right answer for the fold.
            warnings.filterwarnings("ignore", message="Label .* is present in all")
            warnings.filterwarnings("ignore", message="Label not .* present in all")
            model.fit(X, targets)
        return model

    def _scores(self, model: Pipeline, X: np.ndarray) -> np.ndarray:
        """Probabilities ``[n, C]`` over all training classes (absent ones score 0)."""
        proba = model.predict_proba(X)
        if self.multilabel:
            return proba
        full = np.zeros((X.shape[0], self._n_classes), dtype=np.float64)
        full[:, model.classes_.astype(np.int64)] = proba
        return full

    def _grid_scores(
        self, X: np.ndarray, targets: np.ndarray, X_eval: np.ndarray, eval_targets: np.ndarray
    ) -> list[float]:
        results = []
        for C in self.C_grid:
            model = self._train(X, targets, C)
            if model is None:
                results.append(float("nan"))
                continue
            results.append(selection_score(eval_targets, self._scores(model, X_eval)))
        return results

    def _fit(
        self,
        inputs: Inputs,
        targets: np.ndarray,
        n_classes: int,
        validation: tuple[Inputs, np.ndarray] | None,
    ) -> None:
        assert isinstance(inputs, np.ndarray)
        X = inputs.astype(np.float64)
        self._n_classes = n_classes
        n_splits: int | None = None
        scores: list[float] = []
        if len(self.C_grid) == 1:
            method = "fixed"
        elif validation is not None:
            method = "validation"
            val_inputs, val_targets = validation
            assert isinstance(val_inputs, np.ndarray)
            scores = self._grid_scores(X, targets, val_inputs.astype(np.float64), val_targets)
        else:
            method = "inner_cv"
            folds = inner_cv_folds(targets, n_splits=self.n_splits, seed=self.seed)
            n_splits = len(folds)
            per_fold = np.array(
                [self._grid_scores(X[tr], targets[tr], X[te], targets[te]) for tr, te in folds]
            )
            scores = [
                float(np.nanmean(column)) if np.isfinite(column).any() else float("nan")
                for column in per_fold.T
            ]
        chosen = (
            self.C_grid[0]
            if method == "fixed"
            else select_best(self.C_grid, scores, prefer="first")
        )
        model = self._train(X, targets, chosen)
        assert model is not None  # fit() guarantees at least two training classes
        head = model[-1]
        regressions = head.estimators_ if self.multilabel else [head]
        self._converged = all(
            np.all(np.asarray(r.n_iter_) < self.max_iter)
            for r in regressions
            if isinstance(r, LogisticRegression)
        )
        self._model, self._chosen_C = model, float(chosen)
        self._selection = {
            "method": method,
            "metric": None if method == "fixed" else selection_metric(self.multilabel),
            "n_splits": n_splits,
            "scores": [{"C": c, "score": s} for c, s in zip(self.C_grid, scores, strict=False)],
            "tie_break": "smaller C",
        }

    def _predict_scores(self, inputs: Inputs) -> np.ndarray:
        assert isinstance(inputs, np.ndarray) and self._model is not None
        return self._scores(self._model, inputs.astype(np.float64))

    def _config(self) -> dict[str, Any]:
        return {
            "params": {
                "scaler": "standard",
                "solver": "lbfgs",
                "max_iter": self.max_iter,
                "tol": self.tol,
                "n_splits": self.n_splits,
                "scheme": "one_vs_rest" if self.multilabel else "multinomial",
            },
            "grid": {"C": list(self.C_grid)},
            "selection": self._selection,
            "chosen": None
            if self._chosen_C is None
            else {"C": self._chosen_C, "converged": self._converged},
        }
