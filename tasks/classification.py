"""Classification tasks: probes trained on frozen embeddings.

Real datasets (from the Hugging Face hub, pinned):

- ``ESC50``: 2,000 five-second environmental recordings, 50 classes, the dataset's own
  5-fold cross-validation (leave one fold out, accuracy averaged over folds); clips cut from
  one source recording share a fold, which the run checks (``grouped`` on ``src_file``);
- ``SpeechCommands``: one-second spoken keywords, the dataset's train / validation / test
  splits (MTEB's downsampled copy of v0.02);
- ``FSD50K``: multi-label sound events (200 AudioSet-ontology classes), train / test,
  macro mAP.

Offline tasks on generated audio (:mod:`audiobench.synthetic`), small enough for a CLI run in
seconds: ``MockClassification`` (multi-class, predefined folds that keep each individual in
one fold, all five probes) and ``MockMultilabelClassification`` (mixtures of call types,
explicit train / validation / test splits).
"""

from __future__ import annotations

import csv
import itertools
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import soundfile as sf

from audiobench.benchmark import Benchmark, ScoreColumn
from audiobench.families import ClassificationTask
from audiobench.synthetic import SubsetSpec, render_call, sample_call_types
from audiobench.task import Columns, DatasetSource, TaskFamily, TaskMetadata
from audiobench.tasks.esc50 import ESC50_CITATION, ESC50_LICENSE, ESC50_REFERENCE, ESC50_SOURCE

__all__ = [
    "CLASSIFICATION",
    "ESC50",
    "FSD50K",
    "MockClassification",
    "MockMultilabelClassification",
    "SpeechCommands",
    "write_call_mixtures",
    "write_individual_calls",
]

# ---------------------------------------------------------------------------- real datasets


class ESC50(ClassificationTask):
    metadata = TaskMetadata(
        name="ESC50",
        family=TaskFamily.CLASSIFICATION,
        description=(
            "ESC-50: 2,000 five-second environmental recordings in 50 classes; probes trained "
            "on frozen embeddings, the dataset's 5 folds (leave one out). Main score: linear "
            "probe accuracy averaged over the folds."
        ),
        dataset=ESC50_SOURCE,
        columns=Columns(audio="audio", label="category", group="src_file", extra=("fold",)),
        splits=("train",),
        main_score="linear:accuracy",
        domains=("environmental",),
        license=ESC50_LICENSE,
        citation=ESC50_CITATION,
        reference=ESC50_REFERENCE,
    )
    probes: ClassVar[tuple[str, ...]] = ("linear", "knn", "mlp")
    folds: ClassVar[tuple[str, ...]] = ("1", "2", "3", "4", "5")
    # Clips cut from one source recording share a fold; checked on every split.
    grouped: ClassVar[bool] = True


class SpeechCommands(ClassificationTask):
    metadata = TaskMetadata(
        name="SpeechCommands",
        family=TaskFamily.CLASSIFICATION,
        description=(
            "Speech Commands v0.02 keyword classification (MTEB's downsampled copy): "
            "one-second spoken words and background noise, the dataset's train / validation / "
            "test splits; the validation split chooses the probes' hyper-parameters. Main "
            "score: linear probe accuracy on the test split."
        ),
        # MTEB's copy: parquet, columns audio, label, speaker_id; splits train/validation/test.
        dataset=DatasetSource(
            kind="huggingface",
            path="mteb/speech-commands-mini",
            revision="3ac713aa0829eeadda73182f38bbbd788d21254b",
        ),
        columns=Columns(audio="audio", label="label", group="speaker_id"),
        splits=("train", "validation", "test"),
        main_score="linear:accuracy",
        domains=("speech",),
        license="CC-BY-4.0",
        citation=(
            "Warden, P. Speech Commands: A Dataset for Limited-Vocabulary Speech Recognition. "
            "arXiv:1804.03209, 2018."
        ),
        reference="https://arxiv.org/abs/1804.03209",
    )
    probes: ClassVar[tuple[str, ...]] = ("linear", "knn", "mlp")


