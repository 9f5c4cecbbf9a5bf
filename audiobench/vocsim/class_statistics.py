"""One exact pass over a distance matrix collecting per-clip, per-class statistics.

This is the straightforward evaluation behind the public :func:`gsr`, :func:`csr`, :func:`cs`,
:func:`cscf` and :func:`silhouette`: every row of D is read once, in row blocks, and reduced
against the class labels. It is the reference the permutation engine
(:mod:`audiobench.vocsim.relabelling`) is tested against, and costs O(N²) per labelling.

Intra-class statistics (sum, max) and the masking of each clip's own class before taking the
nearest other-class distance go through lists of same-class pairs (:mod:`pairs`) when those
are short (many small classes, as in VocSim): a gather of Σ|c|² entries, then one in-place
write of +inf per own-class entry and a row minimum per block. With a few very large classes
the lists would approach N² entries, and boolean N-wide masks per row block are used instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from audiobench.metrics.blocks import gather_block, row_ranges
from audiobench.vocsim.pairs import count_same_class_pairs, same_class_pairs

#: Largest number of (ordered) same-class entries handled as index lists; beyond it, masks.
MAX_LISTED_ENTRIES: int = 1 << 23


@dataclass(frozen=True, eq=False)
class ClassStatistics:
    """Statistics of a set of n clips in C classes (self-distances always excluded).

    Attributes
    ----------
    intra_sum:
        float64 (n,): sum of D[i, j] over the other clips j of i's class.
    nearest_other:
        (n,), D's dtype: min of D[i, k] over clips k of other classes (the NID).
    intra_max:
        (n,) or None: max of D[i, j] over the other clips j of i's class (CSR's MID).
    class_pair_sums:
        float64 (C, C) or None: entry (c, e) is the sum of D[a, b] over a in c, b in e, a ≠ b.
    nearest_class_mean:
        float64 (n,) or None: min over other classes e of the mean of D[i, b], b in e
        (the silhouette's b(i)).
    """

    intra_sum: torch.Tensor
    nearest_other: torch.Tensor
    intra_max: torch.Tensor | None = None
    class_pair_sums: torch.Tensor | None = None
    nearest_class_mean: torch.Tensor | None = None


class _OwnClassEntries:
    """Every (i, j) with j in i's class (self included), sorted by i, with row pointers."""

    def __init__(self, codes: torch.Tensor) -> None:
        n = int(codes.shape[0])
        first, second = same_class_pairs(codes)
        self.first, self.second = first, second
        every = torch.arange(n, device=codes.device)
        rows = torch.cat([first, second, every])
        order = torch.sort(rows, stable=True).indices
        self.rows = rows[order]
        self.cols = torch.cat([second, first, every])[order]
        self.pointers = torch.searchsorted(self.rows, torch.arange(n + 1, device=codes.device))


def class_statistics(
    D: torch.Tensor,
    codes: torch.Tensor,
    class_sizes: torch.Tensor,
    members: torch.Tensor | None = None,
    *,
    intra_max: bool = False,
    class_pair_sums: bool = False,
    nearest_class_mean: bool = False,
) -> ClassStatistics:
    """Compute :class:`ClassStatistics` for the clips ``members`` of D.

    Parameters
    ----------
    D:
        (N, N) distance matrix (not assumed symmetric: row i's statistics read row i).
    codes:
        ``int64`` (n,) class codes 0..C−1 of the members, on D's device.
    class_sizes:
        ``int64`` (C,) clips per class among the members.
    members:
        Indices into D of the n clips (ascending); ``None`` for all of D.
    intra_max, class_pair_sums, nearest_class_mean:
        Which optional statistics to collect (the last two cost a scatter of every entry).
    """
    n = int(codes.shape[0])
    n_classes = int(class_sizes.shape[0])
    device = D.device
    listed = 2 * count_same_class_pairs(codes) + n <= MAX_LISTED_ENTRIES
    entries = _OwnClassEntries(codes) if listed else None
    nearest_other = torch.empty(n, dtype=D.dtype, device=device)
    pair_sums = (
        torch.zeros((n_classes, n_classes), dtype=torch.float64, device=device)
        if class_pair_sums
        else None
    )
    class_means = torch.empty(n, dtype=torch.float64, device=device) if nearest_class_mean else None
    if entries is not None:
        intra_sum, maxima = _intra_from_lists(D, members, entries, n, intra_max)
    else:
        intra_sum = torch.empty(n, dtype=torch.float64, device=device)
        maxima = torch.empty(n, dtype=D.dtype, device=device) if intra_max else None
    for start, stop in row_ranges(n, n, factor=4):
        block = gather_block(D, members, slice(start, stop))
        rows = torch.arange(stop - start, device=device)
        own = codes[start:stop]
        if pair_sums is not None or class_means is not None:
            values = block.to(torch.float64)
            values[rows, rows + start] = 0.0  # pairs a ≠ b only
            per_class = torch.zeros((stop - start, n_classes), dtype=torch.float64, device=device)
            per_class.scatter_add_(1, codes.expand(stop - start, n), values)
            if pair_sums is not None:
                pair_sums.index_add_(0, own, per_class)
            if class_means is not None:
                means = per_class / class_sizes.to(torch.float64)[None, :]
                means[rows, own] = torch.inf
                class_means[start:stop] = means.amin(dim=1)
        if entries is not None:
            # Overwrite each row's own class (self included) with +inf, then take the min.
            low, high = int(entries.pointers[start]), int(entries.pointers[stop])
            block[entries.rows[low:high] - start, entries.cols[low:high]] = torch.inf
            nearest_other[start:stop] = block.amin(dim=1)
            continue
        same = codes[None, :] == own[:, None]  # includes self, which is never "other"
        nearest_other[start:stop] = block.masked_fill(same, torch.inf).amin(dim=1)
        same[rows, rows + start] = False  # intra-class means "j ≠ i"
        intra_sum[start:stop] = block.masked_fill(~same, 0.0).sum(dim=1, dtype=torch.float64)
        if maxima is not None:
            maxima[start:stop] = block.masked_fill(~same, -torch.inf).amax(dim=1)
    return ClassStatistics(
        intra_sum=intra_sum,
        nearest_other=nearest_other,
        intra_max=maxima,
        class_pair_sums=pair_sums,
        nearest_class_mean=class_means,
    )


def _intra_from_lists(
    D: torch.Tensor,
    members: torch.Tensor | None,
    entries: _OwnClassEntries,
    n: int,
    want_max: bool,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Intra-class sums (float64) and maxima from the same-class pair lists."""
    first, second = entries.first, entries.second
    rows, cols = (first, second) if members is None else (members[first], members[second])
    flat = D.view(-1)
    size = int(D.shape[1])
    forward = flat.take(rows * size + cols)  # D[a, b] belongs to row a
    backward = flat.take(cols * size + rows)  # D[b, a] belongs to row b
    sums = torch.zeros(n, dtype=torch.float64, device=D.device)
    sums.index_add_(0, first, forward.to(torch.float64))
    sums.index_add_(0, second, backward.to(torch.float64))
    if not want_max:
        return sums, None
    maxima = torch.full((n,), -torch.inf, dtype=D.dtype, device=D.device)
    maxima.scatter_reduce_(0, first, forward, reduce="amax")
    maxima.scatter_reduce_(0, second, backward, reduce="amax")
    return sums, maxima
