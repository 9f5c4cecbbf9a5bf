"""Building blocks of the families' ``score_problems``: one message format for every family.

Result validation (``audiobench results validate``) asks each family what is
wrong with a result's scores; these helpers phrase the answer for one value,
as ``"<path>: <message>"`` lines.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from audiobench.task import DEFAULT_SUBSET

__all__ = [
    "MEAN_GROUP",
    "SLACK",
    "count_problem",
    "cutoff_metric",
    "flat_score_problems",
    "number_problem",
    "show",
]

#: Aggregate key of families whose subsets are averaged with equal weight.
MEAN_GROUP = "mean"

#: Floating-point slack on range ends, far below any reported precision.
SLACK = 1e-9


def show(value: Any) -> str:
    """``repr(value)``, cut to 40 characters: hostile files may hold huge values."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _bound(value: float) -> str:
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    return f"{value:g}"


def number_problem(
    where: str, value: Any, low: float, high: float, *, nullable: bool = True
) -> list[str]:
    """A problem unless ``value`` is a finite number in [low, high] (or null, if ``nullable``)."""
    if value is None and nullable:
        return []
    if isinstance(value, bool) or not isinstance(value, int | float):
        kind = "a number or null" if nullable else "a finite number"
        return [f"{where}: must be {kind}, not {show(value)}"]
    if not math.isfinite(value) or not low - SLACK <= value <= high + SLACK:
        return [f"{where}: {value!r} is outside [{_bound(low)}, {_bound(high)}]"]
    return []


def count_problem(where: str, value: Any, *, nullable: bool = False) -> list[str]:
    """A problem unless ``value`` is a non-negative integer (or null, if ``nullable``)."""
    if value is None and nullable:
        return []
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return []
    kind = "a non-negative integer or null" if nullable else "a non-negative integer"
    return [f"{where}: must be {kind}, not {show(value)}"]


def cutoff_metric(name: str, prefixes: Sequence[str]) -> bool:
    """Whether ``name`` reads ``<prefix><k>`` for one of ``prefixes`` and a positive integer k."""
    for prefix in prefixes:
        k = name.removeprefix(prefix)
        if k != name and k.isdigit() and int(k) >= 1 and k == str(int(k)):
            return True
    return False


def flat_score_problems(
    scores: Mapping[str, Any],
    *,
    subsets: Sequence[str],
    metric_range: Callable[[str], tuple[float, float] | None],
    counts: frozenset[str],
    known: str,
) -> list[str]:
    """Problems of a result's ``scores`` or ``aggregates`` for a family with flat reports.

    ``scores`` maps each subset (``"default"`` when the task declares none) to
    ``{metric: number or null, count: int or null}``; ``aggregates`` may hold ``"mean"`` with
    the same metrics plus ``n_subsets`` and ``subsets``. ``metric_range`` gives a metric's
    closed range (None: unknown name); ``counts`` are non-negative integer fields; ``known``
    lists the metric names for the message.
    """
    declared = tuple(subsets) or (DEFAULT_SUBSET,)
    problems: list[str] = []
    for key, entry in scores.items():
        aggregate = key == MEAN_GROUP and key not in declared
        if not aggregate and key not in declared:
            problems.append(f"{key}: unknown subset; the task declares {', '.join(declared)}")
        if not isinstance(entry, Mapping):
            problems.append(f"{key}: must be a mapping of metric names, not {show(entry)}")
            continue
        for name, value in entry.items():
            where = f"{key}.{name}"
            if aggregate and name == "subsets":
                if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
                    problems.append(f"{where}: must be a list of subset names")
                continue
            if name in counts or (aggregate and name == "n_subsets"):
                problems += count_problem(where, value, nullable=True)
                continue
            bounds = metric_range(name)
            if bounds is None:
                problems.append(f"{where}: unknown metric; known: {known}")
                continue
            problems += number_problem(where, value, *bounds)
    return problems
