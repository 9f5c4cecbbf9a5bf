"""What the CPU this process runs on can do: its model, torch's kernel level, int8 dot products.

Printed beside every benchmark figure and recorded in result files, because a speed measured
on one CPU is not a fact about another: the int8 products the scoring engine can use run at
hundreds of GOP/s on CPUs with int8 dot-product instructions and at a few GOP/s without them.
"""

from __future__ import annotations

import functools
import platform
from pathlib import Path

__all__ = ["cpu_capability", "cpu_description", "cpu_flags", "cpu_model", "int8_dot_product"]

#: CPU flags (as /proc/cpuinfo names them) of int8 dot-product instructions: x86 VNNI and AMX,
#: Arm's dot product and int8 matrix multiply.
INT8_DOT_FLAGS: frozenset[str] = frozenset(
    {"avx512_vnni", "avx_vnni", "avx_vnni_int8", "amx_int8", "asimddp", "i8mm"}
)


@functools.cache
def _cpuinfo() -> dict[str, str]:
    """The first processor's fields of /proc/cpuinfo (empty where there is none)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if fields:
                break
            continue
        key, _, value = line.partition(":")
        fields.setdefault(key.strip().lower(), value.strip())
    return fields


def cpu_model() -> str:
    """The CPU's marketing name (``AMD EPYC``, ``Apple M2``...), else the architecture."""
    info = _cpuinfo()
    return (
        info.get("model name")
        or info.get("cpu model")
        or platform.processor()
        or (platform.machine() or "unknown CPU")
    )


def cpu_flags() -> frozenset[str]:
    """The instruction-set flags the kernel reports (x86 ``flags``, Arm ``features``)."""
    info = _cpuinfo()
    return frozenset((info.get("flags") or info.get("features") or "").split())


def int8_dot_product() -> bool | None:
    """Whether the CPU has int8 dot-product instructions (None: unknown on this platform)."""
    flags = cpu_flags()
    if not flags:
        return None
    return bool(flags & INT8_DOT_FLAGS)


def cpu_capability() -> str:
    """The vector instruction level torch's CPU kernels were dispatched to (``AVX2``...)."""
    import torch

    return str(torch.backends.cpu.get_cpu_capability())


def cpu_description() -> str:
    """One line for benchmark output: model, torch's kernel level, int8 dot products, cores."""
    from audiobench.metrics.runtime import available_cores

    dot = {True: "yes", False: "no", None: "unknown"}[int8_dot_product()]
    return (
        f"{cpu_model()}, torch kernels {cpu_capability()}, int8 dot product: {dot}, "
        f"{available_cores()} usable core(s)"
    )
