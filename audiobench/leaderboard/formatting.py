"""How numbers look on every leaderboard output (Markdown, HTML, plots)."""

from __future__ import annotations

__all__ = ["MISSING", "direction_arrow", "format_count", "format_score", "plural"]

#: Shown for a score that does not exist; never 0, which would read as a result.
MISSING = "–"


def format_score(value: float | None, *, percent: bool) -> str:
    """``0.4596`` -> ``"45.96"`` for percent columns, ``"0.4596"`` otherwise."""
    if value is None:
        return MISSING
    return f"{value * 100:.2f}" if percent else f"{value:.4f}"


def format_count(value: float | None) -> str:
    """Parameter counts and the like: ``94_400_000`` -> ``"94.4M"``."""
    if value is None:
        return MISSING
    for size, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            return f"{value / size:.3g}{suffix}"
    return f"{value:.3g}"


def direction_arrow(higher_is_better: bool) -> str:
    return "↑" if higher_is_better else "↓"


def plural(n: int, noun: str) -> str:
    """``plural(1, "model")`` -> ``"1 model"``, ``plural(2, "model")`` -> ``"2 models"``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
