"""Few-shot logistic regression, bootstrapped k-means, zero-shot argmax, reports, cosine."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold
from threadpoolctl import threadpool_limits

from audiobench.evaluators.mteb_protocol.cosine_scores import cosine_score_matrix
from audiobench.evaluators.mteb_protocol.kmeans_bootstrap import bootstrapped_kmeans_scores
from audiobench.evaluators.mteb_protocol.logistic_regression import (
    logreg_cross_validation_scores,
    logreg_multilabel_scores,
    logreg_train_test_scores,
    undersample_per_label,
)
from audiobench.evaluators.mteb_protocol.prediction_report import (
    multilabel_report,
    single_label_report,
)
from audiobench.evaluators.mteb_protocol.zero_shot_argmax import zero_shot_argmax_scores
from audiobench.metrics import InsufficientClassesError
from tests.metrics.data import clustered_embeddings


@pytest.fixture(autouse=True)
def one_openmp_thread() -> Iterator[None]:
    """k-means on a busy shared machine: OpenMP's spinning threads make it 10x slower."""
    with threadpool_limits(1):
        yield


def test_undersample_per_label_by_hand() -> None:
    labels = ["a", "b", "a", "a", "b", "c"]
    order = [5, 0, 2, 3, 1, 4]
    # one per label: 5 (c), 0 (a), then 2 and 3 are a's beyond the first, 1 (b), 4 is a second b
    assert undersample_per_label(labels, order, 1) == [5, 0, 1]
    assert undersample_per_label(labels, order, 2) == [5, 0, 2, 1, 4]
    assert undersample_per_label(np.array(labels), np.array(order), 9) == order


def test_cross_validation_follows_the_accumulated_shuffle() -> None:
    """Fold f uses the permutation π of RandomState(seed) applied f + 1 times (independently
    rebuilt here: order_f = order_{f-1}[π])."""
    rng = np.random.default_rng(0)
    X, y = clustered_embeddings(rng, [9, 7, 12], 5, 1.0)
    seed, per_label = 7, 3
    ours = logreg_cross_validation_scores(X, y, samples_per_label=per_label, seed=seed)
    folds = list(KFold(5, shuffle=True, random_state=seed).split(X))
    m = folds[0][0].shape[0]
    permutation = np.random.RandomState(seed).permutation(m)
    order = np.arange(m)
    for fold, (train, test) in enumerate(folds):
        order = order[permutation]
        counts: dict[int, int] = {}
        chosen = []
        for position in order:
            label = int(y[train[position]])
            if counts.get(label, 0) < per_label:
                chosen.append(train[position])
                counts[label] = counts.get(label, 0) + 1
        model = LogisticRegression(max_iter=100, random_state=seed).fit(X[chosen], y[chosen])
        accuracy = float(np.mean(model.predict(X[test]) == y[test]))
        assert ours["scores_per_experiment"][fold]["accuracy"] == accuracy


def test_train_test_reports_and_validation() -> None:
    rng = np.random.default_rng(1)
    X, y = clustered_embeddings(rng, [20, 20, 20], 4, 0.5)
    labels = np.array(["x", "y", "z"])[y]
    report = logreg_train_test_scores(X[::2], labels[::2], X[1::2], labels[1::2], n_experiments=3)
    assert len(report["scores_per_experiment"]) == 3
    assert 0.0 <= report["accuracy"] <= 1.0
    assert np.isnan(report["ap"])  # three classes: no AP
    with pytest.raises(ValueError, match="dimension"):
        logreg_train_test_scores(X, labels, X[:, :2], labels)
    with pytest.raises(ValueError, match="labels for"):
        logreg_train_test_scores(X, labels[:-1], X, labels)
    with pytest.raises(ValueError, match="missing labels"):
        logreg_cross_validation_scores(X[:4], ["a", None, "b", "a"], n_splits=2)
    with pytest.raises(ValueError, match="single label"):
        logreg_cross_validation_scores(X[:10], ["a"] * 10)
    with pytest.raises(ValueError, match="n_splits"):
        logreg_cross_validation_scores(X[:3], ["a", "b", "a"], n_splits=4)


def test_multilabel_sampling_and_missing_training_labels() -> None:
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 4))
    labels = [["a", "b"] if i % 3 == 0 else ["a"] if i % 3 == 1 else ["c"] for i in range(40)]
    report = logreg_multilabel_scores(X, labels, X, labels, samples_per_label=4, n_experiments=2)
    assert set(report) == {"accuracy", "lrap", "f1", "hamming", "scores_per_experiment"}
    with pytest.raises(ValueError, match="all positive or all negative"):
        logreg_multilabel_scores(X, labels, X[:3], [["a"], ["d"], ["c"]], n_experiments=1)


