"""Benchmark of the classification probes at real sizes against a naive scikit-learn grid.

Run from the repository root::

    .venv/bin/python benchmarks/probes.py               # ESC-50-sized (about a minute)
    .venv/bin/python benchmarks/probes.py --high-dim    # 3,000 × 18,304, 2 folds (minutes)
    .venv/bin/python benchmarks/probes.py --quick       # small smoke run

Data: generated embeddings shaped like ESC-50 under a large encoder: 2,000 clips in 50
classes (40 each), 1,280 dimensions, 5 folds. Real embeddings are strongly correlated, which
is what makes logistic regression slow, so the generator draws them with standard deviations
decaying as 1/i along the axes of a random orthonormal basis (covariance eigenvalues spanning
six orders of magnitude) and class means along the 32 leading axes; ``--signal`` sets how
separable the classes are (the default gives a linear probe accuracy near 0.95 and a kNN one
near 0.5). ``--high-dim``: 3,000 clips × 18,304 features (a flattened
128 × 143 log-mel spectrogram), the classes living in a 256-dimensional subspace under
isotropic noise.

Ours: the classification family (``ClassificationTask``, as a run evaluates a task) on the
embeddings, once per probe (linear, kNN, MLP, each with its hyper-parameter selection: C by
5-fold inner cross-validation, k likewise, the MLP's fixed epochs), timed apart and summed.
Naive: what a plain scikit-learn evaluation does on every fold: ``GridSearchCV`` over the same
C grid and the same seeded stratified inner folds of ``make_pipeline(StandardScaler(),
LogisticRegression(max_iter=1000))``, refitted on the fold's training clips, with as many jobs
as usable cores (one BLAS thread each, as ours). Both run in this process, one after the
other; the table shows wall-clock seconds, the accuracy each reaches and the ratio naive / ours
for the linear probe. ``--naive-folds`` measures the naive grid on fewer folds and
``--naive-inner-folds`` on fewer of its 5 inner folds, and extrapolates linearly (marked
``*``); ``--high-dim`` runs 2 folds and measures the naive grid on 1 inner fold by default
(its full grid takes hours there).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script from a checkout
    sys.path.insert(0, str(REPO))

#: The ESC-50-sized problem (linear + kNN + MLP, 5 folds) should finish within this.
TARGET_SECONDS = 60.0


# -- data ----------------------------------------------------------------------------------


def correlated_embeddings(
    n: int, dim: int, n_classes: int, signal: float, seed: int, informative: int = 32
) -> tuple[np.ndarray, np.ndarray]:
    """Embeddings whose covariance eigenvalues decay as 1/i² (standard deviations as 1/i),
    in a random orthonormal basis; class means in the ``informative`` leading directions."""
    rng = np.random.default_rng(seed)
    scales = (1.0 + np.arange(dim)) ** -1.0
    basis = np.linalg.qr(rng.standard_normal((dim, dim)))[0]
    means = rng.standard_normal((n_classes, dim)) * scales * signal
    means[:, informative:] = 0.0
    labels = rng.permutation(np.arange(n) % n_classes)
    latent = means[labels] + rng.standard_normal((n, dim)) * scales
    return (latent @ basis.T + 0.02).astype(np.float32), labels


def wide_embeddings(
    n: int, dim: int, n_classes: int, signal: float, seed: int, rank: int = 256
) -> tuple[np.ndarray, np.ndarray]:
    """Classes in a ``rank``-dimensional subspace of ``dim`` features, isotropic noise."""
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n) % n_classes)
    means = rng.standard_normal((n_classes, rank)) * signal
    latent = (means[labels] + rng.standard_normal((n, rank))).astype(np.float32)
    mixing = rng.standard_normal((rank, dim)).astype(np.float32) / np.sqrt(rank)
    X = latent @ mixing
    X += rng.standard_normal((n, dim), dtype=np.float32)
    return X, labels


def folds_of(n: int, n_folds: int, labels: np.ndarray, seed: int) -> np.ndarray:
    """Stratified fold ids 1..n_folds (every class in every fold, like ESC-50's)."""
    rng = np.random.default_rng(seed + 1)
    folds = np.empty(n, dtype=np.int64)
    for c in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == c))
        folds[members] = np.arange(members.size) % n_folds + 1
    return folds


# -- ours: the classification family ---------------------------------------------------------


