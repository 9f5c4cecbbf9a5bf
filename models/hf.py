"""Encoders backed by transformers: the shared base and the frame-level speech models.

:class:`HFEncoder` holds what every transformers model shares: where the
weights come from (hub id, ``--weights`` directory, pinned revision), the
compute dtype (fp16 on CUDA unless ``--dtype fp32``), layer choice, remote
code only on request, and eval/inference mode. Architecture classes (Whisper,
CLAP, EnCodec, AST and the frame-level speech models here) only say how to
turn waveforms into model inputs and outputs into arrays. The
``hf:<repo id or directory>`` loader, which picks among them, is
:mod:`audiobench.models.hf_auto`: this module imports none of them.

Weights from a local directory are identified by their content: the
encoder's description (hence its cache fingerprint) carries a digest of the
directory's weight and configuration files (:mod:`audiobench.models.digest`),
so weights rewritten in place are never served from the cache of the old
ones. A hub id is identified by its id and revision, as before.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from pydantic import Field, field_validator

from audiobench.encoder import Encoder, EncoderOptions, ModelMeta
from audiobench.errors import OptionError
from audiobench.models.digest import weights_digest
from audiobench.models.loading import (
    ModelLoadError,
    from_pretrained,
    local_directory,
    resolve_dtype,
    torch_dtype,
)

__all__ = [
    "FrameEncoder",
    "HFEncoder",
    "ceil_div",
    "config_dim",
    "encode_grouped",
    "min_length",
    "pad_to",
    "to_numpy",
]


class HFEncoder(Encoder):
    """Base of transformers encoders; its options are common to all of them."""

    compute_dtypes = ("float32", "float16", "bfloat16")

    class Options(EncoderOptions):
        # weights enter the fingerprint as Encoder.source; trusting code changes no output.
        unrecorded = frozenset({"weights", "trust_remote_code"})

        layer: int | None = Field(
            default=None,
            description="Hidden state to return: 0 = the embedding layer's output, k = after "
            "block k, negative counts from the end; None: the model's final output.",
        )
        weights: str | None = Field(
            default=None,
            description="A local directory or another hub id (same architecture) to load "
            "instead of the model's own weights (--weights).",
        )
        trust_remote_code: bool = Field(
            default=False,
            description="Run code shipped in the hub repository (--trust-remote-code).",
        )

        @field_validator("weights", mode="before")
        @classmethod
        def _path_as_text(cls, value: Any) -> Any:
            return os.fspath(value) if isinstance(value, os.PathLike) else value

    options: Options

    def __init__(
        self,
        *,
        device: str = "cpu",
        dtype: str | None = None,
        config: Any = None,
        **kwargs: Any,
    ) -> None:
        """``config``: the checkpoint's configuration when the factory already read it."""
        super().__init__(device=device, dtype=resolve_dtype(dtype, device), **kwargs)
        self.layer = self.options.layer
        self.source = self.options.weights or self.meta.source
        if self.source is None:
            raise OptionError(f"model {self.meta.name!r} declares no weights; pass weights=")
        what = (
            f"weights {self.options.weights!r}"
            if self.options.weights
            else f"model {self.meta.name!r}"
        )
        #: The checkpoint directory when the weights are local (None: a hub id).
        self.local_dir: Path | None = local_directory(self.source, what)
        self._weights_digest: str | None = None
        self.trust_remote_code = self.options.trust_remote_code
        self.config_hint = config
        self.model: Any = None

    def describe(self) -> dict[str, Any]:
        """Adds ``weights_digest`` for local weights (hub ids: unchanged).

        The digest is taken once per instance, before the weights are loaded,
        and then describes this instance's outputs for its lifetime.
        """
        description = super().describe()
        if self.local_dir is not None:
            if self._weights_digest is None:
                self._weights_digest = weights_digest(self.local_dir)
            description["weights_digest"] = self._weights_digest
        return description

    # -- loading ----------------------------------------------------------------

    def _from_pretrained(self, loader: Any, what: str = "model", **kwargs: Any) -> Any:
        assert self.source is not None
        return from_pretrained(
            loader,
            self.source,
            revision=self.revision,
            trust_remote_code=self.trust_remote_code,
            what=what,
            **kwargs,
        )

    def _load_model(self, loader: Any, **kwargs: Any) -> Any:
        """Load weights in the compute dtype, move them to the device, switch to eval mode."""
        model = self._from_pretrained(loader, dtype=torch_dtype(self.dtype or "float32"), **kwargs)
        return model.to(self.device).eval()

    @classmethod
    def meta_for(cls, name: str, source: str, revision: str, config: Any) -> ModelMeta:
        """Metadata for an ``hf:`` checkpoint of this architecture, from its config."""
        return cls.meta.model_copy(
            update={
                "name": name,
                "source": source,
                "revision": revision,
                "embedding_dim": config_dim(config),
                "n_parameters": None,
                "description": f"{cls.meta.description} Loaded from {source}.",
            }
        )

    def parameter_count(self) -> int | None:
        if self.model is None:
            return self.meta.n_parameters
        return int(sum(p.numel() for p in self.model.parameters()))

    @contextlib.contextmanager
    def eager_attention(self) -> Iterator[None]:
        """Count FLOPs with eager attention: fused SDPA kernels are invisible to the counter."""
        self.require_loaded()
        model = self.model
        before = getattr(model.config, "_attn_implementation", None)
        switch = before not in (None, "eager") and hasattr(model, "set_attn_implementation")
        if switch:
            with contextlib.suppress(ValueError, NotImplementedError):
                model.set_attn_implementation("eager")
        try:
            yield
        finally:
            if switch:
                with contextlib.suppress(ValueError, NotImplementedError):
                    model.set_attn_implementation(before)

    # -- helpers for subclasses --------------------------------------------------

    def _to_device(self, inputs: Any) -> dict[str, Any]:
        """Move a feature extractor's output to the device; floats to the compute dtype."""
        import torch

        dtype = torch_dtype(self.dtype or "float32")
        out: dict[str, Any] = {}
        for key, value in dict(inputs).items():
            if isinstance(value, torch.Tensor):
                value = value.to(self.device)
                if value.is_floating_point():
                    value = value.to(dtype)
            out[key] = value
        return out

    def _hidden(self, outputs: Any) -> Any:
        """The requested layer's hidden states ``[B, T, D]``."""
        if self.layer is None:
            return outputs.last_hidden_state
        states = outputs.hidden_states
        n = len(states)
        if not -n <= self.layer < n:
            raise OptionError(
                f"model {self.meta.name!r} has hidden states 0..{n - 1} "
                f"(0 = embeddings, {n - 1} = last block); layer={self.layer} is out of range"
            )
        return states[self.layer]


