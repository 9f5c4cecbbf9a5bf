"""How error messages name clips, classes and other ids (no heavy imports: the families
and the CLI use it at import time)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["MAX_LISTED_CLIPS", "describe_clips"]

#: How many offending clips an error message lists before summarising the rest.
MAX_LISTED_CLIPS: int = 10


def _clip_name(name: object) -> str:
    if isinstance(name, np.integer):
        name = name.item()
    return str(name) if isinstance(name, int) else repr(str(name))


def describe_clips(names: Sequence[object]) -> str:
    """``"'a', 'b' and 3 more"``: at most :data:`MAX_LISTED_CLIPS` names, then a count.

    Every error message that lists clips, classes, queries or other ids goes through here.
    Strings are quoted, integers (positions, ``bool`` included) written plainly, and any other
    value (a float label, a tuple) is quoted as its ``str``.
    """
    shown = ", ".join(_clip_name(name) for name in list(names[:MAX_LISTED_CLIPS]))
    rest = len(names) - MAX_LISTED_CLIPS
    return f"{shown} and {rest} more" if rest > 0 else shown
