"""Audio clips and their decoding: soundfile to read, soxr to resample, mono float32 out.

Under MTEB's protocol the resampling is MTEB's instead (:func:`decode_clip` with
``resampler="sinc"``, :mod:`audiobench.resampling`).

A :class:`Clip` carries a reference to its audio rather than the samples, so
a task over 100k clips holds only metadata; decoding happens in the runner's
worker threads, batch by batch.
"""

from __future__ import annotations

import hashlib
import io
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import soundfile as sf
import soxr

from audiobench.errors import UserError

__all__ = [
    "AUDIO_EXTENSIONS",
    "MAX_CLIP_SECONDS",
    "ArrayAudioRef",
    "ArrowAudioRef",
    "AudioDecodeError",
    "AudioRef",
    "Clip",
    "DuplicateAudioError",
    "FileAudioRef",
    "Resampler",
    "decode_clip",
    "load_waveform",
    "resampler_for",
    "waveform_hash",
]

AUDIO_EXTENSIONS = (".wav", ".flac", ".ogg", ".mp3", ".aiff", ".aif", ".opus")

#: Longest clip, in seconds, a run decodes by default. It is checked against the
#: file's header before any sample is decoded, so a small file that declares a
#: very low sample rate (4 KB at 1 Hz is 2000 s, i.e. 32 million samples once
#: resampled to 16 kHz) is refused instead of exhausting memory. A longer clip
#: is a per-clip failure (an error, or a skip under ``on_error="skip"``).
MAX_CLIP_SECONDS = 600.0

#: How a clip reaches the model's rate: "soxr" through the task's canonical rate
#: (audiobench's protocol), "sinc" from its own rate in one step (MTEB's protocol).
Resampler = Literal["soxr", "sinc"]


def resampler_for(options: object) -> Resampler:
    """The resampler of a task's options: ``"sinc"`` under ``protocol="mteb"``, else soxr."""
    return "sinc" if getattr(options, "protocol", None) == "mteb" else "soxr"


class AudioDecodeError(UserError, ValueError):
    """A clip's audio could not be turned into a usable waveform."""

    def __init__(self, clip_id: str, location: str, reason: str) -> None:
        self.clip_id = clip_id
        self.location = location
        self.reason = reason
        super().__init__(f"clip {clip_id!r} ({location}): {reason}")


class DuplicateAudioError(UserError, ValueError):
    """Two entries of one subset hold the same waveform (one recording counted twice).

    A duplicate is its own nearest neighbour and inflates retrieval-style
    scores, so it is refused unless the task declares duplicates legitimate.
    """

    def __init__(
        self, first: tuple[str, str], second: tuple[str, str], subset: str | None = None
    ) -> None:
        self.first = first  # (clip id, location)
        self.second = second
        where = f" of subset {subset!r}" if subset else ""
        super().__init__(
            f"clips {first[0]!r} ({first[1]}) and {second[0]!r} ({second[1]}){where} hold "
            "the same audio; a duplicate inflates the score, so remove one of them"
        )


#: A downmix whose level is this far below its channels' (-60 dB) has cancelled them out.
CANCELLED_RATIO = 1e-3


def _check_downmix(data: np.ndarray, mono: np.ndarray, clip_id: str, location: str) -> None:
    """Refuse channels that cancel out when averaged to mono (one of them phase-inverted).

    The mono clip would hold silence or rounding noise instead of the recording, and be
    scored as such; a clip silent in every channel is left to the scoring checks.
    """
    channels = float(np.sqrt(np.mean(np.square(data, dtype=np.float64))))
    downmix = float(np.sqrt(np.mean(np.square(mono, dtype=np.float64))))
    if channels > 0 and downmix <= CANCELLED_RATIO * channels:
        level = 20 * np.log10(max(downmix / channels, 1e-12))
        raise AudioDecodeError(
            clip_id,
            location,
            f"its {data.shape[1]} channels cancel out when averaged to mono (the mono level is "
            f"{level:.0f} dB below the channels'; a channel is phase-inverted), so no sound is "
            "left to embed; fix the channel's polarity or keep one channel",
        )


class _TooLong(Exception):
    """A clip's header declares more audio than the per-clip limit allows."""


def _check_length(frames: int, sample_rate: int, max_seconds: float | None) -> None:
    if max_seconds is None or sample_rate <= 0:
        return  # a bad rate is the decoder's error to report
    seconds = frames / sample_rate
    if frames < 0 or seconds > max_seconds:
        raise _TooLong(
            f"declares {seconds:.1f} s of audio ({frames} frames at {sample_rate} Hz), "
            f"over the limit of {max_seconds:g} s per clip (raise the maximum clip "
            "duration to evaluate it)"
        )


