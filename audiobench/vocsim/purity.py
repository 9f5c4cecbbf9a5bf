"""Clustering purity: UMAP to 2-D, HDBSCAN, weighted purity (optional, needs ``umap-learn``).

Protocol: UMAP on the precomputed distances (``n_components=2, random_state=42,
init="random"``), then HDBSCAN (``min_cluster_size=5, min_samples=5``); weighted purity is the
sum over clusters of the majority-label count divided by the number of clustered points. Noise
points (HDBSCAN label −1) are *not* a cluster (the reference counts them as one); their share is
reported separately as ``noise_fraction``.

``umap-learn`` is an optional dependency (``pip install 'audiobench[umap]'``); it is imported
only when this metric is called. HDBSCAN comes from scikit-learn.
"""

from __future__ import annotations

import numpy as np

from audiobench.metrics.clustering import contingency_purity
from audiobench.metrics.results import MetricResult
from audiobench.metrics.runtime import limited_cpu_threads, resolve_device
from audiobench.metrics.validation import validate_labelled_matrix


def weighted_purity(clusters: np.ndarray, codes: np.ndarray) -> tuple[float, float]:
    """``(purity, noise_fraction)`` of a clustering of labelled points.

    ``clusters`` holds cluster ids with −1 for noise; ``codes`` the class codes. Purity is NaN
    when every point is noise.
    """
    clusters = np.asarray(clusters)
    codes = np.asarray(codes)
    clustered = clusters >= 0
    noise_fraction = float(1.0 - clustered.mean()) if clusters.size else float("nan")
    if not clustered.any():
        return float("nan"), noise_fraction
    return contingency_purity(codes[clustered], clusters[clustered]), noise_fraction


def clustering_purity(
    D: object,
    labels: object,
    seed: int = 42,
    *,
    min_cluster_size: int = 5,
    min_samples: int = 5,
) -> float:
    """Weighted purity of HDBSCAN clusters of a 2-D UMAP of the labelled clips.

    Parameters
    ----------
    D:
        (N, N) distance matrix.
    labels:
        One label per clip; unlabelled clips (``None``/NaN) are left out.
    seed:
        UMAP's ``random_state`` (protocol: 42).
    min_cluster_size, min_samples:
        HDBSCAN parameters (protocol: 5 and 5).

    Raises
    ------
    ImportError
        If ``umap-learn`` is not installed (install the ``audiobench[umap]`` extra).
    """
    return clustering_purity_details(
        D, labels, seed, min_cluster_size=min_cluster_size, min_samples=min_samples
    ).value


def clustering_purity_details(
    D: object,
    labels: object,
    seed: int = 42,
    *,
    min_cluster_size: int = 5,
    min_samples: int = 5,
) -> MetricResult:
    """:func:`clustering_purity` as a :class:`MetricResult` whose ``extras`` hold
    ``noise_fraction`` and ``n_clusters``."""
    try:
        import umap
    except ImportError as error:
        raise ImportError(
            "clustering_purity needs umap-learn, which is an optional dependency: "
            "pip install 'audiobench[umap]'"
        ) from error
    from sklearn.cluster import HDBSCAN

    with limited_cpu_threads():
        matrix, encoded = validate_labelled_matrix(D, labels, resolve_device(None))
    labelled = encoded.labelled
    distances = matrix.numpy()
    if labelled.shape[0] < encoded.n_clips:
        distances = distances[np.ix_(labelled, labelled)]
    embedding = umap.UMAP(
        n_components=2, metric="precomputed", random_state=seed, init="random"
    ).fit_transform(distances)
    clusters = HDBSCAN(min_cluster_size=min_cluster_size, min_samples=min_samples).fit_predict(
        embedding
    )
    value, noise_fraction = weighted_purity(clusters, encoded.codes[labelled])
    return MetricResult(
        name="purity",
        value=value,
        n_evaluated=int((clusters >= 0).sum()),
        n_skipped=int((clusters < 0).sum()),
        extras={
            "noise_fraction": noise_fraction,
            "n_clusters": len(set(clusters.tolist()) - {-1}),
        },
    )