class FSD50K(ClassificationTask):
    metadata = TaskMetadata(
        name="FSD50K",
        family=TaskFamily.CLASSIFICATION,
        description=(
            "FSD50K: multi-label sound event recognition over 200 classes of the AudioSet "
            "ontology (Freesound clips); probes trained on the train split, scored on the "
            "test split. Main score: linear probe macro mAP."
        ),
        # The copy MTEB evaluates: labels are one comma-separated string per clip.
        dataset=DatasetSource(
            kind="huggingface",
            path="Chand0320/fsd50k_hf",
            revision="ca72d33100074e2933437e844028c941d8e8f065",
        ),
        columns=Columns(audio="audio", label="labels"),
        splits=("train", "test"),
        main_score="linear:map",
        domains=("environmental", "music", "speech"),
        license="CC-BY-4.0",
        citation=(
            "Fonseca, E., Favory, X., Pons, J., Font, F., Serra, X. FSD50K: An Open Dataset of "
            "Human-Labeled Sound Events. IEEE/ACM TASLP 30, 2022, 829-852. "
            "doi:10.1109/TASLP.2021.3133208"
        ),
        reference="https://zenodo.org/record/4060432",
    )
    probes: ClassVar[tuple[str, ...]] = ("linear", "knn")
    multilabel: ClassVar[bool] = True
    label_separator: ClassVar[str] = ","


CLASSIFICATION = Benchmark(
    name="Classification",
    description=(
        "Probes on frozen embeddings: ESC-50 (5-fold accuracy), Speech Commands (test "
        "accuracy), FSD50K (macro mAP); each column is the task's main score (linear probe). "
        "Ranked by ESC-50, then Speech Commands, then FSD50K."
    ),
    tasks=("ESC50", "SpeechCommands", "FSD50K"),
    columns=(
        ScoreColumn(name="ESC-50 acc", task="ESC50", score="linear:accuracy", aggregate=None),
        ScoreColumn(
            name="SpeechCommands acc",
            task="SpeechCommands",
            score="linear:accuracy",
            aggregate=None,
        ),
        ScoreColumn(name="FSD50K mAP", task="FSD50K", score="linear:map", aggregate=None),
    ),
    mean_of=("ESC-50 acc", "SpeechCommands acc", "FSD50K mAP"),
    rank_by=("mean", "ESC-50 acc", "SpeechCommands acc", "FSD50K mAP"),
)

# ---------------------------------------------------------------------------- offline data

_MOCK_SOURCE = DatasetSource(kind="synthetic", path="audiobench.synthetic", revision="v1")


def _individuals(n: int, rng: np.random.Generator) -> list[tuple[float, tuple[float, float]]]:
    """Each individual's pitch offset and vocal-tract resonance (centre, bandwidth)."""
    return [
        (
            float(2.0 ** (rng.uniform(-1.0, 1.0) / 12.0)),
            (float(rng.uniform(600, 4000)), float(rng.uniform(150, 600))),
        )
        for _ in range(n)
    ]


