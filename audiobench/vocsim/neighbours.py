"""Exact sorted nearest-neighbour lists from a distance matrix.

For each clip of a set, its ``L`` nearest other clips of the set, ordered by distance with
ties broken by the lower index: the order the protocol fixes for P@k. These lists feed P@k
(its first k entries) and the GSR engine (the nearest other-class clip under any labelling is
almost always among a clip's first few neighbours).

Method, per row block: ``torch.topk`` with ``L + 1`` (partial selection, never a full sort)
returns the ``L + 1`` smallest values; sorting those few candidates by (distance, index) gives
the exact order *unless* a tie straddles the cut, i.e. the ``L``-th and ``(L+1)``-th smallest
values are equal, in which case ``topk`` may have picked any of the tied clips. Those rows (rare
in real data) are redone exactly: take everything strictly below the tied value, then the
lowest-indexed tied clips up to ``L``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from audiobench.metrics.blocks import gather_block, row_ranges


@dataclass(frozen=True, eq=False)
class NeighbourLists:
    """Sorted nearest-neighbour lists of a set of n clips.

    Attributes
    ----------
    indices:
        ``int64`` (n, L): positions *within the set* of each clip's L nearest other clips,
        nearest first, ties by lower position.
    distances:
        (n, L), same dtype as D: the matching distances (non-decreasing along each row).
    exhaustive:
        True when L = n − 1, i.e. every row lists all other clips.
    """

    indices: torch.Tensor
    distances: torch.Tensor
    exhaustive: bool

    @property
    def length(self) -> int:
        return int(self.indices.shape[1])


def _order_candidates(
    values: torch.Tensor, columns: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Sort each row's candidates by (value, column): by column first, then stably by value."""
    columns, by_column = torch.sort(columns, dim=1)
    values = values.gather(1, by_column)
    values, by_value = torch.sort(values, dim=1, stable=True)
    return values, columns.gather(1, by_value)


def _exact_rows(
    block: torch.Tensor, threshold: torch.Tensor, length: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Exact ``length`` smallest entries per row of ``block`` when ``threshold`` (the
    ``length``-th smallest value of each row) is tied: all entries below it, then the
    lowest-column entries equal to it until the row has ``length``."""
    below = block < threshold[:, None]
    tied = block == threshold[:, None]
    wanted = length - below.sum(dim=1)
    chosen = below | (tied & (tied.cumsum(dim=1) <= wanted[:, None]))
    # nonzero() walks row-major, so each row's columns come out ascending, exactly `length`.
    columns = torch.nonzero(chosen)[:, 1].view(-1, length)
    return _order_candidates(block.gather(1, columns), columns)


def sorted_neighbours(
    D: torch.Tensor,
    length: int,
    members: torch.Tensor | None = None,
) -> NeighbourLists:
    """Each member's ``length`` nearest other members, ties broken by lower position.

    Parameters
    ----------
    D:
        (N, N) distance matrix (finite).
    length:
        List length L ≥ 1; capped at n − 1 for a set of n clips.
    members:
        Indices into D of the set (ascending, so "lower position" is "lower clip index");
        ``None`` for all N clips. Non-members are neither queries nor neighbours.
    """
    n = D.shape[0] if members is None else int(members.shape[0])
    if n < 2:
        raise ValueError("nearest neighbours need at least 2 clips")
    length = min(length, n - 1)
    exhaustive = length == n - 1
    take = length if exhaustive else length + 1
    indices = torch.empty((n, length), dtype=torch.int64, device=D.device)
    distances = torch.empty((n, length), dtype=D.dtype, device=D.device)
    for start, stop in row_ranges(n, n, factor=2):
        block = gather_block(D, members, slice(start, stop))
        rows = torch.arange(stop - start, device=D.device)
        block[rows, rows + start] = torch.inf  # a clip is not its own neighbour
        values, columns = torch.topk(block, take, dim=1, largest=False, sorted=True)
        values, columns = _order_candidates(values, columns)
        if not exhaustive:
            straddles = torch.nonzero(values[:, length] == values[:, length - 1]).flatten()
            if straddles.numel():
                values[straddles, :length], columns[straddles, :length] = _exact_rows(
                    block[straddles], values[straddles, length - 1], length
                )
        indices[start:stop] = columns[:, :length]
        distances[start:stop] = values[:, :length]
    return NeighbourLists(indices=indices, distances=distances, exhaustive=exhaustive)
