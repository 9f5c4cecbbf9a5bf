"""Classification tasks: probes trained on frozen embeddings.

Real datasets (from the Hugging Face hub, pinned):

- ``ESC50``: 2,000 five-second environmental recordings, 50 classes, the dataset's own
  5-fold cross-validation (leave one fold out, accuracy averaged over folds); clips cut from
  one source recording share a fold, which the run checks (``grouped`` on ``src_file``);
- ``SpeechCommands``: one-second spoken keywords, the dataset's train / validation / test
  splits (MTEB's downsampled copy of v0.02);
- ``FSD50K``: multi-label sound events (200 AudioSet-ontology classes), train / test,
  macro mAP.

Every real task also runs the token probes (``attentive``, ``protobin``) on the token maps
of sequence encoders; for other encoders they are skipped and the reason recorded.

Offline tasks on generated audio (:mod:`audiobench.synthetic.calls`), small enough for a
CLI run in seconds: ``MockClassification`` (multi-class, predefined folds that keep each
individual in one fold, all five probes) and ``MockMultilabelClassification`` (mixtures of
call types, explicit train / validation / test splits).
"""

from __future__ import annotations

from audiobench.benchmark import Benchmark, ScoreColumn
from audiobench.families import ClassificationTask
from audiobench.task import Columns, DatasetSource, Synthetic, TaskMetadata
from audiobench.tasks.esc50 import ESC50_CITATION, ESC50_LICENSE, ESC50_REFERENCE, ESC50_SOURCE

__all__ = [
    "CLASSIFICATION",
    "ESC50",
    "FSD50K",
    "MockClassification",
    "MockMultilabelClassification",
    "SpeechCommands",
]

# ---------------------------------------------------------------------------- real datasets


class ESC50(ClassificationTask):
    metadata = TaskMetadata(
        name="ESC50",
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
    # Clips cut from one source recording share a fold; checked on every split (grouped).
    options = ClassificationTask.Options(
        probes=("linear", "knn", "mlp", "attentive", "protobin"),
        folds=("1", "2", "3", "4", "5"),
        grouped=True,
    )


class SpeechCommands(ClassificationTask):
    metadata = TaskMetadata(
        name="SpeechCommands",
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
    options = ClassificationTask.Options(probes=("linear", "knn", "mlp", "attentive", "protobin"))


class FSD50K(ClassificationTask):
    metadata = TaskMetadata(
        name="FSD50K",
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
    options = ClassificationTask.Options(
        probes=("linear", "knn", "attentive", "protobin"), multilabel=True, label_separator=","
    )


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

#: Call types and individuals of both mock tasks (``clips_per_class`` is unused: the
#: generators set the counts).
_MOCK_CALLS = {
    "name": "MOCK",
    "n_classes": 4,
    "clips_per_class": 0,
    "f0_range": (300.0, 5000.0),
    "max_harmonics": 4,
    "n_individuals": 6,
}


class MockClassification(ClassificationTask):
    metadata = TaskMetadata(
        name="MockClassification",
        description=(
            "Generated calls: 4 call types, 6 individuals, 2 renditions each; 3 predefined "
            "folds that keep each individual in one fold; all five probes (token probes on "
            "sequence encoders). Runs offline."
        ),
        dataset=Synthetic(
            generator="audiobench.synthetic.calls:write_individual_calls",
            seed=20260105,
            params={"spec": _MOCK_CALLS, "renditions": 2, "n_folds": 3},
        ),
        columns=Columns(group="speaker", extra=("fold",)),
        main_score="linear:accuracy",
        domains=("synthetic",),
        license="Apache-2.0",
    )
    options = ClassificationTask.Options(
        probes=("linear", "knn", "mlp", "attentive", "protobin"),
        folds=("1", "2", "3"),
        grouped=True,
        # Fewer inner folds and epochs than the defaults keep a CLI run to seconds.
        probe_params={"linear": {"n_splits": 3}, "mlp": {"epochs": 20}},
    )


class MockMultilabelClassification(ClassificationTask):
    metadata = TaskMetadata(
        name="MockMultilabelClassification",
        description=(
            "Generated mixtures of 1-2 of 4 call types (multi-label), explicit train / "
            "validation / test splits; main score: linear probe macro mAP. Runs offline."
        ),
        dataset=Synthetic(
            generator="audiobench.synthetic.calls:write_call_mixtures",
            seed=20260106,
            params={
                "spec": _MOCK_CALLS,
                "renditions": 6,
                "splits": ("train", "validation", "test"),
            },
        ),
        main_score="linear:map",
        domains=("synthetic",),
        license="Apache-2.0",
    )
    options = ClassificationTask.Options(probes=("linear", "knn"), multilabel=True)
