"""How a clip's audio reaches a Ray worker, and the decoding task that runs there.

``"bytes"`` (the default) needs no shared filesystem: the driver reads each
clip's encoded bytes (the audio file, or the hub dataset row's bytes) and they
travel through the object store. With ``"paths"`` the workers read the audio
themselves: files at the same path (a shared filesystem), hub datasets from
their own hub cache. Either way a worker decodes and resamples exactly as the
local runner does, so the waveform (and its cache key) is the same.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from audiobench.audio import (
    ArrowAudioRef,
    AudioRef,
    Clip,
    FileAudioRef,
    Resampler,
    decode_clip,
    waveform_hash,
)

__all__ = ["DECODE_PART", "AudioMode", "BytesAudioRef", "decode_part", "payload"]

#: Clips decoded by one CPU task.
DECODE_PART = 32

AudioMode = Literal["bytes", "paths"]


@dataclass(frozen=True, eq=False)
class BytesAudioRef(AudioRef):
    """A clip's encoded audio (a file's bytes), shipped to a worker without a shared filesystem."""

    data: bytes = field(repr=False)
    origin: str

    def read(self) -> tuple[np.ndarray, int]:
        return self.read_bounded(None)

    def read_bounded(self, max_seconds: float | None) -> tuple[np.ndarray, int]:
        import soundfile as sf

        with sf.SoundFile(io.BytesIO(self.data)) as fh:
            seconds = fh.frames / fh.samplerate if fh.samplerate > 0 else 0.0
            if max_seconds is not None and seconds > max_seconds:
                raise ValueError(f"longer than {max_seconds:g} s")
            return fh.read(dtype="float32", always_2d=True), fh.samplerate

    @property
    def location(self) -> str:
        return self.origin


def payload(ref: AudioRef, mode: AudioMode) -> AudioRef | None:
    """What travels to the decoding task for ``ref`` (None: unreadable here, left local)."""
    if mode == "paths":
        return ref
    try:
        if isinstance(ref, FileAudioRef):
            return BytesAudioRef(ref.path.read_bytes(), ref.location)
        if isinstance(ref, ArrowAudioRef):
            cell = ref.dataset[ref.row][ref.column]
            raw = cell.get("bytes") if isinstance(cell, dict) else None
            path = cell.get("path") if isinstance(cell, dict) else None
            if not raw and path:
                with open(path, "rb") as fh:
                    raw = fh.read()
            return BytesAudioRef(raw, ref.location) if raw else None
    except OSError:
        return None
    return ref  # audio held in memory (or a custom reference) travels as it is


def decode_part(
    items: list[tuple[str, AudioRef | None]],
    canonical_rate: int,
    model_rate: int,
    max_seconds: float | None,
    resampler: Resampler = "soxr",
) -> tuple[Any, ...]:
    """Decode clips as the runner does; return ``(meta, *waveforms)``.

    ``meta[i]`` is ``(waveform hash, samples)``, or None for a clip that could
    not be decoded (the local pass reports it); ``waveforms[i]`` the waveform
    (None likewise). Runs as a Ray task with one return value per waveform.
    """
    meta: list[tuple[str, int] | None] = []
    waves: list[np.ndarray | None] = []
    for clip_id, ref in items:
        wave = None
        if ref is not None:
            try:
                wave = decode_clip(
                    Clip(id=clip_id, audio=ref),
                    canonical_rate,
                    model_rate,
                    max_seconds=max_seconds,
                    resampler=resampler,
                )
            except Exception:
                wave = None
        meta.append(None if wave is None else (waveform_hash(wave, model_rate), len(wave)))
        waves.append(wave)
    return (meta, *waves)
