"""Standardised design matrices for the linear probe, reduced to their row space when wide.

The linear probe standardises features with the training clips' mean and standard deviation
(scikit-learn's ``StandardScaler``) and fits an L2-penalised logistic regression. When the
features far outnumber the training clips (flattened spectrograms: 18,304 features for a few
thousand clips) most of that work is wasted, and exactly so: the penalised optimum lies in
the span of the (centred) training rows, because any component outside it leaves the loss
unchanged and only adds to the penalty. Writing the standardised rows ``Xs`` (``[n, D]``) as
``Z Qᵀ`` with ``Q`` (``[D, r]``) orthonormal and ``r <= n`` turns the fit into the same
problem on ``Z`` (``[n, r]``): same objective values, and L-BFGS, which only takes inner
products and linear combinations of gradients, visits the same points from the same zero
start. Every iteration then costs ``n r`` instead of ``n D`` per class.

``Z`` comes from the Gram matrix ``G = Xs Xsᵀ`` by a pivoted Cholesky factorisation
(``P G Pᵀ = L Lᵀ``, LAPACK ``dpstrf``, rank chosen by its default tolerance
``n · eps · max diag G``): ``Z = Pᵀ L``. With the pivot rows ``p`` (the first ``r``) and their
triangle ``L₁₁``, ``Q = Xs[p]ᵀ L₁₁⁻ᵀ``, so other clips map to ``Xe Xs[p]ᵀ L₁₁⁻ᵀ`` and
coefficients ``A`` found on ``Z`` lift back to ``W = Xs[p]ᵀ (L₁₁⁻ᵀ A)`` on the standardised
features. Cost: one ``n² D`` Gram product per fit set, then the cheap iterations.

One difference from the fit on all ``D`` columns remains: L-BFGS-B stops when the largest
absolute gradient entry is below ``tol``, and the largest entry of a gradient depends on the
basis it is written in. The reduced fit applies the test to ``Z``'s coordinates, so it may stop
an iteration earlier or later than the full fit would (tests compare the two: the
probabilities agree to about ``tol``). The reduction is used only when the features number at
least :data:`ROW_SPACE_RATIO` times the training clips, where it more than halves every
iteration's cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.linalg import lapack, solve_triangular
from sklearn.preprocessing import StandardScaler

if TYPE_CHECKING:
    import torch

__all__ = ["ROW_SPACE_RATIO", "Design", "prepare_design"]

#: Reduce to the row space when features >= this many times the training clips.
ROW_SPACE_RATIO: int = 2


@dataclass
class Design:
    """One fit set: the scaler, the solver's features for training (and evaluation) clips.

    ``train`` and ``evaluation`` are float64 NumPy arrays on the CPU or torch tensors on the
    requested device; with a reduction they have ``rank`` columns, else ``D``.
    """

    mean: np.ndarray
    scale: np.ndarray
    train: np.ndarray | torch.Tensor
    evaluation: np.ndarray | torch.Tensor | None
    #: Columns of ``train`` when reduced to the row space; ``None`` when not reduced.
    rank: int | None
    #: ``Xs[p]`` and ``L₁₁`` for :meth:`lift` (kept only when asked for).
    _pivot_rows: np.ndarray | None = None
    _triangle: np.ndarray | None = None

    def lift(self, coef: np.ndarray) -> np.ndarray:
        """Coefficients ``[D, K]`` on the standardised features from the solver's ``[d, K]``."""
        if self.rank is None:
            return coef
        if self._pivot_rows is None or self._triangle is None:
            raise RuntimeError("this design was prepared without keep_lift=True")
        if self.rank == 0:
            return np.zeros((self._pivot_rows.shape[1], coef.shape[1]))
        solved = solve_triangular(self._triangle, coef, lower=True, trans="T")
        return np.asarray(self._pivot_rows.T @ solved)

    def standardise(self, X: np.ndarray) -> np.ndarray:
        """``(X - mean) / scale`` in float64, as ``StandardScaler.transform`` computes it."""
        out = X.astype(np.float64)
        out -= self.mean
        out /= self.scale
        return out


def prepare_design(
    train: np.ndarray,
    evaluation: np.ndarray | None = None,
    *,
    device: torch.device | None = None,
    keep_lift: bool = False,
    reduce: bool | None = None,
) -> Design:
    """Standardise ``train`` (``[n, D]``), and ``evaluation`` with its statistics, and reduce
    both to the training rows' span when ``D >= ROW_SPACE_RATIO · n`` (``reduce`` forces the
    choice). ``device``: ``None`` for NumPy on the CPU, else a torch device for the features.
    ``keep_lift`` keeps what :meth:`Design.lift` needs.
    """
    scaler = StandardScaler(copy=False)
    rows = train.astype(np.float64)
    scaler.fit(rows)
    design = Design(
        mean=np.asarray(scaler.mean_, dtype=np.float64),
        scale=np.asarray(scaler.scale_, dtype=np.float64),
        train=rows,
        evaluation=None,
        rank=None,
    )
    rows -= design.mean
    rows /= design.scale
    held_out = None if evaluation is None else design.standardise(evaluation)
    n, dim = rows.shape
    if reduce is None:
        reduce = dim >= ROW_SPACE_RATIO * n
    if not reduce:
        design.train = _to_device(rows, device)
        design.evaluation = None if held_out is None else _to_device(held_out, device)
        return design
    gram = _products(rows, rows, device)
    factor, pivots, rank = _pivoted_cholesky(gram)
    order = np.argsort(pivots)
    design.rank = rank
    design.train = _to_device(np.ascontiguousarray(factor[order, :rank]), device)
    triangle = factor[:rank, :rank]
    if held_out is not None:
        cross = _products(held_out, rows[pivots[:rank]], device)
        design.evaluation = _to_device(_solve_right(cross, triangle), device)
    if keep_lift:
        design._pivot_rows = rows[pivots[:rank]]
        design._triangle = triangle
    return design


def _pivoted_cholesky(gram: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """``(L, p, r)`` with ``G[p][:, p] ≈ L[:, :r] L[:, :r]ᵀ``, ``L`` lower triangular."""
    if not gram.size:
        return np.zeros((0, 0)), np.zeros(0, dtype=np.int64), 0
    factor, pivots, rank, info = lapack.dpstrf(gram, lower=1)
    if info < 0:  # pragma: no cover - an argument error in our call
        raise RuntimeError(f"LAPACK dpstrf failed with info={info}")
    return np.tril(factor), pivots.astype(np.int64) - 1, int(rank)


def _solve_right(cross: np.ndarray, triangle: np.ndarray) -> np.ndarray:
    """``cross L₁₁⁻ᵀ``: coordinates of held-out rows in the reduced basis."""
    if not triangle.size:
        return np.zeros((cross.shape[0], 0))
    return np.array(solve_triangular(triangle, cross.T, lower=True).T)


def _products(left: np.ndarray, right: np.ndarray, device: torch.device | None) -> np.ndarray:
    """``left @ right.T`` in float64, on the device when one is given (result on the host)."""
    if device is None:
        return np.asarray(left @ right.T)
    import torch

    a = torch.from_numpy(left).to(device)
    b = a if right is left else torch.from_numpy(right).to(device)
    return (a @ b.T).cpu().numpy()


def _to_device(array: np.ndarray, device: torch.device | None) -> np.ndarray | torch.Tensor:
    if device is None:
        return array
    import torch

    return torch.from_numpy(np.ascontiguousarray(array)).to(device)
