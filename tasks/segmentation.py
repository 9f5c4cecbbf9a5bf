"""Salient-term segmentation tasks: an offline mock.

``MockSegmentation`` runs offline on the generated utterances of ``MockTranscription``
(en_us and sw), whose reference salient terms are each utterance's three words of highest
IDF over its locale's transcripts, with their times. MSEB's cascade baseline (timed
transcript → top three words by IDF) on the true word times (``transcript-truth``) finds
them all; a recogniser's timed words are scored against them with MSEB's segmentation
metrics, main score ``ndcg``.
"""

from __future__ import annotations

from audiobench.families import SegmentationTask
from audiobench.task import Columns, Synthetic, TaskFamily, TaskMetadata

__all__ = ["MockSegmentation"]


class MockSegmentation(SegmentationTask):
    metadata = TaskMetadata(
        name="MockSegmentation",
        family=TaskFamily.SEGMENTATION,
        description=(
            "Generated speech-like utterances in two locales (en_us, sw) with three reference "
            "salient terms each and their times; MSEB's IDF cascade over the model's timed "
            "words, scored by MSEB's positional NDCG (main), hit accuracies (±0.05 s), mAP "
            "and term WER. Runs offline."
        ),
        dataset=Synthetic(
            generator="audiobench.synthetic.utterances:write_utterances",
            seed=20261128,
            params={"per_subset": 6},
        ),
        columns=Columns(label=None, text="text", subset="subset", required=("audio",)),
        subsets=("en_us", "sw"),
        main_score="ndcg",
        domains=("synthetic", "speech"),
        license="Apache-2.0",
    )
