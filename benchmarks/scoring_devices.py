"""The scoring engine on the CPU and on an accelerator: the same grid, its time on each, and
whether the scores agree.

Runs :func:`audiobench.vocsim.zero_shot_similarity` (the full default grid: 2 PCA settings × 3
distances, P@1, P@5, GSR with permutation baselines and bootstrap margins) on generated
clustered embeddings (``vocsim_metrics.make_embeddings``), once with ``device="cpu"`` and once
with ``--device``, and prints both times and the largest difference per kind of number:
observed values (the engine is exact on every device, so these should be equal up to the
distances' last bit), permutation baselines and p-values (Monte-Carlo estimates whose kernels
may differ by device), bootstrap margins.

    python benchmarks/scoring_devices.py --device cuda --case 3000:10 --case 17041:1366
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from vocsim_metrics import make_embeddings

from audiobench import vocsim
from audiobench.machine import cpu_description
from audiobench.vocsim import kernels


def run(X: np.ndarray, labels: np.ndarray, device: str, perms: int) -> tuple[float, dict]:
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    with kernels.recording() as chosen:
        report = vocsim.zero_shot_similarity(X, labels, n_permutations=perms, device=device)
    seconds = time.perf_counter() - t0
    if perms > 10:
        print(f"   {device} kernels: {chosen.summary()}")
    return seconds, report.configs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--case", action="append", help="N:classes (repeatable)")
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--perms", type=int, default=1000)
    parser.add_argument("--skip-cpu", action="store_true", help="time the device alone")
    args = parser.parse_args()
    print(f"CPU: {cpu_description()}, torch threads {torch.get_num_threads()}")
    if args.device.startswith("cuda"):
        print(f"device: {torch.cuda.get_device_name(args.device)}")
    for case in args.case or ["3000:10"]:
        n, classes = (int(part) for part in case.split(":"))
        X, labels = make_embeddings(n, classes, args.dim, 0, 2.7)
        run(X[:300], labels[:300], args.device, 10)  # warm-up: kernels, calibration
        t_dev, dev = run(X, labels, args.device, args.perms)
        line = f"N={n:,}, {classes:,} classes, dim {args.dim}: {args.device} {t_dev:7.1f} s"
        if args.skip_cpu:
            print(line, flush=True)
            continue
        t_cpu, cpu = run(X, labels, "cpu", args.perms)
        diffs: dict[str, float] = {}
        for config, entries in cpu.items():
            for metric, summary in entries.items():
                other = dev[config][metric]
                for field in ("value", "baseline_mean", "p_value", "margin"):
                    a, b = getattr(summary, field), getattr(other, field)
                    if a is not None and b is not None:
                        diffs[field] = max(diffs.get(field, 0.0), abs(a - b))
        print(f"{line}, cpu {t_cpu:7.1f} s ({t_cpu / t_dev:.1f}x)", flush=True)
        print("   largest |cpu - device|: " + ", ".join(f"{k} {v:.2e}" for k, v in diffs.items()))


if __name__ == "__main__":
    main()
