"""Pair classification: is a pair of clips "same" (label 1) or "different" (label 0)?

Each pair (a_i, b_i) gets a similarity score s_i, higher meaning more alike, from one of

- ``cosine``: ⟨a, b⟩ / (‖a‖ ‖b‖) (a zero vector has no cosine: an error naming the pairs),
- ``dot``: ⟨a, b⟩,
- ``euclidean``: −‖a − b‖₂ and ``manhattan``: −‖a − b‖₁ (distances negated, so that higher
  is more similar for every function).

Scores are computed in float64 by default. With ``precision="float32"`` they are computed as
MTEB computes them, in float32 from float32 embeddings: cosine as 1 − ½‖â − b̂‖² of the rows
scaled to unit norm (scikit-learn's paired cosine distance), the distances as ‖a − b‖₂ and
Σ|a − b|, the dot product row by row, and the encoder's own similarity (``similarity_*``) as
⟨â, b̂⟩; the float32 values then enter the metrics as float64, as MTEB's lists of scores do.
Every metric below reads only the scores and the labels y_i ∈ {0, 1}; both classes must be
present (the metrics are undefined otherwise).

**Thresholds.** Sort the scores in decreasing order, s_(1) ≥ s_(2) ≥ … ≥ s_(n). A threshold
can only sit between two *different* consecutive scores (it cannot split tied pairs, so the
order of tied pairs never matters): the candidates are t_j = (s_(j) + s_(j+1)) / 2 for the j
in 1 … n−1 with s_(j) > s_(j+1), and at t_j the j highest-scoring pairs are predicted "same".
Every candidate predicts at least one pair of each kind; "all same" and "all different" are
not candidates. When several candidates reach the best value the highest threshold wins.

- **accuracy**: max over candidates of (TP + TN) / n, and its threshold.
- **F1**: max over candidates with TP > 0 of 2·P·R / (P + R), P = TP / j, R = TP / n_pos,
  with that candidate's precision P, recall R and threshold.

When there is no candidate (all scores tied) accuracy and F1 are 0.0 and their thresholds
NaN; F1, precision and recall are also 0.0 when no candidate has a true positive.

**Average precision** (scikit-learn's ``average_precision_score``, the threshold form):
AP = Σ_t (R_t − R_{t−1}) · P_t over the distinct score values t in decreasing order, with P_t
and R_t the precision and recall of predicting "same" for every pair scoring ≥ t. Tied pairs
enter together, so AP does not depend on their order.

:func:`pair_classification_scores` reports each metric per similarity function, keyed
``"{function}_{metric}"``, and ``max_{metric}`` = the largest value of that metric over the
functions (each maximised on its own: ``max_precision`` need not come from the same function
as ``max_f1``). The main score is ``max_ap``; this report follows MTEB's pair classification
evaluator, whose threshold search and keys it reproduces (MTEB does not report thresholds).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from audiobench.metrics.errors import InvalidEmbeddingsError
from audiobench.metrics.validation import describe_clips, validate_embeddings

__all__ = [
    "PAIR_METRICS",
    "PAIR_SIMILARITIES",
    "Precision",
    "average_precision",
    "best_accuracy_threshold",
    "best_f1_threshold",
    "pair_classification_metrics",
    "pair_classification_scores",
    "pair_similarities",
]

#: The similarity functions, in report order (distances enter negated).
PAIR_SIMILARITIES: tuple[str, ...] = ("cosine", "dot", "euclidean", "manhattan")

#: The metrics of each similarity function that enter a ``max_*`` key.
PAIR_METRICS: tuple[str, ...] = ("accuracy", "f1", "precision", "recall", "ap")


def _embedding_pairs(embeddings1: object, embeddings2: object) -> tuple[np.ndarray, np.ndarray]:
    a, _ = validate_embeddings(embeddings1)
    b, _ = validate_embeddings(embeddings2)
    if a.shape != b.shape:
        raise ValueError(
            f"embeddings1 and embeddings2 must have the same shape (one row per pair), got "
            f"{a.shape} and {b.shape}"
        )
    return a, b


Precision = Literal["float64", "float32"]


def _float32_similarities(
    a: np.ndarray, b: np.ndarray, functions: Sequence[str]
) -> dict[str, np.ndarray]:
    """The pair scores in float32, in MTEB's arithmetic (see the module docstring)."""
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    unit_a = a32 / np.sqrt(np.einsum("ij,ij->i", a32, a32))[:, None]
    unit_b = b32 / np.sqrt(np.einsum("ij,ij->i", b32, b32))[:, None]
    diff = a32 - b32
    out: dict[str, np.ndarray] = {}
    for name in functions:
        if name == "cosine":
            gap = unit_a - unit_b
            out[name] = np.float32(1) - np.float32(0.5) * np.einsum("ij,ij->i", gap, gap)
        elif name == "dot":
            out[name] = np.array([np.dot(x, y) for x, y in zip(a32, b32, strict=True)])
        elif name == "euclidean":
            out[name] = -np.sqrt(np.einsum("ij,ij->i", diff, diff))
        else:
            out[name] = -np.abs(diff).sum(axis=1)
    out["similarity"] = np.einsum("ij,ij->i", unit_a, unit_b)
    return {k: v.astype(np.float32).astype(np.float64) for k, v in out.items()}


