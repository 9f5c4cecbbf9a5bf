"""Extractive span QA (MSEB's reasoning super task): its F1, GmeanF1 and "No Answer" rule.

Source: ``mseb/evaluators/reasoning_evaluator.py`` and ``mseb/evaluator.py`` (``top_1``),
read at commit ``a88af49``.

**Per-example F1** (:func:`mseb_span_f1`, MSEB's ``compute_f1_score``), reference t and
prediction p:

1. p = ``""`` (an invalid answer): 0.
2. t or p is ``"No Answer"``: 1 when t = p, else 0.
3. Otherwise both are split on whitespace (``str.split()``) and compared as multisets:
   c = |tokens(p) ∩ tokens(t)| (with multiplicity); 0 when c = 0, else
   2·P·R / (P + R) with P = c / |tokens(p)| and R = c / |tokens(t)|.

**This is not SQuAD F1.** SQuAD's F1 first normalises both texts (lowercase, punctuation and
the articles a/an/the removed, whitespace collapsed); MSEB defines that normalisation but never
applies it, so ``"The Eiffel Tower."`` against ``"eiffel tower"`` scores 0 here. This module
keeps MSEB's definition under MSEB's name and offers no SQuAD variant. ``"NO_RESPONSE"`` has
no special case in F1 (it is an ordinary wrong answer) and is only counted by
``MissingResultRate``.

**Aggregates** (:func:`span_qa_scores`) over N examples, A of them answerable (reference not
``"No Answer"``) and U = N − A unanswerable:

- ``F1`` = the mean per-example F1 over all examples; its std the population std.
- ``GmeanF1`` (MSEB's main reasoning score) = F1_A^w · F1_U^(1−w), a weighted geometric mean
  with F1_A, F1_U the mean F1 over answerable / unanswerable examples (0 for an empty group)
  and w = A / N. 0^0 = 1, so an empty group drops out: with no unanswerable example GmeanF1 =
  F1_A. Always answering "No Answer" gives 0.
- ``InvalidResultRate``, ``MissingResultRate``: shares of predictions equal to ``""`` and
  ``"NO_RESPONSE"``, with their population stds.

**Choosing an answer from embeddings** (:func:`select_answers`). Each example's candidate spans
have scores (MSEB: the dot product of the span's first embedding row with the query's); the
best is the first of the highest (``argmax``). An example without candidates answers
"No Answer". Otherwise the answer is "No Answer" when its best score is **below** the threshold
(a score equal to it answers), else the best span's text.

**The fitted threshold** (:func:`no_answer_threshold`), used when none is given: a
two-component one-dimensional Gaussian mixture (scikit-learn ``GaussianMixture``,
``random_state=42``, otherwise its defaults) fitted to the best scores of the examples with
candidates (the evaluated examples themselves), then the Bayes boundary where
π₁N(x; μ₁, σ₁²) = π₂N(x; μ₂, σ₂²) (:func:`gaussian_decision_boundary`). Taking logs gives
a x² + b x + c = 0 with a = 1/(2σ₁²) − 1/(2σ₂²), b = μ₂/σ₂² − μ₁/σ₁²,
c = μ₁²/(2σ₁²) − μ₂²/(2σ₂²) − ln(π₁σ₂ / (π₂σ₁)). Then:

- a ≈ 0 (``numpy.isclose(a, 0)``: equal variances): the linear root −c / b (±inf or NaN when
  b = 0 too, as in MSEB: a threshold of +inf answers "No Answer" everywhere, NaN never);
- discriminant b² − 4ac < 0: the midpoint (μ₁ + μ₂) / 2;
- otherwise the roots x₁ = (−b + √disc) / (2a), x₂ = (−b − √disc) / (2a): x₁ when
  π₁N(x₁; μ₁, σ₁²) > π₂N(x₂; μ₂, σ₂²), else x₂.

The mixture is fitted in the scores' own floating dtype (float32 scores stay float32, as in
MSEB, where they come from float32 embeddings).

Deliberate differences: empty inputs, and fitting a threshold from fewer than two scored
examples (where MSEB's mixture fit fails), are a ValueError naming the remedy (pass
``threshold``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from audiobench.metrics.mseb_conventions import (
    INVALID_ANSWER,
    NO_ANSWER,
    NO_RESPONSE,
    _weighted_mean_and_std,
    check_texts,
)
from audiobench.metrics.validation import real_array

__all__ = [
    "AnswerSelection",
    "SpanQAScores",
    "gaussian_decision_boundary",
    "mseb_span_f1",
    "no_answer_threshold",
    "select_answers",
    "span_qa_scores",
]


def _span_f1(reference: str, prediction: str) -> float:
    if prediction == INVALID_ANSWER:
        return 0.0
    if reference == NO_ANSWER or prediction == NO_ANSWER:
        return float(reference == prediction)
    predicted, target = prediction.split(), reference.split()
    common = sum((Counter(predicted) & Counter(target)).values())
    if common == 0:
        return 0.0
    precision = 1.0 * common / len(predicted)
    recall = 1.0 * common / len(target)
    return (2 * precision * recall) / (precision + recall)


def mseb_span_f1(reference: str, prediction: str) -> float:
    """MSEB's per-example span F1 (no normalisation; module docstring), in [0, 1]."""
    for name, value in (("reference", reference), ("prediction", prediction)):
        if not isinstance(value, str):
            raise ValueError(f"{name} must be a string, got {type(value).__name__}")
    return _span_f1(reference, prediction)


