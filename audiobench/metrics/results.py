"""The detailed result of a metric: what every ``*_details`` function returns.

Each metric comes as a pair with the same arguments: ``gsr(D, labels)`` returns just the value
as a float, ``gsr_details(D, labels)`` a :class:`MetricResult` with the counts the protocol asks
to report (for GSR: ``gsr``, ``gsr_raw``, ``n_evaluated``, ``n_skipped``) and the per-clip
scores the value is the mean of (which the bootstrap resamples). The scalar function is the
details function's ``.value``; one class for every metric keeps the API uniform.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True, eq=False)
class MetricResult:
    """A metric value with its provenance.

    Attributes
    ----------
    name:
        Metric name as used in reports (``"p@5"``, ``"gsr"``, ``"csr"``, ``"cs"``, ``"cscf"``,
        ``"silhouette"``, ``"purity"``).
    value:
        The score exactly as the protocol defines it (fractions in [0, 1] for P@k, GSR, CSR;
        CS and CSCF raw, lower is better). NaN when undefined (e.g. every clip skipped).
    raw:
        The un-rescaled score where the protocol defines one (GSR and CSR: the mean separation
        in [−1, 1] before ``(raw + 1) / 2``), else None.
    n_evaluated:
        Clips (or, for P@k, queries) that contributed to the value.
    n_skipped:
        Clips dropped for a degenerate score (GSR: denominator ≤ ε or not finite).
    n_excluded_classes, n_excluded_clips:
        Classes below ``min_class_size`` and the labelled clips in them (not evaluated).
    per_clip:
        float64 per-clip scores whose mean gives the value (P@k: per-query precision; GSR:
        ``s_i`` of evaluated clips; silhouette: per-sample silhouettes), else None.
    extras:
        Metric-specific numbers (e.g. clustering purity's noise fraction).
    """

    name: str
    value: float
    raw: float | None = None
    n_evaluated: int = 0
    n_skipped: int = 0
    n_excluded_classes: int = 0
    n_excluded_clips: int = 0
    per_clip: np.ndarray | None = field(default=None, repr=False)
    extras: Mapping[str, float | int] = field(default_factory=dict)

    def __float__(self) -> float:
        return self.value
