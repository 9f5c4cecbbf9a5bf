"""Efficiency figures written into every result: size, compression, compute, speed, memory.

- **Embedding bytes per second of audio** and the **compression ratio**
  against 16-bit PCM at the task's canonical rate (``2 · rate / bytes_per_s``;
  above 1 means the embedding is smaller than the audio).
- **FLOPs per second of audio**, counted with ``torch.utils.flop_counter`` on
  one seeded noise clip of ``FLOPS_PROBE_SECONDS``. Attention runs eager and
  the ``nn.MultiheadAttention`` fast path is off while counting, because fused
  kernels are invisible to the counter. Models that pad to a fixed window
  (Whisper's 30 s) pay for the whole window, which the figure shows. Encoders
  that do no torch work (DSP baselines) report None, not 0.
"""

from __future__ import annotations

import contextlib
import resource
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

from audiobench.encoder import Encoder

__all__ = [
    "FLOPS_PROBE_SECONDS",
    "compression_ratio",
    "count_flops_per_second",
    "peak_memory_mb",
]

FLOPS_PROBE_SECONDS = 10.0


def compression_ratio(bytes_per_second: float, sample_rate: int) -> float:
    """16-bit PCM bytes per second at ``sample_rate`` over the embedding's bytes per second."""
    if bytes_per_second <= 0:
        raise ValueError("bytes_per_second must be positive")
    return 2.0 * sample_rate / bytes_per_second


def count_flops_per_second(
    encoder: Encoder, *, seconds: float = FLOPS_PROBE_SECONDS, seed: int = 0
) -> float | None:
    """Floating-point operations the encoder spends per second of audio (None: not countable)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from audiobench.runner import inference_mode

    encoder.load()
    n = max(1, int(seconds * encoder.meta.sample_rate))
    wave = (0.1 * np.random.default_rng(seed).standard_normal(n)).astype(np.float32)
    fastpath = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    counter = FlopCounterMode(display=False)
    try:
        with encoder.eager_attention(), _weights_materialised(encoder), inference_mode(), counter:
            encoder.encode_audio([wave])
    finally:
        torch.backends.mha.set_fastpath_enabled(fastpath)
        encoder.pop_notes()  # the probe clip is not part of the run
    total = counter.get_total_flops()
    return float(total) / seconds if total > 0 else None


@contextlib.contextmanager
def _weights_materialised(encoder: Encoder) -> Iterator[None]:
    """Compute parametrised weights (weight norm) once, outside the counted region.

    Deriving a weight from its parametrisation is not work done per second of
    audio, and under inference mode plus the FLOP counter it fails outright.
    """
    import torch
    from torch.nn.utils import parametrize

    modules = [m for m in vars(encoder).values() if isinstance(m, torch.nn.Module)]
    with parametrize.cached():
        for module in modules:
            for sub in module.modules():
                if parametrize.is_parametrized(sub):
                    for name in sub.parametrizations:
                        getattr(sub, name)
        yield


def peak_memory_mb(device: str) -> dict[str, Any]:
    """Peak resident memory of this process, and peak CUDA memory when on a GPU."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports kilobytes, macOS bytes.
    rss = peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024
    gpu = None
    if device.startswith("cuda"):
        import torch

        if torch.cuda.is_available():
            gpu = torch.cuda.max_memory_allocated() / 2**20
    return {"peak_memory_mb": rss, "peak_gpu_memory_mb": gpu}