@dataclass(frozen=True, eq=False)
class SpanQAScores:
    """MSEB's reasoning metrics (module docstring for the definitions).

    ``answerable_f1`` and ``no_answer_f1`` are F1_A and F1_U (0 for an empty group),
    ``answerable_weight`` is w = A / N, ``per_example_f1`` the float64 per-example scores.
    """

    gmean_f1: float
    f1: float
    f1_std: float
    answerable_f1: float
    no_answer_f1: float
    answerable_weight: float
    invalid_result_rate: float
    invalid_result_rate_std: float
    missing_result_rate: float
    missing_result_rate_std: float
    n_answerable: int
    n_no_answer: int
    per_example_f1: np.ndarray = field(repr=False)

    def to_dict(self) -> dict[str, float]:
        """The metrics under MSEB's names; stds as ``<name>_std``."""
        return {
            "GmeanF1": self.gmean_f1,
            "F1": self.f1,
            "F1_std": self.f1_std,
            "InvalidResultRate": self.invalid_result_rate,
            "InvalidResultRate_std": self.invalid_result_rate_std,
            "MissingResultRate": self.missing_result_rate,
            "MissingResultRate_std": self.missing_result_rate_std,
        }


def _span_qa_scores(references: list[str], predictions: list[str]) -> SpanQAScores:
    per_example = np.array(
        [_span_f1(t, p) for t, p in zip(references, predictions, strict=True)], dtype=np.float64
    )
    answerable = np.array([t != NO_ANSWER for t in references])
    f1_answerable, f1_no_answer = per_example[answerable], per_example[~answerable]
    # MSEB sums the answerable group first, then the rest: keep that order for the last bit.
    ordered = np.concatenate([f1_answerable, f1_no_answer])
    f1, f1_std = _weighted_mean_and_std(ordered, np.ones_like(ordered))
    n_answerable, n_no_answer = int(f1_answerable.size), int(f1_no_answer.size)
    weight = n_answerable / (n_answerable + n_no_answer)
    mean_answerable = (
        _weighted_mean_and_std(f1_answerable, np.ones_like(f1_answerable))[0]
        if n_answerable
        else 0.0
    )
    mean_no_answer = (
        _weighted_mean_and_std(f1_no_answer, np.ones_like(f1_no_answer))[0] if n_no_answer else 0.0
    )
    # Python floats: 0.0 ** 0.0 == 1.0, so an empty group (weight 0) drops out of the product.
    gmean = mean_answerable**weight * mean_no_answer ** (1.0 - weight)
    ones = np.ones(len(predictions), dtype=np.float64)
    invalid = np.array([p == INVALID_ANSWER for p in predictions], dtype=np.float64)
    missing = np.array([p == NO_RESPONSE for p in predictions], dtype=np.float64)
    invalid_rate, invalid_std = _weighted_mean_and_std(invalid, ones)
    missing_rate, missing_std = _weighted_mean_and_std(missing, ones)
    return SpanQAScores(
        gmean_f1=float(gmean),
        f1=f1,
        f1_std=f1_std,
        answerable_f1=mean_answerable,
        no_answer_f1=mean_no_answer,
        answerable_weight=weight,
        invalid_result_rate=invalid_rate,
        invalid_result_rate_std=invalid_std,
        missing_result_rate=missing_rate,
        missing_result_rate_std=missing_std,
        n_answerable=n_answerable,
        n_no_answer=n_no_answer,
        per_example_f1=per_example,
    )


