"""Class-separation metrics: GSR, CSR, CS and CSCF (VocSim protocol, "Metrics").

All four first drop unlabelled clips and classes with fewer than ``min_class_size`` clips
(default 2) and require at least two classes to remain. With D the distance matrix:

- **GSR** (Global Separation Rate), per clip i: AvgID_i = mean D[i, j] over the other clips j
  of its class; NID_i = min D[i, k] over clips k of other classes;
  ``s_i = (NID_i − AvgID_i) / (NID_i + AvgID_i + ε)``, ε = 1e-9, skipping (and counting) clips
  whose denominator is ≤ ε or not finite. raw = mean s_i (float64); GSR = (raw + 1) / 2.
- **CSR** (Class Separation Ratio): MID_i = max intra-class distance of clip i; per class c,
  ``sep_c = (mean NID − mean MID) / (mean NID + mean MID + ε)`` over its clips (0 if that
  denominator ≤ ε); CSR = (Σ_c |c|·sep_c / Σ_c |c| + 1) / 2.
- **CS** ("F-value", lower is better): intra_c = mean D over pairs a ≠ b in c; for every
  ordered pair of distinct classes, inter(c, e) = mean D over a ∈ c, b ∈ e, F = inter/intra_c,
  t = 1 / (1 + F), with the special cases (≈ 0 meaning ≤ 1e-9) intra ≈ 0 and inter ≈ 0 → 0.5,
  intra ≈ 0 only → 0, inter ≈ 0 only → 1 (the limits of t). CS = mean t over ordered pairs.
  ``min_class_size`` is honoured (the reference implementation ignores it here).
- **CSCF** (lower is better): fraction of ordered class pairs with inter(c, e) < intra_c.

Scores are computed with one exact pass over D (:mod:`audiobench.vocsim.class_statistics`).
"""

from __future__ import annotations

import torch

from audiobench.metrics.labels import ClassFilter, filter_classes, require_two_classes
from audiobench.metrics.results import MetricResult
from audiobench.metrics.runtime import limited_cpu_threads, resolve_device
from audiobench.metrics.validation import validate_labelled_matrix
from audiobench.vocsim.class_statistics import ClassStatistics, class_statistics

#: ε in the GSR and CSR denominators.
SEPARATION_EPSILON: float = 1e-9
#: CS treats a class mean at or below this as zero.
CS_ZERO: float = 1e-9


