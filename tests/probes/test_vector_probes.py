"""k-NN, linear and MLP probes on clip vectors: separable → near-perfect, shuffled → chance."""

from __future__ import annotations

import json

import numpy as np
import pytest

from audiobench.probes import KNNProbe, LinearProbe, MLPProbe, Probe, make_probe

from .data import blobs, multilabel_blobs
from .helpers import assert_chance, hamming_accuracy

N_CLASSES = 4


@pytest.fixture(scope="module")
def separable() -> tuple[np.ndarray, np.ndarray]:
    return blobs(np.random.default_rng(0), 320, N_CLASSES)


FAST_MLP = {"epochs": 30}


def build(name: str, **kwargs: object) -> Probe:
    return make_probe(name, **({**FAST_MLP, **kwargs} if name == "mlp" else kwargs))


@pytest.mark.parametrize("name", ["knn", "linear", "mlp"])
def test_separable_blobs_near_perfect(name: str, separable: tuple[np.ndarray, np.ndarray]) -> None:
    X, y = separable
    probe = build(name).fit(X[:160], y[:160])
    assert probe.score(X[160:], y[160:]) >= 0.95
    scores = probe.predict_scores(X[160:])
    assert scores.shape == (160, N_CLASSES)
    np.testing.assert_allclose(scores.sum(axis=1), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(probe.predict(X[160:]), probe.classes_[scores.argmax(axis=1)])


@pytest.mark.parametrize("name", ["knn", "linear", "mlp"])
def test_shuffled_labels_give_chance(name: str, separable: tuple[np.ndarray, np.ndarray]) -> None:
    X, y = separable
    shuffled = np.random.default_rng(1).permutation(y)
    probe = build(name).fit(X[:160], shuffled[:160])
    assert_chance(probe.score(X[160:], shuffled[160:]), 160, N_CLASSES)


@pytest.mark.parametrize("name", ["knn", "linear", "mlp"])
def test_same_seed_same_scores(name: str, separable: tuple[np.ndarray, np.ndarray]) -> None:
    X, y = separable
    noisy = X + np.random.default_rng(2).normal(scale=4.0, size=X.shape).astype(np.float32)
    first = build(name, seed=3).fit(noisy[:160], y[:160]).predict_scores(noisy[160:])
    second = build(name, seed=3).fit(noisy[:160], y[:160]).predict_scores(noisy[160:])
    np.testing.assert_array_equal(first, second)


@pytest.mark.parametrize("name", ["knn", "linear", "mlp"])
def test_multilabel(name: str) -> None:
    X, Y = multilabel_blobs(np.random.default_rng(4), 300, 3)
    probe = build(name, multilabel=True).fit(X[:200], Y[:200])
    predicted = probe.predict(X[200:])
    assert predicted.shape == (100, 3)
    assert set(np.unique(predicted)) <= {0, 1}
    assert hamming_accuracy(predicted, Y[200:]) >= 0.95
    scores = probe.predict_scores(X[200:])
    assert scores.shape == (100, 3) and scores.min() >= 0 and scores.max() <= 1
    np.testing.assert_array_equal(probe.classes_, [0, 1, 2])
    assert probe.config()["selection"]["metric"] in (None, "micro_average_precision")


@pytest.mark.parametrize("name", ["knn", "linear", "mlp"])
def test_validation_split_is_used_and_recorded(
    name: str, separable: tuple[np.ndarray, np.ndarray]
) -> None:
    X, y = separable
    labels = np.array(["cat", "dog", "owl", "bat"])[y]
    probe = build(name).fit(X[:120], labels[:120], X_val=X[120:160], y_val=labels[120:160])
    assert probe.score(X[160:], labels[160:]) >= 0.95
    np.testing.assert_array_equal(probe.classes_, ["bat", "cat", "dog", "owl"])
    config = probe.config()
    json.dumps(config)
    assert config["n_train"] == 120 and config["n_validation"] == 40
    expected = "validation_early_stopping" if name == "mlp" else "validation"
    assert config["selection"]["method"] == expected


def test_linear_config_records_grid_scores_and_choice(
    separable: tuple[np.ndarray, np.ndarray],
) -> None:
    X, y = separable
    unfitted = LinearProbe().config()
    json.dumps(unfitted)
    assert unfitted["chosen"] is None and len(unfitted["grid"]["C"]) == 9
    config = LinearProbe(seed=5).fit(X[:160], y[:160]).config()
    json.dumps(config)
    selection = config["selection"]
    assert selection["method"] == "inner_cv" and selection["n_splits"] == 5
    assert [row["C"] for row in selection["scores"]] == config["grid"]["C"]
    best = max(row["score"] for row in selection["scores"])
    # Ties go to the smallest C.
    first_best = next(row["C"] for row in selection["scores"] if row["score"] == best)
    assert config["chosen"]["C"] == first_best
    assert LinearProbe(C=0.5).fit(X[:160], y[:160]).config()["selection"]["method"] == "fixed"


def test_knn_config_and_fixed_k(separable: tuple[np.ndarray, np.ndarray]) -> None:
    X, y = separable
    config = KNNProbe().fit(X[:160], y[:160]).config()
    json.dumps(config)
    assert config["grid"]["k"] == [1, 3, 5, 10, 20]
    assert config["chosen"]["k"] in config["grid"]["k"]
    fixed = KNNProbe(k=7).fit(X[:160], y[:160]).config()
    assert fixed["chosen"] == {"k": 7} and fixed["selection"]["method"] == "fixed"


def test_knn_votes_and_tie_break() -> None:
    # Points on a line; training classes a a b b c.
    X_train = np.array([[0.0], [1.0], [5.0], [6.0], [20.0]])
    y_train = np.array(["a", "a", "b", "b", "c"])
    probe = KNNProbe(k=2, metric="euclidean").fit(X_train, y_train)
    query = np.array([[3.2], [2.8], [0.4]])
    # 3.2 → neighbours 5 (b) then 1 (a): a tie, won by the nearer b.
    # 2.8 → neighbours 1 (a) then 5 (b): a tie, won by a.  0.4 → 0, 1: both a.
    np.testing.assert_array_equal(probe.predict(query), ["b", "a", "a"])
    np.testing.assert_allclose(
        probe.predict_scores(query), [[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [1.0, 0.0, 0.0]]
    )


def test_knn_cosine_ignores_scale() -> None:
    X = np.array([[1.0, 0.1], [1.0, -0.1], [0.1, 1.0], [-0.1, 1.0]])
    probe = KNNProbe(k=1).fit(X, [0, 0, 1, 1])
    np.testing.assert_array_equal(probe.predict(np.array([[100.0, 1.0], [0.01, 0.5]])), [0, 1])


def test_mlp_seed_changes_initialisation(separable: tuple[np.ndarray, np.ndarray]) -> None:
    X, y = separable
    a = MLPProbe(epochs=2, seed=0).fit(X[:160], y[:160]).predict_scores(X[160:])
    b = MLPProbe(epochs=2, seed=1).fit(X[:160], y[:160]).predict_scores(X[160:])
    assert not np.array_equal(a, b)
