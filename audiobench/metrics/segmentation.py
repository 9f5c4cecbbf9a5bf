"""Salient-term segmentation metrics as MSEB computes them.

Source: ``mseb/evaluators/segmentation_evaluator.py`` (``SegmentationEvaluator``, τ from
``mseb/tasks/segmentation.py``), read at commit ``a88af49``.

**Data.** Per utterance, the reference is an ordered list of salient terms with start and end
times in seconds (:class:`TimedTerm`); the prediction is an ordered list of such terms, each
optionally with a confidence ``score``, or one of the sentinel strings ``""`` (invalid answer)
and ``"NO_RESPONSE"`` (missing answer), which count as no terms. Terms compare
case-insensitively (``str.lower()``) everywhere.

**Time match** of a reference r and a prediction p: |r.start − p.start| ≤ τ and
|r.end − p.end| ≤ τ, computed in floating point exactly like that (τ = 0.05 s by default).
Note that ``abs(1.0 − 1.05)`` is 0.05000000000000004 > 0.05 in binary floating point, so a
boundary that is exact in decimal may fall just outside; MSEB behaves the same.

**Hits** (:func:`greedy_segment_hits`), greedy and per utterance, each prediction used at most
once, references visited in their order and, for each, predictions in theirs:

1. every reference takes the first unused prediction that matches on time **and** term;
2. every reference still unmatched takes the first unused prediction that matches on time;
3. every reference still unmatched takes the first unused prediction that matches on term.

``TimestampsAndEmbeddingsHits`` = pass 1, ``TimestampsHits`` = pass 1 + pass 2,
``EmbeddingsHits`` = pass 1 + pass 3, summed over utterances; each ``*Accuracy`` divides its
hits by ``NumSegments``, the number of reference terms in the corpus.

**NDCG** (MSEB's main segmentation score; :func:`positional_ndcg`): per utterance,
DCG = Σ_i 1/log2(i + 2) over positions i (from 0) where the predicted term equals the
reference term **at the same position**, IDCG = Σ_i 1/log2(i + 2) over all reference
positions; NDCG = DCG / IDCG, and 0 for an utterance whose reference terms join to blank
text. There is no time condition. The corpus value is the mean over utterances.

**WordErrorRate**: per utterance the (lowercased) terms are joined by spaces into one text
each side, and word edits are counted as for transcription; corpus value Σ edits / Σ reference
words (0 when there are no reference words). An utterance whose reference is blank adds the
number of predicted words (split on whitespace) to the edits and nothing to the denominator.

**mAP** (:func:`segment_average_precision`), dataset-level over *scored* predictions only
(utterances whose prediction carries scores): all of them are sorted by decreasing score
(stably: ties keep utterance order, then prediction order); in that order each is a true
positive when it matches on time and term the first still-unused reference term of its own
utterance. The value is scikit-learn's ``average_precision_score`` of those labels and scores
(thresholds at distinct scores: tied predictions enter together). Missed reference terms do
not lower it. It is 0 when no prediction is scored or none is a true positive.

**InvalidResultRate**, **MissingResultRate**: shares of utterances whose prediction is ``""``
or ``"NO_RESPONSE"``.

Deliberate differences: where MSEB reports only mAP because the corpus has no reference term,
this module raises a ValueError (the accuracies and NDCG are undefined); non-finite times or
scores, and a prediction with scores on some terms but not others, are a ValueError (MSEB
cannot receive the latter). Predictions given as MSEB's JSON text are parsed by the caller.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from audiobench.metrics.mseb_conventions import (
    INVALID_ANSWER,
    NO_RESPONSE,
    split_words,
)
from audiobench.metrics.text_errors import edit_distance

__all__ = [
    "DEFAULT_TOLERANCE_S",
    "SegmentHits",
    "SegmentationScores",
    "TimedTerm",
    "greedy_segment_hits",
    "positional_ndcg",
    "segment_average_precision",
    "segmentation_scores",
]

#: MSEB's time tolerance τ in seconds (``SegmentationTask(tau=0.05)``).
DEFAULT_TOLERANCE_S: float = 0.05


@dataclass(frozen=True)
class TimedTerm:
    """A term with its start and end time in seconds, and optionally a confidence score."""

    term: str
    start: float
    end: float
    score: float | None = None


@dataclass(frozen=True)
class SegmentHits:
    """Hit counts of one utterance (or a corpus) from the three greedy passes."""

    timestamps_and_embeddings: int
    timestamps: int
    embeddings: int


@dataclass(frozen=True)
class SegmentationScores:
    """MSEB's segmentation metrics (module docstring for the definitions)."""

    ndcg: float
    timestamps_and_embeddings_accuracy: float
    timestamps_accuracy: float
    embeddings_accuracy: float
    timestamps_and_embeddings_hits: int
    timestamps_hits: int
    embeddings_hits: int
    num_segments: int
    word_error_rate: float
    mean_average_precision: float
    invalid_result_rate: float
    missing_result_rate: float
    n_utterances: int
    n_scored_predictions: int

    def to_dict(self) -> dict[str, float]:
        """The metrics under MSEB's names."""
        return {
            "TimestampsAndEmbeddingsHits": float(self.timestamps_and_embeddings_hits),
            "TimestampsHits": float(self.timestamps_hits),
            "EmbeddingsHits": float(self.embeddings_hits),
            "NumSegments": float(self.num_segments),
            "TimestampsAndEmbeddingsAccuracy": self.timestamps_and_embeddings_accuracy,
            "TimestampsAccuracy": self.timestamps_accuracy,
            "EmbeddingsAccuracy": self.embeddings_accuracy,
            "NDCG": self.ndcg,
            "WordErrorRate": self.word_error_rate,
            "InvalidResultRate": self.invalid_result_rate,
            "MissingResultRate": self.missing_result_rate,
            "mAP": self.mean_average_precision,
        }


