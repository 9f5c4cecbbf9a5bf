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
``load_model`` as the model file.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from importlib import metadata
from typing import Any, Literal

import numpy as np

from audiobench.encoder import Encoder, ModelMeta, OutputKind
from audiobench.models.hf import encode_grouped

__all__ = ["HearEncoder", "hear_encoder"]

Mode = Literal["scene", "timestamp"]
_REQUIRED = ("load_model", "get_scene_embeddings", "get_timestamp_embeddings")


class HearEncoder(Encoder):
    """Adapter around one loaded HEAR module (built by :func:`hear_encoder`)."""

    meta = ModelMeta(
        name="hear",
        sample_rate=16000,
        output_kind=OutputKind.VECTOR,
        description="Template for hear:<module> models.",
    )
    options = ("mode", "weights")

    def __init__(
        self,
        *,
        module: Any,
        hear_model: Any,
        mode: Mode = "scene",
        weights: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(mode=mode, weights=weights or "", **kwargs)
        self.module = module
        self.model = hear_model
        self.mode: Mode = mode

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


def hear_encoder(argument: str, **kwargs: Any) -> Encoder:
    """Import ``argument`` as a HEAR module, load its model and wrap it."""
    if not argument:
        raise ValueError("hear: needs a Python module name, e.g. hear:hearbaseline.naive")
    try:
        module = importlib.import_module(argument)
    except ImportError as exc:
        raise ValueError(
            f"hear:{argument}: cannot import the module {argument!r} ({exc}); install the "
            "package that provides it in this environment"
        ) from exc
    missing = [name for name in _REQUIRED if not callable(getattr(module, name, None))]
    if missing:
        raise ValueError(
            f"hear:{argument}: the module does not follow the HEAR API; missing {missing}"
        )
    mode = kwargs.get("mode", "scene")
    if mode not in ("scene", "timestamp"):
        raise ValueError(f"hear: mode must be 'scene' or 'timestamp', got {mode!r}")
    weights = kwargs.get("weights") or ""
    model = module.load_model(weights) if weights else module.load_model()
    for attr in ("sample_rate", "scene_embedding_size", "timestamp_embedding_size"):
        if not hasattr(model, attr):
            raise ValueError(f"hear:{argument}: the loaded model has no {attr!r} attribute")
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
    kwargs.pop("trust_remote_code", None)  # HEAR modules are local Python code
    dynamic = type("HearEncoder_" + argument.replace(".", "_"), (HearEncoder,), {"meta": meta})
    return dynamic(module=module, hear_model=model, **kwargs)
