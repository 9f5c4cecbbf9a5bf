"""A vector encoder a plugin might ship: mean and spread of each log-mel band.

It has no weights (nothing to load) and no options; a model with options
declares them as ``class Options(EncoderOptions)``, one typed field each.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from audiobench.encoder import Encoder, ModelMeta, OutputKind
from audiobench.models.baselines import log_mel_spectrogram


class SpectralStatsEncoder(Encoder):
    meta = ModelMeta(
        name="example-spectral-stats",
        revision="v1",
        sample_rate=16000,
        output_kind=OutputKind.VECTOR,
        embedding_dim=256,
        n_parameters=0,
        license="Apache-2.0",
        description="Plugin example: per-band mean and standard deviation of the log-mel "
        "spectrogram.",
    )

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        out = []
        for w in waveforms:
            mel = log_mel_spectrogram(w, self.meta.sample_rate)
            out.append(np.concatenate([mel.mean(axis=0), mel.std(axis=0)]))
        return out
