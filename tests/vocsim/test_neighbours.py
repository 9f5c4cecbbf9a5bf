"""Exact sorted neighbour lists: ties go to the lower index, whatever torch.topk picks."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from audiobench.vocsim.neighbours import sorted_neighbours


@pytest.mark.parametrize("seed", range(40))
def test_matches_a_full_sort_with_heavy_ties(seed: int, small_blocks: None) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 30))
    # Distances from {0, 1, 2, 3}: most rows have ties straddling any cut.
    values = rng.integers(0, 4, size=(n, n)).astype(float)
    D = np.triu(values, 1) + np.triu(values, 1).T
    members = None
    if seed % 2 and n > 3:
        members = np.sort(rng.choice(n, size=n // 2 + 1, replace=False))
    length = int(rng.integers(1, n + 2))
    lists = sorted_neighbours(
        torch.from_numpy(D), length, None if members is None else torch.from_numpy(members)
    )
    sub = D if members is None else D[np.ix_(members, members)]
    m = sub.shape[0]
    assert lists.length == min(length, m - 1)
    assert lists.exhaustive == (lists.length == m - 1)
    for i in range(m):
        expected = sorted((sub[i, j], j) for j in range(m) if j != i)[: lists.length]
        assert lists.indices[i].tolist() == [j for _, j in expected]
        assert lists.distances[i].tolist() == [d for d, _ in expected]


def test_negative_zero_ties_with_zero() -> None:
    # −0.0 == 0.0: a tie, so the lower index comes first.
    D = torch.tensor([[0.0, 0.0, -0.0], [0.0, 0.0, 1.0], [-0.0, 1.0, 0.0]])
    assert sorted_neighbours(D, 1).indices[:, 0].tolist() == [1, 0, 0]