Prediction = Sequence[TimedTerm] | str


def _time_match(a: TimedTerm, b: TimedTerm, tau: float) -> bool:
    return abs(a.start - b.start) <= tau and abs(a.end - b.end) <= tau


def _term_match(a: TimedTerm, b: TimedTerm) -> bool:
    return a.term.lower() == b.term.lower()


def _greedy_hits(
    reference: Sequence[TimedTerm], predicted: Sequence[TimedTerm], tau: float
) -> SegmentHits:
    used = [False] * len(predicted)
    matched = [False] * len(reference)

    def one_pass(accepts: object) -> int:
        hits = 0
        for i, ref in enumerate(reference):
            if matched[i]:
                continue
            for j, pred in enumerate(predicted):
                if not used[j] and accepts(ref, pred):  # type: ignore[operator]
                    used[j] = matched[i] = True
                    hits += 1
                    break
        return hits

    # ``matched`` and ``used`` carry over: a reference matched on time in pass 2 is not
    # offered to pass 3, and a prediction used once is never used again.
    both = one_pass(lambda r, p: _time_match(r, p, tau) and _term_match(r, p))
    time_only = one_pass(lambda r, p: _time_match(r, p, tau))
    term_only = one_pass(_term_match)
    return SegmentHits(
        timestamps_and_embeddings=both, timestamps=both + time_only, embeddings=both + term_only
    )


def _positional_ndcg(reference_terms: Sequence[str], predicted_terms: Sequence[str]) -> float:
    ref = [term.lower() for term in reference_terms]
    pred = [term.lower() for term in predicted_terms]
    if not " ".join(ref).strip():
        return 0.0
    dcg = sum(
        1.0 / math.log2(i + 2) for i, term in enumerate(pred) if i < len(ref) and term == ref[i]
    )
    idcg = sum(1.0 / math.log2(i + 2) for i in range(len(ref)))
    return dcg / idcg if idcg > 0 else 0.0