def encode_grouped(
    waveforms: Sequence[np.ndarray],
    forward: Callable[[list[np.ndarray]], Sequence[np.ndarray]],
    *,
    pad_safe: bool,
) -> list[np.ndarray]:
    """``forward`` over a batch, outputs in input order.

    When padding would change a model's outputs (no attention mask, non-causal
    convolutions, an API that takes one tensor), ``forward`` runs on groups of
    clips of exactly equal length instead of on the padded batch.
    """
    if pad_safe:
        return list(forward(list(waveforms)))
    groups: dict[int, list[int]] = {}
    for i, w in enumerate(waveforms):
        groups.setdefault(len(w), []).append(i)
    out: list[np.ndarray] = [np.empty(0)] * len(waveforms)
    for idx in groups.values():
        for i, z in zip(idx, forward([waveforms[i] for i in idx]), strict=True):
            out[i] = z
    return out


def to_numpy(t: Any) -> np.ndarray:
    """A model output as float32 numpy on the CPU (half-precision outputs included).

    Copied in its own dtype and widened on the host: a half-precision frame sequence crosses
    the device link in half the bytes (the copy back was a quarter of a Whisper-large batch's
    time on an H100 when widened on the device first). Widening is exact either way.
    """
    return t.detach().cpu().float().numpy()


