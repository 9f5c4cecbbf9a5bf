"""Leaderboard: strict validation of result files, export for submission, and the builder.

- :func:`validate_paths` / ``audiobench results validate``: one problem per finding;
- :func:`export_results` / ``audiobench results export``: copy into the submission layout;
- :func:`build_leaderboard` / ``audiobench leaderboard build``: HTML, Markdown, CSV, plots;
- :func:`load_results` (also ``audiobench.load_results``): result files as a DataFrame.

Submodules are imported on first use, so the CLI starts fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from audiobench.leaderboard.build import build_leaderboard
    from audiobench.leaderboard.export import export_results
    from audiobench.leaderboard.frames import load_results
    from audiobench.leaderboard.validate import validate_paths

__all__ = ["build_leaderboard", "export_results", "load_results", "validate_paths"]

_HOMES = {
    "build_leaderboard": "audiobench.leaderboard.build",
    "export_results": "audiobench.leaderboard.export",
    "load_results": "audiobench.leaderboard.frames",
    "validate_paths": "audiobench.leaderboard.validate",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'audiobench.leaderboard' has no attribute {name!r}")
