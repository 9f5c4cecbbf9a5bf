"""MTEB's audio tasks that audiobench does not score, each with the reason.

``audiobench list tasks --json`` lists them (``"unsupported"`` holds the reason) beside the
declared ones, so that MTEB's 150 audio tasks are all accounted for; ``--task NAME`` on one of
them is an error giving the reason. A reason starting "needs" names what audiobench lacks.
"""

from __future__ import annotations

from audiobench.registry import UnsupportedTask
from audiobench.tasks.mteb_pins import PINS

__all__ = ["UNSUPPORTED"]

_VIDEO = "needs video input (audiobench encodes audio and text only)"
_IMAGE = "needs image input (audiobench encodes audio and text only)"
_COMPOSED = (
    "needs composed queries (an audio clip together with a text edit or time span); "
    "audiobench's retrieval queries are one modality"
)
_UNREAD = (
    "needs MTEB 2.26's definition of this task, which changes how the data is read and is not "
    "in the MTEB source audiobench was checked against; declaring it from a guess could "
    "publish a wrong number"
)

_COLUMN_NAMES = (
    "needs the hub loader to read queries and judgements under other column names "
    "('query-id', 'query', 'corpus-id')"
)
_SAME_SPLIT = (
    "needs few-shot training and scoring on the same split without cross-validation (the "
    "reference's set-up for this task); audiobench cross-validates a single split"
)

#: name -> (MTEB task type, audiobench family it would belong to, reason).
_REASONS: dict[str, tuple[str, str, str]] = {
    # Reranking across modalities (XModBench): image and video, or definitions not read.
    "XModBenchAT2IReranking": ("Any2AnyReranking", "reranking", _IMAGE),
    "XModBenchAT2VReranking": ("Any2AnyReranking", "reranking", _VIDEO),
    "XModBenchIT2AReranking": ("Any2AnyReranking", "reranking", _IMAGE),
    "XModBenchVT2AReranking": ("Any2AnyReranking", "reranking", _VIDEO),
    "XModBenchAT2TReranking": ("Any2AnyReranking", "reranking", f"{_COMPOSED}; {_UNREAD}"),
    "XModBenchT2AReranking": ("Any2AnyReranking", "reranking", _UNREAD),
    # Retrieval with video or images.
    "AVMemeExamAT2VRetrieval": ("Any2AnyRetrieval", "retrieval", _VIDEO),
    "AudioCapsAVVA2TRetrieval": ("Any2AnyRetrieval", "retrieval", _VIDEO),
    "AudioCapsAVVT2ARetrieval": ("Any2AnyRetrieval", "retrieval", _VIDEO),
    "GreatestHitsA2VRetrieval": ("Any2AnyRetrieval", "retrieval", _VIDEO),
    "GreatestHitsV2ARetrieval": ("Any2AnyRetrieval", "retrieval", _VIDEO),
    "VALOR32KT2VARetrieval": ("Any2AnyRetrieval", "retrieval", _VIDEO),
    "VATEXV2ARetrieval.v2": ("Any2AnyRetrieval", "retrieval", _VIDEO),
    "VATEXVA2TRetrieval.v2": ("Any2AnyRetrieval", "retrieval", _VIDEO),
    "VCDBCoreAudioVideoRetrieval": ("Any2AnyRetrieval", "retrieval", _VIDEO),
    "VGGSoundAVA2VRetrieval": ("Any2AnyRetrieval", "retrieval", _VIDEO),
    "YouCook2T2VARetrieval": ("Any2AnyRetrieval", "retrieval", _VIDEO),
    "SoundingEarthA2IRetrieval.v2": ("Any2AnyRetrieval", "retrieval", _IMAGE),
    "SoundingEarthI2ARetrieval.v2": ("Any2AnyRetrieval", "retrieval", _IMAGE),
    "SpeechCocoA2IRetrieval": ("Any2AnyRetrieval", "retrieval", _IMAGE),
    "SpeechCocoI2ARetrieval": ("Any2AnyRetrieval", "retrieval", _IMAGE),
    "SpokenCOCOA2IRetrieval": ("Any2AnyRetrieval", "retrieval", _IMAGE),
    "SpokenCOCOI2ARetrieval": ("Any2AnyRetrieval", "retrieval", _IMAGE),
    # Retrieval whose queries are an audio clip and a text together.
    "CLDAT2ARetrieval": ("Any2AnyRetrieval", "retrieval", _COMPOSED),
    "ClothoMomentRetrieval": ("Any2AnyRetrieval", "retrieval", _COMPOSED),
    "SpeechEditAcousticRetrieval": ("Any2AnyRetrieval", "retrieval", _COMPOSED),
    # Retrieval read in ways the hub loader does not do.
    "IncompeBenchLenientRetrieval": ("Any2AnyRetrieval", "retrieval", _COLUMN_NAMES),
    "IncompeBenchStrictRetrieval": ("Any2AnyRetrieval", "retrieval", _COLUMN_NAMES),
    "FleursA2TRetrieval.v2": ("Any2AnyRetrieval", "retrieval", _UNREAD),
    "FleursT2ARetrieval.v2": ("Any2AnyRetrieval", "retrieval", _UNREAD),
    # Classification set-ups the reference protocol does not have.
    "CSTRVCTKAccentID": ("AudioClassification", "classification", _SAME_SPLIT),
    "CSTRVCTKGender": ("AudioClassification", "classification", _SAME_SPLIT),
    "INatSounds": (
        "AudioClassification",
        "classification",
        "needs 3-fold cross-validation with one experiment (the reference protocol has 5 folds)",
    ),
    "IEMOCAPEmotion": (
        "AudioClassification",
        "classification",
        "needs labels renamed case-insensitively with unknown ones left out (the hub loader's "
        "renaming lists every label exactly)",
    ),
    "AudioSetMini": (
        "AudioMultilabelClassification",
        "classification",
        "needs label lists whose class names contain ',' (the loader joins a label list with "
        "',', which would split 'Male speech, man speaking')",
    ),
    "BirdSet": (
        "AudioMultilabelClassification",
        "classification",
        "needs 21 training clips per label (the reference protocol fixes 8) and eBird codes "
        "renamed to species names",
    ),
    "FSD2019Kaggle.v2": ("AudioMultilabelClassification", "classification", _UNREAD),
    "NSynthInstrumentFamilyClustering": ("AudioClustering", "clustering", _UNREAD),
    "TAUAcousticScenes2022MobileClustering": ("AudioClustering", "clustering", _UNREAD),
}

UNSUPPORTED: tuple[UnsupportedTask, ...] = tuple(
    UnsupportedTask(
        name=name,
        source=f"MTEB 2.26 {kind}",
        family=family,
        dataset=PINS[name][0],
        revision=PINS[name][1],
        reason=reason,
    )
    for name, (kind, family, reason) in _REASONS.items()
)
