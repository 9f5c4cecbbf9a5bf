"""Pairwise distance matrices: cosine, euclidean and spearman, as the VocSim protocol defines them.

For clips u, v:

- cosine: ``(1 − cos(u, v)) / 2`` clamped to [0, 1];
- euclidean: ``‖u − v‖₂``;
- spearman: ``(1 − ρ(u, v)) / 2`` with ρ the Pearson correlation of the average-rank vectors
  (ties share their mean rank, as ``scipy.stats.rankdata``), clamped to [0, 1].

All three reduce to one matrix product of per-clip feature rows, which is what makes them fast:
cosine and spearman are ``(1 − ⟨a, b⟩) / 2`` for unit-norm rows (the rows themselves, or their
centred ranks), euclidean is ``√(‖a‖² + ‖b‖² − 2⟨a, b⟩)``. The product is computed in row blocks
over the upper triangle only; each block is written to its rows and, transposed, to its
columns, which halves the arithmetic and makes the matrix exactly symmetric by construction.
The diagonal is set to exactly zero.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from audiobench.metrics.blocks import row_ranges
from audiobench.metrics.runtime import limited_cpu_threads, resolve_device
from audiobench.metrics.validation import invalid_clips_error, validate_embeddings

#: The distances the protocol defines, in its order.
DISTANCE_METRICS: tuple[str, ...] = ("cosine", "euclidean", "spearman")


def check_metric(metric: str) -> str:
    """Return ``metric`` if it is one of :data:`DISTANCE_METRICS`, else raise ValueError."""
    if metric not in DISTANCE_METRICS:
        raise ValueError(f"unknown distance {metric!r}; expected one of {DISTANCE_METRICS}")
    return metric


def average_ranks(X: torch.Tensor) -> torch.Tensor:
    """Row-wise ranks 1..d with tied values sharing their mean rank (``rankdata`` "average").

    Vectorised: sort each row, mark where a run of equal values starts and ends, and give every
    element of a run the mean of the run's first and last (1-based) positions. Because ties get
    the same value whatever order the sort leaves them in, the result does not depend on the
    sort's tie order (the protocol's reason for average ranks). Returns float64.
    """
    n, d = X.shape
    values, order = torch.sort(X, dim=1)
    position = torch.arange(d, device=X.device).expand(n, d)
    starts_run = torch.ones((n, d), dtype=torch.bool, device=X.device)
    starts_run[:, 1:] = values[:, 1:] != values[:, :-1]
    ends_run = torch.ones((n, d), dtype=torch.bool, device=X.device)
    ends_run[:, :-1] = starts_run[:, 1:]
    # First position of the run holding each element: running max of run-start positions.
    first = torch.where(starts_run, position, 0).cummax(dim=1).values
    # Last position: the same from the right (running min of run-end positions).
    last = torch.where(ends_run, position, d - 1).flip(1).cummin(dim=1).values.flip(1)
    mean_rank = (first + last).to(torch.float64) / 2 + 1
    return torch.empty_like(mean_rank).scatter_(1, order, mean_rank)


def _row_features(
    X: np.ndarray,
    metric: str,
    ids: Sequence[str | int] | None,
    context: str,
    device: torch.device,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Per-clip rows whose inner products give the distance, plus squared norms (euclidean).

    Returned in float64; the caller casts to the precision of the matrix product.
    """
    features = torch.from_numpy(X).to(device=device, dtype=torch.float64)
    if metric == "cosine":
        norms = torch.linalg.vector_norm(features, dim=1)
        zero = torch.nonzero(norms == 0).flatten().cpu().numpy()
        if zero.size:
            raise invalid_clips_error(
                f"cosine distance is undefined for zero vectors{context}", zero, ids
            )
        return features / norms[:, None], None
    if metric == "spearman":
        rows = torch.empty_like(features)
        # Ranking allocates several int64 temporaries per element: bound them by blocks.
        for start, stop in row_ranges(features.shape[0], features.shape[1], factor=8):
            rows[start:stop] = average_ranks(features[start:stop])
        rows -= rows.mean(dim=1, keepdim=True)
        norms = torch.linalg.vector_norm(rows, dim=1)
        # All ranks equal <=> the vector is constant: its correlation with anything is 0/0.
        constant = torch.nonzero(norms == 0).flatten().cpu().numpy()
        if constant.size:
            raise invalid_clips_error(
                f"spearman distance is undefined for constant vectors{context}", constant, ids
            )
        return rows / norms[:, None], None
    # Euclidean distances do not change under translation; centring first shrinks the norms
    # and with them the cancellation error in ‖a‖² + ‖b‖² − 2⟨a, b⟩.
    centred = features - features.mean(dim=0, keepdim=True)
    return centred, (centred * centred).sum(dim=1)


