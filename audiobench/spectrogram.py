"""Spectrograms computed the way every part of audiobench computes them.

The log-mel spectrogram is VocSim's "M" baseline exactly as docs/VOCSIM.md fixes it (the
reference code's dB variant, not the paper text's log(1+x)); the log-mel baseline encoder,
the MFCC baseline and the reconstruction family's log-mel distance all use it.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["hz_to_mel_htk", "log_mel_spectrogram", "mel_filterbank", "mfcc"]


def hz_to_mel_htk(hz: np.ndarray | float) -> np.ndarray:
    return 2595.0 * np.log10(1.0 + np.asarray(hz, dtype=np.float64) / 700.0)


def _mel_to_hz_htk(mel: np.ndarray) -> np.ndarray:
    return 700.0 * (10.0 ** (mel / 2595.0) - 1.0)


@lru_cache(maxsize=8)
def mel_filterbank(
    sample_rate: int, n_fft: int, n_mels: int, fmin: float, fmax: float
) -> np.ndarray:
    """Triangular filters on the HTK mel scale, peak 1, no area normalisation.

    Shape ``[n_mels, n_fft // 2 + 1]``. Band ``m`` rises from mel point ``m``
    to ``m + 1`` and falls to ``m + 2``; the ``n_mels + 2`` points are equally
    spaced in mel between ``fmin`` and ``fmax``.
    """
    mels = np.linspace(hz_to_mel_htk(fmin), hz_to_mel_htk(fmax), n_mels + 2)
    edges = _mel_to_hz_htk(mels)
    freqs = np.linspace(0.0, sample_rate / 2, n_fft // 2 + 1)
    lower = (freqs[None, :] - edges[:-2, None]) / np.diff(edges)[:-1, None]
    upper = (edges[2:, None] - freqs[None, :]) / np.diff(edges)[1:, None]
    fb: np.ndarray = np.maximum(0.0, np.minimum(lower, upper))
    fb.setflags(write=False)
    return fb


def log_mel_spectrogram(
    wave: np.ndarray,
    sample_rate: int = 16000,
    *,
    n_fft: int = 512,
    hop: int = 256,
    n_mels: int = 128,
    fmin: float = 0.0,
    fmax: float = 8000.0,
    top_db: float = 80.0,
) -> np.ndarray:
    """Log-mel power spectrogram in dB, shape ``[frames, n_mels]``.

    Periodic Hann window of ``n_fft`` samples, hop ``hop``, frames centred with
    reflect padding of ``n_fft // 2`` (so ``1 + len // hop`` frames); power
    spectrum; mel filterbank; ``10 * log10(max(x, 1e-10))``; values below the
    clip's maximum minus ``top_db`` are raised to it.
    """
    x = np.asarray(wave, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"expected a non-empty mono waveform, got shape {x.shape}")
    pad = n_fft // 2
    # numpy's reflect needs at least two samples; a one-sample clip is constant.
    x = np.pad(x, pad, mode="reflect" if x.size > 1 else "edge")
    frames = np.lib.stride_tricks.sliding_window_view(x, n_fft)[::hop]
    window = 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(n_fft) / n_fft)
    power = np.abs(np.fft.rfft(frames * window, axis=1)) ** 2
    mel = power @ mel_filterbank(sample_rate, n_fft, n_mels, fmin, fmax).T
    db = 10.0 * np.log10(np.maximum(mel, 1e-10))
    return np.asarray(np.maximum(db, db.max() - top_db), dtype=np.float32)


def mfcc(wave: np.ndarray, sample_rate: int = 16000, *, n_mfcc: int = 20) -> np.ndarray:
    """MFCCs ``[frames, n_mfcc]``: orthonormal DCT-II of :func:`log_mel_spectrogram` (dB)."""
    from scipy.fft import dct

    coefficients = dct(log_mel_spectrogram(wave, sample_rate), type=2, norm="ortho", axis=1)
    return np.asarray(coefficients[:, :n_mfcc], dtype=np.float32)
