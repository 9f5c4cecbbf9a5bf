"""Procedurally generated vocalisation-like sounds, for tasks that run offline.

Each class is a *call type*: a fixed sequence of notes, each note a harmonic
tone with its own pitch contour (rising, falling, arched, dipping, trilled)
and amplitude modulation. Every rendition of a call type varies in what
should not matter to a content-identity embedding: pitch (a few semitones),
tempo, loudness, background noise, and the "individual" producing it (a
vocal-tract-like resonance and a small personal pitch offset). The same seed
always gives the same files, bit for bit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from audiobench.synthetic.writer import write_labels

__all__ = ["CallType", "SubsetSpec", "render_call", "sample_call_types", "write_dataset"]

_CONTOURS = ("flat", "rise", "fall", "arch", "dip", "trill")


@dataclass(frozen=True)
class Note:
    contour: str
    f0: float  # Hz at the note's centre
    depth: float  # relative pitch excursion of the contour
    duration: float  # seconds
    gap: float  # silence after the note, seconds
    n_harmonics: int
    rolloff: float  # amplitude ratio between successive harmonics
    am_rate: float  # Hz of amplitude modulation (0: none)


@dataclass(frozen=True)
class CallType:
    name: str
    notes: tuple[Note, ...]


@dataclass(frozen=True)
class SubsetSpec:
    """One generated subset: its id, size, and the pitch range of its call types."""

    name: str
    n_classes: int
    clips_per_class: int
    f0_range: tuple[float, float]
    max_harmonics: int
    n_individuals: int = 4


def sample_call_types(spec: SubsetSpec, rng: np.random.Generator) -> list[CallType]:
    """Draw distinct call types for a subset."""
    types = []
    lo, hi = np.log(spec.f0_range[0]), np.log(spec.f0_range[1])
    for c in range(spec.n_classes):
        notes = []
        for _ in range(int(rng.integers(1, 4))):
            notes.append(
                Note(
                    contour=_CONTOURS[int(rng.integers(len(_CONTOURS)))],
                    f0=float(np.exp(rng.uniform(lo, hi))),
                    depth=float(rng.uniform(0.1, 0.45)),
                    duration=float(rng.uniform(0.06, 0.22)),
                    gap=float(rng.uniform(0.02, 0.08)),
                    n_harmonics=int(rng.integers(1, spec.max_harmonics + 1)),
                    rolloff=float(rng.uniform(0.3, 0.8)),
                    am_rate=float(rng.choice([0.0, rng.uniform(15, 60)])),
                )
            )
        types.append(CallType(name=f"{spec.name}-c{c:02d}", notes=tuple(notes)))
    return types


def _contour(kind: str, n: int, depth: float) -> np.ndarray:
    """Relative pitch factor over a note of ``n`` samples."""
    t = np.linspace(0.0, 1.0, n, endpoint=False)
    if kind == "rise":
        shape = t - 0.5
    elif kind == "fall":
        shape = 0.5 - t
    elif kind == "arch":
        shape = 0.5 - 2.0 * (t - 0.5) ** 2 - 0.25
    elif kind == "dip":
        shape = 2.0 * (t - 0.5) ** 2 - 0.25
    elif kind == "trill":
        shape = 0.5 * np.sin(2 * np.pi * 6.0 * t)
    else:
        shape = np.zeros(n)
    return 1.0 + depth * shape


def render_call(
    call: CallType,
    rng: np.random.Generator,
    sample_rate: int,
    *,
    individual_shift: float,
    individual_formant: tuple[float, float],
) -> np.ndarray:
    """Render one rendition of ``call`` with random nuisance variation."""
    pitch = 2.0 ** (rng.uniform(-2.0, 2.0) / 12.0) * individual_shift
    tempo = rng.uniform(0.8, 1.25)
    nyquist = sample_rate / 2
    pieces = [np.zeros(int(rng.uniform(0.01, 0.06) * sample_rate), dtype=np.float64)]
    for note in call.notes:
        n = max(16, int(note.duration * tempo * sample_rate))
        freq = note.f0 * pitch * _contour(note.contour, n, note.depth)
        phase = 2 * np.pi * np.cumsum(freq) / sample_rate
        tone = np.zeros(n)
        for h in range(1, note.n_harmonics + 1):
            if note.f0 * pitch * h * (1 + note.depth) >= 0.95 * nyquist:
                break
            tone += note.rolloff ** (h - 1) * np.sin(h * phase + rng.uniform(0, 2 * np.pi))
        env = np.hanning(n) ** 0.5
        if note.am_rate > 0:
            t = np.arange(n) / sample_rate
            env *= 0.6 + 0.4 * np.sin(2 * np.pi * note.am_rate * t)
        pieces.append(tone * env)
        pieces.append(np.zeros(int(note.gap * tempo * sample_rate)))
    wave = np.concatenate(pieces)
    from scipy.signal import lfilter  # here, not at import: declaring a task must stay light

    # The individual's "vocal tract": one resonance with a personal centre and width.
    centre, bandwidth = individual_formant
    r = np.exp(-np.pi * bandwidth / sample_rate)
    theta = 2 * np.pi * centre / sample_rate
    wave = wave + 0.5 * lfilter([1 - r], [1, -2 * r * np.cos(theta), r * r], wave)
    wave /= max(np.max(np.abs(wave)), 1e-9)
    snr_db = rng.uniform(12.0, 35.0)
    noise = rng.standard_normal(wave.size)
    noise *= np.sqrt(np.mean(wave**2) / 10 ** (snr_db / 10)) / max(np.std(noise), 1e-9)
    wave = wave + noise
    gain = 10 ** (rng.uniform(-18.0, -1.0) / 20) / max(np.max(np.abs(wave)), 1e-9)
    return np.asarray(wave * gain, dtype=np.float32)


def write_dataset(
    directory: Path,
    subsets: Sequence[SubsetSpec | Mapping[str, Any]],
    *,
    seed: int,
    sample_rate: int = 16000,
) -> int:
    """Write WAV files and a ``labels.csv`` (file, label, subset, speaker); return the count.

    ``subsets`` may be :class:`SubsetSpec` objects or plain mappings of their
    fields (what a task declares, so that declaring imports no numerics).
    """
    specs = [s if isinstance(s, SubsetSpec) else SubsetSpec(**s) for s in subsets]
    directory.mkdir(parents=True, exist_ok=True)
    rows = []
    for s_index, spec in enumerate(specs):
        rng = np.random.default_rng([seed, s_index])
        calls = sample_call_types(spec, rng)
        individuals = [
            (
                float(2.0 ** (rng.uniform(-1.0, 1.0) / 12.0)),
                (float(rng.uniform(600, 4000)), float(rng.uniform(150, 600))),
            )
            for _ in range(spec.n_individuals)
        ]
        (directory / spec.name).mkdir(exist_ok=True)
        for call in calls:
            for k in range(spec.clips_per_class):
                who = int(rng.integers(spec.n_individuals))
                shift, formant = individuals[who]
                wave = render_call(
                    call, rng, sample_rate, individual_shift=shift, individual_formant=formant
                )
                rel = f"{spec.name}/{call.name}-{k:03d}.wav"
                sf.write(directory / rel, wave, sample_rate, subtype="PCM_16")
                rows.append(
                    {"file": rel, "label": call.name, "subset": spec.name, "speaker": f"ind{who}"}
                )
    write_labels(directory, rows)
    return len(rows)