def test_bootstrapped_kmeans() -> None:
    rng = np.random.default_rng(3)
    X, y = clustered_embeddings(rng, [30, 30, 30], 4, 0.2)
    report = bootstrapped_kmeans_scores(X, y, n_bootstraps=3, sample_size=200)
    assert len(report["v_measures"]) == 3 and report["v_measure"] > 0.9
    as_strings = bootstrapped_kmeans_scores(
        X, [f"c{v}" for v in y], n_bootstraps=3, sample_size=200
    )
    assert as_strings["v_measures"] == report["v_measures"]
    with pytest.raises(InsufficientClassesError):
        bootstrapped_kmeans_scores(X, np.zeros(90, dtype=int))
    with pytest.raises(ValueError, match="sample_size"):
        bootstrapped_kmeans_scores(X, y, sample_size=0)


def test_zero_shot_argmax() -> None:
    similarity = np.array([[0.2, 0.2, 0.1], [0.0, 0.3, 0.9], [0.5, 0.1, 0.5]])
    # Ties go to the lowest class: predictions 0, 2, 0.
    report = zero_shot_argmax_scores(similarity, [0, 2, 2])
    assert report["accuracy"] == pytest.approx(2 / 3)
    assert report["ap"] is None  # two true classes {0, 2}, class 1 not among them
    named = zero_shot_argmax_scores(similarity, ["a", "c", "c"], classes=["a", "b", "c"])
    assert named == report
    binary = zero_shot_argmax_scores(np.array([[0.9, 0.1], [0.4, 0.6], [0.3, 0.7]]), [0, 1, 0])
    # AP of the class-1 similarities 0.1, 0.6, 0.7 for labels 0, 1, 0: the positive ranks 2nd.
    assert binary["ap"] == pytest.approx(0.5) and binary["ap_weighted"] == binary["ap"]
    with pytest.raises(ValueError, match="not among the classes"):
        zero_shot_argmax_scores(similarity, ["a", "z", "c"], classes=["a", "b", "c"])
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        zero_shot_argmax_scores(similarity, [0, 3, 1])


def test_single_label_report_by_hand() -> None:
    # Truth a a b b c, predictions a b b b a. Per label: a P 1/2 R 1/2; b P 2/3 R 1; c P 0 R 0.
    report = single_label_report(list("aabbc"), list("abbba"))
    assert report["accuracy"] == pytest.approx(3 / 5)
    assert report["precision"] == pytest.approx((1 / 2 + 2 / 3 + 0) / 3)
    assert report["recall"] == pytest.approx((1 / 2 + 1 + 0) / 3)
    assert report["recall_weighted"] == pytest.approx(3 / 5)
    assert report["ap"] is None
    # Two string classes: MTEB's AP of hard predictions is not defined for them.
    assert single_label_report(["x", "y"], ["x", "x"])["ap"] is None
    binary = single_label_report([0, 1, 1, 0], [0, 1, 0, 0])
    # Hard scores 0 1 0 0: threshold 1 -> P 1, R 1/2; threshold 0 -> P 1/2, R 1.
    assert binary["ap"] == pytest.approx(1 / 2 * 1 + 1 / 2 * 1 / 2)


def test_multilabel_report_by_hand() -> None:
    truth = np.array([[1, 0, 1], [0, 0, 0], [0, 1, 0]])
    predicted = np.array([[1, 0, 0], [0, 0, 0], [1, 1, 0]])
    scores = np.array([[0.9, 0.1, 0.4], [0.2, 0.1, 0.3], [0.6, 0.7, 0.1]])
    report = multilabel_report(truth, predicted, scores)
    assert report["accuracy"] == pytest.approx(1 / 3)  # only the empty row matches exactly
    assert report["hamming"] == pytest.approx((1 / 2 + 1 + 1 / 2) / 3)  # empty ∪ empty = 1
    with pytest.raises(ValueError, match="only 0 and 1"):
        multilabel_report(truth * 2, predicted, scores)


def test_cosine_score_matrix() -> None:
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(5, 7)), rng.normal(size=(3, 7))
    scores = cosine_score_matrix(a, b)
    assert scores.dtype == np.float32 and scores.shape == (5, 3)
    exact = (a / np.linalg.norm(a, axis=1, keepdims=True)) @ (
        b / np.linalg.norm(b, axis=1, keepdims=True)
    ).T
    assert np.abs(scores - exact).max() < 1e-6
    a[2] = 0.0
    assert (cosine_score_matrix(a, b)[2] == 0).all()
    with pytest.raises(ValueError, match="same dimension"):
        cosine_score_matrix(a, b[:, :3])
