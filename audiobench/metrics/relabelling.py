"""P@k and GSR of one fixed distance matrix under many labellings: the permutation engine.

The permutation baseline holds D fixed and shuffles the labels ``n_perm`` times (1000 by
default), recomputing P@1, P@5 and GSR each time. Recomputing from scratch costs a full pass
over the N × N matrix per permutation (and a full sort of it for P@k); this engine does the
label-independent work once per matrix and only small, label-dependent work per labelling. A
labelling is given as a permutation σ of the clips' positions: clip p receives the label of
clip σ(p) (``codes[σ]``); the identity is the observed labelling, which goes through the very
same code as the shuffled ones.

Once per matrix
    Each clip's L nearest neighbours, exactly sorted with ties to the lower index
    (:func:`sorted_neighbours`, L = max(k_max, 32)), and the list of unordered same-class pairs
    of the observed labelling.

P@k under a labelling
    The k nearest neighbours do not depend on labels, so P@k compares each clip's permuted
    label with its first k neighbours' permuted labels: one gather of N·k labels.

GSR's NID under a labelling
    The nearest clip of another class is the first entry of the clip's sorted neighbour list
    whose permuted label differs. Under shuffled labels the very first neighbour already
    differs for all but ~|c|/N of the clips, so column 0 is tested for every clip and further
    columns only for the few unresolved ones. A clip whose L nearest all share its label
    (possible only if its class has more than L clips) falls back to an exact masked minimum
    over its row of D: rare under shuffled labels, and at most one pass over D for the
    observed labelling.

GSR's AvgID under a labelling
    Needs Σ D[i, j] over the clips j sharing i's permuted label. Shuffling preserves class
    sizes, so the same-class pairs of a permuted labelling are exactly the observed same-class
    pairs with both ends mapped through σ⁻¹: (a, b) → (σ⁻¹(a), σ⁻¹(b)). Each labelling thus
    costs one gather of Σ_c |c|(|c|−1)/2 entries of D (≈ 1.5·10⁵ for VocSim's largest subset,
    against N² ≈ 2.9·10⁸ entries for a full pass) and a scatter-add into float64 per-clip sums.
    Those gathers are random accesses into a matrix far larger than any cache, so their cost
    is memory latency; running one labelling per core in parallel threads (each with a
    single-threaded torch) overlaps the latencies. For data with very few, very large classes
    the pair list approaches N²/2; the engine then switches, by a cost model, to multiplying row
    blocks of D by the one-hot matrix of a batch of labellings (N²·C multiply-adds per
    labelling, cheap when C is small).

Every step yields what the from-scratch definition yields for the same labelling: the same
neighbours in the same order, the same entries of D, float64 accumulation. Only the order of
the float64 additions differs from :func:`gsr`; since D is float32, whose 24-bit significands
sum exactly in float64's 53 bits unless the entries span a range of magnitudes beyond about
2²⁹ / class size, the results are normally bit-identical (the tests check bit-identity).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

from audiobench.metrics import blocks
from audiobench.metrics.blocks import gather_block, row_ranges
from audiobench.metrics.neighbours import sorted_neighbours
from audiobench.metrics.pairs import count_same_class_pairs, same_class_pairs
from audiobench.metrics.precision import neighbour_hits
from audiobench.metrics.runtime import available_cores
from audiobench.metrics.separation import mean_separation, separation_scores

#: Neighbour-list length (at least max(ks)). Longer lists resolve more clips of the observed
#: labelling without the exact fallback, at a small extra top-k cost.
DEFAULT_LIST_LENGTH: int = 32
#: Same-class pairs handled per chunk: keeps the gather temporaries (a few MB) cache-friendly
#: and below the allocator's mmap threshold, so they are not page-faulted on every call.
PAIR_CHUNK: int = 1 << 18
#: How many float64 multiply-adds of a blocked matrix product cost about as much as one random
#: gather-and-scatter of a pair; chooses the AvgID method. Measured on the 2-core development
#: machine (N = 6000): about 10 ns per pair against about 33 ps per multiply-add.
PAIR_COST_IN_MULTIPLY_ADDS: float = 300.0
#: Labellings handed to a worker at a time when computing a null distribution.
WORK_CHUNK: int = 16

#: ``permutations(index)`` → (permutation of the P@k clips or None, of the GSR clips or None).
PermutationSource = Callable[[int], tuple[np.ndarray | None, np.ndarray | None]]


class RelabellingEvaluator:
    """Evaluates P@k and GSR of a fixed distance matrix under label permutations.

    Parameters
    ----------
    D:
        (n, n) distance matrix over the labelled clips (symmetric, zero diagonal, contiguous).
        It is read, never modified, and must outlive the evaluator.
    precision_codes:
        ``int64`` (n,) class codes of all n clips (the P@k labelling), or None to skip P@k.
    ks:
        Neighbour counts for P@k.
    gsr_members:
        Indices into D of the clips GSR evaluates (classes with enough clips), ascending;
        None for all n clips.
    gsr_codes, gsr_sizes:
        Compact class codes of those clips and the size of each class; None to skip GSR.
    list_length:
        Neighbour-list length L (raised to max(ks) if needed).
    """

    def __init__(
        self,
        D: torch.Tensor,
        *,
        precision_codes: torch.Tensor | None = None,
        ks: Sequence[int] = (),
        gsr_members: torch.Tensor | None = None,
        gsr_codes: torch.Tensor | None = None,
        gsr_sizes: torch.Tensor | None = None,
        list_length: int = DEFAULT_LIST_LENGTH,
    ) -> None:
        if precision_codes is not None and not ks:
            raise ValueError("P@k labels given without ks")
        self.D = D
        self.n = int(D.shape[0])
        self.ks = tuple(ks) if precision_codes is not None else ()
        self.precision_codes = precision_codes
        self.neighbours = sorted_neighbours(D, max((list_length, *self.ks)))
        # The first k_max columns, contiguous: gathered once per labelling for P@k.
        self._nearest_k = self.neighbours.indices[:, : max(self.ks, default=1)].contiguous()
        self.gsr_codes = gsr_codes
        self.uses_pairs = True
        if gsr_codes is not None:
            if gsr_sizes is None:
                raise ValueError("GSR labels given without class sizes")
            self._prepare_gsr(gsr_members, gsr_codes, gsr_sizes)

    def _prepare_gsr(
        self, members: torch.Tensor | None, codes: torch.Tensor, sizes: torch.Tensor
    ) -> None:
        self.gsr_members = members
        self.gsr_sizes = sizes
        self.n_gsr = int(codes.shape[0])
        if members is None:
            self._gsr_neighbours = self.neighbours.indices
            self._gsr_distances = self.neighbours.distances
        else:
            # Re-express neighbour lists in GSR positions; excluded clips point at position
            # n_gsr, where _nearest_other places a sentinel label that never counts as "other".
            position = torch.full((self.n,), self.n_gsr, dtype=torch.int64, device=self.D.device)
            position[members] = torch.arange(self.n_gsr, device=self.D.device)
            self._gsr_neighbours = position[self.neighbours.indices[members]]
            self._gsr_distances = self.neighbours.distances[members]
        self._first_neighbour = self._gsr_neighbours[:, 0].contiguous()
        n_pairs = count_same_class_pairs(codes)
        n_classes = int(sizes.shape[0])
        # Cost per labelling: a random access per pair, or an n × n × C matrix product.
        self.uses_pairs = n_pairs * PAIR_COST_IN_MULTIPLY_ADDS <= self.n_gsr**2 * n_classes
        if self.uses_pairs:
            self._pair_a, self._pair_b = same_class_pairs(codes)

    # -- one labelling ----------------------------------------------------------------------

    def precision_hits(self, permutation: torch.Tensor) -> dict[int, torch.Tensor]:
        """k → ``int64`` (n,) per-query hits under the labelling ``precision_codes[σ]``."""
        if self.precision_codes is None:
            raise ValueError("this evaluator was built without P@k labels")
        codes = self.precision_codes[permutation]
        return neighbour_hits(self._nearest_k, codes, self.ks)

    def gsr_scores(self, permutations: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-clip ``s_i`` (float64) and evaluated mask under ``gsr_codes[σ]``.

        ``permutations`` is one permutation (n_gsr,) or a batch (P, n_gsr); the outputs have
        the same shape.
        """
        if self.gsr_codes is None:
            raise ValueError("this evaluator was built without GSR labels")
        batch = permutations if permutations.ndim == 2 else permutations[None]
        codes = self.gsr_codes[batch]
        if self.uses_pairs:
            intra_sums = torch.stack([self._intra_sums_from_pairs(p) for p in batch])
        else:
            intra_sums = self._intra_sums_from_products(codes)
        avg_intra = intra_sums / (self.gsr_sizes[codes] - 1).to(torch.float64)
        nearest = torch.stack([self._nearest_other(c) for c in codes])
        scores, evaluated = separation_scores(avg_intra, nearest)
        if permutations.ndim == 1:
            return scores[0], evaluated[0]
        return scores, evaluated

    def _intra_sums_from_pairs(self, permutation: torch.Tensor) -> torch.Tensor:
        """Σ_j D[i, j] over same-class j, via the observed pairs mapped through σ⁻¹."""
        device = self.D.device
        inverse = torch.empty_like(permutation)
        inverse[permutation] = torch.arange(self.n_gsr, device=device)
        sums = torch.zeros(self.n_gsr, dtype=torch.float64, device=device)
        flat = self.D.view(-1)
        for start in range(0, int(self._pair_a.shape[0]), PAIR_CHUNK):
            first = inverse.index_select(0, self._pair_a[start : start + PAIR_CHUNK])
            second = inverse.index_select(0, self._pair_b[start : start + PAIR_CHUNK])
            rows, cols = first, second
            if self.gsr_members is not None:
                rows = self.gsr_members.index_select(0, first)
                cols = self.gsr_members.index_select(0, second)
            values = flat.index_select(0, torch.add(cols, rows, alpha=self.n)).to(torch.float64)
            # D is symmetric, so one entry serves both ends of the pair. (scatter_add_ is the
            # faster of the equivalent 1-D accumulations on CPU.)
            sums.scatter_add_(0, first, values)
            sums.scatter_add_(0, second, values)
        return sums

    def _intra_sums_from_products(self, codes: torch.Tensor) -> torch.Tensor:
        """Σ_j D[i, j] over same-class j for a batch (P, n_gsr) of labellings, via row blocks
        of D times the one-hot matrix of all P labellings (float64)."""
        batch = int(codes.shape[0])
        n_classes = int(self.gsr_sizes.shape[0])
        columns = codes + (torch.arange(batch, device=codes.device) * n_classes)[:, None]
        onehot = torch.zeros(
            (self.n_gsr, batch * n_classes), dtype=torch.float64, device=codes.device
        )
        onehot.scatter_(1, columns.T, 1.0)
        sums = torch.empty((batch, self.n_gsr), dtype=torch.float64, device=codes.device)
        for start, stop in row_ranges(self.n_gsr, self.n_gsr, factor=3):
            block = gather_block(self.D, self.gsr_members, start, stop).to(torch.float64)
            rows = torch.arange(stop - start, device=codes.device)
            block[rows, rows + start] = 0.0  # self is not an intra-class neighbour
            per_class = block @ onehot
            sums[:, start:stop] = per_class.gather(1, columns[:, start:stop].T).T
        return sums

    def _nearest_other(self, codes: torch.Tensor) -> torch.Tensor:
        """NID of every GSR clip under the labelling ``codes`` (n_gsr,)."""
        neighbours, distances = self._gsr_neighbours, self._gsr_distances
        # Sentinel code -1 at position n_gsr, where excluded neighbours point: never "other".
        padded = torch.cat([codes, codes.new_full((1,), -1)])
        # Column 0 for every clip: under shuffled labels it resolves all but ~|c|/N of them;
        # later columns are walked only for the clips still pending.
        found = padded.index_select(0, self._first_neighbour)
        resolved = (found != codes) & (found >= 0)
        nearest = torch.where(resolved, distances[:, 0], torch.nan)
        pending = torch.nonzero(~resolved).flatten()
        for column in range(1, neighbours.shape[1]):
            if pending.numel() == 0:
                break
            found = padded[neighbours[pending, column]]
            hit = (found != codes[pending]) & (found >= 0)
            nearest[pending[hit]] = distances[pending[hit], column]
            pending = pending[~hit]
        if pending.numel():
            # Every listed neighbour shares the label: exact minimum over the clip's row.
            assert not self.neighbours.exhaustive, "a full list always holds another class"
            for start, stop in row_ranges(int(pending.shape[0]), self.n_gsr, factor=3):
                clips = pending[start:stop]
                rows = clips if self.gsr_members is None else self.gsr_members[clips]
                block = self.D.index_select(0, rows)
                if self.gsr_members is not None:
                    block = block.index_select(1, self.gsr_members)
                same = codes[None, :] == codes[clips][:, None]  # includes the clip itself
                nearest[clips] = block.masked_fill_(same, torch.inf).amin(dim=1)
        return nearest

    # -- null distributions -----------------------------------------------------------------

    def null_values(
        self,
        count: int,
        permutations: PermutationSource,
        advance: Callable[[int], None] | None = None,
    ) -> dict[str, np.ndarray]:
        """Metric values under ``count`` labellings: ``"p@k"`` for each k and/or ``"gsr"``.

        ``permutations(i)`` gives the i-th labelling (of the P@k clips, of the GSR clips);
        results do not depend on how the work is scheduled. In pair mode the labellings are
        spread over one thread per usable core, each running torch single-threaded (see the
        module docstring); ``advance(m)`` is called from the calling thread as work completes.
        """
        names = [f"p@{k}" for k in self.ks] + (["gsr"] if self.gsr_codes is not None else [])
        values = {name: np.empty(count, dtype=np.float64) for name in names}

        def evaluate(indices: range, single_threaded: bool) -> None:
            if single_threaded:
                # OpenMP's thread count is per thread, so this mostly affects this worker; the
                # caller restores torch's setting afterwards in case anything global changed.
                torch.set_num_threads(1)
            device = self.D.device
            gsr_batch: list[torch.Tensor] = []
            for index in indices:
                precision_perm, gsr_perm = permutations(index)
                if self.precision_codes is not None:
                    assert precision_perm is not None
                    hits = self.precision_hits(torch.from_numpy(precision_perm).to(device))
                    for k in self.ks:
                        values[f"p@{k}"][index] = int(hits[k].sum()) / (self.n * k)
                if self.gsr_codes is not None:
                    assert gsr_perm is not None
                    gsr_batch.append(torch.from_numpy(gsr_perm).to(device))
            if gsr_batch:
                scores, evaluated = self.gsr_scores(torch.stack(gsr_batch))
                raw, _ = mean_separation(scores, evaluated)
                values["gsr"][indices.start : indices.stop] = ((raw + 1.0) / 2.0).cpu().numpy()

        if self.uses_pairs:
            chunks = [range(s, min(s + WORK_CHUNK, count)) for s in range(0, count, WORK_CHUNK)]
        else:
            # Matrix-product mode: batches as large as one block of one-hot columns allows,
            # parallel inside torch's matrix product.
            width = self.n_gsr * int(self.gsr_sizes.shape[0])
            size = max(1, min(64, blocks.BLOCK_ELEMENTS // max(1, width)))
            chunks = [range(s, min(s + size, count)) for s in range(0, count, size)]
        threads = min(available_cores(), torch.get_num_threads())
        if self.uses_pairs and self.D.device.type == "cpu" and threads > 1:
            before = torch.get_num_threads()
            try:
                with ThreadPoolExecutor(threads) as pool:
                    futures = [pool.submit(evaluate, chunk, True) for chunk in chunks]
                    for chunk, future in zip(chunks, futures, strict=True):
                        future.result()
                        if advance is not None:
                            advance(len(chunk))
            finally:
                torch.set_num_threads(before)
            return values
        for chunk in chunks:
            evaluate(chunk, False)
            if advance is not None:
                advance(len(chunk))
        return values
