"""Efficiency figures written into every result: size, compression, compute, speed, memory.

- **Compression ratio** as MSEB defines it: per clip, the embedding's bytes over
  the bytes of the waveform the model was given, float32 samples at the task's
  canonical rate (:func:`waveform_compression_ratio`), averaged over clips. Below 1
  the embedding is smaller than the audio.
- **Embedding bytes per second of audio** and the **PCM compression ratio**:
  16-bit PCM bytes at the task's canonical rate over the embedding's bytes
  (``2 · rate / bytes_per_s``, :func:`pcm_compression_ratio`; the inverse direction:
  above 1 means the embedding is smaller).
- **FLOPs per example** (MSEB's figure): one forward pass on a seeded noise clip of
  the task's median clip duration; and **FLOPs per second of audio**, counted the
  same way on one clip of ``FLOPS_PROBE_SECONDS``; both with ``torch.utils.flop_counter``.
  Attention runs eager and the ``nn.MultiheadAttention`` fast path is off while
  counting, because fused kernels are invisible to the counter. Models that pad to a fixed window
  (Whisper's 30 s) pay for the whole window, which the figure shows. Encoders
  that do no torch work (DSP baselines) report None, not 0; so do encoders that run a
  module the counter has no formula for (recurrent layers: LSTM, GRU, RNN, found by
  :data:`UNCOUNTED_MODULES`), because a partial count (an LSTM encoder counted as its
  final linear layer alone) is a wrong number, and unknown is the honest answer.
- **Peak resident memory** of the process (:func:`peak_rss_bytes`), portable through
  ``psutil``: Windows reports the peak working set itself; on Unix ``getrusage``'s
  ``ru_maxrss`` is the peak (psutil has no peak there); elsewhere the largest RSS
  sampled so far.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import psutil

from audiobench.encoder import Encoder

try:  # Unix only; psutil has no peak RSS on Linux or macOS
    import resource
except ImportError:  # pragma: no cover - Windows
    resource = None  # type: ignore[assignment]

__all__ = [
    "FLOPS_PROBE_SECONDS",
    "count_flops",
    "count_flops_per_second",
    "pcm_compression_ratio",
    "peak_memory_mb",
    "peak_rss_bytes",
    "waveform_compression_ratio",
]

FLOPS_PROBE_SECONDS = 10.0


def pcm_compression_ratio(bytes_per_second: float, sample_rate: int) -> float:
    """16-bit PCM bytes per second at ``sample_rate`` over the embedding's bytes per second."""
    if bytes_per_second <= 0:
        raise ValueError("bytes_per_second must be positive")
    return 2.0 * sample_rate / bytes_per_second


def waveform_compression_ratio(embedding_bytes: int, n_samples: float) -> float:
    """MSEB's compression ratio of one example: embedding bytes / float32 waveform bytes.

    ``n_samples`` is the waveform's length in samples (at the task's rate), each 4 bytes.
    """
    if n_samples <= 0:
        raise ValueError("n_samples must be positive")
    if embedding_bytes < 0:
        raise ValueError("embedding_bytes must be non-negative")
    return embedding_bytes / (4.0 * n_samples)


def count_flops_per_second(
    encoder: Encoder, *, seconds: float = FLOPS_PROBE_SECONDS, seed: int = 0
) -> float | None:
    """Floating-point operations the encoder spends per second of audio (None: not countable)."""
    total = count_flops(encoder, seconds=seconds, seed=seed)
    return None if total is None else total / seconds


#: Names of ``torch.nn`` module classes whose work ``torch.utils.flop_counter`` does not count
#: (their fused kernels have no FLOP formula); an encoder that runs one has unknown FLOPs.
UNCOUNTED_MODULES: tuple[str, ...] = ("RNNBase", "RNNCellBase")


def count_flops(encoder: Encoder, *, seconds: float, seed: int = 0) -> float | None:
    """FLOPs of one forward pass on a seeded noise clip of ``seconds`` (None: not countable).

    None also when the pass runs a module of :data:`UNCOUNTED_MODULES` (an LSTM): the
    counter would report only the layers around it.
    """
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from audiobench.torch_runtime import inference_mode

    encoder.load()
    n = max(1, int(seconds * encoder.meta.sample_rate))
    wave = (0.1 * np.random.default_rng(seed).standard_normal(n)).astype(np.float32)
    fastpath = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    counter = FlopCounterMode(display=False)
    uncounted = tuple(getattr(torch.nn, name) for name in UNCOUNTED_MODULES)
    seen: list[str] = []

    def spot(module: torch.nn.Module, args: object, output: object) -> None:
        if isinstance(module, uncounted):
            seen.append(type(module).__name__)

    # A global hook sees every module the pass runs, however the encoder holds it.
    hook = torch.nn.modules.module.register_module_forward_hook(spot)
    try:
        with encoder.eager_attention(), _weights_materialised(encoder), inference_mode(), counter:
            encoder.encode_audio([wave])
    finally:
        hook.remove()
        torch.backends.mha.set_fastpath_enabled(fastpath)
        encoder.pop_notes()  # the probe clip is not part of the run
    if seen:
        return None
    total = counter.get_total_flops()
    return float(total) if total > 0 else None


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
                    for name in dict(sub.parametrizations.items()):  # type: ignore[union-attr,operator]
                        getattr(sub, name)
        yield


_sampled_peak_lock = threading.Lock()
_sampled_peak = 0


def peak_rss_bytes() -> int:
    """Peak resident set size of this process so far, in bytes, on every OS.

    The current RSS comes from ``psutil.Process().memory_info()``; the peak from the OS where
    it keeps one (Windows: ``peak_wset``; Unix: ``getrusage(RUSAGE_SELF).ru_maxrss``, KiB on
    Linux and bytes on macOS). Where neither exists, the largest RSS seen by any call so far
    stands in, a lower bound of the true peak. Never less than the current RSS.
    """
    global _sampled_peak
    info = psutil.Process().memory_info()
    peak = int(info.rss)
    windows_peak = getattr(info, "peak_wset", None)
    if windows_peak is not None:
        peak = max(peak, int(windows_peak))
    elif resource is not None:
        maxrss = int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        peak = max(peak, maxrss if sys.platform == "darwin" else maxrss * 1024)
    with _sampled_peak_lock:
        _sampled_peak = max(_sampled_peak, peak)
        return _sampled_peak


def peak_memory_mb(device: str) -> dict[str, Any]:
    """Peak resident memory of this process, and peak CUDA memory when on a GPU (MiB)."""
    gpu = None
    if device.startswith("cuda"):
        import torch

        if torch.cuda.is_available():
            gpu = torch.cuda.max_memory_allocated() / 2**20
    return {"peak_memory_mb": peak_rss_bytes() / 2**20, "peak_gpu_memory_mb": gpu}
