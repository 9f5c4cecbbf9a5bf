"""Signal-processing baselines: no weights, no network.

``log-mel`` is VocSim's "M" baseline, computed exactly as docs/VOCSIM.md
fixes it (the reference code's dB variant, not the paper text's log(1+x)).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from pydantic import Field, field_validator

from audiobench.encoder import Encoder, EncoderOptions, ModelMeta, OutputKind

__all__ = [
    "LogMelEncoder",
    "MFCCEncoder",
    "RandomProjectionEncoder",
    "hz_to_mel_htk",
    "log_mel_spectrogram",
    "mel_filterbank",
    "mfcc",
]


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
    fb = np.maximum(0.0, np.minimum(lower, upper))
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
    return np.maximum(db, db.max() - top_db).astype(np.float32)


class LogMelEncoder(Encoder):
    """128-band log-mel spectrogram; default pooling pads each subset and flattens."""

    meta = ModelMeta(
        name="log-mel",
        revision="v1",
        sample_rate=16000,
        output_kind=OutputKind.SEQUENCE,
        embedding_dim=128,
        n_parameters=0,
        license="Apache-2.0",
        default_pooling="flatten",
        description=(
            "VocSim's log-mel baseline: 512-point STFT, hop 256, 128 HTK mel bands "
            "(0-8 kHz), dB with an 80 dB floor; flattened band-major after padding "
            "each subset to its longest clip."
        ),
    )

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        return [log_mel_spectrogram(w, self.meta.sample_rate) for w in waveforms]


def mfcc(wave: np.ndarray, sample_rate: int = 16000, *, n_mfcc: int = 20) -> np.ndarray:
    """MFCCs ``[frames, n_mfcc]``: orthonormal DCT-II of :func:`log_mel_spectrogram` (dB)."""
    from scipy.fft import dct

    return dct(log_mel_spectrogram(wave, sample_rate), type=2, norm="ortho", axis=1)[
        :, :n_mfcc
    ].astype(np.float32)


class MFCCEncoder(Encoder):
    """MFCCs from the log-mel baseline's spectrogram; padded and flattened like it."""

    meta = ModelMeta(
        name="mfcc",
        revision="v1",
        sample_rate=16000,
        output_kind=OutputKind.SEQUENCE,
        embedding_dim=20,
        n_parameters=0,
        license="Apache-2.0",
        default_pooling="flatten",
        description=(
            "20 MFCCs per frame: orthonormal DCT-II of the log-mel baseline's 128 dB bands "
            "(same STFT); flattened after padding each subset, option n_mfcc=."
        ),
    )

    class Options(EncoderOptions):
        n_mfcc: int = Field(default=20, description="Coefficients kept per frame, 1..128.")

        @field_validator("n_mfcc")
        @classmethod
        def _within_the_bands(cls, value: int) -> int:
            if not 1 <= value <= 128:
                raise ValueError(f"n_mfcc must be in 1..128, got {value}")
            return value

    options: Options

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.n_mfcc = self.options.n_mfcc

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        return [mfcc(w, self.meta.sample_rate, n_mfcc=self.n_mfcc) for w in waveforms]


class RandomProjectionEncoder(Encoder):
    """Log-mel frames through a fixed, seeded Gaussian projection: a no-learning reference.

    The projection ``W`` (``128 × dim``, entries N(0, 1/128)) is drawn from
    ``numpy.random.default_rng(seed)``, so every run and machine gets the same
    matrix. Scores of this model show what a benchmark rewards without any
    learned representation; compare learned encoders against it, and against
    the permutation baselines for chance.
    """

    meta = ModelMeta(
        name="random-projection",
        revision="v1",
        sample_rate=16000,
        output_kind=OutputKind.SEQUENCE,
        embedding_dim=512,
        n_parameters=0,
        license="Apache-2.0",
        default_pooling="mean_time",
        description=(
            "Seeded Gaussian random projection of 128-band log-mel frames to 512 dimensions, "
            "mean over time; options dim=, seed=."
        ),
    )

    class Options(EncoderOptions):
        dim: int = Field(default=512, gt=0, description="Output dimensions.")
        seed: int = Field(default=0, description="Seed of the projection matrix.")

    options: Options

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        dim = self.options.dim
        # This instance's dimension, not the declared default's.
        self.meta = self.meta.model_copy(update={"embedding_dim": dim})
        self.projection = (
            np.random.default_rng(self.options.seed)
            .normal(0.0, 1.0 / np.sqrt(128), size=(128, dim))
            .astype(np.float32)
        )

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        return [log_mel_spectrogram(w, self.meta.sample_rate) @ self.projection for w in waveforms]
