"""audiobench: an extensible benchmark framework for audio embeddings.

Importing audiobench is cheap and offline: no model, dataset or heavy
dependency is loaded until a run needs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from audiobench.version import __version__

if TYPE_CHECKING:
    from audiobench.evaluation import evaluate
    from audiobench.leaderboard.frames import load_results

__all__ = ["__version__", "evaluate", "load_results"]


def __getattr__(name: str) -> Any:
    # Lazy, so `import audiobench.metrics` does not pull in the runner and datasets.
    if name == "evaluate":
        from audiobench.evaluation import evaluate

        return evaluate
    if name == "load_results":
        from audiobench.leaderboard.frames import load_results

        return load_results
    raise AttributeError(f"module 'audiobench' has no attribute {name!r}")
