"""Checks that a report's numbers agree with its counts (its model validators use them).

A result file is read back through the same ``Report`` models that built it, so a check
here refuses an edited file (``results validate``) exactly as it would refuse a bug in the
scoring code. Each check raises ``ValueError`` naming the field, to the precision written
(:func:`audiobench.reports.same_number`).
"""

from __future__ import annotations

from collections.abc import Sequence

from audiobench.reports import cutoff_of, same_number

__all__ = ["check_at_most", "check_share_of", "check_spread", "cutoffs"]

#: Slack for sums of floats taken in another order.
_EPS = 1e-9


def check_share_of(field: str, value: float | None, n: int, count: str) -> None:
    """``value`` is the share of ``n`` items that pass (``k / n`` for a whole ``k``).

    A mean over queries or clips of a 0/1 outcome (hit@k, accuracy) can only take these
    values; ``count`` names the field holding ``n``.
    """
    if value is None:
        return
    if n == 0:
        raise ValueError(f"{field}: {value!r} is defined, but {count} is 0")
    nearest = round(value * n) / n
    if not same_number(value, nearest):
        raise ValueError(
            f"{field}: {value!r} is not a share of {count} = {n} items (k/{n}; nearest {nearest!r})"
        )


def check_at_most(low_field: str, low: float | None, high_field: str, high: float | None) -> None:
    """``low`` ≤ ``high`` (either undefined: nothing to check)."""
    if low is not None and high is not None and low > high + _EPS * max(1.0, abs(high)):
        raise ValueError(f"{low_field} ({low!r}) exceeds {high_field} ({high!r})")


def check_spread(
    field: str, mean: float, std: float, median: float, low: float, high: float
) -> None:
    """Mean, median, min and max of one set of values, and its population spread, agree:
    min ≤ mean, median ≤ max, and std ≤ (max − min) / 2."""
    at = f"{field}." if field else ""
    for name, value in (("mean", mean), ("median", median)):
        check_at_most(f"{at}min", low, f"{at}{name}", value)
        check_at_most(f"{at}{name}", value, f"{at}max", high)
    check_at_most(f"{at}std", std, f"half of {at}max - {at}min", (high - low) / 2)


def cutoffs(names: Sequence[str], prefix: str, suffix: str = "") -> list[tuple[int, str]]:
    """``(k, name)`` of each metric named ``<prefix><k><suffix>`` among ``names``, by k."""
    found = [(k, n) for n in names if (k := cutoff_of(n, prefix, suffix)) is not None]
    return sorted(found)
