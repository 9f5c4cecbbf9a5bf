"""The linear probe's solvers reach scikit-learn's optimum; the plain one its iterates."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from audiobench.probes import LinearProbe
from audiobench.probes.design import prepare_design

from .data import blobs, multilabel_blobs


def correlated(n: int, dim: int, n_classes: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Blobs seen through a random mixing with a steep spectrum (an ill-conditioned design)."""
    rng = np.random.default_rng(seed)
    X, y = blobs(rng, n, n_classes, dim=dim, spread=1.5)
    mixing = rng.normal(size=(dim, dim)) * (1.0 + np.arange(dim))[None, :] ** -1.5
    return (X @ mixing).astype(np.float32), y


def reference(X: np.ndarray, y: np.ndarray, C: float, X_test: np.ndarray) -> np.ndarray:
    """scikit-learn's probabilities at its optimum (a tolerance far below the probes')."""
    X, X_test = X.astype(np.float64), X_test.astype(np.float64)  # as the probe computes
    scaler = StandardScaler().fit(X)
    model = LogisticRegression(C=C, tol=1e-12, max_iter=100_000)
    model.fit(scaler.transform(X), y)
    return np.asarray(model.predict_proba(scaler.transform(X_test)))


@pytest.mark.parametrize(
    ("n", "dim", "n_classes"),
    [(160, 24, 4), (160, 24, 2), (60, 150, 3)],  # multinomial, binary, wide (row space)
)
def test_preconditioned_solver_reaches_the_optimum(n: int, dim: int, n_classes: int) -> None:
    X, y = correlated(n + 40, dim, n_classes, seed=n + dim)
    for C in (0.01, 1.0, 100.0):
        probe = LinearProbe(C=C, tol=1e-9, max_iter=5000).fit(X[:n], y[:n])
        expected = reference(X[:n], y[:n], C, X[n:])
        np.testing.assert_allclose(probe.predict_scores(X[n:]), expected, atol=2e-5)
        if dim > n:
            assert probe.config()["chosen"]["row_space_rank"] == n - 1  # centred rows


def test_warm_started_grid_keeps_each_optimum() -> None:
    # With a validation split the final model continues the search's fit at the chosen C.
    X, y = correlated(240, 24, 4, seed=1)
    searched = LinearProbe(tol=1e-9, max_iter=5000).fit(
        X[:120], y[:120], X_val=X[120:200], y_val=y[120:200]
    )
    chosen = searched.config()["chosen"]["C"]
    expected = reference(X[:120], y[:120], chosen, X[200:])
    np.testing.assert_allclose(searched.predict_scores(X[200:]), expected, atol=2e-5)


def test_multilabel_one_vs_rest_reaches_the_optimum() -> None:
    X, Y = multilabel_blobs(np.random.default_rng(2), 140, 3, dim=12)
    probe = LinearProbe(C=0.5, tol=1e-9, max_iter=5000, multilabel=True).fit(X[:100], Y[:100])
    expected = np.stack(
        [reference(X[:100], Y[:100, j], 0.5, X[100:])[:, 1] for j in range(3)], axis=1
    )
    np.testing.assert_allclose(probe.predict_scores(X[100:]), expected, atol=2e-5)


def test_lbfgs_solver_follows_scikit_learn_iterates() -> None:
    # The default tolerance stops both where the raw gradient test passes: same point.
    X, y = correlated(200, 24, 4, seed=3)
    X = X.astype(np.float64)
    scaler = StandardScaler().fit(X[:160])
    model = LogisticRegression(C=10.0).fit(scaler.transform(X[:160]), y[:160])
    probe = LinearProbe(C=10.0, solver="lbfgs").fit(X[:160], y[:160])
    expected = model.predict_proba(scaler.transform(X[160:]))
    np.testing.assert_allclose(probe.predict_scores(X[160:]), expected, atol=1e-8)
    assert probe.config()["params"]["solver"] == "lbfgs"
    with pytest.raises(ValueError, match="solver"):
        LinearProbe(solver="newton")  # type: ignore[arg-type]


def test_designs_are_orthonormal_changes_of_basis() -> None:
    rng = np.random.default_rng(4)
    for n, dim in ((50, 8), (20, 60)):
        X = rng.normal(size=(n, dim)) @ rng.normal(size=(dim, dim))
        design = prepare_design(X, X[:5], keep_lift=True)
        Xs = design.standardise(X)
        Z = np.asarray(design.train)
        # Same Gram matrix: the features are the standardised rows in an orthonormal basis.
        np.testing.assert_allclose(Z @ Z.T, Xs @ Xs.T, atol=1e-8)
        np.testing.assert_allclose(np.asarray(design.evaluation), Z[:5], atol=1e-8)
        assert design.second_moments is not None
        np.testing.assert_allclose(design.second_moments, (Z**2).mean(axis=0), atol=1e-10)
        coef = rng.normal(size=(Z.shape[1], 3))
        np.testing.assert_allclose(Xs @ design.lift(coef), Z @ coef, atol=1e-8)
        shared = prepare_design(X[10:], X[:10], basis=design.basis) if dim <= n else None
        if shared is not None:  # another fit set in the same basis
            np.testing.assert_allclose(
                np.asarray(shared.train) @ np.asarray(shared.train).T,
                shared.standardise(X[10:]) @ shared.standardise(X[10:]).T,
                atol=1e-8,
            )


def test_torch_features_follow_the_numpy_path() -> None:
    # The objective on a torch tensor (a CUDA device's path, here on the CPU) is the same.
    import torch

    from audiobench.probes.logistic import fit_logistic

    X, y = correlated(120, 10, 3, seed=5)
    design = prepare_design(X)
    assert isinstance(design.train, np.ndarray)
    kwargs = {"C": 1.0, "max_iter": 500, "tol": 1e-8, "second_moments": design.second_moments}
    on_numpy = fit_logistic(design.train, y, binary=False, **kwargs)
    on_torch = fit_logistic(torch.from_numpy(design.train), y, binary=False, **kwargs)
    np.testing.assert_allclose(on_torch.coef, on_numpy.coef, atol=1e-7)
    np.testing.assert_allclose(on_torch.intercept, on_numpy.intercept, atol=1e-7)
