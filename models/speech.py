"""Self-supervised speech encoders: WavLM, wav2vec 2.0, HuBERT (50 frames per second).

Each returns the frame sequence of the chosen layer (``layer=``; default the
last), trimmed to the frames that hold audio; default pooling is the mean
over time.
"""

from __future__ import annotations

from audiobench.encoder import ModelMeta, OutputKind
from audiobench.models.hf import FrameEncoder

__all__ = [
    "HubertBase",
    "HubertLarge",
    "Wav2Vec2Base",
    "Wav2Vec2Large",
    "WavLMBasePlus",
    "WavLMLarge",
]


def _meta(name: str, source: str, dim: int, n_parameters: int, reference: str) -> ModelMeta:
    return ModelMeta(
        name=name,
        source=source,
        revision="main",
        sample_rate=16000,
        output_kind=OutputKind.SEQUENCE,
        embedding_dim=dim,
        n_parameters=n_parameters,
        license="MIT" if "wavlm" in name else "Apache-2.0",
        default_pooling="mean_time",
        description=f"{source}: {dim}-d frames at 50 Hz, mean over time; option layer=.",
        reference=reference,
    )


_WAVLM = "https://arxiv.org/abs/2110.13900"
_W2V2 = "https://arxiv.org/abs/2006.11477"
_HUBERT = "https://arxiv.org/abs/2106.07447"


class WavLMLarge(FrameEncoder):
    meta = _meta("wavlm-large", "microsoft/wavlm-large", 1024, 315_000_000, _WAVLM)


class WavLMBasePlus(FrameEncoder):
    meta = _meta("wavlm-base-plus", "microsoft/wavlm-base-plus", 768, 94_400_000, _WAVLM)


class Wav2Vec2Base(FrameEncoder):
    meta = _meta("wav2vec2-base", "facebook/wav2vec2-base", 768, 95_000_000, _W2V2)


class Wav2Vec2Large(FrameEncoder):
    meta = _meta("wav2vec2-large", "facebook/wav2vec2-large-lv60", 1024, 317_000_000, _W2V2)


class HubertBase(FrameEncoder):
    meta = _meta("hubert-base", "facebook/hubert-base-ls960", 768, 94_400_000, _HUBERT)


class HubertLarge(FrameEncoder):
    meta = _meta("hubert-large", "facebook/hubert-large-ll60k", 1024, 316_000_000, _HUBERT)