def span_qa_scores(references: Sequence[str], predictions: Sequence[str]) -> SpanQAScores:
    """MSEB's reasoning metrics: ``GmeanF1`` (main), ``F1``, ``InvalidResultRate`` and
    ``MissingResultRate`` (module docstring).

    ``references``: per example the answer text or ``"No Answer"``; ``predictions``: per
    example, in the same order, the answer given, ``"No Answer"``, ``""`` (invalid) or
    ``"NO_RESPONSE"`` (missing). Raises ValueError for mismatched lengths, no examples, or
    items that are not strings.
    """
    refs = check_texts(references, "references")
    preds = check_texts(predictions, "predictions")
    if len(refs) != len(preds):
        raise ValueError(f"got {len(refs)} references and {len(preds)} predictions")
    if not refs:
        raise ValueError("no examples: references and predictions are empty")
    return _span_qa_scores(refs, preds)


def _decision_boundary(weights: np.ndarray, means: np.ndarray, variances: np.ndarray) -> float:
    """Trusting core on MSEB's arrays (scalars keep the fitted dtype, as MSEB's do)."""
    from scipy.stats import norm

    pi1, pi2 = weights
    mu1, mu2 = means
    var1, var2 = variances
    sigma1, sigma2 = np.sqrt(var1), np.sqrt(var2)
    a = (1.0 / (2 * var1)) - (1.0 / (2 * var2))
    b = (mu2 / var2) - (mu1 / var1)
    c = (mu1**2 / (2 * var1)) - (mu2**2 / (2 * var2)) - np.log((pi1 * sigma2) / (pi2 * sigma1))
    with np.errstate(divide="ignore", invalid="ignore"):
        if np.isclose(a, 0):
            return float(-c / b)
        discriminant = b**2 - 4 * a * c
        if discriminant < 0:
            return float((mu1 + mu2) / 2)
        x1 = (-b + np.sqrt(discriminant)) / (2 * a)
        x2 = (-b - np.sqrt(discriminant)) / (2 * a)
    y1 = pi1 * norm.pdf(x1, loc=mu1, scale=sigma1)
    y2 = pi2 * norm.pdf(x2, loc=mu2, scale=sigma2)
    return float(x1) if y1 > y2 else float(x2)


def gaussian_decision_boundary(
    weights: Sequence[float], means: Sequence[float], variances: Sequence[float]
) -> float:
    """The Bayes boundary between two weighted 1-D Gaussians, with MSEB's rules for equal
    variances and a negative discriminant (module docstring).

    Each argument holds the two components' values: mixture weights (> 0), means, variances
    (> 0). Computed in float64.
    """
    arrays = []
    for name, values in (("weights", weights), ("means", means), ("variances", variances)):
        array = np.asarray(values, dtype=np.float64).reshape(-1)
        if array.shape != (2,):
            raise ValueError(f"{name} must hold exactly 2 numbers (one per component)")
        if not np.isfinite(array).all():
            raise ValueError(f"{name} must be finite, got {array.tolist()}")
        if name != "means" and (array <= 0).any():
            raise ValueError(f"{name} must be > 0, got {array.tolist()}")
        arrays.append(array)
    return _decision_boundary(*arrays)


def _scores_array(scores: object, name: str) -> np.ndarray:
    return real_array(scores, name, 1, "one score per item")


