"""EnCodec: a neural codec, as an encoder of continuous latents or discrete codes.

``output="latents"`` (default) returns the encoder's continuous ``[T, 128]``
latents at 75 frames per second (24 kHz model); ``output="codes"`` returns
the residual-vector-quantiser codes ``[T, Q]`` at the given ``bandwidth``
(kbps, passed explicitly: the model's silent default is its lowest). Both
decode back to audio with :meth:`EncodecEncoder.decode` — codes through the
quantiser, latents straight through the decoder — which is what
reconstruction tasks use.

Bandwidth: unless one is asked for, it is 6 kbps, or, for a checkpoint whose
``target_bandwidths`` lack 6 kbps, the closest one it has (the lower of two
equally close). The bandwidth used is recorded in ``params`` (so in the
fingerprint and the result) and stated in the run's warnings when it is not
6 kbps. It is resolved from the checkpoint's configuration when the encoder
is built (``hf:``, or a local ``--weights`` directory), else when it loads. A
bandwidth asked for that the checkpoint lacks is an error.

Batching: EnCodec pads by reflection inside its convolutions (even the causal
24 kHz model), so the padding of a batch would reach a clip's frames (all of
them for a clip shorter than a few frames). Clips are therefore encoded in
groups of equal length, and a clip's codes and latents never depend on its
batch. A clip shorter than one frame (320 samples) gives one frame.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import Field

from audiobench.encoder import ModelMeta, OutputKind
from audiobench.errors import OptionError
from audiobench.models.hf import HFEncoder, ceil_div, encode_grouped, to_numpy
from audiobench.torch_runtime import inference_mode

__all__ = ["DEFAULT_BANDWIDTH", "EncodecEncoder", "default_bandwidth"]

Output = Literal["latents", "codes"]

#: Bandwidth (kbps) used unless one is asked for, when the checkpoint has it.
DEFAULT_BANDWIDTH = 6.0


def default_bandwidth(available: Sequence[float]) -> float:
    """6 kbps if available, else the closest available bandwidth (the lower on a tie)."""
    return min(available, key=lambda b: (abs(b - DEFAULT_BANDWIDTH), b))


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

    class Options(HFEncoder.Options):
        output: Output = Field(
            default="latents",
            description="'latents': the encoder's continuous frames; 'codes': the residual "
            "vector quantiser's integer codes.",
        )
        bandwidth: float | None = Field(
            default=None,
            description="Target bandwidth in kbps, one of the model's (1.5, 3, 6, 12, 24 for "
            "the 24 kHz model); sets the number of codebooks. Default: 6, or the closest "
            "the checkpoint has (recorded).",
        )

    options: Options

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.output: Output = self.options.output
        #: The bandwidth in kbps: the one asked for, else resolved from the checkpoint.
        asked = self.options.bandwidth
        self.bandwidth = DEFAULT_BANDWIDTH if asked is None else asked
        self._asked = asked is not None
        available = self._declared_bandwidths()
        if available is not None:
            self._settle_bandwidth(available)
        self.params["bandwidth"] = self.bandwidth
        if self.output == "codes":
            # This instance's outputs are integer codes, not the declared float latents.
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
        self._settle_bandwidth([float(b) for b in config.target_bandwidths or ()])
        self.hop = int(np.prod(config.upsampling_ratios))

    def _declared_bandwidths(self) -> list[float] | None:
        """The checkpoint's bandwidths, if its configuration can be read without loading."""
        config = self.config_hint
        if config is not None:
            return [float(b) for b in getattr(config, "target_bandwidths", None) or ()]
        if self.local_dir is None:
            return None  # a hub id: known once loaded
        try:
            declared = json.loads((self.local_dir / "config.json").read_text(encoding="utf-8"))
            return [float(b) for b in declared.get("target_bandwidths") or ()]
        except (OSError, ValueError, TypeError, AttributeError):
            return None  # loading reports what is wrong with the checkpoint

    def _settle_bandwidth(self, available: list[float]) -> None:
        """Check the bandwidth asked for, or choose the default one, among ``available``."""
        if not available or self.bandwidth in available:
            return
        if self._asked:
            raise OptionError(
                f"{self.meta.name}: bandwidth {self.bandwidth:g} kbps is not one of the model's "
                f"{available}"
            )
        chosen = default_bandwidth(available)
        self.note(
            f"the checkpoint has no {DEFAULT_BANDWIDTH:g} kbps bandwidth; using {chosen:g} kbps, "
            f"the closest of {available} (recorded in params)",
            count=None,
        )
        self.bandwidth = chosen
        self.params["bandwidth"] = chosen

    def n_frames(self, n_samples: int) -> int:
        return max(1, ceil_div(n_samples, self.hop))

    def bits_per_second(self) -> float:
        """Size of the code stream at this bandwidth: Q · log2(codebook size) · frame rate."""
        self.require_loaded()
        config = self.model.config
        frame_rate = config.sampling_rate / self.hop
        bits = math.log2(config.codebook_size)
        n_q = int(self.bandwidth * 1000 // (frame_rate * bits))
        return n_q * bits * frame_rate

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        self.require_loaded()
        # Reflection padding inside the model would let a batch's padding reach a clip.
        return encode_grouped(waveforms, self._encode, pad_safe=False)

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

        self.require_loaded()
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
