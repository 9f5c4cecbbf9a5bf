"""Salient-term segmentation: which terms of an utterance matter, and where they are.

A segmentation task holds clips with their reference salient terms, ordered, each with its
start and end in seconds (clip metadata ``terms_key``: a JSON list of ``[term, start, end]``),
and the clip's transcript (``Clip.text``, for the IDF table). The encoder must produce timed
transcripts (:class:`~audiobench.outputs.TimedTranscript`: Whisper with alignment heads, the
``transcript-truth`` oracle where the data has word times); the evaluator then runs MSEB's
cascade baseline on them: the ``top_k`` words by IDF, each with its span and its IDF as the
score (:mod:`audiobench.metrics.salient_terms`), scored with MSEB's segmentation metrics,
over all clips of a subset and, where clips name a recording environment
(``environment_key``), over each environment's clips (MSEB's noise sub-tasks; the IDF table
and the predictions stay those of the whole subset).

Scoring belongs to the evaluator the ``protocol`` option selects; ``"mseb"``
(:mod:`audiobench.evaluators.segmentation`). Main score ``ndcg`` (MSEB's positional NDCG).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from audiobench.encoder import Encoder
from audiobench.evaluators.evaluator import EvaluatedTask
from audiobench.families.mseb_options import MsebProtocolOptions
from audiobench.outputs import OutputType
from audiobench.task import TaskFamily

__all__ = ["SegmentationTask"]


class SegmentationTask(EvaluatedTask):
    """Base class of salient-term segmentation tasks; subclasses declare metadata."""

    family: ClassVar[TaskFamily] = TaskFamily.SEGMENTATION
    needs_labels: ClassVar[bool] = False
    needs_output: ClassVar[OutputType] = OutputType.WORD_TIMINGS

    class Options(MsebProtocolOptions):
        terms_key: str = Field(
            "salient_terms",
            min_length=1,
            description="Clip metadata holding the reference terms: a JSON list of "
            "[term, start s, end s], most salient first.",
        )
        idf_table: str = Field(
            "task",
            min_length=1,
            description="'task': IDF ln(N/df) over the transcripts of the subset's clips; or "
            "a token,idf CSV file (MSEB's table format).",
        )
        top_k: int = Field(3, ge=1, description="Terms the cascade keeps per utterance.")
        tau: float = Field(
            0.05, ge=0.0, description="Time tolerance in seconds on start and end (MSEB: 0.05)."
        )
        environment_key: str | None = Field(
            "environment",
            description="Clip metadata naming the recording environment; each environment "
            "is also scored on its own (MSEB's noise sub-tasks). None: no slices.",
        )

    options = Options()

    def embedding_passes(self, encoder: Encoder) -> tuple[bool, ...]:
        return ()  # timed transcripts, not embeddings
