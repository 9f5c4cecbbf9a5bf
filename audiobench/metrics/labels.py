"""Label encoding and class-size filtering shared by every metric.

Labels arrive as any hashable values (strings, ints, ...), with ``None`` or a float NaN marking
a clip without a label. The engine works on integer codes: ``-1`` for unlabelled clips and
``0 .. C-1`` for classes, numbered in order of first appearance (the numbering never affects a
score; it only has to be deterministic).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from audiobench.errors import OptionError
from audiobench.metrics.errors import InsufficientClassesError

if TYPE_CHECKING:
    import torch

#: Code of a clip without a label.
UNLABELLED: int = -1


def is_missing_label(value: object) -> bool:
    """``None`` and float NaN (including numpy floats) mean "no label"."""
    if value is None:
        return True
    if isinstance(value, float | np.floating):
        return math.isnan(value)
    return False


@dataclass(frozen=True, eq=False)
class EncodedLabels:
    """Integer codes for a sequence of labels.

    Attributes
    ----------
    codes:
        ``int64`` array of shape (N,): the class code of each clip, ``-1`` when unlabelled.
    classes:
        The original label of each code, in code order.
    """

    codes: np.ndarray
    classes: tuple[Hashable, ...]

    @property
    def n_clips(self) -> int:
        return int(self.codes.shape[0])

    @property
    def labelled(self) -> np.ndarray:
        """Indices of the labelled clips, ascending."""
        return np.flatnonzero(self.codes != UNLABELLED)


def encode_labels(labels: Iterable[Hashable | None], n_clips: int) -> EncodedLabels:
    """Encode ``labels`` (one per clip) as integer class codes.

    Raises
    ------
    ValueError
        If the number of labels differs from ``n_clips`` or a label is not hashable.
    """
    if isinstance(labels, str | bytes):
        raise ValueError("labels must be a sequence with one label per clip, not a string")
    values = labels.tolist() if isinstance(labels, np.ndarray) else list(labels)
    if len(values) != n_clips:
        raise ValueError(f"got {len(values)} labels for {n_clips} clips")
    codes = np.empty(n_clips, dtype=np.int64)
    index: dict[Hashable, int] = {}
    for position, value in enumerate(values):
        if is_missing_label(value):
            codes[position] = UNLABELLED
            continue
        try:
            codes[position] = index.setdefault(value, len(index))
        except TypeError as error:
            raise ValueError(
                f"label of clip {position} is not hashable: {value!r} ({type(value).__name__})"
            ) from error
    return EncodedLabels(codes=codes, classes=tuple(index))


@dataclass(frozen=True, eq=False)
class ClassFilter:
    """The clips kept for class-separation metrics after dropping small classes.

    Attributes
    ----------
    members:
        Indices (into the encoded clips) of the kept clips, ascending.
    codes:
        Compact class codes ``0 .. C-1`` of the kept clips (C = number of kept classes).
    class_sizes:
        ``int64`` array (C,), number of kept clips per class.
    n_excluded_classes, n_excluded_clips:
        Classes smaller than ``min_class_size`` and the labelled clips they held.
    """

    members: np.ndarray
    codes: np.ndarray
    class_sizes: np.ndarray
    n_excluded_classes: int
    n_excluded_clips: int

    @property
    def n_classes(self) -> int:
        return int(self.class_sizes.shape[0])

    def tensors(
        self, n_clips: int, device: torch.device
    ) -> tuple[torch.Tensor | None, torch.Tensor, torch.Tensor]:
        """``(members, codes, class_sizes)`` as tensors on ``device``.

        ``members`` is None when every one of the ``n_clips`` clips is kept, so that block
        passes can slice D instead of gathering rows and columns.
        """
        import torch

        members = (
            None if self.members.shape[0] == n_clips else torch.from_numpy(self.members).to(device)
        )
        return (
            members,
            torch.from_numpy(self.codes).to(device),
            torch.from_numpy(self.class_sizes).to(device),
        )


def filter_classes(encoded: EncodedLabels, min_class_size: int) -> ClassFilter:
    """Keep labelled clips whose class has at least ``min_class_size`` labelled clips.

    Does not require two classes to remain; see :func:`require_two_classes`.
    """
    if isinstance(min_class_size, bool) or not isinstance(min_class_size, int | np.integer):
        raise OptionError(f"min_class_size must be an integer, got {min_class_size!r}")
    if min_class_size < 2:
        # A class of one clip has no intra-class distance, so every separation metric
        # would be undefined for it.
        raise OptionError(f"min_class_size must be at least 2, got {min_class_size}")
    labelled = encoded.labelled
    sizes = np.bincount(encoded.codes[labelled], minlength=len(encoded.classes))
    keep_class = sizes >= min_class_size
    members = labelled[keep_class[encoded.codes[labelled]]]
    compact = np.cumsum(keep_class) - 1  # old code -> new code for kept classes
    codes = compact[encoded.codes[members]].astype(np.int64)
    return ClassFilter(
        members=members,
        codes=codes,
        class_sizes=sizes[keep_class].astype(np.int64),
        n_excluded_classes=int((~keep_class & (sizes > 0)).sum()),
        n_excluded_clips=int(sizes[~keep_class].sum()),
    )


def require_two_classes(kept: ClassFilter, min_class_size: int) -> None:
    """Raise :class:`InsufficientClassesError` unless at least two classes were kept."""
    if kept.n_classes < 2:
        raise InsufficientClassesError(
            f"{kept.n_classes} class(es) with at least {min_class_size} labelled clips remain "
            f"({kept.n_excluded_classes} smaller class(es) excluded); separation metrics "
            "need at least 2"
        )
