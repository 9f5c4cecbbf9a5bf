"""MSEB's segmentation protocol (``protocol="mseb"``) over the IDF cascade's salient terms.

Per subset: the encoder's timed transcripts (cached by the runner) go through MSEB's cascade
baseline — the ``top_k`` words by IDF (:func:`audiobench.metrics.salient_terms.top_terms`,
the table built from the subset's transcripts or read from a ``token,idf`` CSV), each with
its word's start and end and its IDF as the score — and are scored against the clips'
reference terms by :func:`audiobench.metrics.segmentation.segmentation_scores` with
tolerance ``tau``: ``ndcg`` (MSEB's ``NDCG``, main), the hit counts and accuracies
(``TimestampsAndEmbeddings…``, ``Timestamps…``, ``Embeddings…``), ``num_segments``,
``word_error_rate`` (``WordErrorRate``), ``map`` (``mAP``) and the invalid / missing rates.
Where clips name a recording environment (option ``environment_key``), each environment's
clips are scored on their own as well (``environments``: MSEB's ``salient_term:clean`` ...
sub-tasks, whose references are the slice's and whose predictions are those made for the
whole subset). The summary is the unweighted mean over subsets.
"""

from __future__ import annotations

import json
from typing import Any, cast

from audiobench import reports as _reports
from audiobench.errors import DataError, OptionError
from audiobench.evaluators.evaluator import Evaluator
from audiobench.evaluators.registry import register
from audiobench.outputs import OutputType, TimedTranscript
from audiobench.reports import Count, NonNegative, Report, Summary, Unit
from audiobench.task import Embedder, Subset, Task, TaskFamily, error_in_context

__all__ = [
    "METRICS",
    "SegmentationEvaluator",
    "SegmentationReport",
    "SegmentationScores",
    "SegmentationSummary",
]

#: Scores a main score may name.
METRICS = (
    "ndcg",
    "timestamps_and_embeddings_accuracy",
    "timestamps_accuracy",
    "embeddings_accuracy",
    "word_error_rate",
    "map",
)


class _Rates(Report):
    """The scores a summary averages: MSEB's NDCG, accuracies, term WER and mAP."""

    ndcg: Unit
    timestamps_and_embeddings_accuracy: Unit
    timestamps_accuracy: Unit
    embeddings_accuracy: Unit
    word_error_rate: NonNegative
    map: Unit


class SegmentationSummary(Summary, _Rates):
    """Unweighted mean over subsets."""


class SegmentationScores(_Rates):
    """One set of utterances: the rates, the hit counts they come from, and the sizes."""

    timestamps_and_embeddings_hits: Count
    timestamps_hits: Count
    embeddings_hits: Count
    num_segments: Count
    invalid_result_rate: Unit
    missing_result_rate: Unit
    utterance_count: Count
    scored_predictions: Count


class SegmentationReport(SegmentationScores):
    """One subset: its scores, and the same per recording environment (None: no slices)."""

    environments: dict[str, SegmentationScores] | None = None


def _reference(clip: Any, key: str, where: str) -> list[Any]:
    from audiobench.metrics.segmentation import TimedTerm

    raw = clip.metadata.get(key)
    if raw is None:
        raise DataError(f"{where}: clip {clip.id!r} has no reference terms (metadata {key!r})")
    try:
        items = json.loads(raw) if isinstance(raw, str) else raw
        return [TimedTerm(str(t), float(s), float(e)) for t, s, e in items]
    except (TypeError, ValueError) as exc:
        raise DataError(
            f"{where}: clip {clip.id!r}: {key} must be a JSON list of [term, start, end] ({exc})"
        ) from None


def _table(task: Task, subset: Subset) -> dict[str, float]:
    from audiobench.metrics.salient_terms import idf_table, read_idf_csv

    source = cast(Any, task.options).idf_table
    if source != "task":
        try:
            return read_idf_csv(source)
        except OSError as exc:
            raise OptionError(
                f"idf_table {source!r}: cannot read it ({exc.strerror or exc}); pass a "
                "token,idf CSV file or 'task'"
            ) from None
        except ValueError as exc:
            raise OptionError(f"idf_table: {exc}") from None
    texts = [c.text for c in subset.clips if c.text]
    if not texts:
        raise DataError(
            f"{subset.where}: idf_table=task builds the IDF table from the clips' transcripts "
            "and none has one; pass --task-option idf_table=<token,idf CSV>"
        )
    return idf_table(texts)


