"""The engine's arithmetic kernels, how fast each runs on this machine, and which one a run used.

Several steps of the scoring engine can be computed by more than one kernel with the same
result: the AvgID sums of a labelling (:mod:`audiobench.vocsim.relabelling`) as an int8
fixed-point product, a float64 product or a random gather of same-class pairs; the products of
integer rank rows (:mod:`audiobench.vocsim.distances`) as three int8 products or one float64
one. Which is fastest is a fact about the machine, not about the code: ``torch._int_mm`` runs
at hundreds of G multiply-adds per second on a CPU with int8 dot-product instructions (VNNI,
AMX, Arm's dot product) and at one or two G on an AVX2-only CPU, where a float64 product is
several times faster. So the engine never decides by a constant: it multiplies each kernel's
operation count (the analytic counts stay where they are) by a rate measured here, once per
process and device, in a few milliseconds (:func:`measured_rates`).

The choice changes no observed score: every candidate for an observed value is exact. The
float32 product, offered for permutation nulls only, is the one kernel that rounds (see
:func:`float32_sum_bound`); it is taken only where it is measured fastest, and
``AUDIOBENCH_SCORING_KERNEL`` forces one kernel everywhere it is valid (``int8``, ``float64``,
``float32``, ``pairs``; for benchmarks and for exact nulls). What a run chose, with the rates
measured, is recorded in its result's environment (:func:`recording`), never in its identity.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch

__all__ = [
    "EXACT_KERNELS",
    "FLOAT32_UNIT_ROUNDOFF",
    "KERNELS",
    "KernelRates",
    "KernelRecord",
    "float32_sum_bound",
    "forced_kernel",
    "ieee_float32",
    "measured_rates",
    "note",
    "pair_seconds",
    "recording",
]

#: Every kernel name, and those whose sums are exact (every observed score uses one of these).
KERNELS: tuple[str, ...] = ("int8", "float64", "float32", "pairs")
EXACT_KERNELS: tuple[str, ...] = ("int8", "float64", "pairs")
#: The environment variable that forces a kernel.
FORCE_VARIABLE: str = "AUDIOBENCH_SCORING_KERNEL"
#: Unit roundoff of float32 (round to nearest).
FLOAT32_UNIT_ROUNDOFF: float = 2.0**-24
#: A calibration product is grown until one run takes at least this long.
TARGET_SECONDS: float = 4e-3
#: Shape of the calibration products: (rows × INNER) @ (INNER × COLUMNS), rows grown from
#: FIRST_ROWS up to LAST_ROWS, about the shape of one row block of the engine's products.
INNER: int = 2048
COLUMNS: int = 256
FIRST_ROWS: int = 16
LAST_ROWS: int = 2048
#: Interleaved timing rounds of :func:`measured_rates`.
ROUNDS: int = 3
#: Random pairs timed by :func:`pair_seconds`.
PAIR_SAMPLE: int = 1 << 15


@dataclass(frozen=True)
class KernelRates:
    """Measured matrix-product rates on one device, in multiply-adds per second.

    ``int8`` is None where the engine does not offer the int8 product (off the CPU).
    """

    device: str
    threads: int
    float64: float
    float32: float
    int8: float | None

    def as_dict(self) -> dict[str, Any]:
        """Rates in G multiply-adds per second, rounded for the result file."""
        out: dict[str, Any] = {"device": self.device, "threads": self.threads}
        for name in ("int8", "float32", "float64"):
            value = getattr(self, name)
            out[f"{name}_gmacs"] = None if value is None else round(value / 1e9, 3)
        return out


def _synchronize(device: torch.device) -> Callable[[], None]:
    if device.type == "cuda":
        return lambda: torch.cuda.synchronize(device)
    return lambda: None


def _best_seconds(run: Callable[[], object], sync: Callable[[], None], repeats: int) -> float:
    best = math.inf
    for _ in range(repeats):
        sync()
        started = time.perf_counter()
        run()
        sync()
        best = min(best, time.perf_counter() - started)
    return best


def _sized_product(device: torch.device, dtype: torch.dtype) -> tuple[Callable[[], object], int]:
    """A (rows × INNER) @ (INNER × COLUMNS) product in ``dtype`` (int8 with int32 accumulation
    through ``torch._int_mm``) and its multiply-adds, rows doubled until one run takes
    TARGET_SECONDS *and* doubling them again at least 1.5-folds its time: a run dominated by
    fixed costs (thread wake-ups, which on a loaded machine can take a scheduler time slice)
    would otherwise pass for a slow kernel."""
    sync = _synchronize(device)
    generator = torch.Generator().manual_seed(0)
    right = torch.randint(0, 2, (INNER, COLUMNS), generator=generator).to(device, dtype)

    def timed(rows: int) -> tuple[Callable[[], object], float]:
        left = torch.randint(-128, 128, (rows, INNER), generator=generator).to(device, dtype)
        if dtype == torch.int8:

            def run() -> object:
                return torch._int_mm(left, right)
        else:

            def run() -> object:
                return left @ right

        run()  # warm-up: allocation, dispatch, library start-up
        return run, _best_seconds(run, sync, 1)

    rows = FIRST_ROWS
    run, seconds = timed(rows)
    while rows < LAST_ROWS:
        if seconds < TARGET_SECONDS:
            rows *= 2
            run, seconds = timed(rows)
            continue
        larger, larger_seconds = timed(rows * 2)
        if larger_seconds < 1.5 * seconds:  # fixed costs dominate: not a rate yet
            rows, run, seconds = rows * 2, larger, larger_seconds
            continue
        break
    return run, rows * INNER * COLUMNS


_RATES: dict[tuple[str, int], KernelRates] = {}
_RATES_LOCK = threading.Lock()


def measured_rates(device: torch.device) -> KernelRates:
    """The product rates of ``device`` with torch's current thread count, measured on first
    use and kept for the process: each kernel's product sized as :func:`_sized_product`
    says, then ROUNDS rounds timing every kernel once, interleaved, each kernel's best run
    kept (what another process's load disturbs is the slow runs). About 0.1 s, more on a CPU
    whose int8 product is slow."""
    threads = torch.get_num_threads() if device.type == "cpu" else 0
    key = (str(device), threads)
    with _RATES_LOCK:
        rates = _RATES.get(key)
        if rates is None:
            dtypes = {"float64": torch.float64, "float32": torch.float32}
            if device.type == "cpu":
                dtypes["int8"] = torch.int8
            best: dict[str, float] = {}
            with ieee_float32():
                products = {name: _sized_product(device, dtype) for name, dtype in dtypes.items()}
                sync = _synchronize(device)
                for _ in range(ROUNDS):
                    for name, (run, multiply_adds) in products.items():
                        seconds = _best_seconds(run, sync, 1)
                        best[name] = max(best.get(name, 0.0), multiply_adds / seconds)
            rates = KernelRates(
                device=str(device),
                threads=threads,
                float64=best["float64"],
                float32=best["float32"],
                int8=best.get("int8"),
            )
            _RATES[key] = rates
    return rates


def pair_seconds(D: torch.Tensor) -> float:
    """Seconds per same-class pair of the pair kernel on the matrix ``D`` itself: a random
    read of D (its size decides how often the read misses the caches), widened to float64 and
    added at both ends of the pair; the best of three runs over PAIR_SAMPLE random pairs."""
    n = int(D.shape[0])
    generator = torch.Generator().manual_seed(0)
    ends = torch.randint(0, n, (2, PAIR_SAMPLE), generator=generator).to(D.device)
    flat = D.view(-1)
    sums = torch.zeros(n, dtype=torch.float64, device=D.device)

    def run() -> object:
        values = flat.index_select(0, torch.add(ends[1], ends[0], alpha=n)).to(torch.float64)
        sums.scatter_add_(0, ends[0], values)
        return sums.scatter_add_(0, ends[1], values)

    run()
    return _best_seconds(run, _synchronize(D.device), 3) / PAIR_SAMPLE


def forced_kernel() -> str | None:
    """The kernel ``AUDIOBENCH_SCORING_KERNEL`` forces, or None (choose by measurement)."""
    value = os.environ.get(FORCE_VARIABLE, "").strip().lower()
    if not value or value == "auto":
        return None
    if value not in KERNELS:
        raise ValueError(
            f"{FORCE_VARIABLE}={value!r} is not a scoring kernel; choose one of "
            f"{', '.join(KERNELS)} or auto"
        )
    return value


def float32_sum_bound(n_terms: int) -> float:
    """γ_m = m·u / (1 − m·u), u = 2⁻²⁴: the relative error bound of a float32 sum of
    ``n_terms`` non-negative float32 values in any order (products with a 0/1 selection are
    exact), e.g. a float32 matrix product's same-class sum over a class of that size."""
    m = max(int(n_terms) - 1, 0) * FLOAT32_UNIT_ROUNDOFF
    return m / (1.0 - m)


@contextmanager
def ieee_float32() -> Iterator[None]:
    """float32 products in float32 arithmetic, whatever the process allowed (TF32 on CUDA,
    bfloat16 passes on some CPUs): the float32 kernel's error bound assumes it."""
    before = torch.get_float32_matmul_precision()
    if before != "highest":
        torch.set_float32_matmul_precision("highest")
    try:
        yield
    finally:
        if before != "highest":
            torch.set_float32_matmul_precision(before)


@dataclass
class KernelRecord:
    """The kernels a run chose (``purpose/kernel`` → count) and the rates they were chosen by."""

    choices: Counter[str] = field(default_factory=Counter)
    rates: dict[str, KernelRates] = field(default_factory=dict)

    def summary(self) -> dict[str, Any] | None:
        if not self.choices:
            return None
        return {
            "chosen": dict(sorted(self.choices.items())),
            "rates": [rates.as_dict() for _, rates in sorted(self.rates.items())],
        }


_RECORDS: list[KernelRecord] = []
_RECORDS_LOCK = threading.Lock()


@contextmanager
def recording() -> Iterator[KernelRecord]:
    """Collect the kernel choices made inside the block (by any thread) into a record."""
    record = KernelRecord()
    with _RECORDS_LOCK:
        _RECORDS.append(record)
    try:
        yield record
    finally:
        with _RECORDS_LOCK:
            _RECORDS.remove(record)


def note(purpose: str, kernel: str, rates: KernelRates | None = None) -> None:
    """Record that ``purpose`` (e.g. ``avgid-nulls``) ran on ``kernel`` in every open record."""
    with _RECORDS_LOCK:
        for record in _RECORDS:
            record.choices[f"{purpose}/{kernel}"] += 1
            if rates is not None:
                record.rates[f"{rates.device}/{rates.threads}"] = rates
