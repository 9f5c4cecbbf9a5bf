"""Reasoning: extractive span QA over a text context for a spoken question (MSEB's super task).

A reasoning task holds spoken questions. Each clip is one question and carries, in
``Clip.metadata``:

- ``spans``: the candidate answers, texts cut from the context (a list, or in a folder
  ``labels.csv`` one cell joined by ``|``,
  :data:`~audiobench.families.ranking_inputs.LIST_SEPARATOR`); an empty list is allowed (the
  answer is then "No Answer");
- ``answer``: the reference, one of the spans' texts or the literal ``"No Answer"`` when the
  context does not answer the question;
- ``context`` and ``title`` (optional): the passage and its page title. Embedding encoders do
  not read them (the spans are cut from the context); they are kept for encoders that answer
  in text.

How the task is scored belongs to the evaluator its ``protocol`` option selects
(:mod:`audiobench.evaluators`); ``"mseb"`` (:mod:`audiobench.evaluators.reasoning`) is MSEB's:
each span is scored by the dot product of its text embedding with the question's audio
embedding, the best span answers unless its score is below the no-answer threshold (given by
``no_answer_threshold`` or fitted per subset as MSEB fits it), and the answers are scored with
MSEB's F1 and its main score ``GmeanF1`` (:mod:`audiobench.metrics.span_qa`).

**Encoders.** Scoring spans needs an encoder with a text tower (an audio-text model, or a
speech → text-embedding cascade); any other is refused before audio is decoded, and one that
returns codes (``output_kind="tokens"``) is refused by name. Encoders that answer in text
(MSEB's ``TextPrediction``: they produce :class:`~audiobench.outputs.Answer` outputs and read
each clip's ``context``, e.g. ``extractive-qa``, a transcriber then an extractive QA reader)
are scored on their answers as given, with no spans and no threshold.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from audiobench.encoder import Encoder, OutputKind
from audiobench.evaluators.evaluator import EvaluatedTask
from audiobench.families.mseb_options import MsebProtocolOptions
from audiobench.families.ranking_inputs import require_text_tower
from audiobench.outputs import OutputType
from audiobench.task import TaskFamily

__all__ = ["ReasoningTask"]


class ReasoningTask(EvaluatedTask):
    """Base class of span-QA reasoning tasks; subclasses declare metadata (and options)."""

    family: ClassVar[TaskFamily] = TaskFamily.REASONING
    needs_labels = False  # the reference is metadata["answer"]
    also_scores: ClassVar[frozenset[OutputType]] = frozenset({OutputType.ANSWER})

    class Options(MsebProtocolOptions):
        no_answer_threshold: float | None = Field(
            None,
            description="Answer 'No Answer' when the best span's score is below this; None: "
            "fitted per subset (two-component Gaussian mixture on the best scores, as MSEB).",
        )

    options = Options()

    @classmethod
    def check_encoder(cls, encoder: Encoder) -> None:
        if OutputType.ANSWER in encoder.produces:
            return  # answers in text: scored as given
        if encoder.meta.output_kind == OutputKind.TOKENS:
            raise ValueError(
                f"model {encoder.meta.name!r} returns codes (output_kind tokens); span QA "
                "scores embeddings of the question and spans, or answers in text (e.g. "
                "--model extractive-qa)"
            )
        require_text_tower(
            encoder,
            True,
            "span QA scores candidate answer texts against the spoken question and needs an "
            "audio-text model (or a speech -> text-embedding cascade)",
        )
