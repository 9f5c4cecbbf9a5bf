"""MSEB's clustering: one MiniBatchKMeans run, scored by V-measure.

k is the number of distinct labels; scikit-learn's ``MiniBatchKMeans`` runs once with
``batch_size=32`` and ``n_init="auto"``. MSEB passes no ``random_state`` (every run differs);
here it is the ``seed`` argument, so a result can be reproduced, and with the same seed the
clusters are MSEB's. The score is scikit-learn's ``v_measure_score`` of the labels against
the clusters.

Source: ``mseb/evaluators/clustering_evaluator.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from audiobench.metrics.validation import real_array

__all__ = ["BATCH_SIZE", "mseb_kmeans_clusters", "mseb_v_measure"]

#: MSEB's MiniBatchKMeans batch size.
BATCH_SIZE = 32


def mseb_kmeans_clusters(embeddings: object, n_clusters: int, seed: int) -> np.ndarray:
    """The cluster of each row of ``embeddings`` (``[n, D]``) from MSEB's k-means set-up."""
    from sklearn.cluster import MiniBatchKMeans

    x = real_array(embeddings, "embeddings", 2, "[n_samples, D]")
    if not 1 <= n_clusters <= x.shape[0]:
        raise ValueError(f"n_clusters must be in [1, {x.shape[0]}] (the samples), got {n_clusters}")
    model = MiniBatchKMeans(
        n_clusters=n_clusters, batch_size=BATCH_SIZE, n_init="auto", random_state=seed
    )
    model.fit(x)
    return np.asarray(model.labels_)


def mseb_v_measure(embeddings: object, labels: Sequence[str], seed: int) -> float:
    """V-measure of ``labels`` against MSEB's k-means clusters of ``embeddings``
    (k = distinct labels)."""
    from sklearn.metrics import v_measure_score

    labels = list(labels)
    x = real_array(embeddings, "embeddings", 2, "[n_samples, D]")
    if len(labels) != x.shape[0]:
        raise ValueError(f"got {x.shape[0]} embeddings and {len(labels)} labels")
    clusters = mseb_kmeans_clusters(x, len(set(labels)), seed)
    return float(v_measure_score(labels_true=labels, labels_pred=clusters))
