"""Where the engine runs: the torch device and the number of CPU threads.

The engine is written in torch so the same code runs on CPU (the default, and all that is
required) or on a CUDA device when the caller passes one.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import psutil

if TYPE_CHECKING:
    import torch


def is_tensor(value: object) -> bool:
    """Whether ``value`` is a torch tensor, without importing torch (none exists before it is)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``None`` means CPU; a CUDA device is accepted only when CUDA is actually available."""
    import torch

    if device is None:
        return torch.device("cpu")
    resolved = torch.device(device)
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} requested but CUDA is not available")
    return resolved


def available_cores() -> int:
    """CPU cores this process may run on (the affinity mask, which containers restrict).

    ``psutil`` reads the mask on Linux, Windows and FreeBSD; macOS has none, so all cores count.
    """
    try:
        return max(1, len(psutil.Process().cpu_affinity()))
    except (AttributeError, NotImplementedError, psutil.Error):  # pragma: no cover - macOS
        return max(1, os.cpu_count() or 1)


@contextmanager
def limited_cpu_threads() -> Iterator[int]:
    """Run torch CPU kernels on no more threads than there are usable cores.

    torch's default thread count can exceed the cores a container grants (it counts the host's
    cores); oversubscribing makes the memory-bound block passes slower, not faster. A lower
    setting chosen by the caller is kept. The previous setting is restored on exit.
    """
    import torch

    before = torch.get_num_threads()
    threads = min(before, available_cores())
    if threads != before:
        torch.set_num_threads(threads)
    try:
        yield threads
    finally:
        if threads != before:
            torch.set_num_threads(before)
