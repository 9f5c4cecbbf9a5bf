"""CLAP (LAION, through transformers' ClapModel): audio and text towers in one space.

Audio is resampled to 48 kHz by the runner. Clips longer than the model's
window (10 s) are cropped *before* the feature extractor, deterministically
(``crop="center"`` by default, ``"start"``, or ``"seeded"``: an offset drawn
from a generator seeded by ``seed`` and the clip's length), so the extractor's
own unseeded random crop never runs and the same clip always gives the same
vector. Shorter clips, however short, are repeat-padded to the window by the
feature extractor, clip by clip, so no clip's vector depends on its batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import Field

from audiobench.encoder import Modality, ModelMeta, OutputKind
from audiobench.models.hf import HFEncoder, to_numpy
from audiobench.torch_runtime import inference_mode

__all__ = ["ClapEncoder", "ClapMusicSpeech"]

Crop = Literal["center", "start", "seeded"]


def _meta(name: str, source: str, n_parameters: int) -> ModelMeta:
    return ModelMeta(
        name=name,
        source=source,
        revision="main",
        sample_rate=48000,
        output_kind=OutputKind.VECTOR,
        embedding_dim=512,
        n_parameters=n_parameters,
        license="Apache-2.0",
        modalities=(Modality.AUDIO, Modality.TEXT),
        default_pooling="none",
        description=(
            f"LAION CLAP ({source}): 512-d joint audio-text embedding at 48 kHz; "
            "clips over 10 s cropped deterministically (crop=center|start|seeded)."
        ),
        reference="https://arxiv.org/abs/2211.06687",
    )


def crop_offset(n_samples: int, window: int, crop: Crop, seed: int) -> int:
    """Start of the ``window``-sample crop of a longer clip (0 when it fits)."""
    overflow = n_samples - window
    if overflow <= 0:
        return 0
    if crop == "start":
        return 0
    if crop == "center":
        return overflow // 2
    return int(np.random.default_rng([seed, n_samples]).integers(0, overflow + 1))


def _features(output: Any) -> Any:
    # transformers 5 returns an output object; earlier versions a tensor.
    return getattr(output, "pooler_output", output)


class ClapEncoder(HFEncoder):
    meta = _meta("clap", "laion/clap-htsat-unfused", 153_000_000)

    class Options(HFEncoder.Options):
        crop: Crop = Field(
            default="center",
            description="Where clips longer than the 10 s window are cropped: 'center', "
            "'start', or 'seeded' (an offset drawn from seed and the clip's length).",
        )
        seed: int = Field(default=0, ge=0, description="Seed of the 'seeded' crop.")

    options: Options

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.crop: Crop = self.options.crop
        self.seed = self.options.seed

    @classmethod
    def meta_for(cls, name: str, source: str, revision: str, config: Any) -> ModelMeta:
        meta = super().meta_for(name, source, revision, config)
        return meta.model_copy(update={"embedding_dim": int(config.projection_dim)})

    def _load(self) -> None:
        import transformers

        self.feature_extractor = self._from_pretrained(
            transformers.ClapFeatureExtractor, what="feature extractor"
        )
        self.tokenizer = self._from_pretrained(transformers.AutoTokenizer, what="tokenizer")
        self.model = self._load_model(transformers.ClapModel)
        fused = bool(getattr(self.model.config.audio_config, "enable_fusion", False))
        self.truncation = "fusion" if fused else "rand_trunc"
        self.window = int(self.feature_extractor.nb_max_samples)

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        self.require_loaded()
        cropped = []
        for w in waveforms:
            start = crop_offset(len(w), self.window, self.crop, self.seed)
            if len(w) > self.window:
                self.note(
                    f"longer than CLAP's {self.window / self.meta.sample_rate:g} s window; "
                    f"cropped ({self.crop})"
                )
            cropped.append(w[start : start + self.window])
        inputs = self.feature_extractor(
            cropped,
            sampling_rate=self.meta.sample_rate,
            return_tensors="pt",
            truncation=self.truncation,
        )
        features = _features(self.model.get_audio_features(**self._to_device(inputs)))
        return list(to_numpy(features))

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        self.require_loaded()
        tokens = self.tokenizer(list(texts), padding=True, truncation=True, return_tensors="pt")
        with inference_mode():
            features = _features(self.model.get_text_features(**self._to_device(tokens)))
        return to_numpy(features)


class ClapMusicSpeech(ClapEncoder):
    meta = _meta("clap-music-speech", "laion/larger_clap_music_and_speech", 194_000_000)
