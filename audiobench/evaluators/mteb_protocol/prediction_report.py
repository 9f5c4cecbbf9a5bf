"""Reports of predicted labels against true labels, with the keys MTEB's evaluators use.

**Single-label** (:func:`single_label_report`), from true and predicted labels (any hashable
values of one type):

- ``accuracy`` = fraction of samples predicted correctly;
- ``f1``, ``precision``, ``recall``: macro averages over the labels that are true or predicted
  for at least one sample; ``f1_weighted``, ``precision_weighted``, ``recall_weighted``:
  averages weighted by each label's number of true samples. A label never predicted has
  precision 0 (and F1 0), a label never true has recall 0 (scikit-learn's ``zero_division``
  default, ``f1_score`` / ``precision_score`` / ``recall_score``).
- ``ap`` and ``ap_weighted``: only when ``y_true`` has exactly two labels, the average
  precision of ``binary_scores`` (scores of the label 1, e.g. hard 0/1 predictions or a
  similarity to class 1) with label 1 positive, scikit-learn's ``average_precision_score``
  (for two classes the weighted value equals the plain one); None otherwise, and None when the
  two labels are not numeric with 1 among them (MTEB stops with an error there).

**Multi-label** (:func:`multilabel_report`), from binary indicator matrices ``[n, L]``:

- ``accuracy``: subset accuracy, the fraction of samples whose predicted label set is exactly
  the true one;
- ``lrap``: label ranking average precision of the scores (scikit-learn's
  ``label_ranking_average_precision_score``);
- ``f1``: macro F1 over the L label columns (a column with no true and no predicted sample
  counts as 0, scikit-learn's default);
- ``hamming``: mean over samples of |true ∩ predicted| / |true ∪ predicted|, 1 when both sets
  are empty. (MTEB calls this per-sample Jaccard index "hamming"; the key is kept for
  comparability.)
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["multilabel_report", "single_label_report"]


def _labels(values: object, name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1 or array.shape[0] < 1:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of labels, got {array.shape}")
    return array


def single_label_report(
    y_true: object, y_pred: object, *, binary_scores: object | None = None
) -> dict[str, float | None]:
    """Accuracy, macro/weighted F1, precision and recall, and AP for two classes.

    ``binary_scores`` defaults to ``y_pred`` (MTEB's logistic-regression evaluation scores the
    hard predictions); it must have one real value per sample.
    """
    from sklearn import metrics
    from sklearn.exceptions import UndefinedMetricWarning

    truth = _labels(y_true, "y_true")
    predicted = _labels(y_pred, "y_pred")
    if predicted.shape != truth.shape:
        raise ValueError(f"y_true and y_pred differ in length: {truth.shape} vs {predicted.shape}")
    with warnings.catch_warnings():
        # Undefined per-label precision/recall are 0 by definition here (see the docstring).
        warnings.simplefilter("ignore", category=UndefinedMetricWarning)
        report: dict[str, float | None] = {
            "accuracy": float(metrics.accuracy_score(truth, predicted)),
            "f1": float(metrics.f1_score(truth, predicted, average="macro")),
            "f1_weighted": float(metrics.f1_score(truth, predicted, average="weighted")),
            "precision": float(metrics.precision_score(truth, predicted, average="macro")),
            "precision_weighted": float(
                metrics.precision_score(truth, predicted, average="weighted")
            ),
            "recall": float(metrics.recall_score(truth, predicted, average="macro")),
            "recall_weighted": float(metrics.recall_score(truth, predicted, average="weighted")),
            "ap": None,
            "ap_weighted": None,
        }
    if np.unique(truth).shape[0] == 2:
        scores = predicted if binary_scores is None else np.asarray(binary_scores)
        if scores.shape != truth.shape:
            raise ValueError(f"binary_scores must have one value per sample, got {scores.shape}")
        classes = np.unique(truth)
        numeric = np.issubdtype(truth.dtype, np.number) or truth.dtype == np.bool_
        if numeric and 1 in classes.tolist() and np.issubdtype(scores.dtype, np.number):
            ap = float(metrics.average_precision_score(truth, scores))
            report["ap"] = ap
            report["ap_weighted"] = ap
    return report


def _indicator(values: object, name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 2 or array.shape[0] < 1 or array.shape[1] < 1:
        raise ValueError(f"{name} must be a non-empty 2-D indicator matrix, got {array.shape}")
    if not np.isin(array, (0, 1)).all():
        raise ValueError(f"{name} must hold only 0 and 1")
    return array.astype(np.int64)


def multilabel_report(y_true: object, y_pred: object, y_score: object) -> dict[str, float]:
    """Subset accuracy, LRAP, macro F1 and per-sample Jaccard ("hamming") of a multi-label
    prediction. ``y_true`` and ``y_pred`` are 0/1 matrices ``[n, L]``; ``y_score`` ``[n, L]``
    real scores (e.g. per-label probabilities) for LRAP."""
    from sklearn import metrics
    from sklearn.exceptions import UndefinedMetricWarning

    truth = _indicator(y_true, "y_true")
    predicted = _indicator(y_pred, "y_pred")
    scores = np.asarray(y_score, dtype=np.float64)
    if predicted.shape != truth.shape or scores.shape != truth.shape:
        raise ValueError(
            f"y_true, y_pred and y_score must have the same shape, got {truth.shape}, "
            f"{predicted.shape} and {scores.shape}"
        )
    if not np.isfinite(scores).all():
        raise ValueError("y_score contains NaN or infinite values")
    # Per-sample Jaccard by hand: sklearn's jaccard_score(average="samples") refuses L = 1.
    union = (truth | predicted).sum(axis=1)
    both = (truth & predicted).sum(axis=1)
    jaccard = np.where(union == 0, 1.0, both / np.maximum(union, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=UndefinedMetricWarning)
        f1 = float(metrics.f1_score(truth, predicted, average="macro"))
    return {
        "accuracy": float(metrics.accuracy_score(truth, predicted)),  # subset accuracy
        "lrap": float(metrics.label_ranking_average_precision_score(truth, scores)),
        "f1": f1,
        "hamming": float(np.mean(jaccard)),
    }
