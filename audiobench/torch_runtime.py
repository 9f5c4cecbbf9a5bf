"""Torch settings shared by the runner, the Ray actors, the FLOP counter and the encoders.

Threads while encoding (:func:`encoder_threads`): torch's intra-op pool gets
a count chosen on purpose (:func:`default_threads`, or ``--threads``), and
the BLAS library numpy calls runs single-threaded. Torch's default (one thread
per core) competes with the runner's decoding threads for the same cores; on
a busy 2-core machine that made a CPU encoder 20x slower. numpy's OpenBLAS
cuts a float32 matrix product differently for different thread counts, so
the same clip gave embeddings differing in the last bits between a local run
(2 threads) and a Ray actor (1 thread); pinned to one thread, numpy-based
encoders give the same bits wherever they run on the same CPU architecture.
Torch's own reductions also split their work by thread count, so a Ray actor
uses the thread count its driver chose.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress

__all__ = ["default_threads", "encoder_threads", "inference_mode"]


def inference_mode() -> AbstractContextManager[object]:
    """``torch.inference_mode()`` (no autograd bookkeeping); a no-op without torch."""
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        return nullcontext()
    return torch.inference_mode()


def default_threads(decode_workers: int) -> int:
    """Encoder threads when ``--threads`` is not given: the usable cores the decoders leave.

    The runner decodes the next chunk in ``decode_workers`` threads while the
    encoder works, so those cores are taken; at least one thread is kept.
    """
    from audiobench.metrics.runtime import available_cores

    return max(1, available_cores() - max(0, decode_workers))


def _numpy_blas() -> list[object]:
    """Thread-pool controllers of the BLAS libraries outside torch (numpy's, scipy's)."""
    import torch
    from threadpoolctl import ThreadpoolController

    torch_dir = os.path.dirname(torch.__file__)
    return [
        lib
        for lib in ThreadpoolController().lib_controllers
        if lib.user_api == "blas" and not str(lib.filepath).startswith(torch_dir)
    ]


@contextmanager
def encoder_threads(threads: int) -> Iterator[None]:
    """Encode with ``threads`` torch threads and single-threaded numpy BLAS; restored after."""
    import torch

    before = torch.get_num_threads()
    blas = _numpy_blas()
    saved = [(lib, lib.num_threads) for lib in blas]  # type: ignore[attr-defined]
    torch.set_num_threads(threads)
    for lib in blas:
        lib.set_num_threads(1)  # type: ignore[attr-defined]
    try:
        yield
    finally:
        torch.set_num_threads(before)
        for lib, n in saved:
            with suppress(Exception):  # a library unloaded meanwhile
                lib.set_num_threads(n)  # type: ignore[attr-defined]
