"""audiobench's metrics engine: the VocSim zero-shot similarity protocol, fast.

Pure functions on embeddings or on a precomputed distance matrix, plus the full calibrated
grid. See ``VOCSIM_PROTOCOL.md`` for the definitions; each module's docstring says which part
it implements and how.

- Distances: :func:`pairwise_distances` (cosine, euclidean, spearman).
- Metrics on a distance matrix: :func:`precision_at_k`, :func:`gsr`, :func:`csr`, :func:`cs`,
  :func:`cscf`, :func:`silhouette`, :func:`clustering_purity` (optional ``umap`` extra). Each
  returns a float, or a :class:`MetricResult` with ``return_details=True``.
- Preprocessing: :func:`pca_reduce`.
- The grid with permutation baselines and bootstrap margins: :func:`zero_shot_similarity`
  → :class:`ZeroShotSimilarityReport` (``to_dict()`` for JSON).
"""

from __future__ import annotations

from audiobench.metrics.distances import DISTANCE_METRICS, pairwise_distances
from audiobench.metrics.errors import InsufficientClassesError, InvalidEmbeddingsError
from audiobench.metrics.grid import (
    METRIC_GROUPS,
    ProgressHook,
    configuration_name,
    zero_shot_similarity,
)
from audiobench.metrics.pca import pca_reduce
from audiobench.metrics.precision import precision_at_k
from audiobench.metrics.purity import clustering_purity
from audiobench.metrics.report import (
    Configuration,
    DatasetCounts,
    MetricSummary,
    ZeroShotSimilarityReport,
)
from audiobench.metrics.results import MetricResult
from audiobench.metrics.separation import cs, cscf, csr, gsr
from audiobench.metrics.silhouette import silhouette

__all__ = [
    "DISTANCE_METRICS",
    "METRIC_GROUPS",
    "Configuration",
    "DatasetCounts",
    "InsufficientClassesError",
    "InvalidEmbeddingsError",
    "MetricResult",
    "MetricSummary",
    "ProgressHook",
    "ZeroShotSimilarityReport",
    "clustering_purity",
    "configuration_name",
    "cs",
    "cscf",
    "csr",
    "gsr",
    "pairwise_distances",
    "pca_reduce",
    "precision_at_k",
    "silhouette",
    "zero_shot_similarity",
]
