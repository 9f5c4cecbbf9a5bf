"""Reconstruction metrics: distribution distances between embedding sets, per-example fidelity.

**Embeddings of a reconstruction task.** A reference encoder embeds every original clip and
its reconstruction; each gives a sequence of frame embeddings ``[T_i, d]`` (a pooled
embedding is a sequence of one frame). :func:`reconstruction_embedding_scores` computes the
three scores as MSEB's reconstruction evaluator defines them:

- **FAD** and **KAD** over the *bag of frames*: every frame of every original clip is one
  point of the reference set, every frame of every reconstruction one point of the other set
  (:func:`frame_bag`); clips are not pooled first and frames are not paired.
- **embedding MSE** per example: the mean of (e_ref − e_rec)² over all T × d entries of that
  example's frames, then the mean over examples. An example whose two frame sequences differ
  in shape (different frame counts) has no MSE: MSEB skips it (and warns) and averages over
  the others; :func:`embedding_mse` does the same by default and counts the skipped examples.
  Examples weigh equally whatever their length. With no comparable example the MSE is
  undefined (NaN; MSEB leaves the score out).

**Fréchet Audio Distance** between sets X (m × d) and Y (n × d), each summarised by its mean μ
and covariance Σ (unbiased, ddof = 1):

    FAD = ‖μ_X − μ_Y‖² + Tr(Σ_X) + Tr(Σ_Y) − 2 Tr(((Σ_X + εI)(Σ_Y + εI))^{1/2})

with ε = 0 by default. MSEB adds ε = 1e-6 (:data:`FAD_COVARIANCE_EPS`) to both diagonals inside
the square root only (the two trace terms use the raw covariances): a change of order ε·d
when both covariances are well conditioned, but of order √(ελ) for each direction in which one
covariance is singular and the other has variance λ (fewer frames than dimensions);
:func:`reconstruction_embedding_scores` uses it. The trace of the matrix square root
is Σ_i √λ_i over the eigenvalues of the symmetric positive semi-definite matrix
A^{1/2} B A^{1/2} (A, B the two regularised covariances; A^{1/2} from a symmetric
eigendecomposition), which equals the trace of scipy's ``sqrtm(A B)`` but involves no complex
numbers and no failure for singular covariances: eigenvalues that rounding makes slightly
negative are set to 0. The result is clamped at 0 (as MSEB does).

**Kernel Audio Distance** (Chung et al. 2025, "KAD: No More FAD!", as MSEB computes it): the
unbiased estimate of the squared maximum mean discrepancy

    MMD² = Σ_{i≠j} k(x_i, x_j) / (m(m−1)) + Σ_{i≠j} k(y_i, y_j) / (n(n−1))
           − 2 Σ_{i,j} k(x_i, y_j) / (mn)

with a characteristic kernel of the squared distance a = ‖x − y‖² and γ = 1 / (2σ² + 1e-8):
Gaussian RBF exp(−γa) (the default), inverse quadratic 1 / (1 + γa) or inverse multiquadric
1 / √(1 + γa). The bandwidth σ is by default the median pairwise Euclidean distance of the
**reconstructed** (second) set, exact over all pairs (:func:`median_pairwise_distance`; the mean
of the two middle values when the number of pairs is even, as ``np.median``). KAD = 100 · MMD²
(the paper's scale factor), clamped at 0 as MSEB does: the unbiased estimate itself can be
slightly negative for sets from one distribution, and ``clamp=False`` keeps it.

Computed in float64 with kernel sums taken in row blocks (no m × m matrix is held). MSEB and
the paper's code compute in float32; the two differ by float32 rounding only.

**Polynomial-kernel MMD** (:func:`polynomial_mmd`): the same unbiased MMD² with
k(x, y) = (x·y / d + 1)³, the kernel of KID (Bińkowski et al. 2018), unscaled and over the full
sets (KID averages it over random subsets; the expectation is the same).

**Per-clip waveform metrics** (each a mean over clips; the ``*_details`` functions give the
per-clip values in a :class:`MetricResult`):

- SI-SDR (dB): with s and ŝ the reference and estimate (by default both made zero-mean first),
  α = ⟨ŝ, s⟩ / ‖s‖², SI-SDR = 10 log10(‖α s‖² / ‖ŝ − α s‖²) (Le Roux et al. 2019). +inf for an
  exact (scaled) reconstruction, −inf for a silent or orthogonal estimate; a silent reference
  is an error.
- log-mel distance (dB): the mean absolute difference between the log-mel spectrograms
  (:func:`audiobench.spectrogram.log_mel_spectrogram`, ``[frames, n_mels]`` in dB) of
  reference and reconstruction, over all frames and bands (an L1 distance, not L2).

:func:`bits_per_second` gives a codec's bitrate from its token layout;
:func:`per_clip_summary` the mean, std, median, min and max a report gives of per-clip values.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any, Literal

import numpy as np
import torch
from scipy.spatial.distance import pdist

from audiobench.metrics.errors import InvalidEmbeddingsError
from audiobench.metrics.results import MetricResult
from audiobench.metrics.validation import describe_clips, validate_embeddings

__all__ = [
    "FAD_COVARIANCE_EPS",
    "KAD_SCALE",
    "bits_per_second",
    "embedding_mse",
    "frame_bag",
    "frechet_audio_distance",
    "kernel_audio_distance",
    "log_mel_distance",
    "median_pairwise_distance",
    "per_clip_summary",
    "polynomial_mmd",
    "reconstruction_embedding_scores",
    "si_sdr",
]

#: ε added to both covariance diagonals inside FAD's matrix square root, as MSEB does.
FAD_COVARIANCE_EPS: float = 1e-6

#: KAD is reported as this multiple of MMD² (the KAD paper's scale factor).
KAD_SCALE: float = 100.0

#: Added to 2σ² in the kernel's γ = 1 / (2σ² + ε), as the KAD paper's code and MSEB do.
KAD_GAMMA_EPS: float = 1e-8

#: A zero-mean reference whose peak is at most this fraction of the raw peak is silent.
SILENCE_RATIO: float = 1e-8

#: Kernel or distance entries computed per block when summing over pairs.
BLOCK_ELEMENTS: int = 1 << 22

#: Up to this many pairs, the median pairwise distance comes from one ``pdist`` array; above,
#: from a blocked exact selection that never holds all pairs.
MEDIAN_PDIST_PAIRS: int = 1 << 23

#: Random pairs drawn (seeded) to bracket the median before the blocked exact selection.
MEDIAN_SAMPLE_PAIRS: int = 1 << 20

Kernel = Literal["gaussian", "iq", "imq"]
_KERNELS = ("gaussian", "iq", "imq")


# -- inputs -------------------------------------------------------------------------------


def _embedding_set(values: object, name: str) -> np.ndarray:
    """Validated embeddings; errors say which of the two sets is at fault."""
    try:
        array, _ = validate_embeddings(values)
    except InvalidEmbeddingsError as error:
        raise InvalidEmbeddingsError(f"{name} embeddings: {error}", error.clip_ids) from error
    except ValueError as error:
        raise ValueError(f"{name} embeddings: {error}") from error
    return array


def _two_sets(reference: object, reconstructed: object) -> tuple[np.ndarray, np.ndarray]:
    X = _embedding_set(reference, "reference")
    Y = _embedding_set(reconstructed, "reconstructed")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(
            f"embedding sets differ in dimension: reference {X.shape[1]}, "
            f"reconstructed {Y.shape[1]}"
        )
    return X, Y


def _numpy(values: object) -> np.ndarray:
    if isinstance(values, torch.Tensor):
        return values.detach().cpu().numpy()
    return np.asarray(values)


def _examples(values: object, name: str) -> list[np.ndarray]:
    """Per-example frame sequences as float64 ``[T_i, d]`` arrays, T_i ≥ 1, one d for all.

    Accepted: a 2-D array ``[n, d]`` (n examples of one frame: pooled embeddings), a 3-D array
    ``[n, T, d]``, or a sequence of 1-D ``[d]`` / 2-D ``[T_i, d]`` arrays.
    """
    if isinstance(values, torch.Tensor | np.ndarray):
        array = _numpy(values)
        if array.ndim == 2:
            items: list[object] = list(array[:, None, :])
        elif array.ndim == 3:
            items = list(array)
        else:
            raise ValueError(
                f"{name} embeddings must be [examples, d], [examples, frames, d] or a sequence "
                f"of [frames, d] arrays, got an array of shape {array.shape}"
            )
    elif isinstance(values, Sequence) and not isinstance(values, str | bytes):
        items = list(values)
    else:
        raise ValueError(f"{name} embeddings must be an array or a sequence of frame arrays")
    if not items:
        raise ValueError(f"{name} embeddings are empty: need at least one example")
    examples: list[np.ndarray] = []
    for position, item in enumerate(items):
        array = _numpy(item)
        if array.ndim == 1:
            array = array[None, :]
        if array.ndim != 2 or array.shape[0] < 1 or array.shape[1] < 1:
            raise ValueError(
                f"{name} example {position}: frames must be a non-empty [frames, d] array, "
                f"got shape {array.shape}"
            )
        if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
            raise ValueError(f"{name} example {position}: must be real numbers, got {array.dtype}")
        examples.append(np.asarray(array, dtype=np.float64))
    widths = {e.shape[1] for e in examples}
    if len(widths) != 1:
        raise ValueError(f"{name} examples differ in embedding dimension: {sorted(widths)}")
    bad = [i for i, e in enumerate(examples) if not np.isfinite(e).all()]
    if bad:
        raise InvalidEmbeddingsError(
            f"{name} embeddings have NaN or infinite values (examples: {describe_clips(bad)})",
            bad,
        )
    return examples


def frame_bag(examples: object) -> np.ndarray:
    """Every frame of every example stacked into one ``[Σ T_i, d]`` float64 set.

    ``examples``: a sequence of ``[T_i, d]`` frame arrays (1-D arrays count as one frame), a
    3-D ``[n, T, d]`` array, or a 2-D ``[n, d]`` array (returned as is).
    """
    return np.concatenate(_examples(examples, "frame"), axis=0)


# -- FAD ----------------------------------------------------------------------------------


def _symmetric_sqrt(matrix: np.ndarray) -> np.ndarray:
    values, vectors = np.linalg.eigh(matrix)
    return np.asarray((vectors * np.sqrt(np.clip(values, 0.0, None))) @ vectors.T)


def frechet_audio_distance(
    reference: object, reconstructed: object, *, covariance_eps: float = 0.0
) -> float:
    """FAD between two embedding sets (see the module docstring), ≥ 0.

    Parameters
    ----------
    reference, reconstructed:
        ``[m, d]`` and ``[n, d]`` finite embeddings (rows are points: clips, or frames of a
        :func:`frame_bag`), m, n ≥ 2 (for a covariance).
    covariance_eps:
        ε ≥ 0 added to both covariance diagonals inside the matrix square root only; 0 gives
        the exact Fréchet distance, :data:`FAD_COVARIANCE_EPS` MSEB's figure.
    """
    if isinstance(covariance_eps, bool) or not (
        math.isfinite(covariance_eps) and covariance_eps >= 0
    ):
        raise ValueError(f"covariance_eps must be a number ≥ 0, got {covariance_eps!r}")
    X, Y = _two_sets(reference, reconstructed)
    mean_gap = X.mean(axis=0) - Y.mean(axis=0)
    cov_x = np.atleast_2d(np.cov(X, rowvar=False))
    cov_y = np.atleast_2d(np.cov(Y, rowvar=False))
    shift = covariance_eps * np.eye(cov_x.shape[0])
    root_x = _symmetric_sqrt(cov_x + shift)
    middle = root_x @ (cov_y + shift) @ root_x
    eigenvalues = np.linalg.eigvalsh((middle + middle.T) / 2)
    trace_root = float(np.sqrt(np.clip(eigenvalues, 0.0, None)).sum())
    value = float(mean_gap @ mean_gap) + float(np.trace(cov_x) + np.trace(cov_y)) - 2 * trace_root
    return max(0.0, value)


# -- pairwise sums ------------------------------------------------------------------------


def _rows_per_block(n_cols: int) -> int:
    return max(1, BLOCK_ELEMENTS // max(n_cols, 1))


def _squared_distances(
    block: np.ndarray, block_norms: np.ndarray, B: np.ndarray, b_norms: np.ndarray
) -> np.ndarray:
    """‖a − b‖² for every row pair, from the Gram matrix, rounding below 0 clipped."""
    squared: np.ndarray = block_norms[:, None] + b_norms[None, :] - 2.0 * (block @ B.T)
    np.maximum(squared, 0.0, out=squared)
    return squared


def _upper_pairs(points: np.ndarray) -> Iterator[np.ndarray]:
    """Yield the squared distances of the pairs i < j, one row block at a time (1-D arrays)."""
    n = points.shape[0]
    norms = (points * points).sum(axis=1)
    step = _rows_per_block(n)
    for start in range(0, n - 1, step):
        stop = min(start + step, n - 1)
        squared = _squared_distances(
            points[start:stop], norms[start:stop], points[start:], norms[start:]
        )
        rows = np.arange(stop - start)[:, None]
        cols = np.arange(n - start)[None, :]
        yield squared[cols > rows]


def _kernel_of_squared(squared: np.ndarray, kernel: Kernel, gamma: float) -> np.ndarray:
    if kernel == "gaussian":
        return np.exp(-gamma * squared)
    if kernel == "iq":
        return 1.0 / (1.0 + gamma * squared)
    return 1.0 / np.sqrt(1.0 + gamma * squared)


def _within_sum(points: np.ndarray, kernel: Kernel, gamma: float) -> float:
    """Σ_{i≠j} k(p_i, p_j) = 2 Σ_{i<j} k(p_i, p_j)."""
    return 2.0 * sum(
        float(_kernel_of_squared(values, kernel, gamma).sum()) for values in _upper_pairs(points)
    )


def _cross_sum(A: np.ndarray, B: np.ndarray, kernel: Kernel, gamma: float) -> float:
    total = 0.0
    a_norms = (A * A).sum(axis=1)
    b_norms = (B * B).sum(axis=1)
    step = _rows_per_block(B.shape[0])
    for start in range(0, A.shape[0], step):
        stop = start + step
        squared = _squared_distances(A[start:stop], a_norms[start:stop], B, b_norms)
        total += float(_kernel_of_squared(squared, kernel, gamma).sum())
    return total


# -- median pairwise distance --------------------------------------------------------------


def _sample_squared(points: np.ndarray, size: int) -> np.ndarray:
    """Squared distances of ``size`` seeded random pairs i ≠ j (uniform over pairs)."""
    n = points.shape[0]
    rng = np.random.default_rng(0)
    first = rng.integers(0, n, size)
    second = rng.integers(0, n - 1, size)
    second[second >= first] += 1
    out = np.empty(size)
    step = _rows_per_block(points.shape[1])
    for start in range(0, size, step):
        gap = points[first[start : start + step]] - points[second[start : start + step]]
        out[start : start + step] = (gap * gap).sum(axis=1)
    return out


def _order_statistics(points: np.ndarray, ranks: tuple[int, int]) -> tuple[float, float]:
    """The squared pairwise distances of the given 0-based ranks (ascending), exactly.

    A seeded sample of pairs brackets the ranks with a value interval [lo, hi]; one blocked
    pass over all pairs counts the values below lo, equal to lo, equal to hi and keeps the
    values strictly between (a small share of all pairs). If the interval missed a rank it is
    widened and the pass repeated; ties at the bounds are counted, never stored.
    """
    n = points.shape[0]
    n_pairs = n * (n - 1) // 2
    sample = np.sort(_sample_squared(points, min(MEDIAN_SAMPLE_PAIRS, n_pairs)))
    half_width = 6.0 * 0.5 / math.sqrt(sample.shape[0])  # six standard errors of a quantile
    while True:
        q_lo, q_hi = ranks[0] / n_pairs - half_width, (ranks[1] + 1) / n_pairs + half_width
        lo = -math.inf if q_lo <= 0 else float(np.quantile(sample, q_lo))
        hi = math.inf if q_hi >= 1 else float(np.quantile(sample, q_hi))
        below = equal_lo = equal_hi = 0
        inside: list[np.ndarray] = []
        for values in _upper_pairs(points):
            below += int((values < lo).sum())
            equal_lo += int((values == lo).sum())
            if hi != lo:
                equal_hi += int((values == hi).sum())
            inside.append(values[(values > lo) & (values < hi)])
        middle = np.sort(np.concatenate(inside)) if inside else np.empty(0)
        covered = equal_lo + middle.shape[0] + equal_hi
        if below <= ranks[0] and ranks[1] < below + covered:
            region = np.concatenate([np.full(equal_lo, lo), middle, np.full(equal_hi, hi)])
            return float(region[ranks[0] - below]), float(region[ranks[1] - below])
        half_width *= 4.0  # the sample misled us (very unlikely): widen and recount


def median_pairwise_distance(points: object) -> float:
    """Median Euclidean distance over all pairs i < j of the rows of ``points`` (exact).

    As ``np.median(scipy.spatial.distance.pdist(points))``: the mean of the two middle
    distances when the number of pairs is even. Up to :data:`MEDIAN_PDIST_PAIRS` pairs it is
    computed exactly that way; above, by an exact blocked selection (distances from the Gram
    matrix in float64, agreeing with ``pdist`` to rounding) that holds only a small share of
    the pairs in memory.
    """
    X = _embedding_set(points, "bandwidth")
    n = X.shape[0]
    n_pairs = n * (n - 1) // 2
    if n_pairs <= MEDIAN_PDIST_PAIRS:
        return float(np.median(pdist(X)))
    low, high = _order_statistics(X, ((n_pairs - 1) // 2, n_pairs // 2))
    return (math.sqrt(low) + math.sqrt(high)) / 2.0


# -- KAD and polynomial MMD --------------------------------------------------------------


def kernel_audio_distance(
    reference: object,
    reconstructed: object,
    *,
    kernel: Kernel = "gaussian",
    bandwidth: float | None = None,
    scale: float = KAD_SCALE,
    clamp: bool = True,
) -> float:
    """KAD: ``scale`` · unbiased MMD² with a distance kernel, clamped at 0 (module docstring).

    Parameters
    ----------
    reference, reconstructed:
        ``[m, d]`` and ``[n, d]`` finite embeddings (rows are points), m, n ≥ 2.
    kernel:
        ``"gaussian"`` exp(−γa), ``"iq"`` 1/(1 + γa), ``"imq"`` 1/√(1 + γa), with a the squared
        distance and γ = 1 / (2·bandwidth² + 1e-8).
    bandwidth:
        σ ≥ 0. None: :func:`median_pairwise_distance` of ``reconstructed`` (the second set).
    scale:
        Factor applied to MMD² (100, the KAD paper's; 1 for the plain estimate).
    clamp:
        Clamp the scaled value at 0 as MSEB does (False: the unbiased estimate, which can be
        slightly negative).
    """
    if kernel not in _KERNELS:
        raise ValueError(f"kernel must be one of {_KERNELS}, got {kernel!r}")
    X, Y = _two_sets(reference, reconstructed)
    if bandwidth is None:
        sigma = median_pairwise_distance(Y)
    elif isinstance(bandwidth, bool) or not (math.isfinite(bandwidth) and bandwidth >= 0):
        raise ValueError(f"bandwidth must be a number ≥ 0, got {bandwidth!r}")
    else:
        sigma = float(bandwidth)
    if isinstance(scale, bool) or not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a positive number, got {scale!r}")
    gamma = 1.0 / (2.0 * sigma**2 + KAD_GAMMA_EPS)
    m, n = X.shape[0], Y.shape[0]
    xx = _within_sum(X, kernel, gamma) / (m * (m - 1))
    yy = _within_sum(Y, kernel, gamma) / (n * (n - 1))
    xy = _cross_sum(X, Y, kernel, gamma) / (m * n)
    value = float(scale) * (xx + yy - 2.0 * xy)
    return float(max(0.0, value) if clamp else value)


def polynomial_mmd(reference: object, reconstructed: object, *, degree: int = 3) -> float:
    """Unbiased MMD² with the KID kernel (x·y / d + 1)^degree over the full sets (unscaled).

    ``reference`` and ``reconstructed``: ``[m, d]`` and ``[n, d]`` finite embeddings, m, n ≥ 2.
    Unbiased, so it can be slightly negative for sets from one distribution (not clamped).
    """
    if isinstance(degree, bool) or not isinstance(degree, int | np.integer) or degree < 1:
        raise ValueError(f"degree must be a positive integer, got {degree!r}")
    X, Y = _two_sets(reference, reconstructed)
    d = float(X.shape[1])

    def total(A: np.ndarray, B: np.ndarray, skip_diagonal: bool) -> float:
        result = 0.0
        step = _rows_per_block(B.shape[0])
        for start in range(0, A.shape[0], step):
            values = (A[start : start + step] @ B.T / d + 1.0) ** int(degree)
            if skip_diagonal:
                rows = np.arange(values.shape[0])
                values[rows, start + rows] = 0.0
            result += float(values.sum())
        return result

    m, n = X.shape[0], Y.shape[0]
    xx = total(X, X, True) / (m * (m - 1))
    yy = total(Y, Y, True) / (n * (n - 1))
    xy = total(X, Y, False) / (m * n)
    return float(xx + yy - 2 * xy)


# -- embedding MSE and the task's scores ---------------------------------------------------


def _result(name: str, per_clip: np.ndarray) -> MetricResult:
    return MetricResult(
        name=name,
        value=float(np.mean(per_clip)),
        n_evaluated=int(per_clip.shape[0]),
        per_clip=per_clip,
    )


def embedding_mse(
    reference: object,
    reconstructed: object,
    *,
    on_length_mismatch: Literal["skip", "raise"] = "skip",
) -> float:
    """Mean over examples of each example's mean squared frame difference (see the details).

    The value of :func:`embedding_mse_details`; NaN when every example was skipped.
    """
    return embedding_mse_details(
        reference, reconstructed, on_length_mismatch=on_length_mismatch
    ).value


def embedding_mse_details(
    reference: object,
    reconstructed: object,
    *,
    on_length_mismatch: Literal["skip", "raise"] = "skip",
) -> MetricResult:
    """Mean over examples of each example's mean squared frame difference, ≥ 0 (or NaN).

    Example i's MSE is the mean of (e_ref − e_rec)² over all T_i × d entries of its frames;
    the score is the mean over examples (each weighs 1, whatever its length).

    Parameters
    ----------
    reference, reconstructed:
        The same number of examples, each ``[T_i, d]`` frames (see :func:`frame_bag` for the
        accepted forms; a 2-D ``[n, d]`` array is n pooled examples).
    on_length_mismatch:
        ``"skip"`` (MSEB's rule): an example whose two sequences differ in frame count is left
        out and counted (``n_skipped``); ``"raise"``: a ValueError naming the examples.
        Differing embedding dimensions are always an error.

    Returns
    -------
    MetricResult
        ``value`` (NaN when every example was skipped: the score is undefined), ``per_clip``
        (the evaluated examples' MSEs, in order), ``n_evaluated`` and ``n_skipped``.
    """
    if on_length_mismatch not in ("skip", "raise"):
        raise ValueError(
            f"on_length_mismatch must be 'skip' or 'raise', got {on_length_mismatch!r}"
        )
    refs = _examples(reference, "reference")
    recs = _examples(reconstructed, "reconstructed")
    if len(refs) != len(recs):
        raise ValueError(
            f"got {len(refs)} reference and {len(recs)} reconstructed examples; they must "
            "match example for example"
        )
    if refs[0].shape[1] != recs[0].shape[1]:
        raise ValueError(
            f"reference embeddings have dimension {refs[0].shape[1]}, reconstructed "
            f"{recs[0].shape[1]}"
        )
    mismatched = [i for i, (a, b) in enumerate(zip(refs, recs, strict=True)) if a.shape != b.shape]
    if mismatched and on_length_mismatch == "raise":
        first = mismatched[0]
        raise ValueError(
            f"{len(mismatched)} example(s) have different frame counts (indices: "
            f"{describe_clips(mismatched)}; example {first}: reference {refs[first].shape[0]}, "
            f"reconstructed {recs[first].shape[0]})"
        )
    skip = set(mismatched)
    per_example = np.array(
        [
            float(((a - b) ** 2).mean())
            for i, (a, b) in enumerate(zip(refs, recs, strict=True))
            if i not in skip
        ],
        dtype=np.float64,
    )
    value = float(per_example.mean()) if per_example.size else math.nan
    return MetricResult(
        name="embedding_mse",
        value=value,
        n_evaluated=int(per_example.shape[0]),
        n_skipped=len(mismatched),
        per_clip=per_example,
    )


def reconstruction_embedding_scores(
    reference: object, reconstructed: object, *, kernel: Kernel = "gaussian"
) -> dict[str, Any]:
    """FAD, KAD and embedding MSE of paired frame sequences, as MSEB's evaluator computes them.

    Parameters
    ----------
    reference, reconstructed:
        Example i of each is the reference encoder's ``[T_i, d]`` frames of original clip i
        and of its reconstruction (forms as :func:`frame_bag`; pooled ``[n, d]`` arrays are
        one-frame examples).
    kernel:
        KAD's kernel (MSEB's default ``"gaussian"``).

    Returns
    -------
    dict
        ``fad`` (over the frame bags, ε = :data:`FAD_COVARIANCE_EPS`), ``kad``
        (100 · MMD², bandwidth the median pairwise distance of the reconstructed frames,
        clamped at 0), ``embedding_mse`` (None when no example has equal frame counts),
        ``kad_bandwidth``, ``n_examples``, ``n_frames_reference``,
        ``n_frames_reconstructed``, ``n_mse_examples``, ``n_mse_skipped``.
    """
    refs = _examples(reference, "reference")
    recs = _examples(reconstructed, "reconstructed")
    if len(refs) != len(recs):
        raise ValueError(
            f"got {len(refs)} reference and {len(recs)} reconstructed examples; they must "
            "match example for example"
        )
    X = np.concatenate(refs, axis=0)
    Y = np.concatenate(recs, axis=0)
    bandwidth = median_pairwise_distance(Y)
    mse = embedding_mse_details(refs, recs)
    return {
        "fad": frechet_audio_distance(X, Y, covariance_eps=FAD_COVARIANCE_EPS),
        "kad": kernel_audio_distance(X, Y, kernel=kernel, bandwidth=bandwidth),
        "embedding_mse": None if math.isnan(mse.value) else mse.value,
        "kad_bandwidth": bandwidth,
        "n_examples": len(refs),
        "n_frames_reference": int(X.shape[0]),
        "n_frames_reconstructed": int(Y.shape[0]),
        "n_mse_examples": mse.n_evaluated,
        "n_mse_skipped": mse.n_skipped,
    }


# -- waveform metrics ----------------------------------------------------------------------


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


def _si_sdr_one(
    reference: np.ndarray, estimate: np.ndarray, position: int, zero_mean: bool
) -> float:
    s = reference - reference.mean() if zero_mean else reference
    peak = float(np.abs(reference).max())
    if float(np.abs(s).max()) <= SILENCE_RATIO * peak or peak == 0.0:
        raise ValueError(
            f"reference clip {position} is silent (constant, no energy after removing its "
            "mean): SI-SDR is undefined"
            if zero_mean
            else f"reference clip {position} is silent (all zeros): SI-SDR is undefined"
        )
    s_hat = estimate - estimate.mean() if zero_mean else estimate
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


def si_sdr(references: object, estimates: object, *, zero_mean: bool = True) -> float:
    """Mean scale-invariant SDR in dB over clips: the value of :func:`si_sdr_details`."""
    return si_sdr_details(references, estimates, zero_mean=zero_mean).value


def si_sdr_details(
    references: object, estimates: object, *, zero_mean: bool = True
) -> MetricResult:
    """Mean scale-invariant SDR in dB over clips (see the module docstring).

    Parameters
    ----------
    references, estimates:
        One waveform each (1-D), clips × samples (2-D), or sequences of 1-D waveforms; clip i
        of both must have the same length.
    zero_mean:
        Remove each signal's mean first (default; the score is then offset-invariant too).
        False: the raw signals. Implementations differ here (some call the mean-removed form
        SI-SNR), so a comparison with published figures should say which was used.

    Raises
    ------
    ValueError
        A silent reference (max |s − mean(s)| ≤ :data:`SILENCE_RATIO` · max |s|, e.g. all
        zeros or constant), differing lengths, NaN/inf samples, empty input.
    """
    pairs = _paired_clips(references, estimates, "estimates")
    per_clip = np.array(
        [_si_sdr_one(ref, est, i, bool(zero_mean)) for i, (ref, est) in enumerate(pairs)]
    )
    return _result("si_sdr", per_clip)


def log_mel_distance(
    references: object,
    reconstructions: object,
    sample_rate: int,
    *,
    n_fft: int = 512,
    hop: int = 256,
    n_mels: int = 128,
    fmax: float | None = None,
) -> float:
    """Mean absolute log-mel difference in dB: the value of :func:`log_mel_distance_details`."""
    return log_mel_distance_details(
        references, reconstructions, sample_rate, n_fft=n_fft, hop=hop, n_mels=n_mels, fmax=fmax
    ).value


def log_mel_distance_details(
    references: object,
    reconstructions: object,
    sample_rate: int,
    *,
    n_fft: int = 512,
    hop: int = 256,
    n_mels: int = 128,
    fmax: float | None = None,
) -> MetricResult:
    """Mean absolute log-mel difference in dB, averaged over frames, bands, then clips; ≥ 0.

    Each waveform goes through ``log_mel_spectrogram(wave, sample_rate, n_fft=n_fft, hop=hop,
    n_mels=n_mels, fmax=fmax)`` (dB, 80 dB floor below each clip's own maximum); the clip's
    distance is mean |L_ref − L_rec| over the ``[frames, n_mels]`` entries. ``fmax`` None
    means min(8000, sample_rate / 2). Reference and reconstruction of a clip must have the same
    number of samples (trim a codec's padding first).
    """
    from audiobench.spectrogram import log_mel_spectrogram

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
        mel_ref, mel_rec = (
            log_mel_spectrogram(
                x, int(sample_rate), n_fft=n_fft, hop=hop, n_mels=n_mels, fmax=top
            ).astype(np.float64)
            for x in (ref, rec)
        )
        per_clip[position] = float(np.abs(mel_ref - mel_rec).mean())
    return _result("log_mel_distance", per_clip)


def per_clip_summary(values: Sequence[float] | np.ndarray) -> dict[str, float]:
    """Mean, population std, median, min and max of per-clip values (at least one)."""
    array = np.asarray(values, dtype=np.float64)
    return {
        "mean": float(array.mean()),
        "std": float(array.std()),
        "median": float(np.median(array)),
        "min": float(array.min()),
        "max": float(array.max()),
    }


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