def _confidence(words: Any) -> float:
    """MSEB's factor on every term's IDF: exp(Σ word scores) when the recogniser scored all its
    words (log-probabilities), else 1 (``mseb/encoders/segmentation_encoder.py``)."""
    import numpy as np

    scores = [w.score for w in words]
    if not scores or any(score is None for score in scores):
        return 1.0
    return float(np.exp(np.sum(np.array(scores, dtype=float))))


@register
class SegmentationEvaluator(Evaluator):
    family = TaskFamily.SEGMENTATION
    protocol = "mseb"
    Report = SegmentationReport
    Summary = SegmentationSummary

    @classmethod
    def check_main_score(cls, task: type[Task], path: tuple[str, ...]) -> None:
        task.require_main_score(path, METRICS)

    @classmethod
    def evaluate_subset(cls, task: Task, embedder: Embedder, subset: Subset) -> _reports.Report:
        from audiobench.metrics.salient_terms import top_terms
        from audiobench.metrics.segmentation import TimedTerm

        o = cast(Any, task.options)
        references = {c.id: _reference(c, o.terms_key, subset.where) for c in subset.clips}
        table = _table(task, subset)
        kept, outputs = embedder.outputs(subset.clips, subset.label, OutputType.WORD_TIMINGS)
        if not kept:
            raise DataError(f"{subset.where}: no clip left to score")
        predictions = []
        for output in outputs:
            words = cast(TimedTranscript, output).words
            chosen = top_terms(
                [w.word for w in words], table, o.top_k, confidence=_confidence(words)
            )
            predictions.append(
                [TimedTerm(term, words[i].start, words[i].end, score) for term, score, i in chosen]
            )
        overall = _scores([references[c.id] for c in kept], predictions, o.tau, subset.where)
        environments: dict[str, SegmentationScores] | None = None
        if o.environment_key is not None:
            groups: dict[str, list[int]] = {}
            for i, clip in enumerate(kept):
                value = clip.metadata.get(o.environment_key)
                if value is not None and str(value) != "":
                    groups.setdefault(str(value), []).append(i)
            if groups:
                environments = {
                    name: _scores(
                        [references[kept[i].id] for i in idx],
                        [predictions[i] for i in idx],
                        o.tau,
                        f"{subset.where}, environment {name!r}",
                    )
                    for name, idx in sorted(groups.items())
                }
        return SegmentationReport(**overall.model_dump(), environments=environments)

    @classmethod
    def describe(cls, task: Task) -> dict[str, Any]:
        o = cast(Any, task.options)
        return {
            "cascade": f"timed transcript -> top {o.top_k} words by IDF (score: the IDF, "
            "times exp of the sum of the word scores where the recogniser gives them), "
            "their words' times",
            "idf_table": "ln(N/df) over the subset's transcripts"
            if o.idf_table == "task"
            else o.idf_table,
            "tau_s": o.tau,
            "metrics": "MSEB segmentation: positional NDCG, greedy 3-pass hits, mAP, term WER",
            "environment_key": o.environment_key,
        }


def _scores(
    references: list[Any], predictions: list[Any], tau: float, where: str
) -> SegmentationScores:
    from audiobench.metrics.segmentation import segmentation_scores

    try:
        s = segmentation_scores(references, predictions, tau=tau)
    except ValueError as exc:
        raise error_in_context(exc, where) from exc
    return SegmentationScores(
        ndcg=s.ndcg,
        timestamps_and_embeddings_accuracy=s.timestamps_and_embeddings_accuracy,
        timestamps_accuracy=s.timestamps_accuracy,
        embeddings_accuracy=s.embeddings_accuracy,
        word_error_rate=s.word_error_rate,
        map=s.mean_average_precision,
        timestamps_and_embeddings_hits=s.timestamps_and_embeddings_hits,
        timestamps_hits=s.timestamps_hits,
        embeddings_hits=s.embeddings_hits,
        num_segments=s.num_segments,
        invalid_result_rate=s.invalid_result_rate,
        missing_result_rate=s.missing_result_rate,
        utterance_count=s.n_utterances,
        scored_predictions=s.n_scored_predictions,
    )
