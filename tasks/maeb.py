"""MAEB(v1): the 30 tasks of the Massive Audio Embedding Benchmark, and its two benchmarks.

Each task is pinned to the hub repository and revision MAEB evaluates, reads the same split and
columns, and keeps MAEB's name and main score. By default it is scored as MTEB scores it
(``protocol="mteb"``, :mod:`audiobench.evaluators.mteb_protocol.subset_scores`), so its numbers
are comparable with MAEB's published ones; ``--task-option protocol=audiobench`` gives the
family's own, richer report instead (whose keys differ, so the MAEB main score is then
undefined). How each dataset is read is declared in ``hub``
(:class:`audiobench.hub_layouts.HubData`). Every MAEB task accepts repeated audio, as the
reference scores the data as published. Audio–text tasks (text→audio retrieval, lyrics,
zero-shot) refuse models without a text tower.

Benchmarks: ``MAEB`` (all 30) and ``MAEB-audio-only`` (the 19 audio-only tasks), each ranked
by the unweighted mean of its tasks' main scores; a model missing a task gets no mean.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from audiobench.audio import Clip
from audiobench.benchmark import MEAN, Benchmark, ScoreColumn
from audiobench.families import (
    ClassificationTask,
    ClusteringTask,
    PairClassificationTask,
    RerankingTask,
    RetrievalTask,
    ZeroShotClassificationTask,
)
from audiobench.hub_layouts import HubData, load_hub_clips, mteb_task_type
from audiobench.task import Columns, DatasetSource, TaskMetadata
from audiobench.tasks.maeb_languages import COMMON_VOICE_21, FLEURS, JAM_ALT, MINDS14, SIB_FLEURS

__all__ = ["MAEB", "MAEB_AUDIO_ONLY", "MAEB_AUDIO_ONLY_TASKS", "MAEB_TASKS", "MaebTask"]

MAEB_CITATION = (
    "El Assadi, A., Chung, I., Xiao, C., Solomatin, R., et al. MAEB: Massive Audio Embedding "
    "Benchmark. arXiv:2602.16008, 2026."
)


class MaebTask:
    """Mixin of the MAEB tasks: the data is read as ``hub`` declares; repeated audio is fine."""

    hub: ClassVar[HubData] = HubData()
    allow_duplicates: ClassVar[bool] = True

    def load_data(
        self, progress: Callable[[str], None] | None = None, *, missing_ok: bool = False
    ) -> list[Clip]:
        # Hub tables hold their audio: no entry can point at a missing file.
        return load_hub_clips(self, self.hub, progress)  # type: ignore[arg-type]


def _meta(
    name: str,
    path: str,
    revision: str,
    description: str,
    *,
    columns: Columns,
    splits: Sequence[str] = ("train",),
    main_score: str = "accuracy",
    domains: Sequence[str] = (),
    license: str | None = None,
    reference: str | None = None,
    subsets: Sequence[str] = (),
    config: str | None = None,
) -> TaskMetadata:
    return TaskMetadata(
        name=name,
        description=f"{description} MAEB(v1) task, scored as MTEB scores it by default.",
        dataset=DatasetSource(kind="huggingface", path=path, revision=revision, config=config),
        columns=columns,
        splits=tuple(splits),
        subsets=tuple(subsets),
        main_score=main_score,
        domains=("maeb", *(d.lower() for d in domains)),
        license=license,
        citation=MAEB_CITATION,
        reference=reference,
        # High enough that no model sees less bandwidth than the recording holds, as in the
        # reference, which resamples each recording straight to the model's rate.
        sample_rate=48000,
    )


_AUDIO_LABEL = Columns(audio="audio", label="label")
_ODBL = "http://opendatacommons.org/licenses/odbl/1.0/"

# ---------------------------------------------------------------------------- retrieval (9)

_T2A = RetrievalTask.Options(query_modality="text", layout="paired", protocol="mteb")
_T2A_SPLIT = RetrievalTask.Options(query_modality="text", protocol="mteb")


class ClothoT2ARetrieval(MaebTask, RetrievalTask):
    options = _T2A.model_copy(update={"text_separator": "."})
    metadata = _meta(
        "ClothoT2ARetrieval",
        "mteb/Clotho",
        "c44521cd4067f134e5f5bace4290b59ed773b451",
        "Clotho test split, text→audio: each caption (the text column split at '.') retrieves "
        "the clip it describes.",
        columns=Columns(
            audio="audio", id="index", text="text", label=None, required=("audio", "text")
        ),
        splits=("test",),
        main_score="hit_rate_at_5",
        domains=("Encyclopaedic", "Written"),
        license="mit",
        reference="https://github.com/audio-captioning/clotho-dataset",
    )


class CommonVoiceMini21T2ARetrieval(MaebTask, RetrievalTask):
    options = _T2A
    hub = HubData(configs=COMMON_VOICE_21)
    metadata = _meta(
        "CommonVoiceMini21T2ARetrieval",
        "mteb/common_voice_21_0_mini",
        "8aef059b329d70e590bb81454a8a85ecdae54b45",
        "Common Voice 21 (mini), 117 languages: each sentence retrieves its recording.",
        columns=Columns(
            audio="audio", id="path", text="sentence", label=None, required=("audio", "text")
        ),
        splits=("test",),
        subsets=COMMON_VOICE_21,
        main_score="hit_rate_at_5",
        domains=("Spoken",),
        license="cc0-1.0",
        reference="https://commonvoice.mozilla.org/",
    )


class FleursT2ARetrieval(MaebTask, RetrievalTask):
    options = _T2A
    hub = HubData(configs=FLEURS)
    metadata = _meta(
        "FleursT2ARetrieval",
        "mteb/fleurs",
        "cadac46d4cd7d721f5cf8844a5b9f0f20e6fcde8",
        "FLEURS, 102 languages: each transcription retrieves its recording.",
        columns=Columns(
            audio="audio", id="id", text="transcription", label=None, required=("audio", "text")
        ),
        splits=("test",),
        subsets=FLEURS,
        main_score="hit_rate_at_5",
        domains=("Spoken",),
        license="apache-2.0",
        reference="https://github.com/google-research-datasets/fleurs",
    )


def _t2a_corpus(name: str, path: str, revision: str, description: str, **kw: Any) -> TaskMetadata:
    """A text→audio task in the corpus / queries / qrels layout."""
    return _meta(
        name,
        path,
        revision,
        description,
        columns=Columns(audio="audio", label=None, required=("audio",)),
        splits=("test",),
        main_score="hit_rate_at_5",
        **kw,
    )


class GigaSpeechT2ARetrieval(MaebTask, RetrievalTask):
    options = _T2A_SPLIT
    hub = HubData(layout="retrieval")
    metadata = _t2a_corpus(
        "GigaSpeechT2ARetrieval",
        "mteb/gigaspeech_t2a",
        "38876698eba40ac88433e0ca0d9dff6f35e4d0ff",
        "GigaSpeech: an English transcription retrieves its audio segment.",
        domains=("Spoken",),
        license="https://github.com/SpeechColab/GigaSpeech/blob/main/LICENSE",
        reference="https://github.com/SpeechColab/GigaSpeech",
    )


class MACST2ARetrieval(MaebTask, RetrievalTask):
    options = _T2A_SPLIT
    hub = HubData(layout="retrieval")
    metadata = _t2a_corpus(
        "MACST2ARetrieval",
        "mteb/MACS_t2a",
        "74ce553cb9b43aee5169f0bddd30bd5dee8d26d1",
        "MACS: a caption of an urban acoustic scene retrieves its recording.",
        domains=("AudioScene",),
        license="https://zenodo.org/records/5114771",
        reference="https://zenodo.org/records/5114771",
    )


class SpokenSQuADT2ARetrieval(MaebTask, RetrievalTask):
    options = _T2A_SPLIT
    hub = HubData(layout="retrieval")
    metadata = _t2a_corpus(
        "SpokenSQuADT2ARetrieval",
        "mteb/spoken-squad-t2a",
        "b311394fa5ab5e003012304799d0d724d64303b3",
        "Spoken SQuAD: a text question retrieves the spoken passages that answer it.",
        domains=("Academic", "Encyclopaedic", "Non-fiction"),
        license="cc-by-sa-4.0",
        reference="https://github.com/Chia-Hsuan-Lee/Spoken-SQuAD",
    )


class UrbanSound8KT2ARetrieval(MaebTask, RetrievalTask):
    options = _T2A_SPLIT
    hub = HubData(layout="retrieval")
    metadata = _t2a_corpus(
        "UrbanSound8KT2ARetrieval",
        "mteb/Urbansound8K_t2a",
        "d50fd1daded60cf136b82d845b9bda65b8b2376e",
        "UrbanSound8K: a text describing an urban sound event retrieves its recordings.",
        domains=("AudioScene",),
        license="cc-by-nc-sa-3.0",
        reference="https://huggingface.co/datasets/CLAPv2/Urbansound8K",
    )


#: Jam-ALT lines: one row per sung line; the reference's ids join the song and first line.
_JAM_ALT = HubData(id_format="{song_name}{line_indices[0]}")
_JAM_ALT_SOURCE = ("mteb/jam-alt-lines", "e2d97afa7333eb489f1d451f76079d921be7a68f")


class JamAltArtistA2ARetrieval(MaebTask, RetrievalTask):
    options = RetrievalTask.Options(layout="all", protocol="mteb")
    hub = _JAM_ALT
    metadata = _meta(
        "JamAltArtistA2ARetrieval",
        *_JAM_ALT_SOURCE,
        "Jam-ALT lines, 4 languages: a sung line retrieves every line by the same artist.",
        columns=Columns(
            audio="audio",
            label="artist",
            subset="song_language",
            extra=("song_name", "line_indices"),
        ),
        config="pure",
        splits=("test",),
        subsets=JAM_ALT,
        main_score="ndcg_at_10",
        domains=("Music",),
        license="cc-by-nc-sa-4.0",
        reference="https://huggingface.co/datasets/jamendolyrics/jam-alt-lines",
    )


class JamAltLyricA2TRetrieval(MaebTask, RetrievalTask):
    options = RetrievalTask.Options(document_modality="text", layout="paired", protocol="mteb")
    hub = _JAM_ALT
    metadata = _meta(
        "JamAltLyricA2TRetrieval",
        *_JAM_ALT_SOURCE,
        "Jam-ALT lines, 4 languages: a sung line retrieves its lyric text (every line with "
        "the same text is relevant).",
        columns=Columns(
            audio="audio",
            label="text",
            text="text",
            subset="song_language",
            extra=("song_name", "line_indices"),
        ),
        config="pure",
        splits=("test",),
        subsets=JAM_ALT,
        main_score="ndcg_at_10",
        domains=("Music",),
        license="cc-by-nc-sa-4.0",
        reference="https://huggingface.co/datasets/jamendolyrics/jam-alt-lines",
    )


# ---------------------------------------------------------------------------- classification (11)

_LOGREG = ClassificationTask.Options(protocol="mteb")


class BeijingOpera(MaebTask, ClassificationTask):
    options = _LOGREG
    metadata = _meta(
        "BeijingOpera",
        "mteb/beijing-opera",
        "fed432f5ad94bc8d76c96d0ba05a38e805254281",
        "Beijing opera percussion instruments, 4 classes; 5-fold cross-validation.",
        columns=_AUDIO_LABEL,
        domains=("Music",),
        license="cc-by-4.0",
        reference="https://huggingface.co/datasets/silky1708/BeijingOpera",
    )


class BirdCLEF(MaebTask, ClassificationTask):
    options = _LOGREG
    metadata = _meta(
        "BirdCLEF",
        "mteb/birdclef25-mini",
        "582215665b247604b555da7ff4e071f82d3617db",
        "BirdCLEF+ 2025 (mini): species of birds, amphibians, mammals and insects; "
        "5-fold cross-validation.",
        columns=Columns(audio="recording", label="primary_label"),
        domains=("Spoken", "Speech", "Bioacoustics"),
        license="cc-by-nc-4.0",
        reference="https://huggingface.co/datasets/christopher/birdclef-2025",
    )


_CREMA_D = ("mteb/crema-d", "a9d0821955c418752248b8310438854e56a1cf34")


class CREMA_D(MaebTask, ClassificationTask):
    options = _LOGREG
    metadata = _meta(
        "CREMA_D",
        *_CREMA_D,
        "CREMA-D acted emotions, 6 classes; 5-fold cross-validation.",
        columns=_AUDIO_LABEL,
        domains=("Speech",),
        license=_ODBL,
        reference="https://huggingface.co/datasets/silky1708/CREMA-D",
    )


class CommonLanguageAgeDetection(MaebTask, ClassificationTask):
    options = _LOGREG
    # The reference drops two age labels, then draws 2,048 test rows stratified by age.
    hub = HubData(exclude={"age": ("not_defined", "eighties")}, subsample=("test",))
    metadata = _meta(
        "CommonLanguageAgeDetection",
        "mteb/commonlanguage-age-mini",
        "a9c585af68d65a29c4ad12121f83853fa1cdda92",
        "CommonLanguage speaker age group; trained on the train split, scored on the test split.",
        columns=Columns(audio="audio", label="age"),
        splits=("train", "test"),
        domains=("Spoken", "Scene", "Speech"),
        license="cc-by-4.0",
        reference="https://huggingface.co/datasets/speechbrain/common_language",
    )


class GTZANGenre(MaebTask, ClassificationTask):
    options = _LOGREG
    metadata = _meta(
        "GTZANGenre",
        "mteb/gtzan-genre",
        "53efa094d18619a4e2bf36123192ec7a01a7d1bf",
        "GTZAN music genres, 10 classes; 5-fold cross-validation.",
        columns=_AUDIO_LABEL,
        domains=("Music",),
        license="not specified",
        reference="https://ieeexplore.ieee.org/abstract/document/1021072",
    )


class IEMOCAPGender(MaebTask, ClassificationTask):
    options = _LOGREG
    hub = HubData(relabel={"Female": "0", "Male": "1"})  # the reference's gender ids
    metadata = _meta(
        "IEMOCAPGender",
        "mteb/iemocap",
        "6d4225271da423e791e16770d335cfa351cdf88e",
        "IEMOCAP speaker gender (0 female, 1 male); 5-fold cross-validation.",
        columns=Columns(audio="audio", label="gender"),
        domains=("Spoken", "Speech"),
        license="cc-by-nc-sa-3.0",
        reference="https://doi.org/10.1007/s10579-008-9076-6",
    )


class MInDS14(MaebTask, ClassificationTask):
    options = _LOGREG
    hub = HubData(configs=MINDS14)
    metadata = _meta(
        "MInDS14",
        "mteb/minds14-multilingual",
        "58d73d2cddefab7df4bc0b814aa5c53c5fd4928e",
        "MInDS-14 spoken intents, 14 classes, 12 locales; 5-fold cross-validation per locale.",
        columns=Columns(audio="audio", label="intent_class"),
        subsets=MINDS14,
        domains=("Speech", "Spoken"),
        license="cc-by-4.0",
        reference="https://arxiv.org/abs/2104.08524",
    )


class MridinghamTonic(MaebTask, ClassificationTask):
    options = _LOGREG
    metadata = _meta(
        "MridinghamTonic",
        "mteb/mridingham-tonic",
        "9304553355441e3d2bf2432691b6209ff9a9339c",
        "Mridingham tonic, 6 classes; 5-fold cross-validation.",
        columns=_AUDIO_LABEL,
        domains=("Music",),
        license="cc-by-4.0",
        reference="https://huggingface.co/datasets/silky1708/Mridingham-Tonic",
    )


class SIBFLEURS(MaebTask, ClassificationTask):
    options = _LOGREG
    hub = HubData(configs=SIB_FLEURS)
    metadata = _meta(
        "SIBFLEURS",
        "mteb/sib-fleurs-multilingual-mini",
        "186b61175fbd77059f769b6bf1110d449a2ff311",
        "SIB-FLEURS spoken topic classification, 102 languages; 5-fold cross-validation per "
        "language.",
        columns=Columns(audio="audio", label="category"),
        subsets=SIB_FLEURS,
        domains=("Encyclopaedic",),
        license="cc-by-4.0",
        reference="https://huggingface.co/datasets/WueNLP/sib-fleurs",
    )


class VoxCelebSA(MaebTask, ClassificationTask):
    options = _LOGREG
    # The reference drops the "Disagreement" rows and cross-validates the hub's test split.
    hub = HubData(hub_splits={"train": "test"}, exclude={"label": ("Disagreement",)})
    metadata = _meta(
        "VoxCelebSA",
        "mteb/voxceleb-sentiment",
        "17fb326752c26b58491de360f0a6a152c9bfe19d",
        "VoxCeleb sentiment (SLUE); 5-fold cross-validation.",
        columns=_AUDIO_LABEL,
        domains=("Spoken",),
        license="cc-by-4.0",
        reference="https://huggingface.co/datasets/DynamicSuperb/Sentiment_Analysis_SLUE-VoxCeleb",
    )


class VoxPopuliLanguageID(MaebTask, ClassificationTask):
    options = _LOGREG
    hub = HubData(min_samples=500)  # the reference drops clips under 500 samples or with NaN
    metadata = _meta(
        "VoxPopuliLanguageID",
        "mteb/voxpopuli-mini",
        "d5fb9661054ba250e2c03adeb9a702ad55e73f27",
        "VoxPopuli spoken language, 5 European languages; 5-fold cross-validation.",
        columns=Columns(audio="audio", label="language"),
        domains=("Spoken", "Speech"),
        license="cc0-1.0",
        reference="https://huggingface.co/datasets/facebook/voxpopuli",
    )


class FSD2019Kaggle(MaebTask, ClassificationTask):
    options = ClassificationTask.Options(multilabel=True, label_separator=",", protocol="mteb")
    hub = HubData(configs=("curated",))  # MAEB scores the curated subset only
    metadata = _meta(
        "FSD2019Kaggle",
        "mteb/fsdkaggle2019-parquet",
        "ff7e6d9e57951b90024fcb6d4aef95d97f4fc64e",
        "FSDKaggle2019 (curated), multi-label sound events: one logistic regression per label, "
        "trained on train, scored on test; main score LRAP.",
        columns=Columns(audio="audio", label="sound"),
        splits=("train", "test"),
        subsets=("curated",),
        main_score="lrap",
        domains=("Web",),
        license="cc-by-4.0",
        reference="https://huggingface.co/datasets/confit/fsdkaggle2019-parquet",
    )


# ---------------------------------------------------------------------------- clustering (3)

_BOOTSTRAP = ClusteringTask.Options(protocol="mteb")


class CREMA_DClustering(MaebTask, ClusteringTask):
    options = _BOOTSTRAP
    hub = HubData(subsample=("train",))  # 2,048 rows stratified by emotion, as the reference
    metadata = _meta(
        "CREMA_DClustering",
        *_CREMA_D,
        "CREMA-D acted emotions clustered into 6 clusters.",
        columns=_AUDIO_LABEL,
        main_score="v_measure",
        domains=("Speech",),
        license=_ODBL,
        reference="https://ieeexplore.ieee.org/document/6849440",
    )


class VehicleSoundClustering(MaebTask, ClusteringTask):
    options = _BOOTSTRAP
    metadata = _meta(
        "VehicleSoundClustering",
        "mteb/Vehicle_sounds_classification_dataset",
        "5f905f9544d0c78b607639662c88c2ddd1216384",
        "Vehicle sounds recorded on smartphones (car; truck, bus and van; motorcycle) clustered.",
        columns=_AUDIO_LABEL,
        splits=("test",),
        main_score="v_measure",
        domains=("Scene",),
        license="not specified",
        reference="https://huggingface.co/datasets/DynamicSuperb/Vehicle_sounds_classification_dataset",
    )


class VoxPopuliGenderClustering(MaebTask, ClusteringTask):
    options = _BOOTSTRAP
    hub = HubData(relabel={"female": "0", "male": "1"})  # the reference's gender ids
    metadata = _meta(
        "VoxPopuliGenderClustering",
        "mteb/mini-voxpopuli",
        "310a01e178584866d5d15f89541da9fac235df7d",
        "VoxPopuli speakers clustered by gender.",
        columns=Columns(audio="audio", label="gender"),
        main_score="v_measure",
        domains=("Spoken", "Speech"),
        license="cc0-1.0",
        reference="https://huggingface.co/datasets/facebook/voxpopuli",
    )


# ---------------------------------------------------------------------------- pairs (3)

_PAIRS = PairClassificationTask.Options(protocol="mteb")
_PAIR_TABLE = HubData(layout="pairs")


def _pair_meta(name: str, path: str, revision: str, description: str, **kw: Any) -> TaskMetadata:
    return _meta(
        name, path, revision, description, columns=_AUDIO_LABEL, splits=("test",),
        main_score="max_ap", domains=("Spoken",), **kw,
    )  # fmt: skip


class CREMADPairClassification(MaebTask, PairClassificationTask):
    options, hub = _PAIRS, _PAIR_TABLE
    metadata = _pair_meta(
        "CREMADPairClassification",
        "mteb/CREMADPairClassification",
        "20701cbd51bf282719674c9f38ec91e698b62e48",
        "CREMA-D: do two actors' recordings express the same emotion?",
        license=_ODBL,
        reference="https://pmc.ncbi.nlm.nih.gov/articles/PMC4313618/",
    )


class NMSQAPairClassification(MaebTask, PairClassificationTask):
    options, hub = _PAIRS, _PAIR_TABLE
    metadata = _pair_meta(
        "NMSQAPairClassification",
        "mteb/NMSQAPairClassification",
        "d33eea302d8a64c0a2ee094cf39d77c0814fe87a",
        "NMSQA, textless question answering: is the spoken answer relevant to the spoken question?",
        license="cc-by-sa-4.0",
    )


class VoxPopuliAccentPairClassification(MaebTask, PairClassificationTask):
    options, hub = _PAIRS, _PAIR_TABLE
    metadata = _pair_meta(
        "VoxPopuliAccentPairClassification",
        "mteb/VoxPopuliAccentPairClassificationFiltered",
        "ac4587795abbac156982e41775e1428f5933a32e",
        "VoxPopuli English: do two speakers share a regional accent?",
        license="cc0-1.0",
        reference="https://aclanthology.org/2021.acl-long.80/",
    )


# ---------------------------------------------------------------------------- reranking (1)


class GTZANAudioReranking(MaebTask, RerankingTask):
    options = RerankingTask.Options(candidate_modality="audio", protocol="mteb")
    hub = HubData(layout="reranking", query_modality="audio")
    metadata = _meta(
        "GTZANAudioReranking",
        "mteb/GTZANAudioReranking",
        "e6cf8c1771177dbf88550dbdd8c867d676d15119",
        "GTZAN: a music clip reranks 13 candidates, 3 of its genre and 10 of others.",
        columns=Columns(audio="audio", label=None, required=("audio",)),
        splits=("test",),
        main_score="map_at_1000",
        domains=("Music",),
        license="not specified",
        reference="https://www.kaggle.com/datasets/andradaolteanu/gtzan-dataset-music-genre-classification",
    )


# ---------------------------------------------------------------------------- zero-shot (2)


def _zero_shot(classes: Sequence[str], label: str) -> tuple[Any, HubData]:
    """Options and data of a zero-shot task whose prompts are the candidate texts verbatim."""
    options = ZeroShotClassificationTask.Options(
        classes=tuple(classes), prompt_template="{label}", protocol="mteb"
    )
    return options, HubData(classes=tuple(classes), label_column=label)


_RAVDESS = ("neutral", "calm", "happy", "sad", "angry", "fearful", "disgust", "surprised")


class RavdessZeroshot(MaebTask, ZeroShotClassificationTask):
    options, hub = _zero_shot([f"this person is feeling {e}" for e in _RAVDESS], "labels")
    metadata = _meta(
        "RavdessZeroshot",
        "mteb/RavdessZeroshot",
        "9ab83d763c01b2dec59d79a6dcb44691d2fb80ee",
        "RAVDESS emotions, zero-shot: each clip is given the closest of 8 texts ('this person "
        "is feeling calm').",
        columns=Columns(audio="audio", label=None, extra=("labels",), required=("audio",)),
        main_score="accuracy",
        domains=("Spoken",),
        license="cc-by-nc-sa-3.0",
        reference="https://huggingface.co/datasets/narad/ravdess",
    )


class SpeechCommandsZeroshotv0_02(MaebTask, ZeroShotClassificationTask):
    options, hub = _zero_shot(
        ("Yes", "No", "Up", "Down", "Left", "Right", "On", "Off", "Stop", "Go"), "label"
    )
    metadata = _meta(
        "SpeechCommandsZeroshotv0.02",
        "mteb/SpeechCommandsZeroshotv0.02",
        "d5491b288ab76356a5f3cbc634f1dc38e23da2b8",
        "Speech Commands v0.02, zero-shot: each clip is given the closest of the 10 command words.",
        columns=Columns(audio="audio", label=None, extra=("label",), required=("audio",)),
        splits=("test",),
        main_score="accuracy",
        domains=("Spoken",),
        license="cc-by-4.0",
        reference="https://huggingface.co/datasets/google/speech_commands",
    )


# ---------------------------------------------------------------------------- benchmarks

#: MAEB(v1)'s tasks in its own order, and its audio-only selection.
MAEB_TASKS: tuple[str, ...] = (
    "ClothoT2ARetrieval", "CommonVoiceMini21T2ARetrieval", "FleursT2ARetrieval",
    "GigaSpeechT2ARetrieval", "JamAltArtistA2ARetrieval", "JamAltLyricA2TRetrieval",
    "MACST2ARetrieval", "SpokenSQuADT2ARetrieval", "UrbanSound8KT2ARetrieval",
    "BeijingOpera", "BirdCLEF", "CREMA_D", "CommonLanguageAgeDetection", "GTZANGenre",
    "IEMOCAPGender", "MInDS14", "MridinghamTonic", "SIBFLEURS", "VoxCelebSA",
    "VoxPopuliLanguageID",
    "CREMA_DClustering", "VehicleSoundClustering", "VoxPopuliGenderClustering",
    "CREMADPairClassification", "NMSQAPairClassification", "VoxPopuliAccentPairClassification",
    "GTZANAudioReranking",
    "RavdessZeroshot", "SpeechCommandsZeroshotv0.02",
    "FSD2019Kaggle",
)  # fmt: skip
MAEB_AUDIO_ONLY_TASKS: tuple[str, ...] = (
    "JamAltArtistA2ARetrieval",
    "BeijingOpera", "BirdCLEF", "CREMA_D", "CommonLanguageAgeDetection", "GTZANGenre",
    "IEMOCAPGender", "MInDS14", "MridinghamTonic", "SIBFLEURS", "VoxCelebSA",
    "VoxPopuliLanguageID",
    "CREMA_DClustering", "VehicleSoundClustering", "VoxPopuliGenderClustering",
    "CREMADPairClassification", "NMSQAPairClassification", "VoxPopuliAccentPairClassification",
    "GTZANAudioReranking",
)  # fmt: skip


def _benchmark(name: str, tasks: tuple[str, ...], description: str) -> Benchmark:
    declared = {
        c.metadata.name: c
        for c in globals().values()
        if isinstance(c, type) and issubclass(c, MaebTask) and hasattr(c, "metadata")
    }
    return Benchmark(
        task_types={task: mteb_task_type(declared[task]) for task in tasks},
        name=name,
        description=description,
        tasks=tasks,
        columns=tuple(
            ScoreColumn(name=task, task=task, score="main", aggregate=None) for task in tasks
        ),
        mean_of=tasks,
        rank_by=(MEAN,),
    )


MAEB = _benchmark(
    "MAEB",
    MAEB_TASKS,
    "MAEB(v1): 30 tasks (retrieval, classification, clustering, pair classification, "
    "reranking, zero-shot and multi-label classification), audio-only and audio–text, scored "
    "as MTEB scores them; ranked by the mean of the main scores (a model missing a task gets "
    "no mean, so audio-only models are ranked by MAEB-audio-only).",
)
MAEB_AUDIO_ONLY = _benchmark(
    "MAEB-audio-only",
    MAEB_AUDIO_ONLY_TASKS,
    "MAEB(v1, audio-only): the 19 MAEB tasks that need no text tower, scored as MTEB scores "
    "them; ranked by the mean of the main scores.",
)
