"""L2-regularised logistic regression, fitted as scikit-learn's ``LogisticRegression`` fits it.

The objective, parametrisation, starting point and optimiser call are those of
scikit-learn's lbfgs solver, so a fit follows the same iterates (up to floating-point
rounding) and the linear probe's numbers do not depend on which implementation ran them:

- multi-class (three or more classes): the multinomial model, mean cross-entropy of
  ``softmax(X W + b)`` plus ``||W||² / (2 C n)``;
- two classes: one binary model, mean log-loss of ``sigmoid(X w + b)`` plus ``||w||² / (2 C n)``;
- the intercept is not penalised; every fit starts from zero;
- scipy's L-BFGS-B with ``maxiter``, ``gtol = tol``, ``ftol = 64 eps`` and 50 line-search
  steps; a fit stops when the largest absolute gradient entry falls below ``tol``.

What is ours is where the loss and gradient run: NumPy (float64, the machine's BLAS) on the
CPU, or torch (float64) on a CUDA device, where the two large products of every iteration
(``X W`` and ``Xᵀ G``) run on the accelerator and only the parameter vector and its gradient
cross to the host. Large inputs gain further from :mod:`audiobench.probes.design`, which hands
this module fewer columns with the same solution.
"""

from __future__ import annotations

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

    The parameter vector holds the coefficients of ``[d + 1, K]`` row by row (feature-major,
    the intercepts last), which is scikit-learn's layout of its ``[K, d + 1]`` matrix
    flattened in Fortran order.
    """

    def __init__(self, features: Any, targets: np.ndarray, n_outputs: int, C: float) -> None:
        self.n, self.d = int(features.shape[0]), int(features.shape[1])
        self.k = n_outputs
        self.l2 = 1.0 / (C * self.n)
        self.features = features
        self.rows = np.arange(self.n)
        self.targets = targets

    def __call__(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        w = x.reshape(self.d + 1, self.k)
        coef = w[:-1]
        raw = self.features @ coef
        raw += w[-1]
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
        grad = np.empty_like(w)
        grad[:-1] = self.features.T @ pointwise
        grad[:-1] += self.l2 * coef
        grad[-1] = pointwise.sum(axis=0)
        return loss, grad.ravel()


class _TorchObjective(_Objective):
    """The same loss and gradient with the features on a torch device (float64)."""

    def __init__(self, features: torch.Tensor, targets: np.ndarray, n_outputs: int, C: float):
        import torch

        super().__init__(features, targets, n_outputs, C)
        self.device = features.device
        self.target_tensor = torch.as_tensor(targets, device=self.device)
        self.rows_tensor = torch.arange(self.n, device=self.device)

    def __call__(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        import torch
        from torch.nn import functional as F

        w = torch.from_numpy(x).to(self.device).view(self.d + 1, self.k)
        coef = w[:-1]
        raw = torch.addmm(w[-1], self.features, coef)
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
        grad = torch.empty_like(w)
        torch.addmm(coef, self.features.T, pointwise, alpha=1.0, beta=self.l2, out=grad[:-1])
        grad[-1] = pointwise.sum(dim=0)
        return float(loss), grad.cpu().numpy().ravel()


def fit_logistic(
    features: np.ndarray | torch.Tensor,
    targets: np.ndarray,
    *,
    C: float,
    max_iter: int,
    tol: float,
    binary: bool,
) -> LogisticFit:
    """Fit one L2 logistic regression from zero, with scikit-learn's lbfgs objective and call.

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
    """
    n_outputs = 1 if binary else int(targets.max()) + 1
    values = targets.astype(np.float64 if binary else np.int64)
    objective = (
        _Objective(features, values, n_outputs, C)
        if isinstance(features, np.ndarray)
        else _TorchObjective(features, values, n_outputs, C)
    )
    start = np.zeros((features.shape[1] + 1) * n_outputs, dtype=np.float64)
    result = optimize.minimize(
        objective,
        start,
        method="L-BFGS-B",
        jac=True,
        options={**LBFGS_OPTIONS, "maxiter": max_iter, "gtol": tol},
    )
    w = np.asarray(result.x, dtype=np.float64).reshape(-1, n_outputs)
    return LogisticFit(coef=w[:-1].copy(), intercept=w[-1].copy(), n_iter=min(result.nit, max_iter))


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