def separation_scores(
    avg_intra: torch.Tensor, nearest_other: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-clip GSR scores ``s_i`` and whether each clip is evaluated (not skipped).

    Works on any shape (the engine passes one row per labelling). Skipped clips get score 0 so
    that a plain sum over a row adds up the evaluated clips only. Computed in float64.
    """
    nid = nearest_other.to(torch.float64)
    avg = avg_intra.to(torch.float64)
    denominator = nid + avg + SEPARATION_EPSILON
    evaluated = torch.isfinite(denominator) & (denominator > SEPARATION_EPSILON)
    scores = torch.where(evaluated, (nid - avg) / denominator, 0.0)
    return scores, evaluated


def mean_separation(
    scores: torch.Tensor, evaluated: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """GSR raw (mean of evaluated ``s_i`` along the last axis, NaN if none) and the count."""
    count = evaluated.sum(dim=-1)
    return scores.sum(dim=-1) / count, count


def _filtered(
    D: object, labels: object, min_class_size: int, device: str | torch.device | None
) -> tuple[torch.Tensor, ClassFilter, torch.Tensor | None, torch.Tensor, torch.Tensor]:
    matrix, encoded = validate_labelled_matrix(D, labels, resolve_device(device))
    kept = filter_classes(encoded, min_class_size)
    require_two_classes(kept, min_class_size)
    members, codes, sizes = kept.tensors(encoded.n_clips, matrix.device)
    return matrix, kept, members, codes, sizes


def _result(name: str, value: float, kept: ClassFilter, **fields: object) -> MetricResult:
    return MetricResult(
        name=name,
        value=value,
        n_excluded_classes=kept.n_excluded_classes,
        n_excluded_clips=kept.n_excluded_clips,
        **fields,  # type: ignore[arg-type]
    )


def gsr(
    D: object,
    labels: object,
    min_class_size: int = 2,
    *,
    device: str | torch.device | None = None,
) -> float:
    """Global Separation Rate in [0, 1] (higher is better; tables show it ×100).

    Parameters
    ----------
    D:
        (N, N) distance matrix (NumPy array or torch tensor, float32 or float64).
    labels:
        One label per clip, any hashable; ``None`` (or NaN) for unlabelled clips.
    min_class_size:
        Classes with fewer labelled clips are excluded (and counted).
    device:
        torch device for the computation (default CPU).

    Raises
    ------
    InsufficientClassesError
        If fewer than two classes remain after filtering.
    """
    return gsr_details(D, labels, min_class_size, device=device).value


def gsr_details(
    D: object,
    labels: object,
    min_class_size: int = 2,
    *,
    device: str | torch.device | None = None,
) -> MetricResult:
    """:func:`gsr` as a :class:`MetricResult`: ``raw`` (= gsr_raw), ``n_evaluated``,
    ``n_skipped``, the excluded classes and clips, and the per-clip ``s_i`` as ``per_clip``."""
    with limited_cpu_threads():
        matrix, kept, members, codes, sizes = _filtered(D, labels, min_class_size, device)
        stats = class_statistics(matrix, codes, sizes, members)
        avg_intra = stats.intra_sum / (sizes[codes] - 1).to(torch.float64)
        scores, evaluated = separation_scores(avg_intra[None], stats.nearest_other[None])
        raw, count = mean_separation(scores, evaluated)
    raw_value = float(raw[0])
    n_evaluated = int(count[0])
    return _result(
        "gsr",
        (raw_value + 1.0) / 2.0,
        kept,
        raw=raw_value,
        n_evaluated=n_evaluated,
        n_skipped=int(codes.shape[0]) - n_evaluated,
        per_clip=scores[0][evaluated[0]].cpu().numpy(),
    )


def csr_from_statistics(stats: ClassStatistics, codes: torch.Tensor, sizes: torch.Tensor) -> float:
    """CSR raw (the size-weighted mean of ``sep_c``, in [−1, 1]) from collected statistics."""
    assert stats.intra_max is not None
    n_classes = int(sizes.shape[0])
    counts = sizes.to(torch.float64)
    mean_nid = torch.zeros(n_classes, dtype=torch.float64, device=codes.device)
    mean_nid.index_add_(0, codes, stats.nearest_other.to(torch.float64)).div_(counts)
    mean_mid = torch.zeros(n_classes, dtype=torch.float64, device=codes.device)
    mean_mid.index_add_(0, codes, stats.intra_max.to(torch.float64)).div_(counts)
    denominator = mean_nid + mean_mid + SEPARATION_EPSILON
    separation = torch.where(
        denominator > SEPARATION_EPSILON, (mean_nid - mean_mid) / denominator, 0.0
    )
    return float((counts * separation).sum() / counts.sum())


def csr(
    D: object,
    labels: object,
    min_class_size: int = 2,
    *,
    device: str | torch.device | None = None,
) -> float:
    """Class Separation Ratio in [0, 1] (higher is better). Parameters as :func:`gsr`."""
    return csr_details(D, labels, min_class_size, device=device).value


def csr_details(
    D: object,
    labels: object,
    min_class_size: int = 2,
    *,
    device: str | torch.device | None = None,
) -> MetricResult:
    """:func:`csr` as a :class:`MetricResult`; ``raw`` is the weighted mean of ``sep_c``
    before ``(raw + 1) / 2``."""
    with limited_cpu_threads():
        matrix, kept, members, codes, sizes = _filtered(D, labels, min_class_size, device)
        stats = class_statistics(matrix, codes, sizes, members, intra_max=True)
        raw = csr_from_statistics(stats, codes, sizes)
    return _result("csr", (raw + 1.0) / 2.0, kept, raw=raw, n_evaluated=int(codes.shape[0]))


def class_means(pair_sums: torch.Tensor, sizes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(intra, inter)``: intra_c (C,) = mean over pairs a ≠ b in c; inter (C, C) with entry
    (c, e) = mean over a ∈ c, b ∈ e (the diagonal of ``inter`` is meaningless)."""
    counts = sizes.to(torch.float64)
    intra = torch.diagonal(pair_sums) / (counts * (counts - 1))
    inter = pair_sums / (counts[:, None] * counts[None, :])
    return intra, inter


def cs_from_means(intra: torch.Tensor, inter: torch.Tensor) -> float:
    """CS from class means: mean over ordered pairs c ≠ e of t = 1 / (1 + inter/intra_c)."""
    intra_zero = (intra <= CS_ZERO)[:, None].expand_as(inter)
    inter_zero = inter <= CS_ZERO
    ratio = inter / torch.where(intra_zero, 1.0, intra[:, None].expand_as(inter))
    transformed = torch.where(
        intra_zero & inter_zero,
        0.5,
        torch.where(intra_zero, 0.0, torch.where(inter_zero, 1.0, 1.0 / (1.0 + ratio))),
    )
    off_diagonal = ~torch.eye(inter.shape[0], dtype=torch.bool, device=inter.device)
    return float(transformed[off_diagonal].mean())


def cscf_from_means(intra: torch.Tensor, inter: torch.Tensor) -> float:
    """CSCF: fraction of ordered class pairs (c, e), c ≠ e, with inter(c, e) < intra_c."""
    off_diagonal = ~torch.eye(inter.shape[0], dtype=torch.bool, device=inter.device)
    return float((inter < intra[:, None])[off_diagonal].to(torch.float64).mean())


def _class_pair_metric(
    name: str,
    D: object,
    labels: object,
    min_class_size: int,
    device: str | torch.device | None,
) -> MetricResult:
    with limited_cpu_threads():
        matrix, kept, members, codes, sizes = _filtered(D, labels, min_class_size, device)
        stats = class_statistics(matrix, codes, sizes, members, class_pair_sums=True)
        assert stats.class_pair_sums is not None
        intra, inter = class_means(stats.class_pair_sums, sizes)
        value = cs_from_means(intra, inter) if name == "cs" else cscf_from_means(intra, inter)
    return _result(name, value, kept, n_evaluated=int(codes.shape[0]))


def cs(
    D: object,
    labels: object,
    min_class_size: int = 2,
    *,
    device: str | torch.device | None = None,
) -> float:
    """CS ("F-value"), raw: lower is better (tables show 1 − CS). Parameters as :func:`gsr`."""
    return _class_pair_metric("cs", D, labels, min_class_size, device).value


def cs_details(
    D: object,
    labels: object,
    min_class_size: int = 2,
    *,
    device: str | torch.device | None = None,
) -> MetricResult:
    """:func:`cs` as a :class:`MetricResult` (with the excluded classes and clips)."""
    return _class_pair_metric("cs", D, labels, min_class_size, device)


def cscf(
    D: object,
    labels: object,
    min_class_size: int = 2,
    *,
    device: str | torch.device | None = None,
) -> float:
    """CSCF, raw: lower is better (tables show 1 − CSCF). Parameters as :func:`gsr`."""
    return _class_pair_metric("cscf", D, labels, min_class_size, device).value


def cscf_details(
    D: object,
    labels: object,
    min_class_size: int = 2,
    *,
    device: str | torch.device | None = None,
) -> MetricResult:
    """:func:`cscf` as a :class:`MetricResult` (with the excluded classes and clips)."""
    return _class_pair_metric("cscf", D, labels, min_class_size, device)
