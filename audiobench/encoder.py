"""The encoder interface: what every model, built-in or plugin, implements.

An encoder declares itself with a :class:`ModelMeta` and its options with one
:class:`EncoderOptions` model, and turns batches of waveforms (mono float32 at
``meta.sample_rate``) into one array per clip.

The contract on loading: constructing an encoder is cheap and never touches
the network; whoever uses it (the runner, the FLOP counter, a test) calls
:meth:`Encoder.load` once, and the encode methods assume a loaded model (those
with weights raise :class:`RuntimeError` otherwise, see
:meth:`Encoder.require_loaded`).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from enum import StrEnum
from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from audiobench.errors import OptionError
from audiobench.options import StrictOptions, option_problems
from audiobench.outputs import OutputType, SpeechInput, TextOutput
from audiobench.pooling import Pooling

__all__ = [
    "DTYPES",
    "DeviceError",
    "Encoder",
    "EncoderOptions",
    "Modality",
    "ModelMeta",
    "OutputKind",
    "PatchGrid",
    "canonical_dtype",
    "check_device",
]

#: Bumped when a change to the framework alters what an encoder's cached
#: outputs mean, so old cache entries stop matching.
CACHE_FORMAT_VERSION = 1


class DeviceError(OptionError):
    """The requested torch device is not one audiobench runs on, or not on this machine."""


#: Accepted spellings of ``--dtype`` → canonical name.
DTYPES = {
    "float32": "float32",
    "fp32": "float32",
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
}
#: Device types an encoder may be placed on (``meta`` and the like hold no data).
DEVICE_TYPES = ("cpu", "cuda", "mps")


def canonical_dtype(dtype: str) -> str:
    """``fp16`` → ``float16``; an unknown name is an :class:`OptionError` listing the choices."""
    try:
        return DTYPES[str(dtype).lower()]
    except KeyError:
        raise OptionError(
            f"unknown dtype {dtype!r} (--dtype); choose float32 (fp32), float16 (fp16, half) "
            "or bfloat16 (bf16)"
        ) from None


def check_device(device: str) -> None:
    """Raise :class:`DeviceError` unless ``device`` (cpu, cuda, cuda:N, mps) is usable here.

    Runs start with it, before any data or weights are read: a run asked to
    use CUDA on a machine without it stops with that reason instead of
    failing later (transformers models) or silently running on the CPU while
    the result records the GPU (DSP baselines).
    """
    if device == "cpu":
        return
    import torch

    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        parsed = None
    if parsed is None or parsed.type not in DEVICE_TYPES:
        raise DeviceError(
            f"unknown device {device!r}; use cpu, cuda, cuda:N (N-th GPU) or mps"
        ) from None
    if parsed.type == "cuda":
        if not torch.cuda.is_available():
            if torch.version.cuda is None:
                why = f"this torch build ({torch.__version__}) has no CUDA support"
            else:
                visible = os.environ.get("CUDA_VISIBLE_DEVICES")
                why = "no CUDA GPU is visible" + (
                    f" (CUDA_VISIBLE_DEVICES={visible!r})" if visible is not None else ""
                )
            raise DeviceError(
                f"device {device!r} requested, but CUDA is not available on this machine: "
                f"{why}; use --device cpu"
            )
        count = torch.cuda.device_count()
        if parsed.index is not None and parsed.index >= count:
            raise DeviceError(
                f"device {device!r} requested, but this machine has {count} CUDA device(s) "
                f"(cuda:0 to cuda:{count - 1})"
            )
    elif parsed.type == "mps" and not torch.backends.mps.is_available():
        raise DeviceError(f"device {device!r} requested, but MPS is not available on this machine")


class OutputKind(StrEnum):
    VECTOR = "vector"
    SEQUENCE = "sequence"
    TOKENS = "tokens"
    #: Text outputs only (transcripts...): no embedding (:attr:`Encoder.produces`).
    TEXT = "text"


class Modality(StrEnum):
    AUDIO = "audio"
    TEXT = "text"


class PatchGrid(BaseModel):
    """Sequence outputs that are a 2-D grid of patches over a spectrogram padded in time.

    The patches (after the model's ``n_prefix_tokens``) are ``rows`` frequency rows of
    ``columns`` time columns each, frequency-major: patch ``(row, column)`` is token
    ``n_prefix_tokens + row × columns + column``. Column ``c`` reads the input frames
    ``[c × column_stride, c × column_stride + patch_frames)`` of a window of ``window_frames``
    frames, which the model fills from the start of the clip and pads after it. Input frames
    are whole analysis frames: ``frame_rate`` per second, each reading ``frame_length`` seconds
    (kaldi-style, no edge padding), so a clip of ``s`` seconds fills
    ``1 + floor((s − frame_length) × frame_rate)`` of them (:meth:`valid_frames`). A column
    that starts at or past that count holds only padding, and token-level probes leave its
    patches out (:meth:`valid_columns`).

    AST (AudioSet checkpoints): 128 mel bands and 1,024 frames at 100 per second (25 ms
    frames), 16 × 16 patches every 10 bands and 10 frames: 12 rows of 101 columns.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    rows: int = Field(gt=0, description="Frequency rows of patches.")
    columns: int = Field(gt=0, description="Time columns of patches.")
    column_stride: int = Field(gt=0, description="Input frames from one column to the next.")
    patch_frames: int = Field(gt=0, description="Input frames one column reads.")
    window_frames: int = Field(
        gt=0, description="Input frames of the padded window (AST: max_length)."
    )
    frame_rate: float = Field(gt=0, description="Input frames per second of audio.")
    frame_length: float = Field(ge=0, description="Seconds of audio one input frame reads.")

    @model_validator(mode="after")
    def _columns_fit_the_window(self) -> PatchGrid:
        last = (self.columns - 1) * self.column_stride + self.patch_frames
        if last > self.window_frames:
            raise ValueError(
                f"{self.columns} columns of {self.patch_frames} frames every "
                f"{self.column_stride} read {last} frames, more than the window's "
                f"{self.window_frames}"
            )
        return self

    @property
    def n_patches(self) -> int:
        """Tokens of the grid: ``rows × columns``."""
        return self.rows * self.columns

    def valid_frames(self, seconds: float) -> int:
        """Input frames holding audio of a ``seconds``-long clip, at most the window's.

        ``1 + floor((seconds − frame_length) × frame_rate)``, at least 1 (a clip shorter than one
        frame is padded to one by the encoder); a hair below an integer counts as that integer.
        """
        if not seconds >= 0:
            raise ValueError(f"need seconds >= 0, got {seconds}")
        whole = math.floor((seconds - self.frame_length) * self.frame_rate + 1e-6)
        return min(self.window_frames, max(1, 1 + whole))

    def valid_columns(self, n_frames: int) -> int:
        """Columns that start before input frame ``n_frames`` (the rest read only padding)."""
        if n_frames < 1:
            raise ValueError(f"need n_frames >= 1, got {n_frames}")
        return min(self.columns, -(-n_frames // self.column_stride))


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
    n_prefix_tokens: int = Field(
        default=0,
        ge=0,
        description="Sequence outputs: tokens before the patches or frames (AST: class and "
        "distillation tokens, 2); token-level probes leave them out.",
    )
    padded_frame_rate: float | None = Field(
        default=None,
        gt=0,
        description="Sequence outputs of a model that pads clips to a fixed window: output "
        "frames per second of audio (Whisper: 50). Of a clip of s seconds, the first "
        "ceil(s × rate) frames after the prefix tokens hold audio, the rest is padding that "
        "token-level probes leave out. None: every frame holds audio.",
    )
    patch_grid: PatchGrid | None = Field(
        default=None,
        description="Sequence outputs that are a 2-D patch grid over a window padded in time "
        "(AST): its layout, so that token-level probes leave out the patches that read only "
        "padding. None: no grid.",
    )
    description: str = ""
    reference: str | None = None

    @model_validator(mode="after")
    def _one_padding_layout(self) -> ModelMeta:
        if self.patch_grid is not None and self.padded_frame_rate is not None:
            raise ValueError(
                f"model {self.name!r}: declare padded_frame_rate (frame sequences) or "
                "patch_grid (patch grids), not both"
            )
        return self


class EncoderOptions(StrictOptions):
    """Base of an encoder's options: one typed, validated pydantic model per encoder.

    An encoder declares ``class Options(<its base>.Options)`` with one field
    (type, default, description) per option; the constructor validates the
    keywords it gets beyond the common ones (``device``, ``dtype``,
    ``pooling``, ``revision``), so an unknown option is an error that lists the
    accepted ones, and ``-o KEY=VALUE`` text is coerced by pydantic (``"64"``
    to ``64``). The values other than None are recorded in ``Encoder.params``,
    hence in the cache fingerprint and the result, except the fields named in
    ``unrecorded`` (they change nothing or reach the fingerprint another way,
    e.g. ``weights`` through ``Encoder.source``).
    """

    #: Fields left out of ``Encoder.params``.
    unrecorded: ClassVar[frozenset[str]] = frozenset()

    def recorded(self) -> dict[str, Any]:
        """The options that identify the encoder's outputs, as ``Encoder.params``."""
        return {
            name: value
            for name, value in self.model_dump().items()
            if value is not None and name not in self.unrecorded
        }


class Encoder(ABC):
    """Base class of all encoders.

    Subclasses set :attr:`meta`, declare their options as ``Options`` and
    implement :meth:`_load` and :meth:`encode_audio`; audio–text models also
    implement :meth:`encode_text` and codecs :meth:`decode`. The class's
    ``meta`` is the declared default; every instance holds its own
    (``self.meta``), which a factory may pass (``meta=``, e.g. for an
    ``hf:<directory>`` checkpoint) and the constructor may adjust (EnCodec's
    codes), without ever touching the class.
    """

    #: The declared metadata (class level); ``self.meta`` is the instance's.
    meta: ModelMeta
    #: The options this encoder takes, one pydantic model (none by default).
    Options: ClassVar[type[EncoderOptions]] = EncoderOptions
    #: This instance's validated options (subclasses narrow the type to their ``Options``).
    options: EncoderOptions
    #: The precisions this encoder computes in (``--dtype``): signal-processing
    #: baselines compute in float32 only; models with weights declare all three.
    compute_dtypes: ClassVar[tuple[str, ...]] = ("float32",)
    #: The outputs this encoder produces (:mod:`audiobench.outputs`); a task needing another
    #: refuses it before any work. Encoders of text outputs implement :meth:`produce`.
    produces: ClassVar[frozenset[OutputType]] = frozenset({OutputType.EMBEDDING})
    #: Whether :meth:`produce` reads the dataset's transcript (the transcript-truth oracle):
    #: its outputs are then cached under the transcript as well as the waveform.
    reads_transcript: ClassVar[bool] = False
    #: Whether :meth:`produce` reads the clip's ``context`` (the text a spoken question is
    #: asked about, for encoders that answer in text): cached under it as well.
    reads_context: ClassVar[bool] = False

    def __init__(
        self,
        *,
        device: str = "cpu",
        dtype: str | None = None,
        pooling: str | None = None,
        revision: str | None = None,
        meta: ModelMeta | None = None,
        **options: Any,
    ) -> None:
        if meta is not None and not isinstance(meta, ModelMeta):
            raise ValueError(
                f"meta must be a ModelMeta (given by a model's factory), got {type(meta).__name__}"
            )
        self.meta = meta if meta is not None else type(self).meta
        self.options = self.parse_options(options, name=self.meta.name)
        self.device = device
        self.dtype = self._check_dtype(dtype)
        self.revision = revision or self.meta.revision
        self.pooling = Pooling.parse(pooling or self.meta.default_pooling)
        #: The options that change the output: they enter the fingerprint and the result.
        self.params: dict[str, Any] = self.options.recorded()
        #: Where the weights are loaded from (a hub id or a directory; None for DSP).
        self.source: str | None = self.meta.source
        self._loaded = False
        self._notes: dict[str, int | None] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        legacy = cls.__dict__.get("options")
        if isinstance(legacy, tuple) and legacy:
            raise TypeError(
                f"{cls.__qualname__}: declare the options {list(legacy)} as fields of "
                "`class Options(EncoderOptions)` (type, default, description), not as a tuple"
            )

    @classmethod
    def parse_options(cls, values: Mapping[str, Any], *, name: str | None = None) -> EncoderOptions:
        """``values`` validated into ``cls.Options``; errors name the model (``name``).

        Factories call it to check options before they load anything.
        """
        name = name or cls.meta.name
        accepted = list(cls.Options.model_fields)
        unknown = sorted(set(values) - set(accepted))
        if unknown:
            raise OptionError(
                f"model {name!r} has no option(s) {unknown}; it accepts {accepted or 'none'}"
            )
        try:
            return cls.Options.model_validate(dict(values))
        except ValidationError as exc:
            problems = option_problems(exc)
            raise OptionError(f"model {name!r}: invalid option(s): {problems}") from None

    def _check_dtype(self, dtype: str | None) -> str | None:
        """The canonical name of ``dtype``, refused unless this encoder computes in it.

        Recording a precision the model did not run in would misdescribe the
        result (and key the cache apart for nothing), so it is an error.
        """
        if dtype is None:
            return None
        name = canonical_dtype(dtype)
        if name not in self.compute_dtypes:
            raise OptionError(
                f"model {self.meta.name!r} computes in {' or '.join(self.compute_dtypes)} "
                f"only; --dtype {dtype} does not apply to it (leave --dtype out)"
            )
        return name

    @classmethod
    def accepted_options(cls) -> tuple[str, ...]:
        """Names of the options this encoder takes."""
        return tuple(cls.Options.model_fields)

    # -- lifecycle -------------------------------------------------------------

    def load(self) -> None:
        """Load the weights, once (later calls do nothing).

        Whoever uses the encoder calls it before encoding: the runner, the FLOP
        counter, a test. Encode methods never load by themselves. A device this
        machine lacks is a :class:`DeviceError` here, before anything is read.
        """
        if not self._loaded:
            check_device(self.device)
            self._load()
            self._loaded = True

    @property
    def loaded(self) -> bool:
        return self._loaded

    def require_loaded(self) -> None:
        """Raise a clear error when a method that needs the weights runs before :meth:`load`."""
        if not self._loaded:
            raise RuntimeError(f"model {self.meta.name!r} is not loaded; call load() first")

    def _load(self) -> None:  # noqa: B027 - DSP baselines have nothing to load
        """Fetch and build the model; override in encoders with weights."""

    # -- encoding --------------------------------------------------------------

    @abstractmethod
    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Encode a batch of mono float32 waveforms at ``meta.sample_rate``.

        Returns one array per waveform, in order: ``[D]`` for vector outputs,
        ``[T, D]`` for sequences, integer ``[T, Q]`` for tokens. Assumes
        :meth:`load` was called.
        """

    def n_valid_frames(self, n_samples: int) -> int | None:
        """Frames of the output that hold real audio, for masked pooling (None: all)."""
        return None

    def embed(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Encode and pool: what the runner caches and the evaluators consume."""
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

    def produce(self, output: OutputType, inputs: Sequence[SpeechInput]) -> list[TextOutput]:
        """One ``output`` (a transcript, timed words...) per input, in order.

        Only for the outputs in :attr:`produces` other than embeddings; assumes :meth:`load`
        was called and :meth:`check_output` passed.
        """
        raise NotImplementedError(f"model {self.meta.name!r} does not produce {output} outputs")

    def check_output(self, output: OutputType) -> None:
        """Raise :class:`~audiobench.errors.UnsuitableModelError` if this instance, as loaded,
        cannot produce ``output`` (a checkpoint without what word timings need, say).

        The runner calls it once per run after :meth:`load`, before encoding any clip.
        """
        from audiobench.outputs import require_output

        require_output(self, output, "choose a model that does")

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

    def note(self, message: str, count: int | None = 1) -> None:
        """Count an event worth telling the user about (e.g. clips cut to the window).

        ``count=None`` records a remark about the model rather than about
        clips (e.g. a default it had to adapt), told once as written.
        """
        if count is None:
            self._notes.setdefault(message, None)
            return
        self._notes[message] = (self._notes.get(message) or 0) + count

    def pop_notes(self) -> list[str]:
        """Counted events since the last call, as sentences; resets the counts."""
        notes = [
            message if n is None else f"{n} clip(s): {message}"
            for message, n in self._notes.items()
        ]
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

    def fingerprint(self, *, pooled: bool = True, output: OutputType | None = None) -> str:
        """Stable hash of :meth:`describe`: the encoder half of a cache key.

        ``pooled=False`` identifies the unpooled outputs, which are cached apart; ``output``
        a text output (:meth:`produce`), also cached apart (pooling does not apply to it).
        """
        description = self.describe() if pooled else {**self.describe(), "pooling": "unpooled"}
        if output is not None and output is not OutputType.EMBEDDING:
            description = {**self.describe(), "pooling": None, "output": str(output)}
        blob = json.dumps(description, sort_keys=True, default=str).encode()
        return hashlib.blake2b(blob, digest_size=16).hexdigest()