def _read_bounded(source: Any, max_seconds: float | None) -> tuple[np.ndarray, int]:
    """Decode with soundfile after checking the header's length against ``max_seconds``."""
    with sf.SoundFile(source) as fh:
        _check_length(fh.frames, fh.samplerate, max_seconds)
        data = fh.read(dtype="float32", always_2d=True)
        return data, fh.samplerate


class AudioRef(ABC):
    """Where a clip's encoded audio lives."""

    @abstractmethod
    def read(self) -> tuple[np.ndarray, int]:
        """Return ``(samples[frames, channels] float32, sample_rate)``."""

    def read_bounded(self, max_seconds: float | None) -> tuple[np.ndarray, int]:
        """Like :meth:`read`, refusing audio longer than ``max_seconds`` (None: no limit).

        The default reads first and checks after; the built-in references
        check the header before decoding.
        """
        data, sr = self.read()
        _check_length(data.shape[0], sr, max_seconds)
        return data, sr

    @property
    @abstractmethod
    def location(self) -> str:
        """Human-readable origin for error messages (a path, or dataset row)."""

    def content_digest(self) -> str:
        """Hash of the audio this reference reads: of its encoded bytes where it has them.

        What the identity of local data hashes: audio edited in place changes it, whatever
        the file's size and modification time. The built-in references hash the bytes
        without decoding them; this default decodes. ``OSError`` or ``ValueError`` if the
        audio cannot be read.
        """
        data, sample_rate = self.read()
        return waveform_hash(data, sample_rate)


def _bytes_digest(source: bytes | str | Path) -> str:
    """BLAKE2b (16 bytes) of ``source``: the bytes themselves, or a file read in chunks."""
    if isinstance(source, bytes):
        return hashlib.blake2b(source, digest_size=16).hexdigest()
    with open(source, "rb") as fh:
        return hashlib.file_digest(fh, lambda: hashlib.blake2b(digest_size=16)).hexdigest()


@dataclass(frozen=True)
class FileAudioRef(AudioRef):
    path: Path

    def read(self) -> tuple[np.ndarray, int]:
        return self.read_bounded(None)

    def content_digest(self) -> str:
        return _bytes_digest(self.path)

    def read_bounded(self, max_seconds: float | None) -> tuple[np.ndarray, int]:
        if not self.path.is_file():
            # soundfile's own message for this is "System error".
            raise FileNotFoundError(f"file not found: {self.path}")
        return _read_bounded(str(self.path), max_seconds)

    @property
    def location(self) -> str:
        return f"file {self.path}"


@dataclass(frozen=True)
class ArrowAudioRef(AudioRef):
    """A row of a Hugging Face dataset whose audio column was cast with ``decode=False``.

    The dataset is memory-mapped Arrow, so holding the table and a row index
    costs nothing until the bytes are read.
    """

    dataset: Any = field(repr=False, compare=False, hash=False)
    row: int
    column: str
    dataset_name: str

    def read(self) -> tuple[np.ndarray, int]:
        return self.read_bounded(None)

    def read_bounded(self, max_seconds: float | None) -> tuple[np.ndarray, int]:
        cell = self.dataset[self.row][self.column]
        raw = cell.get("bytes") if isinstance(cell, dict) else None
        path = cell.get("path") if isinstance(cell, dict) else None
        if raw:
            return _read_bounded(io.BytesIO(raw), max_seconds)
        if path:
            return _read_bounded(path, max_seconds)
        raise ValueError("the audio cell holds neither bytes nor a path")

    def content_digest(self) -> str:
        cell = self.dataset[self.row][self.column]
        raw = cell.get("bytes") if isinstance(cell, dict) else None
        path = cell.get("path") if isinstance(cell, dict) else None
        if raw:
            return _bytes_digest(raw)
        if path:
            return _bytes_digest(path)
        raise OSError(f"{self.location}: the audio cell holds neither bytes nor a path")

    @property
    def location(self) -> str:
        return f"{self.dataset_name} row {self.row}"


@dataclass(frozen=True, eq=False)
class ArrayAudioRef(AudioRef):
    """Audio held in memory: a mono waveform computed during evaluation (a codec's output).

    The runner keys its cache by the decoded waveform's content, so a clip built on it is
    embedded, cached and skipped like any other. ``name`` says what the audio is, for error
    messages.
    """

    samples: np.ndarray = field(repr=False)
    sample_rate: int
    name: str = "audio"

    def read(self) -> tuple[np.ndarray, int]:
        data = np.asarray(self.samples, dtype=np.float32)
        return (data[:, None] if data.ndim == 1 else data), self.sample_rate

    def content_digest(self) -> str:
        return waveform_hash(np.asarray(self.samples), self.sample_rate)

    @property
    def location(self) -> str:
        return f"{self.name} (in memory)"


