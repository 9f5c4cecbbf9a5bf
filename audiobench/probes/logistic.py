"""L2-regularised logistic regression with scikit-learn's objective, two ways to minimise it.

The objective is scikit-learn's ``LogisticRegression`` (lbfgs) objective:

- multi-class (three or more classes): the multinomial model, mean cross-entropy of
  ``softmax(X W + b)`` plus ``||W||² / (2 C n)``;
- two classes: one binary model, mean log-loss of ``sigmoid(X w + b)`` plus ``||w||² / (2 C n)``;
- the intercept is not penalised.

:func:`fit_logistic` minimises it in one of two parametrisations:

- ``second_moments=None``: the coefficients themselves, from zero, with scipy's L-BFGS-B called
  as scikit-learn calls it (``maxiter``, ``gtol = tol``, ``ftol = 64 eps``, 50 line-search
  steps): the same iterates up to floating-point rounding, stopping when the largest absolute
  gradient entry falls below ``tol``;
- ``second_moments=m`` (features in an orthonormal eigenbasis of the training covariance,
  column ``j`` with mean square ``m_j``: :mod:`audiobench.probes.design`): preconditioned
  coordinates ``a_j = w_j / d_j`` with ``d_j = 1 / sqrt(h m_j + 1 / (C n))``, where ``h`` is the
  loss's curvature at the start (1/4 for the binary model, 1/K for the multinomial one), and
  the intercept scaled by ``1 / sqrt(h)``. The objective's Hessian at the start is then close to
  the identity in every direction, whatever the spread of the covariance's eigenvalues, and
  the ``tol`` test on the gradient in these coordinates measures the distance to the optimum.
  It is the same objective with the same unique optimum; only the path differs. A ``start``
  (the optimum of a neighbouring ``C``) starts the search there. The search is a plain
  L-BFGS (:func:`_lbfgs`: memory 10, step 1 tried first, the same stopping tests): without
  bounds to handle it costs a fraction of L-BFGS-B's per step.

Float32 features (the linear probe's search) make the two matrix products of a step float32;
everything else stays float64.

Why the second: embeddings are strongly correlated (the covariance's eigenvalues span orders of
magnitude), and plain L-BFGS then needs many iterations at moderate C and, at large C, stops
on the raw-gradient test where the objective is flat but far from its optimum. Measured on a
generated 2,000 × 1,280, 50-class problem (covariance eigenvalues decaying as 1/i², one outer
fold's 1,600 training clips): plain fits took 27 to 146 iterations per C and, at C = 10⁴,
stopped at an objective of 1.3e-3 with a held-out accuracy of 0.82; the preconditioned fits
took 8 to 51 iterations from zero (0 to 30 warm-started along the C grid) and, at C = 10⁴,
reached 3.5e-4 (6e-5 at ``tol = 1e-5``) and an accuracy of 1.0.

The loss and gradient run in NumPy (float64, the machine's BLAS) on the CPU, or in torch
(float64) on a CUDA device, where the two large products of every iteration (``X W`` and
``Xᵀ G``) run on the accelerator and only the parameter vector and its gradient cross to the
host.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import optimize
from scipy.special import expit, softmax

if TYPE_CHECKING:
    import torch

__all__ = ["LogisticFit", "fit_logistic", "logistic_scores"]

#: scipy's L-BFGS-B options as scikit-learn's lbfgs solver sets them (``gtol`` is ``tol``).
LBFGS_OPTIONS: dict[str, Any] = {"maxls": 50, "ftol": 64 * float(np.finfo(float).eps)}


@dataclass(frozen=True)
class LogisticFit:
    """A fitted model on features ``[n, d]``: ``coef`` ``[d, K]`` and ``intercept`` ``[K]``.

    ``K`` is the number of classes for a multinomial model and 1 for a binary one (the score
    of the positive class). ``n_iter`` counts L-BFGS-B iterations, capped at ``max_iter``.
    """

    coef: np.ndarray
    intercept: np.ndarray
    n_iter: int

    @property
    def binary(self) -> bool:
        return bool(self.coef.shape[1] == 1)


class _Objective:
    """Loss and gradient of the penalised mean log-loss for ``scipy.optimize.minimize``.

    The parameter vector holds ``[d + 1, K]`` row by row (feature-major, the intercepts last),
    which is scikit-learn's layout of its ``[K, d + 1]`` matrix flattened in Fortran order.
    With a preconditioner (``scale`` ``[d]``, ``intercept_scale``) the rows are the scaled
    coordinates: coefficients ``scale[:, None] * x[:-1]``, intercepts ``intercept_scale * x[-1]``.
    """

    def __init__(
        self,
        features: Any,
        targets: np.ndarray,
        n_outputs: int,
        C: float,
        scale: np.ndarray | None = None,
        intercept_scale: float = 1.0,
    ) -> None:
        self.n, self.d = int(features.shape[0]), int(features.shape[1])
        self.k = n_outputs
        self.l2 = 1.0 / (C * self.n)
        self.features = features
        self.rows = np.arange(self.n)
        self.targets = targets
        self.scale = None if scale is None else scale[:, None]
        self.intercept_scale = intercept_scale

    def coefficients(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(coef [d, K], intercept [K])`` of a parameter vector."""
        w = x.reshape(self.d + 1, self.k)
        if self.scale is None:
            return w[:-1], w[-1]
        return self.scale * w[:-1], self.intercept_scale * w[-1]

    def parameters(self, fit: LogisticFit) -> np.ndarray:
        """The parameter vector of a fitted model (a warm start)."""
        coef, intercept = fit.coef, fit.intercept
        if self.scale is not None:
            coef, intercept = coef / self.scale, intercept / self.intercept_scale
        return np.vstack([coef, intercept[None, :]]).ravel()

    def __call__(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        coef, intercept = self.coefficients(x)
        single = self.features.dtype == np.float32
        if single:  # float32 products (the search's fits), float64 everywhere else
            raw = np.asarray(self.features @ coef.astype(np.float32), dtype=np.float64)
        else:
            raw = self.features @ coef
        raw += intercept
        if self.k == 1:
            # Half binomial deviance: log(1 + e^r) - y r, gradient sigmoid(r) - y.
            raw = raw[:, 0]
            loss = float(np.sum(np.logaddexp(0.0, raw) - self.targets * raw)) / self.n
            pointwise = (expit(raw) - self.targets)[:, None]
        else:
            top = raw.max(axis=1, keepdims=True)
            picked = raw[self.rows, self.targets]
            raw -= top
            np.exp(raw, out=raw)
            total = raw.sum(axis=1, keepdims=True)
            loss = float(np.sum(np.log(total[:, 0]) + top[:, 0] - picked)) / self.n
            pointwise = raw / total
            pointwise[self.rows, self.targets] -= 1.0
        pointwise /= self.n
        loss += 0.5 * self.l2 * float(np.dot(coef.ravel(), coef.ravel()))
        grad = np.empty((self.d + 1, self.k))
        if single:
            grad[:-1] = self.features.T @ pointwise.astype(np.float32)
        else:
            grad[:-1] = self.features.T @ pointwise
        grad[:-1] += self.l2 * coef
        grad[-1] = pointwise.sum(axis=0)
        if self.scale is not None:  # chain rule into the scaled coordinates
            grad[:-1] *= self.scale
            grad[-1] *= self.intercept_scale
        return loss, grad.ravel()


class _TorchObjective(_Objective):
    """The same loss and gradient with the features on a torch device (float64)."""

    def __init__(
        self,
        features: torch.Tensor,
        targets: np.ndarray,
        n_outputs: int,
        C: float,
        scale: np.ndarray | None = None,
        intercept_scale: float = 1.0,
    ) -> None:
        import torch

        super().__init__(features, targets, n_outputs, C, scale, intercept_scale)
        self.device = features.device
        self.target_tensor = torch.as_tensor(targets, device=self.device)
        self.rows_tensor = torch.arange(self.n, device=self.device)

    def __call__(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        import torch
        from torch.nn import functional as F

        coef_np, intercept_np = self.coefficients(x)
        coef = torch.from_numpy(np.ascontiguousarray(coef_np)).to(self.device)
        intercept = torch.from_numpy(np.ascontiguousarray(intercept_np)).to(self.device)
        raw = torch.addmm(intercept, self.features, coef)
        if self.k == 1:
            raw = raw[:, 0]
            loss = (F.softplus(raw) - self.target_tensor * raw).sum() / self.n
            pointwise = (torch.sigmoid(raw) - self.target_tensor)[:, None]
        else:
            log_total = torch.logsumexp(raw, dim=1)
            loss = (log_total - raw[self.rows_tensor, self.target_tensor]).sum() / self.n
            pointwise = torch.exp(raw - log_total[:, None])
            pointwise[self.rows_tensor, self.target_tensor] -= 1.0
        pointwise /= self.n
        loss = loss + 0.5 * self.l2 * (coef * coef).sum()
        grad_coef = torch.addmm(coef, self.features.T, pointwise, alpha=1.0, beta=self.l2)
        grad = np.empty((self.d + 1, self.k))
        grad[:-1] = grad_coef.cpu().numpy()
        grad[-1] = pointwise.sum(dim=0).cpu().numpy()
        if self.scale is not None:
            grad[:-1] *= self.scale
            grad[-1] *= self.intercept_scale
        return float(loss), grad.ravel()


def fit_logistic(
    features: np.ndarray | torch.Tensor,
    targets: np.ndarray,
    *,
    C: float,
    max_iter: int,
    tol: float,
    binary: bool,
    second_moments: np.ndarray | None = None,
    start: LogisticFit | None = None,
) -> LogisticFit:
    """Fit one L2 logistic regression (scikit-learn's objective) with L-BFGS-B.

    Parameters
    ----------
    features:
        ``[n, d]`` float64: a NumPy array (the loss runs on the CPU) or a torch tensor (it
        runs on the tensor's device).
    targets:
        Multinomial: class codes ``0 .. K-1`` with every code present. Binary: 0/1 values.
    C:
        Inverse regularisation strength.
    max_iter, tol:
        L-BFGS-B's iteration limit and gradient tolerance.
    binary:
        One binary model (``targets`` 0/1) rather than the multinomial one.
    second_moments:
        ``None``: scikit-learn's parametrisation and start (zero). Otherwise the mean square
        of every feature column, whose columns must be uncorrelated or nearly so (an
        eigenbasis): the search runs in preconditioned coordinates (module docstring).
    start:
        A model on the same features to start from (preconditioned search only; ``None``:
        zero).
    """
    n_outputs = 1 if binary else int(targets.max()) + 1
    values = targets.astype(np.float64 if binary else np.int64)
    scale: np.ndarray | None = None
    intercept_scale = 1.0
    if second_moments is not None:
        curvature = 0.25 if binary else 1.0 / n_outputs
        l2 = 1.0 / (C * int(features.shape[0]))
        moments = np.maximum(np.asarray(second_moments, dtype=np.float64), 0.0)
        scale = 1.0 / np.sqrt(curvature * moments + l2)
        intercept_scale = 1.0 / np.sqrt(curvature)
    elif start is not None:
        raise ValueError("a warm start needs the preconditioned search (second_moments)")
    objective = (
        _Objective(features, values, n_outputs, C, scale, intercept_scale)
        if isinstance(features, np.ndarray)
        else _TorchObjective(features, values, n_outputs, C, scale, intercept_scale)
    )
    x0 = (
        np.zeros((int(features.shape[1]) + 1) * n_outputs, dtype=np.float64)
        if start is None
        else objective.parameters(start)
    )
    if scale is None:
        result = optimize.minimize(
            objective,
            x0,
            method="L-BFGS-B",
            jac=True,
            options={**LBFGS_OPTIONS, "maxiter": max_iter, "gtol": tol},
        )
        x, n_iter = np.asarray(result.x, dtype=np.float64), int(result.nit)
    else:
        x, n_iter = _lbfgs(objective, x0, max_iter=max_iter, gtol=tol)
    coef, intercept = objective.coefficients(x)
    return LogisticFit(
        coef=np.array(coef, dtype=np.float64),
        intercept=np.array(intercept, dtype=np.float64),
        n_iter=min(n_iter, max_iter),
    )


def _armijo_step(
    evaluate: Callable[[np.ndarray], tuple[float, np.ndarray]],
    x: np.ndarray,
    direction: np.ndarray,
    f: float,
    slope: float,
) -> float | None:
    """A step along ``direction`` with sufficient decrease (Armijo, ``c1 = 1e-4``): 1 first,
    then shorter ones by safeguarded quadratic interpolation; None when 30 tries fail."""
    alpha = 1.0
    for _ in range(30):
        trial = evaluate(x + alpha * direction)[0]
        if np.isfinite(trial) and trial <= f + 1e-4 * alpha * slope:
            return alpha
        if not np.isfinite(trial):
            alpha *= 0.1
            continue
        # Minimum of the parabola through f, the slope and the trial value.
        guess = -slope * alpha * alpha / (2.0 * (trial - f - slope * alpha))
        alpha = float(np.clip(guess, 0.1 * alpha, 0.5 * alpha))
    return None


def _lbfgs(
    fun: _Objective, x0: np.ndarray, *, max_iter: int, gtol: float, memory: int = 10
) -> tuple[np.ndarray, int]:
    """Unconstrained L-BFGS (two-loop recursion, backtracking line search) from ``x0``.

    Stops when the largest absolute gradient entry is at most ``gtol``, when the objective's
    relative decrease falls to ``64 eps`` (scipy's L-BFGS-B tests), after ``max_iter``
    iterations, or when the line search fails twice (once along the L-BFGS direction, once
    along the gradient). A curvature pair is kept only when ``sᵀy > 0``, so the implied
    Hessian stays positive definite without a Wolfe condition. Measured at 64,050 parameters
    (1,280 features × 50 classes), L-BFGS-B's bound handling, which these fits never use,
    cost a third of each fit; this loop costs ``4 · memory`` vector operations a step.
    """
    from scipy.linalg.blas import daxpy, ddot

    ftol = float(LBFGS_OPTIONS["ftol"])
    last: dict[str, Any] = {}

    def evaluate(x: np.ndarray) -> tuple[float, np.ndarray]:
        if "x" in last and np.array_equal(last["x"], x):
            return last["f"], last["g"]
        f, g = fun(x)
        last.update(x=x.copy(), f=f, g=g)
        return f, g

    x = x0.copy()
    f, g = evaluate(x)
    steps: list[tuple[np.ndarray, np.ndarray, float]] = []
    n_iter = 0
    while n_iter < max_iter and float(np.max(np.abs(g), initial=0.0)) > gtol:
        direction = -g  # a new array: updated in place below
        weights = []
        for s, y, rho in reversed(steps):
            a = rho * ddot(s, direction)
            daxpy(y, direction, a=-a)
            weights.append(a)
        if steps:
            s, y, _ = steps[-1]
            direction *= ddot(s, y) / ddot(y, y)
        for (s, y, rho), a in zip(steps, reversed(weights), strict=True):
            daxpy(s, direction, a=a - rho * ddot(y, direction))
        slope = float(g @ direction)
        if slope >= 0:  # not a descent direction: forget the curvature pairs
            steps.clear()
            direction, slope = -g, -float(g @ g)
        alpha = _armijo_step(evaluate, x, direction, f, slope)
        if alpha is None and steps:  # retry once along the gradient, memory cleared
            steps.clear()
            direction, slope = -g, -float(g @ g)
            alpha = _armijo_step(evaluate, x, direction, f, slope)
        if alpha is None:
            break
        step = alpha * direction
        x_new = x + step
        new_f, new_g = evaluate(x_new)
        change = new_g - g
        curvature = float(step @ change)
        if curvature > 1e-10 * float(change @ change):
            steps.append((step, change, 1.0 / curvature))
            if len(steps) > memory:
                steps.pop(0)
        previous_f, f, x, g = f, new_f, x_new, new_g
        n_iter += 1
        if (previous_f - f) <= ftol * max(abs(previous_f), abs(f), 1.0):
            break
    return x, n_iter


def logistic_scores(fit: LogisticFit, features: np.ndarray | torch.Tensor) -> np.ndarray:
    """Probabilities ``[m, K]`` (multinomial) or ``[m]`` (binary: the positive class)."""
    if isinstance(features, np.ndarray):
        raw = features @ fit.coef + fit.intercept
    else:
        import torch

        coef = torch.from_numpy(fit.coef).to(features.device)
        raw = (features @ coef).cpu().numpy() + fit.intercept
    if fit.binary:
        return np.asarray(expit(raw[:, 0]))
    return np.asarray(softmax(raw, axis=1))