def _fit_threshold(best_scores: np.ndarray) -> float:
    from sklearn.mixture import GaussianMixture

    mixture = GaussianMixture(n_components=2, random_state=42)
    mixture.fit(best_scores[:, np.newaxis])
    return _decision_boundary(
        mixture.weights_, mixture.means_.reshape(-1), mixture.covariances_.reshape(-1)
    )


def no_answer_threshold(best_scores: Sequence[float] | np.ndarray) -> float:
    """MSEB's fitted "No Answer" threshold: the Bayes boundary of a two-component Gaussian
    mixture fitted to the examples' best span scores (module docstring).

    Raises ValueError when there are fewer than two scores or a score is not finite.
    """
    array = _scores_array(best_scores, "best_scores")
    if array.size < 2:
        raise ValueError(
            f"fitting the no-answer threshold needs at least 2 scored examples, got "
            f"{array.size}: pass a threshold instead"
        )
    return _fit_threshold(array)


@dataclass(frozen=True, eq=False)
class AnswerSelection:
    """The answers chosen from span scores.

    ``predictions``: per example the best span's text or ``"No Answer"``; ``threshold``: the
    threshold applied (given or fitted; None when no example had candidates);
    ``best_scores``: per example the best score (NaN without candidates); ``best_index``: the
    best candidate's position (−1 without candidates).
    """

    predictions: list[str]
    threshold: float | None
    best_scores: np.ndarray = field(repr=False)
    best_index: np.ndarray = field(repr=False)


def select_answers(
    span_scores: Sequence[Sequence[float] | np.ndarray],
    span_texts: Sequence[Sequence[str]],
    *,
    threshold: float | None = None,
) -> AnswerSelection:
    """Choose each example's answer from its candidate spans' scores, as MSEB does: the
    first highest-scoring span, or "No Answer" without candidates or when its score is below
    ``threshold`` (fitted with :func:`no_answer_threshold` when None).

    ``span_scores[i]`` and ``span_texts[i]`` hold example i's candidate scores and texts
    (equal lengths; both empty for an example without candidates). Raises ValueError for
    mismatched lengths, non-finite scores, or a threshold to fit from fewer than two examples
    with candidates.
    """
    if isinstance(span_texts, str):
        raise ValueError("span_texts must be a sequence with one list of texts per example")
    if len(span_scores) != len(span_texts):
        raise ValueError(f"got {len(span_scores)} score lists and {len(span_texts)} text lists")
    if not span_scores:
        raise ValueError("no examples: span_scores is empty")
    if threshold is not None and (
        isinstance(threshold, bool) or not math.isfinite(float(threshold))
    ):
        raise ValueError(f"threshold must be a finite number or None, got {threshold!r}")
    scores = [_scores_array(s, f"span_scores[{i}]") for i, s in enumerate(span_scores)]
    texts = [check_texts(t, f"span_texts[{i}]") for i, t in enumerate(span_texts)]
    for i, (s, t) in enumerate(zip(scores, texts, strict=True)):
        if s.size != len(t):
            raise ValueError(f"example {i} has {s.size} span scores and {len(t)} span texts")
    n = len(scores)
    best_index = np.full(n, -1, dtype=np.int64)
    best = [s[int(np.argmax(s))] if s.size else None for s in scores]
    for i, s in enumerate(scores):
        if s.size:
            best_index[i] = int(np.argmax(s))
    scored = [value for value in best if value is not None]
    if threshold is None and scored:
        if len(scored) < 2:
            raise ValueError(
                f"fitting the no-answer threshold needs at least 2 examples with candidate "
                f"spans, got {len(scored)}: pass threshold="
            )
        threshold = _fit_threshold(np.array(scored))
    predictions = [
        NO_ANSWER if value is None or value < threshold else texts[i][int(best_index[i])]
        for i, value in enumerate(best)
    ]
    best_scores = np.array(
        [np.nan if value is None else float(value) for value in best], dtype=np.float64
    )
    return AnswerSelection(
        predictions=predictions,
        threshold=None if threshold is None else float(threshold),
        best_scores=best_scores,
        best_index=best_index,
    )
