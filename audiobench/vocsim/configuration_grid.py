"""The zero-shot similarity grid: every (PCA, distance) configuration of a subset, calibrated.

:func:`zero_shot_similarity` is the entry point a VocSim-style task calls with one subset's
embeddings and labels. For each PCA setting (None = raw embeddings) and each distance it builds
the distance matrix, evaluates the requested metrics, and for P@k and GSR also the permutation
baseline and the bootstrap margin (:mod:`audiobench.vocsim.calibration`), using the
permutation engine (:mod:`audiobench.vocsim.relabelling`) so that 1000 permutations cost a
small multiple of one evaluation.

Memory: one N × N float32 matrix, allocated once and refilled for every configuration, plus row
blocks. Distances are computed among labelled clips only (unlabelled clips take part in PCA,
which is fitted on all clips of the subset, but in no metric).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Iterable, Sequence

import numpy as np
import torch

from audiobench.metrics.labels import encode_labels, filter_classes, require_two_classes
from audiobench.metrics.runtime import limited_cpu_threads, resolve_device
from audiobench.metrics.validation import check_ks, clip_names, validate_embeddings
from audiobench.vocsim.calibration import bootstrap_margin, label_permutation, summarize_null
from audiobench.vocsim.class_statistics import class_statistics
from audiobench.vocsim.distances import (
    DISTANCE_METRICS,
    ClipDistances,
    centred_gram,
    check_metric,
    gram_route,
)
from audiobench.vocsim.pca import pca_reduce
from audiobench.vocsim.purity import clustering_purity_details
from audiobench.vocsim.relabelling import RelabellingEvaluator
from audiobench.vocsim.separation import (
    class_means,
    cs_from_means,
    cscf_from_means,
    csr_from_statistics,
    mean_separation,
)
from audiobench.vocsim.silhouettes import silhouette_of_members
from audiobench.vocsim.similarity_report import (
    Configuration,
    DatasetCounts,
    MetricSummary,
    ZeroShotSimilarityReport,
)

#: Metric groups ``zero_shot_similarity`` accepts in ``metrics``. "precision" yields one
#: ``p@k`` entry per k; the others one entry each.
METRIC_GROUPS: tuple[str, ...] = ("precision", "gsr", "csr", "cs", "cscf", "silhouette", "purity")

#: ``progress(description, advance, total)``: called after each unit of work with a short
#: description of what just finished, how many units it was, and the (constant) total number of
#: units; the advances sum to ``total`` by the end. Units are: one per PCA fit; per
#: configuration one for the distances, one for the observed metrics, one per permutation, one
#: for the bootstrap, one for the extra metrics. Enough to drive e.g. ``rich.progress``:
#: ``lambda d, a, t: bar.update(task, advance=a, total=t, description=d)``.
ProgressHook = Callable[[str, int, int], None]


def configuration_name(pca_components: int | None, distance: str) -> str:
    """``"raw/cosine"`` without PCA, ``"pca100/spearman"`` with 100 components."""
    return f"{'raw' if pca_components is None else f'pca{pca_components}'}/{distance}"


def _unique(values: Iterable[object], what: str) -> list[object]:
    items = list(values)
    if len(set(items)) != len(items):
        raise ValueError(f"{what} contains duplicates: {items}")
    if not items:
        raise ValueError(f"{what} must not be empty")
    return items


def _check_count(value: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise ValueError(f"{what} must be a non-negative integer, got {value!r}")
    return int(value)


class _Progress:
    """Forwards units of work to the caller's hook (or nowhere)."""

    def __init__(self, hook: ProgressHook | None, total: int) -> None:
        self.hook, self.total = hook, total

    def __call__(self, description: str, advance: int = 1) -> None:
        if self.hook is not None and advance > 0:
            self.hook(description, advance, self.total)