def _average_precision(
    references: Sequence[Sequence[TimedTerm]],
    predictions: Sequence[Sequence[TimedTerm]],
    scored: Sequence[bool],
    tau: float,
) -> tuple[float, int]:
    pool = [
        (utterance, pred)
        for utterance, (terms, has_scores) in enumerate(zip(predictions, scored, strict=True))
        if has_scores
        for pred in terms
    ]
    if not pool:
        return 0.0, 0
    pool.sort(key=lambda item: item[1].score, reverse=True)  # type: ignore[arg-type,return-value]
    used = [[False] * len(terms) for terms in references]
    labels = []
    for utterance, pred in pool:
        hit = 0
        for i, ref in enumerate(references[utterance]):
            if not used[utterance][i] and _time_match(pred, ref, tau) and _term_match(pred, ref):
                used[utterance][i] = True
                hit = 1
                break
        labels.append(hit)
    if not any(labels):
        return 0.0, len(pool)
    from sklearn.metrics import average_precision_score

    scores = np.array([pred.score for _, pred in pool], dtype=np.float64)
    return float(average_precision_score(np.array(labels), scores)), len(pool)


def _check_tau(tau: object) -> float:
    if isinstance(tau, bool) or not isinstance(tau, int | float | np.floating | np.integer):
        raise ValueError(f"tau must be a number of seconds, got {tau!r}")
    if not math.isfinite(float(tau)) or float(tau) < 0:
        raise ValueError(f"tau must be a finite number of seconds ≥ 0, got {tau!r}")
    return float(tau)


def _check_terms(terms: object, where: str, *, scores: bool) -> list[TimedTerm]:
    if isinstance(terms, str) or not isinstance(terms, Sequence):
        raise ValueError(f"{where} must be a sequence of TimedTerm, got {type(terms).__name__}")
    checked = list(terms)
    for k, item in enumerate(checked):
        if not isinstance(item, TimedTerm):
            raise ValueError(f"{where}[{k}] must be a TimedTerm, got {type(item).__name__}")
        if not isinstance(item.term, str):
            raise ValueError(f"{where}[{k}].term must be a string, got {item.term!r}")
        for name in ("start", "end"):
            value = getattr(item, name)
            if isinstance(value, bool) or not isinstance(value, int | float | np.number):
                raise ValueError(f"{where}[{k}].{name} must be a number, got {value!r}")
            if not math.isfinite(float(value)):
                raise ValueError(f"{where}[{k}].{name} must be finite, got {value!r}")
        if not scores and item.score is not None:
            raise ValueError(f"{where}[{k}] is a reference term: it takes no score")
        if item.score is not None and not math.isfinite(float(item.score)):
            raise ValueError(f"{where}[{k}].score must be finite, got {item.score!r}")
    if scores:
        with_score = [item.score is not None for item in checked]
        if any(with_score) and not all(with_score):
            raise ValueError(f"{where} has scores on some terms but not others: score all or none")
    return checked


def _check_prediction(prediction: object, where: str) -> tuple[list[TimedTerm], str | None]:
    """The terms of a prediction and its sentinel (``""``, ``"NO_RESPONSE"`` or None)."""
    if isinstance(prediction, str):
        if prediction not in (INVALID_ANSWER, NO_RESPONSE):
            raise ValueError(
                f"{where} is the string {prediction!r}: a prediction is a sequence of "
                f"TimedTerm, or {INVALID_ANSWER!r} (invalid) or {NO_RESPONSE!r} (missing)"
            )
        return [], prediction
    return _check_terms(prediction, where, scores=True), None


def positional_ndcg(reference_terms: Sequence[str], predicted_terms: Sequence[str]) -> float:
    """MSEB's segmentation NDCG of one utterance: a gain 1/log2(i + 2) for every position i
    where the predicted term equals the reference term at position i (case-insensitive),
    divided by the same sum over all reference positions; 0 for a blank reference."""
    for name, terms in (("reference_terms", reference_terms), ("predicted_terms", predicted_terms)):
        if isinstance(terms, str) or not all(isinstance(t, str) for t in terms):
            raise ValueError(f"{name} must be a sequence of strings")
    return _positional_ndcg(reference_terms, predicted_terms)


def greedy_segment_hits(
    reference: Sequence[TimedTerm],
    predicted: Sequence[TimedTerm],
    *,
    tau: float = DEFAULT_TOLERANCE_S,
) -> SegmentHits:
    """The three greedy passes of one utterance (module docstring): hits on time and term,
    on time (pass 1 + 2) and on term (pass 1 + 3)."""
    tau = _check_tau(tau)
    ref = _check_terms(reference, "reference", scores=False)
    pred = _check_terms(predicted, "predicted", scores=True)
    return _greedy_hits(ref, pred, tau)


