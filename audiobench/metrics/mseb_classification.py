"""MSEB's classification: zero-shot scores against class-label embeddings, and its metrics.

**Scores** (:func:`label_dot_scores`). MSEB never trains a classifier: each class's weight
row is the text embedding of its raw label with a bias of 0 appended, and a clip's scores
are the dot products of its vector with a 1.0 appended. The appended pair is kept here so the
sums run over the same elements as MSEB's.

**Single-label** (:func:`mseb_multiclass_scores`): the class ranking is by decreasing score
(ties: the earlier class; MSEB's ``argpartition`` leaves them undefined), the prediction its
first. Over MSEB's *extended* labels (the classes, then the invalid and no-response
sentinels, which an embedding never predicts): ``accuracy``, ``top_5_accuracy`` (the true
class among the first min(5, C)), ``balanced_accuracy``, ``weighted_precision``,
``weighted_recall``, ``weighted_f1`` (scikit-learn, ``average="weighted"`` over all extended
labels, ``zero_division=0``), ``invalid_result_rate``, ``missing_result_rate``.

**Multi-label** (:func:`mseb_multilabel_scores`): ``map`` (scikit-learn's macro average
precision over every class column; a column without a positive gives 0), and at MSEB's
threshold of **0.5 on the raw dot products**: ``micro_f1``, ``macro_f1`` (``zero_division=0``),
``hamming_loss``, ``subset_accuracy``.

Source: ``mseb/evaluators/classification_evaluator.py``, ``mseb/tasks/classification.py``.
"""

from __future__ import annotations

import warnings

import numpy as np

from audiobench.metrics.validation import real_array

__all__ = [
    "MULTILABEL_THRESHOLD",
    "TOP_K",
    "label_dot_scores",
    "mseb_multiclass_scores",
    "mseb_multilabel_scores",
]

#: MSEB's Top-k accuracy cut-off.
TOP_K = 5
#: MSEB's decision threshold on raw dot products (multi-label).
MULTILABEL_THRESHOLD = 0.5


def label_dot_scores(clips: object, labels: object) -> np.ndarray:
    """``[n_clips, n_classes]`` scores: ``[clip, 1] · [label, 0]``, MSEB's linear classifier
    whose weights are the label embeddings (stored as float32) and whose bias is 0; each clip
    is its own vector product, as in MSEB, in the clip's dtype (float32 stays float32)."""
    x = real_array(clips, "clip embeddings", 2, "[n_clips, D]")
    w = real_array(labels, "label embeddings", 2, "[n_classes, D]")
    if x.shape[1] != w.shape[1]:
        raise ValueError(f"clip embeddings have width {x.shape[1]}, label embeddings {w.shape[1]}")
    weights = np.pad(w, ((0, 0), (0, 1)), constant_values=0.0).astype(np.float32)
    padded = np.pad(x, ((0, 0), (0, 1)), constant_values=1.0)
    return (
        np.stack([np.dot(row, weights.T) for row in padded])
        if len(padded)
        else (np.zeros((0, w.shape[0]), dtype=np.result_type(x, weights)))
    )


def _check_scores(scores: object, n: int) -> np.ndarray:
    s = real_array(scores, "scores", 2, "[n_samples, n_classes]")
    if s.shape[0] != n:
        raise ValueError(f"got {s.shape[0]} score rows and {n} references")
    if s.shape[0] == 0:
        raise ValueError("no samples to score")
    return s


def mseb_multiclass_scores(scores: object, targets: object) -> dict[str, float]:
    """MSEB's single-label metrics (module docstring); ``targets[i]`` is the class index."""
    from sklearn import metrics

    y = np.asarray(targets)
    s = _check_scores(scores, y.shape[0])
    n_classes = s.shape[1]
    if y.ndim != 1 or not np.issubdtype(y.dtype, np.integer):
        raise ValueError("targets must be a 1-D sequence of class indices")
    if ((y < 0) | (y >= n_classes)).any():
        raise ValueError(f"targets must be class indices in [0, {n_classes})")
    order = np.argsort(-s, axis=1, kind="stable")
    predicted = order[:, 0]
    top = order[:, : min(TOP_K, n_classes)]
    # The extended labels: the classes, then invalid and no-response (never predicted here).
    extended = list(range(n_classes + 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # balanced accuracy warns on classes never predicted
        precision, recall, f1, _ = metrics.precision_recall_fscore_support(
            y, predicted, average="weighted", labels=extended, zero_division=0
        )
        balanced = metrics.balanced_accuracy_score(y, predicted)
    return {
        "accuracy": float(metrics.accuracy_score(y, predicted)),
        "top_5_accuracy": float(np.mean(np.any(top == y[:, None], axis=1))),
        "balanced_accuracy": float(balanced),
        "weighted_precision": float(precision),
        "weighted_recall": float(recall),
        "weighted_f1": float(f1),
        "invalid_result_rate": float(np.mean(predicted == n_classes)),
        "missing_result_rate": float(np.mean(predicted == n_classes + 1)),
    }


def mseb_multilabel_scores(scores: object, truth: object) -> dict[str, float]:
    """MSEB's multi-label metrics (module docstring); ``truth`` is ``[n_samples, n_classes]``
    of 0/1 (labels outside the class list are left out by the caller, as MSEB does)."""
    from sklearn import metrics

    y = np.asarray(truth)
    s = _check_scores(scores, y.shape[0] if y.ndim else 0)
    if y.shape != s.shape or not np.isin(y, (0, 1)).all():
        raise ValueError(f"truth must be 0/1 of the scores' shape {s.shape}, got {y.shape}")
    y = y.astype(int)
    predicted = (s >= MULTILABEL_THRESHOLD).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a class without positives: AP 0 with a warning
        average_precision = metrics.average_precision_score(y, s, average="macro")
    return {
        "map": float(average_precision),
        "micro_f1": float(metrics.f1_score(y, predicted, average="micro", zero_division=0)),
        "macro_f1": float(metrics.f1_score(y, predicted, average="macro", zero_division=0)),
        "hamming_loss": float(metrics.hamming_loss(y, predicted)),
        "subset_accuracy": float(metrics.accuracy_score(y, predicted)),
    }