def zero_shot_similarity(
    embeddings: object,
    labels: Iterable[Hashable | None],
    *,
    ids: Sequence[object] | None = None,
    distances: Sequence[str] = DISTANCE_METRICS,
    pca: Sequence[int | None] = (None, 100),
    ks: Sequence[int] = (1, 5),
    metrics: Sequence[str] = ("precision", "gsr"),
    n_permutations: int = 1000,
    n_bootstrap: int = 300,
    min_class_size: int = 2,
    seed: int = 0,
    device: str | torch.device | None = None,
    progress: ProgressHook | None = None,
) -> ZeroShotSimilarityReport:
    """Evaluate one subset's embeddings on the (PCA × distance) grid of the VocSim protocol.

    Parameters
    ----------
    embeddings:
        (N, dim) array-like or tensor, one row per clip, finite.
    labels:
        One label per clip, any hashable; ``None`` (or NaN) for unlabelled clips.
    ids:
        Optional clip ids, used to name offending clips in errors.
    distances:
        Subset of ``("cosine", "euclidean", "spearman")``.
    pca:
        PCA settings: None for the raw embeddings, an int for that many components (fitted,
        label-free, on all N clips; seeded by ``seed`` when a randomized solver is needed).
    ks:
        Neighbour counts of the P@k metrics.
    metrics:
        Metric groups from :data:`METRIC_GROUPS`. Only "precision" and "gsr" get permutation
        baselines and bootstrap margins (as the protocol specifies); the others report values.
        "purity" needs the optional ``umap-learn`` dependency.
    n_permutations, n_bootstrap:
        Label permutations for the chance baseline and clip resamples for the margin
        (0 disables either).
    min_class_size:
        Classes with fewer labelled clips are excluded from the separation metrics and counted.
    seed:
        Seed of permutations, resamples, PCA's randomized solver and the silhouette sample. The
        same permutations are used for every configuration.
    device:
        torch device (default CPU); CUDA works when available.
    progress:
        Optional :data:`ProgressHook` ``(description, advance, total) -> None``.

    Returns
    -------
    ZeroShotSimilarityReport
        Scores per configuration (``"raw/cosine"``, ``"pca100/spearman"``, ...) and metric.

    Raises
    ------
    InvalidEmbeddingsError
        NaN/Inf rows; zero vectors under cosine or constant vectors under spearman (also after
        PCA). The error names the clips.
    InsufficientClassesError
        Fewer than two classes with at least ``min_class_size`` clips.
    ValueError
        Other invalid arguments.
    """
    distance_list = [check_metric(d) for d in _unique(distances, "distances")]  # type: ignore[arg-type]
    pca_list: list[int | None] = []
    for setting in _unique(pca, "pca"):
        if setting is not None and (
            isinstance(setting, bool) or not isinstance(setting, int | np.integer) or setting < 1
        ):
            raise ValueError(f"pca settings must be None or positive integers, got {setting!r}")
        pca_list.append(None if setting is None else int(setting))
    metric_list = [str(m) for m in _unique(metrics, "metrics")]
    unknown = sorted(set(metric_list) - set(METRIC_GROUPS))
    if unknown:
        raise ValueError(f"unknown metrics {unknown}; expected some of {METRIC_GROUPS}")
    n_permutations = _check_count(n_permutations, "n_permutations")
    n_bootstrap = _check_count(n_bootstrap, "n_bootstrap")
    if not isinstance(seed, int | np.integer):
        raise ValueError(f"seed must be an integer, got {seed!r}")

    X, names = validate_embeddings(embeddings, ids)
    encoded = encode_labels(labels, X.shape[0])
    labelled = encoded.labelled
    n_labelled = int(labelled.shape[0])
    kept = filter_classes(encoded, min_class_size)
    require_two_classes(kept, min_class_size)
    with_precision = "precision" in metric_list
    with_gsr = "gsr" in metric_list
    k_values = check_ks(_unique(ks, "ks"), n_labelled) if with_precision else ()  # type: ignore[arg-type]
    extra_metrics = [m for m in metric_list if m not in ("precision", "gsr")]
    counts = DatasetCounts(
        n_clips=int(X.shape[0]),
        n_labelled=n_labelled,
        n_classes=len(encoded.classes),
        n_evaluated_classes=kept.n_classes,
        n_excluded_classes=kept.n_excluded_classes,
        n_excluded_clips=kept.n_excluded_clips,
        n_evaluated=int(kept.members.shape[0]),
    )
    settings = {
        "distances": list(distance_list),
        "pca": list(pca_list),
        "ks": list(k_values),
        "metrics": list(metric_list),
        "n_permutations": n_permutations,
        "n_bootstrap": n_bootstrap,
        "min_class_size": int(min_class_size),
        "seed": int(seed),
    }
    calibrated = with_precision or with_gsr
    units_per_configuration = (
        1
        + int(calibrated)
        + (n_permutations if calibrated else 0)
        + int(calibrated and n_bootstrap > 0)
        + int(bool(extra_metrics))
    )
    tick = _Progress(
        progress,
        sum(p is not None for p in pca_list)
        + units_per_configuration * len(pca_list) * len(distance_list),
    )

    # Everything below works on the labelled clips; GSR's clips are given as positions among them.
    labelled_names = clip_names(labelled, names)
    gsr_positions = np.searchsorted(labelled, kept.members)
    configurations: list[Configuration] = []
    scores: dict[str, dict[str, MetricSummary]] = {}
    seconds: dict[str, float] = {}
    target = resolve_device(device)
    draw = SharedPermutations(int(seed))
    with limited_cpu_threads():
        matrix = torch.empty((n_labelled, n_labelled), dtype=torch.float32, device=target)
        gsr_members = (
            None
            if kept.members.shape[0] == n_labelled
            else torch.from_numpy(gsr_positions).to(target)
        )
        gsr_codes = torch.from_numpy(kept.codes).to(target)
        gsr_sizes = torch.from_numpy(kept.class_sizes).to(target)
        precision_codes = torch.from_numpy(encoded.codes[labelled]).to(target)
        # Clips far wider than they are many: one Gram matrix serves the PCA and the raw
        # configurations' cosine and euclidean distances (the dominant cost at 18k dims).
        gram = centred_gram(X) if gram_route(*X.shape) else None
        all_labelled = n_labelled == X.shape[0]
        for components in pca_list:
            if components is None:
                # (Indexing would copy the clips: hundreds of MB at 18k dims.)
                rows = ClipDistances(
                    X if all_labelled else X[labelled],
                    target,
                    ids=labelled_names,
                    gram=gram if all_labelled else None,
                )
            else:
                reduced = pca_reduce(X, components, seed=int(seed), gram=gram)[labelled]
                context = f" after PCA to {reduced.shape[1]} components"
                rows = ClipDistances(reduced, target, ids=labelled_names, context=context)
                tick(f"pca{components}: fitted")
            for distance in distance_list:
                name = configuration_name(components, distance)
                started = time.perf_counter()
                rows.fill(distance, matrix)
                tick(f"{name}: distances")
                entries: dict[str, MetricSummary] = {}
                if calibrated:
                    entries.update(
                        _calibrated_metrics(
                            name,
                            matrix,
                            precision_codes=precision_codes if with_precision else None,
                            ks=k_values,
                            gsr_members=gsr_members,
                            gsr_codes=gsr_codes if with_gsr else None,
                            gsr_sizes=gsr_sizes,
                            n_permutations=n_permutations,
                            n_bootstrap=n_bootstrap,
                            seed=int(seed),
                            draw=draw,
                            tick=tick,
                        )
                    )
                if extra_metrics:
                    entries.update(
                        _extra_metrics(
                            extra_metrics,
                            matrix,
                            gsr_members=gsr_members,
                            gsr_codes=gsr_codes,
                            gsr_sizes=gsr_sizes,
                            precision_codes=precision_codes,
                            seed=int(seed),
                        )
                    )
                    tick(f"{name}: {', '.join(extra_metrics)}")
                configurations.append(
                    Configuration(name, components, int(rows.X.shape[1]), distance)
                )
                scores[name] = entries
                seconds[name] = time.perf_counter() - started
    return ZeroShotSimilarityReport(
        configurations=tuple(configurations),
        configs=scores,
        counts=counts,
        settings=settings,
        seconds=seconds,
    )


