"""MSEB's protocol for reasoning (span QA): dot-product span choice, "No Answer", GmeanF1.

Per subset (MSEB scores each noise slice as its own run, so a fitted threshold belongs to the
subset):

1. The question clips are embedded by the encoder's audio tower (pooled: one vector per clip,
   which is MSEB's row 0 of a one-row output) and every distinct span text by its text tower.
2. Each span's score is the raw dot product of its text embedding with the question's, in the
   question embeddings' floating dtype (float32 stays float32, as in MSEB); nothing is
   normalised.
3. The answer is the first highest-scoring span, or "No Answer" without spans or when that
   score is below the threshold: the ``no_answer_threshold`` option, else the Bayes boundary of
   a two-component Gaussian mixture fitted to the subset's best scores
   (:func:`audiobench.metrics.span_qa.select_answers`).
4. The answers are scored against the references with MSEB's F1 (no text normalisation),
   ``GmeanF1`` (main), ``InvalidResultRate`` and ``MissingResultRate``
   (:func:`audiobench.metrics.span_qa.span_qa_scores`).

Clips the runner skipped (``--on-error skip``) are left out and counted (``n_unembedded``).

An encoder that answers in text (it produces :class:`~audiobench.outputs.Answer` outputs,
MSEB's ``TextPrediction``) skips steps 1-3: its answers, cached by the runner, are the
predictions as given (``text_answers`` true, no threshold), scored as in step 4.
"""

from __future__ import annotations

from typing import Annotated, Any, cast

import numpy as np
from pydantic import Field, model_validator

from audiobench import reports as _reports
from audiobench.audio import Clip
from audiobench.encoder import Encoder
from audiobench.errors import DataError, OptionError
from audiobench.evaluators.evaluator import Evaluator
from audiobench.evaluators.registry import register
from audiobench.families.ranking_inputs import check_same_width, embed_text_matrix, parse_list
from audiobench.metrics.errors import InvalidEmbeddingsError
from audiobench.metrics.mseb_conventions import NO_ANSWER
from audiobench.metrics.naming import describe_clips
from audiobench.outputs import CONTEXT_KEY, Answer, OutputType
from audiobench.reports import Count, Report, Summary, Unit
from audiobench.task import Embedder, Subset, Task, TaskFamily

__all__ = ["METRICS", "MsebReasoningEvaluator", "ReasoningReport", "ReasoningSummary"]

#: MSEB's reasoning scores, each a share in [0, 1]; ``GmeanF1`` is the main one.
METRICS = ("GmeanF1", "F1", "InvalidResultRate", "MissingResultRate")

#: The population std of values in [0, 1] is at most 1/2.
_HalfUnit = Annotated[float, Field(ge=0.0, le=0.5)]


class ReasoningScores(Report):
    GmeanF1: Unit = Field(description="F1_A^w · F1_U^(1−w), w the answerable share (main).")
    F1: Unit = Field(description="Mean per-example F1 (MSEB's, without normalisation).")
    InvalidResultRate: Unit = Field(description="Share of invalid answers ('').")
    MissingResultRate: Unit = Field(description="Share of missing answers ('NO_RESPONSE').")


