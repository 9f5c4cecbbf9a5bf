"""Silhouette score on a precomputed distance matrix (VocSim protocol, "Metrics").

The protocol defines it as ``sklearn.metrics.silhouette_score(D, y, metric="precomputed")``
over labelled clips of classes with at least ``min_class_size`` (≥ 2) clips, on a seeded
sample of 15,000 clips above that size. This module computes exactly that definition with the
engine's block pass instead of calling scikit-learn, because scikit-learn would first copy the
sampled sub-matrix (a second ~0.9 GB matrix) while the engine reads the rows of D in place:

- a(i) = mean distance from i to the other clips of its class;
- b(i) = min over other classes of the mean distance from i to that class's clips;
- s(i) = (b − a) / max(a, b), 0 for a clip alone in its class (within the sample) or when
  a = b = 0 (scikit-learn's ``nan_to_num``); the score is the mean of s(i).

The sample is drawn as scikit-learn draws it (``RandomState(seed).permutation(n)[:size]``), so
results match ``silhouette_score(..., sample_size=size, random_state=seed)``.
"""

from __future__ import annotations

import numpy as np
import torch

from audiobench.metrics.errors import InsufficientClassesError
from audiobench.metrics.labels import filter_classes, require_two_classes
from audiobench.metrics.results import MetricResult
from audiobench.metrics.runtime import limited_cpu_threads, resolve_device
from audiobench.metrics.validation import validate_labelled_matrix
from audiobench.vocsim.class_statistics import class_statistics

#: Clips above which the silhouette is computed on a seeded sample.
SILHOUETTE_SAMPLE_SIZE: int = 15_000


def silhouette_of_members(
    D: torch.Tensor,
    members: np.ndarray | None,
    codes: np.ndarray,
    *,
    sample_size: int | None = SILHOUETTE_SAMPLE_SIZE,
    seed: int = 0,
) -> tuple[float, np.ndarray, int]:
    """Silhouette of the clips ``members`` of D (None: all) with class ``codes``.

    Returns ``(score, per-sample silhouettes, number of clips evaluated)``; samples
    ``sample_size`` clips first when there are more.
    """
    indices = np.arange(codes.shape[0]) if members is None else members
    if sample_size is not None and indices.shape[0] > sample_size:
        chosen = np.sort(np.random.RandomState(seed).permutation(indices.shape[0])[:sample_size])
        indices, codes = indices[chosen], codes[chosen]
        members = indices
    # Re-number the classes present (after sampling); class sizes are counted among them.
    _, codes = np.unique(codes, return_inverse=True)
    sizes = np.bincount(codes)
    if sizes.shape[0] < 2:
        raise InsufficientClassesError("the silhouette sample holds a single class")
    device = D.device
    member_tensor = None if members is None else torch.from_numpy(members).to(device)
    code_tensor = torch.from_numpy(codes.astype(np.int64)).to(device)
    size_tensor = torch.from_numpy(sizes.astype(np.int64)).to(device)
    stats = class_statistics(D, code_tensor, size_tensor, member_tensor, nearest_class_mean=True)
    assert stats.nearest_class_mean is not None
    a = stats.intra_sum / (size_tensor[code_tensor] - 1).to(torch.float64)
    b = stats.nearest_class_mean
    # 0/0 (a clip alone in its class, or a = b = 0) is 0, as scikit-learn's nan_to_num makes it.
    scores = torch.nan_to_num((b - a) / torch.maximum(a, b), nan=0.0)
    return float(scores.mean()), scores.cpu().numpy(), int(codes.shape[0])


def silhouette(
    D: object,
    labels: object,
    min_class_size: int = 2,
    *,
    sample_size: int | None = SILHOUETTE_SAMPLE_SIZE,
    seed: int = 0,
    device: str | torch.device | None = None,
) -> float:
    """Mean silhouette coefficient in [−1, 1] (higher is better).

    Parameters
    ----------
    D, labels, min_class_size, device:
        As for :func:`audiobench.vocsim.gsr`.
    sample_size:
        Above this many kept clips, evaluate a seeded random sample of this size
        (``None``: never sample).
    seed:
        Seed of the sample.
    """
    return silhouette_details(
        D, labels, min_class_size, sample_size=sample_size, seed=seed, device=device
    ).value


def silhouette_details(
    D: object,
    labels: object,
    min_class_size: int = 2,
    *,
    sample_size: int | None = SILHOUETTE_SAMPLE_SIZE,
    seed: int = 0,
    device: str | torch.device | None = None,
) -> MetricResult:
    """:func:`silhouette` as a :class:`MetricResult`, with the per-sample silhouettes."""
    with limited_cpu_threads():
        matrix, encoded = validate_labelled_matrix(D, labels, resolve_device(device))
        kept = filter_classes(encoded, min_class_size)
        require_two_classes(kept, min_class_size)
        members = kept.members
        value, scores, n_evaluated = silhouette_of_members(
            matrix,
            members if members.shape[0] < encoded.n_clips else None,
            kept.codes,
            sample_size=sample_size,
            seed=seed,
        )
    return MetricResult(
        name="silhouette",
        value=value,
        n_evaluated=n_evaluated,
        n_excluded_classes=kept.n_excluded_classes,
        n_excluded_clips=kept.n_excluded_clips,
        per_clip=scores,
    )
