"""Pairwise distance matrices: cosine, euclidean and spearman, as the VocSim protocol defines them.

For clips u, v:

- cosine: ``(1 − cos(u, v)) / 2`` clamped to [0, 1];
- euclidean: ``‖u − v‖₂``;
- spearman: ``(1 − ρ(u, v)) / 2`` with ρ the Pearson correlation of the average-rank vectors
  (ties share their mean rank, as ``scipy.stats.rankdata``), clamped to [0, 1].

All three reduce to inner products of per-clip rows, which is what makes them fast: a matrix
product, computed in row blocks over the upper triangle only (each block is written to its
rows and, transposed, to its columns, which halves the arithmetic and makes the matrix exactly
symmetric). The distance is then evaluated from the inner product g and the rows' squared
norms S in float64 and rounded once to the matrix's dtype. The diagonal is exactly zero.

Exact ties. The protocol breaks ties between equal distances by the lower clip index, so
distances that are mathematically equal must come out bit-identical, not differ by rounding:

- *Integer rows* (spearman always: twice the centred average ranks are integers; cosine and
  euclidean when the embeddings are integer-valued) have exact integer products, from a
  float32 product while every partial sum stays below 2²⁴, from a float64 one below 2⁵³, and
  on the CPU from int8 digits (below). From exact g and S, euclidean's ``√(S_a + S_b − 2g)``
  is one square root of an exact integer (torch's float64 square root may be one ulp from
  the correctly rounded one, the same ulp for equal integers); cosine and spearman use
  ``ρ = ±√(g² / (S_a·S_b))``, one correctly rounded division of exact integers (while
  S² < 2⁵³), so equal correlations give equal bits even when the rows' norms differ.
  Integer rows within ±INT8_PAIR_MAX can be split into two int8 digits whose three products
  (int32 accumulation) are exact: taken where the rates measured on this machine make them
  faster than one float64 product (:mod:`audiobench.vocsim.kernels`; about twice as fast
  with int8 dot-product instructions, several times slower without).
- *Float rows* are multiplied in float64 (error ~10⁻¹⁶, far below float32's rounding, so equal
  distances round to the same float32 with overwhelming probability). Cosine uses the
  centred unit vectors and euclidean the centred vectors: ``‖a − b‖² = S_a + S_b − 2g`` then
  cancels far less than with raw rows. Rows wider than :data:`FLOAT64_PRODUCT_MAX_DIM` use
  float32 products over chunks of :data:`FLOAT32_CHUNK` dimensions accumulated in float64,
  unless the clips are few enough for the Gram route below.
- *Gram route* (float rows much wider than there are clips, e.g. flattened spectrograms):
  the float64 Gram matrix of the centred clips, computed once (:func:`centred_gram`), gives
  euclidean distances, cosine distances and the PCA of the grid without another product.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from audiobench.metrics.blocks import row_ranges
from audiobench.metrics.runtime import limited_cpu_threads, resolve_device
from audiobench.metrics.validation import invalid_clips_error, validate_embeddings
from audiobench.vocsim import kernels

#: The distances the protocol defines, in its order.
DISTANCE_METRICS: tuple[str, ...] = ("cosine", "euclidean", "spearman")
#: Integers below these bounds (and sums of them) are exact in float32 and float64.
FLOAT32_INTEGERS: float = 2.0**24
FLOAT64_INTEGERS: float = 2.0**53
#: Integer rows with entries within ±INT8_PAIR_MAX can be split into two int8 digits on the CPU
#: (v = 256·h + l, both digits within ±128): their product is three int8 products with int32
#: accumulation, exact while rows are at most INT8_PAIR_MAX_DIM wide; used where the measured
#: int8 rate is over three times the float64 one (0.57× the float64 product's time with int8
#: dot products: 3,000 spearman rows of 18,304 ranks, 0.72 s against 1.27 s).
INT8_PAIR_MAX: int = 127 * 256 + 127
INT8_PAIR_MAX_DIM: int = (1 << 31) // (2 * 127 * 128) - 1
#: Float rows up to this width are multiplied in float64; wider ones in float32 chunks.
FLOAT64_PRODUCT_MAX_DIM: int = 1024
#: Dimensions per float32 chunk (its rounding error grows with the chunk's length).
FLOAT32_CHUNK: int = 512
#: Float rows wider than this go through the Gram matrix when it fits in GRAM_BYTES.
GRAM_MIN_DIM: int = 2048
#: Largest float64 Gram matrix kept (N ≤ 5,792 clips).
GRAM_BYTES: int = 1 << 28


def check_metric(metric: str) -> str:
    """Return ``metric`` if it is one of :data:`DISTANCE_METRICS`, else raise ValueError."""
    if metric not in DISTANCE_METRICS:
        raise ValueError(f"unknown distance {metric!r}; expected one of {DISTANCE_METRICS}")
    return metric


def _sorted_rows(X: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Each row sorted ascending and the order that sorts it (any order among equal values)."""
    if X.device.type != "cpu":
        return torch.sort(X, dim=1)
    # NumPy's default sort of 64-bit keys is a vectorised (AVX-512) quicksort: about four times
    # faster than torch.sort on CPU for rows of thousands of values.
    data = X.numpy()
    order = np.argsort(data, axis=1)
    return torch.from_numpy(np.take_along_axis(data, order, axis=1)), torch.from_numpy(order)