#: Label permutations kept for the grid's other configurations, at most this many bytes (1000
#: permutations of up to 8,388 clips; larger subsets draw them again for each configuration).
PERMUTATION_CACHE_BYTES: int = 1 << 26


class SharedPermutations:
    """:func:`label_permutation` for every configuration of one grid: a permutation depends only
    on the clip count, the seed, the stream and its index, so the configurations share it. Drawn
    once and kept while the kept ones fit :data:`PERMUTATION_CACHE_BYTES` (thread-safe: workers
    may draw the same one twice, never different ones)."""

    def __init__(self, seed: int) -> None:
        self._seed = seed
        self._kept: dict[tuple[int, int, int], np.ndarray] = {}
        self._bytes = 0

    def __call__(self, n: int, stream: int, index: int) -> np.ndarray:
        key = (n, stream, index)
        permutation = self._kept.get(key)
        if permutation is None:
            permutation = label_permutation(n, self._seed, stream, index)
            if self._bytes + permutation.nbytes <= PERMUTATION_CACHE_BYTES:
                self._kept[key] = permutation
                self._bytes += permutation.nbytes
        return permutation


def _calibrated_metrics(
    name: str,
    matrix: torch.Tensor,
    *,
    precision_codes: torch.Tensor | None,
    ks: Sequence[int],
    gsr_members: torch.Tensor | None,
    gsr_codes: torch.Tensor | None,
    gsr_sizes: torch.Tensor,
    n_permutations: int,
    n_bootstrap: int,
    seed: int,
    draw: SharedPermutations,
    tick: _Progress,
) -> dict[str, MetricSummary]:
    """P@k and GSR of one configuration with permutation baselines and bootstrap margins."""
    device = matrix.device
    engine = RelabellingEvaluator(
        matrix,
        precision_codes=precision_codes,
        ks=ks if precision_codes is not None else (),
        gsr_members=gsr_members,
        gsr_codes=gsr_codes,
        gsr_sizes=gsr_sizes,
    )
    n_labelled = int(matrix.shape[0])
    n_gsr = n_labelled if gsr_members is None else int(gsr_members.shape[0])

    # Observed labelling = the identity permutation, through the same code as the nulls.
    observed: dict[str, float] = {}
    per_clip: dict[str, np.ndarray] = {}
    counts: dict[str, tuple[int, int]] = {}
    if precision_codes is not None:
        hits = engine.precision_hits(torch.arange(n_labelled, device=device))
        for k in ks:
            metric = f"p@{k}"
            observed[metric] = int(hits[k].sum()) / (n_labelled * k)
            per_clip[metric] = hits[k].cpu().numpy().astype(np.float64) / k
            counts[metric] = (n_labelled, 0)
    if gsr_codes is not None:
        clip_scores, evaluated = engine.gsr_scores(torch.arange(n_gsr, device=device)[None])
        raw, n_evaluated = mean_separation(clip_scores, evaluated)
        observed["gsr"] = float((raw[0] + 1.0) / 2.0)
        per_clip["gsr"] = clip_scores[0][evaluated[0]].cpu().numpy()
        counts["gsr"] = (int(n_evaluated[0]), n_gsr - int(n_evaluated[0]))
        gsr_raw = float(raw[0])
    tick(f"{name}: observed metrics")

    # Permutation nulls. Both metrics share permutations when they score the same clips.
    shared = gsr_members is None

    def permutations(index: int) -> tuple[np.ndarray | None, np.ndarray | None]:
        labelled_perm = draw(n_labelled, 0, index)
        if shared:
            return labelled_perm, labelled_perm
        return labelled_perm, draw(n_gsr, 1, index)

    nulls = (
        engine.null_values(n_permutations, permutations, lambda m: tick(f"{name}: permutations", m))
        if n_permutations
        else {}
    )

    entries: dict[str, MetricSummary] = {}
    for metric, value in observed.items():
        summary = summarize_null(nulls[metric], value) if n_permutations else None
        # One resampling stream per metric, independent of which other metrics were asked for.
        stream = (seed, 3) if metric == "gsr" else (seed, 2, int(metric[2:]))
        # GSR = (mean s_i + 1) / 2, so its margin is half that of the mean s_i.
        scale = 0.5 if metric == "gsr" else 1.0
        margin = (
            bootstrap_margin(per_clip[metric], n_bootstrap, stream, scale=scale)
            if n_bootstrap
            else None
        )
        entries[metric] = MetricSummary(
            value=value,
            raw=gsr_raw if metric == "gsr" else None,
            baseline_mean=summary.baseline if summary else None,
            baseline_low=summary.low if summary else None,
            baseline_high=summary.high if summary else None,
            lift=summary.lift if summary else None,
            p_value=summary.p_value if summary else None,
            margin=margin,
            n_evaluated=counts[metric][0],
            n_skipped=counts[metric][1],
        )
    if n_bootstrap:
        tick(f"{name}: bootstrap")
    return entries