def fill_distance_matrix(
    X: np.ndarray,
    metric: str,
    out: torch.Tensor,
    *,
    ids: Sequence[str | int] | None = None,
    context: str = "",
) -> torch.Tensor:
    """Write the ``metric`` distance matrix of the rows of ``X`` into ``out`` (N × N) and return it.

    ``X`` must already be validated (finite float64). ``out`` is float32 or float64 on the device
    the work should run on; it is overwritten entirely, which lets a caller reuse one N × N
    buffer for every configuration. Memory besides ``out``: the feature rows and one row block.

    Precision: cosine and spearman rows have unit norm, so their product is computed in the
    dtype of ``out``; euclidean uses a float64 product (norms are not bounded, and the
    cancellation in ‖a‖² + ‖b‖² − 2⟨a, b⟩ would otherwise blur near-duplicate clips).

    ``context`` is appended to error messages (e.g. " after PCA to 100 components").
    """
    check_metric(metric)
    n = X.shape[0]
    if out.shape != (n, n):
        raise ValueError(f"out has shape {tuple(out.shape)}, expected {(n, n)}")
    features, squared_norms = _row_features(X, metric, ids, context, out.device)
    product_dtype = torch.float64 if metric == "euclidean" else out.dtype
    features = features.to(product_dtype)
    blocks = row_ranges(n, n, factor=2)
    workspace = torch.empty(
        (blocks[0][1] - blocks[0][0]) * n, dtype=product_dtype, device=out.device
    )
    for start, stop in blocks:
        rows = stop - start
        # Upper triangle only: columns start..n of rows start..stop.
        block = workspace[: rows * (n - start)].view(rows, n - start)
        torch.mm(features[start:stop], features[start:].T, out=block)
        if metric == "euclidean":
            assert squared_norms is not None
            block.mul_(-2.0).add_(squared_norms[start:stop, None])
            block.add_(squared_norms[None, start:]).clamp_(min=0.0).sqrt_()
        else:
            block.mul_(-0.5).add_(0.5).clamp_(0.0, 1.0)
        square = block[:, :rows]
        # The diagonal block is both an "upper" and a "lower" part; averaging it with its
        # transpose makes it exactly symmetric (a + b == b + a in floating point).
        square.copy_((square + square.T) * 0.5)
        square.diagonal().zero_()
        out[start:stop, start:].copy_(block)
        out[stop:, start:stop].copy_(block[:, rows:].T)
    return out


def pairwise_distances(
    X: object,
    metric: str,
    *,
    ids: Sequence[object] | None = None,
    device: str | torch.device | None = None,
    dtype: type[np.floating] | np.dtype = np.float32,
) -> np.ndarray:
    """Pairwise distance matrix of the clips (rows) of ``X`` under ``metric``.

    Parameters
    ----------
    X:
        Embeddings, shape (N, dim), N ≥ 2 (array-like or torch tensor).
    metric:
        ``"cosine"``, ``"euclidean"`` or ``"spearman"`` (see the module docstring).
    ids:
        Optional clip ids, used to name offending clips in errors.
    device:
        torch device to compute on (default CPU); the result is always a NumPy array.
    dtype:
        ``np.float32`` (default; 1.16 GB for N = 17,041) or ``np.float64``.

    Returns
    -------
    numpy.ndarray
        (N, N), exactly symmetric, exactly zero diagonal.

    Raises
    ------
    InvalidEmbeddingsError
        For rows with NaN/Inf values, zero vectors under cosine, or constant vectors under
        spearman; the message and ``clip_ids`` name the clips.
    """
    check_metric(metric)
    torch_dtype = {np.dtype(np.float32): torch.float32, np.dtype(np.float64): torch.float64}.get(
        np.dtype(dtype)
    )
    if torch_dtype is None:
        raise ValueError(f"dtype must be float32 or float64, got {dtype!r}")
    array, names = validate_embeddings(X, ids)
    target = resolve_device(device)
    with limited_cpu_threads():
        out = torch.empty((array.shape[0],) * 2, dtype=torch_dtype, device=target)
        fill_distance_matrix(array, metric, out, ids=names)
    return out.cpu().numpy()