def run_family(
    probe: str,
    X: np.ndarray,
    labels: np.ndarray,
    folds: np.ndarray,
    test_fold: int | None,
    progress: bool,
) -> tuple[float, float]:
    """Wall seconds and test accuracy of one probe through the family.

    ``test_fold`` ``None``: the task declares the 5 folds (leave one fold out, accuracy
    averaged over them, as ESC-50). Otherwise one given split: that fold tests, the rest
    trains.
    """
    from audiobench.audio import Clip, FileAudioRef
    from audiobench.encoder import OutputKind
    from audiobench.families import ClassificationTask
    from audiobench.runner import ProgressBar, ProgressHook
    from audiobench.task import DatasetSource, Embedder, TaskMetadata

    clips = [
        Clip(
            f"clip{i:05d}",
            FileAudioRef(Path(f"clip{i:05d}.wav")),
            f"class{int(y):02d}",
            split=None if test_fold is None else ("test" if f == test_fold else "train"),
            metadata={"fold": str(int(f))},
        )
        for i, (y, f) in enumerate(zip(labels, folds, strict=True))
    ]
    by_id = {c.id: X[i] for i, c in enumerate(clips)}

    class Vectors(Embedder):
        def __init__(self) -> None:
            from types import SimpleNamespace

            meta = SimpleNamespace(name="generated", output_kind=OutputKind.VECTOR)
            self.encoder = SimpleNamespace(meta=meta)  # type: ignore[assignment]
            self.durations = {}
            # A progress hook: the family then prints a line per probe fit.
            self.progress = ProgressHook() if progress else None

        def embed(
            self, clips: Sequence[Clip], description: str, *, pooled: bool = True
        ) -> tuple[list[Clip], list[Any]]:
            return list(clips), [by_id[c.id] for c in clips]

        def track(self, description: str, total: int, unit: str) -> ProgressBar:
            return ProgressBar(total)

    meta = TaskMetadata(
        name=f"Bench-{probe}",
        description="generated embeddings",
        dataset=DatasetSource(kind="synthetic", path="benchmark"),
        main_score=f"{probe}:accuracy",
    )
    fold_names = tuple(str(f) for f in range(1, 6)) if test_fold is None else ()
    options = ClassificationTask.Options(probes=(), folds=fold_names)
    task = type(f"Bench{probe}", (ClassificationTask,), {"metadata": meta, "options": options})
    start = time.perf_counter()
    result = task().evaluate(Vectors(), clips)
    seconds = time.perf_counter() - start
    return seconds, float(result.main_score or 0.0)


# -- naive: scikit-learn's grid search -------------------------------------------------------