def _extra_metrics(
    metrics: Sequence[str],
    matrix: torch.Tensor,
    *,
    gsr_members: torch.Tensor | None,
    gsr_codes: torch.Tensor,
    gsr_sizes: torch.Tensor,
    precision_codes: torch.Tensor,
    seed: int,
) -> dict[str, MetricSummary]:
    """CSR, CS, CSCF (one shared pass over D), silhouette and purity: values only."""
    entries: dict[str, MetricSummary] = {}
    n_gsr = int(gsr_codes.shape[0])
    pair_metrics = [m for m in metrics if m in ("csr", "cs", "cscf")]
    if pair_metrics:
        stats = class_statistics(
            matrix,
            gsr_codes,
            gsr_sizes,
            gsr_members,
            intra_max="csr" in pair_metrics,
            class_pair_sums="cs" in pair_metrics or "cscf" in pair_metrics,
        )
        if "csr" in pair_metrics:
            raw = csr_from_statistics(stats, gsr_codes, gsr_sizes)
            entries["csr"] = MetricSummary(
                value=(raw + 1.0) / 2.0, raw=raw, n_evaluated=n_gsr, n_skipped=0
            )
        if stats.class_pair_sums is not None:
            intra, inter = class_means(stats.class_pair_sums, gsr_sizes)
            if "cs" in pair_metrics:
                entries["cs"] = MetricSummary(
                    value=cs_from_means(intra, inter), n_evaluated=n_gsr, n_skipped=0
                )
            if "cscf" in pair_metrics:
                entries["cscf"] = MetricSummary(
                    value=cscf_from_means(intra, inter), n_evaluated=n_gsr, n_skipped=0
                )
    if "silhouette" in metrics:
        value, _, n_evaluated = silhouette_of_members(
            matrix,
            None if gsr_members is None else gsr_members.cpu().numpy(),
            gsr_codes.cpu().numpy(),
            seed=seed,
        )
        entries["silhouette"] = MetricSummary(value=value, n_evaluated=n_evaluated, n_skipped=0)
    if "purity" in metrics:
        result = clustering_purity_details(
            matrix.cpu().numpy(), precision_codes.cpu().numpy().tolist()
        )
        entries["purity"] = MetricSummary(
            value=result.value,
            n_evaluated=result.n_evaluated,
            n_skipped=result.n_skipped,
            extras=dict(result.extras),
        )
    return {metric: entries[metric] for metric in metrics if metric in entries}