def segment_average_precision(
    references: Sequence[Sequence[TimedTerm]],
    predictions: Sequence[Prediction],
    *,
    tau: float = DEFAULT_TOLERANCE_S,
) -> float:
    """MSEB's segmentation mAP over the scored predictions of all utterances (module
    docstring); predictions without scores and sentinel strings take no part."""
    return segmentation_scores(references, predictions, tau=tau).mean_average_precision


def segmentation_scores(
    references: Sequence[Sequence[TimedTerm]],
    predictions: Sequence[Prediction],
    *,
    tau: float = DEFAULT_TOLERANCE_S,
) -> SegmentationScores:
    """All of MSEB's segmentation metrics over utterances (module docstring).

    Parameters
    ----------
    references:
        Per utterance, the ordered reference terms (:class:`TimedTerm` without scores).
    predictions:
        Per utterance, in the same order: the ordered predicted terms (scores on all or none),
        or ``""`` (invalid answer) or ``"NO_RESPONSE"`` (missing answer).
    tau:
        The time tolerance in seconds (MSEB: 0.05).

    Raises
    ------
    ValueError
        Mismatched lengths, no utterances, no reference term in the whole corpus, malformed
        terms (naming the utterance and position), or a negative or non-finite ``tau``.
    """
    tau = _check_tau(tau)
    if isinstance(references, str) or isinstance(predictions, str):
        raise ValueError(
            "references and predictions must be sequences with one entry per utterance"
        )
    refs = [_check_terms(r, f"references[{u}]", scores=False) for u, r in enumerate(references)]
    checked = [_check_prediction(p, f"predictions[{u}]") for u, p in enumerate(predictions)]
    if len(refs) != len(checked):
        raise ValueError(f"got {len(refs)} references and {len(checked)} predictions")
    if not refs:
        raise ValueError("no utterances: references and predictions are empty")
    num_segments = sum(len(r) for r in refs)
    if num_segments == 0:
        raise ValueError(
            "no utterance has a reference term: the hit accuracies and NDCG are undefined"
        )
    return _segmentation_scores(refs, checked, tau, num_segments)


def _segmentation_scores(
    refs: list[list[TimedTerm]],
    checked: list[tuple[list[TimedTerm], str | None]],
    tau: float,
    num_segments: int,
) -> SegmentationScores:
    both = time = term = 0
    ndcgs = []
    edits = reference_words = 0
    for ref, (pred, _) in zip(refs, checked, strict=True):
        if ref and pred:
            hits = _greedy_hits(ref, pred, tau)
            both += hits.timestamps_and_embeddings
            time += hits.timestamps
            term += hits.embeddings
        ref_terms = [t.term.lower() for t in ref]
        pred_terms = [t.term.lower() for t in pred]
        ndcgs.append(_positional_ndcg(ref_terms, pred_terms))
        ref_text, pred_text = " ".join(ref_terms), " ".join(pred_terms)
        if not ref_text.strip():
            edits += len(pred_text.split())
        else:
            ref_words = split_words(ref_text)
            edits += edit_distance(ref_words, split_words(pred_text))
            reference_words += len(ref_words)
    predictions = [pred for pred, _ in checked]
    scored = [bool(pred) and pred[0].score is not None for pred in predictions]
    average_precision, n_scored = _average_precision(refs, predictions, scored, tau)
    n = len(refs)
    return SegmentationScores(
        ndcg=float(np.mean(ndcgs)),
        timestamps_and_embeddings_accuracy=both / num_segments,
        timestamps_accuracy=time / num_segments,
        embeddings_accuracy=term / num_segments,
        timestamps_and_embeddings_hits=both,
        timestamps_hits=time,
        embeddings_hits=term,
        num_segments=num_segments,
        word_error_rate=edits / reference_words if reference_words > 0 else 0.0,
        mean_average_precision=average_precision,
        invalid_result_rate=sum(s == INVALID_ANSWER for _, s in checked) / n,
        missing_result_rate=sum(s == NO_RESPONSE for _, s in checked) / n,
        n_utterances=n,
        n_scored_predictions=n_scored,
    )
