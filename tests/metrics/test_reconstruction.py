"""FAD, KAD, embedding MSE, SI-SDR, log-mel distance, bitrate."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg

from audiobench.metrics import (
    InvalidEmbeddingsError,
    bits_per_second,
    embedding_mse,
    frechet_audio_distance,
    kernel_audio_distance,
    log_mel_distance,
    si_sdr,
)
from audiobench.models.baselines import log_mel_spectrogram


def test_hand_computed_fad() -> None:
    # 1-D: X = {0, 2}: mean 1, variance (ddof 1) 2; Y = {1, 5}: mean 3, variance 8.
    # FAD = (1 − 3)² + 2 + 8 − 2 √(2 · 8) = 4 + 10 − 8 = 6  (= Δμ² + (σ_x − σ_y)²).
    assert frechet_audio_distance([[0.0], [2.0]], [[1.0], [5.0]]) == pytest.approx(6.0)
    # 2-D: X = ±e1, ±e2: mean 0, covariance (1/3) · 2 I = (2/3) I; Y = 2X + (1, 1):
    # mean (1, 1), covariance (8/3) I. FAD = 2 + 2 (√(2/3) − √(8/3))² = 2 + 2 · 2/3 = 10/3.
    X = np.array([[1.0, 0], [-1, 0], [0, 1], [0, -1]])
    assert frechet_audio_distance(X, 2 * X + 1) == pytest.approx(10 / 3)
    assert frechet_audio_distance(X, X) == 0.0


def _reference_fad_sqrtm(X: np.ndarray, Y: np.ndarray) -> float:
    """The usual implementation: scipy.linalg.sqrtm of the product, real part."""
    mu_x, mu_y = X.mean(0), Y.mean(0)
    cov_x, cov_y = np.cov(X, rowvar=False), np.cov(Y, rowvar=False)
    root = scipy.linalg.sqrtm(cov_x @ cov_y).real
    return float(((mu_x - mu_y) ** 2).sum() + np.trace(cov_x + cov_y - 2 * root))


def _reference_fad_eigvals(X: np.ndarray, Y: np.ndarray) -> float:
    """Tr((Σx Σy)^½) as Σ √λ over the (real, ≥ 0 up to rounding) eigenvalues of Σx Σy."""
    cov_x, cov_y = np.cov(X, rowvar=False), np.cov(Y, rowvar=False)
    eigenvalues = np.clip(np.linalg.eigvals(cov_x @ cov_y).real, 0, None)
    gap = X.mean(0) - Y.mean(0)
    return float(gap @ gap + np.trace(cov_x) + np.trace(cov_y) - 2 * np.sqrt(eigenvalues).sum())


def test_fad_matches_references() -> None:
    rng = np.random.default_rng(0)
    for _ in range(3):
        X = rng.normal(size=(60, 6)) @ rng.normal(size=(6, 6))
        Y = rng.normal(size=(50, 6)) * 1.5 + 0.3
        expected = _reference_fad_sqrtm(X, Y)
        assert frechet_audio_distance(X, Y) == pytest.approx(expected, rel=1e-7)
        assert frechet_audio_distance(Y, X) == pytest.approx(expected, rel=1e-7)
    # Fewer clips than dimensions: both covariances singular; no ε needed, no imaginary part.
    X, Y = rng.normal(size=(5, 12)), rng.normal(size=(7, 12)) + 0.2
    value = frechet_audio_distance(X, Y)
    assert math.isfinite(value) and value > 0
    assert value == pytest.approx(_reference_fad_eigvals(X, Y), rel=1e-6)


def test_hand_computed_kad() -> None:
    # d = 1, k(x, y) = (x y + 1)³, X = {0, 1}, Y = {1, 2}:
    # XX off-diagonal: k(0,1) = 1 (twice) -> 2 / (2·1) = 1
    # YY: k(1,2) = 27 (twice) -> 54 / 2 = 27
    # XY: k(0,1) + k(0,2) + k(1,1) + k(1,2) = 1 + 1 + 8 + 27 = 37 -> 37 / 4
    # MMD² = 1 + 27 − 2 · 37/4 = 9.5
    X, Y = np.array([[0.0], [1.0]]), np.array([[1.0], [2.0]])
    assert kernel_audio_distance(X, Y) == pytest.approx(9.5)
    # RBF, σ = 1: XX and YY e^{-1/2}; XY (e^{-1/2} + e^{-2} + 1 + e^{-1/2}) / 4.
    expected = 2 * math.exp(-0.5) - (2 * math.exp(-0.5) + math.exp(-2) + 1) / 2
    assert kernel_audio_distance(X, Y, kernel="rbf", bandwidth=1.0) == pytest.approx(expected)
    # Median heuristic: pooled {0, 1, 1, 2}, distances 1 1 2 0 1 1 -> median 1.
    assert kernel_audio_distance(X, Y, kernel="rbf") == pytest.approx(expected)


def _reference_mmd(X: np.ndarray, Y: np.ndarray, kernel) -> float:
    m, n = len(X), len(Y)
    xx = sum(kernel(X[i], X[j]) for i in range(m) for j in range(m) if i != j) / (m * (m - 1))
    yy = sum(kernel(Y[i], Y[j]) for i in range(n) for j in range(n) if i != j) / (n * (n - 1))
    xy = sum(kernel(x, y) for x in X for y in Y) / (m * n)
    return xx + yy - 2 * xy


def test_kad_matches_brute_force(monkeypatch: pytest.MonkeyPatch) -> None:
    from audiobench.metrics import reconstruction

    monkeypatch.setattr(reconstruction, "BLOCK_ELEMENTS", 40)  # several row blocks
    rng = np.random.default_rng(1)
    X, Y = rng.normal(size=(14, 4)), rng.normal(size=(11, 4)) + 0.5
    d = X.shape[1]
    poly = _reference_mmd(X, Y, lambda a, b: (a @ b / d + 1) ** 3)
    assert kernel_audio_distance(X, Y) == pytest.approx(poly)
    assert kernel_audio_distance(X, Y, degree=2) == pytest.approx(
        _reference_mmd(X, Y, lambda a, b: (a @ b / d + 1) ** 2)
    )
    sigma = 1.7
    rbf = _reference_mmd(X, Y, lambda a, b: math.exp(-((a - b) @ (a - b)) / (2 * sigma**2)))
    assert kernel_audio_distance(X, Y, kernel="rbf", bandwidth=sigma) == pytest.approx(rbf)
    pooled = np.concatenate([X, Y])
    distances = [np.linalg.norm(a - b) for i, a in enumerate(pooled) for b in pooled[i + 1 :]]
    median = float(np.median(distances))
    expected = _reference_mmd(X, Y, lambda a, b: math.exp(-((a - b) @ (a - b)) / (2 * median**2)))
    assert kernel_audio_distance(X, Y, kernel="rbf") == pytest.approx(expected)


def test_kad_is_near_zero_for_one_distribution_and_can_be_negative() -> None:
    rng = np.random.default_rng(2)
    values = [
        kernel_audio_distance(rng.normal(size=(40, 3)), rng.normal(size=(40, 3))) for _ in range(10)
    ]
    assert max(abs(v) for v in values) < 0.5
    assert abs(np.mean(values)) < 0.1  # unbiased: 0 in expectation...
    assert min(values) < 0  # ...so some draws are negative (not clipped at 0)
    assert kernel_audio_distance(rng.normal(size=(40, 3)), rng.normal(size=(40, 3)) + 1) > 3


def test_embedding_mse() -> None:
    # Clip 0: ((1)² + (1)²) / 2 = 1; clip 1: (0 + 2²) / 2 = 2; mean 1.5.
    ref = np.array([[0.0, 0.0], [1.0, 1.0]])
    rec = np.array([[1.0, 1.0], [1.0, 3.0]])
    assert embedding_mse(ref, rec) == pytest.approx(1.5)
    details = embedding_mse(ref, rec, return_details=True)
    np.testing.assert_allclose(details.per_clip, [1.0, 2.0])
    assert details.n_evaluated == 2
    assert embedding_mse(ref[:1], ref[:1]) == 0.0  # one clip is enough


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
    details = si_sdr([s, s], [estimate, 0.5 * s], return_details=True)
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
    details = si_sdr(refs, ests, return_details=True)
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
    details = log_mel_distance([wave, wave], [other, 2 * wave], 16000, return_details=True)
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


def test_distribution_errors() -> None:
    X = np.random.default_rng(0).normal(size=(5, 3))
    with pytest.raises(ValueError, match="differ in dimension: reference 3, generated 2"):
        frechet_audio_distance(X, X[:, :2])
    with pytest.raises(ValueError, match="reference embeddings: need at least 2 clips"):
        frechet_audio_distance(X[:1], X)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(InvalidEmbeddingsError, match=r"generated embeddings: .*indices: 3"):
        kernel_audio_distance(X, bad)
    with pytest.raises(ValueError, match="kernel"):
        kernel_audio_distance(X, X, kernel="laplace")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="degree"):
        kernel_audio_distance(X, X, degree=0)
    with pytest.raises(ValueError, match="bandwidth"):
        kernel_audio_distance(X, X, kernel="rbf", bandwidth=-1.0)
    with pytest.raises(ValueError, match="median pairwise distance is 0"):
        kernel_audio_distance(np.ones((3, 2)), np.ones((3, 2)), kernel="rbf")


def test_per_clip_errors() -> None:
    with pytest.raises(ValueError, match=r"shape \(2, 2\), reconstructed \(2, 3\)"):
        embedding_mse(np.ones((2, 2)), np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"reconstructed embeddings have NaN.*clips: 1"):
        embedding_mse(np.ones((2, 2)), np.array([[1.0, 1.0], [np.nan, 1.0]]))
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