def _tied_mean_ranks(values: torch.Tensor) -> torch.Tensor:
    """The mean 1-based position of each element's run of equal values in sorted rows."""
    n, d = values.shape
    position = torch.arange(d, device=values.device).expand(n, d)
    starts_run = torch.ones((n, d), dtype=torch.bool, device=values.device)
    starts_run[:, 1:] = values[:, 1:] != values[:, :-1]
    ends_run = torch.ones((n, d), dtype=torch.bool, device=values.device)
    ends_run[:, :-1] = starts_run[:, 1:]
    # First position of the run holding each element: running max of run-start positions.
    first = torch.where(starts_run, position, 0).cummax(dim=1).values
    # Last position: the same from the right (running min of run-end positions).
    last = torch.where(ends_run, position, d - 1).flip(1).cummin(dim=1).values.flip(1)
    return (first + last).to(torch.float64) / 2 + 1


def average_ranks(X: torch.Tensor) -> torch.Tensor:
    """Row-wise ranks 1..d with tied values sharing their mean rank (``rankdata`` "average").

    Vectorised: sort each row; an element's rank is its 1-based position in the sorted row, or,
    in a run of equal values, the mean of the run's first and last positions. Because ties get
    the same value whatever order the sort leaves them in, the result does not depend on the
    sort's tie order (the protocol's reason for average ranks). Returns float64.
    """
    n, d = X.shape
    values, order = _sorted_rows(X)
    mean_rank = torch.arange(1, d + 1, dtype=torch.float64, device=X.device).repeat(n, 1)
    # Only rows with a tie need the run arithmetic.
    tied = torch.nonzero((values[:, 1:] == values[:, :-1]).any(dim=1)).flatten()
    if tied.numel():
        mean_rank[tied] = _tied_mean_ranks(values[tied])
    return torch.empty_like(mean_rank).scatter_(1, order, mean_rank)


