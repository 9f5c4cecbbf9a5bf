"""FAD, KAD, polynomial MMD, embedding MSE, the task's scores, SI-SDR, log-mel distance, bitrate.

FAD and KAD follow MSEB's reconstruction evaluator; the independent implementations below
(scipy ``sqrtm``, double loops over pairs, ``np.median`` of an explicit distance list) are
written from the definitions, not from the module under test.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
import scipy.linalg

from audiobench.metrics import (
    InvalidEmbeddingsError,
    bits_per_second,
    embedding_mse,
    embedding_mse_details,
    frame_bag,
    frechet_audio_distance,
    kernel_audio_distance,
    log_mel_distance,
    log_mel_distance_details,
    median_pairwise_distance,
    per_clip_summary,
    polynomial_mmd,
    reconstruction,
    reconstruction_embedding_scores,
    si_sdr,
    si_sdr_details,
)
from audiobench.models.baselines import log_mel_spectrogram

GAMMA_EPS = 1e-8  # γ = 1 / (2σ² + 1e-8), as the KAD paper's code and MSEB


# -- independent implementations -----------------------------------------------------------


def _fad_sqrtm(X: np.ndarray, Y: np.ndarray, eps: float = 0.0) -> float:
    """The usual implementation: scipy.linalg.sqrtm of the (regularised) product, real part."""
    cov_x, cov_y = np.cov(X, rowvar=False), np.cov(Y, rowvar=False)
    shift = eps * np.eye(cov_x.shape[0])
    root = scipy.linalg.sqrtm((cov_x + shift) @ (cov_y + shift)).real
    gap = X.mean(0) - Y.mean(0)
    return max(0.0, float(gap @ gap + np.trace(cov_x) + np.trace(cov_y) - 2 * np.trace(root)))


def _fad_eigvals(X: np.ndarray, Y: np.ndarray) -> float:
    """Tr((Σx Σy)^½) as Σ √λ over the (real, ≥ 0 up to rounding) eigenvalues of Σx Σy."""
    cov_x, cov_y = np.cov(X, rowvar=False), np.cov(Y, rowvar=False)
    eigenvalues = np.clip(np.linalg.eigvals(cov_x @ cov_y).real, 0, None)
    gap = X.mean(0) - Y.mean(0)
    return float(gap @ gap + np.trace(cov_x) + np.trace(cov_y) - 2 * np.sqrt(eigenvalues).sum())


def _loop_median(points: np.ndarray) -> float:
    distances = [
        math.dist(points[i], points[j])
        for i in range(len(points))
        for j in range(i + 1, len(points))
    ]
    return float(np.median(distances))


def _loop_mmd(
    X: np.ndarray, Y: np.ndarray, kernel: Callable[[np.ndarray, np.ndarray], float]
) -> float:
    m, n = len(X), len(Y)
    xx = sum(kernel(X[i], X[j]) for i in range(m) for j in range(m) if i != j) / (m * (m - 1))
    yy = sum(kernel(Y[i], Y[j]) for i in range(n) for j in range(n) if i != j) / (n * (n - 1))
    xy = sum(kernel(x, y) for x in X for y in Y) / (m * n)
    return xx + yy - 2 * xy


def _loop_kad(X: np.ndarray, Y: np.ndarray, name: str = "gaussian") -> float:
    """100 · unbiased MMD², σ the median pairwise distance of Y, clamped at 0."""
    gamma = 1 / (2 * _loop_median(Y) ** 2 + GAMMA_EPS)
    shapes = {
        "gaussian": lambda a: math.exp(-gamma * a),
        "iq": lambda a: 1 / (1 + gamma * a),
        "imq": lambda a: 1 / math.sqrt(1 + gamma * a),
    }
    shape = shapes[name]
    return max(0.0, 100 * _loop_mmd(X, Y, lambda a, b: shape(float((a - b) @ (a - b)))))


# -- FAD -------------------------------------------------------------------------------------


def test_hand_computed_fad() -> None:
    # 1-D: X = {0, 2}: mean 1, variance (ddof 1) 2; Y = {1, 5}: mean 3, variance 8.
    # FAD = (1 − 3)² + 2 + 8 − 2 √(2 · 8) = 4 + 10 − 8 = 6  (= Δμ² + (σ_x − σ_y)²).
    assert frechet_audio_distance([[0.0], [2.0]], [[1.0], [5.0]]) == pytest.approx(6.0)
    # With ε inside the root only: 4 + 10 − 2 √((2 + ε)(8 + ε)).
    eps = 1e-2
    assert frechet_audio_distance(
        [[0.0], [2.0]], [[1.0], [5.0]], covariance_eps=eps
    ) == pytest.approx(14 - 2 * math.sqrt((2 + eps) * (8 + eps)), rel=1e-12)
    # 2-D: X = ±e1, ±e2: mean 0, covariance (1/3) · 2 I = (2/3) I; Y = 2X + (1, 1):
    # mean (1, 1), covariance (8/3) I. FAD = 2 + 2 (√(2/3) − √(8/3))² = 2 + 2 · 2/3 = 10/3.
    X = np.array([[1.0, 0], [-1, 0], [0, 1], [0, -1]])
    assert frechet_audio_distance(X, 2 * X + 1) == pytest.approx(10 / 3)
    assert frechet_audio_distance(X, X) == 0.0
    # ε lowers the root term's complement: identical sets give −2 d ε before the clamp at 0.
    assert frechet_audio_distance(X, X, covariance_eps=1e-6) == 0.0


def test_fad_matches_references() -> None:
    rng = np.random.default_rng(0)
    for _ in range(3):
        X = rng.normal(size=(60, 6)) @ rng.normal(size=(6, 6))
        Y = rng.normal(size=(50, 6)) * 1.5 + 0.3
        expected = _fad_sqrtm(X, Y)
        assert frechet_audio_distance(X, Y) == pytest.approx(expected, rel=1e-7)
        assert frechet_audio_distance(Y, X) == pytest.approx(expected, rel=1e-7)
        assert frechet_audio_distance(X, Y, covariance_eps=1e-6) == pytest.approx(
            _fad_sqrtm(X, Y, 1e-6), rel=1e-7
        )
    # Fewer points than dimensions: both covariances singular; no ε needed, no imaginary part.
    X, Y = rng.normal(size=(5, 12)), rng.normal(size=(7, 12)) + 0.2
    value = frechet_audio_distance(X, Y)
    assert math.isfinite(value) and value > 0
    assert value == pytest.approx(_fad_eigvals(X, Y), rel=1e-6)
    # Here MSEB's ε matters at the order of √ε per missing direction, not ε.
    regularised = frechet_audio_distance(X, Y, covariance_eps=1e-6)
    assert regularised == pytest.approx(_fad_sqrtm(X, Y, 1e-6), rel=1e-6)
    assert 1e-4 < value - regularised < 1.0


# -- median pairwise distance -----------------------------------------------------------------


def test_hand_computed_median_pairwise_distance() -> None:
    # {0, 1, 3}: distances 1, 3, 2 -> 2. {0, 1, 3, 7}: 1 3 7 2 6 4 -> (3 + 4) / 2 = 3.5.
    assert median_pairwise_distance([[0.0], [1.0], [3.0]]) == 2.0
    assert median_pairwise_distance([[0.0], [1.0], [3.0], [7.0]]) == 3.5
    # 3-4-5 triangle: distances 3, 4, 5 -> 4.
    assert median_pairwise_distance([[0.0, 0.0], [3.0, 0.0], [0.0, 4.0]]) == 4.0


@pytest.mark.parametrize("sample_pairs", [1 << 20, 5, 2])
def test_blocked_median_selection_is_exact(
    monkeypatch: pytest.MonkeyPatch, sample_pairs: int
) -> None:
    # Force the blocked selection (several blocks) on sets small enough for a loop; a tiny
    # sample makes the bracket miss, which must widen and still give the exact answer.
    monkeypatch.setattr(reconstruction, "MEDIAN_PDIST_PAIRS", 0)
    monkeypatch.setattr(reconstruction, "BLOCK_ELEMENTS", 64)
    monkeypatch.setattr(reconstruction, "MEDIAN_SAMPLE_PAIRS", sample_pairs)
    rng = np.random.default_rng(5)
    odd = rng.normal(size=(31, 4))  # 465 pairs: one middle value
    even = rng.normal(size=(32, 3))  # 496 pairs: two middle values
    grid = rng.integers(0, 3, size=(40, 2)).astype(float)  # many tied and zero distances
    for points in (odd, even, grid):
        assert median_pairwise_distance(points) == pytest.approx(_loop_median(points), rel=1e-12)


# -- KAD --------------------------------------------------------------------------------------


def test_hand_computed_kad() -> None:
    # X = {0, 1}, Y = {1, 2}; σ = median distance of Y = 1; γ = 1 / (2 + 1e-8) ≈ 1/2.
    # XX, YY off-diagonal: e^{−γ}; XY: (e^{−γ} + e^{−4γ} + 1 + e^{−γ}) / 4.
    # MMD² = 2 e^{−γ} − (2 e^{−γ} + e^{−4γ} + 1) / 2 = e^{−γ} − e^{−4γ} / 2 − 1/2 ≈ 0.0389.
    X, Y = np.array([[0.0], [1.0]]), np.array([[1.0], [2.0]])
    g = 1 / (2 + GAMMA_EPS)
    mmd = math.exp(-g) - math.exp(-4 * g) / 2 - 0.5
    assert kernel_audio_distance(X, Y) == pytest.approx(100 * mmd, rel=1e-12)
    assert kernel_audio_distance(X, Y, scale=1.0) == pytest.approx(mmd, rel=1e-12)
    # The bandwidth comes from the second set only: with the sets swapped σ = 1 still here, but
    # X = {0, 3} has σ = 3 as reference and changes nothing, as second set it changes KAD.
    Z = np.array([[0.0], [3.0]])
    assert kernel_audio_distance(Z, Y) == pytest.approx(
        kernel_audio_distance(Z, Y, bandwidth=1.0), rel=1e-12
    )
    assert kernel_audio_distance(Y, Z) == pytest.approx(
        kernel_audio_distance(Y, Z, bandwidth=3.0), rel=1e-12
    )
    # Identical sets {0, 2}: σ = 2, k = e^{−4/(8+1e-8)}; MMD² = k − 1 < 0: clamped at 0.
    W = np.array([[0.0], [2.0]])
    k = math.exp(-4 / (8 + GAMMA_EPS))
    assert kernel_audio_distance(W, W) == 0.0
    assert kernel_audio_distance(W, W, clamp=False) == pytest.approx(100 * (k - 1), rel=1e-12)


def test_kad_matches_loops(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reconstruction, "BLOCK_ELEMENTS", 40)  # several row blocks
    rng = np.random.default_rng(1)
    X, Y = rng.normal(size=(14, 4)), rng.normal(size=(11, 4)) * 1.3 + 0.5
    for name in ("gaussian", "iq", "imq"):
        assert kernel_audio_distance(X, Y, kernel=name) == pytest.approx(
            _loop_kad(X, Y, name), rel=1e-10
        )
    sigma = 1.7
    gamma = 1 / (2 * sigma**2 + GAMMA_EPS)
    plain = _loop_mmd(X, Y, lambda a, b: math.exp(-gamma * float((a - b) @ (a - b))))
    assert kernel_audio_distance(X, Y, bandwidth=sigma, scale=1, clamp=False) == pytest.approx(
        plain, rel=1e-10
    )


def test_kad_over_one_distribution_is_clamped_noise() -> None:
    rng = np.random.default_rng(2)
    raw = [
        kernel_audio_distance(rng.normal(size=(40, 3)), rng.normal(size=(40, 3)), clamp=False)
        for _ in range(10)
    ]
    assert max(abs(v) for v in raw) < 5  # ×100 of an MMD² near 0
    assert min(raw) < 0  # unbiased: some draws are negative...
    clamped = [
        kernel_audio_distance(rng.normal(size=(40, 3)), rng.normal(size=(40, 3))) for _ in range(10)
    ]
    assert min(clamped) >= 0  # ...and the reported figure never is
    assert kernel_audio_distance(rng.normal(size=(40, 3)), rng.normal(size=(40, 3)) + 1) > 10


# -- polynomial MMD ---------------------------------------------------------------------------


def test_hand_computed_polynomial_mmd() -> None:
    # d = 1, k(x, y) = (x y + 1)³, X = {0, 1}, Y = {1, 2}:
    # XX off-diagonal: k(0,1) = 1 (twice) -> 2 / (2·1) = 1
    # YY: k(1,2) = 27 (twice) -> 54 / 2 = 27
    # XY: k(0,1) + k(0,2) + k(1,1) + k(1,2) = 1 + 1 + 8 + 27 = 37 -> 37 / 4
    # MMD² = 1 + 27 − 2 · 37/4 = 9.5
    X, Y = np.array([[0.0], [1.0]]), np.array([[1.0], [2.0]])
    assert polynomial_mmd(X, Y) == pytest.approx(9.5)


def test_polynomial_mmd_matches_loops(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reconstruction, "BLOCK_ELEMENTS", 40)
    rng = np.random.default_rng(1)
    X, Y = rng.normal(size=(14, 4)), rng.normal(size=(11, 4)) + 0.5
    d = X.shape[1]
    assert polynomial_mmd(X, Y) == pytest.approx(_loop_mmd(X, Y, lambda a, b: (a @ b / d + 1) ** 3))
    assert polynomial_mmd(X, Y, degree=2) == pytest.approx(
        _loop_mmd(X, Y, lambda a, b: (a @ b / d + 1) ** 2)
    )
    # Unbiased and unclamped: some draws from one distribution are negative.
    values = [polynomial_mmd(rng.normal(size=(30, 3)), rng.normal(size=(30, 3))) for _ in range(10)]
    assert min(values) < 0 < max(values)


# -- embedding MSE and the task's scores --------------------------------------------------------


def test_embedding_mse_of_pooled_embeddings() -> None:
    # Clip 0: ((1)² + (1)²) / 2 = 1; clip 1: (0 + 2²) / 2 = 2; mean 1.5.
    ref = np.array([[0.0, 0.0], [1.0, 1.0]])
    rec = np.array([[1.0, 1.0], [1.0, 3.0]])
    assert embedding_mse(ref, rec) == pytest.approx(1.5)
    details = embedding_mse_details(ref, rec)
    np.testing.assert_allclose(details.per_clip, [1.0, 2.0])
    assert details.n_evaluated == 2 and details.n_skipped == 0
    assert embedding_mse(ref[:1], ref[:1]) == 0.0  # one clip is enough


def test_embedding_mse_over_frames() -> None:
    # Example 0: 2 frames × 2 dims, differences (1, 0), (0, 3): (1 + 9) / 4 = 2.5.
    # Example 1: 1 frame, differences (2, 2): 4. Mean over examples (not frames): 3.25.
    ref = [np.array([[0.0, 0.0], [1.0, 1.0]]), np.array([0.0, 0.0])]
    rec = [np.array([[1.0, 0.0], [1.0, 4.0]]), np.array([[2.0, 2.0]])]
    assert embedding_mse(ref, rec) == pytest.approx(3.25)
    # A 3-D array is n examples of T frames.
    stacked = np.stack([ref[0], ref[0] + 1])
    assert embedding_mse(stacked, stacked + 2) == pytest.approx(4.0)
    # Differing frame counts: MSEB skips the example and averages over the rest.
    rec_short = [rec[0][:1], rec[1]]
    details = embedding_mse_details(ref, rec_short)
    assert details.value == pytest.approx(4.0)
    assert details.n_evaluated == 1 and details.n_skipped == 1
    np.testing.assert_allclose(details.per_clip, [4.0])
    with pytest.raises(ValueError, match=r"different frame counts \(indices: 0; example 0: "):
        embedding_mse(ref, rec_short, on_length_mismatch="raise")
    # Nothing comparable: undefined.
    none = embedding_mse_details([ref[0]], [rec[0][:1]])
    assert math.isnan(none.value) and none.n_skipped == 1 and none.per_clip.size == 0


def test_frame_bag() -> None:
    bag = frame_bag([np.ones((3, 2)), np.zeros(2), np.full((2, 2), 5.0)])
    assert bag.shape == (6, 2) and bag.dtype == np.float64
    np.testing.assert_array_equal(bag[3], [0.0, 0.0])
    np.testing.assert_array_equal(frame_bag(np.ones((4, 3))), np.ones((4, 3)))
    assert frame_bag(np.ones((2, 5, 3))).shape == (10, 3)


def test_bag_of_frames_sees_what_pooling_hides() -> None:
    # Each original clip's frames are (+1, −1) around 0, each reconstruction's (+3, −3): the
    # per-clip means agree, so pooled FAD is 0, but the frame distributions differ.
    rng = np.random.default_rng(6)
    centres = rng.normal(size=(6, 2))
    originals = [np.stack([c + 1, c - 1]) for c in centres]
    rebuilt = [np.stack([c + 3, c - 3]) for c in centres]
    pooled = frechet_audio_distance([o.mean(0) for o in originals], [r.mean(0) for r in rebuilt])
    assert pooled == pytest.approx(0.0, abs=1e-12)
    scores = reconstruction_embedding_scores(originals, rebuilt)
    assert scores["fad"] > 1.0 and scores["kad"] > 0


def _evaluator_by_hand(
    originals: list[np.ndarray], rebuilt: list[np.ndarray]
) -> tuple[float, float, float | None]:
    """FAD, KAD and MSE written from MSEB's evaluator's description, with loops and scipy."""
    pairs = zip(originals, rebuilt, strict=True)
    mse = [float(np.mean((a - b) ** 2)) for a, b in pairs if a.shape == b.shape]
    X, Y = np.concatenate(originals), np.concatenate(rebuilt)
    return _fad_sqrtm(X, Y, 1e-6), _loop_kad(X, Y), (float(np.mean(mse)) if mse else None)


def test_reconstruction_scores_match_an_independent_implementation() -> None:
    rng = np.random.default_rng(7)
    lengths = [3, 5, 4, 2, 6]
    originals = [rng.normal(size=(t, 4)) for t in lengths]
    rebuilt = [o * 0.8 + 0.1 * rng.normal(size=o.shape) + 0.2 for o in originals]
    rebuilt[2] = rebuilt[2][:3]  # one reconstruction lost a frame: no MSE for it
    fad, kad, mse = _evaluator_by_hand(originals, rebuilt)
    scores = reconstruction_embedding_scores(originals, rebuilt)
    assert scores["fad"] == pytest.approx(fad, rel=1e-7)
    assert scores["kad"] == pytest.approx(kad, rel=1e-9)
    assert scores["embedding_mse"] == pytest.approx(mse, rel=1e-12)
    assert scores["kad_bandwidth"] == pytest.approx(_loop_median(np.concatenate(rebuilt)))
    assert scores["n_examples"] == 5
    assert scores["n_frames_reference"] == 20 and scores["n_frames_reconstructed"] == 19
    assert scores["n_mse_examples"] == 4 and scores["n_mse_skipped"] == 1
    # Pooled embeddings are one-frame examples: the same functions apply.
    pooled = reconstruction_embedding_scores(
        np.array([o.mean(0) for o in originals]), np.array([r.mean(0) for r in rebuilt])
    )
    assert pooled["n_frames_reference"] == 5 and pooled["n_mse_examples"] == 5
    mismatched = reconstruction_embedding_scores([originals[0]], [originals[0][:2]])
    assert mismatched["embedding_mse"] is None and mismatched["n_mse_skipped"] == 1


def test_hand_computed_si_sdr() -> None:
    # s = (1, −1, 1, −1), estimate = 2s + (1, 1, −1, −1) (noise orthogonal to s, zero mean):
    # α = ⟨ŝ, s⟩ / ‖s‖² = 8 / 4 = 2, target energy ‖2s‖² = 16, noise energy 4 -> 10 log10 4.
    s = np.array([1.0, -1, 1, -1])
    estimate = 2 * s + np.array([1.0, 1, -1, -1])
    assert si_sdr(s, estimate) == pytest.approx(10 * math.log10(4))
    # Scale- and offset-invariant (both signals are made zero-mean).
    assert si_sdr(s + 0.5, 5 * estimate + 3) == pytest.approx(10 * math.log10(4))
    # A scaled copy is exact: +inf; a silent or orthogonal estimate: −inf.
    assert si_sdr(s, 0.5 * s) == math.inf
    assert si_sdr(s, np.zeros(4)) == -math.inf
    assert si_sdr(s, np.array([1.0, 1, -1, -1])) == -math.inf
    details = si_sdr_details([s, s], [estimate, 0.5 * s])
    assert details.per_clip[0] == pytest.approx(10 * math.log10(4))
    assert details.per_clip[1] == math.inf


def test_si_sdr_matches_the_correlation_form() -> None:
    # With ρ the correlation of the zero-mean signals, SI-SDR = 10 log10(ρ² / (1 − ρ²)).
    rng = np.random.default_rng(3)
    refs = rng.normal(size=(5, 400))
    ests = 0.7 * refs + 0.4 * rng.normal(size=(5, 400)) + 0.1
    expected = []
    for ref, est in zip(refs, ests, strict=True):
        rho = np.corrcoef(ref, est)[0, 1]
        expected.append(10 * math.log10(rho**2 / (1 - rho**2)))
    details = si_sdr_details(refs, ests)
    np.testing.assert_allclose(details.per_clip, expected, rtol=1e-9)
    assert details.value == pytest.approx(np.mean(expected))
    # Clips of different lengths as a list.
    assert si_sdr([refs[0], refs[1][:100]], [ests[0], ests[1][:100]]) == pytest.approx(
        (si_sdr(refs[0], ests[0]) + si_sdr(refs[1][:100], ests[1][:100])) / 2
    )


def test_log_mel_distance() -> None:
    rng = np.random.default_rng(4)
    wave = rng.normal(size=4000) * 0.1
    assert log_mel_distance(wave, wave, 16000) == 0.0
    # Doubling the amplitude raises every power by 4, every dB value by 10 log10 4 (the 80 dB
    # floor is relative to the clip's own maximum, so it moves too): distance 6.0206 dB.
    assert log_mel_distance(wave, 2 * wave, 16000) == pytest.approx(10 * math.log10(4), abs=1e-3)
    other = rng.normal(size=4000) * 0.1
    expected = np.abs(
        log_mel_spectrogram(wave, 16000).astype(np.float64)
        - log_mel_spectrogram(other, 16000).astype(np.float64)
    ).mean()
    assert log_mel_distance([wave], [other], 16000) == pytest.approx(expected)
    details = log_mel_distance_details([wave, wave], [other, 2 * wave], 16000)
    np.testing.assert_allclose(details.per_clip, [expected, 10 * math.log10(4)], atol=1e-3)
    # fmax defaults to min(8000, sample_rate / 2).
    assert log_mel_distance(wave, other, 8000, n_mels=40) == pytest.approx(
        log_mel_distance(wave, other, 8000, n_mels=40, fmax=4000.0)
    )


def test_bits_per_second() -> None:
    assert bits_per_second(8, 1024, 75) == 6000.0  # EnCodec 24 kHz at 6 kbit/s: 8 · 10 · 75
    assert bits_per_second(2, 1024, 50) == 1000.0
    assert bits_per_second(1, 1, 50) == 0.0
    assert bits_per_second(4, 2048, 12.5) == pytest.approx(4 * 11 * 12.5)
    with pytest.raises(ValueError, match="n_codebooks"):
        bits_per_second(0, 1024, 75)
    with pytest.raises(ValueError, match="codebook_size"):
        bits_per_second(8, 1024.0, 75)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="frame_rate"):
        bits_per_second(8, 1024, float("inf"))
    with pytest.raises(ValueError, match="frame_rate"):
        bits_per_second(8, 1024, 0)


def test_si_sdr_without_mean_removal() -> None:
    # s = (1, 2), ŝ = (2, 1) raw: α = 4/5, target (0.8, 1.6) energy 3.2, noise (1.2, −0.6)
    # energy 1.8 -> 10 log10(3.2 / 1.8). Zero-mean: (−½, ½) and (½, −½) are exact (α = −1).
    s, estimate = np.array([1.0, 2.0]), np.array([2.0, 1.0])
    assert si_sdr(s, estimate, zero_mean=False) == pytest.approx(10 * math.log10(3.2 / 1.8))
    assert si_sdr(s, estimate) == math.inf
    with pytest.raises(ValueError, match=r"reference clip 0 is silent \(all zeros\)"):
        si_sdr(np.zeros(2), estimate, zero_mean=False)
    assert si_sdr(np.full(3, 0.5), np.array([1.0, 0.0, 2.0]), zero_mean=False) > -math.inf


def test_distribution_errors() -> None:
    X = np.random.default_rng(0).normal(size=(5, 3))
    with pytest.raises(ValueError, match="differ in dimension: reference 3, reconstructed 2"):
        frechet_audio_distance(X, X[:, :2])
    with pytest.raises(ValueError, match="reference embeddings: need at least 2 clips"):
        frechet_audio_distance(X[:1], X)
    with pytest.raises(ValueError, match="covariance_eps"):
        frechet_audio_distance(X, X, covariance_eps=-1.0)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(InvalidEmbeddingsError, match=r"reconstructed embeddings: .*indices: 3"):
        kernel_audio_distance(X, bad)
    with pytest.raises(ValueError, match="kernel"):
        kernel_audio_distance(X, X, kernel="polynomial")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="bandwidth"):
        kernel_audio_distance(X, X, bandwidth=-1.0)
    with pytest.raises(ValueError, match="scale"):
        kernel_audio_distance(X, X, scale=0.0)
    with pytest.raises(ValueError, match="degree"):
        polynomial_mmd(X, X, degree=0)
    # A collapsed reconstructed set has σ = 0: KAD is still defined (γ = 1e8), as in MSEB.
    assert kernel_audio_distance(X, np.ones((3, 3))) > 0
    with pytest.raises(ValueError, match="example 1: frames must be a non-empty"):
        reconstruction_embedding_scores([X, np.empty((0, 3))], [X, X])
    with pytest.raises(ValueError, match="2 reference and 1 reconstructed examples"):
        reconstruction_embedding_scores([X, X], [X])
    with pytest.raises(ValueError, match="differ in embedding dimension"):
        frame_bag([X, X[:, :2]])


def test_per_clip_errors() -> None:
    with pytest.raises(ValueError, match="reference embeddings have dimension 2, reconstructed 3"):
        embedding_mse(np.ones((2, 2)), np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"reconstructed embeddings have NaN.*examples: 1"):
        embedding_mse(np.ones((2, 2)), np.array([[1.0, 1.0], [np.nan, 1.0]]))
    with pytest.raises(ValueError, match="2 reference and 1 reconstructed examples"):
        embedding_mse(np.ones((2, 2)), np.ones((1, 2)))
    s = np.array([1.0, -1.0, 1.0, -1.0])
    with pytest.raises(ValueError, match="reference clip 1 is silent"):
        si_sdr([s, np.zeros(4)], [s, s])
    with pytest.raises(ValueError, match="reference clip 0 is silent"):
        si_sdr(np.full(4, 0.1), s)  # constant: no energy once the mean is removed
    with pytest.raises(ValueError, match="clip 0: reference has 4 samples, estimates 3"):
        si_sdr(s, s[:3])
    with pytest.raises(ValueError, match="2 references and 1 estimates"):
        si_sdr([s, s], [s])
    with pytest.raises(ValueError, match=r"estimates\[0\] has NaN"):
        si_sdr(s, np.array([1.0, np.nan, 0.0, 0.0]))
    with pytest.raises(ValueError, match="empty"):
        si_sdr([], [])
    with pytest.raises(ValueError, match="non-empty 1-D"):
        si_sdr([np.array([])], [np.array([])])
    with pytest.raises(ValueError, match="trim or pad"):
        log_mel_distance(np.ones(100), np.ones(90), 16000)
    with pytest.raises(ValueError, match="sample_rate"):
        log_mel_distance(np.ones(100), np.ones(100), 0)
    with pytest.raises(ValueError, match="fmax"):
        log_mel_distance(np.ones(100), np.ones(100), 8000, fmax=6000.0)


def test_per_clip_summary() -> None:
    summary = per_clip_summary([3.0, 1.0, 2.0, 6.0])
    assert summary["std"] == pytest.approx(np.std([3.0, 1.0, 2.0, 6.0]))
    assert [summary[k] for k in ("mean", "median", "min", "max")] == [3.0, 2.5, 1.0, 6.0]
    assert per_clip_summary(np.array([-4.0]))["std"] == 0.0
