"""Reasoning (span QA) tasks: SVQ's English in-language span reasoning, and an offline mock.

``SVQEnUsSpanInLangReasoning`` is MSEB's task of that name (``mseb_tasks.json``): the en_us
rows of SVQ's ``span_reasoning_in_lang.jsonl``; each spoken question (looked up by ``utt_id``)
carries its candidate ``spans``, its reference ``span`` (or "No Answer"), the passage
(``passage_text``) and its ``page_title``. All utterances are scored together, which is
MSEB's main line (``span_reasoning_in_lang``); MSEB also reports each recording environment
as its own line, kept in each clip's metadata (``environment``) here. SVQ is read from the
default branch, as MSEB reads it: unpinned (:mod:`audiobench.tasks.svq`).

``MockSpanReasoning``: spoken questions about generated passages
(:func:`audiobench.synthetic.spoken.write_span_qa`), half of them unanswerable; offline with
any audio-text model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from audiobench.audio import Clip
from audiobench.families import ReasoningTask
from audiobench.sources import DatasetError
from audiobench.task import Synthetic, TaskMetadata
from audiobench.tasks.svq import (
    SVQ_CITATION,
    SVQ_LICENSE,
    SVQ_REFERENCE,
    SVQ_SOURCE,
    svq_folder,
    svq_task_rows,
    svq_utterances,
)

__all__ = ["MockSpanReasoning", "SVQEnUsSpanInLangReasoning", "SvqSpanReasoning"]


class MockSpanReasoning(ReasoningTask):
    metadata = TaskMetadata(
        name="MockSpanReasoning",
        description=(
            "Generated speech-like questions about 12 generated passages, one answerable and "
            "one unanswerable per passage; each picks its answer among the passage's 5 "
            "candidate spans or says 'No Answer'. MSEB's GmeanF1. Needs an audio-text model. "
            "Runs offline."
        ),
        dataset=Synthetic(
            generator="audiobench.synthetic.spoken:write_span_qa",
            seed=24,
            params={"n_passages": 12},
        ),
        main_score="GmeanF1",
        domains=("synthetic", "speech"),
        license="Apache-2.0",
    )


class SvqSpanReasoning(ReasoningTask):
    """SVQ span reasoning of one locale (MSEB's ``SVQ<Loc>Span...Reasoning``)."""

    locale: ClassVar[str]
    task_file: ClassVar[str] = "span_reasoning_in_lang.jsonl"

    def read_clips(self, say: Callable[[str], None], *, missing_ok: bool) -> list[Clip]:
        """The locale's questions, in the task file's order, with spans and references."""
        folder = svq_folder(self.name, self.dataset_path, self.dataset_revision, self.task_file)
        say(f"reading SVQ from {folder}")
        utterances = svq_utterances(folder, self.name)
        clips: list[Clip] = []
        seen: set[str] = set()
        for row in svq_task_rows(folder, self.task_file, self.name):
            if row["locale"] != self.locale:
                continue
            where = f"{self.name}: {self.task_file} line {row['_line']}"
            utt = utterances.get(row["utt_id"])
            if utt is None:
                raise DatasetError(f"{where}: utterance {row['utt_id']!r} is not in the index")
            if utt.id in seen:
                raise DatasetError(f"{where}: utterance {utt.id!r} is asked twice")
            seen.add(utt.id)
            spans, answer = row.get("spans"), row.get("span")
            if not isinstance(spans, list) or not all(isinstance(s, str) for s in spans):
                raise DatasetError(f"{where}: 'spans' must be a list of texts")
            if not isinstance(answer, str):
                raise DatasetError(f"{where}: 'span' must be the answer text or 'No Answer'")
            clips.append(
                Clip(
                    id=utt.id,
                    audio=utt.audio,
                    text=utt.text,
                    metadata={
                        "spans": spans,
                        "answer": answer,
                        "context": row.get("passage_text"),
                        "title": row.get("page_title"),
                        "environment": utt.environment,
                    },
                )
            )
        if not clips:
            raise DatasetError(f"{self.name}: {self.task_file} has no rows of locale {self.locale}")
        return clips


class SVQEnUsSpanInLangReasoning(SvqSpanReasoning):
    locale = "en_us"
    metadata = TaskMetadata(
        name="SVQEnUsSpanInLangReasoning",
        description=(
            "SVQ, en_us: a spoken question picks its answer among the candidate spans of an "
            "English passage, or 'No Answer' (MSEB's SpanInLangReasoning; all recording "
            "environments). MSEB's GmeanF1. Needs an audio-text model."
        ),
        dataset=SVQ_SOURCE,
        splits=("test",),
        main_score="GmeanF1",
        domains=("speech", "question answering"),
        license=SVQ_LICENSE,
        citation=SVQ_CITATION,
        reference=SVQ_REFERENCE,
    )
