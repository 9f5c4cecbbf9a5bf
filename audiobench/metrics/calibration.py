"""Calibration against chance: label-permutation baselines and bootstrap margins of error.

**Permutation baseline** (protocol, "Calibration against chance"): hold D fixed, shuffle the
labels ``n_perm`` times (seeded), recompute the metric each time. Reported: the null mean
("baseline"), its 2.5–97.5 percentile interval, the lift (observed − baseline) and the p-value
``(1 + #{null ≥ observed}) / (1 + n_perm)`` (the +1s count the observed labelling as one of the
permutations, so p is never 0).

**Bootstrap margin**: resample the per-clip scores (per-query precision, per-clip ``s_i``) with
replacement ``n_boot`` times (seeded) and report the half-width of the 95 % percentile interval
of the resampled means, on the metric's own scale.

Random streams are NumPy generators seeded from ``(seed, stream, ...)`` keys, so permutations
and resamples do not depend on batch sizes, threads or devices, and every configuration of a
grid sees the same permutations (common random numbers make configurations comparable).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: Percentiles of the null and bootstrap intervals (a central 95 % interval).
INTERVAL_PERCENTILES: tuple[float, float] = (2.5, 97.5)


def label_permutation(n: int, seed: int, stream: int, index: int) -> np.ndarray:
    """The ``index``-th random permutation of ``range(n)`` in stream ``stream`` of ``seed``.

    Each permutation has its own generator seeded by ``(seed, stream, index)``, so it does not
    depend on which other permutations were drawn, in what order, or on which thread: the
    engine can spread permutations over threads and stay reproducible.
    """
    return np.random.default_rng((seed, stream, index)).permutation(n)


@dataclass(frozen=True)
class NullSummary:
    """Summary of a permutation null distribution against the observed value."""

    baseline: float
    low: float
    high: float
    lift: float
    p_value: float


def summarize_null(null: np.ndarray, observed: float) -> NullSummary:
    """Baseline mean, 95 % interval, lift and p-value of ``observed`` against ``null``.

    NaN null values (a permutation under which every clip was skipped) count as not reaching the
    observed value and are left out of the mean and interval.
    """
    null = np.asarray(null, dtype=np.float64)
    if null.size == 0:
        raise ValueError("the null distribution is empty")
    finite = null[np.isfinite(null)]
    baseline = float(finite.mean()) if finite.size else float("nan")
    low, high = (
        (float(v) for v in np.percentile(finite, INTERVAL_PERCENTILES))
        if finite.size
        else (float("nan"), float("nan"))
    )
    exceed = int(np.count_nonzero(null >= observed)) if np.isfinite(observed) else 0
    p_value = (1 + exceed) / (1 + null.size) if np.isfinite(observed) else float("nan")
    return NullSummary(
        baseline=baseline, low=low, high=high, lift=observed - baseline, p_value=p_value
    )


def bootstrap_means(values: np.ndarray, n_bootstrap: int, seed: Sequence[int] | int) -> np.ndarray:
    """Means of ``n_bootstrap`` with-replacement resamples of ``values`` (float64).

    One resample at a time: each is a single gather of N values that stays in cache, which
    measured faster than drawing many resamples as one large index array.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return np.full(n_bootstrap, np.nan)
    rng = np.random.default_rng(seed)
    return np.array(
        [values[rng.integers(0, values.size, values.size)].mean() for _ in range(n_bootstrap)],
        dtype=np.float64,
    )


def bootstrap_margin(
    values: np.ndarray, n_bootstrap: int, seed: Sequence[int] | int, *, scale: float = 1.0
) -> float:
    """Half-width of the 95 % percentile interval of bootstrapped means, times ``scale``.

    ``scale`` maps the mean of the per-clip scores to the metric's scale (GSR = (raw + 1) / 2,
    so its margin is half the margin of the mean ``s_i``).
    """
    means = bootstrap_means(values, n_bootstrap, seed)
    if not np.isfinite(means).all():
        return float("nan")
    low, high = np.percentile(means, INTERVAL_PERCENTILES)
    return float(high - low) / 2.0 * scale
