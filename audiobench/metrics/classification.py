"""Classification scores from predicted class scores (the probe family's metrics).

Two settings, each from a score matrix ``scores`` of shape ``[n, C]`` (any real numbers:
logits, probabilities, decision values; higher means "more likely this class"):

**Multi-class** (one true class per sample). ``y_true`` holds class indices ``0 .. C-1``
(or labels looked up in ``classes``, where ``classes[j]`` names column ``j``). The predicted
class is the arg-max of each row; **ties go to the lowest column index** (``np.argmax``), and
top-k uses the same order, so top-1 accuracy always equals accuracy.

- accuracy = (1/n) Σ_i [ŷ_i = y_i]
- balanced accuracy = mean over classes present in ``y_true`` of the recall TP_c / n_c
- macro F1 = mean over classes present in ``y_true`` *or* in the predictions of
  F1_c = 2·TP_c / (2·TP_c + FP_c + FN_c); a class that is neither true nor predicted anywhere
  has no defined F1 and is left out (as scikit-learn's ``f1_score(average="macro")``)
- top-k accuracy = (1/n) Σ_i [rank_i ≤ k], rank_i = 1 + #{j: s_ij > s_iy} + #{j < y: s_ij = s_iy}

**Multi-label** (any number of true classes per sample). ``y_true`` is a binary indicator
matrix ``[n, C]``.

- average precision of class c (threshold form, as scikit-learn's
  ``average_precision_score``): AP_c = Σ_t (R_t − R_{t−1}) · P_t over the distinct score values
  t of column c in decreasing order, P_t and R_t the precision and recall of predicting
  "positive" for every sample with score ≥ t. Tied scores enter together (one threshold), so
  AP does not depend on the order of samples. AP_c is undefined for a class without positives.
- macro mAP = mean of AP_c over the classes with at least one positive; the others are skipped
  and counted (``n_classes_without_positives`` in the report).
- at a threshold τ (default 0.5) a sample is predicted positive for class c when s_ic ≥ τ;
  micro F1 = 2·ΣTP / (2·ΣTP + ΣFP + ΣFN) over all cells; macro F1 = mean of F1_c over the
  classes that are true or predicted for at least one sample.

The numbers come from :mod:`sklearn.metrics` (``accuracy_score``, ``balanced_accuracy_score``,
``f1_score``, ``top_k_accuracy_score`` on the column-reversed scores so that ties keep the
lowest-column rule, ``average_precision_score`` per class); this module validates the inputs,
fixes the conventions above and names offending samples in its errors.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np

from audiobench.metrics.results import MetricResult
from audiobench.metrics.validation import check_positive_int, describe_clips

__all__ = [
    "accuracy",
    "average_precision_per_class",
    "balanced_accuracy",
    "classification_scores",
    "macro_average_precision",
    "macro_average_precision_details",
    "macro_f1",
    "multilabel_f1",
    "top_k_accuracy",
]


def _score_matrix(scores: object) -> np.ndarray:
    """``scores`` as a finite float64 array ``[n, C]`` with n ≥ 1 and C ≥ 2."""
    array = np.asarray(scores)
    if array.ndim != 2:
        raise ValueError(f"scores must be a 2-D array (samples × classes), got shape {array.shape}")
    if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise ValueError(f"scores must be real numbers, got dtype {array.dtype}")
    if array.shape[0] < 1:
        raise ValueError("scores is empty: need at least one sample")
    if array.shape[1] < 2:
        raise ValueError(f"need scores for at least 2 classes, got {array.shape[1]}")
    array = array.astype(np.float64, copy=False)
    bad = np.flatnonzero(~np.isfinite(array).all(axis=1))
    if bad.size:
        raise ValueError(
            f"scores contain NaN or infinite values in {bad.size} row(s) "
            f"(indices: {describe_clips(bad.tolist())})"
        )
    return array


def _class_indices(
    y_true: object, n_samples: int, n_classes: int, classes: Sequence[Hashable] | None
) -> np.ndarray:
    """One column index per sample, checked against the score matrix."""
    if isinstance(y_true, str | bytes):
        raise ValueError("y_true must be a sequence with one label per sample, not a string")
    if classes is not None:
        names = list(classes)
        if len(names) != n_classes:
            raise ValueError(f"got {len(names)} classes for {n_classes} score columns")
        column = {}
        for position, name in enumerate(names):
            if name in column:
                raise ValueError(f"class {name!r} appears twice in classes")
            column[name] = position
        values = y_true.tolist() if isinstance(y_true, np.ndarray) else list(y_true)  # type: ignore[call-overload]
        if len(values) != n_samples:
            raise ValueError(f"got {len(values)} labels for {n_samples} rows of scores")
        unknown = [i for i, value in enumerate(values) if value not in column]
        if unknown:
            raise ValueError(
                f"{len(unknown)} label(s) not in classes, e.g. {values[unknown[0]]!r} "
                f"(samples: {describe_clips(unknown)})"
            )
        return np.array([column[value] for value in values], dtype=np.int64)
    array = np.asarray(y_true)
    if array.ndim != 1:
        raise ValueError(f"y_true must be 1-D (one class per sample), got shape {array.shape}")
    if array.shape[0] != n_samples:
        raise ValueError(f"got {array.shape[0]} labels for {n_samples} rows of scores")
    if not np.issubdtype(array.dtype, np.integer) or array.dtype == np.bool_:
        raise ValueError(
            f"y_true must hold integer class indices, got dtype {array.dtype}; "
            "pass classes=[...] to use other labels"
        )
    bad = np.flatnonzero((array < 0) | (array >= n_classes))
    if bad.size:
        raise ValueError(
            f"class indices must lie in [0, {n_classes}), got e.g. {int(array[bad[0]])} "
            f"(samples: {describe_clips(bad.tolist())})"
        )
    return array.astype(np.int64)


def _multiclass(
    y_true: object, scores: object, classes: Sequence[Hashable] | None
) -> tuple[np.ndarray, np.ndarray]:
    matrix = _score_matrix(scores)
    return _class_indices(y_true, matrix.shape[0], matrix.shape[1], classes), matrix


def accuracy(y_true: object, scores: object, *, classes: Sequence[Hashable] | None = None) -> float:
    """Fraction of samples whose arg-max class (ties → lowest column) is the true class.

    Parameters
    ----------
    y_true:
        One class per sample: an index ``0 .. C-1``, or a label from ``classes``.
    scores:
        ``[n, C]`` class scores, higher = more likely.
    classes:
        Optional names of the C columns, in column order.

    Returns
    -------
    float
        Accuracy in [0, 1].
    """
    from sklearn.metrics import accuracy_score

    y, matrix = _multiclass(y_true, scores, classes)
    return float(accuracy_score(y, matrix.argmax(axis=1)))


def balanced_accuracy(
    y_true: object, scores: object, *, classes: Sequence[Hashable] | None = None
) -> float:
    """Mean per-class recall over the classes present in ``y_true``, in [0, 1].

    Classes that are only predicted (never true) have no recall and do not count; a
    prediction of such a class still lowers the recall of the sample's true class. Same
    arguments as :func:`accuracy`.
    """
    from sklearn.metrics import balanced_accuracy_score

    y, matrix = _multiclass(y_true, scores, classes)
    with warnings.catch_warnings():
        # "y_pred contains classes not in y_true": those classes are left out, as documented.
        warnings.simplefilter("ignore", UserWarning)
        return float(balanced_accuracy_score(y, matrix.argmax(axis=1)))


def macro_f1(y_true: object, scores: object, *, classes: Sequence[Hashable] | None = None) -> float:
    """Macro-averaged F1 of the arg-max predictions, in [0, 1].

    F1_c = 2·TP_c / (2·TP_c + FP_c + FN_c), averaged over the classes that are true or
    predicted for at least one sample (the others have no defined F1). Same arguments as
    :func:`accuracy`.
    """
    from sklearn.metrics import f1_score

    y, matrix = _multiclass(y_true, scores, classes)
    # Without ``labels`` scikit-learn averages over the classes in y_true or y_pred; each has
    # 2·TP + FP + FN > 0, so zero_division never applies (it only silences the warning).
    return float(f1_score(y, matrix.argmax(axis=1), average="macro", zero_division=0.0))


def top_k_accuracy(
    y_true: object, scores: object, k: int = 5, *, classes: Sequence[Hashable] | None = None
) -> float:
    """Fraction of samples whose true class is among the k highest-scored classes, in [0, 1].

    The rank of the true class y in row i is 1 + #{j: s_ij > s_iy} + #{j < y: s_ij = s_iy}
    (ties ordered by column index, as in :func:`accuracy`); a hit is rank ≤ k. When k ≥ C
    every class is in the top k and the result is 1.0 (scikit-learn's convention too);
    :func:`classification_scores` leaves such a trivial score out of its report.
    """
    from sklearn.metrics import top_k_accuracy_score

    k = check_positive_int(k, "k")
    y, matrix = _multiclass(y_true, scores, classes)
    n_classes = matrix.shape[1]
    if k >= n_classes:
        return 1.0  # every class is in the top k (scikit-learn warns and returns 1.0)
    if k == 1:
        return accuracy(y, matrix)  # C = 2 is "binary" to scikit-learn, which then wants 1-D
    # scikit-learn ranks tied scores by *decreasing* column index (a stable ascending sort,
    # reversed); reversing the columns turns that into this module's lowest-column-first rule.
    return float(
        top_k_accuracy_score(n_classes - 1 - y, matrix[:, ::-1], k=k, labels=np.arange(n_classes))
    )


def _indicator_matrix(y_true: object, shape: tuple[int, int]) -> np.ndarray:
    """A binary indicator matrix of the given shape as bool, rejecting anything but 0/1."""
    array = np.asarray(y_true)
    if array.shape != shape:
        raise ValueError(
            f"multi-label y_true must be an indicator matrix of shape {shape} "
            f"(like scores), got shape {array.shape}"
        )
    if array.dtype == np.bool_:
        return array
    if not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)):
        raise ValueError(f"multi-label y_true must hold 0/1 values, got dtype {array.dtype}")
    bad = np.argwhere((array != 0) & (array != 1))
    if bad.size:
        row, column = (int(v) for v in bad[0])
        raise ValueError(
            f"multi-label y_true must hold only 0 and 1, got {array[row, column].item()!r} at "
            f"sample {row}, class {column} ({bad.shape[0]} such value(s))"
        )
    return array.astype(bool)


def _multilabel(y_true: object, scores: object) -> tuple[np.ndarray, np.ndarray]:
    matrix = _score_matrix(scores)
    truth = _indicator_matrix(y_true, matrix.shape)
    if not truth.any():
        raise ValueError("multi-label y_true has no positive label at all; scores are undefined")
    return truth, matrix


def average_precision_per_class(y_true: object, scores: object) -> np.ndarray:
    """Average precision of each class (column), NaN for classes without positives.

    AP_c = Σ_t (R_t − R_{t−1}) · P_t over the distinct scores t of column c, highest first;
    tied scores form one threshold (see the module docstring). Equivalently,
    AP_c = (1/n⁺_c) Σ_{i positive} P(end of i's tie group).

    Parameters
    ----------
    y_true:
        ``[n, C]`` binary indicator matrix (bool, or numbers that are all 0 or 1).
    scores:
        ``[n, C]`` scores, higher = more likely positive.

    Returns
    -------
    np.ndarray
        float64 ``[C]``, values in [0, 1], NaN where the class has no positive sample.
    """
    from sklearn.metrics import average_precision_score

    truth, matrix = _multilabel(y_true, scores)
    ap = np.full(matrix.shape[1], np.nan)
    for c in np.flatnonzero(truth.any(axis=0)):
        ap[c] = average_precision_score(truth[:, c], matrix[:, c])
    return ap


def macro_average_precision(y_true: object, scores: object) -> float:
    """Macro mAP: the mean of :func:`average_precision_per_class` over classes with positives.

    Classes without any positive sample are skipped (their AP is undefined).

    Raises
    ------
    ValueError
        If no class has a positive sample, or the inputs are malformed.
    """
    return macro_average_precision_details(y_true, scores).value


def macro_average_precision_details(y_true: object, scores: object) -> MetricResult:
    """:func:`macro_average_precision` as a :class:`MetricResult`: ``n_evaluated`` (classes
    averaged), ``n_skipped`` (classes without positives) and the per-class APs (NaN for
    skipped classes) as ``per_clip``."""
    ap = average_precision_per_class(y_true, scores)
    evaluated = ~np.isnan(ap)
    return MetricResult(
        name="map",
        value=float(np.mean(ap[evaluated])),
        n_evaluated=int(evaluated.sum()),
        n_skipped=int((~evaluated).sum()),
        per_clip=ap,
    )


def multilabel_f1(
    y_true: object,
    scores: object,
    *,
    threshold: float = 0.5,
    average: Literal["micro", "macro"] = "micro",
) -> float:
    """F1 of thresholded multi-label predictions (positive when score ≥ ``threshold``).

    ``average="micro"``: 2·ΣTP / (2·ΣTP + ΣFP + ΣFN) over all (sample, class) cells.
    ``average="macro"``: mean of F1_c over the classes that are true or predicted somewhere.
    Both in [0, 1]. ``threshold`` must be finite (0.5 suits probabilities; pass 0 for logits).
    """
    if average not in ("micro", "macro"):
        raise ValueError(f"average must be 'micro' or 'macro', got {average!r}")
    if isinstance(threshold, bool) or not np.isfinite(float(threshold)):
        raise ValueError(f"threshold must be a finite number, got {threshold!r}")
    from sklearn.metrics import f1_score

    truth, matrix = _multilabel(y_true, scores)
    predicted = matrix >= float(threshold)
    # Macro: only the classes true or predicted somewhere (scikit-learn would count the others
    # as 0 otherwise). Every averaged F1 then has a positive denominator (truth has a positive).
    used = np.flatnonzero(truth.any(axis=0) | predicted.any(axis=0))
    return float(
        f1_score(
            truth,
            predicted,
            average=average,
            labels=used if average == "macro" else None,
            zero_division=0.0,
        )
    )


def classification_scores(
    y_true: object,
    scores: object,
    *,
    multilabel: bool = False,
    classes: Sequence[Hashable] | None = None,
    top_k: int = 5,
    threshold: float = 0.5,
) -> dict[str, float]:
    """The classification family's report, as a flat dict of plain numbers.

    Multi-class (``multilabel=False``): ``accuracy``, ``balanced_accuracy``, ``f1_macro``,
    ``top_{k}_accuracy`` (only when C > k: with C ≤ k it is trivially 1.0 and is left out),
    ``n_samples``, ``n_classes``.

    Multi-label (``multilabel=True``, ``y_true`` an indicator matrix): ``map`` (macro mAP over
    classes with positives), ``f1_micro`` and ``f1_macro`` at ``threshold``, ``n_samples``,
    ``n_classes``, ``n_classes_without_positives`` (classes skipped by mAP).

    ``classes`` names the score columns; in the multi-class case ``y_true`` then holds those
    names, in the multi-label case it is only checked to have one name per column.
    """
    top_k = check_positive_int(top_k, "top_k")
    matrix = _score_matrix(scores)
    n_samples, n_classes = matrix.shape
    if not multilabel:
        y = _class_indices(y_true, n_samples, n_classes, classes)
        report: dict[str, float] = {
            "accuracy": accuracy(y, matrix),
            "balanced_accuracy": balanced_accuracy(y, matrix),
            "f1_macro": macro_f1(y, matrix),
        }
        if n_classes > top_k:
            report[f"top_{top_k}_accuracy"] = top_k_accuracy(y, matrix, top_k)
        report.update(n_samples=n_samples, n_classes=n_classes)
        return report
    if classes is not None and len(list(classes)) != n_classes:
        raise ValueError(f"got {len(list(classes))} classes for {n_classes} score columns")
    result = macro_average_precision_details(y_true, matrix)
    return {
        "map": result.value,
        "f1_micro": multilabel_f1(y_true, matrix, threshold=threshold, average="micro"),
        "f1_macro": multilabel_f1(y_true, matrix, threshold=threshold, average="macro"),
        "n_samples": n_samples,
        "n_classes": n_classes,
        "n_classes_without_positives": result.n_skipped,
    }
