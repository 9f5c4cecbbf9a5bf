"""EnCodec: a neural codec, as an encoder of continuous latents or discrete codes.

``output="latents"`` (default) returns the encoder's continuous ``[T, 128]``
latents at 75 frames per second (24 kHz model); ``output="codes"`` returns
the residual-vector-quantiser codes ``[T, Q]`` at the given ``bandwidth``
(kbps, passed explicitly: the model's silent default is its lowest). Both
decode back to audio with :meth:`EncodecEncoder.decode` — codes through the
quantiser, latents straight through the decoder — which is what
reconstruction tasks use.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from audiobench.encoder import ModelMeta, OutputKind
from audiobench.models.hf import HFEncoder, ceil_div, encode_grouped, to_numpy

__all__ = ["EncodecEncoder"]

Output = Literal["latents", "codes"]


class EncodecEncoder(HFEncoder):
    meta = ModelMeta(
        name="encodec-24khz",
        source="facebook/encodec_24khz",
        revision="main",
        sample_rate=24000,
        output_kind=OutputKind.SEQUENCE,
        embedding_dim=128,
        n_parameters=14_900_000,
        license="MIT",
        can_decode=True,
        default_pooling="mean_time",
        description=(
            "EnCodec 24 kHz: continuous 128-d latents at 75 Hz (output=latents) or RVQ codes "
            "(output=codes, bandwidth=1.5|3|6|12|24 kbps); decodes back to audio."
        ),
        reference="https://arxiv.org/abs/2210.13438",
    )
    options = ("output", "bandwidth")

    def __init__(
        self, *, output: Output = "latents", bandwidth: float = 6.0, **kwargs: Any
    ) -> None:
        if output not in ("latents", "codes"):
            raise ValueError(f"output must be 'latents' or 'codes', got {output!r}")
        super().__init__(output=output, bandwidth=float(bandwidth), **kwargs)
        self.output: Output = output
        self.bandwidth = float(bandwidth)
        if output == "codes":
            # The instance's outputs are integer codes, not the class's float latents.
            self.meta = self.meta.model_copy(
                update={"output_kind": OutputKind.TOKENS, "embedding_dim": None}
            )

    @classmethod
    def meta_for(cls, name: str, source: str, revision: str, config: Any) -> ModelMeta:
        meta = super().meta_for(name, source, revision, config)
        return meta.model_copy(
            update={
                "sample_rate": int(config.sampling_rate),
                "embedding_dim": int(config.hidden_size),
            }
        )

    def _load(self) -> None:
        import transformers

        self.feature_extractor = self._from_pretrained(
            transformers.EncodecFeatureExtractor, what="feature extractor"
        )
        self.model = self._load_model(transformers.EncodecModel)
        config = self.model.config
        if self.bandwidth not in config.target_bandwidths:
            raise ValueError(
                f"{self.meta.name}: bandwidth {self.bandwidth:g} kbps is not one of the model's "
                f"{list(config.target_bandwidths)}"
            )
        self.hop = int(np.prod(config.upsampling_ratios))
        # Non-causal convolutions would let padding leak into a clip's last frames.
        self._pad_safe = bool(config.use_causal_conv) and config.chunk_length_s is None

    def n_frames(self, n_samples: int) -> int:
        return max(1, ceil_div(n_samples, self.hop))

    def bits_per_second(self) -> float:
        """Size of the code stream at this bandwidth: Q · log2(codebook size) · frame rate."""
        self.load()
        config = self.model.config
        frame_rate = config.sampling_rate / self.hop
        bits = math.log2(config.codebook_size)
        n_q = int(self.bandwidth * 1000 // (frame_rate * bits))
        return n_q * bits * frame_rate

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        self.load()
        return encode_grouped(waveforms, self._encode, pad_safe=self._pad_safe)

    def _encode(self, waves: list[np.ndarray]) -> list[np.ndarray]:
        inputs = self._to_device(
            self.feature_extractor(
                waves, sampling_rate=self.meta.sample_rate, return_tensors="pt", padding=True
            )
        )
        if self.output == "latents":
            z = to_numpy(self.model.encoder(inputs["input_values"]))
            return [z[i, :, : self.n_frames(len(w))].T.copy() for i, w in enumerate(waves)]
        encoded = self.model.encode(
            inputs["input_values"], inputs.get("padding_mask"), bandwidth=self.bandwidth
        )
        codes = encoded.audio_codes  # [chunks, B, Q, T]; one chunk for the 24 kHz model
        if codes.shape[0] != 1:
            raise NotImplementedError("chunked EnCodec models (48 kHz) are not supported")
        codes = codes[0].cpu().numpy().astype(np.int64)
        return [codes[i, :, : self.n_frames(len(w))].T.copy() for i, w in enumerate(waves)]

    def decode(self, outputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Waveforms at ``meta.sample_rate`` from unpooled codes [T, Q] or latents [T, D]."""
        import torch

        from audiobench.runner import inference_mode

        self.load()
        waves = []
        with inference_mode():
            for z in outputs:
                z = np.asarray(z)
                if self.output == "codes":
                    codes = torch.as_tensor(z.T[None, None], dtype=torch.long, device=self.device)
                    audio = self.model.decode(codes, [None]).audio_values
                else:
                    latents = torch.as_tensor(z.T[None], device=self.device)
                    audio = self.model.decoder(latents.to(next(self.model.parameters()).dtype))
                wave = to_numpy(audio).reshape(-1)
                waves.append(wave[: len(z) * self.hop])
        return waves
