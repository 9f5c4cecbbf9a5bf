"""Retrieval tasks: ESC-50 query by example, Clotho audio↔text, and offline mocks.

Real datasets (hub ids and revisions as MTEB pins them):

- ``ESC50Retrieval`` (audio→audio): ``ashraq/esc50``; the 400 clips of fold 5 query the
  1,600 clips of folds 1-4; relevant: same ``category`` (32 per query).
- ``ClothoA2TRetrieval`` / ``ClothoT2ARetrieval`` (audio→text, text→audio): ``CLAPv2/Clotho``
  test split, one row per clip with its captions in ``text`` joined by ``.`` (read as MTEB's
  Clotho tasks read them); relevant: the captions of the query's own clip (audio→text: 5 per
  query) or the clip a caption describes (text→audio: 1).

Offline mocks (generated sounds, :func:`write_sounds`): ``MockRetrieval`` (audio→audio),
``MockAudioTextRetrieval`` (audio→text) and ``MockTextAudioRetrieval`` (text→audio), whose
captions are written from the parameters each sound was generated with.
"""

from __future__ import annotations

import csv
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from audiobench.benchmark import Benchmark, ScoreColumn
from audiobench.families import RetrievalTask
from audiobench.task import Columns, DatasetSource, TaskFamily, TaskMetadata
from audiobench.tasks.esc50 import (
    ESC50_CITATION,
    ESC50_COLUMNS,
    ESC50_LICENSE,
    ESC50_REFERENCE,
    ESC50_SOURCE,
)

__all__ = [
    "AUDIO_RETRIEVAL",
    "ClothoA2TRetrieval",
    "ClothoT2ARetrieval",
    "ESC50Retrieval",
    "MockAudioTextRetrieval",
    "MockRetrieval",
    "MockTextAudioRetrieval",
    "SoundClass",
    "mock_classes",
    "render_sound",
    "write_sounds",
]

# -- generated sounds with known descriptions (shared by the mock tasks of three families) ---

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


def mock_classes(n: int, seed: int) -> list[SoundClass]:
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
    return wave.astype(np.float32)


