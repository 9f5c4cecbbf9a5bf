"""Agreement between a clustering and the true labels, and k-means clustering of embeddings.

Label agreement (any hashable labels and cluster ids; ``None``/NaN labels are an error here):
with the contingency table n_ck (samples of class c in cluster k), n samples,

- **purity** = (1/n) Σ_k max_c n_ck, in (0, 1]: each cluster counts its majority class.
  Not symmetric, and 1.0 for one cluster per sample.
- **V-measure** (β = 1) = 2·h·c / (h + c) with homogeneity h = 1 − H(C|K)/H(C) and
  completeness c = 1 − H(K|C)/H(K) (h = 1 when H(C) = 0, c = 1 when H(K) = 0), in [0, 1].
- **NMI** = I(C; K) / ((H(C) + H(K)) / 2) (arithmetic normalisation, scikit-learn's default;
  equal to the V-measure), 1.0 when both labellings are a single group, in [0, 1].
- **ARI** = (Σ_ck C(n_ck, 2) − E) / ((Σ_c C(a_c, 2) + Σ_k C(b_k, 2))/2 − E) with
  E = Σ_c C(a_c, 2) · Σ_k C(b_k, 2) / C(n, 2) (Hubert & Arabie), in [−0.5, 1]; 0 in
  expectation for random labellings.

V-measure, NMI and ARI come from scikit-learn (``v_measure_score``,
``normalized_mutual_info_score``, ``adjusted_rand_score``); the tests check them against
hand-computed values and a contingency-table implementation.

:func:`cluster_scores` runs ``MiniBatchKMeans`` with k = number of classes once per seed and
reports the mean, the population standard deviation (ddof = 0; 0 for a single seed) and the
per-seed values of each metric.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from audiobench.metrics.errors import InsufficientClassesError
from audiobench.metrics.labels import UNLABELLED, encode_labels
from audiobench.metrics.validation import (
    check_positive_int,
    describe_clips,
    validate_embeddings,
)

__all__ = [
    "CLUSTERING_METRICS",
    "ClusterScores",
    "adjusted_rand_index",
    "cluster_scores",
    "labelling_scores",
    "normalized_mutual_information",
    "purity_score",
    "v_measure",
]

#: The label-agreement metrics, in report order.
CLUSTERING_METRICS: tuple[str, ...] = ("v_measure", "nmi", "ari", "purity")


def _codes(labels: object, name: str, n: int | None = None) -> np.ndarray:
    """Integer codes for a labelling; every sample must have a label."""
    if isinstance(labels, str | bytes):
        raise ValueError(f"{name} must be a sequence with one value per sample, not a string")
    values = labels.tolist() if isinstance(labels, np.ndarray) else list(labels)  # type: ignore[call-overload]
    if n is not None and len(values) != n:
        raise ValueError(f"{name} has {len(values)} values for {n} samples")
    if not values:
        raise ValueError(f"{name} is empty: need at least one sample")
    encoded = encode_labels(values, len(values))
    missing = np.flatnonzero(encoded.codes == UNLABELLED)
    if missing.size:
        raise ValueError(
            f"{name} has missing values (None or NaN) for {missing.size} sample(s) "
            f"(indices: {describe_clips(missing.tolist())}); drop unlabelled samples first"
        )
    return encoded.codes


def _pair(labels_true: object, labels_pred: object) -> tuple[np.ndarray, np.ndarray]:
    true = _codes(labels_true, "labels_true")
    return true, _codes(labels_pred, "labels_pred", true.shape[0])


def purity_score(labels_true: object, labels_pred: object) -> float:
    """Purity (1/n) Σ_k max_c n_ck of the clusters ``labels_pred`` against ``labels_true``.

    Every sample is clustered (no noise label); in (0, 1].
    """
    true, pred = _pair(labels_true, labels_pred)
    return contingency_purity(true, pred)


def contingency_purity(true: np.ndarray, pred: np.ndarray) -> float:
    """(1/n) Σ_k max_c n_ck from two equal-length arrays of class and cluster ids (n ≥ 1)."""
    from sklearn.metrics.cluster import contingency_matrix

    table = contingency_matrix(true, pred, sparse=True)  # classes × clusters
    return float(table.max(axis=0).sum() / true.shape[0])


def v_measure(labels_true: object, labels_pred: object) -> float:
    """V-measure (β = 1): harmonic mean of homogeneity and completeness, in [0, 1]."""
    true, pred = _pair(labels_true, labels_pred)
    from sklearn import metrics as sk_metrics  # sklearn is slow to import: only when used

    return float(sk_metrics.v_measure_score(true, pred))


def normalized_mutual_information(labels_true: object, labels_pred: object) -> float:
    """NMI with arithmetic normalisation I(C; K) / ((H(C) + H(K)) / 2), in [0, 1]."""
    true, pred = _pair(labels_true, labels_pred)
    from sklearn import metrics as sk_metrics  # sklearn is slow to import: only when used

    return float(sk_metrics.normalized_mutual_info_score(true, pred, average_method="arithmetic"))


def adjusted_rand_index(labels_true: object, labels_pred: object) -> float:
    """Adjusted Rand index (Hubert & Arabie), 1 for identical partitions, ~0 for random ones."""
    true, pred = _pair(labels_true, labels_pred)
    from sklearn import metrics as sk_metrics  # sklearn is slow to import: only when used

    return float(sk_metrics.adjusted_rand_score(true, pred))


def labelling_scores(labels_true: object, labels_pred: object) -> dict[str, float]:
    """All of :data:`CLUSTERING_METRICS` for one labelling: ``{"v_measure", "nmi", "ari",
    "purity"}``."""
    true, pred = _pair(labels_true, labels_pred)
    return {
        "v_measure": v_measure(true, pred),
        "nmi": normalized_mutual_information(true, pred),
        "ari": adjusted_rand_index(true, pred),
        "purity": purity_score(true, pred),
    }


@dataclass(frozen=True)
class ClusterScores:
    """k-means clustering scores over several seeds.

    Attributes
    ----------
    mean, std:
        Metric name (:data:`CLUSTERING_METRICS`) → mean and population standard deviation
        (ddof = 0) over the seeds.
    per_seed:
        Metric name → the value for each seed, in ``seeds`` order.
    seeds:
        The ``random_state`` of each run.
    n_clusters, n_samples:
        k (the number of distinct labels) and the number of clustered samples.
    """

    mean: dict[str, float]
    std: dict[str, float]
    per_seed: dict[str, tuple[float, ...]]
    seeds: tuple[int, ...]
    n_clusters: int
    n_samples: int

    def to_dict(self) -> dict[str, object]:
        """Plain JSON-ready dict: ``mean``, ``std``, ``per_seed`` (lists), ``seeds``, counts."""
        return {
            "mean": dict(self.mean),
            "std": dict(self.std),
            "per_seed": {name: list(values) for name, values in self.per_seed.items()},
            "seeds": list(self.seeds),
            "n_clusters": self.n_clusters,
            "n_samples": self.n_samples,
        }


def _check_seeds(seeds: Sequence[int]) -> tuple[int, ...]:
    checked = tuple(seeds)
    if not checked:
        raise ValueError("seeds must not be empty")
    for seed in checked:
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            raise ValueError(f"seeds must be non-negative integers, got {seed!r}")
    if len(set(checked)) != len(checked):
        raise ValueError(f"seeds must be distinct, got {list(checked)}")
    return tuple(int(seed) for seed in checked)


def cluster_scores(
    embeddings: object,
    labels: Sequence[Hashable] | np.ndarray,
    *,
    seeds: Sequence[int] = (0, 1, 2, 3, 4),
    batch_size: int = 1024,
    n_init: int = 1,
) -> ClusterScores:
    """Cluster ``embeddings`` with MiniBatchKMeans (k = number of classes) once per seed.

    Each run is ``MiniBatchKMeans(n_clusters=k, batch_size=batch_size, n_init=n_init,
    random_state=seed)`` (k-means++ initialisation) on the float64 embeddings; its labelling is
    scored with :func:`labelling_scores`. The spread over seeds is what ``std`` measures.

    Parameters
    ----------
    embeddings:
        ``[n, dim]`` finite real array (rows with NaN/inf are an
        :class:`~audiobench.metrics.InvalidEmbeddingsError` naming them).
    labels:
        One label per row (any hashable; ``None``/NaN is an error).
    seeds:
        Distinct non-negative ``random_state`` values, one run each.
    batch_size, n_init:
        MiniBatchKMeans parameters (positive integers).

    Raises
    ------
    InsufficientClassesError
        With fewer than 2 distinct labels.
    ValueError
        For malformed arguments (label count, seeds, batch size).
    """
    from sklearn.cluster import MiniBatchKMeans

    X, _ = validate_embeddings(embeddings)
    codes = _codes(labels, "labels", X.shape[0])
    checked_seeds = _check_seeds(seeds)
    batch_size = check_positive_int(batch_size, "batch_size")
    n_init = check_positive_int(n_init, "n_init")
    n_clusters = int(np.unique(codes).shape[0])
    if n_clusters < 2:
        raise InsufficientClassesError(
            f"clustering needs at least 2 distinct labels, got {n_clusters}"
        )
    per_seed: dict[str, list[float]] = {name: [] for name in CLUSTERING_METRICS}
    for seed in checked_seeds:
        model = MiniBatchKMeans(
            n_clusters=n_clusters, batch_size=int(batch_size), n_init=int(n_init), random_state=seed
        )
        predicted = model.fit_predict(X)
        for name, value in labelling_scores(codes, predicted).items():
            per_seed[name].append(value)
    return ClusterScores(
        mean={name: float(np.mean(values)) for name, values in per_seed.items()},
        std={name: float(np.std(values)) for name, values in per_seed.items()},
        per_seed={name: tuple(values) for name, values in per_seed.items()},
        seeds=checked_seeds,
        n_clusters=n_clusters,
        n_samples=int(X.shape[0]),
    )
