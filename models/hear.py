"""``--model hear:<python module>``: any model that follows the HEAR 2021 API.

A HEAR module provides ``load_model(model_file_path="")`` returning a model
with ``sample_rate``, ``scene_embedding_size`` and ``timestamp_embedding_size``,
plus ``get_scene_embeddings(audio, model)`` → ``[n, D]`` and
``get_timestamp_embeddings(audio, model)`` → (``[n, T, D]``, ``[n, T]``), where
``audio`` is a float32 tensor ``[n, samples]`` at the model's rate. The runner
resamples to that rate; clips of equal length are batched together because
the API takes one tensor per call.

``mode="scene"`` (default) gives one vector per clip; ``mode="timestamp"`` the
frame sequence, mean over time by default. ``--weights`` is passed to
``load_model`` as the model file; a local file (or directory) is identified
by its content (:mod:`audiobench.models.digest`), so a file rewritten in
place is not served from the cache of the old one.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field, field_validator

from audiobench.encoder import Encoder, EncoderOptions, ModelMeta, OutputKind
from audiobench.errors import OptionError
from audiobench.models.digest import weights_digest
from audiobench.models.hf import encode_grouped

__all__ = ["HearEncoder", "hear_encoder"]

Mode = Literal["scene", "timestamp"]
_REQUIRED = ("load_model", "get_scene_embeddings", "get_timestamp_embeddings")


class HearEncoder(Encoder):
    """Adapter around one loaded HEAR module (built by :func:`hear_encoder`).

    The module's model is loaded by the factory, which needs its sample rate
    and sizes for the instance's metadata; :meth:`load` has nothing left to do.
    """

    meta = ModelMeta(
        name="hear",
        sample_rate=16000,
        output_kind=OutputKind.VECTOR,
        description="Template for hear:<module> models.",
    )

    class Options(EncoderOptions):
        mode: Mode = Field(
            default="scene",
            description="'scene': one vector per clip; 'timestamp': the frame sequence.",
        )
        weights: str = Field(
            default="", description="Model file passed to the module's load_model (--weights)."
        )

        @field_validator("weights", mode="before")
        @classmethod
        def _none_as_empty(cls, value: Any) -> Any:
            return "" if value is None else value

    options: Options

    def __init__(self, *, module: Any, hear_model: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.module = module
        self.model = hear_model
        self.mode: Mode = self.options.mode
        self._weights_digest: str | None = None

    def describe(self) -> dict[str, Any]:
        description = super().describe()
        weights = self.options.weights
        if weights and Path(weights).expanduser().exists():
            if self._weights_digest is None:
                self._weights_digest = weights_digest(weights)
            description["weights_digest"] = self._weights_digest
        return description

    def parameter_count(self) -> int | None:
        parameters = getattr(self.model, "parameters", None)
        if callable(parameters):
            return int(sum(p.numel() for p in parameters()))
        return None

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        # The API takes one [n, samples] tensor per call: equal lengths only.
        return encode_grouped(waveforms, self._embed_equal_lengths, pad_safe=False)

    def _embed_equal_lengths(self, waves: list[np.ndarray]) -> list[np.ndarray]:
        import torch

        audio = torch.as_tensor(np.stack(waves), device=_model_device(self.model, self.device))
        if self.mode == "scene":
            emb = self.module.get_scene_embeddings(audio, self.model)
        else:
            emb, _timestamps = self.module.get_timestamp_embeddings(audio, self.model)
        emb = emb.detach().float().cpu().numpy() if hasattr(emb, "detach") else np.asarray(emb)
        return list(emb)


def _model_device(model: Any, fallback: str) -> str:
    parameters = getattr(model, "parameters", None)
    if callable(parameters):
        first = next(iter(parameters()), None)
        if first is not None:
            return str(first.device)
    return fallback


def _version(module_name: str, module: Any) -> str:
    version = getattr(module, "__version__", None)
    if version:
        return str(version)
    top = module_name.split(".")[0]
    try:
        return metadata.version(top)
    except metadata.PackageNotFoundError:
        return "unversioned"


def hear_encoder(argument: str, **kwargs: Any) -> HearEncoder:
    """Import ``argument`` as a HEAR module, load its model and wrap it."""
    if not argument:
        raise OptionError("hear: needs a Python module name, e.g. hear:hearbaseline.naive")
    kwargs.pop("trust_remote_code", None)  # HEAR modules are local Python code
    options = HearEncoder.parse_options(
        {k: v for k, v in kwargs.items() if k in HearEncoder.Options.model_fields},
        name=f"hear:{argument}",
    )
    assert isinstance(options, HearEncoder.Options)
    try:
        module = importlib.import_module(argument)
    except ImportError as exc:
        raise OptionError(
            f"hear:{argument}: cannot import the module {argument!r} ({exc}); install the "
            "package that provides it in this environment"
        ) from exc
    missing = [name for name in _REQUIRED if not callable(getattr(module, name, None))]
    if missing:
        raise OptionError(
            f"hear:{argument}: the module does not follow the HEAR API; missing {missing}"
        )
    mode, weights = options.mode, options.weights
    model = module.load_model(weights) if weights else module.load_model()
    for attr in ("sample_rate", "scene_embedding_size", "timestamp_embedding_size"):
        if not hasattr(model, attr):
            raise OptionError(f"hear:{argument}: the loaded model has no {attr!r} attribute")
    device = kwargs.get("device", "cpu")
    if device != "cpu" and hasattr(model, "to"):
        model = model.to(device)
    if hasattr(model, "eval"):
        model.eval()
    scene = mode == "scene"
    meta = ModelMeta(
        name=f"hear:{argument}",
        source=argument,
        revision=_version(argument, module),
        sample_rate=int(model.sample_rate),
        output_kind=OutputKind.VECTOR if scene else OutputKind.SEQUENCE,
        embedding_dim=int(model.scene_embedding_size if scene else model.timestamp_embedding_size),
        default_pooling="none" if scene else "mean_time",
        description=f"HEAR module {argument} ({mode} embeddings).",
    )
    return HearEncoder(meta=meta, module=module, hear_model=model, **kwargs)
