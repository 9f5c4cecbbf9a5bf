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
from audiobench.task import Synthetic, Task, TaskMetadata
from audiobench.tasks.svq import (
    SVQ_CITATION,
    SVQ_CROSS_LANG_LOCALES,
    SVQ_IN_LANG_LOCALES,
    SVQ_LICENSE,
    SVQ_LOCALES,
    SVQ_REFERENCE,
    SVQ_SOURCE,
    svq_folder,
    svq_task_rows,
    svq_utterances,
)

__all__ = [
    "SVQ_REASONING_TASKS",
    "MockSpanReasoning",
    "SVQEnUsSpanInLangReasoning",
    "SvqSpanReasoning",
]


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


#: SVQ's task file of each span-reasoning kind.
_TASK_FILES = {
    "SpanInLangReasoning": "span_reasoning_in_lang.jsonl",
    "SpanCrossLangReasoning": "span_reasoning_cross_lang.jsonl",
}


def _svq_metadata(locale: str, kind: str) -> TaskMetadata:
    english = "CrossLang" in kind or locale.startswith("en_")
    passage = "an English passage" if english else "a passage in its own language"
    return TaskMetadata(
        name=f"SVQ{SVQ_LOCALES[locale][0]}{kind}",
        description=(
            f"SVQ, {locale}: a spoken question picks its answer among the candidate spans of "
            f"{passage}, or 'No Answer' (MSEB's {kind}; all recording environments). "
            "MSEB's GmeanF1. Needs an audio-text model."
        ),
        dataset=SVQ_SOURCE,
        splits=("test",),
        main_score="GmeanF1",
        domains=("speech", "question answering"),
        license=SVQ_LICENSE,
        citation=SVQ_CITATION,
        reference=SVQ_REFERENCE,
    )


class SVQEnUsSpanInLangReasoning(SvqSpanReasoning):
    locale = "en_us"
    metadata = _svq_metadata("en_us", "SpanInLangReasoning")


def _svq_task(locale: str, kind: str) -> type[Task]:
    if (locale, kind) == ("en_us", "SpanInLangReasoning"):
        return SVQEnUsSpanInLangReasoning
    meta = _svq_metadata(locale, kind)
    attributes = {
        "locale": locale,
        "task_file": _TASK_FILES[kind],
        "metadata": meta,
        "__module__": __name__,
    }
    return type(meta.name, (SvqSpanReasoning,), attributes)


#: MSEB's 36 SVQ span-reasoning tasks under MSEB's names: in-language for 17 locales,
#: cross-language for 19 (the ``audiobench.task_catalogues`` entry point ``svq-reasoning``).
SVQ_REASONING_TASKS: tuple[type[Task], ...] = (
    *(_svq_task(locale, "SpanInLangReasoning") for locale in SVQ_IN_LANG_LOCALES),
    *(_svq_task(locale, "SpanCrossLangReasoning") for locale in SVQ_CROSS_LANG_LOCALES),
)