def centred_gram(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(centred, gram)``: the clips minus their mean, and their float64 Gram matrix.

    One symmetric product (NumPy computes ``A @ A.T`` as a rank-k update, half the work of a
    general product). Shared by the PCA of clips wider than they are many and by the
    euclidean and cosine distances of such clips, so that it is computed once per subset.
    """
    centred = X - X.mean(axis=0)
    return centred, centred @ centred.T


def gram_route(n_clips: int, dim: int) -> bool:
    """Whether float rows of this shape are compared through their Gram matrix."""
    return dim > max(GRAM_MIN_DIM, n_clips) and n_clips * n_clips * 8 <= GRAM_BYTES


def _integer_valued(X: torch.Tensor) -> bool:
    """Whether every entry of ``X`` is an integer (float embeddings fail on their first row)."""
    for start, stop in [(0, min(1, X.shape[0])), *row_ranges(*X.shape)]:
        block = X[start:stop]
        if not torch.equal(block, torch.round(block)):
            return False
    return True


@dataclass(frozen=True, eq=False)
class _Rows:
    """Per-clip rows whose inner products g give a distance, and how.

    ``form`` is "angle" (``(1 − g/√(S_a S_b)) / 2``), "chord" (``(S_a + S_b − 2g) / 4``, for
    centred unit vectors) or "euclidean" (``√(S_a + S_b − 2g)``); ``squared_norms`` are the
    rows' S in float64 (exact for integer rows). ``exact`` marks integer rows, whose products
    are computed exactly; ``chunk`` > 0 marks float32 rows multiplied chunk by chunk;
    ``digits`` holds integer rows as int8 digits (:func:`_int8_pairs`) instead of ``rows``.
    """

    rows: torch.Tensor
    squared_norms: torch.Tensor
    form: str
    exact: bool
    chunk: int = 0
    digits: tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor] | None = None


def _int8_pairs(
    values: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Integer rows v (|v| ≤ INT8_PAIR_MAX) as int8 digits v = 256·h + l, l ∈ [−128, 127]:
    ``(h, l, [h l], [l h])``, the last two for the cross terms h·l' + l·h' as one product (h
    and l are views of ``[h l]``)."""
    n, d = values.shape
    high_low = torch.empty((n, 2 * d), dtype=torch.int8, device=values.device)
    for start, stop in row_ranges(n, d, factor=2):
        whole = values[start:stop].to(torch.int32)
        low = whole.add(128).bitwise_and_(255).sub_(128)  # v mod 256, within [−128, 127]
        high_low[start:stop, d:] = low
        high_low[start:stop, :d] = whole.sub_(low).bitwise_right_shift_(8)  # exact division
    low_high = torch.cat([high_low[:, d:], high_low[:, :d]], dim=1)
    return high_low[:, :d], high_low[:, d:], high_low, low_high


def _product_rows(values: torch.Tensor, form: str, squared: torch.Tensor | None = None) -> _Rows:
    """The rows (float64) in the form their products are computed in.

    ``squared`` holds the squared norms of integer rows (None for float rows, whose norms are
    taken of the rows as multiplied, so that S_a + S_b − 2g is ‖a − b‖² of those rows).
    """
    if squared is None:
        if values.shape[1] <= FLOAT64_PRODUCT_MAX_DIM:
            return _Rows(values, _squared_norms(values), form, False)
        narrow = values.to(torch.float32)
        return _Rows(narrow, _squared_norms(narrow), form, False, FLOAT32_CHUNK)
    # Every partial sum of a product is at most √(S_a S_b) ≤ max S (Cauchy–Schwarz).
    if float(squared.max()) < FLOAT32_INTEGERS:
        return _Rows(values.to(torch.float32), squared, form, True)
    if (
        values.device.type == "cpu"
        and values.shape[1] <= INT8_PAIR_MAX_DIM
        and max(-float(values.min()), float(values.max())) <= INT8_PAIR_MAX
    ):
        faster, rates = _int8_pairs_faster(values.device)
        kernels.note("integer-rows", "int8" if faster else "float64", rates)
        if faster:
            return _Rows(values, squared, form, True, digits=_int8_pairs(values))
    else:
        kernels.note("integer-rows", "float64")
    return _Rows(values, squared, form, True)


def _int8_pairs_faster(device: torch.device) -> tuple[bool, kernels.KernelRates | None]:
    """Whether three int8 products beat one float64 product here, and the rates that say so
    (none when the scoring kernel setting forces either)."""
    forced = kernels.forced_kernel()
    if forced in ("int8", "float64"):
        return forced == "int8", None
    rates = kernels.measured_rates(device)
    return rates.int8 is not None and rates.int8 > 3.0 * rates.float64, rates


def _prepare_rows(
    X: torch.Tensor, metric: str, ids: Sequence[str | int] | None, context: str, integer: bool
) -> _Rows:
    """The rows, norms and form of ``metric`` for the clips ``X`` (float64, on the device),
    ``integer`` when every entry of X is an integer."""
    if metric == "spearman":
        d = X.shape[1]
        ranks = torch.empty_like(X)
        # Ranking allocates several int64 temporaries per element: bound them by blocks.
        for start, stop in row_ranges(X.shape[0], d, factor=8):
            ranks[start:stop] = average_ranks(X[start:stop])
        # Twice the centred ranks are integers (average ranks are multiples of 1/2 and their
        # mean is (d + 1) / 2), so their products are exact.
        rows = ranks.mul_(2.0).sub_(d + 1)
        squared = _squared_norms(rows)
        # All ranks equal <=> the vector is constant: its correlation with anything is 0/0.
        constant = torch.nonzero(squared == 0).flatten().cpu().numpy()
        if constant.size:
            raise invalid_clips_error(
                f"spearman distance is undefined for constant vectors{context}", constant, ids
            )
        return _product_rows(rows, "angle", squared)
    squared = _squared_norms(X)
    integer = integer and float(squared.max()) < FLOAT64_INTEGERS
    if metric == "cosine":
        zero = torch.nonzero(squared == 0).flatten().cpu().numpy()
        if zero.size:
            raise invalid_clips_error(
                f"cosine distance is undefined for zero vectors{context}", zero, ids
            )
        if integer:
            return _product_rows(X, "angle", squared)
        unit = X / torch.sqrt(squared)[:, None]
        rows = unit - unit.mean(dim=0, keepdim=True)
    elif integer:
        return _product_rows(X, "euclidean", squared)
    else:
        # Translation does not change euclidean distances; centring shrinks the norms and with
        # them the cancellation in S_a + S_b − 2g.
        rows = X - X.mean(dim=0, keepdim=True)
    return _product_rows(rows, "chord" if metric == "cosine" else "euclidean")


def _inner_products(rows: _Rows, start: int, stop: int) -> torch.Tensor:
    """float64 inner products of rows start..stop with rows start..N (upper triangle)."""
    if rows.digits is not None:
        high, low, high_low, low_high = rows.digits
        # 2^16·h·h' + 2^8·(h·l' + l·h') + l·l', each product exact in int32.
        whole = (
            torch._int_mm(high[start:stop], high[start:].T).to(torch.int64).bitwise_left_shift_(8)
        )
        whole.add_(torch._int_mm(high_low[start:stop], low_high[start:].T)).bitwise_left_shift_(8)
        return whole.add_(torch._int_mm(low[start:stop], low[start:].T)).to(torch.float64)
    left, right = rows.rows[start:stop], rows.rows[start:]
    if not rows.chunk:
        return (left @ right.T).to(torch.float64)
    block = torch.zeros((stop - start, right.shape[0]), dtype=torch.float64, device=left.device)
    for first in range(0, left.shape[1], rows.chunk):
        last = first + rows.chunk
        block += left[:, first:last] @ right[:, first:last].T
    return block


def _distances_from_products(
    g: torch.Tensor, left: torch.Tensor, right: torch.Tensor, form: str, exact: bool
) -> torch.Tensor:
    """Distances (float64, in place of ``g``) from inner products and the squared norms of the
    block's rows (``left``) and columns (``right``).

    Every formula is symmetric in (a, b) operation by operation (S_a + S_b before subtracting
    2g, √S_a·√S_b as one product), so an entry computed as (a, b) or as (b, a) rounds alike.
    """
    if form in ("euclidean", "chord"):
        squared = torch.add(left[:, None], right[None, :]).sub_(g, alpha=2.0)
        if form == "euclidean":
            return g.copy_(squared.clamp_(min=0.0).sqrt_())
        return g.copy_(squared.mul_(0.25).clamp_(0.0, 1.0))
    largest = float(torch.maximum(left.max(), right.max()))
    if exact and largest * largest < FLOAT64_INTEGERS:
        # ρ² = g² / (S_a S_b): one correctly rounded division of exact integers, so equal
        # correlations give equal bits.
        sign = torch.sign(g)
        rho = g.square_().div_(left[:, None] * right[None, :]).sqrt_().mul_(sign)
    else:
        rho = g.div_(torch.sqrt(left)[:, None] * torch.sqrt(right)[None, :])
    return rho.neg_().add_(1.0).mul_(0.5).clamp_(0.0, 1.0)


def _squared_norms(rows: torch.Tensor) -> torch.Tensor:
    """float64 Σ x² of each row (exact for integer rows), in row blocks."""
    out = torch.empty(rows.shape[0], dtype=torch.float64, device=rows.device)
    for start, stop in row_ranges(rows.shape[0], rows.shape[1], factor=2):
        block = rows[start:stop].to(torch.float64)
        out[start:stop] = (block * block).sum(dim=1)
    return out


def _angle_from_gram(
    gram: torch.Tensor, centred_mean_products: torch.Tensor, mean_square: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Uncentred inner products and squared norms from a centred Gram matrix: with c = x − m,
    x_a·x_b = c_a·c_b + c_a·m + c_b·m + m·m."""
    raw = gram + centred_mean_products[:, None] + centred_mean_products[None, :] + mean_square
    return raw, torch.diagonal(raw).clone()


def _write_block(out: torch.Tensor, block: torch.Tensor, start: int, stop: int) -> None:
    """Write an upper-triangle block (float64) of rows start..stop to ``out`` and its mirror."""
    rows = stop - start
    square = block[:, :rows]
    # The diagonal block is both an "upper" and a "lower" part; averaging it with its
    # transpose makes it exactly symmetric (a + b == b + a in floating point).
    square.copy_((square + square.T) * 0.5)
    square.diagonal().zero_()
    cast = block.to(out.dtype)
    out[start:stop, start:].copy_(cast)
    out[stop:, start:stop].copy_(cast[:, rows:].T)


class ClipDistances:
    """The distance matrices of one set of clips under any of the three metrics.

    Work shared between metrics is done once: the integer check, and for float clips much
    wider than they are many the centred Gram matrix (which a caller that already computed
    it, e.g. for PCA, can pass in).

    Parameters
    ----------
    X:
        Validated embeddings (finite float64), shape (N, dim).
    device:
        Where the N × N work runs.
    ids, context:
        Clip ids and a suffix for error messages (e.g. " after PCA to 100 components").
    gram:
        Optional ``(centred, gram)`` from :func:`centred_gram` of exactly these clips.
    """

    def __init__(
        self,
        X: np.ndarray,
        device: torch.device,
        *,
        ids: Sequence[str | int] | None = None,
        context: str = "",
        gram: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        self.X = X
        self.device = device
        self.ids = ids
        self.context = context
        self._gram = gram
        self._features: torch.Tensor | None = None
        self._integer: bool | None = None

    @property
    def integer(self) -> bool:
        """Whether every entry of the clips is an integer (checked once)."""
        if self._integer is None:
            self._integer = _integer_valued(self.features)
        return self._integer

    @property
    def features(self) -> torch.Tensor:
        if self._features is None:
            self._features = torch.from_numpy(self.X).to(device=self.device, dtype=torch.float64)
        return self._features

    def _uses_gram(self, metric: str) -> bool:
        if metric == "spearman" or not gram_route(*self.X.shape):
            return False
        return not self.integer

    def fill(self, metric: str, out: torch.Tensor) -> torch.Tensor:
        """Write the ``metric`` distance matrix into ``out`` (N × N, float32 or float64)."""
        check_metric(metric)
        n = self.X.shape[0]
        if out.shape != (n, n):
            raise ValueError(f"out has shape {tuple(out.shape)}, expected {(n, n)}")
        if self._uses_gram(metric):
            return self._fill_from_gram(metric, out)
        integer = metric != "spearman" and self.integer
        rows = _prepare_rows(self.features, metric, self.ids, self.context, integer)
        for start, stop in row_ranges(n, n, factor=2):
            g = _inner_products(rows, start, stop)
            block = _distances_from_products(
                g, rows.squared_norms[start:stop], rows.squared_norms[start:], rows.form, rows.exact
            )
            _write_block(out, block, start, stop)
        return out

    def _fill_from_gram(self, metric: str, out: torch.Tensor) -> torch.Tensor:
        if self._gram is None:
            self._gram = centred_gram(self.X)
        centred, gram_array = self._gram
        gram = torch.from_numpy(gram_array).to(self.device)
        if metric == "euclidean":
            squared = torch.diagonal(gram).clone()
            form = "euclidean"
        else:
            zero = np.flatnonzero(~self.X.any(axis=1))
            if zero.size:
                raise invalid_clips_error(
                    f"cosine distance is undefined for zero vectors{self.context}", zero, self.ids
                )
            mean = self.X.mean(axis=0)
            products = torch.from_numpy(centred @ mean).to(self.device)
            gram, squared = _angle_from_gram(gram, products, float(mean @ mean))
            form = "angle"
        n = self.X.shape[0]
        for start, stop in row_ranges(n, n, factor=2):
            g = gram[start:stop, start:].clone()
            block = _distances_from_products(
                g, squared[start:stop], squared[start:], form, exact=False
            )
            _write_block(out, block, start, stop)
        return out


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
    buffer for every configuration. Memory besides ``out``: the feature rows and a few row
    blocks (or, on the Gram route, one float64 N × N Gram matrix). See the module docstring for
    precision and ties. ``context`` is appended to error messages (e.g. " after PCA to 100
    components").
    """
    return ClipDistances(X, out.device, ids=ids, context=context).fill(metric, out)


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
        (N, N), exactly symmetric, exactly zero diagonal; mathematically equal distances are
        equal (see the module docstring).

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
