"""Benchmark of the VocSim metrics engine against a naive implementation.

Run from the repository root::

    .venv/bin/python benchmarks/vocsim_metrics.py            # full size (several minutes)
    .venv/bin/python benchmarks/vocsim_metrics.py --quick    # small smoke run

Data: clustered Gaussian embeddings the size of VocSim's largest subset (HU2: 17,041 clips in
1,366 classes), class sizes skewed (at least 6 clips per class, log-normal weights), at
``--dim`` (100, what PCA-100 gives) for the per-stage measurements and at ``--raw-dim`` (512)
for the full grid, whose raw configurations use the embeddings as they are and whose PCA-100
configurations reduce them first.

Every stage runs in a fresh subprocess (this script with ``--stage``) so that its peak resident
memory (``audiobench.efficiency.peak_rss_bytes``) is its own: the table shows the process peak
and, in brackets, how much the timed part raised it above what the untimed set-up (data,
distance matrix) had reached.

The naive implementation is what a straightforward NumPy/SciPy port of the protocol does:
``scipy.spatial.distance.cdist`` (float64) for distances, a full ``argsort`` of every row for
P@k, a Python loop over clips for GSR, every permutation recomputed from scratch, a Python loop
for the bootstrap. Its permutations are measured on ``--naive-perms`` permutations and
extrapolated; its full grid is extrapolated from the measured stages (raw-dimension distance
cost scaled linearly with the dimension). Extrapolated figures are marked ``*``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script from a checkout
    sys.path.insert(0, str(REPO))

TARGET_GRID_SECONDS = 60.0
TARGET_PEAK_GB = 2.5
TARGET_EVALUATION_SPEEDUP = 5.0


# -- data ----------------------------------------------------------------------------------


def make_embeddings(
    n: int, n_classes: int, dim: int, seed: int, spread: float
) -> tuple[np.ndarray, np.ndarray]:
    """Clustered Gaussian embeddings (float32) and integer labels with skewed class sizes."""
    rng = np.random.default_rng(seed)
    minimum = min(6, n // n_classes)
    weights = rng.lognormal(0.0, 1.0, n_classes)
    sizes = minimum + rng.multinomial(n - minimum * n_classes, weights / weights.sum())
    labels = rng.permutation(np.repeat(np.arange(n_classes), sizes))
    centres = rng.normal(size=(n_classes, dim))
    X = centres[labels] + spread * rng.normal(size=(n, dim))
    return X.astype(np.float32), labels


def peak_rss_gb() -> float:
    """This process's peak resident set size so far, in GiB (portable, through psutil)."""
    from audiobench.efficiency import peak_rss_bytes

    return peak_rss_bytes() / 2**30


# -- naive implementation --------------------------------------------------------------------


def naive_distances(X: np.ndarray, metric: str) -> np.ndarray:
    from scipy.spatial.distance import cdist
    from scipy.stats import rankdata

    X = X.astype(np.float64)
    if metric == "cosine":
        D = np.clip(cdist(X, X, "cosine") / 2, 0, 1)
    elif metric == "euclidean":
        D = cdist(X, X, "euclidean")
    else:
        ranks = rankdata(X, axis=1)
        D = np.clip(cdist(ranks, ranks, "correlation") / 2, 0, 1)
    np.fill_diagonal(D, 0.0)
    return D


def naive_neighbours(D: np.ndarray, k: int) -> np.ndarray:
    """The k nearest other clips of every clip via a full (stable) argsort of every row."""
    masked = D.copy()
    np.fill_diagonal(masked, np.inf)
    return np.argsort(masked, axis=1, kind="stable")[:, :k]


def naive_precision(D: np.ndarray, labels: np.ndarray, k: int) -> np.ndarray:
    """Per-query precision@k."""
    return (labels[naive_neighbours(D, k)] == labels[:, None]).mean(axis=1)


