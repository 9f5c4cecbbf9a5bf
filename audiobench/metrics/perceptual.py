"""Perceptual alignment: does the model agree with listeners more often than chance?

**Triplet accuracy.** For triplets (anchor a, positive p, negative n), where listeners judged
p closer to a than n, the model is right when d(a, p) < d(a, n). A tie d(a, p) = d(a, n)
(exact equality) shows no preference: by default it counts **half** (``ties="half"``, so a
model with constant embeddings scores exactly chance, 0.5); ``ties="wrong"`` counts it as a
miss. accuracy = n_correct / n with n_correct = #{d(a,p) < d(a,n)} + ½·#ties (or + 0).

**Two-alternative forced choice.** accuracy = (1/n) Σ_i [model_choice_i = human_choice_i].

**Significance.** A one-sided exact binomial test of H0: P(correct) = 0.5 against "greater":
p = P(X ≥ k) for X ~ Binomial(n, 0.5) (``scipy.stats.binomtest``). With half-counted ties,
n_correct may be a half-integer; the test then uses k = ⌊n_correct⌋, which can only raise the
p-value (conservative).

Each function returns ``{"accuracy", "n", "n_correct", "n_ties", "p_value"}``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np
import torch

from audiobench.metrics.labels import encode_labels
from audiobench.metrics.naming import describe_clips

__all__ = ["binomial_p_value", "triplet_accuracy", "two_afc_accuracy"]


def binomial_p_value(n_correct: int, n: int, *, chance: float = 0.5) -> float:
    """One-sided exact binomial p-value P(X ≥ n_correct), X ~ Binomial(n, chance).

    Parameters
    ----------
    n_correct:
        Successes, an integer in [0, n].
    n:
        Trials, a positive integer.
    chance:
        Success probability under the null hypothesis, in (0, 1) (default 0.5).
    """
    from scipy.stats import binomtest

    for name, value in (("n_correct", n_correct), ("n", n)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if not 0 <= n_correct <= n:
        raise ValueError(f"n_correct must lie in [0, n = {n}], got {n_correct}")
    if isinstance(chance, bool) or not (0.0 < float(chance) < 1.0):
        raise ValueError(f"chance must lie strictly between 0 and 1, got {chance!r}")
    return float(binomtest(int(n_correct), int(n), float(chance), alternative="greater").pvalue)


def _report(n_correct: float | int, n: int, n_ties: int) -> dict[str, float]:
    return {
        "accuracy": n_correct / n,
        "n": n,
        "n_correct": n_correct,
        "n_ties": n_ties,
        "p_value": binomial_p_value(math.floor(n_correct), n),
    }


def _distances(values: object, name: str) -> np.ndarray:
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().numpy()
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one distance per triplet), got shape {array.shape}")
    if array.shape[0] == 0:
        raise ValueError(f"{name} is empty: need at least one triplet")
    if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise ValueError(f"{name} must hold real numbers, got dtype {array.dtype}")
    array = array.astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        raise ValueError(
            f"{name} has NaN or infinite values (triplets: {describe_clips(bad.tolist())})"
        )
    return array


def triplet_accuracy(
    d_anchor_positive: object,
    d_anchor_negative: object,
    *,
    ties: Literal["half", "wrong"] = "half",
) -> dict[str, float]:
    """Share of triplets with d(a, p) < d(a, n), and its one-sided binomial p-value.

    Parameters
    ----------
    d_anchor_positive, d_anchor_negative:
        1-D finite distances, one per triplet, same length (≥ 1); lower = more similar.
    ties:
        ``"half"`` (default): an exact tie counts ½; ``"wrong"``: it counts 0.

    Returns
    -------
    dict
        ``accuracy`` in [0, 1], ``n`` triplets, ``n_correct`` (a float: may end in .5),
        ``n_ties``, ``p_value`` (see the module docstring).
    """
    if ties not in ("half", "wrong"):
        raise ValueError(f"ties must be 'half' or 'wrong', got {ties!r}")
    positive = _distances(d_anchor_positive, "d_anchor_positive")
    negative = _distances(d_anchor_negative, "d_anchor_negative")
    if positive.shape != negative.shape:
        raise ValueError(
            f"got {positive.shape[0]} anchor-positive and {negative.shape[0]} anchor-negative "
            "distances"
        )
    wins = int((positive < negative).sum())
    n_ties = int((positive == negative).sum())
    n_correct = wins + (0.5 * n_ties if ties == "half" else 0.0)
    return _report(float(n_correct), int(positive.shape[0]), n_ties)


def two_afc_accuracy(
    model_choices: Sequence[Hashable] | np.ndarray,
    human_choices: Sequence[Hashable] | np.ndarray,
) -> dict[str, float]:
    """Share of two-alternative trials where the model picks what listeners picked.

    Choices are any hashable values (typically 0/1 or "A"/"B"), one per trial, same length
    (≥ 1); ``None``/NaN is an error. Returns the same keys as :func:`triplet_accuracy`
    (``n_ties`` is always 0).
    """
    codes = []
    for name, values in (("model_choices", model_choices), ("human_choices", human_choices)):
        if isinstance(values, str | bytes):
            raise ValueError(f"{name} must be a sequence of choices, not a string")
        items = values.tolist() if isinstance(values, np.ndarray) else list(values)
        if not items:
            raise ValueError(f"{name} is empty: need at least one trial")
        codes.append(items)
    if len(codes[0]) != len(codes[1]):
        raise ValueError(f"got {len(codes[0])} model choices and {len(codes[1])} human choices")
    # One shared code per distinct choice value across both lists.
    encoded = encode_labels(codes[0] + codes[1], 2 * len(codes[0])).codes
    missing = np.flatnonzero(encoded < 0) % len(codes[0])
    if missing.size:
        raise ValueError(
            "choices are missing (None or NaN) for trials "
            + describe_clips(sorted(set(missing.tolist())))
        )
    n = len(codes[0])
    n_correct = int((encoded[:n] == encoded[n:]).sum())
    return _report(n_correct, n, 0)
