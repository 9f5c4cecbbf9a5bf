"""Transcription: an encoder's transcript of each clip, scored against the dataset's text.

A transcription task holds clips with their reference transcript (``Clip.text``), split into
subsets (locales, for MSEB's SVQ) and, where the data has one, a recording environment per
clip (``Clip.metadata[environment_key]``). The encoder must produce transcripts
(:class:`~audiobench.outputs.Transcript`): an ASR model (every Whisper, ``hf:`` Whisper
checkpoints) or the ``transcript-truth`` oracle; an embedding model is refused before any
work. Transcripts are cached like embeddings.

Scoring belongs to the evaluator the ``protocol`` option selects; ``"mseb"``
(:mod:`audiobench.evaluators.transcription`) computes MSEB's corpus WER, sentence error rate
and no-result rate after Whisper's normalisers, and the character error rate beside them,
per subset and per environment. Main score ``wer`` (lower is better).

Data contract: every clip carries a transcript (an empty one is allowed; a missing one is an
error naming the clips). ``needs_labels`` is off: transcripts, not labels, are the truth.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from audiobench.encoder import Encoder
from audiobench.evaluators.evaluator import EvaluatedTask
from audiobench.families.mseb_options import MsebProtocolOptions
from audiobench.outputs import OutputType
from audiobench.task import TaskFamily

__all__ = ["DEFAULT_SPELLING_TABLE", "TranscriptionTask"]

#: Where MSEB's English normaliser gets its British → American spelling table by default:
#: the ``normalizer.json`` every Whisper tokenizer ships.
DEFAULT_SPELLING_TABLE = "openai/whisper-large-v3"


class TranscriptionTask(EvaluatedTask):
    """Base class of transcription tasks; subclasses declare metadata (and other options)."""

    family: ClassVar[TaskFamily] = TaskFamily.TRANSCRIPTION
    needs_labels: ClassVar[bool] = False
    needs_output: ClassVar[OutputType] = OutputType.TRANSCRIPT

    class Options(MsebProtocolOptions):
        normalizer: str = Field(
            "whisper",
            pattern=r"^(whisper|none)$",
            description="'whisper': MSEB's choice, Whisper's English normaliser for English "
            "locales and its basic normaliser otherwise; 'none': texts compared as given.",
        )
        locale: str | None = Field(
            default=None,
            description="Locale whose normaliser applies (en_us, ja_jp...); None: each "
            "subset's name (SVQ's subsets are locales).",
        )
        spelling_table: str = Field(
            DEFAULT_SPELLING_TABLE,
            min_length=1,
            description="English normaliser's British→American spelling table: a Whisper "
            "tokenizer (hub id or local directory) whose normalizer.json holds it, a "
            "normalizer.json file, or 'none' to skip that step (differs from MSEB).",
        )
        environment_key: str | None = Field(
            "environment",
            description="Clip metadata naming the recording environment; each environment "
            "is also scored on its own (MSEB's noise slices). None: no slices.",
        )

    options = Options()

    def embedding_passes(self, encoder: Encoder) -> tuple[bool, ...]:
        return ()  # transcripts, not embeddings: nothing for the Ray stage to fill

    def highlights(self, scores: Any) -> list[str]:
        lines = super().highlights(scores)
        return [f"{lines[0]} (word error rate: lower is better)"]