def pair_similarities(
    embeddings1: object,
    embeddings2: object,
    functions: Sequence[str] = PAIR_SIMILARITIES,
    *,
    precision: Precision = "float64",
) -> dict[str, np.ndarray]:
    """Similarity of each pair (row i of ``embeddings1`` with row i of ``embeddings2``).

    Returns ``{function: float64 array [n_pairs]}`` for each requested function of
    :data:`PAIR_SIMILARITIES`; euclidean and manhattan are negated distances. With
    ``precision="float32"`` the scores are MTEB's float32 ones (held as float64), and a
    ``"similarity"`` entry holds the cosine of the unit rows (MTEB's model similarity).

    Raises
    ------
    ValueError
        For an unknown function, or embeddings that are not two finite ``[n, dim]`` arrays of
        the same shape with n ≥ 2.
    InvalidEmbeddingsError
        For cosine, when a row of either side is a zero vector (names the pairs).
    """
    unknown = [name for name in functions if name not in PAIR_SIMILARITIES]
    if unknown:
        raise ValueError(f"unknown similarity {unknown[0]!r}; expected one of {PAIR_SIMILARITIES}")
    if precision not in ("float64", "float32"):
        raise ValueError(f"precision must be 'float64' or 'float32', got {precision!r}")
    a, b = _embedding_pairs(embeddings1, embeddings2)
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    zero = np.flatnonzero(norms == 0)
    if zero.size and ("cosine" in functions or precision == "float32"):
        raise InvalidEmbeddingsError(
            f"cosine is undefined for zero vectors: {zero.size} pair(s) (indices: "
            f"{describe_clips(zero.tolist())})",
            zero.tolist(),
        )
    if precision == "float32":
        return _float32_similarities(a, b, functions)
    out: dict[str, np.ndarray] = {}
    for name in functions:
        if name == "cosine":
            out[name] = np.einsum("ij,ij->i", a, b) / norms
        elif name == "dot":
            out[name] = np.einsum("ij,ij->i", a, b)
        elif name == "euclidean":
            out[name] = -np.linalg.norm(a - b, axis=1)
        else:
            out[name] = -np.abs(a - b).sum(axis=1)
    return out


def _scores_and_labels(scores: object, labels: object) -> tuple[np.ndarray, np.ndarray]:
    """Finite float64 scores and 0/1 int labels of the same length, both classes present."""
    s = np.asarray(scores)
    if s.ndim != 1:
        raise ValueError(f"scores must be a 1-D array (one per pair), got shape {s.shape}")
    if not (np.issubdtype(s.dtype, np.floating) or np.issubdtype(s.dtype, np.integer)):
        raise ValueError(f"scores must be real numbers, got dtype {s.dtype}")
    s = s.astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(s))
    if bad.size:
        raise ValueError(
            f"scores contain NaN or infinite values for {bad.size} pair(s) (indices: "
            f"{describe_clips(bad.tolist())})"
        )
    y = np.asarray(labels)
    if y.ndim != 1 or y.shape[0] != s.shape[0]:
        raise ValueError(
            f"labels must be 1-D with one value per pair ({s.shape[0]}), got {y.shape}"
        )
    if not (y.dtype == np.bool_ or np.issubdtype(y.dtype, np.number)):
        raise ValueError(f"labels must be 0/1 (or bool), got dtype {y.dtype}")
    not_binary = np.flatnonzero((y != 0) & (y != 1))
    if not_binary.size:
        raise ValueError(
            f"labels must be 0 (different) or 1 (same), got {y[not_binary[0]]!r} for pair "
            f"{int(not_binary[0])}"
        )
    y = y.astype(np.int64)
    n_pos = int(y.sum())
    if n_pos == 0 or n_pos == y.shape[0]:
        missing = "same (1)" if n_pos == 0 else "different (0)"
        raise ValueError(f"labels have no {missing} pair: both classes are needed")
    return s, y


