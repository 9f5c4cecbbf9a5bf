"""MTEB's audio tasks outside MAEB(v1): classification, clustering, pairs, reranking, zero-shot.

MTEB 2.26 holds 150 audio tasks; ``tasks/maeb.py`` declares the 24 of them that are MAEB(v1)
tasks, this module and ``tasks/mteb_retrieval.py`` declare the others audiobench can score as
MTEB scores them, and ``tasks/mteb_unsupported.py`` lists the rest with the reason. Each task
reads the hub dataset and revision MTEB pins (``tasks/mteb_pins.py``), the same split and
columns, keeps MTEB's name and main score, and is scored under ``protocol="mteb"`` by default
(``--task-option protocol=audiobench`` gives the family's own report). What MTEB does to the
data at load time (rows left out, stratified subsampling, renamed labels, a split read under
another name) is declared in ``hub`` (:class:`audiobench.hub_layouts.HubData`) and done the same
way.

Classification follows MTEB's two set-ups: a task whose only evaluation split is ``train`` is
cross-validated (5 folds), otherwise ``train`` trains and ``test`` is scored.

Four MTEB names are already audiobench's own tasks (``ESC50``, ``SpeechCommands``,
``FSD50K``, ``ESC50Clustering``, scored by audiobench's protocol on other copies): MTEB's are
declared as ``<name>.mteb``; :data:`MTEB_NAMES` maps every MTEB name to the audiobench task
that scores it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from audiobench.families import (
    ClassificationTask,
    ClusteringTask,
    PairClassificationTask,
    RerankingTask,
    ZeroShotClassificationTask,
)
from audiobench.hub_layouts import HubData
from audiobench.task import Columns, DatasetSource, TaskMetadata
from audiobench.tasks.maeb import MaebTask
from audiobench.tasks.mteb_pins import PINS
from audiobench.tasks.zero_shot_classification import ESC50_CLASSES

__all__ = [
    "MTEB_CITATION",
    "MTEB_NAMES",
    "RENAMED",
    "declare",
    "mteb_metadata",
    "mteb_task_names",
]

MTEB_CITATION = (
    "Muennighoff, N., Tazi, N., Magne, L., Reimers, N. MTEB: Massive Text Embedding Benchmark. "
    "EACL 2023; audio tasks from MTEB 2.26 (Enevoldsen, K., et al. MMTEB, ICLR 2025)."
)

#: MTEB names that audiobench's own tasks already use -> the name MTEB's task is declared under.
RENAMED: dict[str, str] = {
    name: f"{name}.mteb" for name in ("ESC50", "SpeechCommands", "FSD50K", "ESC50Clustering")
}

#: Every MTEB audio task declared here or in ``tasks/mteb_retrieval.py`` -> its audiobench name
#: (complete once both are imported: see :func:`mteb_task_names`).
MTEB_NAMES: dict[str, str] = {}


def mteb_task_names() -> dict[str, str]:
    """Every MTEB audio task audiobench scores -> its audiobench name (MAEB's included)."""
    import audiobench.tasks.mteb_retrieval  # noqa: F401  (declares the retrieval tasks)
    from audiobench.tasks.maeb import MAEB_TASKS

    return {**{name: name for name in MAEB_TASKS}, **MTEB_NAMES}


def mteb_metadata(
    mteb_name: str,
    description: str,
    *,
    columns: Columns,
    splits: Sequence[str],
    main_score: str,
    subsets: Sequence[str] = (),
    config: str | None = None,
    domains: Sequence[str] = (),
) -> TaskMetadata:
    """Metadata of an MTEB task, its data pinned as MTEB pins it."""
    path, revision = PINS[mteb_name]
    name = RENAMED.get(mteb_name, mteb_name)
    known_as = f" (MTEB's {mteb_name})" if name != mteb_name else ""
    return TaskMetadata(
        name=name,
        description=f"{description} MTEB audio task{known_as}, scored as MTEB scores it by "
        "default.",
        dataset=DatasetSource(kind="huggingface", path=path, revision=revision, config=config),
        columns=columns,
        splits=tuple(splits),
        subsets=tuple(subsets),
        main_score=main_score,
        domains=("mteb", *(d.lower() for d in domains)),
        citation=MTEB_CITATION,
        # As the MAEB tasks: no model sees less bandwidth than the recording holds.
        sample_rate=48000,
    )


def declare(
    base: type | tuple[type, ...],
    metadata: TaskMetadata,
    options: Any,
    hub: HubData | None = None,
    *,
    module: str = __name__,
) -> type:
    """A task class of ``base``'s family reading its hub data as ``hub`` says, made importable.

    The class is bound in ``module`` under its name (dots as underscores), where its
    ``audiobench.tasks`` entry point finds it.
    """
    attribute = metadata.name.replace(".", "_")
    namespace = {
        "__module__": module,
        "__qualname__": attribute,
        "metadata": metadata,
        "options": options,
        "hub": hub or HubData(),
    }
    bases = base if isinstance(base, tuple) else (base,)
    cls = type(attribute, (MaebTask, *bases), namespace)
    setattr(sys.modules[module], attribute, cls)
    mteb_name = next((m for m, n in RENAMED.items() if n == metadata.name), metadata.name)
    MTEB_NAMES[mteb_name] = metadata.name
    return cls


# ---------------------------------------------------------------------------- classification

_LOGREG = ClassificationTask.Options(protocol="mteb")
_CROSS_VALIDATED = ("train",)
_TRAIN_TEST = ("train", "test")

#: name, audio column, label column, splits, hub handling, description.
_CLASSIFICATION: tuple[tuple[str, str, str, tuple[str, ...], HubData, str], ...] = (
    ("AESDD", "audio", "label", _CROSS_VALIDATED, HubData(),
     "Acted Emotional Speech Dynamic Database (Greek), 5 emotions."),
    ("AmbientAcousticContext", "audio", "label", _TRAIN_TEST, HubData(),
     "Ambient Acoustic Context: 1-second segments of workplace activities."),
    ("CommonLanguageGenderDetection", "audio", "gender", _TRAIN_TEST,
     HubData(subsample=("test",)), "CommonLanguage speaker gender; the test split cut to "
     "2,048 rows stratified by gender."),
    ("CommonLanguageLanguageDetection", "audio", "language", _TRAIN_TEST,
     HubData(subsample=("test",)), "CommonLanguage spoken language; the test split cut to "
     "2,048 rows stratified by language."),
    ("ESC50", "audio", "target", _CROSS_VALIDATED, HubData(),
     "ESC-50 environmental sounds, 50 classes; 5-fold cross-validation."),
    ("ExpressoConv", "audio", "style", _TRAIN_TEST, HubData(),
     "Expresso conversational speech: speaking style."),
    ("ExpressoRead", "audio", "style", _TRAIN_TEST, HubData(),
     "Expresso read speech: speaking style."),
    ("FSDD", "audio", "label", _TRAIN_TEST, HubData(),
     "Free Spoken Digit Dataset: the spoken digit."),
    ("GLOBEV2Age", "audio", "age", _TRAIN_TEST, HubData(), "GLOBE v2: speaker age group."),
    ("GLOBEV2Gender", "audio", "gender", _TRAIN_TEST, HubData(), "GLOBE v2: speaker gender."),
    ("GLOBEV3Age", "audio", "predicted_age", _TRAIN_TEST, HubData(),
     "GLOBE v3: speaker age group."),
    ("GLOBEV3Gender", "audio", "predicted_gender", _TRAIN_TEST, HubData(),
     "GLOBE v3: speaker gender."),
    ("GunshotTriangulation", "audio", "label", _CROSS_VALIDATED, HubData(),
     "Gunshot triangulation (HEAR): which microphone recorded the shot."),
    ("LibriCount", "audio", "label", _CROSS_VALIDATED, HubData(),
     "LibriCount: number of simultaneous speakers."),
    ("MridinghamStroke", "audio", "label", _CROSS_VALIDATED, HubData(),
     "Mridingham strokes, 10 classes."),
    ("NSynth", "audio", "instrument_source", _TRAIN_TEST, HubData(),
     "NSynth (mini): instrument source (acoustic, electronic, synthetic)."),
    ("SpeechCommands", "audio", "label", _TRAIN_TEST, HubData(),
     "Speech Commands (mini): the spoken command."),
    ("SpokeNEnglish", "audio", "label", _CROSS_VALIDATED, HubData(),
     "SpokeN-100 English: spoken numbers 0-99."),
    # The reference cross-validates the hub's test split.
    ("SpokenQAForIC", "audio", "label", _CROSS_VALIDATED, HubData(hub_splits={"train": "test"}),
     "SLUE spoken question answering, as intent classification."),
    ("TAUAcousticScenes2022Mobile", "audio", "scene_label", _TRAIN_TEST, HubData(),
     "TAU Urban Acoustic Scenes 2022 Mobile (mini): the scene."),
    ("TUTAcousticScenes", "audio", "scene_label", _CROSS_VALIDATED, HubData(),
     "TUT Acoustic Scenes (mini): the scene."),
    ("UrbanSound8k", "audio", "classID", _CROSS_VALIDATED, HubData(),
     "UrbanSound8K urban sounds, 10 classes."),
    # The reference trains on the hub's "val" split and scores "test".
    ("VocalSound", "audio", "answer", _TRAIN_TEST, HubData(hub_splits={"train": "val"}),
     "VocalSound: laughter, sighs, coughs, throat clearing, sneezes and sniffs."),
    ("VoxLingua107_Top10", "audio", "label", _CROSS_VALIDATED, HubData(),
     "VoxLingua107, its 10 largest languages: the spoken language."),
    # The reference cross-validates the hub's test split, clips under 500 samples left out.
    ("VoxPopuliAccentID", "audio", "accent", _CROSS_VALIDATED,
     HubData(hub_splits={"train": "test"}, min_samples=500),
     "VoxPopuli English: the speaker's accent."),
    ("VoxPopuliGenderID", "audio", "gender", _CROSS_VALIDATED,
     HubData(relabel={"female": "0", "male": "1"}),
     "VoxPopuli: speaker gender (0 female, 1 male)."),
)  # fmt: skip

for _name, _audio, _label, _splits, _hub, _what in _CLASSIFICATION:
    declare(
        ClassificationTask,
        mteb_metadata(
            _name,
            _what,
            columns=Columns(audio=_audio, label=_label),
            splits=_splits,
            main_score="accuracy",
        ),
        _LOGREG,
        _hub,
    )

# Multi-label: one logistic regression per label; lists of labels are read joined by ",".
declare(
    ClassificationTask,
    mteb_metadata(
        "FSD50K",
        "FSD50K (mini), multi-label sound events: trained on train, scored on test; main score "
        "LRAP.",
        columns=Columns(audio="audio", label="labels"),
        splits=_TRAIN_TEST,
        main_score="lrap",
    ),
    ClassificationTask.Options(multilabel=True, label_separator=",", protocol="mteb"),
)

# ---------------------------------------------------------------------------- clustering

_BOOTSTRAP = ClusteringTask.Options(protocol="mteb")

#: name, audio column, label column, split, configuration, hub handling, description.
_CLUSTERING: tuple[tuple[str, str, str, str, str | None, HubData, str], ...] = (
    ("AmbientAcousticContextClustering", "audio", "label", "test", None, HubData(),
     "Ambient Acoustic Context: workplace activities clustered."),
    ("BirdCLEFSpeciesClustering", "recording", "primary_label", "train", None, HubData(),
     "BirdCLEF+ 2025 (mini): recordings clustered by species."),
    ("ESC50Clustering", "audio", "target", "train", None, HubData(),
     "ESC-50 environmental sounds clustered into 50 classes."),
    ("GTZANGenreClustering", "audio", "label", "train", None, HubData(),
     "GTZAN music clustered by genre."),
    ("MusicGenreClustering", "audio", "label", "test", None, HubData(),
     "Music clustered by genre."),
    ("UrbanSound8kClustering", "audio", "classID", "train", None, HubData(),
     "UrbanSound8K urban sounds clustered into 10 classes."),
    ("VimSketchImitationClustering", "audio", "label", "test", "clustering", HubData(),
     "VimSketch: vocal imitations clustered by the sound they imitate."),
    ("VoiceGenderClustering", "audio", "label", "train", None, HubData(),
     "Voices clustered by gender."),
    # The reference drops two labels, numbers the others and cuts the test split to 2,048 rows.
    ("VoxCelebClustering", "audio", "label", "test", None,
     HubData(exclude={"label": ("Disagreement", "<mixed>")}, subsample=("test",),
             relabel={"Negative": "0", "Neutral": "1", "Positive": "2"}),
     "VoxCeleb sentiment (SLUE) clustered."),
    # The reference drops clips with no audio samples.
    ("VoxPopuliAccentClustering", "audio", "accent", "test", None, HubData(min_samples=1),
     "VoxPopuli English speakers clustered by accent."),
)  # fmt: skip

for _name, _audio, _label, _split, _config, _hub, _what in _CLUSTERING:
    declare(
        ClusteringTask,
        mteb_metadata(
            _name,
            _what,
            columns=Columns(audio=_audio, label=_label),
            splits=(_split,),
            main_score="v_measure",
            config=_config,
        ),
        _BOOTSTRAP,
        _hub,
    )

# ---------------------------------------------------------------------------- pairs

for _name, _what in (
    ("ESC50PairClassification", "ESC-50: are two recordings of the same sound class?"),
    ("VocalSoundPairClassification", "VocalSound: are two vocal sounds of the same kind?"),
):
    declare(
        PairClassificationTask,
        mteb_metadata(
            _name,
            _what,
            columns=Columns(audio="audio", label="label"),
            splits=("test",),
            main_score="max_ap",
        ),
        PairClassificationTask.Options(protocol="mteb"),
        HubData(layout="pairs"),
    )

# ---------------------------------------------------------------------------- reranking

for _name, _what in (
    ("ESC50AudioReranking", "ESC-50: a clip reranks 21 candidates, those of its class first."),
    ("FSDnoisy18kAudioReranking", "FSDnoisy18k: a clip reranks 20 candidates."),
    ("UrbanSound8KAudioReranking", "UrbanSound8K: a clip reranks 20 candidates."),
    ("VocalSoundAudioReranking", "VocalSound: a clip reranks 20 candidates, 4 of its kind."),
):
    declare(
        RerankingTask,
        mteb_metadata(
            _name,
            _what,
            columns=Columns(audio="audio", label=None, required=("audio",)),
            splits=("test",),
            main_score="map_at_1000",
        ),
        RerankingTask.Options(candidate_modality="audio", protocol="mteb"),
        HubData(layout="reranking", query_modality="audio"),
    )

# ---------------------------------------------------------------------------- zero-shot

_URBANSOUND8K_CLASSES = (
    "air conditioner", "car horn", "children playing", "dog bark", "drilling", "engine idling",
    "gun shot", "jackhammer", "siren", "street music",
)  # fmt: skip
_SPEECH_COMMANDS = ("Yes", "No", "Up", "Down", "Left", "Right", "On", "Off", "Stop", "Go")

#: name, label column, split, candidate texts (the label is an index into them), subsampled.
_ZERO_SHOT: tuple[tuple[str, str, str, tuple[str, ...], bool, str], ...] = (
    ("ESC50_Zeroshot", "target", "train",
     tuple(f"This is a sound of {c}" for c in ESC50_CLASSES), False,
     "ESC-50, zero-shot: each clip is given the closest of 50 texts ('This is a sound of "
     "dog')."),
    ("SpeechCommandsZeroshotv0.01", "label", "test", _SPEECH_COMMANDS, False,
     "Speech Commands v0.01, zero-shot: each clip is given the closest of the 10 command "
     "words."),
    ("UrbanSound8kZeroshot", "classID", "train",
     tuple(f"This is a sound of {c}" for c in _URBANSOUND8K_CLASSES), True,
     "UrbanSound8K, zero-shot: each clip is given the closest of 10 texts; the split cut to "
     "2,048 rows stratified by class."),
)  # fmt: skip


class _VerbatimClasses:
    """The candidate texts are the prompts as written: the reference embeds ``sea_waves``."""

    @classmethod
    def class_text(cls, label: str) -> str:
        return label


for _name, _label, _split, _classes, _cut, _what in _ZERO_SHOT:
    declare(
        (_VerbatimClasses, ZeroShotClassificationTask),
        mteb_metadata(
            _name,
            _what,
            columns=Columns(audio="audio", label=None, extra=(_label,), required=("audio",)),
            splits=(_split,),
            main_score="accuracy",
        ),
        ZeroShotClassificationTask.Options(
            classes=_classes, prompt_template="{label}", protocol="mteb"
        ),
        HubData(classes=_classes, label_column=_label, subsample=(_split,) if _cut else ()),
    )
