"""The leaderboard as Markdown: one table per benchmark and per task family.

Every string that came from a result file goes through :func:`escape_markdown`,
so a model name can neither inject HTML (``<img onerror=...>`` is shown as
text) nor break a table (``|``) or start a link.
"""

from __future__ import annotations

import html
import re

from audiobench.leaderboard.collate import Leaderboard, Table
from audiobench.leaderboard.formatting import (
    MISSING,
    direction_arrow,
    format_count,
    format_score,
    plural,
)

__all__ = ["escape_markdown", "render_markdown"]

# Characters with a meaning anywhere in a line of (GitHub-flavoured) Markdown,
# table cells included; ``<``, ``>`` and ``&`` are HTML-escaped instead.
_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
# What turns the start of a line into a heading, list, quote or rule.
_LINE_START = re.compile(r"^(\s*)(#|[-+=]|\d+(?=[.)]))")


def escape_markdown(text: str, *, line_start: bool = False) -> str:
    """``text`` as literal inline Markdown: HTML escaped, Markdown syntax backslashed.

    With ``line_start``, also what would make a heading, list or quote of a
    line that begins with ``text``.
    """
    one_line = " ".join(str(text).split())
    escaped = _INLINE_SPECIAL.sub(r"\\\1", html.escape(one_line, quote=False))
    return _LINE_START.sub(_escape_line_start, escaped, count=1) if line_start else escaped


def _escape_line_start(match: re.Match[str]) -> str:
    space, mark = match.groups()
    # "1." needs "1\.", "#" needs "\#".
    return space + (mark + "\\" if mark[0].isdigit() else "\\" + mark)


def render_markdown(board: Leaderboard) -> str:
    """The whole leaderboard as one Markdown document."""
    n_models = len(board.models)
    parts = [
        "# audiobench leaderboard",
        "",
        f"Built {board.generated:%Y-%m-%d %H:%M} UTC from {plural(board.n_results, 'result file')}"
        f" of {plural(n_models, 'model')} with audiobench "
        f"{escape_markdown(board.audiobench_version)}. "
        f"↑: higher is better; ↓: lower is better; {MISSING}: no score.",
    ]
    if any(card.origin != "computed" for card in board.models.values()):
        parts += [
            "",
            "Origin: *computed* scores were computed with audiobench; *reported* ones were "
            "published elsewhere and imported (`results import-mteb`), ranked together with "
            "them.",
        ]
    if board.local_data:
        names = ", ".join(escape_markdown(name) for name in board.local_data)
        parts += [
            "",
            f"A private board: {names} ran on local data or an unpinned dataset revision (or, "
            "reported, on another revision than the pinned one), "
            "which the public leaderboard does not take.",
        ]
    for table in board.tables:
        parts += ["", *_table(board, table)]
    if board.pending_benchmarks:
        names = ", ".join(escape_markdown(name) for name in board.pending_benchmarks)
        parts += ["", f"No results yet for the benchmarks {names}."]
    if board.rejected:
        parts += [
            "",
            "## Rejected files",
            "",
            f"{len(board.rejected)} problem(s) kept these files off the leaderboard:",
            "",
            *(f"- {escape_markdown(line, line_start=True)}" for line in board.rejected),
        ]
    return "\n".join(parts) + "\n"


def _table(board: Leaderboard, table: Table) -> list[str]:
    lines = [
        f"## {escape_markdown(table.title)}",
        "",
        escape_markdown(table.description, line_start=True),
        "",
    ]
    if table.rank_by:
        lines += [f"Ranked by {escape_markdown(', then '.join(table.rank_by))}.", ""]
    # One scale per table (collate makes sure): say which, once.
    lines += [escape_markdown(table.scale, line_start=True), ""]
    if not table.rows:
        return [*lines, "_No results yet._"]
    # The origin column appears once the board holds a reported result.
    origin = any(board.models[row.model].origin != "computed" for row in table.rows)
    header = ["#"] if table.kind == "benchmark" else []
    header += ["Model", "Revision", *(["Origin"] if origin else []), "Parameters"]
    for c in table.columns:
        title = escape_markdown(c.name)
        if table.kind == "family":  # the column is a task: say which of its scores
            title += f" ({escape_markdown(c.score)})"
        header.append(f"{title} {direction_arrow(c.higher_is_better)}")
    align = (["---:"] if table.kind == "benchmark" else []) + ["---", "---"]
    align += ["---"] * origin + ["---:"]
    align += ["---:"] * len(table.columns)
    lines += ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    for row in table.rows:
        card = board.models[row.model]
        cells = (
            [str(row.rank) if row.rank is not None else MISSING]
            if table.kind == "benchmark"
            else []
        )
        cells += [
            escape_markdown(card.name),
            escape_markdown(card.revision) if card.revision is not None else MISSING,
            *([card.origin] if origin else []),
            format_count(card.n_parameters),
        ]
        cells += [
            format_score(v, percent=c.percent)
            for v, c in zip(row.values, table.columns, strict=True)
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines + _notes(board, table)


def _notes(board: Leaderboard, table: Table) -> list[str]:
    """Below a table, what each score reads against (baseline and lift, chance, spread)."""
    notes = []
    for row in table.rows:
        card = board.models[row.model]
        for value, column, note in zip(row.values, table.columns, row.notes, strict=False):
            if note and value is not None:
                who = escape_markdown(card.name) + (
                    f" {escape_markdown(card.revision)}" if card.revision is not None else ""
                )
                notes.append(f"- {who}, {escape_markdown(column.name)}: {escape_markdown(note)}")
    if not notes:
        return []
    return ["", "What each score reads against (see docs/METRICS.md):", "", *notes]