def _sorted_decreasing(s: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scores and labels in decreasing score order, and the cut positions between distinct
    scores (j = number of pairs above the cut, 1 ≤ j ≤ n − 1)."""
    order = np.argsort(-s, kind="stable")
    s_sorted, y_sorted = s[order], y[order]
    cuts = np.flatnonzero(s_sorted[:-1] != s_sorted[1:]) + 1
    return s_sorted, y_sorted, cuts


def best_accuracy_threshold(scores: object, labels: object) -> tuple[float, float]:
    """``(accuracy, threshold)`` at the best threshold (see the module docstring).

    Pairs scoring above the threshold are predicted "same". NaN threshold and 0.0 accuracy when
    all scores are tied.
    """
    s, y = _scores_and_labels(scores, labels)
    s_sorted, y_sorted, cuts = _sorted_decreasing(s, y)
    if cuts.size == 0:
        return 0.0, float("nan")
    tp = np.cumsum(y_sorted)[cuts - 1]
    n_neg = y.shape[0] - int(y.sum())
    tn = n_neg - (cuts - tp)
    accuracy = (tp + tn) / y.shape[0]
    best = int(np.argmax(accuracy))  # first = highest threshold among equals
    j = int(cuts[best])
    return float(accuracy[best]), float((s_sorted[j - 1] + s_sorted[j]) / 2)


def best_f1_threshold(scores: object, labels: object) -> tuple[float, float, float, float]:
    """``(f1, precision, recall, threshold)`` at the threshold that maximises F1.

    Only thresholds with at least one true positive count; 0.0 for the three metrics and a NaN
    threshold when there is none.
    """
    s, y = _scores_and_labels(scores, labels)
    s_sorted, y_sorted, cuts = _sorted_decreasing(s, y)
    tp = np.cumsum(y_sorted)[cuts - 1]
    cuts, tp = cuts[tp > 0], tp[tp > 0]
    if cuts.size == 0:
        return 0.0, 0.0, 0.0, float("nan")
    precision = tp / cuts
    recall = tp / int(y.sum())
    f1 = 2 * precision * recall / (precision + recall)
    best = int(np.argmax(f1))
    j = int(cuts[best])
    return (
        float(f1[best]),
        float(precision[best]),
        float(recall[best]),
        float((s_sorted[j - 1] + s_sorted[j]) / 2),
    )


def average_precision(scores: object, labels: object) -> float:
    """Average precision of ranking the pairs by score (threshold form, ties enter together)."""
    from sklearn.metrics import average_precision_score

    s, y = _scores_and_labels(scores, labels)
    return float(average_precision_score(y, s))


def pair_classification_metrics(scores: object, labels: object) -> dict[str, float]:
    """All metrics of one score vector: ``accuracy``, ``accuracy_threshold``, ``f1``,
    ``f1_threshold``, ``precision``, ``recall`` (both at the F1 threshold) and ``ap``."""
    s, y = _scores_and_labels(scores, labels)
    acc, acc_threshold = best_accuracy_threshold(s, y)
    f1, precision, recall, f1_threshold = best_f1_threshold(s, y)
    return {
        "accuracy": acc,
        "accuracy_threshold": acc_threshold,
        "f1": f1,
        "f1_threshold": f1_threshold,
        "precision": precision,
        "recall": recall,
        "ap": average_precision(s, y),
    }


def pair_classification_scores(
    embeddings1: object,
    embeddings2: object,
    labels: object,
    *,
    functions: Sequence[str] = PAIR_SIMILARITIES,
    model_similarity: str | None = "cosine",
    precision: Precision = "float64",
) -> dict[str, float]:
    """The pair classification report of embedded pairs; main score ``max_ap``.

    Parameters
    ----------
    embeddings1, embeddings2:
        ``[n_pairs, dim]`` finite arrays; row i of each forms pair i.
    labels:
        ``[n_pairs]`` 0 (different) / 1 (same), both present.
    functions:
        Similarity functions to report (default all of :data:`PAIR_SIMILARITIES`).
    model_similarity:
        The encoder's own similarity function (one of ``functions``), reported a second time
        under the ``similarity_`` prefix as MTEB does (it changes no ``max_*`` value); None
        leaves those keys out. Under ``precision="float32"`` a cosine model similarity is
        computed as MTEB's model computes it (the dot product of the unit rows), so its keys
        may differ from ``cosine_*`` in the last float32 digit.
    precision:
        ``"float64"`` (default) or ``"float32"``: MTEB's arithmetic (see the module docstring).

    Returns
    -------
    dict
        ``"{function}_{metric}"`` for every function and each metric of
        :func:`pair_classification_metrics`, then ``max_accuracy``, ``max_f1``,
        ``max_precision``, ``max_recall`` and ``max_ap`` (the main score).
    """
    if model_similarity is not None and model_similarity not in functions:
        raise ValueError(
            f"model_similarity {model_similarity!r} must be one of the functions {tuple(functions)}"
        )
    if not functions:
        raise ValueError("functions must name at least one similarity")
    similarities = pair_similarities(embeddings1, embeddings2, functions, precision=precision)
    model_scores = similarities.pop("similarity", None)
    y = np.asarray(labels)
    if y.ndim != 1 or y.shape[0] != next(iter(similarities.values())).shape[0]:
        raise ValueError(f"labels must be 1-D with one value per pair, got shape {y.shape}")
    report: dict[str, float] = {}
    per_function: dict[str, dict[str, float]] = {}
    for name, scores in similarities.items():
        per_function[name] = pair_classification_metrics(scores, y)
        for metric, value in per_function[name].items():
            report[f"{name}_{metric}"] = value
    if model_similarity is not None:
        own = per_function[model_similarity]
        if model_scores is not None and model_similarity == "cosine":
            own = pair_classification_metrics(model_scores, y)
        for metric, value in own.items():
            report[f"similarity_{metric}"] = value
    for metric in PAIR_METRICS:
        report[f"max_{metric}"] = max(values[metric] for values in per_function.values())
    return report
