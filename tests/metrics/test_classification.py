"""Classification scores: hand-computed values, brute-force and scikit-learn cross-checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn import metrics as skm

from audiobench.metrics import (
    accuracy,
    average_precision_per_class,
    balanced_accuracy,
    classification_scores,
    macro_average_precision,
    macro_average_precision_details,
    macro_f1,
    multilabel_f1,
    top_k_accuracy,
)

# Five samples, three classes; the arg-max (ties -> lowest column) is marked:
#
#   sample  true   scores             pred   rank of true class
#     0      0     0.7  0.2  0.1       0 ✓    1
#     1      1     0.1  0.3  0.6       2 ✗    2
#     2      2     0.2  0.2  0.6       2 ✓    1
#     3      2     0.5  0.5  0.0       0 ✗    3  (column 0 wins the 0/1 tie)
#     4      1     0.3  0.4  0.3       1 ✓    1
Y = np.array([0, 1, 2, 2, 1])
S = np.array(
    [
        [0.7, 0.2, 0.1],
        [0.1, 0.3, 0.6],
        [0.2, 0.2, 0.6],
        [0.5, 0.5, 0.0],
        [0.3, 0.4, 0.3],
    ]
)


def test_hand_computed_multiclass() -> None:
    assert accuracy(Y, S) == pytest.approx(3 / 5)
    # Recall: class 0 1/1, class 1 1/2 (sample 4), class 2 1/2 (sample 2).
    assert balanced_accuracy(Y, S) == pytest.approx((1 + 0.5 + 0.5) / 3)
    # pred = [0, 2, 2, 0, 1]. F1 = 2TP / (2TP + FP + FN):
    # class 0: TP 1, FP 1 (s3), FN 0 -> 2/3; class 1: TP 1, FP 0, FN 1 (s1) -> 2/3;
    # class 2: TP 1, FP 1 (s1), FN 1 (s3) -> 1/2.   Mean 11/18.
    assert macro_f1(Y, S) == pytest.approx(11 / 18)
    assert top_k_accuracy(Y, S, 1) == pytest.approx(3 / 5)  # top-1 == accuracy
    assert top_k_accuracy(Y, S, 2) == pytest.approx(4 / 5)  # only sample 3 has rank 3
    assert top_k_accuracy(Y, S, 3) == 1.0


def test_ties_go_to_the_lowest_column_in_accuracy_and_top_k() -> None:
    scores = np.array([[0.5, 0.5, 0.0]])
    # True class 1 ties with column 0, which ranks first: rank 2.
    assert accuracy([1], scores) == 0.0
    assert top_k_accuracy([1], scores, 1) == 0.0
    assert top_k_accuracy([1], scores, 2) == 1.0
    assert accuracy([0], scores) == 1.0
    # All-equal scores: class c has rank c + 1.
    flat = np.zeros((3, 4))
    assert top_k_accuracy([0, 1, 3], flat, 2) == pytest.approx(2 / 3)


def test_top_k_with_k_at_least_the_number_of_classes() -> None:
    assert top_k_accuracy(Y, S, 5) == 1.0  # every class is in the top 5 of 3
    report = classification_scores(Y, S)  # C = 3 <= 5: the trivial top-5 is left out
    assert "top_5_accuracy" not in report
    assert classification_scores(Y, S, top_k=2)["top_2_accuracy"] == pytest.approx(4 / 5)


def test_report_and_class_names() -> None:
    report = classification_scores(Y, S, top_k=2)
    assert report == {
        "accuracy": pytest.approx(0.6),
        "balanced_accuracy": pytest.approx(2 / 3),
        "f1_macro": pytest.approx(11 / 18),
        "top_2_accuracy": pytest.approx(0.8),
        "n_samples": 5,
        "n_classes": 3,
    }
    names = ["dog", "cat", "bird"]
    labelled = classification_scores([names[i] for i in Y], S, classes=names, top_k=2)
    assert labelled == report
    assert accuracy(["dog", "cat"], S[:2], classes=names) == 0.5


def test_macro_f1_leaves_out_classes_neither_true_nor_predicted() -> None:
    # Four columns; class 3 is never true nor predicted, class 2 only predicted.
    scores = np.array([[1.0, 0, 0, 0], [0, 1.0, 0, 0], [0, 0, 1.0, 0]])
    y = np.array([0, 1, 1])
    # class 0: 1, class 1: TP 1, FN 1 -> 2/3, class 2: FP 1 -> 0; class 3 left out.
    assert macro_f1(y, scores) == pytest.approx((1 + 2 / 3 + 0) / 3)
    assert macro_f1(y, scores) == pytest.approx(skm.f1_score(y, scores.argmax(1), average="macro"))
    # Balanced accuracy only averages classes present in y_true (0 and 1).
    assert balanced_accuracy(y, scores) == pytest.approx((1 + 0.5) / 2)


def _reference_top_k(y: np.ndarray, scores: np.ndarray, k: int) -> float:
    hits = 0
    for label, row in zip(y.tolist(), scores.tolist(), strict=True):
        order = sorted(range(len(row)), key=lambda j: (-row[j], j))
        hits += label in order[:k]
    return hits / len(y)


@pytest.mark.parametrize("seed", range(4))
def test_multiclass_matches_sklearn_and_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, n_classes = 60, 9
    y = rng.integers(0, n_classes, n)
    scores = rng.normal(size=(n, n_classes))
    predicted = scores.argmax(axis=1)
    assert accuracy(y, scores) == pytest.approx(skm.accuracy_score(y, predicted))
    assert balanced_accuracy(y, scores) == pytest.approx(skm.balanced_accuracy_score(y, predicted))
    assert macro_f1(y, scores) == pytest.approx(skm.f1_score(y, predicted, average="macro"))
    for k in (1, 3, 5):
        expected = skm.top_k_accuracy_score(y, scores, k=k, labels=np.arange(n_classes))
        assert top_k_accuracy(y, scores, k) == pytest.approx(expected)
    # With many ties (scores on a coarse grid) against the plain-loop reference.
    tied = np.round(scores)
    for k in (1, 2, 5):
        assert top_k_accuracy(y, tied, k) == pytest.approx(_reference_top_k(y, tied, k))
    assert top_k_accuracy(y, tied, 1) == accuracy(y, tied)


# Multi-label: four samples, three classes; class 2 has no positive.
#
#   Y          P
#   1 0 0      0.9 0.2 0.1
#   0 1 0      0.4 0.8 0.3
#   1 1 0      0.6 0.4 0.7
#   0 0 0      0.1 0.4 0.2
#
# Class 0 sorted: 0.9(+) 0.6(+) 0.4 0.1 -> AP = (1/1 + 2/2) / 2 = 1.
# Class 1 sorted: 0.8(+), then a tie at 0.4 holding one positive (s2) and one negative (s3):
# they enter together, precision 2/3 at that threshold -> AP = (1 + 2/3) / 2 = 5/6 (breaking the
# tie by index would give 1, against it 2/3).
# mAP over classes 0 and 1 = 11/12, class 2 skipped.
# At threshold 0.5 predictions are [1 0 0], [0 1 0], [1 0 1], [0 0 0]:
# class 0 TP 2 -> F1 1; class 1 TP 1, FN 1 -> 2/3; class 2 FP 1 -> 0; macro 5/9;
# micro: TP 3, FP 1, FN 1 -> 6 / 8.
YM = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 0]])
PM = np.array([[0.9, 0.2, 0.1], [0.4, 0.8, 0.3], [0.6, 0.4, 0.7], [0.1, 0.4, 0.2]])


def test_hand_computed_multilabel() -> None:
    ap = average_precision_per_class(YM, PM)
    assert ap[:2] == pytest.approx([1.0, 5 / 6])
    assert math.isnan(ap[2])
    assert macro_average_precision(YM, PM) == pytest.approx(11 / 12)
    details = macro_average_precision_details(YM, PM)
    assert (details.n_evaluated, details.n_skipped) == (2, 1)
    assert multilabel_f1(YM, PM) == pytest.approx(0.75)
    assert multilabel_f1(YM, PM, average="macro") == pytest.approx(5 / 9)
    report = classification_scores(YM.astype(bool), PM, multilabel=True)
    assert report == {
        "map": pytest.approx(11 / 12),
        "f1_micro": pytest.approx(0.75),
        "f1_macro": pytest.approx(5 / 9),
        "n_samples": 4,
        "n_classes": 3,
        "n_classes_without_positives": 1,
    }


def test_threshold_is_inclusive() -> None:
    # At 0.4 class 1 predicts s1, s2, s3 (0.4 >= 0.4 counts): TP 2, FP 1 -> F1 4/5.
    # Class 0 predicts s0, s1 (0.4 again), s2: TP 2, FP 1 -> 4/5; class 2 predicts s2 (0.7):
    # FP 1 -> 0. Macro (4/5 + 4/5 + 0) / 3 = 8/15.
    assert multilabel_f1(YM, PM, threshold=0.4, average="macro") == pytest.approx(8 / 15)
    # Micro: TP 4, FP 3, FN 0 -> 8 / 11.
    assert multilabel_f1(YM, PM, threshold=0.4) == pytest.approx(8 / 11)
    # Just above 0.4 the tied 0.4 scores drop out: class 0 TP 2 -> 1, class 1 TP 1, FN 1 -> 2/3.
    assert multilabel_f1(YM, PM, threshold=0.41, average="macro") == pytest.approx(5 / 9)


def _reference_ap(labels: list[int], scores: list[float]) -> float:
    """AP from the definition: Σ_t (R_t − R_{t−1}) P_t over distinct thresholds."""
    positives = sum(labels)
    total, previous_recall = 0.0, 0.0
    for threshold in sorted(set(scores), reverse=True):
        chosen = [lab for lab, s in zip(labels, scores, strict=True) if s >= threshold]
        recall = sum(chosen) / positives
        total += (recall - previous_recall) * sum(chosen) / len(chosen)
        previous_recall = recall
    return total


@pytest.mark.parametrize("seed", range(4))
def test_multilabel_matches_sklearn_and_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, n_classes = 50, 8
    y = (rng.random((n, n_classes)) < 0.25).astype(int)
    y[:, 5] = 0  # a class without positives
    scores = rng.random((n, n_classes))
    if seed % 2:
        scores = np.round(scores * 4) / 4  # heavy ties
    ap = average_precision_per_class(y, scores)
    for c in range(n_classes):
        if y[:, c].any():
            assert ap[c] == pytest.approx(skm.average_precision_score(y[:, c], scores[:, c]))
            assert ap[c] == pytest.approx(_reference_ap(y[:, c].tolist(), scores[:, c].tolist()))
        else:
            assert math.isnan(ap[c])
    predicted = scores >= 0.5
    assert multilabel_f1(y, scores) == pytest.approx(skm.f1_score(y, predicted, average="micro"))
    used = np.flatnonzero(y.any(axis=0) | predicted.any(axis=0))
    assert multilabel_f1(y, scores, average="macro") == pytest.approx(
        skm.f1_score(y, predicted, average="macro", labels=used)
    )


def test_average_precision_does_not_depend_on_sample_order() -> None:
    rng = np.random.default_rng(7)
    y = (rng.random((40, 5)) < 0.3).astype(int)
    y[0] = 1
    scores = np.round(rng.random((40, 5)) * 3) / 3
    order = rng.permutation(40)
    np.testing.assert_allclose(
        average_precision_per_class(y, scores), average_precision_per_class(y[order], scores[order])
    )


def test_multiclass_errors() -> None:
    with pytest.raises(ValueError, match="2-D"):
        accuracy(Y, S[0])
    with pytest.raises(ValueError, match="at least 2 classes"):
        accuracy([0, 0], np.ones((2, 1)))
    with pytest.raises(ValueError, match="empty"):
        accuracy([], np.ones((0, 3)))
    with pytest.raises(ValueError, match="5 labels for 4 rows"):
        accuracy(Y, S[:4])
    with pytest.raises(ValueError, match=r"\[0, 3\).*samples: 1"):
        accuracy([0, 3, 1, 1, 2], S)
    with pytest.raises(ValueError, match="integer class indices"):
        accuracy(Y.astype(float), S)
    bad = S.copy()
    bad[2, 1] = np.nan
    bad[4, 0] = np.inf
    with pytest.raises(ValueError, match=r"NaN or infinite.*indices: 2, 4"):
        macro_f1(Y, bad)
    with pytest.raises(ValueError, match="k must be a positive integer"):
        top_k_accuracy(Y, S, 0)
    with pytest.raises(ValueError, match=r"not in classes.*'cow'"):
        accuracy(["dog", "cow"], S[:2], classes=["dog", "cat", "bird"])
    with pytest.raises(ValueError, match="2 classes for 3 score columns"):
        accuracy([0], S[:1], classes=["a", "b"])
    with pytest.raises(ValueError, match="appears twice"):
        accuracy([0], S[:1], classes=["a", "b", "a"])


def test_multilabel_errors() -> None:
    with pytest.raises(ValueError, match="shape"):
        macro_average_precision(YM[:, :2], PM)
    with pytest.raises(ValueError, match=r"only 0 and 1, got 2.*sample 1, class 0"):
        macro_average_precision(np.array([[1, 0, 0], [2, 0, 0], [0, 0, 0], [0, 0, 0]]), PM)
    with pytest.raises(ValueError, match="no positive label"):
        multilabel_f1(np.zeros((4, 3)), PM)
    with pytest.raises(ValueError, match="average"):
        multilabel_f1(YM, PM, average="weighted")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="threshold"):
        multilabel_f1(YM, PM, threshold=float("nan"))
    with pytest.raises(ValueError, match="2 classes for 3 score columns"):
        classification_scores(YM, PM, multilabel=True, classes=["a", "b"])


# --- Edge cases where scikit-learn (which computes these now) could differ from the definitions.


def test_macro_f1_counts_a_true_class_that_is_never_predicted() -> None:
    # Class 2 is true for sample 2 but never predicted: F1 0, and it is averaged in.
    scores = np.array([[1.0, 0, 0], [0, 1.0, 0], [1.0, 0, 0]])
    y = np.array([0, 1, 2])
    # class 0: TP 1, FP 1 -> 2/3; class 1: 1; class 2: FN 1 -> 0.
    assert macro_f1(y, scores) == pytest.approx((2 / 3 + 1 + 0) / 3)
    assert balanced_accuracy(y, scores) == pytest.approx((1 + 1 + 0) / 3)


def test_library_conventions_raise_no_warnings() -> None:
    import warnings

    # A class predicted but never true (balanced accuracy, F1), k >= C (top-k), a column
    # without positives (mAP) and a class neither true nor predicted (multi-label macro F1).
    scores = np.array([[0.0, 1.0, 0, 0], [0, 1.0, 0, 0], [1.0, 0, 0, 0]])
    y = np.array([0, 1, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        balanced_accuracy(y, scores)
        macro_f1(y, scores)
        top_k_accuracy(y, scores, 4)
        top_k_accuracy(y, scores, 9)
        macro_average_precision(YM, PM)
        multilabel_f1(YM, PM, average="macro")
        multilabel_f1(YM, np.zeros_like(PM) + 0.9, average="macro")


def test_top_k_with_two_classes_and_ties() -> None:
    # Two columns are "binary" to scikit-learn; the column-index tie rule still holds.
    scores = np.array([[0.5, 0.5], [0.2, 0.8], [0.9, 0.1]])
    y = np.array([1, 1, 1])
    assert top_k_accuracy(y, scores, 1) == pytest.approx(1 / 3) == accuracy(y, scores)
    assert top_k_accuracy(y, scores, 2) == 1.0
    # Ties between the true class and a later column: the true (lower) column wins.
    tied = np.array([[0.0, 0.7, 0.7, 0.7, 0.1]])
    assert top_k_accuracy([1], tied, 1) == 1.0
    assert top_k_accuracy([3], tied, 2) == 0.0
    assert top_k_accuracy([3], tied, 3) == 1.0


def test_average_precision_ties_and_all_positive_columns() -> None:
    # Column 0: every sample positive -> 1. Column 1: the positive ties with both negatives at
    # the top score -> one threshold with precision 1/3 -> AP 1/3 (by index it would be 1).
    y = np.array([[1, 1], [1, 0], [1, 0]])
    scores = np.array([[0.2, 0.5], [0.4, 0.5], [0.4, 0.5]])
    np.testing.assert_allclose(average_precision_per_class(y, scores), [1.0, 1 / 3])
    assert _reference_ap([1, 0, 0], [0.5, 0.5, 0.5]) == pytest.approx(1 / 3)
