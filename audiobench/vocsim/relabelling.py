"""P@k and GSR of one fixed distance matrix under many labellings: the permutation engine.

The permutation baseline holds D fixed and shuffles the labels ``n_perm`` times (1000 by
default), recomputing P@1, P@5 and GSR each time. Recomputing from scratch costs a full pass
over the N × N matrix per permutation (and a full sort of it for P@k); this engine does the
label-independent work once per matrix and only label-dependent work per labelling, for a
whole batch of labellings at a time. A labelling is given as a permutation σ of the clips'
positions: clip p receives the label of clip σ(p) (``codes[σ]``); the identity is the
observed labelling, which goes through the very same code as the shuffled ones.

Once per matrix
    Each clip's L nearest neighbours, exactly sorted with ties to the lower index
    (:func:`sorted_neighbours`, L = max(k_max, 32)), and what the AvgID method below needs.

P@k under a batch of labellings
    The k nearest neighbours do not depend on labels, so P@k compares each clip's permuted
    label with its first k neighbours' permuted labels: one gather of P·N·k labels.

GSR's NID under a batch of labellings
    The nearest clip of another class is the first entry of the clip's sorted neighbour list
    whose permuted label differs. Column 0 is tested for every (labelling, clip); the pairs it
    leaves unresolved (about |c|/N of them under shuffled labels) are tested on the next few
    columns one at a time, and those still unresolved on the rest of their list at once. A
    clip whose L nearest all share its label (possible only if its class has more than L
    clips) falls back to an exact masked minimum over its row of D: rare under shuffled
    labels, and at most one pass over D for the observed labelling.

GSR's AvgID under a labelling: kernels chosen by measured speed
    It needs S_i = Σ D[i, j] over the clips j sharing i's permuted label.

    *Pairs* (many small classes, as in VocSim): shuffling preserves class sizes, so the
    same-class pairs of a permuted labelling are exactly the observed same-class pairs with
    both ends mapped through σ⁻¹. Each labelling costs one gather of Σ_c |c|(|c|−1)/2 entries
    of D (≈ 1.5·10⁵ for VocSim's largest subset, against N² ≈ 2.9·10⁸ for a full pass) and a
    scatter-add into float64 per-clip sums. The gathers are random accesses into a matrix far
    larger than any cache, so their cost is memory latency; running one labelling per core in
    parallel threads (each with a single-threaded torch) overlaps the latencies.

    *Class-indicator products* (few large classes, where the pair list approaches N²/2): for a
    batch of P labellings, multiply D by the N × P·C one-hot matrix of every labelling's
    classes and keep each row's own class: one matrix product per batch, N²·C multiply-adds per
    labelling, in one of three kernels:

    - *int8* (CPU): an exact integer product. Each row i of D is written in fixed point
      relative to its largest entry, D[i, j] = Σ_k q_k[i, j]·2^(E_i − 8k) + r[i, j] with 8-bit
      digits q_k (K = 4 or more, chosen by cost on a sample of rows) and a remainder r that is
      zero except for entries far below the row's largest (near-duplicates); see
      :mod:`audiobench.vocsim.fixed_point`. Each digit's product with the 0/1 one-hot matrix
      is an int8 matrix product with int32 accumulation, exact; the few non-zero remainders
      are added pair by pair. Integer sums also spare a column: the smallest class gets none,
      its digit sums being each row's digit totals minus the other classes' (C − 1 columns).
      The digits (K bytes per entry) are kept when they fit :data:`PRODUCT_OPERAND_BYTES`,
      else rebuilt once per pass over many labellings. Fast only where the CPU has int8
      dot-product instructions (hundreds of G multiply-adds per second there; one or two on
      an AVX2-only CPU, where it is the slowest kernel by far).
    - *float64*: exact (below), any device.
    - *float32*, for the permutation nulls only: sums rounded to float32, each within a
      relative γ_m = m·2⁻²⁴/(1 − m·2⁻²⁴) of the exact sum over a class of m clips. A clip's
      score s_i = (NID − AvgID)/(NID + AvgID) moves by at most half an AvgID's relative error
      and a null GSR by at most a quarter of it (to first order); :meth:`null_bound` states
      γ_m of the largest class, four times that, and the tests hold the nulls to it. The
      nulls are Monte-Carlo estimates whose own spread is orders of magnitude larger.

    Which kernel runs is decided per matrix from each kernel's operation count and the rates
    measured on this machine and device (:mod:`audiobench.vocsim.kernels`): the fastest for
    the nulls, and for the observed labelling the same one when it is exact, else the faster
    of pairs and the float64 product. ``AUDIOBENCH_SCORING_KERNEL`` (or ``kernel=``) forces
    one.

Exactness. Every step yields what the from-scratch definition yields for the same labelling:
the same neighbours in the same order, the same entries of D, float64 accumulation. D is
float32, and float32 values (24-bit significands) sum exactly in float64's 53 bits unless the
entries summed span a range of magnitudes beyond about 2²⁹ / N; then every order of summation
gives the same exact sum and the results are bit-identical to :func:`gsr` (the tests check
bit-identity). The integer product keeps this: its digits and remainders are D's own bits,
their per-digit sums are exact integers, and every partial sum of the non-negative parts lies
between their smallest bit and the exact total, so it is exact in float64 whenever the total
is. (The float32 product, rounding each sum to about 7 digits, is not: it serves the nulls
alone.)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import torch

from audiobench.metrics.blocks import gather_block, row_ranges
from audiobench.metrics.runtime import available_cores
from audiobench.vocsim import kernels
from audiobench.vocsim.fixed_point import (
    DIGIT_OFFSET,
    FixedPointRows,
    combined_products,
    combined_to_float,
    max_digits,
    remainder_counts,
    selected_digit_sums,
    to_fixed_point,
)
from audiobench.vocsim.neighbours import sorted_neighbours
from audiobench.vocsim.pairs import count_same_class_pairs, same_class_pairs
from audiobench.vocsim.precision import neighbour_hit_totals, neighbour_hits
from audiobench.vocsim.separation import mean_separation, separation_scores

#: Neighbour-list length (at least max(ks)). Longer lists resolve more clips of the observed
#: labelling without the exact fallback, at a small extra top-k cost.
DEFAULT_LIST_LENGTH: int = 32
#: Same-class pairs handled per chunk: keeps the gather temporaries (a few MB) cache-friendly
#: and below the allocator's mmap threshold, so they are not page-faulted on every call.
PAIR_CHUNK: int = 1 << 18
#: Digits per entry of the integer product: at least the 24 bits of a float32 significand plus
#: a margin for entries below the row's largest; more where the remainders are not sparse, up
#: to MOST_DIGITS_TRIED (and what int64 sums allow, :func:`max_digits`).
MIN_DIGITS: int = 4
MOST_DIGITS_TRIED: int = 6
#: Devices on which the exact int8 product is offered (``torch._int_mm`` with any shape).
INTEGER_PRODUCT_DEVICES: tuple[str, ...] = ("cpu",)
#: The float32 kernel serves the nulls only where it is measured this many times faster than
#: the fastest exact kernel, and where that one takes longer than FLOAT32_MIN_SECONDS a
#: labelling (a second per 1000 nulls): elsewhere exact nulls cost little, and a choice that
#: timing noise could flip would make reruns differ in their baselines' last digits.
FLOAT32_GAIN: float = 1.5
FLOAT32_MIN_SECONDS: float = 1e-3
#: Bytes per one-hot entry of each product kernel.
ONEHOT_BYTES: dict[str, int] = {"int8": 1, "float32": 4, "float64": 8}
#: Rows sampled to choose the number of digits.
SAMPLE_ROWS: int = 256
#: Labellings handed to a worker at a time in pair mode.
WORK_CHUNK: int = 16
#: Size of the float64 one-hot matrix of one batch of labellings in product mode. Wider
#: batches amortise each pass over the product's operand over more labellings.
PRODUCT_BATCH_BYTES: int = 1 << 26
#: Size of the one-hot matrix of the labellings whose AvgID sums one pass over D computes, when
#: the product's operand is rebuilt for every pass (N = 17,041 in 10 classes: 768 labellings a
#: pass, two passes for 1000; the pass's label tables and sums grow with it: peak 2.2 GB there,
#: against 2.4 GB for one pass).
PRODUCT_PASS_BYTES: int = 1 << 27
#: At most this many labellings per product batch (the per-batch NID and P@k temporaries grow
#: with it).
MAX_PRODUCT_BATCH: int = 256
#: Product mode keeps its operand (the int8 digits of D, or a float64 copy off the CPU) when it
#: takes at most this many bytes (N ≤ 8,192 with four digits); larger matrices are converted
#: row block by row block for every batch.
PRODUCT_OPERAND_BYTES: int = 1 << 28
#: Neighbour-list columns the NID walk tests one at a time before testing the rest at once.
SINGLE_STEPS: int = 3
#: Entries of the (pending pairs × L) label table tested at once by the NID walk.
WALK_ELEMENTS: int = 1 << 22

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
        kernel: str | None = None,
    ) -> None:
        if precision_codes is not None and not ks:
            raise ValueError("P@k labels given without ks")
        self.D = D
        self.n = int(D.shape[0])
        self.ks = tuple(ks) if precision_codes is not None else ()
        # int32 labels halve the memory traffic of the per-labelling gathers.
        self.precision_codes = None if precision_codes is None else precision_codes.to(torch.int32)
        self.neighbours = sorted_neighbours(D, max((list_length, *self.ks)))
        # The first k_max columns, contiguous: gathered once per labelling for P@k.
        self._nearest_k = self.neighbours.indices[:, : max(self.ks, default=1)].contiguous()
        self.gsr_codes = gsr_codes
        self.null_kernel = self.exact_kernel = "pairs"
        self.uses_pairs = True
        #: What chose the kernels (None when forced): rates here, seconds per random pair.
        self._rates: kernels.KernelRates | None = None
        self._pair_seconds = 0.0
        if gsr_codes is not None:
            if gsr_sizes is None:
                raise ValueError("GSR labels given without class sizes")
            self._prepare_gsr(gsr_members, gsr_codes, gsr_sizes, kernel or kernels.forced_kernel())

    def _offered(self) -> tuple[str, ...]:
        """The AvgID kernels valid for D on its device (float32 only for a float32 D)."""
        offered = ["pairs", "float64"]
        if self.D.device.type in INTEGER_PRODUCT_DEVICES:
            offered.append("int8")
        if self.D.dtype == torch.float32:
            offered.append("float32")
        return tuple(offered)

    def _kernel_seconds(self, n_pairs: int, n_classes: int) -> dict[str, float]:
        """Each offered kernel's seconds per labelling: its operation count (random pair
        accesses, or multiply-adds of the n × n × C product: MIN_DIGITS int8 digits and C − 1
        columns for the integer one) over the rate measured on this device."""
        device = self.D.device
        rates = kernels.measured_rates(device)
        self._rates = rates
        self._pair_seconds = kernels.pair_seconds(self.D)
        workers = min(available_cores(), torch.get_num_threads()) if device.type == "cpu" else 1
        square = float(self.n_gsr) ** 2
        seconds = {
            "pairs": n_pairs * self._pair_seconds / workers,
            "float64": square * n_classes / rates.float64,
            "float32": square * n_classes / rates.float32,
        }
        if rates.int8 is not None:
            seconds["int8"] = MIN_DIGITS * square * (n_classes - 1) / rates.int8
        offered = self._offered()
        return {name: value for name, value in seconds.items() if name in offered}

    def _prepare_gsr(
        self,
        members: torch.Tensor | None,
        codes: torch.Tensor,
        sizes: torch.Tensor,
        forced: str | None,
    ) -> None:
        self.gsr_members = members
        self.gsr_sizes = sizes
        self.n_gsr = int(codes.shape[0])
        device = self.D.device
        if members is None:
            self._gsr_neighbours = self.neighbours.indices
            self._gsr_distances = self.neighbours.distances
        else:
            # Re-express neighbour lists in GSR positions; excluded clips point at position
            # n_gsr, where the NID walk places a sentinel label that never counts as "other".
            position = torch.full((self.n,), self.n_gsr, dtype=torch.int64, device=device)
            position[members] = torch.arange(self.n_gsr, device=device)
            self._gsr_neighbours = position[self.neighbours.indices[members]]
            self._gsr_distances = self.neighbours.distances[members]
        self._first_neighbour = self._gsr_neighbours[:, 0].contiguous()
        self._first_distance = self._gsr_distances[:, 0].contiguous()
        n_pairs = count_same_class_pairs(codes)
        n_classes = int(sizes.shape[0])
        # The AvgID kernel of the nulls is the fastest measured here (see
        # audiobench.vocsim.kernels); the observed labelling takes the same one when it is
        # exact, else the faster of the exact pairs and float64 product (one labelling).
        if forced is not None:
            if forced not in self._offered():
                raise ValueError(
                    f"scoring kernel {forced!r} is not offered for a {self.D.dtype} matrix on "
                    f"{device.type}; choose one of {', '.join(self._offered())}"
                )
            self.null_kernel = forced
            self.exact_kernel = forced if forced in kernels.EXACT_KERNELS else "float64"
        else:
            seconds = self._kernel_seconds(n_pairs, n_classes)
            exact = {name: value for name, value in seconds.items() if name != "float32"}
            self.null_kernel = self.exact_kernel = min(exact, key=exact.__getitem__)
            rounded = seconds.get("float32", math.inf)
            if rounded * FLOAT32_GAIN < exact[self.null_kernel] and (
                exact[self.null_kernel] > FLOAT32_MIN_SECONDS
            ):
                self.null_kernel = "float32"
                if self.exact_kernel == "int8":  # one labelling: no digits built for it
                    self.exact_kernel = min(("pairs", "float64"), key=exact.__getitem__)
        kernels.note("avgid-nulls", self.null_kernel, self._rates)
        kernels.note("avgid-observed", self.exact_kernel)
        self.uses_pairs = self.null_kernel == "pairs"
        if "pairs" in (self.null_kernel, self.exact_kernel):
            self._pair_a, self._pair_b = same_class_pairs(codes)
        # Product layout: one one-hot column per class and labelling, except (integer product)
        # for the smallest class, whose sums are the rows' totals minus the other classes'.
        self._integer = self.null_kernel == "int8"
        self._n_columns = n_classes - 1 if self._integer else n_classes
        self._implicit = int(sizes.argmin()) if self._integer else n_classes
        classes = torch.arange(n_classes, device=device)
        self._column_of = torch.where(classes > self._implicit, classes - 1, classes)
        self._blocks = row_ranges(self.n_gsr, self.n_gsr, factor=2 if self._integer else 3)
        self._operands: list[Any] | None = None
        # Rebuilt digits reuse their rows' exponents (the largest entries do not change).
        self._exponents: dict[int, torch.Tensor] = {}
        if self.uses_pairs:
            return
        self._n_digits = self._choose_digits() if self._integer else 0
        per_entry = self._n_digits if self._integer else ONEHOT_BYTES[self.null_kernel]
        if self.n_gsr**2 * per_entry <= PRODUCT_OPERAND_BYTES:
            self._operands = [
                self._operand(index, self.null_kernel) for index in range(len(self._blocks))
            ]

    def _gsr_rows(self, positions: torch.Tensor, kernel: str = "int8") -> torch.Tensor:
        """A copy of the GSR clips' rows of D at GSR ``positions``, self-distances zeroed,
        float64 for the float64 product (D's own dtype for the others)."""
        block = gather_block(self.D, self.gsr_members, positions)
        if kernel == "float64":
            block = block.to(torch.float64)
        block[torch.arange(positions.shape[0], device=block.device), positions] = 0.0
        return block  # self is not an intra-class neighbour

    def _choose_digits(self) -> int:
        """Digits of the integer product: the fewest whose remainders cost less than another
        digit, judged on a sample of rows with the rates measured here (a forced int8 kernel
        measures nothing and takes the fewest digits without remainders)."""
        step = max(1, self.n_gsr // SAMPLE_ROWS)
        sample = torch.arange(0, self.n_gsr, step, device=self.D.device)
        most = max(MIN_DIGITS, min(MOST_DIGITS_TRIED, max_digits(self.n_gsr)))
        counts = remainder_counts(self._gsr_rows(sample), range(MIN_DIGITS, most + 1))
        scale = self.n_gsr / sample.shape[0]
        rates = self._rates
        if rates is None or rates.int8 is None:
            return MIN_DIGITS
        int8_rate = rates.int8

        def cost(n_digits: int) -> float:
            product = n_digits * self.n_gsr**2 * self._n_columns / int8_rate
            return product + counts[n_digits] * scale * self._pair_seconds

        return min(counts, key=cost)

    def _operand(self, index: int, kernel: str) -> FixedPointRows | torch.Tensor:
        start, stop = self._blocks[index]
        rows = self._gsr_rows(torch.arange(start, stop, device=self.D.device), kernel)
        if kernel != "int8":
            return rows
        fixed = to_fixed_point(rows, self._n_digits, self._exponents.get(index))
        self._exponents[index] = fixed.exponents
        return fixed

    def _block_operand(self, index: int, kernel: str) -> Any:
        if self._operands is not None and kernel == self.null_kernel:
            return self._operands[index]
        return self._operand(index, kernel)

    # -- batches of labellings --------------------------------------------------------------

    def precision_hits(self, permutation: torch.Tensor) -> dict[int, torch.Tensor]:
        """k → ``int64`` per-query hits under the labelling ``precision_codes[σ]``.

        ``permutation`` is one permutation (n,) or a batch (P, n); each output has its shape.
        """
        if self.precision_codes is None:
            raise ValueError("this evaluator was built without P@k labels")
        return neighbour_hits(self._nearest_k, self.precision_codes[permutation], self.ks)

    def gsr_scores(
        self,
        permutations: torch.Tensor,
        intra_sums: torch.Tensor | None = None,
        *,
        exact: bool = True,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-clip ``s_i`` (float64) and evaluated mask under ``gsr_codes[σ]``.

        ``permutations`` is one permutation (n_gsr,) or a batch (P, n_gsr); the outputs have
        the same shape. ``intra_sums`` (P, n_gsr), when given, are :meth:`intra_sums` of the
        batch computed beforehand. ``exact=False`` allows the nulls' kernel, which may round
        (see :meth:`intra_sums`).
        """
        if self.gsr_codes is None:
            raise ValueError("this evaluator was built without GSR labels")
        batch = permutations if permutations.ndim == 2 else permutations[None]
        codes = self.gsr_codes[batch]
        if intra_sums is None:
            intra_sums = self.intra_sums(batch, exact=exact)
        avg_intra = intra_sums / (self.gsr_sizes[codes] - 1).to(torch.float64)
        scores, evaluated = separation_scores(avg_intra, self._nearest_other(codes))
        if permutations.ndim == 1:
            return scores[0], evaluated[0]
        return scores, evaluated

    def intra_sums(self, permutations: torch.Tensor, *, exact: bool = True) -> torch.Tensor:
        """(P, n_gsr) float64: Σ_j D[i, j] over the clips j sharing clip i's label under each
        labelling ``gsr_codes[σ]`` of the batch ``permutations`` (P, n_gsr).

        Exact with ``exact=True`` (the observed labelling). With ``exact=False`` (the nulls)
        the nulls' kernel computes them; when that is the float32 product, each sum S over a
        class of m clips is within a relative :func:`~audiobench.vocsim.kernels.float32_sum_bound`
        (m) of the exact one, so each clip's s_i moves by at most half that and a null GSR by at
        most a quarter (to first order; :meth:`null_bound` states it with a factor 4 to spare).
        """
        if self.gsr_codes is None:
            raise ValueError("this evaluator was built without GSR labels")
        kernel = self.exact_kernel if exact else self.null_kernel
        if kernel == "pairs":
            return torch.stack([self._intra_sums_from_pairs(p) for p in permutations])
        return self._intra_sums_from_products(self.gsr_codes[permutations], kernel)

    def null_bound(self) -> float:
        """The largest difference between a null GSR value of :meth:`null_values` and its
        exact value: 0 for exact kernels, else γ_m of the float32 sums over the largest
        class (four times the first-order bound of :meth:`intra_sums`)."""
        if self.gsr_codes is None or self.null_kernel in kernels.EXACT_KERNELS:
            return 0.0
        return kernels.float32_sum_bound(int(self.gsr_sizes.max()))

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

    def _intra_sums_from_products(self, codes: torch.Tensor, kernel: str) -> torch.Tensor:
        """Σ_j D[i, j] over same-class j for a batch (P, n_gsr) of labellings: D times the
        one-hot matrix of every labelling's classes, each row's own column picked, as the
        ``kernel`` product (int8 digits, float64 or float32)."""
        batch, n = int(codes.shape[0]), self.n_gsr
        device = codes.device
        width = self._n_columns
        columns = self._column_of[codes] + (torch.arange(batch, device=device) * width)[:, None]
        # The implicit class's clips are marked in a spare last column, left out of the product.
        columns.masked_fill_(codes == self._implicit, batch * width)
        dtype = {"int8": torch.int8, "float32": torch.float32, "float64": torch.float64}[kernel]
        clips = torch.arange(n, device=device).expand(batch, n)
        if kernel == "int8":
            # Column-major (a column's clips contiguous), which the int8 product reads faster.
            onehot_t = torch.zeros((batch * width + 1, n), dtype=dtype, device=device)
            onehot_t[columns, clips] = 1
            onehot = onehot_t[:-1].T
        else:
            # Row-major, which the float products read faster (a third faster on AVX2).
            onehot = torch.zeros((n, batch * width + 1), dtype=dtype, device=device)
            onehot[clips, columns] = 1
            onehot = onehot[:, :-1]
        sums = torch.empty((batch, n), dtype=torch.float64, device=device)
        with kernels.ieee_float32():
            for index, (start, stop) in enumerate(self._blocks):
                own = columns[:, start:stop].T  # (rows, P): each row's column in each labelling
                operand = self._block_operand(index, kernel)
                if kernel == "int8":
                    block = self._integer_sums(operand, onehot, codes, start, own)
                else:
                    block = (operand @ onehot).gather(1, own)
                sums[:, start:stop] = block.T
        return sums

    def _integer_sums(
        self,
        rows: FixedPointRows,
        onehot: torch.Tensor,
        codes: torch.Tensor,
        start: int,
        own: torch.Tensor,
    ) -> torch.Tensor:
        """The block of rows from ``start``: (rows, P) exact same-class sums from the digits'
        int8 products and the remainders (see :mod:`audiobench.vocsim.fixed_point`)."""
        n_digits, n_rows = rows.n_digits, int(rows.exponents.shape[0])
        products = selected_digit_sums(rows, onehot)  # (K, rows, P·(C − 1))
        width = self._n_columns
        block_codes = codes[:, start : start + n_rows].T  # (rows, P)
        # The implicit class's rows point at the spare column: read a real one for now,
        # replaced below.
        own = own.clamp(max=products.shape[2] - 1).expand(n_digits, -1, -1)
        whole = combined_products(products.gather(2, own))  # (rows, P) int64
        at_row, at_labelling = torch.nonzero(block_codes == self._implicit, as_tuple=True)
        if at_row.numel():
            # Its sums are the rows' totals minus every other class's (exact integers).
            labellings = products.view(n_digits, n_rows, -1, width)[:, at_row, at_labelling]
            # Per digit, the other columns' sum is at most 128·n·(C − 1) in magnitude.
            narrow = DIGIT_OFFSET * self.n_gsr * width < 2**31
            rest = combined_products(labellings.sum(dim=2, dtype=torch.int32 if narrow else None))
            whole[at_row, at_labelling] = rows.totals[at_row] - rest
        # The products saw the digits minus 128: add 128 per clip of the row's class back.
        sizes = self.gsr_sizes[block_codes]
        sums = combined_to_float(whole, sizes, rows.exponents, n_digits)
        if rows.remainder_rows.numel():
            at, to = rows.remainder_rows, rows.remainder_columns
            same = codes[:, start + at] == codes[:, to]  # (P, remainders)
            values = torch.where(same, rows.remainder_values, 0.0)
            sums.index_add_(0, at, values.T)
        return sums

    def _nearest_other(self, codes: torch.Tensor) -> torch.Tensor:
        """NID of every GSR clip under each labelling of the batch ``codes`` (P, n_gsr)."""
        batch, n = int(codes.shape[0]), self.n_gsr
        neighbours, distances = self._gsr_neighbours, self._gsr_distances
        # Sentinel code -1 at position n_gsr, where excluded neighbours point: never "other".
        padded = torch.cat([codes, codes.new_full((batch, 1), -1)], dim=1)
        found = padded.gather(1, self._first_neighbour.expand(batch, n))
        resolved = (found != codes) & (found >= 0)
        nearest = torch.where(resolved, self._first_distance.expand(batch, n), torch.nan)
        pending = torch.nonzero(~resolved)
        length = int(neighbours.shape[1])
        first = 1
        # Column by column while the unresolved shrink fast (with few large classes, most are
        # resolved by their second or third neighbour) ...
        while pending.shape[0] and first < min(length, SINGLE_STEPS + 1):
            which, clips = pending.unbind(1)
            labels = padded[which, neighbours[clips, first]]
            other = (labels != codes[which, clips]) & (labels >= 0)
            nearest[which[other], clips[other]] = distances[clips[other], first]
            pending = pending[~other]
            first += 1
        if pending.shape[0] and first < length:
            # ... then the rest of each unresolved list at once: its first entry of another class.
            unresolved = []
            step = max(1, WALK_ELEMENTS // (length - first))
            for start in range(0, int(pending.shape[0]), step):
                which, clips = pending[start : start + step].unbind(1)
                labels = padded[which[:, None], neighbours[clips, first:]]
                other = (labels != codes[which, clips][:, None]) & (labels >= 0)
                hit = other.any(dim=1)
                column = other.to(torch.uint8).argmax(dim=1) + first  # the first "other" entry
                nearest[which[hit], clips[hit]] = distances[clips[hit], column[hit]]
                unresolved.append(pending[start : start + step][~hit])
            pending = torch.cat(unresolved)
        if pending.shape[0]:
            # Every listed neighbour shares the label: exact minimum over the clip's row.
            assert not self.neighbours.exhaustive, "a full list always holds another class"
            for start, stop in row_ranges(int(pending.shape[0]), n, factor=3):
                which, clips = pending[start:stop].unbind(1)
                block = gather_block(self.D, self.gsr_members, clips)
                own = codes[which, clips]
                same = codes.index_select(0, which) == own[:, None]  # includes the clip itself
                nearest[which, clips] = block.masked_fill_(same, torch.inf).amin(dim=1)
        return nearest

    # -- null distributions -----------------------------------------------------------------

    def _product_pass(self) -> int:
        """Labellings whose AvgID sums one pass over D computes: the batch when the product's
        operand is kept, else as many as :data:`PRODUCT_PASS_BYTES` of one-hot columns hold."""
        if self._operands is not None:
            return self._product_batch()
        return max(self._product_batch(), PRODUCT_PASS_BYTES // self._onehot_width())

    def _product_batch(self) -> int:
        return max(1, min(MAX_PRODUCT_BATCH, PRODUCT_BATCH_BYTES // self._onehot_width()))

    def _onehot_width(self) -> int:
        """Bytes of one labelling's one-hot columns in the nulls' product."""
        return self.n_gsr * self._n_columns * ONEHOT_BYTES.get(self.null_kernel, 8)

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
        module docstring); in product mode batches run one after the other, parallel inside
        torch's matrix product. ``advance(m)`` is called from the calling thread as work
        completes.
        """
        names = [f"p@{k}" for k in self.ks] + (["gsr"] if self.gsr_codes is not None else [])
        values = {name: np.empty(count, dtype=np.float64) for name in names}
        device = self.D.device

        def evaluate(
            indices: range,
            single_threaded: bool,
            drawn: list[tuple[np.ndarray | None, np.ndarray | None]] | None = None,
            intra_sums: torch.Tensor | None = None,
        ) -> None:
            if single_threaded:
                # OpenMP's thread count is per thread, so this mostly affects this worker; the
                # caller restores torch's setting afterwards in case anything global changed.
                torch.set_num_threads(1)
            if drawn is None:
                drawn = [permutations(index) for index in indices]
            window = slice(indices.start, indices.stop)
            if self.precision_codes is not None:
                stacked = np.stack([pair[0] for pair in drawn])  # type: ignore[misc]
                permuted = self.precision_codes[torch.from_numpy(stacked).to(device)]
                totals = neighbour_hit_totals(self._nearest_k, permuted, self.ks)
                for k in self.ks:
                    values[f"p@{k}"][window] = totals[k].cpu().numpy() / (self.n * k)
            if self.gsr_codes is not None:
                stacked = np.stack([pair[1] for pair in drawn])  # type: ignore[misc]
                scores, evaluated = self.gsr_scores(
                    torch.from_numpy(stacked).to(device), intra_sums, exact=False
                )
                raw, _ = mean_separation(scores, evaluated)
                values["gsr"][window] = ((raw + 1.0) / 2.0).cpu().numpy()

        size = WORK_CHUNK if self.uses_pairs else self._product_batch()
        chunks = [range(s, min(s + size, count)) for s in range(0, count, size)]
        threads = min(available_cores(), torch.get_num_threads())
        if self.uses_pairs and device.type == "cpu" and threads > 1:
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
        # Product mode: one pass over D computes the AvgID sums of many labellings at once (its
        # integer digits are rebuilt once per pass when they are not kept).
        passes = max(1, self._product_pass() // size) if not self.uses_pairs else 1
        for first in range(0, len(chunks), passes):
            group = chunks[first : first + passes]
            drawn = [permutations(index) for index in range(group[0].start, group[-1].stop)]
            sums = None
            if self.gsr_codes is not None and passes > 1:
                stacked = np.stack([pair[1] for pair in drawn])  # type: ignore[misc]
                sums = self.intra_sums(torch.from_numpy(stacked).to(device), exact=False)
            for chunk in group:
                window = slice(chunk.start - group[0].start, chunk.stop - group[0].start)
                evaluate(chunk, False, drawn[window], None if sums is None else sums[window])
                if advance is not None:
                    advance(len(chunk))
        return values