def naive_gsr(D: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per-clip GSR scores s_i, one clip at a time."""
    scores = []
    for i in range(D.shape[0]):
        row = D[i].astype(np.float64)
        same = labels == labels[i]
        same[i] = False
        avg_id = row[same].mean()
        nid = row[labels != labels[i]].min()
        denominator = nid + avg_id + 1e-9
        if np.isfinite(denominator) and denominator > 1e-9:
            scores.append((nid - avg_id) / denominator)
    return np.array(scores)


def naive_evaluation(D: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """P@1, P@5 (one shared argsort) and GSR, from scratch."""
    hits = labels[naive_neighbours(D, 5)] == labels[:, None]
    return {
        "p@1": float(hits[:, :1].mean()),
        "p@5": float(hits.mean()),
        "gsr": float((naive_gsr(D, labels).mean() + 1) / 2),
    }


def naive_bootstrap_margin(values: np.ndarray, n_bootstrap: int, rng: np.random.Generator) -> float:
    means = [rng.choice(values, size=values.size, replace=True).mean() for _ in range(n_bootstrap)]
    low, high = np.percentile(means, [2.5, 97.5])
    return float(high - low) / 2


# -- stages (run in a child process) ----------------------------------------------------------


def _distance_matrix(X: np.ndarray, metric: str = "cosine"):
    import torch

    from audiobench.vocsim.distances import fill_distance_matrix

    D = torch.empty((X.shape[0], X.shape[0]), dtype=torch.float32)
    return fill_distance_matrix(X.astype(np.float64), metric, D)


def _engine(D, labels: np.ndarray):
    import torch

    from audiobench.metrics.labels import encode_labels, filter_classes
    from audiobench.vocsim.relabelling import RelabellingEvaluator

    encoded = encode_labels(labels, labels.shape[0])
    kept = filter_classes(encoded, 2)
    members, codes, sizes = kept.tensors(labels.shape[0], D.device)
    return RelabellingEvaluator(
        D,
        precision_codes=torch.from_numpy(encoded.codes),
        ks=(1, 5),
        gsr_members=members,
        gsr_codes=codes,
        gsr_sizes=sizes,
    )


def _observed(engine) -> dict[str, np.ndarray]:
    import torch

    from audiobench.vocsim.separation import mean_separation

    hits = engine.precision_hits(torch.arange(engine.n))
    scores, evaluated = engine.gsr_scores(torch.arange(engine.n_gsr)[None])
    mean_separation(scores, evaluated)
    return {
        "p@1": hits[1].numpy() / 1.0,
        "p@5": hits[5].numpy() / 5.0,
        "gsr": scores[0][evaluated[0]].numpy(),
    }


def run_stage(stage: str, args: argparse.Namespace) -> dict[str, Any]:
    """Set up (untimed), then time one stage; returns wall time and memory."""
    import scipy.stats  # noqa: F401  (the bootstrap's; importing it takes ~1.2 s, once a process)
    import torch

    from audiobench import vocsim
    from audiobench.vocsim import kernels

    X, labels = make_embeddings(args.n, args.classes, args.dim, args.seed, args.spread)
    work: Callable[[], Any]
    info: dict[str, Any] = {}
    side, _, name = stage.partition(":")
    if name.startswith("distance-"):
        metric = name.removeprefix("distance-")
        if side == "fast":

            def work() -> Any:
                return _distance_matrix(X, metric)
        else:

            def work() -> Any:
                return naive_distances(X, metric)

    elif name == "pca":
        X_raw, _ = make_embeddings(args.n, args.classes, args.raw_dim, args.seed, args.raw_spread)
        if side == "fast":

            def work() -> Any:
                return vocsim.pca_reduce(X_raw, 100, seed=0)
        else:
            from sklearn.decomposition import PCA

            def work() -> Any:
                return PCA(100, svd_solver="full").fit_transform(X_raw.astype(np.float64))

    elif name == "grid":
        X_raw, labels = make_embeddings(
            args.n, args.classes, args.raw_dim, args.seed, args.raw_spread
        )

        def work() -> Any:
            with kernels.recording() as chosen:
                report = vocsim.zero_shot_similarity(
                    X_raw,
                    labels,
                    n_permutations=args.perms,
                    n_bootstrap=args.boots,
                    device=args.device,
                )
            info["kernels"] = chosen.summary()
            info["seconds"] = dict(report.seconds)
            info["scores"] = {
                config: {
                    metric: [s.value, s.baseline_mean, s.p_value, s.margin]
                    for metric, s in entries.items()
                }
                for config, entries in report.configs.items()
            }
            return report

    else:
        D = _distance_matrix(X)
        D_numpy = D.numpy()
        if side == "fast" and name in ("p@1", "p@5"):
            k = int(name[2:])

            def work() -> Any:
                return vocsim.precision_at_k(D, labels, k)
        elif side == "fast" and name == "gsr":

            def work() -> Any:
                return vocsim.gsr(D, labels)
        elif side == "fast" and name == "evaluation":

            def work() -> Any:
                return _observed(_engine(D, labels))
        elif side == "fast" and name == "permutations":
            from audiobench.vocsim.calibration import label_permutation

            engine = _engine(D, labels)

            def work() -> Any:
                return engine.null_values(
                    args.perms, lambda i: (label_permutation(args.n, 0, 0, i),) * 2
                )
        elif side == "fast" and name == "bootstrap":
            from audiobench.vocsim.calibration import bootstrap_margin

            per_clip = _observed(_engine(D, labels))

            def work() -> Any:
                return [
                    bootstrap_margin(values, args.boots, (0, 2, index))
                    for index, values in enumerate(per_clip.values())
                ]
        elif side == "naive" and name in ("p@1", "p@5"):
            k = int(name[2:])

            def work() -> Any:
                return naive_precision(D_numpy, labels, k).mean()
        elif side == "naive" and name == "gsr":

            def work() -> Any:
                return naive_gsr(D_numpy, labels)
        elif side == "naive" and name == "permutations":
            rng = np.random.default_rng(0)
            count = args.naive_perms

            def work() -> Any:
                return [naive_evaluation(D_numpy, rng.permutation(labels)) for _ in range(count)]

            info["measured"] = count
        elif side == "naive" and name == "bootstrap":
            per_clip = _observed(_engine(D, labels))  # the same per-clip scores, untimed
            rng = np.random.default_rng(0)

            def work() -> Any:
                return [naive_bootstrap_margin(v, args.boots, rng) for v in per_clip.values()]
        else:
            raise ValueError(f"unknown stage {stage!r}")
    before = peak_rss_gb()
    started = time.perf_counter()
    work()
    wall = time.perf_counter() - started
    peak = peak_rss_gb()
    return {
        "wall": wall,
        "peak_gb": peak,
        "delta_gb": max(0.0, peak - before),
        "threads": torch.get_num_threads(),
        **info,
    }


# -- driver ----------------------------------------------------------------------------------


def _child(stage: str, args: argparse.Namespace) -> dict[str, Any]:
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--stage",
        stage,
        *(f"--{key.replace('_', '-')}={value}" for key, value in _size_options(args).items()),
    ]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=REPO)
    if done.returncode != 0:
        raise RuntimeError(f"stage {stage} failed:\n{done.stdout}\n{done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    print(
        f"  {stage:<26} {result['wall']:8.2f} s  (process {time.perf_counter() - started:6.1f} s)",
        flush=True,
    )
    return result


def _size_options(args: argparse.Namespace) -> dict[str, Any]:
    keys = (
        "n",
        "classes",
        "dim",
        "raw_dim",
        "perms",
        "boots",
        "naive_perms",
        "seed",
        "spread",
        "raw_spread",
        "device",
    )
    return {key: getattr(args, key) for key in keys}


def _memory(result: dict[str, Any] | None) -> str:
    if result is None:
        return "-"
    return f"{result['peak_gb']:.2f} (+{result['delta_gb']:.2f})"


def _ratio(naive: float | None, fast: float | None) -> str:
    if naive is None or fast is None or fast <= 0:
        return "-"
    return f"{naive / fast:,.1f}x"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=17041, help="clips (default: HU2's 17,041)")
    parser.add_argument("--classes", type=int, default=1366, help="classes (default 1,366)")
    parser.add_argument("--dim", type=int, default=100, help="dimension for per-stage runs")
    parser.add_argument("--raw-dim", type=int, default=512, help="raw dimension for the grid")
    parser.add_argument("--perms", type=int, default=1000, help="label permutations")
    parser.add_argument("--boots", type=int, default=300, help="bootstrap resamples")
    parser.add_argument("--naive-perms", type=int, default=1, help="naive permutations measured")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--spread", type=float, default=1.6, help="within-class sd (dim)")
    parser.add_argument("--raw-spread", type=float, default=2.7, help="within-class sd (raw-dim)")
    parser.add_argument("--quick", action="store_true", help="small smoke-test sizes")
    parser.add_argument("--skip-naive", action="store_true", help="only time the engine")
    parser.add_argument(
        "--grid-only", action="store_true", help="only the full default grid (implies --skip-naive)"
    )
    parser.add_argument("--device", default="cpu", help="torch device of the full grid (cuda)")
    parser.add_argument(
        "--kernel",
        choices=("auto", "int8", "float64", "float32", "pairs"),
        default="auto",
        help="force the engine's AvgID kernel (AUDIOBENCH_SCORING_KERNEL); auto: measured",
    )
    parser.add_argument("--stage", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.n, args.classes, args.raw_dim = 2000, 160, 256
        args.perms, args.boots = 200, 100
    if args.stage:
        print(json.dumps(run_stage(args.stage, args)))
        return
    args.skip_naive = args.skip_naive or args.grid_only
    os.environ["AUDIOBENCH_SCORING_KERNEL"] = args.kernel  # inherited by the stage processes

    import torch

    from audiobench.machine import cpu_description
    from audiobench.metrics.runtime import available_cores

    print(
        f"VocSim metrics benchmark: N={args.n:,} clips, {args.classes:,} classes, dim {args.dim} "
        f"(grid: raw dim {args.raw_dim} + PCA 100), {args.perms} permutations, "
        f"{args.boots} bootstrap resamples"
    )
    print(
        f"python {platform.python_version()}, torch {torch.__version__}, "
        f"{available_cores()} usable cores, torch threads {torch.get_num_threads()}"
    )
    print(f"CPU: {cpu_description()}")
    if args.device != "cpu":
        print(f"grid device: {args.device} ({torch.cuda.get_device_name(args.device)})")
    print("running stages (each in its own process):", flush=True)
    rows: list[tuple[str, str, str]] = [
        ("distance: cosine", "fast:distance-cosine", "naive:distance-cosine"),
        ("distance: euclidean", "fast:distance-euclidean", "naive:distance-euclidean"),
        ("distance: spearman", "fast:distance-spearman", "naive:distance-spearman"),
        ("PCA 512 -> 100", "fast:pca", "naive:pca"),
        ("P@1", "fast:p@1", "naive:p@1"),
        ("P@5", "fast:p@5", "naive:p@5"),
        ("GSR", "fast:gsr", "naive:gsr"),
        ("one evaluation (P@1+P@5+GSR)", "fast:evaluation", ""),
        (f"{args.perms} permutations", "fast:permutations", "naive:permutations"),
        (f"{args.boots} bootstrap resamples x3", "fast:bootstrap", "naive:bootstrap"),
        ("full default grid", "fast:grid", ""),
    ]
    if args.grid_only:
        rows = rows[-1:]
    results: dict[str, dict[str, Any]] = {}
    for _, fast, naive in rows:
        for stage in (fast, naive):
            if stage and not (args.skip_naive and stage.startswith("naive")):
                results[stage] = _child(stage, args)

    # Derived naive figures.
    naive_wall: dict[str, float | None] = {}
    extrapolated: set[str] = set()
    get = results.get
    if not args.skip_naive:
        for stage in results:
            if stage.startswith("naive:"):
                naive_wall[stage] = results[stage]["wall"]
        # A naive evaluation sorts once for both P@k (the costlier of the two P@k stages).
        evaluation = max(results["naive:p@1"]["wall"], results["naive:p@5"]["wall"])
        evaluation += results["naive:gsr"]["wall"]
        naive_wall["evaluation"] = evaluation
        per_permutation = (
            results["naive:permutations"]["wall"] / results["naive:permutations"]["measured"]
        )
        naive_wall["naive:permutations"] = per_permutation * args.perms
        extrapolated.add("naive:permutations")
        distances = sum(
            results[f"naive:distance-{m}"]["wall"] for m in ("cosine", "euclidean", "spearman")
        )
        per_configuration_rest = (
            evaluation + per_permutation * args.perms + results["naive:bootstrap"]["wall"]
        )
        naive_wall["grid"] = (
            results["naive:pca"]["wall"]
            + distances * (1 + args.raw_dim / args.dim)  # raw configurations cost ∝ dimension
            + 6 * per_configuration_rest
        )
        extrapolated.add("grid")

    print()
    header = (
        f"{'stage':<34}{'fast s':>9}{'fast peak GB':>16}"
        f"{'naive s':>12}{'naive peak GB':>16}{'fast vs naive':>15}"
    )
    print(header)
    print("-" * len(header))
    for label, fast, naive in rows:
        fast_result = get(fast)
        key = naive or ("evaluation" if fast == "fast:evaluation" else "grid")
        naive_seconds = naive_wall.get(key)
        marker = "*" if key in extrapolated else " "
        naive_text = "-" if naive_seconds is None else f"{naive_seconds:,.2f}{marker}"
        naive_memory = (
            _memory(get(naive)) if naive else ("see rows above" if naive_seconds else "-")
        )
        print(
            f"{label:<34}{fast_result['wall']:>9.2f}{_memory(fast_result):>16}"
            f"{naive_text:>12}{naive_memory:>16}{_ratio(naive_seconds, fast_result['wall']):>15}"
        )
    print("peak GB = the stage's process peak RSS (+ rise during the timed part above its set-up).")
    print("* extrapolated: naive permutations from", args.naive_perms, "measured permutation(s);")
    print("  naive grid = naive PCA + 3 distances at dim", args.dim, "and at raw dim (scaled by")
    print(
        f"  {args.raw_dim}/{args.dim}) + 6 x (naive evaluation + {args.perms} permutations"
        " + bootstrap)."
    )
    print("fast 'one evaluation' = neighbour lists + same-class pairs + observed P@1, P@5, GSR,")
    print("  as the grid computes it; naive = one full argsort (max of the naive P@k rows)")
    print("  + the naive GSR loop. A naive permutation repeats a naive evaluation.")

    grid = results["fast:grid"]
    print(
        "\nfull grid, per configuration (s):", {k: round(v, 2) for k, v in grid["seconds"].items()}
    )
    chosen = grid.get("kernels") or {}
    print(f"kernels chosen ({args.kernel}): {chosen.get('chosen')}")
    for rates in chosen.get("rates", []):
        print(f"  measured rates (G multiply-adds/s): {rates}")
    print(
        f"{'configuration':<18}{'P@1':>8}{'P@5':>8}{'GSR':>8}"
        f"{'GSR base':>10}{'GSR p':>9}{'GSR ±':>8}"
    )
    for config, entries in grid["scores"].items():
        p1, p5, g = entries["p@1"], entries["p@5"], entries["gsr"]
        print(
            f"{config:<18}{p1[0]:>8.4f}{p5[0]:>8.4f}{g[0]:>8.4f}{g[1]:>10.4f}{g[2]:>9.4f}{g[3]:>8.4f}"
        )

    print("\ntargets:")
    fast_peak = max(r["peak_gb"] for s, r in results.items() if s.startswith("fast:"))
    checks = [
        (
            f"full grid + {args.perms} permutations < {TARGET_GRID_SECONDS:.0f} s",
            grid["wall"] < TARGET_GRID_SECONDS,
            f"{grid['wall']:.1f} s",
        ),
        (
            f"peak RSS < {TARGET_PEAK_GB} GB (grid / any fast stage)",
            max(grid["peak_gb"], fast_peak) < TARGET_PEAK_GB,
            f"{grid['peak_gb']:.2f} / {fast_peak:.2f} GB",
        ),
    ]
    if "evaluation" in naive_wall:
        speedup = naive_wall["evaluation"] / results["fast:evaluation"]["wall"]
        checks.append(
            (
                f"one evaluation >= {TARGET_EVALUATION_SPEEDUP:.0f}x faster than naive",
                speedup >= TARGET_EVALUATION_SPEEDUP,
                f"{speedup:.1f}x",
            )
        )
    for text, met, value in checks:
        print(f"  [{'met' if met else 'NOT MET'}] {text}: {value}")
    if args.quick:
        print("  (--quick: targets are defined for the full size)")


if __name__ == "__main__":
    main()
