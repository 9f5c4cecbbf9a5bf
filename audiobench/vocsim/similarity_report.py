"""The result of a zero-shot similarity evaluation and its JSON form.

:class:`ZeroShotSimilarityReport` holds, for every (PCA, distance) configuration, one
:class:`MetricSummary` per metric. ``to_dict()`` gives plain nested dicts of ``str``, ``int``,
``float``, ``None`` and lists only (no NumPy types, no NaN: undefined numbers are ``None``), so
``json.dumps(report.to_dict())`` works and round-trips::

    {
      "counts": {"n_clips": 17041, "n_labelled": 17041, "n_unlabelled": 0,
                 "n_classes": 1366, "n_evaluated_classes": 1366,
                 "n_excluded_classes": 0, "n_excluded_clips": 0, "n_evaluated": 17041},
      "settings": {"distances": ["cosine", "euclidean", "spearman"], "pca": [null, 100],
                   "ks": [1, 5], "metrics": ["precision", "gsr"], "n_permutations": 1000,
                   "n_bootstrap": 300, "min_class_size": 2, "seed": 0},
      "config_info": {"raw/cosine": {"pca_components": null, "dim": 512,
                                     "distance": "cosine"}, ...},
      "configs": {
        "raw/cosine": {
          "p@1": {"value": 0.61, "raw": null, "baseline_mean": 0.0012,
                  "baseline_ci": [0.0007, 0.0018], "lift": 0.6088, "p_value": 0.000999,
                  "margin": 0.0073, "n_evaluated": 17041, "n_skipped": 0},
          "p@5": {...},
          "gsr": {"value": 0.64, "raw": 0.28, ...}
        },
        "pca100/spearman": {...}
      }
    }

Every metric entry has the same keys; ``baseline_mean``, ``baseline_ci``, ``lift``, ``p_value`` and
``margin`` are ``None`` for metrics without permutation/bootstrap calibration (CSR, CS, CSCF,
silhouette, purity) or when ``n_permutations``/``n_bootstrap`` is 0. Clustering purity adds
``noise_fraction`` and ``n_clusters``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np


def json_number(value: object) -> float | int | None:
    """A plain Python int or float (NumPy scalars converted), or None for missing/NaN/inf."""
    if value is None:
        return None
    if isinstance(value, bool | np.bool_ | int | np.integer):
        return int(value)
    number = float(value)  # type: ignore[arg-type]
    return number if math.isfinite(number) else None


@dataclass(frozen=True)
class MetricSummary:
    """One metric of one configuration: value, permutation baseline and bootstrap margin.

    ``baseline_low``/``baseline_high`` bound the central 95 % of the permutation null;
    ``lift`` = value − baseline_mean; ``p_value`` = (1 + #{null ≥ value}) / (1 + n_permutations);
    ``margin`` = half-width of the bootstrap 95 % interval.
    """

    value: float | None
    raw: float | None = None
    baseline_mean: float | None = None
    baseline_low: float | None = None
    baseline_high: float | None = None
    lift: float | None = None
    p_value: float | None = None
    margin: float | None = None
    n_evaluated: int | None = None
    n_skipped: int | None = None
    extras: Mapping[str, float | int | None] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        interval = (
            None
            if self.baseline_low is None or self.baseline_high is None
            else [json_number(self.baseline_low), json_number(self.baseline_high)]
        )
        if interval is not None and None in interval:
            interval = None
        entry: dict[str, Any] = {
            "value": json_number(self.value),
            "raw": json_number(self.raw),
            "baseline_mean": json_number(self.baseline_mean),
            "baseline_ci": interval,
            "lift": json_number(self.lift),
            "p_value": json_number(self.p_value),
            "margin": json_number(self.margin),
            "n_evaluated": json_number(self.n_evaluated),
            "n_skipped": json_number(self.n_skipped),
        }
        entry.update({key: json_number(value) for key, value in self.extras.items()})
        return entry


@dataclass(frozen=True)
class Configuration:
    """A (PCA, distance) configuration: ``name`` is e.g. ``"pca100/spearman"`` or ``"raw/cosine"``.

    ``pca_components`` is the requested number (None: no PCA); ``dim`` the dimension actually
    used (smaller than requested when min(N, dim) is).
    """

    name: str
    pca_components: int | None
    dim: int
    distance: str


@dataclass(frozen=True)
class DatasetCounts:
    """Clip and class counts of the evaluated subset.

    ``n_evaluated`` clips are those in classes of at least ``min_class_size`` labelled clips
    (GSR and the other separation metrics score only these; P@k queries every labelled clip).
    """

    n_clips: int
    n_labelled: int
    n_classes: int
    n_evaluated_classes: int
    n_excluded_classes: int
    n_excluded_clips: int
    n_evaluated: int

    @property
    def n_unlabelled(self) -> int:
        return self.n_clips - self.n_labelled

    def to_dict(self) -> dict[str, int]:
        return {
            "n_clips": self.n_clips,
            "n_labelled": self.n_labelled,
            "n_unlabelled": self.n_unlabelled,
            "n_classes": self.n_classes,
            "n_evaluated_classes": self.n_evaluated_classes,
            "n_excluded_classes": self.n_excluded_classes,
            "n_excluded_clips": self.n_excluded_clips,
            "n_evaluated": self.n_evaluated,
        }


@dataclass(frozen=True)
class ZeroShotSimilarityReport:
    """Scores of every configuration of a zero-shot similarity grid.

    Attributes
    ----------
    configurations:
        The evaluated configurations, in evaluation order.
    configs:
        configuration name → metric name (``"p@1"``, ``"p@5"``, ``"gsr"``, ``"csr"``, ``"cs"``,
        ``"cscf"``, ``"silhouette"``, ``"purity"``) → :class:`MetricSummary`.
    counts:
        Clip and class counts (:class:`DatasetCounts`).
    settings:
        The arguments the grid ran with (JSON-ready).
    seconds:
        Wall time per configuration (not part of ``to_dict()``, which is deterministic).
    """

    configurations: tuple[Configuration, ...]
    configs: Mapping[str, Mapping[str, MetricSummary]]
    counts: DatasetCounts
    settings: Mapping[str, Any]
    seconds: Mapping[str, float] = field(default_factory=dict)

    def score(self, configuration: str, metric: str) -> float | None:
        """The value of ``metric`` in ``configuration`` (None if undefined)."""
        return self.configs[configuration][metric].value

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-serialisable nested dicts (see the module docstring for the shape)."""
        return {
            "counts": self.counts.to_dict(),
            "settings": dict(self.settings),
            "config_info": {
                c.name: {"pca_components": c.pca_components, "dim": c.dim, "distance": c.distance}
                for c in self.configurations
            },
            "configs": {
                name: {metric: summary.to_dict() for metric, summary in metrics.items()}
                for name, metrics in self.configs.items()
            },
        }
