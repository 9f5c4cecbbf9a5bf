"""Encoders backed by transformers, and the ``hf:<repo id or directory>`` loader.

:class:`HFEncoder` holds what every transformers model shares: where the
weights come from (hub id, ``--weights`` directory, pinned revision), the
compute dtype (fp16 on CUDA unless ``--dtype fp32``), layer choice, remote
code only on request, and eval/inference mode. Architecture classes (Whisper,
CLAP, EnCodec, AST and the frame-level speech models here) only say how to
turn waveforms into model inputs and outputs into arrays.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar

import numpy as np

from audiobench.encoder import Encoder, ModelMeta, OutputKind
from audiobench.models.loading import ModelLoadError, from_pretrained, resolve_dtype, torch_dtype

__all__ = [
    "FrameEncoder",
    "HFEncoder",
    "architectures",
    "encode_grouped",
    "hf_encoder",
    "to_numpy",
]


class HFEncoder(Encoder):
    """Base of transformers encoders.

    Options common to all of them (constructor keywords, also ``--model-option``):

    - ``layer``: which hidden state to return (``0`` = the embedding layer's
      output, ``k`` = after block ``k``, negative counts from the end); None,
      the default, is the model's final output.
    - ``weights``: a local directory or another hub id to load instead of
      ``meta.source`` (same architecture); ``--weights`` on the CLI.
    - ``trust_remote_code``: allow code from the hub repository; off unless asked.
    """

    options: ClassVar[tuple[str, ...] | None] = ()

    @classmethod
    def accepted_options(cls) -> tuple[str, ...]:
        return ("layer", "weights", "trust_remote_code", *(cls.options or ()))

    def __init__(
        self,
        *,
        device: str = "cpu",
        dtype: str | None = None,
        pooling: str | None = None,
        revision: str | None = None,
        weights: str | None = None,
        trust_remote_code: bool = False,
        layer: int | None = None,
        **params: Any,
    ) -> None:
        super().__init__(
            device=device,
            dtype=resolve_dtype(dtype, device),
            pooling=pooling,
            revision=revision,
            **({"layer": layer} if layer is not None else {}),
            **params,
        )
        if layer is not None and not isinstance(layer, int):
            raise ValueError(f"layer must be an integer, got {layer!r}")
        self.layer = layer
        self.source = weights or self.meta.source
        if self.source is None:
            raise ValueError(f"model {self.meta.name!r} declares no weights; pass weights=")
        self.trust_remote_code = trust_remote_code
        self.model: Any = None

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
                "embedding_dim": _config_dim(config),
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
        self.load()
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
            raise ValueError(
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
    """A model output as float32 numpy on the CPU (half-precision outputs included)."""
    return t.detach().float().cpu().numpy()


class FrameEncoder(HFEncoder):
    """Self-supervised speech models (wav2vec 2.0, HuBERT, WavLM, ...): ``[T, D]`` frames.

    Clips in a batch are padded with an attention mask when the model supports
    one, and the padded frames are cut off, so a clip's output does not depend
    on its batch. Models trained without an attention mask (wav2vec2-base:
    group-norm feature encoder) would see the padding, so they are run on
    groups of equally long clips instead.
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

    def n_frames(self, n_samples: int) -> int | None:
        lengths = getattr(self.model, "_get_feat_extract_output_lengths", None)
        return None if lengths is None else int(lengths(n_samples))

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        self.load()
        return encode_grouped(waveforms, self._forward, pad_safe=self._use_mask)

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
            n = self.n_frames(len(w)) if self._use_mask else None
            result.append(to_numpy(hidden[i, : n if n else hidden.shape[1]]))
        return result


# -- the hf: loader ----------------------------------------------------------------


def architectures() -> dict[str, type[HFEncoder]]:
    """``config.model_type`` → encoder class for ``hf:`` models (others: FrameEncoder)."""
    from audiobench.models.ast import ASTEncoder
    from audiobench.models.clap import ClapEncoder
    from audiobench.models.encodec import EncodecEncoder
    from audiobench.models.whisper import WhisperEncoder

    return {
        "whisper": WhisperEncoder,
        "clap": ClapEncoder,
        "encodec": EncodecEncoder,
        "audio-spectrogram-transformer": ASTEncoder,
    }


def _config_dim(config: Any) -> int | None:
    for attr in ("hidden_size", "d_model", "projection_dim", "hidden_dim"):
        value = getattr(config, attr, None)
        if isinstance(value, int):
            return value
    return None


def hf_encoder(argument: str, **kwargs: Any) -> Encoder:
    """Build an encoder for any transformers audio model (``--model hf:<id or dir>``).

    The architecture comes from the checkpoint's config (``model_type``);
    known ones get their dedicated class (Whisper's 30 s window, CLAP's
    48 kHz and text tower, EnCodec's codes, AST's spectrogram input), every
    other audio model is treated as a frame-sequence encoder with mean pooling.
    """
    import transformers

    if not argument:
        raise ValueError("hf: needs a hub id or a local directory, e.g. hf:facebook/wav2vec2-base")
    revision = kwargs.get("revision")
    trust = bool(kwargs.get("trust_remote_code", False))
    config = from_pretrained(
        transformers.AutoConfig,
        argument,
        revision=revision,
        trust_remote_code=trust,
        what="configuration",
    )
    model_type = getattr(config, "model_type", "")
    cls = architectures().get(model_type, FrameEncoder)
    if cls is FrameEncoder:
        try:
            fe = from_pretrained(
                transformers.AutoFeatureExtractor,
                argument,
                revision=revision,
                trust_remote_code=trust,
                what="feature extractor",
            )
            sample_rate = int(fe.sampling_rate)
        except ModelLoadError:
            sample_rate = 16000
        meta = ModelMeta(
            name=f"hf:{argument}",
            source=argument,
            revision=revision or "main",
            sample_rate=sample_rate,
            output_kind=OutputKind.SEQUENCE,
            embedding_dim=_config_dim(config),
            default_pooling="mean_time",
            description=f"{model_type or 'transformers'} model loaded with AutoModel; "
            "frame sequence, mean over time by default.",
        )
    else:
        meta = cls.meta_for(f"hf:{argument}", argument, revision or "main", config)
    dynamic = type(f"{cls.__name__}_{abs(hash(argument)) % 10**8}", (cls,), {"meta": meta})
    return dynamic(**kwargs)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b) if b > 0 else a
