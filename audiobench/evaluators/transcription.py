"""MSEB's transcription protocol (``protocol="mseb"``): corpus WER, SER, no-result rate, CER.

Each subset's transcripts (:class:`~audiobench.outputs.Transcript`, cached by the runner) are
scored against the clips' reference text by
:func:`audiobench.metrics.transcription.transcription_scores`, after the normaliser MSEB
applies: Whisper's ``EnglishTextNormalizer`` (with the British → American spelling table of
a Whisper tokenizer, option ``spelling_table``) for English locales, ``BasicTextNormalizer``
otherwise, the locale being the ``locale`` option or else the subset's name.

Per subset the report holds MSEB's ``WER`` (``wer``, Σ word edits / Σ reference words,
with MSEB's weighted std), ``SER`` (``ser``), ``NoResultRate`` (``no_result_rate``),
``UtteranceCount`` and ``WordCount``, and the character error rate under its own name
(``character_error_rate``; MSEB reports none). Where clips carry a recording environment
(``environment_key``), the same scores per environment (MSEB's noise slices: clean,
media_noise, traffic_noise, background_speech). The summary is the unweighted mean over
subsets. An encoder answering ``"NO_RESPONSE"`` is scored as MSEB scores it (an empty
transcript, a sentence error).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, cast

from audiobench import reports as _reports
from audiobench.errors import DataError, OptionError
from audiobench.evaluators.evaluator import Evaluator
from audiobench.evaluators.registry import register
from audiobench.outputs import OutputType, Transcript
from audiobench.reports import Count, NonNegative, Report, Summary, Unit
from audiobench.task import DEFAULT_SUBSET, Embedder, Subset, Task, TaskFamily, error_in_context

__all__ = [
    "METRICS",
    "TranscriptionEvaluator",
    "TranscriptionReport",
    "TranscriptionSummary",
    "english_spelling_table",
]

#: Scores a main score may name.
METRICS = ("wer", "ser", "no_result_rate", "character_error_rate")


class _Scores(Report):
    """MSEB's transcription metrics of a set of utterances, and the character error rate.

    A run sets every field. MSEB's published lines (``results import-mseb``) hold neither the
    character error rate (audiobench's own) nor, before MSEB counted them, the counts: such a
    reported result leaves them out rather than invent them.
    """

    wer: NonNegative
    wer_std: NonNegative
    ser: Unit
    ser_std: NonNegative
    no_result_rate: Unit
    character_error_rate: NonNegative | None = None
    utterance_count: Count | None = None
    word_count: Count | None = None


class TranscriptionReport(_Scores):
    """One subset: its scores, and the same per recording environment (None: no slices)."""

    environments: dict[str, _Scores] | None = None


class TranscriptionSummary(Summary):
    """Unweighted mean over subsets."""

    wer: NonNegative
    ser: Unit
    no_result_rate: Unit
    character_error_rate: NonNegative | None = None  # absent from MSEB's published lines


@functools.lru_cache(maxsize=8)
def english_spelling_table(source: str) -> dict[str, str]:
    """Whisper's British → American spelling table from ``source``.

    ``source``: a ``normalizer.json`` file, or a Whisper tokenizer (local directory or hub
    id) that ships one; ``"none"`` gives ``{}`` (no spelling step).
    """
    if source == "none":
        return {}
    path = Path(source).expanduser()
    if path.is_file():
        try:
            table = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise OptionError(f"spelling_table {source!r}: cannot read it as JSON: {exc}") from None
        if not isinstance(table, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in table.items()
        ):
            raise OptionError(f"spelling_table {source!r}: not a JSON object of strings")
        return dict(table)
    import transformers

    from audiobench.models.loading import ModelLoadError, from_pretrained

    try:
        tokenizer = from_pretrained(
            transformers.WhisperTokenizer, source, what="Whisper tokenizer (spelling table)"
        )
    except ModelLoadError as exc:
        raise OptionError(
            f"spelling_table {source!r}: {exc}\nOr pass --task-option spelling_table=<a "
            "normalizer.json file or Whisper tokenizer directory>, or spelling_table=none "
            "(skips British→American spelling, which differs from MSEB)"
        ) from None
    table = tokenizer.english_spelling_normalizer
    if not table:
        raise OptionError(
            f"spelling_table {source!r}: this tokenizer ships no normalizer.json; name a "
            "Whisper tokenizer that does (e.g. openai/whisper-large-v3), or pass 'none'"
        )
    return dict(table)


def _normalizer(task: Task, subset: Subset) -> Any:
    from audiobench.metrics.transcription import whisper_normalizer

    o = cast(Any, task.options)
    if o.normalizer == "none":
        return None
    locale = o.locale or (subset.name if subset.name != DEFAULT_SUBSET else None)
    if locale is None:
        raise OptionError(
            f"{subset.where}: the Whisper normaliser depends on the locale and the task has "
            "no subsets naming one; pass --task-option locale=<en_us, ja_jp...> "
            "(or normalizer=none)"
        )
    language = locale.replace("-", "_").split("_")[0].lower()
    table = english_spelling_table(o.spelling_table) if language == "en" else None
    return whisper_normalizer(locale, english_spelling_mapping=table)


def _scores(references: list[str], hypotheses: list[str], normalizer: Any) -> _Scores:
    from audiobench.metrics.transcription import transcription_scores

    s = transcription_scores(references, hypotheses, normalizer=normalizer)
    return _Scores(
        wer=s.wer,
        wer_std=s.wer_std,
        ser=s.ser,
        ser_std=s.ser_std,
        no_result_rate=s.no_result_rate,
        character_error_rate=s.character_error_rate,
        utterance_count=s.utterance_count,
        word_count=s.word_count,
    )


@register
class TranscriptionEvaluator(Evaluator):
    family = TaskFamily.TRANSCRIPTION
    protocol = "mseb"
    Report = TranscriptionReport
    Summary = TranscriptionSummary

    @classmethod
    def check_main_score(cls, task: type[Task], path: tuple[str, ...]) -> None:
        task.require_main_score(path, METRICS)

    @classmethod
    def evaluate_subset(cls, task: Task, embedder: Embedder, subset: Subset) -> _reports.Report:
        from audiobench.metrics.naming import describe_clips

        untranscribed = [c.id for c in subset.clips if c.text is None]
        if untranscribed:
            raise DataError(
                f"{subset.where}: {len(untranscribed)} clip(s) have no reference transcript "
                f"(text column): {describe_clips(untranscribed)}"
            )
        normalizer = _normalizer(task, subset)
        kept, outputs = embedder.outputs(subset.clips, subset.label, OutputType.TRANSCRIPT)
        if not kept:
            raise DataError(f"{subset.where}: no clip left to score")
        references = [c.text or "" for c in kept]
        hypotheses = [cast(Transcript, o).text for o in outputs]
        try:
            overall = _scores(references, hypotheses, normalizer)
        except ValueError as exc:
            raise error_in_context(exc, subset.where) from exc
        key = cast(Any, task.options).environment_key
        environments: dict[str, _Scores] | None = None
        if key is not None:
            groups: dict[str, list[int]] = {}
            for i, clip in enumerate(kept):
                value = clip.metadata.get(key)
                if value is not None and str(value) != "":
                    groups.setdefault(str(value), []).append(i)
            if groups:
                environments = {}
                undefined = []
                for name in sorted(groups):
                    idx = groups[name]
                    try:
                        environments[name] = _scores(
                            [references[i] for i in idx], [hypotheses[i] for i in idx], normalizer
                        )
                    except ValueError:  # every reference of the slice normalises to nothing
                        undefined.append(name)
                if undefined:
                    subset.details["environments_without_words"] = undefined
        return TranscriptionReport(**overall.model_dump(), environments=environments)

    @classmethod
    def describe(cls, task: Task) -> dict[str, Any]:
        o = cast(Any, task.options)
        return {
            "metrics": "MSEB transcription: corpus WER = sum of word edits / sum of reference "
            "words; SER; NoResultRate; plus character_error_rate (not an MSEB metric)",
            "normalizer": (
                "none"
                if o.normalizer == "none"
                else "whisper: EnglishTextNormalizer for English locales, "
                "BasicTextNormalizer otherwise"
            ),
            "locale": o.locale or "the subset's name",
            "spelling_table": o.spelling_table,
            "environment_key": o.environment_key,
        }
