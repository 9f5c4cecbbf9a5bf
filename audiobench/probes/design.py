"""Standardised design matrices for the linear probe, in an orthonormal eigenbasis.

The linear probe standardises features with the training clips' mean and standard deviation
(scikit-learn's ``StandardScaler``) and fits an L2-penalised logistic regression. Its penalty
``||W||²`` does not change under an orthogonal change of basis, so the fit may run on the
standardised rows ``Xs`` (``[n, D]``) written in any orthonormal basis ``Q`` (``Z = Xs Q``) and
its coefficients map back exactly (``W = Q A``). Two bases serve:

- features no more numerous than the training clips (``D <= n``): the eigenvectors ``V`` of
  the covariance ``XsᵀXs / n`` (one ``D × D`` eigendecomposition); ``Z = Xs V`` has
  uncorrelated columns whose mean squares are the eigenvalues, which is what the
  preconditioned solver (:mod:`audiobench.probes.logistic`) needs. The same ``V`` may be
  handed to other fit sets (the inner folds of a search): their columns are then nearly
  uncorrelated, which is all a preconditioner needs, and the basis stays exact;
- wide inputs (``D > n``, or ``D >= ROW_SPACE_RATIO · n`` for the plain solver): the row space
  of ``Xs``. The penalised optimum lies in the span of the training rows (a component outside
  it leaves the loss unchanged and only adds to the penalty), so the fit runs on
  ``r <= n`` columns: from the eigendecomposition ``Xs Xsᵀ = U S² Uᵀ`` of the Gram matrix,
  ``Z = U S`` (uncorrelated columns again, eigenvalues ``S² / n``), other clips map to
  ``Xe Xsᵀ U S⁻¹`` and coefficients ``A`` lift to ``W = Xsᵀ U S⁻¹ A``. Directions with an
  eigenvalue below ``n · eps · max`` hold no data and are dropped (the rank ``r``).
  Every iteration then costs ``n r`` instead of ``n D`` per class.

With ``eigenbasis=False`` (the plain solver, scikit-learn's iterates) inputs with
``D < ROW_SPACE_RATIO · n`` keep their standardised features as they are. L-BFGS from a zero
start only takes inner products and linear combinations of gradients, so in the row-space
basis it visits the same points as on all ``D`` columns; one difference remains: L-BFGS-B
stops when the largest absolute gradient entry is below ``tol``, and the largest entry of a
gradient depends on the basis it is written in, so the reduced fit may stop an iteration
earlier or later (its probabilities agree to about ``tol``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy import linalg
from sklearn.preprocessing import StandardScaler

if TYPE_CHECKING:
    import torch

__all__ = ["ROW_SPACE_RATIO", "Design", "prepare_design"]

#: The plain solver reduces to the row space when features >= this many times the clips.
ROW_SPACE_RATIO: int = 2


@dataclass
class Design:
    """One fit set: the scaler, the solver's features for training (and evaluation) clips.

    ``train`` and ``evaluation`` are float64 NumPy arrays on the CPU or torch tensors on the
    requested device, with ``rank`` columns when reduced to the row space, else ``D``.
    """

    mean: np.ndarray
    scale: np.ndarray
    train: np.ndarray | torch.Tensor
    evaluation: np.ndarray | torch.Tensor | None
    #: Columns of ``train`` when reduced to the row space; ``None`` when not reduced.
    rank: int | None
    #: Mean square of every column of ``train`` when they are (nearly) uncorrelated; ``None``
    #: for the raw standardised features.
    second_moments: np.ndarray | None = None
    #: ``V`` (``[D, D]``) of a feature-side eigenbasis, shareable with other fit sets.
    basis: np.ndarray | None = None
    #: ``Xs`` and ``U S⁻¹`` for :meth:`lift` of a row-space design (kept only when asked for).
    _rows: np.ndarray | None = None
    _left: np.ndarray | None = None

    def lift(self, coef: np.ndarray) -> np.ndarray:
        """Coefficients ``[D, K]`` on the standardised features from the solver's ``[d, K]``."""
        if self.basis is not None:
            return np.asarray(self.basis @ coef)
        if self.rank is None:
            return coef
        if self._rows is None or self._left is None:
            raise RuntimeError("this design was prepared without keep_lift=True")
        return np.asarray(self._rows.T @ (self._left @ coef))

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
    eigenbasis: bool = True,
    basis: np.ndarray | None = None,
) -> Design:
    """Standardise ``train`` (``[n, D]``), and ``evaluation`` with its statistics, and write
    both in an orthonormal basis (module docstring).

    ``eigenbasis``: an eigenbasis with uncorrelated columns (``second_moments`` set), else the
    raw standardised features (reduced to the row space when ``D >= ROW_SPACE_RATIO · n``).
    ``basis``: a ``D × D`` orthogonal matrix to use instead of computing one (feature side).
    ``device``: ``None`` for NumPy on the CPU, else a torch device for the features.
    ``keep_lift`` keeps what :meth:`Design.lift` needs for a row-space design.
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
    if basis is not None:
        if basis.shape != (dim, dim):
            raise ValueError(f"basis must be {dim} × {dim}, got {basis.shape}")
        features = _products(rows, basis.T, device)
        design.basis = basis
        design.second_moments = np.einsum("ij,ij->j", features, features) / max(n, 1)
        design.train = _to_device(features, device)
        if held_out is not None:
            design.evaluation = _to_device(_products(held_out, basis.T, device), device)
        return design
    wide = dim > n if eigenbasis else dim >= ROW_SPACE_RATIO * n
    if not wide:
        if eigenbasis:
            values, vectors = _eigh(_products(rows.T, rows.T, device) / max(n, 1))
            design.basis = vectors
            design.second_moments = values
            rows = _products(rows, vectors.T, device)
            held_out = None if held_out is None else _products(held_out, vectors.T, device)
        design.train = _to_device(rows, device)
        design.evaluation = None if held_out is None else _to_device(held_out, device)
        return design
    values, vectors = _eigh(_products(rows, rows, device))
    rank = int(np.count_nonzero(values > n * np.finfo(np.float64).eps * values.max(initial=0.0)))
    values, vectors = values[:rank], vectors[:, :rank]
    root = np.sqrt(values)
    left = vectors / root  # U S⁻¹
    design.rank = rank
    design.train = _to_device(np.ascontiguousarray(vectors * root), device)
    if eigenbasis:
        design.second_moments = values / n
    if held_out is not None:
        design.evaluation = _to_device(_products(held_out, rows, device) @ left, device)
    if keep_lift:
        design._rows = rows
        design._left = left
    return design


def _eigh(symmetric: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (descending, clipped at 0) and orthonormal eigenvectors (columns)."""
    if not symmetric.size:
        return np.zeros(0), np.zeros((symmetric.shape[0], 0))
    values, vectors = linalg.eigh(symmetric, driver="evd", overwrite_a=True, check_finite=False)
    return np.maximum(values[::-1], 0.0), np.ascontiguousarray(vectors[:, ::-1])


def _products(left: np.ndarray, right: np.ndarray, device: torch.device | None) -> np.ndarray:
    """``left @ right.T`` in float64, on the device when one is given (result on the host)."""
    if device is None:
        return np.asarray(left @ right.T)
    import torch

    a = torch.from_numpy(np.ascontiguousarray(left)).to(device)
    b = a if right is left else torch.from_numpy(np.ascontiguousarray(right)).to(device)
    return (a @ b.T).cpu().numpy()


def _to_device(array: np.ndarray, device: torch.device | None) -> np.ndarray | torch.Tensor:
    if device is None:
        return array
    import torch

    return torch.from_numpy(np.ascontiguousarray(array)).to(device)