def _write_csv(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def write_individual_calls(
    directory: Path,
    spec: SubsetSpec,
    *,
    seed: int,
    renditions: int,
    n_folds: int = 0,
    sample_rate: int = 16000,
) -> int:
    """Every individual renders every call type ``renditions`` times; returns the clip count.

    ``labels.csv`` has columns ``file``, ``label``, ``speaker`` (the individual) and, with
    ``n_folds > 0``, ``fold`` (``1 .. n_folds``): individual ``i`` is in fold
    ``i % n_folds + 1``, so no individual straddles two folds and every fold holds every
    class. Deterministic: the same arguments give the same bytes.
    """
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng([seed, 0])
    calls = sample_call_types(spec, rng)
    individuals = _individuals(spec.n_individuals, rng)
    rows: list[dict[str, str]] = []
    for who, (shift, formant) in enumerate(individuals):
        for call in calls:
            for k in range(renditions):
                wave = render_call(
                    call, rng, sample_rate, individual_shift=shift, individual_formant=formant
                )
                rel = f"{call.name}/ind{who}-{k:02d}.wav"
                (directory / call.name).mkdir(exist_ok=True)
                sf.write(directory / rel, wave, sample_rate, subtype="PCM_16")
                row = {"file": rel, "label": call.name, "speaker": f"ind{who}"}
                if n_folds:
                    row["fold"] = str(who % n_folds + 1)
                rows.append(row)
    _write_csv(directory / "labels.csv", rows)
    return len(rows)


def write_call_mixtures(
    directory: Path,
    spec: SubsetSpec,
    *,
    seed: int,
    renditions: int,
    splits: tuple[str, ...],
    sample_rate: int = 16000,
) -> int:
    """Multi-label clips: every single call type and every pair, mixed; returns the count.

    Each combination is rendered ``renditions`` times (each call by a random individual, at
    a random offset); the last ``len(splits) - 1`` renditions go one to each later split
    (validation, test), the others to ``splits[0]``, so every class occurs in every split.
    ``labels.csv``: ``file``, ``label`` (call types joined by ``,``), ``split``.
    """
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng([seed, 1])
    calls = sample_call_types(spec, rng)
    individuals = _individuals(spec.n_individuals, rng)
    combos = [(c,) for c in calls] + list(itertools.combinations(calls, 2))
    rows: list[dict[str, str]] = []
    (directory / "clips").mkdir(exist_ok=True)
    for index, combo in enumerate(combos):
        for k in range(renditions):
            parts = []
            for call in combo:
                shift, formant = individuals[int(rng.integers(len(individuals)))]
                parts.append(
                    render_call(
                        call, rng, sample_rate, individual_shift=shift, individual_formant=formant
                    )
                )
            wave = np.zeros(max(p.size for p in parts), dtype=np.float32)
            for part in parts:
                offset = int(rng.integers(0, wave.size - part.size + 1))
                wave[offset : offset + part.size] += part
            wave *= 0.9 / max(float(np.abs(wave).max()), 1e-9)
            rel = f"clips/mix{index:02d}-{k:02d}.wav"
            sf.write(directory / rel, wave, sample_rate, subtype="PCM_16")
            # The last len(splits) - 1 renditions go one to each later split, the rest to the
            # first (training) split.
            later = k - (renditions - len(splits))
            split = splits[later] if later > 0 else splits[0]
            label = ",".join(call.name for call in combo)
            rows.append({"file": rel, "label": label, "split": split})
    _write_csv(directory / "labels.csv", rows)
    return len(rows)


_MOCK_CALLS = SubsetSpec(
    "MOCK",
    n_classes=4,
    clips_per_class=0,  # unused: the writers set the counts
    f0_range=(300.0, 5000.0),
    max_harmonics=4,
    n_individuals=6,
)


class MockClassification(ClassificationTask):
    metadata = TaskMetadata(
        name="MockClassification",
        family=TaskFamily.CLASSIFICATION,
        description=(
            "Generated calls: 4 call types, 6 individuals, 2 renditions each; 3 predefined "
            "folds that keep each individual in one fold; all five probes (token probes on "
            "sequence encoders). Runs offline."
        ),
        dataset=_MOCK_SOURCE,
        columns=Columns(group="speaker", extra=("fold",)),
        main_score="linear:accuracy",
        domains=("synthetic",),
        license="Apache-2.0",
    )
    probes: ClassVar[tuple[str, ...]] = ("linear", "knn", "mlp", "attentive", "protobin")
    folds: ClassVar[tuple[str, ...]] = ("1", "2", "3")
    grouped: ClassVar[bool] = True
    # Fewer inner folds and epochs than the defaults keep a CLI run to seconds.
    probe_params: ClassVar[Mapping[str, Mapping[str, Any]]] = {
        "linear": {"n_splits": 3},
        "mlp": {"epochs": 20},
    }

    def generate_data(self, directory: Path) -> None:
        write_individual_calls(
            directory, _MOCK_CALLS, seed=20260105, renditions=2, n_folds=3,
            sample_rate=self.metadata.sample_rate,
        )  # fmt: skip


class MockMultilabelClassification(ClassificationTask):
    metadata = TaskMetadata(
        name="MockMultilabelClassification",
        family=TaskFamily.CLASSIFICATION,
        description=(
            "Generated mixtures of 1-2 of 4 call types (multi-label), explicit train / "
            "validation / test splits; main score: linear probe macro mAP. Runs offline."
        ),
        dataset=_MOCK_SOURCE,
        main_score="linear:map",
        domains=("synthetic",),
        license="Apache-2.0",
    )
    probes: ClassVar[tuple[str, ...]] = ("linear", "knn")
    multilabel: ClassVar[bool] = True

    def generate_data(self, directory: Path) -> None:
        write_call_mixtures(
            directory, _MOCK_CALLS, seed=20260106, renditions=6,
            splits=("train", "validation", "test"), sample_rate=self.metadata.sample_rate,
        )  # fmt: skip
