"""Small encoders for tests: deterministic, counting their calls, or failing on purpose."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import Field

from audiobench.encoder import Encoder, EncoderOptions, ModelMeta, OutputKind


class StatsEncoder(Encoder):
    """A vector per clip from simple waveform statistics; counts what it encodes."""

    meta = ModelMeta(
        name="test-stats",
        revision="t1",
        sample_rate=16000,
        output_kind=OutputKind.VECTOR,
        embedding_dim=4,
    )

    class Options(EncoderOptions):
        layer: int | None = Field(
            default=None, description="Changes nothing but the fingerprint (cache tests)."
        )

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.calls: list[int] = []

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        self.calls.append(len(waveforms))
        return [
            np.array([w.mean(), w.std(), np.abs(w).max(), len(w) / 16000], dtype=np.float32)
            for w in waveforms
        ]


class NaNEncoder(StatsEncoder):
    """Returns NaN for clips shorter than 0.32 s."""

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        out = super().encode_audio(waveforms)
        for w, o in zip(waveforms, out, strict=True):
            if len(w) < 0.32 * 16000:
                o[0] = np.nan
        return out


class PickyEncoder(StatsEncoder):
    """Raises on any batch that holds a clip of exactly 0.35 s."""

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        if any(len(w) == int(0.35 * 16000) for w in waveforms):
            raise RuntimeError("cannot handle 0.35 s")
        return super().encode_audio(waveforms)
