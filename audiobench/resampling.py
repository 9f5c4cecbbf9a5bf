"""Band-limited windowed-sinc resampling, as MTEB's audio wrappers resample (``protocol="mteb"``).

MTEB decodes a clip at its native rate and resamples it once to the model's rate with the
windowed-sinc interpolation that PyTorch's audio library applies by default (a Hann window
over 6 zero crossings, cut-off at 99 % of the lower Nyquist rate). This module computes the
same filter and the same polyphase convolution in numpy, so audiobench reproduces those
waveforms without that library. audiobench's own protocol keeps soxr
(:mod:`audiobench.audio`).

With ``o`` and ``n`` the two rates divided by their greatest common divisor, ``f = min(o, n) *
rolloff`` and ``L = lowpass_filter_width``, output sample ``m`` is

    y[m] = (f / o) * sum_k x[k] * w(t) * sinc(t),   t = f * (k / o - m / n), |t| <= L,

with ``w(t) = cos(pi t / (2 L))^2`` and ``sinc(t) = sin(pi t) / (pi t)``; samples outside the
signal are zero and the output has ``ceil(len(x) * n / o)`` samples. The computation follows the
reference's order of operations in the waveform's own precision (float32 for float32 audio),
so the two agree to rounding. In float32 the filter taps themselves carry that rounding: with
a large reduced rate (22,050 -> 16,000 Hz is 441 -> 320) they differ from the exact formula by
up to about 3e-5, in the reference as here.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["LOWPASS_FILTER_WIDTH", "ROLLOFF", "sinc_resample", "sinc_resample_kernel"]

#: The reference's defaults: zero crossings on each side of the filter, and its cut-off as a
#: fraction of the lower Nyquist rate.
LOWPASS_FILTER_WIDTH = 6
ROLLOFF = 0.99


def _reduced(orig_rate: int, new_rate: int) -> tuple[int, int]:
    if int(orig_rate) != orig_rate or int(new_rate) != new_rate:
        raise ValueError(f"sample rates must be whole numbers, got {orig_rate} and {new_rate}")
    if orig_rate <= 0 or new_rate <= 0:
        raise ValueError(f"sample rates must be positive, got {orig_rate} and {new_rate}")
    gcd = math.gcd(int(orig_rate), int(new_rate))
    return int(orig_rate) // gcd, int(new_rate) // gcd


def sinc_resample_kernel(
    orig_rate: int,
    new_rate: int,
    *,
    lowpass_filter_width: int = LOWPASS_FILTER_WIDTH,
    rolloff: float = ROLLOFF,
    dtype: type[np.floating] = np.float32,
) -> tuple[np.ndarray, int]:
    """The polyphase filter bank ``[n, 2 * width + o]`` and ``width``, in ``dtype``.

    Row ``j`` holds the taps that produce every ``n``-th output sample starting at ``j``.
    """
    if lowpass_filter_width <= 0:
        raise ValueError(f"lowpass_filter_width must be positive, got {lowpass_filter_width}")
    orig, new = _reduced(orig_rate, new_rate)
    base = min(orig, new) * rolloff
    width = math.ceil(lowpass_filter_width * orig / base)
    idx = np.arange(-width, width + orig, dtype=dtype)[None, :] / dtype(orig)
    t = np.arange(0, -new, -1, dtype=dtype)[:, None] / dtype(new) + idx
    t = (t * dtype(base)).astype(dtype)
    t = np.clip(t, -lowpass_filter_width, lowpass_filter_width).astype(dtype)
    # The reference's order of float32 operations: ((t * pi) / L) / 2.
    window = np.cos(t * dtype(math.pi) / dtype(lowpass_filter_width) / dtype(2)) ** 2
    t = t * dtype(math.pi)
    with np.errstate(divide="ignore", invalid="ignore"):
        kernels = np.where(t == 0, dtype(1.0), np.sin(t) / t).astype(dtype)
    kernels = kernels * (window * dtype(base / orig))
    return np.ascontiguousarray(kernels, dtype=dtype), width


def sinc_resample(
    wave: np.ndarray,
    orig_rate: int,
    new_rate: int,
    *,
    lowpass_filter_width: int = LOWPASS_FILTER_WIDTH,
    rolloff: float = ROLLOFF,
) -> np.ndarray:
    """``wave`` (samples on the last axis) resampled from ``orig_rate`` to ``new_rate`` Hz.

    Float32 audio is filtered in float32 (as the reference filters it), float64 in float64;
    other types are converted to float32 first. Equal rates return the input unchanged.
    """
    x = np.asarray(wave)
    if x.dtype not in (np.float32, np.float64):
        x = x.astype(np.float32)
    if orig_rate == new_rate:
        _reduced(orig_rate, new_rate)
        return x
    orig, new = _reduced(orig_rate, new_rate)
    dtype = np.float32 if x.dtype == np.float32 else np.float64
    kernel, width = sinc_resample_kernel(
        orig_rate,
        new_rate,
        lowpass_filter_width=lowpass_filter_width,
        rolloff=rolloff,
        dtype=dtype,
    )
    shape = x.shape
    rows = x.reshape(-1, shape[-1])
    length = rows.shape[1]
    padded = np.pad(rows, ((0, 0), (width, width + orig)))
    taps = kernel.shape[1]
    n_blocks = (padded.shape[1] - taps) // orig + 1
    # Every block of ``taps`` input samples, one block per ``orig`` samples (a strided view).
    frames = np.lib.stride_tricks.sliding_window_view(padded, taps, axis=1)[:, ::orig][:, :n_blocks]
    out = np.einsum("rbk,jk->rbj", frames, kernel, optimize=True).reshape(rows.shape[0], -1)
    target = math.ceil(new * length / orig)
    return np.ascontiguousarray(out[:, :target].reshape(*shape[:-1], -1), dtype=dtype)
