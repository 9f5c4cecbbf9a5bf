"""Retrieval tasks: ESC-50 query by example, Clotho audio↔text, and offline mocks.

Real datasets (hub ids and revisions as MTEB pins them):

- ``ESC50Retrieval`` (audio→audio): ``ashraq/esc50``; the 400 clips of fold 5 query the
  1,600 clips of folds 1-4; relevant: same ``category`` (32 per query).
- ``ClothoA2TRetrieval`` / ``ClothoTextToAudioRetrieval`` (audio→text, text→audio):
  ``CLAPv2/Clotho`` test split, one row per clip with its captions in ``text`` joined by ``.``
  (read as MTEB's Clotho tasks read them); relevant: the captions of the query's own clip
  (audio→text: 5 per query) or the clip a caption describes (text→audio: 1). MAEB's own
  text→audio task, ``ClothoT2ARetrieval`` (``mteb/Clotho``, scored as MTEB scores it), is in
  ``tasks/maeb.py``.

Offline mocks (generated sounds, :mod:`audiobench.synthetic.sounds`): ``MockRetrieval``
(audio→audio), ``MockAudioTextRetrieval`` (audio→text) and ``MockTextAudioRetrieval``
(text→audio), whose captions are written from the parameters each sound was generated with.
"""

from __future__ import annotations

from audiobench.benchmark import Benchmark, ScoreColumn
from audiobench.families import RetrievalTask
from audiobench.task import Columns, DatasetSource, Synthetic, TaskMetadata
from audiobench.tasks.esc50 import (
    ESC50_CITATION,
    ESC50_COLUMNS,
    ESC50_LICENSE,
    ESC50_REFERENCE,
    ESC50_SOURCE,
)

__all__ = [
    "AUDIO_RETRIEVAL",
    "CLOTHO_CITATION",
    "CLOTHO_COLUMNS",
    "CLOTHO_SOURCE",
    "ClothoA2TRetrieval",
    "ClothoTextToAudioRetrieval",
    "ESC50Retrieval",
    "MockAudioTextRetrieval",
    "MockRetrieval",
    "MockTextAudioRetrieval",
]

_SOUNDS = "audiobench.synthetic.sounds:write_sounds"


# -- offline mocks -----------------------------------------------------------------------------


class MockRetrieval(RetrievalTask):
    """Query by example over generated sounds: 2 queries and 4 corpus clips per class."""

    metadata = TaskMetadata(
        name="MockRetrieval",
        description=(
            "Generated sounds of 8 classes (pitch contour × register × harmonics), 6 renditions "
            "each: 16 query clips retrieve the 32 corpus clips of their class (audio→audio). "
            "Runs offline."
        ),
        dataset=Synthetic(
            generator=_SOUNDS,
            seed=11,
            params={"classes": 8, "renditions": 6, "query_renditions": 2},
        ),
        main_score="mrr",
        domains=("synthetic",),
        license="Apache-2.0",
    )


class MockAudioTextRetrieval(RetrievalTask):
    """Generated sounds retrieve their generated captions (audio→text, needs a text tower)."""

    options = RetrievalTask.Options(document_modality="text", layout="paired")
    metadata = TaskMetadata(
        name="MockAudioTextRetrieval",
        description=(
            "Generated sounds of 8 classes, 3 renditions each, captioned from their generation "
            "parameters ('a loud rising whistle, high pitched, a pure tone'): each sound "
            "retrieves the captions of its class (audio→text). Needs an audio-text model. "
            "Runs offline."
        ),
        dataset=Synthetic(
            generator=_SOUNDS, seed=12, params={"classes": 8, "renditions": 3, "captions": True}
        ),
        main_score="mrr",
        domains=("synthetic",),
        license="Apache-2.0",
    )


class MockTextAudioRetrieval(MockAudioTextRetrieval):
    """Generated captions retrieve the sounds they describe (text→audio)."""

    options = RetrievalTask.Options(query_modality="text", layout="paired")
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
    options = RetrievalTask.Options(
        split_field="fold", query_splits=("5",), corpus_splits=("1", "2", "3", "4")
    )
    metadata = TaskMetadata(
        name="ESC50Retrieval",
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
    options = RetrievalTask.Options(document_modality="text", layout="paired", text_separator=".")
    metadata = _clotho_metadata(
        "ClothoA2TRetrieval",
        "a2t",
        "Clotho test split, audio→text: each clip ranks all captions; relevant are its own "
        "(5 per clip). Needs an audio-text model.",
    )


class ClothoTextToAudioRetrieval(ClothoA2TRetrieval):
    options = RetrievalTask.Options(query_modality="text", layout="paired", text_separator=".")
    metadata = _clotho_metadata(
        "ClothoTextToAudioRetrieval",
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
    tasks=("ESC50Retrieval", "ClothoTextToAudioRetrieval", "ClothoA2TRetrieval"),
    columns=(
        ScoreColumn(name="ESC-50 MRR", task="ESC50Retrieval", score="mrr", aggregate=None),
        ScoreColumn(
            name="Clotho T2A MRR", task="ClothoTextToAudioRetrieval", score="mrr", aggregate=None
        ),
        ScoreColumn(name="Clotho A2T MRR", task="ClothoA2TRetrieval", score="mrr", aggregate=None),
    ),
    # The mean needs all three (audio-only models have no Clotho scores); those
    # are then ranked by ESC-50 alone, after every model with a mean.
    mean_of=("ESC-50 MRR", "Clotho T2A MRR", "Clotho A2T MRR"),
    rank_by=("mean", "ESC-50 MRR"),
)
