"""The encoder interface: what every model, built-in or plugin, implements.

An encoder declares itself with a :class:`ModelMeta` and turns batches of
waveforms (mono float32 at ``meta.sample_rate``) into one array per clip.
Loading is lazy: constructing an encoder is cheap and never touches the
network; :meth:`Encoder.load` runs the first time something is encoded.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from enum import StrEnum
from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from audiobench.pooling import Pooling

__all__ = ["Encoder", "Modality", "ModelMeta", "OutputKind"]

#: Bumped when a change to the framework alters what an encoder's cached
#: outputs mean, so old cache entries stop matching.
CACHE_FORMAT_VERSION = 1


class OutputKind(StrEnum):
    VECTOR = "vector"
    SEQUENCE = "sequence"
    TOKENS = "tokens"


class Modality(StrEnum):
    AUDIO = "audio"
    TEXT = "text"


class ModelMeta(BaseModel):
    """Static description of an encoder, shown by ``audiobench list models``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Registry name, e.g. 'whisper-large-v3'.")
    source: str | None = Field(
        default=None, description="Where the weights come from (hub id); None for DSP baselines."
    )
    revision: str | None = Field(default=None, description="Pinned revision of the weights.")
    sample_rate: int = Field(gt=0, description="Native input sample rate in Hz.")
    output_kind: OutputKind
    embedding_dim: int | None = Field(
        default=None, description="Feature size D; None when it depends on the input."
    )
    n_parameters: int | None = Field(default=None, ge=0)
    license: str | None = None
    modalities: tuple[Modality, ...] = (Modality.AUDIO,)
    can_decode: bool = Field(default=False, description="Embeddings can be decoded to audio.")
    default_pooling: str = Field(
        default="none", description="Pooling applied unless the user asks for another."
    )
    description: str = ""
    reference: str | None = None


class Encoder(ABC):
    """Base class of all encoders.

    Subclasses set :attr:`meta` and implement :meth:`_load` and
    :meth:`encode_audio`; audio–text models also implement :meth:`encode_text`
    and codecs :meth:`decode`. Constructor keyword arguments that change the
    output (layer, bandwidth, …) go to ``params`` so they enter the cache
    fingerprint and the result file.
    """

    meta: ClassVar[ModelMeta]
    #: Keyword options the constructor takes beyond the common ones; None accepts
    #: any (recorded in ``params``). Declaring them turns a typo into an error.
    options: ClassVar[tuple[str, ...] | None] = None

    def __init__(
        self,
        *,
        device: str = "cpu",
        dtype: str | None = None,
        pooling: str | None = None,
        revision: str | None = None,
        **params: Any,
    ) -> None:
        accepted = self.accepted_options()
        unknown = sorted(set(params) - set(accepted)) if accepted is not None else []
        if unknown:
            raise ValueError(
                f"model {self.meta.name!r} has no option(s) {unknown}; "
                f"it accepts {list(accepted or []) or 'none'}"
            )
        self.device = device
        self.dtype = dtype
        self.revision = revision or self.meta.revision
        self.pooling = Pooling.parse(pooling or self.meta.default_pooling)
        self.params: dict[str, Any] = dict(params)
        #: Where the weights are loaded from (a hub id or a directory; None for DSP).
        self.source: str | None = self.meta.source
        self._loaded = False
        self._notes: dict[str, int] = {}

    @classmethod
    def accepted_options(cls) -> tuple[str, ...] | None:
        """Names of the options this encoder takes (None: not declared)."""
        return cls.options

    # -- lifecycle -------------------------------------------------------------

    def load(self) -> None:
        """Load weights (once). Called by the runner before the first batch."""
        if not self._loaded:
            self._load()
            self._loaded = True

    def _load(self) -> None:  # noqa: B027 - DSP baselines have nothing to load
        """Fetch and build the model; override in encoders with weights."""

    # -- encoding --------------------------------------------------------------

    @abstractmethod
    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Encode a batch of mono float32 waveforms at ``meta.sample_rate``.

        Returns one array per waveform, in order: ``[D]`` for vector outputs,
        ``[T, D]`` for sequences, integer ``[T, Q]`` for tokens.
        """

    def n_valid_frames(self, n_samples: int) -> int | None:
        """Frames of the output that hold real audio, for masked pooling (None: all)."""
        return None

    def embed(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Encode and pool: what the runner caches and the evaluators consume."""
        self.load()
        outputs = self.encode_audio(waveforms)
        if len(outputs) != len(waveforms):
            raise RuntimeError(
                f"encoder {self.meta.name!r} returned {len(outputs)} outputs "
                f"for {len(waveforms)} waveforms"
            )
        return [
            self.pooling(np.asarray(z), self.n_valid_frames(len(w)))
            for z, w in zip(outputs, waveforms, strict=True)
        ]

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts into the audio embedding space (audio–text models only)."""
        raise NotImplementedError(f"model {self.meta.name!r} has no text encoder")

    def decode(self, outputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Turn unpooled encoder outputs back into waveforms (codecs only)."""
        raise NotImplementedError(f"model {self.meta.name!r} cannot decode to audio")

    # -- reporting -------------------------------------------------------------

    def parameter_count(self) -> int | None:
        """Parameters of the loaded model (the metadata's figure before loading)."""
        return self.meta.n_parameters

    def eager_attention(self) -> AbstractContextManager[None]:
        """Context in which attention runs unfused, so FLOP counting sees its matmuls."""
        return nullcontext()

    def note(self, message: str, count: int = 1) -> None:
        """Count an event worth telling the user about (e.g. clips cut to the window)."""
        self._notes[message] = self._notes.get(message, 0) + count

    def pop_notes(self) -> list[str]:
        """Counted events since the last call, as sentences; resets the counts."""
        notes = [f"{n} clip(s): {message}" for message, n in self._notes.items()]
        self._notes.clear()
        return notes

    # -- identity --------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        """Everything that determines the cached outputs, as plain JSON."""
        return {
            "name": self.meta.name,
            "source": self.source,
            "revision": self.revision,
            "params": self.params,
            "pooling": self.pooling.name,
            "sample_rate": self.meta.sample_rate,
            "dtype": self.dtype,
            "cache_format": CACHE_FORMAT_VERSION,
        }

    def fingerprint(self, *, pooled: bool = True) -> str:
        """Stable hash of :meth:`describe`: the encoder half of a cache key.

        ``pooled=False`` identifies the unpooled outputs, which are cached apart.
        """
        description = self.describe() if pooled else {**self.describe(), "pooling": "unpooled"}
        blob = json.dumps(description, sort_keys=True, default=str).encode()
        return hashlib.blake2b(blob, digest_size=16).hexdigest()
