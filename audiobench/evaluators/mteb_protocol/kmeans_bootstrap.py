"""Bootstrapped mini-batch k-means clustering, as MTEB's (audio) clustering tasks score it.

With k = the number of distinct labels among all samples, repeat ``n_bootstraps`` (10) times:

1. draw ``sample_size`` (16 384) sample indices uniformly **with replacement** (Python's
   ``random.Random(seed).choices``; one generator runs on across the repetitions, so the
   draws reproduce MTEB's exactly: with the default size a small dataset is drawn many times
   over, duplicates included);
2. cluster those embeddings with scikit-learn
   ``MiniBatchKMeans(n_clusters=k, batch_size=512, init="k-means++", n_init=1,
   random_state=seed)``, run in the embeddings' own dtype (float32 stays float32, as MTEB
   passes the encoder's output unchanged);
3. score the clustering of the drawn samples against their labels: ``v_measure``
   (scikit-learn ``v_measure_score``) and ``ami`` (``adjusted_mutual_info_score``).

The report is the mean and population standard deviation (ddof = 0) of each metric over the
repetitions, and the per-repetition values. The main score is ``v_measure``.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Sequence

import numpy as np

from audiobench.metrics.errors import InsufficientClassesError
from audiobench.metrics.validation import check_positive_int, real_matrix

__all__ = ["bootstrapped_kmeans_scores"]


def bootstrapped_kmeans_scores(
    embeddings: object,
    labels: Sequence[Hashable] | np.ndarray,
    *,
    n_bootstraps: int = 10,
    sample_size: int = 16_384,
    batch_size: int = 512,
    seed: int = 42,
) -> dict[str, object]:
    """V-measure and AMI of k-means on bootstrap samples (see the module docstring).

    Parameters
    ----------
    embeddings:
        ``[n, dim]`` finite array (float32 and float64 are kept as given).
    labels:
        One label per row (any hashable of one type; no missing labels).
    n_bootstraps, sample_size, batch_size, seed:
        The protocol's settings; the defaults are MTEB's.

    Returns
    -------
    dict
        ``v_measure``, ``v_measure_std``, ``ami``, ``ami_std`` and the per-repetition lists
        ``v_measures`` and ``ami_scores``.

    Raises
    ------
    InsufficientClassesError
        With fewer than 2 distinct labels.
    """
    from sklearn.cluster import MiniBatchKMeans
    from sklearn.metrics import adjusted_mutual_info_score, v_measure_score

    X = real_matrix(embeddings, "embeddings")
    if isinstance(labels, str | bytes):
        raise ValueError("labels must be a sequence with one label per sample, not a string")
    values = labels.tolist() if isinstance(labels, np.ndarray) else list(labels)
    if len(values) != X.shape[0]:
        raise ValueError(f"labels has {len(values)} values for {X.shape[0]} samples")
    if any(value is None or (isinstance(value, float) and value != value) for value in values):
        raise ValueError("labels has missing values (None or NaN); every sample needs one")
    y = np.asarray(values)
    n_bootstraps = check_positive_int(n_bootstraps, "n_bootstraps")
    sample_size = check_positive_int(sample_size, "sample_size")
    batch_size = check_positive_int(batch_size, "batch_size")
    n_clusters = int(np.unique(y).shape[0])
    if n_clusters < 2:
        raise InsufficientClassesError(
            f"clustering needs at least 2 distinct labels, got {n_clusters}"
        )
    # Not the shared bootstrap (calibration.bootstrap_interval): the protocol draws with
    # Python's random.Random(seed).choices, and only that stream reproduces its numbers.
    rng = random.Random(seed)
    v_measures: list[float] = []
    amis: list[float] = []
    for _ in range(n_bootstraps):
        drawn = rng.choices(range(X.shape[0]), k=sample_size)
        model = MiniBatchKMeans(
            n_clusters=n_clusters,
            batch_size=batch_size,
            init="k-means++",
            n_init=1,
            random_state=seed,
        )
        assigned = model.fit_predict(X[drawn])
        v_measures.append(float(v_measure_score(y[drawn], assigned)))
        amis.append(float(adjusted_mutual_info_score(y[drawn], assigned)))
    return {
        "v_measure": float(np.mean(v_measures)),
        "v_measure_std": float(np.std(v_measures)),
        "ami": float(np.mean(amis)),
        "ami_std": float(np.std(amis)),
        "v_measures": v_measures,
        "ami_scores": amis,
    }
