"""Reranking tasks: Clotho caption reranking, and offline mocks with text and audio candidates.

``ClothoReranking`` is built from the Clotho test split (``CLAPv2/Clotho``, the same pinned
revision as the retrieval tasks) when the data is loaded, by
:func:`~audiobench.synthetic.candidates.caption_candidates`: each clip is a query whose
candidates are its own 5 captions (the positives) and the captions of the 4 other clips whose
captions are most alike its own (TF-IDF cosine over the clips' joined captions: hard
negatives), 25 candidates in a fixed pseudo-random order. A negative caption that equals one of
the positives (ignoring case and spacing) is dropped, and repeated texts are kept once. This is
a reranking of MSEB's kind (an audio query, text candidates, the true texts among look-alikes),
on an environmental-sound dataset; its WER/CER read the top-ranked caption as a transcript of
the clip.

Offline mocks (:mod:`audiobench.synthetic.candidates`): ``MockReranking`` (generated sounds,
text candidates built the same way from their generated captions, written to ``labels.csv``
joined by ``|``) and ``MockAudioReranking`` (audio candidates: clip ids of other generated
sounds).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from audiobench.audio import Clip
from audiobench.benchmark import Benchmark, ScoreColumn
from audiobench.families import RerankingTask
from audiobench.task import Synthetic, TaskMetadata
from audiobench.tasks.retrieval import CLOTHO_CITATION, CLOTHO_COLUMNS, CLOTHO_SOURCE

__all__ = ["AUDIO_RERANKING", "ClothoReranking", "MockAudioReranking", "MockReranking"]


class MockReranking(RerankingTask):
    metadata = TaskMetadata(
        name="MockReranking",
        description=(
            "Generated sounds of 8 classes, 3 renditions each; each sound reranks 6 generated "
            "captions: its own and those of the 5 most alike sounds of other classes. mAP, "
            "MRR, nDCG, and WER/CER of the top caption. Needs an audio-text model. Runs offline."
        ),
        dataset=Synthetic(
            generator="audiobench.synthetic.candidates:write_caption_reranking",
            seed=21,
            params={"classes": 8, "renditions": 3, "n_negatives": 5},
        ),
        main_score="map",
        domains=("synthetic",),
        license="Apache-2.0",
    )


class MockAudioReranking(RerankingTask):
    options = RerankingTask.Options(candidate_modality="audio")
    metadata = TaskMetadata(
        name="MockAudioReranking",
        description=(
            "Generated sounds of 6 classes, 4 renditions each; each sound reranks 8 other "
            "sounds: the 3 other renditions of its class and one sound of every other class "
            "(audio candidates). Runs offline."
        ),
        dataset=Synthetic(
            generator="audiobench.synthetic.candidates:write_audio_reranking",
            seed=22,
            params={"classes": 6, "renditions": 4},
        ),
        main_score="map",
        domains=("synthetic",),
        license="Apache-2.0",
    )


#: How ClothoReranking's lists are built from the captions. Fixed parts of the task's data,
#: not options: other values would make another dataset.
_CLOTHO_CAPTION_SEPARATOR = "."  # joins a clip's captions in the ``text`` column
_CLOTHO_NEGATIVE_CLIPS = 4
_CLOTHO_SEED = 0


class ClothoReranking(RerankingTask):
    metadata = TaskMetadata(
        name="ClothoReranking",
        description=(
            "Clotho test split: each clip reranks 25 captions, its own 5 and those of the 4 "
            "clips with the most alike captions (TF-IDF hard negatives). mAP, MRR, nDCG, and "
            "WER/CER of the top caption. Needs an audio-text model."
        ),
        dataset=CLOTHO_SOURCE,
        columns=CLOTHO_COLUMNS,
        splits=("test",),
        main_score="map",
        domains=("environmental", "audio-text"),
        license="MIT",
        citation=CLOTHO_CITATION,
        reference="https://github.com/audio-captioning/clotho-dataset",
        sample_rate=44100,
    )

    def load_data(
        self, progress: Callable[[str], None] | None = None, *, missing_ok: bool = False
    ) -> list[Clip]:
        """The Clotho clips, each made a query with its candidates and positives."""
        from audiobench.synthetic.candidates import caption_candidates

        clips = super().load_data(progress, missing_ok=missing_ok)
        texts = [
            [p for p in (c.text or "").split(_CLOTHO_CAPTION_SEPARATOR) if p.strip()] for c in clips
        ]
        lists = caption_candidates(
            texts, [None] * len(clips), n_negatives=_CLOTHO_NEGATIVE_CLIPS, seed=_CLOTHO_SEED
        )
        return [
            dataclasses.replace(
                clip, metadata={**clip.metadata, "candidates": cands, "positives": pos}
            )
            for clip, (cands, pos) in zip(clips, lists, strict=True)
        ]


AUDIO_RERANKING = Benchmark(
    name="AudioReranking",
    description="Reranking: Clotho captions reranked by each clip; mAP.",
    tasks=("ClothoReranking",),
    columns=(ScoreColumn(name="Clotho mAP", task="ClothoReranking", score="map", aggregate=None),),
    rank_by=("Clotho mAP",),
)
