"""Small synthetic inputs shared by the metric tests."""

from __future__ import annotations

import numpy as np

# Five clips on a line (euclidean distance = |x_i − x_j|), classes a a a b b:
#
#        x:  0   1   3   10  12
#   clip 0:  0   1   3   10  12
#   clip 1:  1   0   2    9  11
#   clip 2:  3   2   0    7   9
#   clip 3: 10   9   7    0   2
#   clip 4: 12  11   9    2   0
LINE_X = np.array([0.0, 1.0, 3.0, 10.0, 12.0])
LINE_D = np.abs(LINE_X[:, None] - LINE_X[None, :])
LINE_LABELS = ["a", "a", "a", "b", "b"]


def random_case(
    rng: np.random.Generator,
    n: int,
    n_classes: int,
    *,
    ties: bool = False,
    unlabelled: float = 0.0,
) -> tuple[np.ndarray, list[object]]:
    """A symmetric, zero-diagonal distance matrix and labels (``None`` = unlabelled).

    ``ties`` rounds distances to a coarse grid so many are exactly equal.
    """
    points = rng.normal(size=(n, 3))
    D = np.sqrt(((points[:, None, :] - points[None, :, :]) ** 2).sum(-1))
    if ties:
        D = np.round(D * 2) / 2
    np.fill_diagonal(D, 0.0)
    labels: list[object] = [f"class{int(c)}" for c in rng.integers(0, n_classes, size=n)]
    for i in range(n):
        if rng.random() < unlabelled:
            labels[i] = None
    return D, labels


def clustered_embeddings(
    rng: np.random.Generator, sizes: list[int], dim: int, spread: float
) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian clusters (one per class, unit-variance centres) and integer labels."""
    labels = np.repeat(np.arange(len(sizes)), sizes)
    centres = rng.normal(size=(len(sizes), dim))
    return centres[labels] + spread * rng.normal(size=(labels.shape[0], dim)), labels
