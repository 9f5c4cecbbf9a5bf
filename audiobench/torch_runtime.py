"""Torch settings shared by the runner, the FLOP counter and the encoders."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext

__all__ = ["inference_mode"]


def inference_mode() -> AbstractContextManager[object]:
    """``torch.inference_mode()`` (no autograd bookkeeping); a no-op without torch."""
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        return nullcontext()
    return torch.inference_mode()
