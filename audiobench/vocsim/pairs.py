"""Index lists of same-class clip pairs.

With C classes of sizes |c|, there are Σ_c |c|² same-class (ordered) pairs: about 3·10⁵ for
VocSim's largest subset against N² ≈ 2.9·10⁸ entries of the distance matrix. Intra-class
quantities (sums, maxima, masking one's own class) are therefore far cheaper through these
lists than through N × N masks, whenever classes are many and small, as in VocSim.
"""

from __future__ import annotations

import torch


def same_class_pairs(codes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """All unordered pairs (a < b) of positions sharing a class code, as two index vectors."""
    order = torch.sort(codes, stable=True).indices  # positions grouped by class, ascending
    sizes = torch.bincount(codes)
    starts = torch.cumsum(sizes, 0) - sizes
    firsts: list[torch.Tensor] = []
    seconds: list[torch.Tensor] = []
    # Classes of equal size share one triangular index pattern, so the loop runs once per
    # distinct class size, not once per class.
    for size in torch.unique(sizes).tolist():
        if size < 2:
            continue
        classes = torch.nonzero(sizes == size).flatten()
        grid = order[starts[classes][:, None] + torch.arange(size, device=codes.device)]
        upper = torch.triu_indices(size, size, offset=1, device=codes.device)
        firsts.append(grid[:, upper[0]].flatten())
        seconds.append(grid[:, upper[1]].flatten())
    empty = torch.empty(0, dtype=torch.int64, device=codes.device)
    return (torch.cat(firsts) if firsts else empty, torch.cat(seconds) if seconds else empty)


def count_same_class_pairs(codes: torch.Tensor) -> int:
    """Number of unordered same-class pairs, Σ_c |c|(|c| − 1) / 2, without building them."""
    sizes = torch.bincount(codes).to(torch.int64)
    return int((sizes * (sizes - 1) // 2).sum())
