"""Conventions MSEB's evaluators share: sentinel answers, word splitting, the weighted mean.

**Sentinel answers.** An encoder that answers in text (an LLM, a cascade) signals trouble with
two reserved strings: :data:`INVALID_ANSWER` (``""``, the answer could not be parsed) and
:data:`NO_RESPONSE` (``"NO_RESPONSE"``, nothing came back). Span QA adds :data:`NO_ANSWER`
(``"No Answer"``): the question has no answer in the context.

**Words** (:func:`split_words`). MSEB counts word errors with jiwer's default word transform:
every run of two or more whitespace characters becomes one space, the ends are stripped, and the
text is split on the space character ``" "``, dropping empty pieces. A lone tab or newline
between two words therefore does *not* split them (``"a\\tb"`` is one word), unlike
``str.split()``; after a Whisper normaliser (which collapses whitespace to single spaces) the
two agree.

**Weighted mean and spread** (:func:`weighted_mean_and_std`), MSEB's aggregate of per-example
observations ``(v_i, w_i)``: mean = Σ v_i / Σ w_i (v_i is a numerator, e.g. an utterance's word
errors with w_i its reference words, so the mean is corpus-level), and
std = sqrt(Σ w_i (r_i − mean)² / Σ w_i) with r_i = v_i / w_i (r_i = v_i where w_i = 0, which
then carries no weight). With unit weights these are the plain mean and the population std.
**Dtypes.** MSEB computes on an encoder's outputs in their own floating dtype (float32 scores
and frames stay float32); :func:`~audiobench.metrics.validation.real_array` keeps float32
and float64 as given.

Source: ``mseb/evaluator.py`` (``compute_weighted_average_and_std``), ``mseb/types.py``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

__all__ = [
    "INVALID_ANSWER",
    "NO_ANSWER",
    "NO_RESPONSE",
    "check_texts",
    "split_words",
    "weighted_mean_and_std",
]

#: An answer that could not be parsed (MSEB's invalid-answer sentinel).
INVALID_ANSWER = ""
#: No answer came back from the encoder (MSEB's no-response sentinel).
NO_RESPONSE = "NO_RESPONSE"
#: Span QA: the question is not answerable from the context (reference or prediction).
NO_ANSWER = "No Answer"

_WHITESPACE_RUN = re.compile(r"\s\s+")


def split_words(text: str) -> list[str]:
    """The words of ``text`` as MSEB counts them (see the module docstring)."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    return [word for word in _WHITESPACE_RUN.sub(" ", text).strip().split(" ") if word]


def _weighted_mean_and_std(values: np.ndarray, weights: np.ndarray) -> tuple[float, float]:
    """Trusting core: float64 arrays of equal length, weights ≥ 0 with a positive sum."""
    total = float(weights.sum())
    mean = float(values.sum()) / total
    ratios = np.divide(values, weights, out=values.copy(), where=weights != 0)
    variance = (weights * (ratios - mean) ** 2).sum() / total
    # ``** 0.5`` (not math.sqrt) rounds as MSEB's NumPy expression does, to the last bit.
    return mean, float(np.float64(variance) ** 0.5)


def weighted_mean_and_std(
    values: Sequence[float] | np.ndarray, weights: Sequence[float] | np.ndarray | None = None
) -> tuple[float, float]:
    """MSEB's weighted mean Σ v / Σ w and weighted std of the ratios v / w (module docstring).

    ``weights`` defaults to 1 per value. Raises ValueError for empty or mismatched inputs,
    non-finite numbers, negative weights, or weights that sum to 0 (the mean is undefined).
    """
    v = np.asarray(values, dtype=np.float64)
    w = np.ones_like(v) if weights is None else np.asarray(weights, dtype=np.float64)
    if v.ndim != 1 or w.ndim != 1:
        raise ValueError("values and weights must be 1-D sequences of numbers")
    if v.shape != w.shape:
        raise ValueError(f"got {v.shape[0]} values and {w.shape[0]} weights")
    if v.size == 0:
        raise ValueError("no values: the weighted mean of nothing is undefined")
    if not (np.isfinite(v).all() and np.isfinite(w).all()):
        raise ValueError("values and weights must be finite numbers")
    if (w < 0).any():
        raise ValueError(f"weights must be ≥ 0, got {float(w.min())}")
    if float(w.sum()) <= 0:
        raise ValueError("the weights sum to 0: the weighted mean is undefined")
    return _weighted_mean_and_std(v, w)


def check_texts(values: Sequence[str], name: str, unit: str = "example") -> list[str]:
    """``values`` as a list, checked to be a sequence of strings (one per ``unit``)."""
    if isinstance(values, str):
        raise ValueError(f"{name} must be a sequence of strings (one per {unit}), not a string")
    items = list(values)
    for position, item in enumerate(items):
        if not isinstance(item, str):
            raise ValueError(f"{name}[{position}] must be a string, got {type(item).__name__}")
    return items