def write_sounds(
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


def write_labels(directory: Path, rows: Sequence[dict[str, str]], fields: Sequence[str]) -> None:
    """``labels.csv`` with the given columns (the folder loader's layout)."""
    with (directory / "labels.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(fields), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


_MOCK_SOURCE = DatasetSource(kind="synthetic", path="audiobench.tasks.retrieval", revision="v1")


# -- offline mocks -----------------------------------------------------------------------------


class MockRetrieval(RetrievalTask):
    """Query by example over generated sounds: 2 queries and 4 corpus clips per class."""

    metadata = TaskMetadata(
        name="MockRetrieval",
        family=TaskFamily.RETRIEVAL,
        description=(
            "Generated sounds of 8 classes (pitch contour × register × harmonics), 6 renditions "
            "each: 16 query clips retrieve the 32 corpus clips of their class (audio→audio). "
            "Runs offline."
        ),
        dataset=_MOCK_SOURCE,
        main_score="mrr",
        domains=("synthetic",),
        license="Apache-2.0",
    )

    def generate_data(self, directory: Path) -> None:
        rows = write_sounds(directory, mock_classes(8, seed=11), 6, seed=11)
        for row in rows:
            row["split"] = "query" if int(row["rendition"]) < 2 else "corpus"
        write_labels(directory, rows, ("file", "id", "label", "split"))


class MockAudioTextRetrieval(RetrievalTask):
    """Generated sounds retrieve their generated captions (audio→text, needs a text tower)."""

    query_modality = "audio"
    document_modality = "text"
    layout = "paired"
    metadata = TaskMetadata(
        name="MockAudioTextRetrieval",
        family=TaskFamily.RETRIEVAL,
        description=(
            "Generated sounds of 8 classes, 3 renditions each, captioned from their generation "
            "parameters ('a loud rising whistle, high pitched, a pure tone'): each sound "
            "retrieves the captions of its class (audio→text). Needs an audio-text model. "
            "Runs offline."
        ),
        dataset=_MOCK_SOURCE,
        main_score="mrr",
        domains=("synthetic",),
        license="Apache-2.0",
    )

    def generate_data(self, directory: Path) -> None:
        rows = write_sounds(directory, mock_classes(8, seed=12), 3, seed=12)
        write_labels(directory, rows, ("file", "id", "label", "text"))


class MockTextAudioRetrieval(MockAudioTextRetrieval):
    """Generated captions retrieve the sounds they describe (text→audio)."""

    query_modality = "text"
    document_modality = "audio"
    metadata = MockAudioTextRetrieval.metadata.model_copy(
        update={
            "name": "MockTextAudioRetrieval",
            "description": (
                "The captions of MockAudioTextRetrieval retrieve the generated sounds of their "
                "class (text→audio). Needs an audio-text model. Runs offline."
            ),
        }
    )


# -- real datasets -----------------------------------------------------------------------------


class ESC50Retrieval(RetrievalTask):
    split_field = "fold"
    query_splits = ("5",)
    corpus_splits = ("1", "2", "3", "4")
    metadata = TaskMetadata(
        name="ESC50Retrieval",
        family=TaskFamily.RETRIEVAL,
        description=(
            "ESC-50 query by example: each of the 400 clips of fold 5 ranks the 1,600 clips of "
            "folds 1-4; relevant are the 32 of its class (50 environmental sound classes)."
        ),
        dataset=ESC50_SOURCE,
        columns=ESC50_COLUMNS,
        splits=("train",),
        main_score="mrr",
        domains=("environmental",),
        license=ESC50_LICENSE,
        citation=ESC50_CITATION,
        reference=ESC50_REFERENCE,
        sample_rate=44100,
    )


CLOTHO_SOURCE = DatasetSource(
    kind="huggingface",
    path="CLAPv2/Clotho",
    revision="b491ad6569dba180ca60a0e2d17a1d6a0d5d9f4a",
)
#: One row per clip: ``audio`` and ``text`` (its captions, joined by ".").
CLOTHO_COLUMNS = Columns(audio="audio", label=None, text="text", required=("audio", "text"))
CLOTHO_CITATION = (
    "Drossos, K., Lipping, S., Virtanen, T. Clotho: An Audio Captioning Dataset. ICASSP 2020. "
    "arXiv:1910.09387"
)


def _clotho_metadata(name: str, direction: str, description: str) -> TaskMetadata:
    return TaskMetadata(
        name=name,
        family=TaskFamily.RETRIEVAL,
        description=description,
        dataset=CLOTHO_SOURCE,
        columns=CLOTHO_COLUMNS,
        splits=("test",),
        main_score="mrr",
        domains=("environmental", "audio-text", direction),
        license="MIT",
        citation=CLOTHO_CITATION,
        reference="https://github.com/audio-captioning/clotho-dataset",
        sample_rate=44100,
    )


class ClothoA2TRetrieval(RetrievalTask):
    query_modality = "audio"
    document_modality = "text"
    layout = "paired"
    text_separator = "."
    metadata = _clotho_metadata(
        "ClothoA2TRetrieval",
        "a2t",
        "Clotho test split, audio→text: each clip ranks all captions; relevant are its own "
        "(5 per clip). Needs an audio-text model.",
    )


class ClothoT2ARetrieval(ClothoA2TRetrieval):
    query_modality = "text"
    document_modality = "audio"
    metadata = _clotho_metadata(
        "ClothoT2ARetrieval",
        "t2a",
        "Clotho test split, text→audio: each caption ranks all clips; relevant is the clip it "
        "describes. Needs an audio-text model.",
    )


AUDIO_RETRIEVAL = Benchmark(
    name="AudioRetrieval",
    description=(
        "Retrieval: ESC-50 query by example and Clotho audio↔text; MRR per task. Ranked by "
        "the mean MRR, then (audio-only models) by ESC-50."
    ),
    tasks=("ESC50Retrieval", "ClothoT2ARetrieval", "ClothoA2TRetrieval"),
    columns=(
        ScoreColumn(name="ESC-50 MRR", task="ESC50Retrieval", score="mrr", aggregate=None),
        ScoreColumn(name="Clotho T2A MRR", task="ClothoT2ARetrieval", score="mrr", aggregate=None),
        ScoreColumn(name="Clotho A2T MRR", task="ClothoA2TRetrieval", score="mrr", aggregate=None),
    ),
    # The mean needs all three (audio-only models have no Clotho scores); those
    # are then ranked by ESC-50 alone, after every model with a mean.
    mean_of=("ESC-50 MRR", "Clotho T2A MRR", "Clotho A2T MRR"),
    rank_by=("mean", "ESC-50 MRR"),
)