class ReasoningReport(ReasoningScores):
    """One subset: MSEB's scores, their spreads, the group means and what was counted."""

    F1_std: _HalfUnit
    InvalidResultRate_std: _HalfUnit
    MissingResultRate_std: _HalfUnit
    answerable_F1: Unit = Field(description="F1_A: mean F1 over answerable examples (0: none).")
    no_answer_F1: Unit = Field(description="F1_U: mean F1 over 'No Answer' examples (0: none).")
    n_examples: Count
    n_answerable: Count
    n_no_answer: Count
    n_predicted_no_answer: Count
    n_without_spans: Count = Field(description="Examples without candidate spans.")
    n_answer_not_in_spans: Count = Field(
        description="Answerable examples whose reference is none of their spans."
    )
    n_unembedded: Count
    no_answer_threshold: float | None = Field(
        description="The threshold applied (None: no example had spans)."
    )
    threshold_fitted: bool = Field(description="Fitted on the subset (True) or given (False).")
    text_answers: bool = Field(
        False, description="The encoder answered in text (no span scores, no threshold)."
    )

    @model_validator(mode="after")
    def _consistent(self) -> ReasoningReport:
        """The counts add up and ``GmeanF1`` is the weighted geometric mean of the groups."""
        if self.n_answerable + self.n_no_answer != self.n_examples or self.n_examples == 0:
            raise ValueError(
                f"n_answerable ({self.n_answerable}) + n_no_answer ({self.n_no_answer}) must "
                f"equal n_examples ({self.n_examples}), which must be positive"
            )
        for name in ("n_predicted_no_answer", "n_without_spans"):
            if getattr(self, name) > self.n_examples:
                raise ValueError(f"{name} exceeds n_examples ({self.n_examples})")
        if self.n_answer_not_in_spans > self.n_answerable:
            raise ValueError(f"n_answer_not_in_spans exceeds n_answerable ({self.n_answerable})")
        weight = self.n_answerable / self.n_examples
        expected = self.answerable_F1**weight * self.no_answer_F1 ** (1.0 - weight)
        if not _reports.same_number(self.GmeanF1, expected):
            raise ValueError(
                f"GmeanF1: {self.GmeanF1!r} is not answerable_F1^w · no_answer_F1^(1−w) "
                f"({expected!r}, w = {weight!r})"
            )
        mean = weight * self.answerable_F1 + (1.0 - weight) * self.no_answer_F1
        if not _reports.same_number(self.F1, mean):
            raise ValueError(f"F1: {self.F1!r} is not the mean of the two groups ({mean!r})")
        return self


class ReasoningSummary(Summary, ReasoningScores):
    """Unweighted mean over subsets of each of MSEB's scores."""

    n_subsets: Count


#: One question: its clip, its candidate spans (in order) and its reference answer.
_Example = tuple[Clip, list[str], str]


def _example(clip: Clip) -> _Example:
    if "spans" not in clip.metadata:
        raise DataError(f"clip {clip.id!r}: no 'spans' (the candidate answers) in its metadata")
    answer = clip.metadata.get("answer")
    if not isinstance(answer, str) or not answer.strip():
        raise DataError(
            f"clip {clip.id!r}: 'answer' must be the reference span or {NO_ANSWER!r}, got "
            f"{answer!r}"
        )
    spans = parse_list(clip.metadata["spans"], field="spans", clip_id=clip.id)
    return clip, spans, answer.strip()


def _non_finite(matrix: np.ndarray, names: list[str]) -> list[str]:
    return [names[int(i)] for i in np.flatnonzero(~np.isfinite(matrix).all(axis=1))]


@register
class MsebReasoningEvaluator(Evaluator):
    family = TaskFamily.REASONING
    protocol = "mseb"
    Report = ReasoningReport
    Summary = ReasoningSummary

    @classmethod
    def check_main_score(cls, task: type[Task], path: tuple[str, ...]) -> None:
        task.require_main_score(path, METRICS)

    @classmethod
    def embedding_passes(cls, task: Task, encoder: Encoder) -> tuple[bool, ...]:
        return () if OutputType.ANSWER in encoder.produces else (True,)

    @classmethod
    def evaluate_subset(cls, task: Task, embedder: Embedder, subset: Subset) -> _reports.Report:
        from audiobench.metrics.span_qa import select_answers

        examples = [_example(clip) for clip in subset.clips]
        if OutputType.ANSWER in embedder.encoder.produces:
            return _text_answers(embedder, subset, examples)
        kept, audio = embedder.embed_matrix(subset.clips, subset.label)
        if not kept:
            raise DataError(f"{subset.where}: no question clip could be embedded")
        by_id = {clip.id: (spans, answer) for clip, spans, answer in examples}
        spans_of = [by_id[clip.id][0] for clip in kept]
        answers = [by_id[clip.id][1] for clip in kept]
        # MSEB scores in the embeddings' own dtype: float32 stays float32 (a float32 text
        # embedding returns exactly from the float64 matrix below).
        dtype = np.float32 if audio.dtype == np.float32 else np.float64
        audio = audio.astype(dtype, copy=False)
        bad = _non_finite(audio, [clip.id for clip in kept])
        if bad:  # named by clip, so that --on-error skip can leave them out
            raise InvalidEmbeddingsError(
                f"{subset.where}: question embeddings have NaN or infinite values: "
                f"{describe_clips(bad)}",
                bad,
            )
        rows, text = embed_text_matrix(
            embedder, [s for spans in spans_of for s in spans], f"{subset.label} spans"
        )
        if rows:
            check_same_width(audio, text, "audio", "text", embedder.encoder.meta.name)
            text = text.astype(dtype)
            bad = _non_finite(text, list(rows))
            if bad:
                raise DataError(
                    f"{subset.where}: the text embeddings of span(s) {describe_clips(bad)} have "
                    "NaN or infinite values"
                )
        scores = [
            text[[rows[s] for s in spans]] @ query if spans else np.zeros(0, dtype)
            for query, spans in zip(audio, spans_of, strict=True)
        ]
        o = cast(Any, task.options)
        try:
            chosen = select_answers(scores, spans_of, threshold=o.no_answer_threshold)
        except ValueError as exc:
            raise OptionError(
                f"{subset.where}: {exc}; set it with --task-option no_answer_threshold=<score>"
            ) from None
        return _report(
            answers,
            chosen.predictions,
            spans_of,
            n_unembedded=len(subset.clips) - len(kept),
            threshold=chosen.threshold,
            fitted=o.no_answer_threshold is None and chosen.threshold is not None,
        )

    @classmethod
    def describe(cls, task: Task) -> dict[str, Any]:
        o = cast(Any, task.options)
        return {
            "scoring": "MSEB span QA: dot product of each span's text embedding with the "
            "question's audio embedding (unnormalised); first best span answers. Encoders "
            "that answer in text: their answers as given",
            "no_answer_threshold": o.no_answer_threshold,
            "threshold": (
                "given"
                if o.no_answer_threshold is not None
                else "fitted per subset: Bayes boundary of a 2-component GaussianMixture "
                "(random_state=42) on the best span scores"
            ),
            "f1": "MSEB's: whitespace tokens as multisets, no normalisation",
        }


