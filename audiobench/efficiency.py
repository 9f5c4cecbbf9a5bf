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
  that do no torch work (DSP baselines) report None, not 0. The counter sees no
  operation inside torch's recurrent layers (LSTM, GRU, RNN and their cells run fused
  kernels: an LSTM encoder would count as its final linear layer alone), so those are
  counted by formula (:func:`recurrent_flops`: the gates' matrix products, as the counter
  counts a linear layer); one the formula does not cover (a packed sequence, an LSTM
  with ``proj_size``) makes the figure None, unknown rather than wrong.
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


#: Gate count of each recurrent layer type: each gate is one input and one hidden product.
_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
_CELL_GATES = {"LSTMCell": 4, "GRUCell": 3, "RNNCell": 1}


def recurrent_flops(module: Any, inputs: tuple[Any, ...]) -> int | None:
    """FLOPs of one call of a torch recurrent layer or cell on ``inputs``; None if not known.

    Per time step, layer and direction: ``2 · gates · hidden · (input + hidden)``, the matrix
    products of the gates, counted as ``torch.utils.flop_counter`` counts a linear layer
    (biases and the gates' elementwise work left out). None for what the formula does not
    cover: a packed sequence, an LSTM with ``proj_size``, an unknown subclass.
    """
    import torch

    x = inputs[0] if inputs else None
    if not isinstance(x, torch.Tensor):
        return None
    hidden = int(module.hidden_size)
    if isinstance(module, torch.nn.RNNCellBase):
        cell_gates = _CELL_GATES.get(type(module).__name__)
        if cell_gates is None:
            return None
        batch = int(x.shape[0]) if x.dim() == 2 else 1
        return batch * 2 * cell_gates * hidden * (int(module.input_size) + hidden)
    gates = _GATES.get(str(getattr(module, "mode", "")))
    if gates is None or getattr(module, "proj_size", False):
        return None
    if x.dim() == 3:
        steps, batch = (x.shape[1], x.shape[0]) if module.batch_first else (x.shape[0], x.shape[1])
    elif x.dim() == 2:
        steps, batch = x.shape[0], 1
    else:
        return None
    directions = 2 if module.bidirectional else 1
    total = 0
    for layer in range(int(module.num_layers)):
        width = int(module.input_size) if layer == 0 else hidden * directions
        total += directions * int(steps) * int(batch) * 2 * gates * hidden * (width + hidden)
    return total


def count_flops(encoder: Encoder, *, seconds: float, seed: int = 0) -> float | None:
    """FLOPs of one forward pass on a seeded noise clip of ``seconds`` (None: not countable).

    Recurrent layers, invisible to the counter, are added by :func:`recurrent_flops`; when
    one cannot be counted, the whole figure is None.
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
    recurrent: list[int | None] = []

    def spot(module: torch.nn.Module, args: tuple[Any, ...], output: object) -> None:
        if isinstance(module, torch.nn.RNNBase | torch.nn.RNNCellBase):
            recurrent.append(recurrent_flops(module, args))

    # A global hook sees every module the pass runs, however the encoder holds it.
    hook = torch.nn.modules.module.register_module_forward_hook(spot)
    try:
        with encoder.eager_attention(), _weights_materialised(encoder), inference_mode(), counter:
            encoder.encode_audio([wave])
    finally:
        hook.remove()
        torch.backends.mha.set_fastpath_enabled(fastpath)
        encoder.pop_notes()  # the probe clip is not part of the run
    if None in recurrent:
        return None
    total = counter.get_total_flops() + sum(r for r in recurrent if r is not None)
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
