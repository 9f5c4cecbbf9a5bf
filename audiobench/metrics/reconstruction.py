"""Reconstruction metrics: distribution distances between embedding sets, per-clip fidelity.

**Fréchet Audio Distance** between embedding sets X (m × d) and Y (n × d), each summarised by
its mean μ and covariance Σ (unbiased, ddof = 1):

    FAD = ‖μ_X − μ_Y‖² + Tr(Σ_X) + Tr(Σ_Y) − 2 Tr((Σ_X Σ_Y)^{1/2})

The trace of the matrix square root is computed as Σ_i √λ_i over the eigenvalues λ_i of the
symmetric positive semi-definite matrix Σ_X^{1/2} Σ_Y Σ_X^{1/2}, which has the same eigenvalues
as Σ_X Σ_Y (Σ_X^{1/2} from a symmetric eigendecomposition). Working with symmetric matrices
means no complex numbers arise (``scipy.linalg.sqrtm`` of the non-symmetric product can return
a small imaginary part that would have to be discarded), and singular or near-singular
covariances (fewer clips than dimensions) need no ε added to the diagonal: eigenvalues that
rounding makes slightly negative are set to 0. The result is clipped at 0 for the same reason.

**Kernel Audio Distance**: the unbiased estimate of the squared maximum mean discrepancy,

    MMD² = Σ_{i≠j} k(x_i, x_j) / (m(m−1)) + Σ_{i≠j} k(y_i, y_j) / (n(n−1))
           − 2 Σ_{i,j} k(x_i, y_j) / (mn)

with the polynomial kernel k(x, y) = (x·y / d + 1)³ by default (as KID), or the RBF kernel
k(x, y) = exp(−‖x − y‖² / (2σ²)). Unbiased, so it can be slightly negative when the sets
come from the same distribution; it is reported unscaled and over the full sets (no subsets).

**Per-clip metrics** (each a mean over clips; ``return_details=True`` gives the per-clip
values in a :class:`MetricResult`):

- embedding MSE: (1/d) ‖e_ref − e_rec‖² per clip.
- SI-SDR (dB): with s and ŝ the zero-mean reference and estimate, α = ⟨ŝ, s⟩ / ‖s‖²,
  SI-SDR = 10 log10(‖α s‖² / ‖ŝ − α s‖²). +inf for an exact (scaled) reconstruction, −inf
  for a silent or orthogonal estimate; a silent reference is an error.
- log-mel distance (dB): the mean absolute difference between the log-mel spectrograms
  (:func:`audiobench.models.baselines.log_mel_spectrogram`, ``[frames, n_mels]`` in dB) of
  reference and reconstruction, over all frames and bands (an L1 distance, not L2).

:func:`bits_per_second` gives a codec's bitrate from its token layout.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, overload

import numpy as np
import torch

from audiobench.metrics.errors import InvalidEmbeddingsError
from audiobench.metrics.results import MetricResult
from audiobench.metrics.validation import describe_clips, validate_embeddings

__all__ = [
    "bits_per_second",
    "embedding_mse",
    "frechet_audio_distance",
    "kernel_audio_distance",
    "log_mel_distance",
    "si_sdr",
]

#: A zero-mean reference whose peak is at most this fraction of the raw peak is silent.
SILENCE_RATIO: float = 1e-8

#: Pooled points used for the RBF median-bandwidth heuristic (a seeded subset above this).
MEDIAN_HEURISTIC_POINTS: int = 4096

#: Kernel entries computed per block when summing a kernel matrix.
BLOCK_ELEMENTS: int = 1 << 22


def _embedding_set(values: object, name: str) -> np.ndarray:
    """Validated embeddings; errors say which of the two sets is at fault."""
    try:
        array, _ = validate_embeddings(values)
    except InvalidEmbeddingsError as error:
        raise InvalidEmbeddingsError(f"{name} embeddings: {error}", error.clip_ids) from error
    except ValueError as error:
        raise ValueError(f"{name} embeddings: {error}") from error
    return array


def _two_sets(reference: object, generated: object) -> tuple[np.ndarray, np.ndarray]:
    X = _embedding_set(reference, "reference")
    Y = _embedding_set(generated, "generated")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(
            f"embedding sets differ in dimension: reference {X.shape[1]}, generated {Y.shape[1]}"
        )
    return X, Y


def _symmetric_sqrt(matrix: np.ndarray) -> np.ndarray:
    values, vectors = np.linalg.eigh(matrix)
    return (vectors * np.sqrt(np.clip(values, 0.0, None))) @ vectors.T


def frechet_audio_distance(reference: object, generated: object) -> float:
    """FAD between two embedding sets (see the module docstring), ≥ 0.

    Parameters
    ----------
    reference, generated:
        ``[m, d]`` and ``[n, d]`` finite embeddings, m, n ≥ 2 (for a covariance).
    """
    X, Y = _two_sets(reference, generated)
    mean_gap = X.mean(axis=0) - Y.mean(axis=0)
    cov_x = np.atleast_2d(np.cov(X, rowvar=False))
    cov_y = np.atleast_2d(np.cov(Y, rowvar=False))
    root_x = _symmetric_sqrt(cov_x)
    middle = root_x @ cov_y @ root_x
    eigenvalues = np.linalg.eigvalsh((middle + middle.T) / 2)
    trace_root = float(np.sqrt(np.clip(eigenvalues, 0.0, None)).sum())
    value = float(mean_gap @ mean_gap) + float(np.trace(cov_x) + np.trace(cov_y)) - 2 * trace_root
    return max(0.0, value)


def _kernel_sum(
    A: np.ndarray,
    B: np.ndarray,
    kernel: Literal["polynomial", "rbf"],
    parameter: float,
    degree: int,
    skip_diagonal: bool,
) -> float:
    """Σ_{i,j} k(a_i, b_j) in row blocks; with ``skip_diagonal`` (A is B) the i = j terms out."""
    total = 0.0
    step = max(1, BLOCK_ELEMENTS // B.shape[0])
    b_norms = (B * B).sum(axis=1)
    for start in range(0, A.shape[0], step):
        block = A[start : start + step]
        inner = block @ B.T
        if kernel == "polynomial":
            values = (inner / parameter + 1.0) ** degree
        else:
            squared = np.maximum((block * block).sum(axis=1)[:, None] + b_norms - 2 * inner, 0.0)
            values = np.exp(-squared / (2.0 * parameter**2))
        if skip_diagonal:
            rows = np.arange(values.shape[0])
            values[rows, start + rows] = 0.0
        total += float(values.sum())
    return total


def _median_distance(points: np.ndarray) -> float:
    if points.shape[0] > MEDIAN_HEURISTIC_POINTS:
        chosen = np.random.default_rng(0).choice(
            points.shape[0], MEDIAN_HEURISTIC_POINTS, replace=False
        )
        points = points[np.sort(chosen)]
    squared = (points * points).sum(axis=1)
    gram = squared[:, None] + squared[None, :] - 2 * points @ points.T
    upper = np.triu_indices(points.shape[0], k=1)
    return float(np.sqrt(np.maximum(np.median(gram[upper]), 0.0)))


def kernel_audio_distance(
    reference: object,
    generated: object,
    *,
    kernel: Literal["polynomial", "rbf"] = "polynomial",
    degree: int = 3,
    bandwidth: float | None = None,
) -> float:
    """Unbiased MMD² between two embedding sets (see the module docstring).

    Parameters
    ----------
    reference, generated:
        ``[m, d]`` and ``[n, d]`` finite embeddings, m, n ≥ 2.
    kernel:
        ``"polynomial"``: (x·y/d + 1)^degree; ``"rbf"``: exp(−‖x − y‖² / (2·bandwidth²)).
    degree:
        Polynomial degree (positive integer, default 3).
    bandwidth:
        RBF σ > 0. None: the median pairwise distance of the pooled sets (at most
        :data:`MEDIAN_HEURISTIC_POINTS` points, a seeded random subset beyond that).

    Returns
    -------
    float
        MMD² (may be slightly negative; 0 in expectation for identical distributions).
    """
    if kernel not in ("polynomial", "rbf"):
        raise ValueError(f"kernel must be 'polynomial' or 'rbf', got {kernel!r}")
    if isinstance(degree, bool) or not isinstance(degree, int | np.integer) or degree < 1:
        raise ValueError(f"degree must be a positive integer, got {degree!r}")
    X, Y = _two_sets(reference, generated)
    if kernel == "polynomial":
        parameter = float(X.shape[1])
    elif bandwidth is None:
        parameter = _median_distance(np.concatenate([X, Y]))
        if parameter == 0.0:
            raise ValueError("median pairwise distance is 0 (duplicate points): give bandwidth")
    else:
        if isinstance(bandwidth, bool) or not (math.isfinite(bandwidth) and bandwidth > 0):
            raise ValueError(f"bandwidth must be a positive number, got {bandwidth!r}")
        parameter = float(bandwidth)
    m, n = X.shape[0], Y.shape[0]
    xx = _kernel_sum(X, X, kernel, parameter, int(degree), True) / (m * (m - 1))
    yy = _kernel_sum(Y, Y, kernel, parameter, int(degree), True) / (n * (n - 1))
    xy = _kernel_sum(X, Y, kernel, parameter, int(degree), False) / (m * n)
    return float(xx + yy - 2 * xy)


def _result(name: str, per_clip: np.ndarray, return_details: bool) -> float | MetricResult:
    value = float(np.mean(per_clip))
    if not return_details:
        return value
    return MetricResult(
        name=name, value=value, n_evaluated=int(per_clip.shape[0]), per_clip=per_clip
    )


@overload
def embedding_mse(
    reference: object, reconstructed: object, *, return_details: Literal[False] = ...
) -> float: ...
@overload
def embedding_mse(
    reference: object, reconstructed: object, *, return_details: Literal[True]
) -> MetricResult: ...
def embedding_mse(
    reference: object, reconstructed: object, *, return_details: bool = False
) -> float | MetricResult:
    """Mean over clips of the per-clip embedding MSE (1/d) ‖e_ref − e_rec‖², ≥ 0.

    ``reference`` and ``reconstructed`` are ``[n, d]`` finite arrays of the same shape, row i
    of each from clip i (n ≥ 1).
    """
    arrays = []
    for name, values in (("reference", reference), ("reconstructed", reconstructed)):
        if isinstance(values, torch.Tensor):
            values = values.detach().cpu().numpy()
        array = np.asarray(values)
        if array.ndim != 2 or array.shape[0] < 1 or array.shape[1] < 1:
            raise ValueError(f"{name} embeddings must be a non-empty 2-D array, got {array.shape}")
        if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
            raise ValueError(f"{name} embeddings must be real numbers, got dtype {array.dtype}")
        array = array.astype(np.float64)
        bad = np.flatnonzero(~np.isfinite(array).all(axis=1))
        if bad.size:
            raise ValueError(
                f"{name} embeddings have NaN or infinite values "
                f"(clips: {describe_clips(bad.tolist())})"
            )
        arrays.append(array)
    if arrays[0].shape != arrays[1].shape:
        raise ValueError(
            f"reference embeddings have shape {arrays[0].shape}, reconstructed "
            f"{arrays[1].shape}; they must match clip for clip"
        )
    per_clip = ((arrays[0] - arrays[1]) ** 2).mean(axis=1)
    return _result("embedding_mse", per_clip, return_details)


def _clips(values: object, name: str) -> list[np.ndarray]:
    """Waveforms as a list of finite 1-D float64 arrays (1-D input = one clip, 2-D = rows)."""
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().numpy()
    if isinstance(values, np.ndarray):
        if values.ndim == 1:
            items: list[object] = [values]
        elif values.ndim == 2:
            items = list(values)
        else:
            raise ValueError(f"{name} must be 1-D (one clip) or 2-D (clips × samples)")
    elif isinstance(values, Sequence) and not isinstance(values, str | bytes):
        items = list(values)
    else:
        raise ValueError(f"{name} must be an array or a sequence of waveforms")
    if not items:
        raise ValueError(f"{name} is empty: need at least one clip")
    clips = []
    for position, item in enumerate(items):
        if isinstance(item, torch.Tensor):
            item = item.detach().cpu().numpy()
        array = np.asarray(item)
        if array.ndim != 1 or array.shape[0] == 0:
            raise ValueError(
                f"{name}[{position}] must be a non-empty 1-D waveform, got shape {array.shape}"
            )
        if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
            raise ValueError(f"{name}[{position}] must hold real numbers, got {array.dtype}")
        array = array.astype(np.float64)
        if not np.isfinite(array).all():
            raise ValueError(f"{name}[{position}] has NaN or infinite samples")
        clips.append(array)
    return clips


def _paired_clips(
    references: object, estimates: object, second: str
) -> list[tuple[np.ndarray, np.ndarray]]:
    refs = _clips(references, "references")
    ests = _clips(estimates, second)
    if len(refs) != len(ests):
        raise ValueError(f"got {len(refs)} references and {len(ests)} {second}")
    for position, (ref, est) in enumerate(zip(refs, ests, strict=True)):
        if ref.shape != est.shape:
            raise ValueError(
                f"clip {position}: reference has {ref.shape[0]} samples, {second} "
                f"{est.shape[0]}; trim or pad them to the same length first"
            )
    return list(zip(refs, ests, strict=True))


def _si_sdr_one(reference: np.ndarray, estimate: np.ndarray, position: int) -> float:
    s = reference - reference.mean()
    peak = float(np.abs(reference).max())
    if float(np.abs(s).max()) <= SILENCE_RATIO * peak or peak == 0.0:
        raise ValueError(
            f"reference clip {position} is silent (constant, no energy after removing its "
            "mean): SI-SDR is undefined"
        )
    s_hat = estimate - estimate.mean()
    alpha = float(s_hat @ s) / float(s @ s)
    target = alpha * s
    noise = s_hat - target
    target_energy = float(target @ target)
    noise_energy = float(noise @ noise)
    if target_energy == 0.0:
        return -math.inf
    if noise_energy == 0.0:
        return math.inf
    return 10.0 * math.log10(target_energy / noise_energy)


@overload
def si_sdr(
    references: object, estimates: object, *, return_details: Literal[False] = ...
) -> float: ...
@overload
def si_sdr(
    references: object, estimates: object, *, return_details: Literal[True]
) -> MetricResult: ...
def si_sdr(
    references: object, estimates: object, *, return_details: bool = False
) -> float | MetricResult:
    """Mean scale-invariant SDR in dB over clips (zero-mean; see the module docstring).

    Parameters
    ----------
    references, estimates:
        One waveform each (1-D), clips × samples (2-D), or sequences of 1-D waveforms; clip i
        of both must have the same length.

    Raises
    ------
    ValueError
        A silent reference (max |s − mean(s)| ≤ :data:`SILENCE_RATIO` · max |s|, e.g. all
        zeros or constant), differing lengths, NaN/inf samples, empty input.
    """
    pairs = _paired_clips(references, estimates, "estimates")
    per_clip = np.array([_si_sdr_one(ref, est, i) for i, (ref, est) in enumerate(pairs)])
    return _result("si_sdr", per_clip, return_details)


@overload
def log_mel_distance(
    references: object,
    reconstructions: object,
    sample_rate: int,
    *,
    n_fft: int = ...,
    hop: int = ...,
    n_mels: int = ...,
    fmax: float | None = ...,
    return_details: Literal[False] = ...,
) -> float: ...
@overload
def log_mel_distance(
    references: object,
    reconstructions: object,
    sample_rate: int,
    *,
    n_fft: int = ...,
    hop: int = ...,
    n_mels: int = ...,
    fmax: float | None = ...,
    return_details: Literal[True],
) -> MetricResult: ...
def log_mel_distance(
    references: object,
    reconstructions: object,
    sample_rate: int,
    *,
    n_fft: int = 512,
    hop: int = 256,
    n_mels: int = 128,
    fmax: float | None = None,
    return_details: bool = False,
) -> float | MetricResult:
    """Mean absolute log-mel difference in dB, averaged over frames, bands, then clips; ≥ 0.

    Each waveform goes through ``log_mel_spectrogram(wave, sample_rate, n_fft=n_fft, hop=hop,
    n_mels=n_mels, fmax=fmax)`` (dB, 80 dB floor below each clip's own maximum); the clip's
    distance is mean |L_ref − L_rec| over the ``[frames, n_mels]`` entries. ``fmax`` None
    means min(8000, sample_rate / 2). Reference and reconstruction of a clip must have the same
    number of samples (trim a codec's padding first).
    """
    from audiobench.models.baselines import log_mel_spectrogram

    if isinstance(sample_rate, bool) or not isinstance(sample_rate, int | np.integer):
        raise ValueError(f"sample_rate must be a positive integer, got {sample_rate!r}")
    if sample_rate <= 0:
        raise ValueError(f"sample_rate must be a positive integer, got {sample_rate!r}")
    top = min(8000.0, sample_rate / 2) if fmax is None else float(fmax)
    if not 0 < top <= sample_rate / 2:
        raise ValueError(f"fmax must lie in (0, sample_rate / 2 = {sample_rate / 2}], got {fmax}")
    pairs = _paired_clips(references, reconstructions, "reconstructions")
    per_clip = np.empty(len(pairs))
    for position, (ref, rec) in enumerate(pairs):
        options = {"n_fft": n_fft, "hop": hop, "n_mels": n_mels, "fmax": top}
        mel_ref = log_mel_spectrogram(ref, int(sample_rate), **options).astype(np.float64)
        mel_rec = log_mel_spectrogram(rec, int(sample_rate), **options).astype(np.float64)
        per_clip[position] = float(np.abs(mel_ref - mel_rec).mean())
    return _result("log_mel_distance", per_clip, return_details)


def bits_per_second(n_codebooks: int, codebook_size: int, frame_rate: float) -> float:
    """Bitrate of a token stream: n_codebooks · log2(codebook_size) · frame_rate.

    E.g. 8 codebooks of 1024 entries at 75 frames/s: 8 · 10 · 75 = 6000 bit/s. ``frame_rate``
    is in frames per second (may be fractional); a codebook of size 1 carries 0 bits.
    """
    for name, value in (("n_codebooks", n_codebooks), ("codebook_size", codebook_size)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if (
        isinstance(frame_rate, bool)
        or not isinstance(frame_rate, int | float | np.number)
        or not (math.isfinite(frame_rate) and frame_rate > 0)
    ):
        raise ValueError(f"frame_rate must be a positive, finite number, got {frame_rate!r}")
    return float(n_codebooks) * math.log2(int(codebook_size)) * float(frame_rate)
