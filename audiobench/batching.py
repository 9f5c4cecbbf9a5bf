"""How clips become encoder batches, for the local runner and the Ray stage alike.

Both paths must cut the same batches from the same clips, so both use this
module: one copy of each waveform (deduplicated by its hash), sorted by length
so a batch pads little, cut into batches of the current size; on an
out-of-memory error the failing batch is halved and the size kept at the half
from then on. Whether an encoder's output may be stored or served is decided
here too, once (:func:`unusable`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Generic, TypeVar

import numpy as np

__all__ = [
    "BatchPlanner",
    "free_accelerator_memory",
    "is_out_of_memory",
    "unusable",
]

T = TypeVar("T")


def unusable(array: np.ndarray) -> str | None:
    """Why ``array`` cannot be an embedding (empty, or NaN/Inf values), or None if it can.

    The runner never stores such an array and never serves one from the cache;
    the Ray stage never commits one (the local pass then reports the clip).
    """
    if array.size == 0:
        return "empty embedding"
    if array.dtype.kind in "fc" and not np.isfinite(array).all():
        return f"embedding has {int((~np.isfinite(array)).sum())} NaN/Inf values"
    return None


class BatchPlanner(Generic[T]):
    """Length-sorted batches of distinct waveforms, with a size that halves on out-of-memory.

    ``size`` is read each time a batch is cut, so a size lowered by
    :meth:`halve` mid-way applies to the rest of the plan (and to later plans).
    """

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("batch_size must be at least 1")
        self.size = size

    @staticmethod
    def distinct_by_length(
        items: Iterable[T], key: Callable[[T], str], length: Callable[[T], int]
    ) -> list[T]:
        """The first item of each key (identical waveforms are encoded once), shortest first.

        The sort is stable: items of equal length keep their order.
        """
        first: dict[str, T] = {}
        for item in items:
            first.setdefault(key(item), item)
        return sorted(first.values(), key=length)

    def batches(self, todo: Sequence[T]) -> Iterator[list[T]]:
        """``todo`` cut into consecutive batches of the current size."""
        start = 0
        while start < len(todo):
            batch = list(todo[start : start + self.size])
            start += len(batch)
            yield batch

    def halve(self, n: int) -> int:
        """After a batch of ``n`` ran out of memory: its half, now also the size's ceiling."""
        half = (n + 1) // 2
        self.size = min(self.size, half)
        return half


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is an accelerator (or allocator) out-of-memory error."""
    try:
        import torch

        if isinstance(exc, torch.cuda.OutOfMemoryError):
            return True
    except ImportError:  # pragma: no cover - torch is a dependency
        pass
    return isinstance(exc, RuntimeError | MemoryError) and "out of memory" in str(exc).lower()


def free_accelerator_memory() -> None:
    """Return cached accelerator memory to the device (after an out-of-memory error)."""
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        return
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
