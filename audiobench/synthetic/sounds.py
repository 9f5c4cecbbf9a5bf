"""Generated sounds with known descriptions, for the retrieval, reranking and zero-shot mocks.

A sound class is a pitch contour (rising, falling, steady, warbling), a register (low, high)
and a harmonic timbre (whistle, reed, buzz); each rendition varies in pitch, duration and noise
floor and alternates between quiet and loud. Because the generation parameters are known, every
rendition also gets a caption written from them (``"a loud rising whistle, high pitched, a pure
tone"``), and a class name made of words, so that audio-text models can be scored offline. The
same seed always gives the same files, bit for bit.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from audiobench.synthetic.writer import write_labels

__all__ = [
    "SoundClass",
    "render_sound",
    "sound_classes",
    "write_sound_files",
    "write_sounds",
]

_CONTOURS = ("rising", "falling", "steady", "warbling")
_REGISTERS = {"low": 220.0, "high": 1760.0}  # Hz at the centre of the sound
_TIMBRES = {
    "whistle": (1, "a pure tone"),
    "reed": (3, "three harmonics"),
    "buzz": (8, "eight harmonics"),
}
_LOUDNESS = {"quiet": -24.0, "loud": -6.0}  # dB of peak level


@dataclass(frozen=True)
class SoundClass:
    """What a generated sound is: its pitch contour, register and harmonic timbre."""

    contour: str
    register: str
    timbre: str

    @property
    def name(self) -> str:
        return f"{self.contour}_{self.register}_{self.timbre}"

    def caption(self, loudness: str | None = None) -> str:
        """E.g. ``"a loud rising whistle, high pitched, a pure tone"``."""
        words = " ".join(w for w in ("a", loudness, self.contour, self.timbre) if w)
        return f"{words}, {self.register} pitched, {_TIMBRES[self.timbre][1]}"


def sound_classes(n: int, seed: int) -> list[SoundClass]:
    """``n`` distinct sound classes drawn without replacement, the same for the same seed."""
    every = [SoundClass(*combo) for combo in itertools.product(_CONTOURS, _REGISTERS, _TIMBRES)]
    order = np.random.default_rng(seed).permutation(len(every))
    return [every[i] for i in order[:n]]


def render_sound(
    sound: SoundClass, loudness: str, rng: np.random.Generator, sample_rate: int
) -> np.ndarray:
    """One rendition: the class's contour, register and harmonics, with random nuisances.

    Pitch varies by up to 1.5 semitones, duration between 0.4 and 0.6 s, the noise floor
    between 20 and 30 dB below the signal; ``loudness`` sets the peak level.
    """
    duration = rng.uniform(0.4, 0.6)
    n = int(duration * sample_rate)
    t = np.arange(n) / sample_rate
    f0 = _REGISTERS[sound.register] * 2.0 ** (rng.uniform(-1.5, 1.5) / 12.0)
    if sound.contour == "rising":
        freq = f0 * 2.0 ** (0.8 * (t / duration - 0.5))
    elif sound.contour == "falling":
        freq = f0 * 2.0 ** (0.8 * (0.5 - t / duration))
    elif sound.contour == "warbling":
        freq = f0 * 2.0 ** (0.15 * np.sin(2 * np.pi * 8.0 * t))
    else:
        freq = np.full(n, f0)
    phase = 2 * np.pi * np.cumsum(freq) / sample_rate
    n_harmonics = _TIMBRES[sound.timbre][0]
    wave = np.zeros(n)
    for h in range(1, n_harmonics + 1):
        if f0 * h * 1.5 < 0.45 * sample_rate:  # stay below Nyquist over the whole contour
            wave += 0.7 ** (h - 1) * np.sin(h * phase + rng.uniform(0, 2 * np.pi))
    wave *= np.hanning(n) ** 0.5
    wave /= max(float(np.max(np.abs(wave))), 1e-9)
    snr_db = rng.uniform(20.0, 30.0)
    noise = rng.standard_normal(n) * np.sqrt(np.mean(wave**2) / 10 ** (snr_db / 10))
    wave = wave + noise
    wave *= 10 ** (_LOUDNESS[loudness] / 20) / max(float(np.max(np.abs(wave))), 1e-9)
    return np.asarray(wave, dtype=np.float32)


def write_sound_files(
    directory: Path,
    classes: Sequence[SoundClass],
    renditions: int,
    *,
    seed: int,
    sample_rate: int = 16000,
    label_of: Callable[[SoundClass], str] | None = None,
) -> list[dict[str, str]]:
    """Write ``renditions`` WAV files per class; return one row per file (not yet a CSV).

    Each row has ``file``, ``id`` (``<class>-<k>``), ``label`` (the class name, or
    ``label_of(class)``), ``text`` (the rendition's caption) and ``rendition`` (k). Loudness
    alternates between renditions, so captions of one class differ in one word.
    """
    directory.mkdir(parents=True, exist_ok=True)
    rows = []
    for c, sound in enumerate(classes):
        rng = np.random.default_rng([seed, c])
        for k in range(renditions):
            loudness = ("quiet", "loud")[k % 2]
            wave = render_sound(sound, loudness, rng, sample_rate)
            clip_id = f"{sound.name}-{k}"
            sf.write(directory / f"{clip_id}.wav", wave, sample_rate, subtype="PCM_16")
            rows.append(
                {
                    "file": f"{clip_id}.wav",
                    "id": clip_id,
                    "label": label_of(sound) if label_of else sound.name,
                    "text": sound.caption(loudness),
                    "rendition": str(k),
                }
            )
    return rows


def _classes(
    classes: int | Sequence[SoundClass | Sequence[str] | Mapping[str, str]], seed: int
) -> list[SoundClass]:
    """A task declares a count (classes drawn with ``seed``) or the classes as plain data."""
    if isinstance(classes, int):
        return sound_classes(classes, seed)
    out = []
    for c in classes:
        if isinstance(c, Mapping):
            c = SoundClass(**c)
        out.append(c if isinstance(c, SoundClass) else SoundClass(*c))
    return out


def write_sounds(
    directory: Path,
    *,
    seed: int,
    sample_rate: int = 16000,
    classes: int | Sequence[SoundClass | Sequence[str] | Mapping[str, str]],
    renditions: int,
    query_renditions: int = 0,
    captions: bool = False,
    label: str = "{contour}_{register}_{timbre}",
) -> int:
    """Write a generated-sounds dataset and its ``labels.csv``; return the clip count.

    ``classes`` is a number of classes drawn with ``seed`` or a list of (contour, register,
    timbre); ``label`` formats each class's label from those three words. ``labels.csv`` has
    columns ``file``, ``id``, ``label``, then ``text`` (each rendition's caption) with
    ``captions``, then ``split`` with ``query_renditions > 0``: the first
    ``query_renditions`` renditions of a class are ``query`` clips, the others ``corpus``.
    """
    rows = write_sound_files(
        directory,
        _classes(classes, seed),
        renditions,
        seed=seed,
        sample_rate=sample_rate,
        label_of=lambda s: label.format(contour=s.contour, register=s.register, timbre=s.timbre),
    )
    fields = ["file", "id", "label"] + (["text"] if captions else [])
    if query_renditions:
        for row in rows:
            row["split"] = "query" if int(row["rendition"]) < query_renditions else "corpus"
        fields.append("split")
    write_labels(directory, rows, fields)
    return len(rows)
