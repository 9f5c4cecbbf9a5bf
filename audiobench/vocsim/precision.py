"""Precision@k (VocSim protocol, "Metrics").

For each labelled clip i, take its k nearest other labelled clips (self excluded, ties broken
by lower index); P@k = (neighbours sharing i's label, summed over all i) / (N_labelled · k).
Unlabelled clips are neither queries nor neighbours. Singleton classes are kept: they are
legitimate neighbours of other clips and score 0 as queries.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from audiobench.metrics.results import MetricResult
from audiobench.metrics.runtime import limited_cpu_threads, resolve_device
from audiobench.metrics.validation import check_ks, validate_labelled_matrix
from audiobench.vocsim.neighbours import sorted_neighbours

__all__ = [
    "check_ks",
    "neighbour_hit_totals",
    "neighbour_hits",
    "precision_at_k",
    "precision_at_k_details",
]


def neighbour_hits(
    neighbours: torch.Tensor, codes: torch.Tensor, ks: Sequence[int]
) -> dict[int, torch.Tensor]:
    """Per-query hit counts under one labelling or a batch of labellings.

    Parameters
    ----------
    neighbours:
        ``int64`` (n, L) sorted neighbour positions, L ≥ max(ks).
    codes:
        Integer class codes of the n clips: (n,) for one labelling, (P, n) for P of them.
    ks:
        Neighbour counts.

    Returns
    -------
    dict
        k → ``int64`` of ``codes``' shape: how many of each query's first k neighbours share
        its label. All ks come from one gather of the first max(ks) neighbours' labels.
    """
    per_query = _rank_matches(neighbours, codes, max(ks)).cumsum(dim=0, dtype=torch.int64)
    return {k: per_query[k - 1].T.reshape(codes.shape) for k in ks}


def neighbour_hit_totals(
    neighbours: torch.Tensor, codes: torch.Tensor, ks: Sequence[int]
) -> dict[int, torch.Tensor]:
    """:func:`neighbour_hits` summed over the queries: k → ``int64`` (P,) for a batch (P, n)
    of labellings. Each neighbour rank's hits are counted over all queries before the ranks
    are accumulated (four times faster than summing the per-query counts at n = 3,000,
    P = 256)."""
    per_rank = _rank_matches(neighbours, codes, max(ks)).sum(dim=1, dtype=torch.int32)
    totals = per_rank.cumsum(dim=0).to(torch.int64)
    return {k: totals[k - 1] for k in ks}


def _rank_matches(neighbours: torch.Tensor, codes: torch.Tensor, k_max: int) -> torch.Tensor:
    """(k_max, n, P) bool: whether each query's neighbour of each rank shares its label, for
    codes (n,) or (P, n). The labels are gathered transposed, so that a neighbour's labels in
    all P labellings are one contiguous row."""
    by_clip = codes.reshape(-1, codes.shape[-1]).T.contiguous()  # (n, P)
    nearest = neighbours[:, :k_max].T.reshape(-1)
    return by_clip.index_select(0, nearest).view(k_max, *by_clip.shape) == by_clip


def precision_at_k(
    D: object, labels: object, k: int, *, device: str | torch.device | None = None
) -> float:
    """Precision@k in [0, 1].

    Parameters
    ----------
    D:
        (N, N) distance matrix (NumPy array or torch tensor).
    labels:
        One label per clip, any hashable; ``None`` (or NaN) for unlabelled clips.
    k:
        Neighbours per query, 1 ≤ k < number of labelled clips.
    device:
        torch device for the computation (default CPU).
    """
    return precision_at_k_details(D, labels, k, device=device).value


def precision_at_k_details(
    D: object, labels: object, k: int, *, device: str | torch.device | None = None
) -> MetricResult:
    """:func:`precision_at_k` as a :class:`MetricResult`, with the per-query precision."""
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
    return MetricResult(
        name=f"p@{k}",
        value=int(hits.sum()) / (n_queries * k),
        n_evaluated=n_queries,
        per_clip=hits.cpu().numpy().astype(np.float64) / k,
    )
