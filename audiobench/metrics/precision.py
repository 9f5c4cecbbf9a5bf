"""Precision@k (VocSim protocol, "Metrics").

For each labelled clip i, take its k nearest other labelled clips (self excluded, ties broken
by lower index); P@k = (neighbours sharing i's label, summed over all i) / (N_labelled · k).
Unlabelled clips are neither queries nor neighbours. Singleton classes are kept: they are
legitimate neighbours of other clips and score 0 as queries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, overload

import numpy as np
import torch

from audiobench.metrics.neighbours import sorted_neighbours
from audiobench.metrics.results import MetricResult
from audiobench.metrics.runtime import limited_cpu_threads, resolve_device
from audiobench.metrics.validation import validate_labelled_matrix


def check_ks(ks: Sequence[int], n_labelled: int) -> tuple[int, ...]:
    """Validate neighbour counts: positive integers, each at most ``n_labelled − 1``."""
    checked = tuple(ks)
    if not checked:
        raise ValueError("ks must not be empty")
    for k in checked:
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}")
        if k > n_labelled - 1:
            raise ValueError(f"P@{k} needs more than {k} labelled clips, got {n_labelled}")
    return tuple(int(k) for k in checked)


def neighbour_hits(
    neighbours: torch.Tensor, codes: torch.Tensor, ks: Sequence[int]
) -> dict[int, torch.Tensor]:
    """Per-query hit counts under one labelling or a batch of labellings.

    Parameters
    ----------
    neighbours:
        ``int64`` (n, L) sorted neighbour positions, L ≥ max(ks).
    codes:
        ``int64`` class codes of the n clips: (n,) for one labelling, (P, n) for P of them.
    ks:
        Neighbour counts.

    Returns
    -------
    dict
        k → ``int64`` of ``codes``' shape: how many of each query's first k neighbours share
        its label. All ks come from one gather of the first max(ks) neighbours' labels.
    """
    k_max = max(ks)
    nearest = neighbours[:, :k_max].reshape(-1)
    labels = codes.index_select(-1, nearest).view(*codes.shape, k_max)
    matches = labels == codes[..., None]
    return {k: matches[..., :k].sum(dim=-1) for k in ks}


@overload
def precision_at_k(
    D: object,
    labels: object,
    k: int,
    *,
    return_details: Literal[False] = ...,
    device: str | torch.device | None = ...,
) -> float: ...
@overload
def precision_at_k(
    D: object,
    labels: object,
    k: int,
    *,
    return_details: Literal[True],
    device: str | torch.device | None = ...,
) -> MetricResult: ...
def precision_at_k(
    D: object,
    labels: object,
    k: int,
    *,
    return_details: bool = False,
    device: str | torch.device | None = None,
) -> float | MetricResult:
    """Precision@k in [0, 1].

    Parameters
    ----------
    D:
        (N, N) distance matrix (NumPy array or torch tensor).
    labels:
        One label per clip, any hashable; ``None`` (or NaN) for unlabelled clips.
    k:
        Neighbours per query, 1 ≤ k < number of labelled clips.
    return_details:
        Return a :class:`MetricResult` (with per-query precision) instead of the float.
    device:
        torch device for the computation (default CPU).
    """
    with limited_cpu_threads():
        matrix, encoded = validate_labelled_matrix(D, labels, resolve_device(device))
        labelled = encoded.labelled
        if labelled.shape[0] < 2:
            raise ValueError(f"P@k needs at least 2 labelled clips, got {labelled.shape[0]}")
        (k,) = check_ks([k], int(labelled.shape[0]))
        members = (
            None
            if labelled.shape[0] == encoded.n_clips
            else torch.from_numpy(labelled).to(matrix.device)
        )
        neighbours = sorted_neighbours(matrix, k, members)
        codes = torch.from_numpy(encoded.codes[labelled]).to(matrix.device)
        hits = neighbour_hits(neighbours.indices, codes, [k])[k]
    n_queries = int(labelled.shape[0])
    value = int(hits.sum()) / (n_queries * k)
    if not return_details:
        return value
    return MetricResult(
        name=f"p@{k}",
        value=value,
        n_evaluated=n_queries,
        per_clip=hits.cpu().numpy().astype(np.float64) / k,
    )