def _text_answers(embedder: Embedder, subset: Subset, examples: list[_Example]) -> ReasoningReport:
    """MSEB's scores of an encoder's answers in text, taken as they are."""
    if embedder.encoder.reads_context:
        missing = [c.id for c in subset.clips if not c.metadata.get(CONTEXT_KEY)]
        if missing:
            raise DataError(
                f"{subset.where}: model {embedder.encoder.meta.name!r} answers from each "
                f"question's context (metadata {CONTEXT_KEY!r}), and {len(missing)} clip(s) "
                f"have none: {describe_clips(missing)}"
            )
    kept, outputs = embedder.outputs(subset.clips, subset.label, OutputType.ANSWER)
    if not kept:
        raise DataError(f"{subset.where}: no question could be answered")
    by_id = {clip.id: (spans, answer) for clip, spans, answer in examples}
    return _report(
        [by_id[clip.id][1] for clip in kept],
        [cast(Answer, output).text for output in outputs],
        [by_id[clip.id][0] for clip in kept],
        n_unembedded=len(subset.clips) - len(kept),
        threshold=None,
        fitted=False,
        text_answers=True,
    )


def _report(
    answers: list[str],
    predictions: list[str],
    spans_of: list[list[str]],
    *,
    n_unembedded: int,
    threshold: float | None,
    fitted: bool,
    text_answers: bool = False,
) -> ReasoningReport:
    from audiobench.metrics.span_qa import span_qa_scores

    result = span_qa_scores(answers, predictions)
    return ReasoningReport(
        GmeanF1=result.gmean_f1,
        F1=result.f1,
        InvalidResultRate=result.invalid_result_rate,
        MissingResultRate=result.missing_result_rate,
        F1_std=result.f1_std,
        InvalidResultRate_std=result.invalid_result_rate_std,
        MissingResultRate_std=result.missing_result_rate_std,
        answerable_F1=result.answerable_f1,
        no_answer_F1=result.no_answer_f1,
        n_examples=len(answers),
        n_answerable=result.n_answerable,
        n_no_answer=result.n_no_answer,
        n_predicted_no_answer=sum(p == NO_ANSWER for p in predictions),
        n_without_spans=sum(not spans for spans in spans_of),
        n_answer_not_in_spans=sum(
            a != NO_ANSWER and a not in s for a, s in zip(answers, spans_of, strict=True)
        ),
        n_unembedded=n_unembedded,
        no_answer_threshold=threshold,
        threshold_fitted=fitted,
        text_answers=text_answers,
    )