def run_naive(
    X: np.ndarray,
    labels: np.ndarray,
    folds: np.ndarray,
    fold_ids: Sequence[int],
    jobs: int,
    inner_folds: int = 5,
) -> tuple[float, float]:
    """Wall seconds and mean test accuracy of the plain scikit-learn grid on ``fold_ids``.

    ``inner_folds`` below 5 runs the grid on that many of the 5 inner folds only and scales
    its time by ``5 / inner_folds`` (the refit is timed as it is).
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from threadpoolctl import threadpool_limits

    from audiobench.probes.linear import DEFAULT_C_GRID

    accuracies = []
    seconds = 0.0
    for fold in fold_ids:
        train, test = folds != fold, folds == fold
        inner = list(
            StratifiedKFold(5, shuffle=True, random_state=0).split(X[train], labels[train])
        )
        pipeline = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
        search = GridSearchCV(
            pipeline,
            {"logisticregression__C": list(DEFAULT_C_GRID)},
            cv=inner[:inner_folds],
            n_jobs=jobs,
            refit=False,
        )
        with threadpool_limits(limits=1, user_api="blas"):
            start = time.perf_counter()
            search.fit(X[train], labels[train])
            seconds += (time.perf_counter() - start) * 5 / inner_folds
            start = time.perf_counter()
            pipeline.set_params(**search.best_params_).fit(X[train], labels[train])
            seconds += time.perf_counter() - start
            accuracies.append(float(pipeline.score(X[test], labels[test])))
    return seconds, float(np.mean(accuracies))


# -- main ------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--high-dim", action="store_true", help="3,000 × 18,304 features")
    parser.add_argument("--quick", action="store_true", help="a small smoke run")
    parser.add_argument("--n", type=int, help="clips (default 2,000; --high-dim 3,000)")
    parser.add_argument("--dim", type=int, help="features (default 1,280; --high-dim 18,304)")
    parser.add_argument("--classes", type=int, default=50)
    parser.add_argument("--folds", type=int, help="folds run (default 5; --high-dim 2)")
    parser.add_argument("--signal", type=float, help="class separation (default 1.0)")
    parser.add_argument(
        "--probes", default="linear,knn,mlp", help="comma-separated probes (default all three)"
    )
    parser.add_argument(
        "--naive-folds", type=int, help="folds the naive grid runs (default all; extrapolated)"
    )
    parser.add_argument(
        "--naive-inner-folds",
        type=int,
        help="inner folds the naive grid runs (default 5; --high-dim 1; extrapolated)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--verbose", action="store_true", help="print a line per probe fit")
    args = parser.parse_args(argv)

    import sklearn.linear_model  # noqa: F401 - imports are not what is timed
    import torch  # noqa: F401

    import audiobench.probes  # noqa: F401
    from audiobench.machine import cpu_description
    from audiobench.metrics.runtime import available_cores

    n = args.n or (300 if args.quick else 3000 if args.high_dim else 2000)
    dim = args.dim or (256 if args.quick else 18304 if args.high_dim else 1280)
    n_classes = min(args.classes, 10) if args.quick else args.classes
    run_folds = args.folds or (2 if args.high_dim else 5)
    signal = args.signal if args.signal is not None else (0.25 if args.high_dim else 1.0)
    probes = [p.strip() for p in args.probes.split(",") if p.strip()]
    cores = available_cores()

    t0 = time.perf_counter()
    if args.high_dim:
        X, labels = wide_embeddings(n, dim, n_classes, signal, args.seed)
    else:
        X, labels = correlated_embeddings(n, dim, n_classes, signal, args.seed)
    folds = folds_of(n, 5, labels, args.seed)
    generated = time.perf_counter() - t0
    print(
        f"data: {n} clips × {dim} dims, {n_classes} classes, 5 folds ({run_folds} run), "
        f"generated in {generated:.1f} s; CPU: {cpu_description()}",
        flush=True,
    )

    fold_ids = list(range(1, run_folds + 1))
    ours: dict[str, tuple[float, float]] = {}
    for probe in probes:
        if run_folds == 5:
            seconds, accuracy = run_family(probe, X, labels, folds, None, args.verbose)
        else:  # each run fold tests once, trained on the four others
            runs = [run_family(probe, X, labels, folds, f, args.verbose) for f in fold_ids]
            seconds = sum(s for s, _ in runs)
            accuracy = float(np.mean([a for _, a in runs]))
        ours[probe] = (seconds, accuracy)
        print(f"ours  {probe:<7} {seconds:8.1f} s   accuracy {accuracy:.4f}", flush=True)
    total = sum(s for s, _ in ours.values())

    naive_folds = min(args.naive_folds or run_folds, run_folds)
    inner_folds = min(args.naive_inner_folds or (1 if args.high_dim else 5), 5)
    naive_seconds, naive_accuracy = run_naive(
        X, labels, folds, fold_ids[:naive_folds], cores, inner_folds
    )
    extrapolated = naive_folds < run_folds or inner_folds < 5
    naive_seconds *= run_folds / naive_folds
    mark = "*" if extrapolated else ""
    print(
        f"naive linear {naive_seconds:8.1f} s{mark}  accuracy {naive_accuracy:.4f} "
        f"(GridSearchCV, {cores} jobs)",
        flush=True,
    )
    print()
    print(f"{'':<22}{'seconds':>10}{'accuracy':>10}")
    for probe, (seconds, accuracy) in ours.items():
        print(f"{'ours ' + probe:<22}{seconds:>10.1f}{accuracy:>10.4f}")
    print(f"{'ours total':<22}{total:>10.1f}")
    print(f"{'naive linear':<22}{naive_seconds:>9.1f}{mark or ' '}{naive_accuracy:>10.4f}")
    if "linear" in ours:
        print(f"linear speed-up (naive / ours): {naive_seconds / ours['linear'][0]:.1f}x")
    if not args.high_dim and not args.quick and run_folds == 5 and n == 2000:
        verdict = "within" if total <= TARGET_SECONDS else "OVER"
        print(f"ESC-50-sized total {total:.1f} s: {verdict} the {TARGET_SECONDS:.0f} s target")
    if extrapolated:
        print(
            f"* naive measured on {naive_folds} of {run_folds} folds and {inner_folds} of 5 "
            "inner folds, extrapolated"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