@dataclass(frozen=True)
class Clip:
    """One item of a task: an id, its audio, and what the task knows of it."""

    id: str
    audio: AudioRef
    label: str | None = None
    subset: str | None = None
    split: str | None = None
    text: str | None = None
    group: str | None = None  # speaker / individual, for grouped splits
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


def load_waveform(
    ref: AudioRef,
    sample_rate: int,
    *,
    clip_id: str,
    max_seconds: float | None = MAX_CLIP_SECONDS,
) -> np.ndarray:
    """Decode ``ref`` to mono float32 at ``sample_rate``; raise :class:`AudioDecodeError`.

    Audio longer than ``max_seconds`` (None: no limit) is refused from its
    header, before decoding or resampling.
    """
    mono, sr = _decode_mono(ref, clip_id, max_seconds)
    if sr != sample_rate:
        mono = soxr.resample(mono, sr, sample_rate, quality="HQ").astype(np.float32, copy=False)
        if mono.size == 0:
            raise AudioDecodeError(
                clip_id, ref.location, f"too short to resample from {sr} to {sample_rate} Hz"
            )
    return np.ascontiguousarray(mono, dtype=np.float32)


def _decode_mono(ref: AudioRef, clip_id: str, max_seconds: float | None) -> tuple[np.ndarray, int]:
    """``ref`` decoded to mono float32 at its own rate, checked; and that rate."""
    try:
        data, sr = ref.read_bounded(max_seconds)
    except _TooLong as exc:
        raise AudioDecodeError(clip_id, ref.location, f"too long: {exc}") from None
    except Exception as exc:  # soundfile raises several types; all mean "unreadable"
        raise AudioDecodeError(clip_id, ref.location, f"unreadable audio: {exc}") from exc
    if data.size == 0:
        raise AudioDecodeError(clip_id, ref.location, "empty audio (0 samples)")
    mono = data.mean(axis=1, dtype=np.float32) if data.shape[1] > 1 else data[:, 0]
    if not np.isfinite(mono).all():
        bad = int((~np.isfinite(mono)).sum())
        raise AudioDecodeError(clip_id, ref.location, f"{bad} non-finite samples (NaN/Inf)")
    if data.shape[1] > 1:
        _check_downmix(data, mono, clip_id, ref.location)
    return mono, int(sr)


def decode_clip(
    clip: Clip,
    canonical_rate: int,
    model_rate: int,
    *,
    max_seconds: float | None = MAX_CLIP_SECONDS,
    resampler: Resampler = "soxr",
) -> np.ndarray:
    """Decode a clip the way its task's protocol does, to mono float32 at the model's rate.

    ``"soxr"`` (audiobench's protocol): to the task's canonical rate, then the model's. VocSim
    fixes 16 kHz mono as the common ground before any model-specific processing; going
    through it keeps a model at 48 kHz from seeing more bandwidth than the dataset promises.
    ``"sinc"`` (MTEB's protocol, as MTEB's wrappers resample): decoded at the recording's own
    rate and resampled once to the model's with the windowed-sinc filter of
    :mod:`audiobench.resampling`; the canonical rate is not used. ``max_seconds`` is the
    per-clip limit of :func:`load_waveform`.
    """
    if resampler == "sinc":
        from audiobench.resampling import sinc_resample

        mono, rate = _decode_mono(clip.audio, clip.id, max_seconds)
        # Never empty: one sample at any rate gives at least one (ceil(len * new / old)).
        wave = sinc_resample(mono, rate, model_rate)
        return np.ascontiguousarray(wave, dtype=np.float32)
    wave = load_waveform(clip.audio, canonical_rate, clip_id=clip.id, max_seconds=max_seconds)
    if model_rate != canonical_rate:
        wave = soxr.resample(wave, canonical_rate, model_rate, quality="HQ").astype(
            np.float32, copy=False
        )
    return np.ascontiguousarray(wave)


def waveform_hash(wave: np.ndarray, sample_rate: int) -> str:
    """Content hash of a decoded waveform: the clip half of a cache key."""
    h = hashlib.blake2b(digest_size=16)
    h.update(str(sample_rate).encode())
    h.update(np.ascontiguousarray(wave, dtype=np.float32).tobytes())
    return h.hexdigest()
