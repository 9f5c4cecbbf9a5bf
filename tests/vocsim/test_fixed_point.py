"""Fixed-point rows and their exact int8 products with 0/1 selections."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import torch

from audiobench.vocsim.fixed_point import (
    combined_products,
    combined_to_float,
    remainder_counts,
    row_powers_of_two,
    selected_digit_sums,
    to_fixed_point,
)


def _selected_sums(block: torch.Tensor, selection: torch.Tensor, n_digits: int) -> torch.Tensor:
    """Row sums of ``block`` over each column of ``selection`` through the digits."""
    rows = to_fixed_point(block, n_digits)
    counts = selection.sum(dim=0, dtype=torch.int64).expand(block.shape[0], -1)
    whole = combined_products(selected_digit_sums(rows, selection))
    sums = combined_to_float(whole, counts, rows.exponents, n_digits)
    picked = selection[rows.remainder_columns].to(torch.float64)
    sums.index_add_(0, rows.remainder_rows, picked * rows.remainder_values[:, None])
    return sums


def test_hand_computed_digits() -> None:
    # Row 0: largest 0.75 < 2^0, so E = 0 and 0.75 = 192/256, 0.5 = 128/256, 2^-33 is below
    # four digits (32 bits). Row 1 is all zeros (E = 0, every digit 0).
    block = torch.tensor([[0.75, 0.5, 2.0**-33], [0.0, 0.0, 0.0]], dtype=torch.float64)
    rows = to_fixed_point(block, 4)
    assert rows.exponents.tolist() == [0, 0]
    digits = rows.digits.to(torch.int64) + 128
    assert digits[:, 0].tolist() == [[192, 128, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]]
    assert digits[:, 1].abs().sum() == 0
    # Row totals of the combined digits, offsets included: row 0's first digit sums to
    # 192 + 128 + 0 − 3·128 = −64, its others to −3·128; row 1's every digit to −3·128.
    assert rows.totals.tolist() == [
        -64 * 2**24 - 384 * (2**16 + 2**8 + 1),
        -384 * (2**24 + 2**16 + 2**8 + 1),
    ]
    assert torch.equal(rows.totals, combined_products(rows.digits.to(torch.int64).sum(dim=2)))
    assert rows.remainder_rows.tolist() == [0]
    assert rows.remainder_columns.tolist() == [2]
    assert rows.remainder_values.tolist() == [2.0**-33]
    selection = torch.tensor([[1, 0], [1, 1], [1, 0]], dtype=torch.int8)
    assert _selected_sums(block, selection, 4).tolist() == [[1.25 + 2.0**-33, 0.5], [0.0, 0.0]]


@pytest.mark.parametrize("n_digits", [1, 3, 4, 6, 7])
def test_digits_and_remainders_rebuild_every_entry(n_digits: int) -> None:
    rng = np.random.default_rng(0)
    values = rng.random((20, 50)).astype(np.float32)
    values[values < 0.1] *= np.float32(1e-5)  # entries far below their row's largest
    values[3] = 0.0
    values[5, 7] = np.float32(2.0**-120)
    values[8] *= np.float32(2.0**-110)  # a row whose scale float32 cannot hold as a power
    block = torch.from_numpy(values).to(torch.float64)
    rows = to_fixed_point(block, n_digits)
    rebuilt = torch.zeros_like(block)
    for k in range(n_digits):
        digit = rows.digits[k].to(torch.float64) + 128
        rebuilt += torch.ldexp(digit, rows.exponents[:, None] - 8 * (k + 1))
    rebuilt[rows.remainder_rows, rows.remainder_columns] += rows.remainder_values
    assert torch.equal(rebuilt, block)
    assert ((rows.digits.to(torch.int64) + 128) <= 255).all()
    # Rebuilding with the exponents already found gives the same rows.
    again = to_fixed_point(block, n_digits, rows.exponents)
    for name in ("digits", "exponents", "remainder_rows", "remainder_columns", "remainder_values"):
        assert torch.equal(getattr(again, name), getattr(rows, name))
    assert torch.equal(again.totals, rows.totals)


def test_sums_are_the_exact_sums() -> None:
    # Float32 entries within a range whose sums fit float64: every exact sum is representable,
    # so the result must equal the exact rational sum, entry for entry.
    rng = np.random.default_rng(1)
    values = (rng.random((30, 200)) * 2.0 + 0.01).astype(np.float32)
    values[:, :5] *= np.float32(1e-3)
    selection = (rng.random((200, 6)) < 0.4).astype(np.int8)
    sums = _selected_sums(torch.from_numpy(values).double(), torch.from_numpy(selection), 4)
    for i in range(30):
        for c in range(6):
            exact = sum(
                (Fraction(float(values[i, j])) for j in range(200) if selection[j, c]), Fraction()
            )
            assert Fraction(float(sums[i, c])) == exact


def test_remainder_counts_fall_with_more_digits() -> None:
    # The largest entry, 1.0, sets E = 1: K digits hold the bits down to 2^(1 − 8K).
    block = torch.tensor([[1.0, 0.5 + 2.0**-40, 2.0**-20 + 2.0**-48]], dtype=torch.float64)
    assert remainder_counts(block, range(4, 8)) == {4: 2, 5: 2, 6: 1, 7: 0}


def test_row_powers_of_two_are_exact_and_fall_back_outside_the_range() -> None:
    block = torch.tensor([[1.5, 3.0], [0.75, 2.0**-100]], dtype=torch.float32)
    for exponents in ([3, -2], [140, -140], [127, -126]):
        shifts = torch.tensor(exponents)
        expected = torch.ldexp(block.to(torch.float64), shifts[:, None])
        scaled = row_powers_of_two(block.to(torch.float64), shifts)
        assert torch.equal(scaled, expected)
    assert torch.equal(
        row_powers_of_two(block, torch.tensor([3, -2])),
        torch.ldexp(block, torch.tensor([[3], [-2]])),
    )


def test_invalid_input() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        to_fixed_point(torch.tensor([[0.5, -0.25]], dtype=torch.float64), 4)
    with pytest.raises(ValueError, match="n_digits"):
        to_fixed_point(torch.zeros((1, 2), dtype=torch.float64), 8)
