"""The VocSim zero-shot similarity engine: the protocol's metrics on a distance matrix, fast.

Pure functions on embeddings or on a precomputed distance matrix, plus the full calibrated
grid. See ``docs/VOCSIM.md`` for the definitions; each module's docstring says which part it
implements and how. The engine's inputs are checked by :mod:`audiobench.metrics.validation`
and its labels encoded by :mod:`audiobench.metrics.labels`, as every metric's are.

- Distances: :func:`pairwise_distances` (cosine, euclidean, spearman; :mod:`.distances`, with
  the arithmetic kernels of :mod:`.kernels` and :mod:`.fixed_point`).
- Metrics on a distance matrix: :func:`precision_at_k`, :func:`gsr`, :func:`csr`, :func:`cs`,
  :func:`cscf`, :func:`silhouette`, :func:`clustering_purity` (optional ``umap`` extra). Each
  returns a float; its ``*_details`` twin (:func:`gsr_details`, ...) takes the same arguments
  and returns a :class:`~audiobench.metrics.results.MetricResult` with the counts and
  per-clip scores.
- Preprocessing: :func:`pca_reduce`.
- The grid with permutation baselines and bootstrap margins (:mod:`.configuration_grid`, with
  :mod:`.calibration` and the permutation engine :mod:`.relabelling`):
  :func:`zero_shot_similarity` → :class:`ZeroShotSimilarityReport`
  (:mod:`.similarity_report`; ``to_dict()`` for JSON).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from audiobench.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from audiobench.vocsim.configuration_grid import (
        METRIC_GROUPS,
        ProgressHook,
        configuration_name,
        zero_shot_similarity,
    )
    from audiobench.vocsim.distances import DISTANCE_METRICS, pairwise_distances
    from audiobench.vocsim.pca import pca_reduce
    from audiobench.vocsim.precision import precision_at_k, precision_at_k_details
    from audiobench.vocsim.purity import clustering_purity, clustering_purity_details
    from audiobench.vocsim.separation import (
        cs,
        cs_details,
        cscf,
        cscf_details,
        csr,
        csr_details,
        gsr,
        gsr_details,
    )
    from audiobench.vocsim.silhouettes import silhouette, silhouette_details
    from audiobench.vocsim.similarity_report import (
        Configuration,
        DatasetCounts,
        MetricSummary,
        ZeroShotSimilarityReport,
    )

#: Public name -> submodule, imported on first use (PEP 562) as in :mod:`audiobench.metrics`.
_EXPORTS: dict[str, str] = {
    "METRIC_GROUPS": "configuration_grid",
    "ProgressHook": "configuration_grid",
    "configuration_name": "configuration_grid",
    "zero_shot_similarity": "configuration_grid",
    "DISTANCE_METRICS": "distances",
    "pairwise_distances": "distances",
    "pca_reduce": "pca",
    "precision_at_k": "precision",
    "precision_at_k_details": "precision",
    "clustering_purity": "purity",
    "clustering_purity_details": "purity",
    "cs": "separation",
    "cs_details": "separation",
    "cscf": "separation",
    "cscf_details": "separation",
    "csr": "separation",
    "csr_details": "separation",
    "gsr": "separation",
    "gsr_details": "separation",
    "silhouette": "silhouettes",
    "silhouette_details": "silhouettes",
    "Configuration": "similarity_report",
    "DatasetCounts": "similarity_report",
    "MetricSummary": "similarity_report",
    "ZeroShotSimilarityReport": "similarity_report",
}

__all__ = [
    "DISTANCE_METRICS",
    "METRIC_GROUPS",
    "Configuration",
    "DatasetCounts",
    "MetricSummary",
    "ProgressHook",
    "ZeroShotSimilarityReport",
    "clustering_purity",
    "clustering_purity_details",
    "configuration_name",
    "cs",
    "cs_details",
    "cscf",
    "cscf_details",
    "csr",
    "csr_details",
    "gsr",
    "gsr_details",
    "pairwise_distances",
    "pca_reduce",
    "precision_at_k",
    "precision_at_k_details",
    "silhouette",
    "silhouette_details",
    "zero_shot_similarity",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
