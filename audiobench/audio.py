"""Audio clips and their decoding: soundfile to read, soxr to resample, mono float32 out.

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
from typing import Any

import numpy as np
import soundfile as sf
import soxr

__all__ = [
    "AUDIO_EXTENSIONS",
    "ArrowAudioRef",
    "AudioDecodeError",
    "AudioRef",
    "Clip",
    "FileAudioRef",
    "decode_clip",
    "load_waveform",
    "waveform_hash",
]

AUDIO_EXTENSIONS = (".wav", ".flac", ".ogg", ".mp3", ".aiff", ".aif", ".opus")


class AudioDecodeError(ValueError):
    """A clip's audio could not be turned into a usable waveform."""

    def __init__(self, clip_id: str, location: str, reason: str) -> None:
        self.clip_id = clip_id
        self.location = location
        self.reason = reason
        super().__init__(f"clip {clip_id!r} ({location}): {reason}")


class AudioRef(ABC):
    """Where a clip's encoded audio lives."""

    @abstractmethod
    def read(self) -> tuple[np.ndarray, int]:
        """Return ``(samples[frames, channels] float32, sample_rate)``."""

    @property
    @abstractmethod
    def location(self) -> str:
        """Human-readable origin for error messages (a path, or dataset row)."""


@dataclass(frozen=True)
class FileAudioRef(AudioRef):
    path: Path

    def read(self) -> tuple[np.ndarray, int]:
        data, sr = sf.read(str(self.path), dtype="float32", always_2d=True)
        return data, sr

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
        cell = self.dataset[self.row][self.column]
        raw = cell.get("bytes") if isinstance(cell, dict) else None
        path = cell.get("path") if isinstance(cell, dict) else None
        if raw:
            data, sr = sf.read(io.BytesIO(raw), dtype="float32", always_2d=True)
        elif path:
            data, sr = sf.read(path, dtype="float32", always_2d=True)
        else:
            raise ValueError("the audio cell holds neither bytes nor a path")
        return data, sr

    @property
    def location(self) -> str:
        return f"{self.dataset_name} row {self.row}"


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


def load_waveform(ref: AudioRef, sample_rate: int, *, clip_id: str) -> np.ndarray:
    """Decode ``ref`` to mono float32 at ``sample_rate``; raise :class:`AudioDecodeError`."""
    try:
        data, sr = ref.read()
    except Exception as exc:  # soundfile raises several types; all mean "unreadable"
        raise AudioDecodeError(clip_id, ref.location, f"unreadable audio: {exc}") from exc
    if data.size == 0:
        raise AudioDecodeError(clip_id, ref.location, "empty audio (0 samples)")
    mono = data.mean(axis=1, dtype=np.float32) if data.shape[1] > 1 else data[:, 0]
    if not np.isfinite(mono).all():
        bad = int((~np.isfinite(mono)).sum())
        raise AudioDecodeError(clip_id, ref.location, f"{bad} non-finite samples (NaN/Inf)")
    if sr != sample_rate:
        mono = soxr.resample(mono, sr, sample_rate, quality="HQ").astype(np.float32, copy=False)
        if mono.size == 0:
            raise AudioDecodeError(
                clip_id, ref.location, f"too short to resample from {sr} to {sample_rate} Hz"
            )
    return np.ascontiguousarray(mono, dtype=np.float32)


def decode_clip(clip: Clip, canonical_rate: int, model_rate: int) -> np.ndarray:
    """Decode a clip the way every task does: to the task's canonical rate, then the model's.

    VocSim fixes 16 kHz mono as the common ground before any model-specific
    processing; going through it keeps a model at 48 kHz from seeing more
    bandwidth than the dataset promises.
    """
    wave = load_waveform(clip.audio, canonical_rate, clip_id=clip.id)
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
