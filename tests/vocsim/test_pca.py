from __future__ import annotations

import numpy as np
import pytest
from sklearn.decomposition import PCA

from audiobench.vocsim import pca, pca_reduce


def _same_up_to_sign(a: np.ndarray, b: np.ndarray, atol: float) -> None:
    assert a.shape == b.shape
    for column in range(a.shape[1]):
        sign = np.sign(a[:, column] @ b[:, column]) or 1.0
        np.testing.assert_allclose(a[:, column], sign * b[:, column], atol=atol)


@pytest.mark.parametrize(("n", "dim"), [(60, 8), (12, 40)])  # covariance and Gram branches
def test_matches_sklearn_full_svd(n: int, dim: int) -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, dim)) @ np.diag(np.linspace(3, 0.5, dim)) + 5.0
    scores = pca_reduce(X, 5)
    _same_up_to_sign(scores, PCA(5, svd_solver="full").fit_transform(X), atol=1e-8)
    # Centred, not whitened: column variances are the leading eigenvalues, decreasing.
    np.testing.assert_allclose(scores.mean(axis=0), 0, atol=1e-10)
    variances = scores.var(axis=0)
    assert np.all(np.diff(variances) <= 1e-12)
    assert variances[0] > 1.5  # not whitened to 1


def test_keeps_min_n_dim_when_asking_for_more() -> None:
    rng = np.random.default_rng(1)
    assert pca_reduce(rng.normal(size=(30, 7)), 100).shape == (30, 7)
    assert pca_reduce(rng.normal(size=(6, 50)), 100).shape == (6, 6)


def test_deterministic_with_fixed_signs() -> None:
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 10))
    first = pca_reduce(X, 4)
    assert np.array_equal(first, pca_reduce(X.copy(), 4))
    # Sign convention: the largest-magnitude loading of each axis is positive, so flipping
    # the data's orientation does not flip the output.
    _, _, right = np.linalg.svd(X - X.mean(0), full_matrices=False)
    loadings = right[:4].T
    fixed = loadings * np.sign(loadings[np.abs(loadings).argmax(0), range(4)])
    np.testing.assert_allclose(first, (X - X.mean(0)) @ fixed, atol=1e-9)


def test_randomized_solver_is_seeded_and_accurate(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 30)) @ np.diag(np.geomspace(10, 0.1, 30))
    exact = pca_reduce(X, 4)
    monkeypatch.setattr(pca, "EXACT_LIMIT", 10)
    randomized = pca_reduce(X, 4, seed=5)
    assert np.array_equal(randomized, pca_reduce(X, 4, seed=5))
    np.testing.assert_allclose(randomized, exact, atol=1e-6)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="positive"):
        pca_reduce(np.eye(3), 0)
    with pytest.raises(ValueError, match="NaN"):
        pca_reduce(np.array([[1.0, np.nan], [0.0, 1.0]]), 1)
