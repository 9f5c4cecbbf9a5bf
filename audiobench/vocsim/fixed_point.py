"""Exact sums of non-negative matrix rows over 0/1 column selections, as int8 matrix products.

A float64 matrix product ``B @ Y`` with a 0/1 matrix ``Y`` sums chosen entries of each row of B
exactly (B holding float32 values), but costs a float64 multiply-add per entry and column of Y.
An int8 product with int32 accumulation is exact and about eight times faster. This module
writes each row of B in fixed point relative to its largest entry,

    B[i, j] = Σ_k q_k[i, j] · 2^(E_i − 8k) + r[i, j],   k = 1 … K,

with 8-bit digits q_k ∈ [0, 255] (stored as ``q − 128`` in int8), ``B[i, :] < 2^E_i``, and a
remainder r holding the bits below the K-th digit: zero for every entry within a factor of
about 2^(8K − 24) of the row's largest, so a sparse set for K ≥ 4. Row sums over a selection
are then K exact integer products plus the selected remainders, combined in float64; every
partial sum of these non-negative parts lies between their smallest bit and the exact total,
so the result is the exact total whenever float64 can hold it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

#: Bits per digit.
DIGIT_BITS: int = 8
#: Offset that maps a digit 0…255 to int8.
DIGIT_OFFSET: int = 1 << (DIGIT_BITS - 1)
#: Fixed-point digits are cut from an int64, so at most seven fit.
MAX_DIGITS: int = 7
#: 0x8080…80 as a signed int64: the top bit of every byte.
_FLIP_EVERY_BYTE: int = int.from_bytes(b"\x80" * 8, "little", signed=True)


@dataclass(frozen=True)
class FixedPointRows:
    """Rows of a non-negative matrix in fixed point (see the module docstring).

    Attributes
    ----------
    digits:
        (K, rows, n) int8, ``q_k − 128``, most significant first.
    exponents:
        (rows,) int64 E_i: every entry of row i is below 2^E_i.
    remainder_rows, remainder_columns, remainder_values:
        The non-zero remainders r[i, j] (float64), row-major.
    totals:
        (rows,) int64: the whole row's sum of the digits combined as in
        :func:`combined_products`, Σ_j Σ_k (q_k[i, j] − 128) · 2^(8(K − k)).
    """

    digits: torch.Tensor
    exponents: torch.Tensor
    remainder_rows: torch.Tensor
    remainder_columns: torch.Tensor
    remainder_values: torch.Tensor
    totals: torch.Tensor

    @property
    def n_digits(self) -> int:
        return int(self.digits.shape[0])


def row_powers_of_two(block: torch.Tensor, exponents: torch.Tensor) -> torch.Tensor:
    """``block`` times 2^exponents[i] in row i: exact (a power of two) as long as the results
    neither overflow nor fall below the normal range. A product with the powers themselves is
    ten times faster than ``torch.ldexp``, which raises 2 to a power per element; ldexp is
    kept for exponents whose power the dtype cannot hold."""
    info = torch.finfo(block.dtype)
    low, high = math.frexp(info.tiny)[1] - 1, math.frexp(info.max)[1] - 1
    if exponents.numel() and (int(exponents.min()) < low or int(exponents.max()) > high):
        return torch.ldexp(block, exponents.view(-1, *([1] * (block.ndim - 1))))
    ones = torch.ones(exponents.shape, dtype=block.dtype, device=block.device)
    return block * torch.ldexp(ones, exponents).view(-1, *([1] * (block.ndim - 1)))


def _scaled(
    block: torch.Tensor, n_digits: int, exponents: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """``block`` times 2^(8K − E_i) per row, in its own dtype, and the exponents E_i (found
    unless given)."""
    if n_digits < 1 or n_digits > MAX_DIGITS:
        raise ValueError(f"n_digits must be within 1..{MAX_DIGITS}, got {n_digits}")
    if not block.is_floating_point():
        raise TypeError(f"fixed-point rows need floating-point entries, got {block.dtype}")
    if block.numel() == 0:
        return block.clone(), torch.zeros(block.shape[0], dtype=torch.int64, device=block.device)
    if exponents is None:
        smallest, largest = torch.aminmax(block, dim=1)
        if float(smallest.min()) < 0.0:
            raise ValueError("fixed-point rows need non-negative entries")
        _, found = torch.frexp(largest)  # max < 2**E (E = 0 for a row of zeros)
        exponents = found.to(torch.int64)
    # Multiplying by a power of two is exact (the scaled values stay below 2^(8K) ≤ 2^56, far
    # from overflow in float32), so the scaled values are the entries' own bits.
    return row_powers_of_two(block, DIGIT_BITS * n_digits - exponents), exponents


def max_digits(n_entries: int) -> int:
    """The most digits whose integer combination (:func:`combined_products`) fits int64 in
    sums of up to ``n_entries`` entries: each digit sum is below 2^8 · n_entries."""
    return min(MAX_DIGITS, (63 - max(n_entries, 1).bit_length()) // DIGIT_BITS)


def remainder_counts(block: torch.Tensor, candidates: range) -> dict[int, int]:
    """How many entries of ``block`` (non-negative) leave a non-zero remainder with K digits,
    for each K in ``candidates``; chooses K by cost."""
    counts = {}
    for n_digits in candidates:
        scaled, _ = _scaled(block, n_digits)
        counts[n_digits] = int(torch.count_nonzero(scaled != torch.trunc(scaled)))
    return counts


def to_fixed_point(
    block: torch.Tensor, n_digits: int, exponents: torch.Tensor | None = None
) -> FixedPointRows:
    """Write the rows of ``block`` (float32 or float64, non-negative, finite) with
    ``n_digits`` digits. ``exponents``, the E_i of an earlier call on the same rows, saves
    finding them again (an engine that rebuilds the digits for every pass over a matrix)."""
    scaled, exponents = _scaled(block, n_digits, exponents)
    whole = torch.trunc(scaled)
    fraction = scaled.sub_(whole)  # exact: the bits below the last digit, ≥ 0
    # Remainders are rare: look for them only in the rows that have some.
    with_remainders = torch.nonzero((fraction != 0).any(dim=1)).flatten()
    at, columns = torch.nonzero(fraction[with_remainders], as_tuple=True)
    rows = with_remainders[at]
    values = torch.ldexp(
        fraction[rows, columns].to(torch.float64), exponents[rows] - DIGIT_BITS * n_digits
    )
    # The integer part is exact in int64. Flipping the top bit of every byte turns each digit
    # q into q − 128 read as a signed byte; the little-endian bytes come least significant first.
    integers = whole.to(torch.int64)
    totals = integers.sum(dim=1) - block.shape[1] * _offset(n_digits)
    as_bytes = integers.bitwise_xor_(_FLIP_EVERY_BYTE).view(torch.int8).view(*block.shape, 8)
    digits = torch.empty((n_digits, *block.shape), dtype=torch.int8, device=block.device)
    for k in range(n_digits):
        digits[k] = as_bytes[..., n_digits - 1 - k]
    return FixedPointRows(digits, exponents, rows, columns, values, totals)


def selected_digit_sums(rows: FixedPointRows, selection: torch.Tensor) -> torch.Tensor:
    """(K, rows, m) int32: Σ_j (q_k[i, j] − 128) · selection[j, c] for a (n, m) 0/1 int8
    ``selection`` (exact: at most 128·n in magnitude)."""
    k, n_rows, n = rows.digits.shape
    products = torch._int_mm(rows.digits.view(k * n_rows, n), selection)
    return products.view(k, n_rows, -1)


def _offset(n_digits: int) -> int:
    """The offset 128 of every digit, combined: 128 · (1 + 2^8 + … + 2^(8(K−1)))."""
    return sum(DIGIT_OFFSET << (DIGIT_BITS * k) for k in range(n_digits))


def combined_products(products: torch.Tensor) -> torch.Tensor:
    """int64 Σ_k products[k] · 2^(8(K−1−k)) of (K, ...) digit products (Horner's scheme).

    Linear in the products, so sums of combined products are combined sums."""
    whole = products[0].to(torch.int64)
    for k in range(1, int(products.shape[0])):
        whole = whole.bitwise_left_shift_(DIGIT_BITS).add_(products[k])
    return whole


def combined_to_float(
    whole: torch.Tensor, counts: torch.Tensor, exponents: torch.Tensor, n_digits: int
) -> torch.Tensor:
    """The float64 sums Σ_k (products[k] + 128·counts) · 2^(E_i − 8k) over selections of
    ``counts`` (rows, m) entries each, from the combined products ``whole`` (rows, m) int64
    (:func:`combined_products`, or sums of them) of rows with exponents ``exponents``: exact
    whenever float64 can hold the total, correctly rounded otherwise."""
    whole = whole + counts * _offset(n_digits)
    return row_powers_of_two(whole.to(torch.float64), exponents - DIGIT_BITS * n_digits)
