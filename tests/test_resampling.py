"""The windowed-sinc resampler (MTEB's resampling) against a direct evaluation of its formula."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
import soxr

from audiobench import evaluate, registry
from audiobench.audio import ArrayAudioRef, AudioDecodeError, Clip, decode_clip, resampler_for
from audiobench.resampling import sinc_resample, sinc_resample_kernel
from tests.encoders import StatsEncoder
from tests.maeb.hub_layout import audio, write_hub_dataset


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


# ---------------------------------------------------------------------------- in the pipeline


class RecordingEncoder(StatsEncoder):
    """Keeps every waveform it is given."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.waves: list[np.ndarray] = []

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        self.waves.extend(np.array(w) for w in waveforms)
        return super().encode_audio(waveforms)


def test_decode_clip_resamples_once_from_the_native_rate_with_sinc() -> None:
    wave = np.random.default_rng(3).uniform(-0.5, 0.5, 4410).astype(np.float32)
    clip = Clip(id="c", audio=ArrayAudioRef(wave, 44100))
    mteb = decode_clip(clip, 48000, 16000, resampler="sinc")
    np.testing.assert_array_equal(mteb, sinc_resample(wave, 44100, 16000))
    own = decode_clip(clip, 48000, 16000)  # audiobench: soxr to 48 kHz, then to 16 kHz
    twice = soxr.resample(soxr.resample(wave, 44100, 48000, quality="HQ"), 48000, 16000, "HQ")
    np.testing.assert_array_equal(own, twice.astype(np.float32))
    assert mteb.shape == own.shape and not np.array_equal(mteb, own)
    with pytest.raises(AudioDecodeError, match="empty audio"):
        decode_clip(Clip(id="d", audio=ArrayAudioRef(wave[:0], 44100)), 48000, 16000,
                    resampler="sinc")  # fmt: skip


def test_resampler_follows_the_task_protocol() -> None:
    cls = registry.tasks.get("GTZANGenreClustering")
    assert resampler_for(cls.options) == "sinc"
    assert resampler_for(cls.Options(protocol="audiobench")) == "soxr"
    assert resampler_for(registry.tasks.get("ESC50").options) == "soxr"


@pytest.mark.parametrize("protocol", ["mteb", "audiobench"])
def test_a_run_feeds_the_model_what_its_protocol_resamples(protocol: str, tmp_path: Path) -> None:
    rows = [{"audio": audio(300.0 * (1 + k % 2), k, sr=44100), "label": k % 2} for k in range(6)]
    root = write_hub_dataset(tmp_path / f"gtzan-{protocol}", {"default": {"train": rows}})
    task = registry.tasks.get("GTZANGenreClustering")(
        dataset_path=root, options={"protocol": protocol}
    )
    encoder = RecordingEncoder()
    evaluate(task, encoder, output_dir=tmp_path / "out", cache_dir=tmp_path / "cache",
             progress=False, count_flops=False)  # fmt: skip
    native = [c.audio.read()[0][:, 0] for c in task.load_data()]
    if protocol == "mteb":
        expected = [sinc_resample(w, 44100, 16000) for w in native]
    else:
        expected = [decode_clip(c, 48000, 16000) for c in task.load_data()]
    assert len(encoder.waves) == 6
    for got, want in zip(encoder.waves, expected, strict=True):
        np.testing.assert_array_equal(got, want)
