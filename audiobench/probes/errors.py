"""Exceptions raised by the probes and the split helpers.

All subclass :class:`ValueError`, so a caller that only cares about "bad input" can catch that;
each also carries the offending names as attributes, for a caller that wants to point a user at
them. Non-finite embeddings and too few classes reuse the metric engine's exceptions, so one
``except`` clause covers both halves of the framework.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from audiobench.errors import UserError
from audiobench.metrics.errors import InsufficientClassesError, InvalidEmbeddingsError

__all__ = [
    "GroupLeakError",
    "InsufficientClassesError",
    "InvalidEmbeddingsError",
    "MissingClassError",
]


class MissingClassError(UserError, ValueError):
    """A class appears in an evaluation split (validation, test, a fold) but not in training.

    A probe cannot predict a class it never saw, so the score of such a split would be capped
    below 1 for reasons unrelated to the embeddings; this is an error, not a silent penalty.

    Attributes
    ----------
    classes:
        Every missing class (the message lists at most a few).
    split:
        The name of the split in which they appear.
    """

    def __init__(self, message: str, classes: Sequence[Hashable], split: str) -> None:
        super().__init__(message)
        self.classes: tuple[Hashable, ...] = tuple(classes)
        self.split: str = split


class GroupLeakError(UserError, ValueError):
    """A group (speaker, individual, recording session) has clips on both sides of a split.

    Attributes
    ----------
    groups:
        Every leaking group (the message lists at most a few).
    split:
        The name of the split.
    """

    def __init__(self, message: str, groups: Sequence[Hashable], split: str) -> None:
        super().__init__(message)
        self.groups: tuple[Hashable, ...] = tuple(groups)
        self.split: str = split
