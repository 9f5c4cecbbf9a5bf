"""Deterministic PCA reduction (VocSim protocol, "PCA").

Label-free and per subset: centre the clips, project onto the first ``n_components`` principal
axes, no whitening. If ``n_components`` ≥ min(N, dim), min(N, dim) components are kept.

The protocol requires determinism (the reference's unseeded randomized solver is not
reproducible). Up to :data:`EXACT_LIMIT` in the smaller of N and dim, the axes come from an
exact symmetric eigendecomposition of the dim × dim covariance (or, when N < dim, of the
N × N Gram matrix): exact, deterministic, and far cheaper than a full SVD of the N × dim data.
Above it (e.g. flattened log-mel spectrograms with tens of thousands of features) a
randomized range finder with power iterations is used, seeded by ``seed``.

Each axis's sign is fixed so that its largest-magnitude loading is positive, making the output
independent of the solver's sign convention.
"""

from __future__ import annotations

import numpy as np

from audiobench.metrics.validation import validate_embeddings

#: Largest min(N, dim) solved exactly; the eigendecomposition costs O(min(N, dim)³).
EXACT_LIMIT: int = 4096
#: Extra random directions and power iterations of the randomized solver.
RANDOMIZED_OVERSAMPLES: int = 20
RANDOMIZED_ITERATIONS: int = 7


def _top_eigenvectors(gram: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``count`` largest eigenvalues (descending, clamped at 0) and their eigenvectors."""
    values, vectors = np.linalg.eigh(gram)
    order = np.argsort(-values, kind="stable")[:count]
    return np.clip(values[order], 0.0, None), vectors[:, order]


def _randomized_axes(centred: np.ndarray, count: int, seed: int) -> np.ndarray:
    """Approximate top ``count`` right singular vectors (dim × count), seeded."""
    rng = np.random.default_rng(seed)
    width = min(count + RANDOMIZED_OVERSAMPLES, *centred.shape)
    basis = centred @ rng.standard_normal((centred.shape[1], width))
    for _ in range(RANDOMIZED_ITERATIONS):
        # Re-orthonormalise between multiplications so small directions are not lost.
        basis, _ = np.linalg.qr(basis)
        basis, _ = np.linalg.qr(centred.T @ basis)
        basis = centred @ basis
    basis, _ = np.linalg.qr(basis)
    _, _, right = np.linalg.svd(basis.T @ centred, full_matrices=False)
    return right[:count].T


def pca_reduce(
    X: object,
    n_components: int,
    seed: int = 0,
    *,
    gram: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """Project centred embeddings onto their first principal axes.

    Parameters
    ----------
    X:
        Embeddings (N, dim), finite.
    n_components:
        Requested components (the protocol uses 30 and 100); min(N, dim) if larger.
    seed:
        Seed of the randomized solver (only used when min(N, dim) > :data:`EXACT_LIMIT`).
    gram:
        Optional ``(centred, gram)`` of exactly these clips
        (:func:`audiobench.vocsim.distances.centred_gram`), so that a caller that also needs
        the Gram matrix for distances computes it once; the result is the same.

    Returns
    -------
    numpy.ndarray
        float64 (N, min(n_components, N, dim)) principal-component scores.
    """
    if isinstance(n_components, bool) or not isinstance(n_components, int | np.integer):
        raise ValueError(f"n_components must be an integer, got {n_components!r}")
    if n_components < 1:
        raise ValueError(f"n_components must be positive, got {n_components}")
    data, _ = validate_embeddings(X)
    n, dim = data.shape
    count = min(int(n_components), n, dim)
    centred = data - data.mean(axis=0) if gram is None else gram[0]
    if min(n, dim) > EXACT_LIMIT:
        axes = _randomized_axes(centred, count, seed)
    elif dim <= n:
        _, axes = _top_eigenvectors(centred.T @ centred, count)
    else:
        # N < dim: eigenvectors u of the Gram matrix XXᵀ give the axes Xᵀu / ‖Xᵀu‖.
        values, left = _top_eigenvectors(centred @ centred.T if gram is None else gram[1], count)
        axes = centred.T @ left
        norms = np.sqrt(values)
        axes = np.divide(axes, norms, out=np.zeros_like(axes), where=norms > 0)
    largest = np.abs(axes).argmax(axis=0)
    signs = np.sign(axes[largest, np.arange(count)])
    signs[signs == 0] = 1.0
    return np.asarray(centred @ (axes * signs))