class FrameEncoder(HFEncoder):
    """Self-supervised speech models (wav2vec 2.0, HuBERT, WavLM, ...): ``[T, D]`` frames.

    Clips in a batch are padded with an attention mask when the model supports
    one, and the padded frames are cut off, so a clip's output does not depend
    on its batch. Models trained without an attention mask (wav2vec2-base:
    group-norm feature encoder), or whose frame count cannot be computed from
    a clip's length, would see the padding, so they are run on groups of
    equally long clips instead.

    A clip shorter than the convolutional front end's receptive field (400
    samples, 25 ms, for the wav2vec 2.0 family) yields no frame of its own.
    Such a clip is zero-padded at its end to that minimum length and gives
    exactly one frame, alone or in any batch; the run's warnings count these
    clips.
    """

    auto_model: ClassVar[str] = "AutoModel"

    def _load(self) -> None:
        import transformers

        config = self._from_pretrained(transformers.AutoConfig, what="configuration")
        try:
            self.feature_extractor = self._from_pretrained(
                transformers.AutoFeatureExtractor, what="feature extractor"
            )
        except ModelLoadError:
            # Some speech checkpoints ship no preprocessor config; these are the
            # documented defaults for the family (normalise iff layer-norm encoder).
            layer_norm = getattr(config, "feat_extract_norm", "group") == "layer"
            self.feature_extractor = transformers.Wav2Vec2FeatureExtractor(
                feature_size=1,
                sampling_rate=self.meta.sample_rate,
                padding_value=0.0,
                do_normalize=layer_norm,
                return_attention_mask=layer_norm,
            )
        self.model = self._load_model(getattr(transformers, self.auto_model))
        self._use_mask = bool(getattr(self.feature_extractor, "return_attention_mask", False))
        counts_frames = self.n_frames(1) is not None
        # Padded frames can be cut off only when the clip's frame count is known.
        self._pad_safe = self._use_mask and counts_frames
        #: Shortest input that yields one frame (None: unknown for this model).
        self.min_samples = min_length(self.n_frames) if counts_frames else None

    def n_frames(self, n_samples: int) -> int | None:
        lengths = getattr(self.model, "_get_feat_extract_output_lengths", None)
        return None if lengths is None else int(lengths(n_samples))

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        self.require_loaded()
        waves = [self._at_least_one_frame(w) for w in waveforms]
        return encode_grouped(waves, self._forward, pad_safe=self._pad_safe)

    def _at_least_one_frame(self, wave: np.ndarray) -> np.ndarray:
        if self.min_samples is None or len(wave) >= self.min_samples:
            return wave
        self.note(
            f"shorter than the model's minimum input of {self.min_samples} samples "
            f"({1000 * self.min_samples / self.meta.sample_rate:g} ms); zero-padded to it"
        )
        return pad_to(wave, self.min_samples)

    def _forward(self, waves: list[np.ndarray]) -> list[np.ndarray]:
        inputs = self.feature_extractor(
            waves,
            sampling_rate=self.meta.sample_rate,
            return_tensors="pt",
            padding=True,
            return_attention_mask=self._use_mask,
        )
        outputs = self.model(**self._to_device(inputs), output_hidden_states=self.layer is not None)
        hidden = self._hidden(outputs)
        if hidden.ndim == 2:  # a model that pools internally
            return [to_numpy(h) for h in hidden]
        result = []
        for i, w in enumerate(waves):
            # Grouped batches hold clips of one length: every frame is the clip's own.
            n = self.n_frames(len(w)) if self._pad_safe else None
            result.append(to_numpy(hidden[i, : n or hidden.shape[1]]))
        return result


def min_length(n_frames: Callable[[int], int | None], limit: int = 1 << 24) -> int:
    """The fewest samples for which ``n_frames`` gives at least one frame."""
    hi = 1
    while (n_frames(hi) or 0) < 1:
        if hi >= limit:
            raise ValueError(f"no input of up to {limit} samples yields an output frame")
        hi *= 2
    lo = hi // 2  # yields no frame (or is 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if (n_frames(mid) or 0) >= 1:
            hi = mid
        else:
            lo = mid
    return hi


def pad_to(wave: np.ndarray, n_samples: int) -> np.ndarray:
    """``wave`` with zeros appended up to ``n_samples`` (unchanged when already as long)."""
    if len(wave) >= n_samples:
        return wave
    return np.pad(wave, (0, n_samples - len(wave))).astype(wave.dtype, copy=False)


def config_dim(config: Any) -> int | None:
    """The feature size a transformers config declares (None: not found)."""
    for attr in ("hidden_size", "d_model", "projection_dim", "hidden_dim"):
        value = getattr(config, attr, None)
        if isinstance(value, int):
            return value
    return None


def ceil_div(a: int, b: int) -> int:
    return -(-a // b) if b > 0 else a
