"""Signal-processing baselines: no weights, no network.

``log-mel`` is VocSim's "M" baseline, computed exactly as docs/VOCSIM.md
fixes it (the reference code's dB variant, not the paper text's log(1+x)).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import Field, field_validator

from audiobench.encoder import Encoder, EncoderOptions, ModelMeta, OutputKind
from audiobench.spectrogram import hz_to_mel_htk, log_mel_spectrogram, mel_filterbank, mfcc

__all__ = [
    "LogMelEncoder",
    "MFCCEncoder",
    "RandomProjectionEncoder",
    "hz_to_mel_htk",
    "log_mel_spectrogram",
    "mel_filterbank",
    "mfcc",
]

#: Largest ``dim`` of the random projection (a 32 MiB matrix).
MAX_PROJECTION_DIM = 65_536


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
        # The bound keeps the projection (128 × dim) and each clip's frames × dim within
        # memory; a mistyped size is an error naming the option, not an allocation failure.
        dim: int = Field(default=512, gt=0, le=MAX_PROJECTION_DIM, description="Output dimensions.")
        seed: int = Field(default=0, ge=0, description="Seed of the projection matrix.")

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
