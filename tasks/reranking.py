"""Reranking tasks: Clotho caption reranking, and offline mocks with text and audio candidates.

``ClothoReranking`` is built from the Clotho test split (``CLAPv2/Clotho``, the same pinned
revision as the retrieval tasks) when the data is loaded, by :func:`caption_candidates`:
each clip is a query whose candidates are its own 5 captions (the positives) and the captions
of the 4 other clips whose captions are most alike its own (TF-IDF cosine over the clips'
joined captions: hard negatives), 25 candidates in a fixed pseudo-random order. A negative
caption that equals one of the positives (ignoring case and spacing) is dropped, and repeated
texts are kept once. This is a reranking of MSEB's kind (an audio query, text candidates, the
true texts among look-alikes), on an environmental-sound dataset; its WER/CER read the
top-ranked caption as a transcript of the clip.

Offline mocks: ``MockReranking`` (generated sounds, text candidates built the same way from
their generated captions, written to ``labels.csv`` joined by ``|``) and
``MockAudioReranking`` (audio candidates: clip ids of other generated sounds).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from audiobench.audio import Clip
from audiobench.benchmark import Benchmark, ScoreColumn
from audiobench.families import RerankingTask
from audiobench.families.retrieval import LIST_SEPARATOR
from audiobench.task import DatasetSource, TaskFamily, TaskMetadata
from audiobench.tasks.retrieval import (
    CLOTHO_CITATION,
    CLOTHO_COLUMNS,
    CLOTHO_SOURCE,
    mock_classes,
    write_labels,
    write_sounds,
)

__all__ = [
    "AUDIO_RERANKING",
    "ClothoReranking",
    "MockAudioReranking",
    "MockReranking",
    "caption_candidates",
]

#: Rows of the similarity matrix computed at once (bounds memory on large datasets).
_BLOCK = 512


def _key(text: str) -> str:
    return " ".join(text.lower().split())


def caption_candidates(
    texts: Sequence[Sequence[str]],
    labels: Sequence[str | None],
    *,
    n_negatives: int,
    seed: int,
) -> list[tuple[list[str], list[str]]]:
    """For each item, ``(candidates, positives)``: its own texts plus hard-negative texts.

    The hard negatives of item i are the texts of the ``n_negatives`` other items most similar
    to it (cosine of TF-IDF vectors of each item's texts joined; ties to the lower index),
    leaving out items with the same non-empty label. Texts equal to a positive or to an earlier
    candidate (ignoring case and spacing) are dropped, and an item left with no new text does
    not count towards ``n_negatives``. The list is shuffled by a generator seeded with
    ``(seed, i)``, so positives are not always first (ties in the scores go to the earlier
    candidate).
    """
    from sklearn.feature_extraction.text import TfidfVectorizer

    n = len(texts)
    if len(labels) != n:
        raise ValueError(f"got {len(labels)} labels for {n} items")
    vectors = TfidfVectorizer().fit_transform([" ".join(t) for t in texts])
    label_array = np.array([label if label is not None else "" for label in labels], dtype=object)
    out: list[tuple[list[str], list[str]]] = []
    for start in range(0, n, _BLOCK):
        block = (vectors[start : start + _BLOCK] @ vectors.T).toarray()
        for offset, row in enumerate(block):
            i = start + offset
            excluded = label_array == label_array[i] if labels[i] is not None else np.zeros(n, bool)
            excluded[i] = True
            positives = list(dict.fromkeys(t.strip() for t in texts[i] if t.strip()))
            taken = {_key(t) for t in positives}
            candidates = list(positives)
            n_taken = 0
            for j in np.lexsort((np.arange(n), -row)):
                if n_taken == n_negatives:
                    break
                new = [t.strip() for t in texts[j] if t.strip() and _key(t) not in taken]
                if excluded[j] or not new:
                    continue
                n_taken += 1
                for text in new:
                    if _key(text) not in taken:
                        taken.add(_key(text))
                        candidates.append(text)
            shuffle = np.random.default_rng([seed, i]).permutation(len(candidates))
            out.append(([candidates[k] for k in shuffle], positives))
    return out


_MOCK_SOURCE = DatasetSource(kind="synthetic", path="audiobench.tasks.reranking", revision="v1")


class MockReranking(RerankingTask):
    candidate_modality = "text"
    metadata = TaskMetadata(
        name="MockReranking",
        family=TaskFamily.RERANKING,
        description=(
            "Generated sounds of 8 classes, 3 renditions each; each sound reranks 6 generated "
            "captions: its own and those of the 5 most alike sounds of other classes. mAP, "
            "MRR, nDCG, and WER/CER of the top caption. Needs an audio-text model. Runs offline."
        ),
        dataset=_MOCK_SOURCE,
        main_score="map",
        domains=("synthetic",),
        license="Apache-2.0",
    )

    def generate_data(self, directory: Path) -> None:
        rows = write_sounds(directory, mock_classes(8, seed=21), 3, seed=21)
        lists = caption_candidates(
            [[row["text"]] for row in rows], [row["label"] for row in rows], n_negatives=5, seed=21
        )
        for row, (candidates, positives) in zip(rows, lists, strict=True):
            row.update(
                split="query",
                candidates=LIST_SEPARATOR.join(candidates),
                positives=LIST_SEPARATOR.join(positives),
            )
        write_labels(
            directory, rows, ("file", "id", "label", "text", "split", "candidates", "positives")
        )


class MockAudioReranking(RerankingTask):
    candidate_modality = "audio"
    metadata = TaskMetadata(
        name="MockAudioReranking",
        family=TaskFamily.RERANKING,
        description=(
            "Generated sounds of 6 classes, 4 renditions each; each sound reranks 8 other "
            "sounds: the 3 other renditions of its class and one sound of every other class "
            "(audio candidates). Runs offline."
        ),
        dataset=_MOCK_SOURCE,
        main_score="map",
        domains=("synthetic",),
        license="Apache-2.0",
    )

    def generate_data(self, directory: Path) -> None:
        rows = write_sounds(directory, mock_classes(6, seed=22), 4, seed=22)
        by_class: dict[str, list[str]] = {}
        for row in rows:
            by_class.setdefault(row["label"], []).append(row["id"])
        for i, row in enumerate(rows):
            rng = np.random.default_rng([22, i])
            positives = [c for c in by_class[row["label"]] if c != row["id"]]
            negatives = [
                ids[int(rng.integers(len(ids)))]
                for label, ids in by_class.items()
                if label != row["label"]
            ]
            candidates = [*positives, *negatives]
            candidates = [candidates[k] for k in rng.permutation(len(candidates))]
            row.update(
                split="query",
                candidates=LIST_SEPARATOR.join(candidates),
                positives=LIST_SEPARATOR.join(positives),
            )
        write_labels(directory, rows, ("file", "id", "label", "split", "candidates", "positives"))


class ClothoReranking(RerankingTask):
    candidate_modality = "text"
    #: Captions of one clip are joined by this in the dataset's ``text`` column.
    text_separator = "."
    n_negative_clips = 4
    seed = 0
    metadata = TaskMetadata(
        name="ClothoReranking",
        family=TaskFamily.RERANKING,
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

    def load_data(self, progress: Callable[[str], None] | None = None) -> list[Clip]:
        """The Clotho clips, each made a query with its candidates and positives."""
        clips = super().load_data(progress)
        texts = [[p for p in (c.text or "").split(self.text_separator) if p.strip()] for c in clips]
        lists = caption_candidates(
            texts, [None] * len(clips), n_negatives=self.n_negative_clips, seed=self.seed
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
