"""Exceptions raised by the metric engine.

Both subclass :class:`ValueError`, so callers that only care about "bad input" can catch that,
while a caller that wants to point a user at the offending clips can read ``clip_ids``.
"""

from __future__ import annotations

from collections.abc import Sequence

from audiobench.errors import UserError


class InvalidEmbeddingsError(UserError, ValueError):
    """Some clips' embeddings cannot be used (non-finite values, or degenerate for a distance).

    Attributes
    ----------
    clip_ids:
        Every offending clip, as the caller's clip id (a string) when ids were given, else as
        its row index. The message lists at most a few of them; this attribute lists all.
    """

    def __init__(self, message: str, clip_ids: Sequence[str | int]) -> None:
        super().__init__(message)
        self.clip_ids: tuple[str | int, ...] = tuple(clip_ids)


class InsufficientClassesError(UserError, ValueError):
    """Fewer than two classes remain once unlabelled clips and small classes are dropped.

    Separation metrics compare a clip's own class with the others, so they are undefined with
    a single class; this is an error rather than a silent NaN.
    """
