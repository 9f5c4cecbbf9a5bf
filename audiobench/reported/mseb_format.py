"""MSEB's result lines: which MSEB metric each report key is, and how tasks and sub-tasks map.

MSEB writes one JSON line per *sub-task* of a task to ``<results>/<encoder>/<Task>.jsonl``.
A line names the encoder (``name``), the sub-task (``sub_task_name``), the task's metadata
(``task_metadata``: name, type, main score, dataset, languages...) and its ``scores``: score
objects ``{"metric", "description", "value", "min", "max", "std"}``, the efficiency scores
``mean_encoding_size_bytes`` and ``flops`` last. ``max`` is ``Infinity`` (a JSON extension
MSEB writes) for unbounded metrics.

How an audiobench result maps onto lines, for every family alike:

- **task**: a task scored the MSEB way by default (``protocol="mseb"``) is MSEB's task of the
  same name when it has one subset; a task holding several of MSEB's tasks as subsets (one
  per locale) names them in ``mseb_task_names`` (subset -> MSEB task name).
- **sub-task**: the report's own scores are the base sub-task (``speech_transcription``,
  from MSEB's task type, :data:`TASK_TYPES`); ``environments`` (MSEB's noise slices) are
  ``<base>:<environment>``; ``targets`` (SVQ clustering's speaker targets) are one sub-task
  each, scored by the family's main metric.
- **scores**: :data:`METRICS` pairs each MSEB metric with the report key holding it, per
  family; ``<key>_std`` is its ``std``. Report fields MSEB has no metric for (audiobench's
  counts, extra metrics) travel in the line's ``task_specific_data["audiobench"]``, which
  MSEB's reader ignores, so an exported line imports back to the same report.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from audiobench.task import Task

__all__ = [
    "AUDIOBENCH_DATA",
    "EFFICIENCY",
    "ENVIRONMENTS",
    "METRICS",
    "TARGETS",
    "TASK_TYPES",
    "MsebMetric",
    "TaskType",
    "metric_for_key",
    "mseb_task_names",
    "task_type",
]

#: The key of ``task_specific_data`` holding the report fields MSEB has no metric for.
AUDIOBENCH_DATA = "audiobench"
#: Report field holding MSEB's noise slices (``<base>:<environment>`` sub-tasks).
ENVIRONMENTS = "environments"
#: Report field holding SVQ clustering's per-target scores (one sub-task each).
TARGETS = "targets"

_INF = math.inf


@dataclass(frozen=True)
class MsebMetric:
    """One of MSEB's score objects: its name, the report key holding it, its description and
    bounds as MSEB writes them (an int or a float; ``max`` may be infinite)."""

    name: str
    key: str
    description: str
    min: float
    max: float


def _m(name: str, key: str, description: str, lo: float = 0, hi: float = 1) -> MsebMetric:
    return MsebMetric(name, key, description, lo, hi)


_NO_RESULT = _m("NoResultRate", "no_result_rate", "No result rate")
_INVALID = _m("InvalidResultRate", "invalid_result_rate", "Invalid result rate")
_MISSING = _m("MissingResultRate", "missing_result_rate", "Missing result rate", 0.0, 1.0)
_MRR = _m("MRR", "mrr", "Mean Reciprocal Rank")
_WER = _m("WER", "wer", "Word Error Rate", 0, _INF)
_CLASS = "Overall classification accuracy"

#: MSEB's metrics per audiobench family, in the order MSEB writes them.
METRICS: Mapping[str, tuple[MsebMetric, ...]] = {
    "transcription": (
        _WER,
        _m("SER", "ser", "Sentence Error Rate", 0, _INF),
        _m(
            "NoResultRate",
            "no_result_rate",
            "No result rate, for example, the server failed to return a result.",
        ),
        _m("UtteranceCount", "utterance_count", "Number of utterances scored.", 0, _INF),
        _m("WordCount", "word_count", "Number of words in reference transcripts.", 0, _INF),
    ),
    "retrieval": (
        _MRR,
        _m("EM", "em", "Exact Match"),
        _m("RecallAt10", "recall_at_10", "Recall at 10"),
        _m("RecallAtInf", "recall_at_inf", "Recall at Inf"),
        _INVALID,
        _NO_RESULT,
        _m("NDCG@10", "ndcg_at_10", "Normalized Discounted Cumulative Gain at 10"),
    ),
    "reranking": (
        _m("MAP", "map", "Mean Average Precision"),
        _MRR,
        _WER,
        _m("CER", "candidate_error_rate", "Candidate Error Rate", 0, _INF),
        _m("NDCG", "ndcg", "Normalized Discounted Cumulative Gain"),
        _INVALID,
        _NO_RESULT,
    ),
    "reasoning": (
        _m("GmeanF1", "GmeanF1", "Geometric mean F1 score"),
        _m("F1", "F1", "F1 score"),
        _m("InvalidResultRate", "InvalidResultRate", "Invalid result rate"),
        _m("MissingResultRate", "MissingResultRate", "Missing result rate"),
    ),
    "segmentation": (
        _m(
            "TimestampsAccuracy",
            "timestamps_accuracy",
            "Temporal Precision: share of predicted segments whose start and end times are "
            "both within the tolerance (tau) of the reference timestamps.",
            0.0,
            1.0,
        ),
        _m(
            "EmbeddingsAccuracy",
            "embeddings_accuracy",
            "Content Accuracy: share of predicted segments whose term matches the reference, "
            "irrespective of its timing.",
            0.0,
            1.0,
        ),
        _m(
            "TimestampsAndEmbeddingsAccuracy",
            "timestamps_and_embeddings_accuracy",
            "Overall Accuracy: share of segments right in both term and time (within tau).",
            0.0,
            1.0,
        ),
        # MSEB bounds the hit counts by the number of reference segments (written per line).
        _m("TimestampsHits", "timestamps_hits", "Reference segments aligned in time.", 0.0, _INF),
        _m("EmbeddingsHits", "embeddings_hits", "Reference segments matched in term.", 0.0, _INF),
        _m(
            "TimestampsAndEmbeddingsHits",
            "timestamps_and_embeddings_hits",
            "Segments matching in both term and time.",
            0.0,
            _INF,
        ),
        _m("NumSegments", "num_segments", "Reference segments in all.", 0.0, _INF),
        _m("mAP", "map", "Mean Average Precision of the ranked terms.", 0.0, 1.0),
        _m("NDCG", "ndcg", "Normalized Discounted Cumulative Gain of the term order.", 0.0, 1.0),
        _m(
            "WordErrorRate",
            "word_error_rate",
            "Word Error Rate between the predicted and reference term sequences.",
            0.0,
            _INF,
        ),
        _m("InvalidResultRate", "invalid_result_rate", "Share of invalid results.", 0.0, 1.0),
        _m("MissingResultRate", "missing_result_rate", "Share of missing results.", 0.0, 1.0),
    ),
    "stability": tuple(
        _m(f"{kind}_{m}", f"{kind}_{m}", f"{what} {m} drift.", 0.0, _INF)
        for m in ("CED", "DTW", "L2", "UED")
        for kind, what in (
            ("Corpus_Mean", "Global micro-average"),
            ("Mean_Local_IS", "Macro-average of per-utterance"),
        )
    ),
    "classification": (
        _m("Accuracy", "accuracy", _CLASS, 0.0, 1.0),
        _m("Top-5 Accuracy", "top_5_accuracy", "Accuracy considering the top 5 predictions", 0.0),
        _m("Balanced Accuracy", "balanced_accuracy", "Accuracy adjusted for class imbalance", 0.0),
        _m("Weighted Precision", "weighted_precision", "Precision weighted by class support", 0.0),
        _m("Weighted Recall", "weighted_recall", "Recall weighted by class support", 0.0, 1.0),
        _m("Weighted F1-Score", "weighted_f1", "F1-Score weighted by class support", 0.0, 1.0),
        _m("mAP", "map", "Mean Average Precision (Macro)", 0.0, 1.0),
        _m("Micro F1", "micro_f1", "F1-score calculated globally across all labels", 0.0, 1.0),
        _m("Macro F1", "macro_f1", "F1-score averaged per class", 0.0, 1.0),
        _m("Hamming Loss", "hamming_loss", "Fraction of incorrectly predicted labels", 0.0, 1.0),
        _m("Subset Accuracy", "subset_accuracy", "Fraction of exact label-set matches", 0.0, 1.0),
        _m("InvalidResultRate", "invalid_result_rate", "Invalid result rate", 0.0, 1.0),
        _MISSING,
    ),
    "clustering": (
        _m("VMeasure", "v_measure", "V-measure clustering metric against a set of labels."),
    ),
}
METRICS = {**METRICS, "zero_shot_classification": METRICS["classification"]}

#: The efficiency scores closing every line: (MSEB name, description, where audiobench keeps
#: it: ``efficiency.<field>`` of the result).
EFFICIENCY: tuple[tuple[str, str, str], ...] = (
    ("mean_encoding_size_bytes", "Mean encoding size in bytes.", "mean_encoding_size_bytes"),
    ("flops", "Flops used to encode.", "flops_per_example"),
)


def metric_for_key(family: str, key: str) -> MsebMetric | None:
    """The MSEB metric a report key of ``family`` holds (None: MSEB has none)."""
    return next((m for m in METRICS.get(family, ()) if m.key == key), None)


@dataclass(frozen=True)
class TaskType:
    """An MSEB task type: its name, the base sub-task of its lines and its subtypes."""

    type: str
    sub_task: str
    subtypes: tuple[str, ...]


#: MSEB's task types, recognised from the end of (or the whole) MSEB task name; first match.
TASK_TYPES: tuple[tuple[str, TaskType], ...] = (
    (
        r"SpeechTranscription",
        TaskType("SpeechTranscription", "speech_transcription", ("transcription",)),
    ),
    (
        r"SalientTermSegmentation(SelectionTask)?",
        TaskType("SalientTermSegmentation", "salient_term", ("segmentation",)),
    ),
    (
        r"SpanInLangReasoning",
        TaskType("SpanInLangReasoning", "span_reasoning_in_lang", ("reasoning",)),
    ),
    (
        r"SpanCrossLangReasoning",
        TaskType("SpanCrossLangReasoning", "span_reasoning_cross_lang", ("reasoning",)),
    ),
    *(
        (
            rf"{kind}{scope}Retrieval(SmallIndex)?",
            TaskType(
                f"{kind}{scope}Retrieval",
                f"{kind.lower()}_retrieval_{'in' if scope == 'InLang' else 'cross'}_lang",
                ("retrieval",),
            ),
        )
        for kind in ("Passage", "Document")
        for scope in ("InLang", "CrossLang")
    ),
    (r"ImageRetrieval", TaskType("ImageRetrieval", "image_retrieval", ("retrieval",))),
    (r"SpeechRetrieval", TaskType("SpeechRetrieval", "speech_retrieval", ("retrieval",))),
    (r"QueryReranking", TaskType("QueryReranking", "query_reranking", ("reranking",))),
    (
        r"SalientTermReranking",
        TaskType("SalientTermReranking", "salient_term_reranking", ("reranking",)),
    ),
    (
        r"IntentClassification",
        TaskType("IntentClassification", "intent_classification", ("classification",)),
    ),
    (
        r"SpeakerGenderClassification",
        TaskType(
            "SpeakerGenderClassification", "speaker_gender_classification", ("classification",)
        ),
    ),
    (
        r"Birdset\w*Classification",
        TaskType("Classification", "ebird_classification", ("classification",)),
    ),
    (r"\w*Classification", TaskType("Classification", "classification", ("classification",))),
    (r"BirdsetClustering\w*", TaskType("Clustering", "clustering", ("clustering",))),
    (r"FSD50K\w*Clustering", TaskType("Clustering", "sound_event", ("clustering",))),
    (r"\w*Clustering", TaskType("Clustering", "clustering", ("clustering",))),
    (r"\w*Stability", TaskType("Stability", "stability", ("stability",))),
)


def task_type(mseb_name: str) -> TaskType | None:
    """The MSEB task type of ``mseb_name`` (None: not a name of MSEB's kinds)."""
    for pattern, kind in TASK_TYPES:
        if re.fullmatch(rf"\w*?{pattern}", mseb_name):
            return kind
    return None


def mseb_task_names(cls: type[Task]) -> dict[str, str]:
    """Subset -> the MSEB task it is, for a task scored the MSEB way by default ({} else).

    A task may name them (``mseb_task_names``, a class attribute mapping each subset to an
    MSEB task name); otherwise a task of one subset is the MSEB task of its own name.
    """
    from audiobench.task import DEFAULT_SUBSET

    if getattr(cls.options, "protocol", None) != "mseb":
        return {}
    declared: Any = getattr(cls, "mseb_task_names", None)
    if isinstance(declared, Mapping):
        return {str(k): str(v) for k, v in declared.items()}
    subsets = list(cls.metadata.subsets) or [DEFAULT_SUBSET]
    return {subsets[0]: cls.metadata.name} if len(subsets) == 1 else {}
