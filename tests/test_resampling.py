"""The windowed-sinc resampler (MTEB's resampling) against a direct evaluation of its formula."""

from __future__ import annotations

import math

import numpy as np
import pytest

from audiobench.resampling import sinc_resample, sinc_resample_kernel


def direct(x: np.ndarray, orig_rate: int, new_rate: int, width: int = 6) -> np.ndarray:
    """y[m] = (f/o) sum_k x[k] cos^2(pi t / 2L) sinc(t), t = f (k/o - m/n), |t| < L; in float64.

    Written from the formula, one output sample at a time: no filter bank, no phases.
    """
    g = math.gcd(orig_rate, new_rate)
    o, n = orig_rate // g, new_rate // g
    f = min(o, n) * 0.99
    k = np.arange(x.shape[0], dtype=np.float64)
    out = np.zeros(math.ceil(x.shape[0] * n / o))
    for m in range(out.shape[0]):
        t = f * (k / o - m / n)
        near = np.abs(t) < width
        window = np.cos(np.pi * t[near] / (2 * width)) ** 2
        out[m] = f / o * np.sum(x[near].astype(np.float64) * window * np.sinc(t[near]))
    return out


RATES = [(44100, 16000), (48000, 16000), (16000, 48000), (22050, 16000), (8000, 11025),
         (32000, 24000), (16000, 44100)]  # fmt: skip


@pytest.mark.parametrize(("orig", "new"), RATES, ids=[f"{o}->{n}" for o, n in RATES])
def test_float64_audio_matches_the_formula(orig: int, new: int) -> None:
    x = np.random.default_rng(orig + new).standard_normal(701)
    y = sinc_resample(x, orig, new)
    assert y.dtype == np.float64 and y.shape == (math.ceil(701 * new / orig),)
    np.testing.assert_allclose(y, direct(x, orig, new), rtol=0, atol=1e-12)


@pytest.mark.parametrize(("orig", "new"), RATES, ids=[f"{o}->{n}" for o, n in RATES])
def test_float32_audio_is_filtered_in_float32_to_rounding(orig: int, new: int) -> None:
    x = np.random.default_rng(7).uniform(-1, 1, 1003).astype(np.float32)
    y = sinc_resample(x, orig, new)
    assert y.dtype == np.float32
    # The float32 taps round t = f (k/o - j/n) with f up to 317 (441 -> 320): ~3e-5 at most.
    np.testing.assert_allclose(y, direct(x, orig, new), rtol=0, atol=1e-4)
    # In float64 the same input is the formula to 1e-12: the gap is float32 rounding alone.
    wide = sinc_resample(x.astype(np.float64), orig, new)
    np.testing.assert_allclose(wide, direct(x, orig, new), rtol=0, atol=1e-12)


def test_the_kernel_by_hand_for_halving() -> None:
    # 2 -> 1 Hz: f = 0.99, width = ceil(6 * 2 / 0.99) = 13, one phase of 2 * 13 + 2 taps.
    kernel, width = sinc_resample_kernel(2, 1, dtype=np.float64)
    assert width == 13 and kernel.shape == (1, 28)
    assert kernel[0, 13] == pytest.approx(0.495, abs=1e-15)  # t = 0: sinc 1, window 1, f / o
    t = 0.99 * 1 / 2  # one input sample later
    expected = 0.495 * math.cos(math.pi * t / 12) ** 2 * math.sin(math.pi * t) / (math.pi * t)
    assert kernel[0, 14] == pytest.approx(expected, abs=1e-15)
    np.testing.assert_allclose(kernel[0, :27], kernel[0, :27][::-1], atol=1e-15)  # about t = 0
    assert abs(kernel[0, 0]) < 1e-30  # t = -6.435, clamped to the window's edge (cos^2(pi/2))


def test_a_tone_below_both_nyquist_rates_survives() -> None:
    t = np.arange(44100) / 44100
    x = np.sin(2 * np.pi * 440 * t)
    y = sinc_resample(x, 44100, 16000)
    expected = np.sin(2 * np.pi * 440 * np.arange(16000) / 16000)
    np.testing.assert_allclose(y[200:-200], expected[200:-200], atol=1e-3)


def test_channels_on_leading_axes_and_equal_rates() -> None:
    x = np.random.default_rng(1).standard_normal((2, 3, 400))
    y = sinc_resample(x, 48000, 16000)
    assert y.shape == (2, 3, 134)
    np.testing.assert_allclose(y[1, 2], sinc_resample(x[1, 2], 48000, 16000), atol=1e-15)
    same = np.ones(5, dtype=np.float32)
    assert sinc_resample(same, 16000, 16000) is same
    with pytest.raises(ValueError, match="positive"):
        sinc_resample(same, 0, 16000)
    with pytest.raises(ValueError, match="whole numbers"):
        sinc_resample(same, 16000.5, 16000)  # type: ignore[arg-type]
