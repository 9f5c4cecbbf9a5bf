"""``audiobench leaderboard build``: result files in, every leaderboard output out.

Writes into the output folder:

- ``index.html``: the self-contained page (tables, filters, plots);
- ``leaderboard.md``: Markdown tables, one per benchmark and per task family;
- ``results.csv`` (one row per result file) and ``scores.csv`` (one row per number);
- ``plots/*.svg``: the plots, also inlined into the page;
- ``leaderboard.json``: the collated tables the page is rendered from;
- ``rejected.txt``: one line per problem of every file left out (empty if none).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from audiobench.errors import OptionError
from audiobench.leaderboard.collate import Leaderboard, collate
from audiobench.leaderboard.frames import results_frame, scores_frame, spreadsheet_safe
from audiobench.leaderboard.markdown import render_markdown
from audiobench.leaderboard.page import render_page
from audiobench.leaderboard.plots import render_plots
from audiobench.leaderboard.validate import validate_paths

__all__ = ["ORIGINS", "Build", "build_leaderboard"]

#: Which results a board takes: all, only those computed with audiobench, only reported ones.
ORIGINS = ("all", "computed", "reported")


@dataclass
class Build:
    """What a build produced."""

    board: Leaderboard
    files: list[Path]

    @property
    def rejected(self) -> list[str]:
        return self.board.rejected


def build_leaderboard(
    results_dir: str | os.PathLike[str],
    output_dir: str | os.PathLike[str],
    *,
    generated: datetime | None = None,
    allow_unpinned: bool = False,
    reported: Sequence[str | os.PathLike[str]] = (),
    origin: Literal["all", "computed", "reported"] = "all",
) -> Build:
    """Validate every result under ``results_dir`` and write the leaderboard to ``output_dir``.

    ``allow_unpinned`` builds a private board that also takes results computed
    on local data or unpinned dataset revisions (the public board refuses them).

    ``reported`` adds folders of reported results (``results import-mteb``) beside those
    under ``results_dir``; ``origin`` keeps all results, only those computed with audiobench
    (a board of your own runs) or only reported ones. Reported and computed rows are ranked
    together and marked (:attr:`~audiobench.leaderboard.collate.ModelCard.origin`).

    Invalid files are left out and listed (``Build.rejected``, ``rejected.txt``,
    the page and the Markdown), never dropped silently. ``generated`` fixes the
    build time shown, for reproducible output.
    """
    root = Path(results_dir)
    if origin not in ORIGINS:
        raise OptionError(f"origin must be one of {', '.join(ORIGINS)}, not {origin!r}")
    for folder in (root, *map(Path, reported)):
        if not folder.is_dir():
            raise OptionError(f"{folder}: not a directory of result files")
    out = Path(output_dir)
    validation = validate_paths([root, *map(Path, reported)], allow_unpinned=allow_unpinned)
    kept = [
        result
        for _, result in validation.accepted
        if origin == "all" or (result.reported is not None) == (origin == "reported")
    ]
    board = collate(
        kept,
        rejected=[problem.line(relative_to=root) for problem in validation.problems],
        generated=generated,
    )
    svgs = render_plots(board)
    (out / "plots").mkdir(parents=True, exist_ok=True)
    files = []

    def write(name: str, text: str) -> None:
        path = out / name
        path.write_text(text, encoding="utf-8")
        files.append(path)

    for stem, svg in svgs.items():
        write(f"plots/{stem}.svg", svg)
    write("leaderboard.md", render_markdown(board))
    write("results.csv", spreadsheet_safe(results_frame(board.results)).to_csv(index=False))
    write("scores.csv", spreadsheet_safe(scores_frame(board.results)).to_csv(index=False))
    write("leaderboard.json", board.model_dump_json(indent=1) + "\n")
    write("rejected.txt", "".join(f"{line}\n" for line in board.rejected))
    write("index.html", render_page(board, svgs))
    return Build(board=board, files=files)
