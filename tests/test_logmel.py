from __future__ import annotations

import numpy as np
import pytest

from audiobench.models.baselines import (
    LogMelEncoder,
    hz_to_mel_htk,
    log_mel_spectrogram,
    mel_filterbank,
)


def test_htk_mel_scale_anchor_points() -> None:
    assert hz_to_mel_htk(0.0) == 0.0
    # 2595 * log10(1 + 700/700) = 2595 * log10(2)
    assert hz_to_mel_htk(700.0) == pytest.approx(2595 * np.log10(2))
    assert hz_to_mel_htk(1000.0) == pytest.approx(999.9855, rel=1e-6)


def test_filterbank_matches_triangle_definition() -> None:
    fb = mel_filterbank(16000, 512, 128, 0.0, 8000.0)
    assert fb.shape == (128, 257)
    edges = [700.0 * (10 ** (m / 2595.0) - 1) for m in np.linspace(0, hz_to_mel_htk(8000.0), 130)]
    for m in range(128):
        for k in range(257):
            f = k * 16000 / 512
            rise = (f - edges[m]) / (edges[m + 1] - edges[m])
            fall = (edges[m + 2] - f) / (edges[m + 2] - edges[m + 1])
            assert fb[m, k] == pytest.approx(max(0.0, min(rise, fall)), abs=1e-9)
    # No area normalisation: the wide top band still peaks near 1.
    assert fb[-1].max() > 0.9


def _brute_force(wave: np.ndarray, sr: int = 16000) -> np.ndarray:
    """The protocol text, literally: centred frames, periodic Hann, DFT by definition."""
    n_fft, hop = 512, 256
    padded = np.pad(wave.astype(np.float64), n_fft // 2, mode="reflect")
    n_frames = 1 + len(wave) // hop
    window = np.array([0.5 - 0.5 * np.cos(2 * np.pi * n / n_fft) for n in range(n_fft)])
    k = np.arange(n_fft // 2 + 1)[:, None]
    n = np.arange(n_fft)[None, :]
    dft = np.exp(-2j * np.pi * k * n / n_fft)
    fb = mel_filterbank(sr, n_fft, 128, 0.0, 8000.0)
    rows = []
    for f in range(n_frames):
        frame = padded[f * hop : f * hop + n_fft] * window
        power = np.abs(dft @ frame) ** 2
        rows.append(10 * np.log10(np.maximum(fb @ power, 1e-10)))
    db = np.array(rows)
    return np.maximum(db, db.max() - 80.0)


def test_matches_brute_force_definition() -> None:
    rng = np.random.default_rng(1)
    wave = rng.standard_normal(4000).astype(np.float32) * 0.1
    np.testing.assert_allclose(log_mel_spectrogram(wave), _brute_force(wave), atol=1e-3)


def test_frame_count_tone_peak_and_floor() -> None:
    sr = 16000
    t = np.arange(sr) / sr
    wave = 0.5 * np.sin(2 * np.pi * 1000 * t)
    mel = log_mel_spectrogram(wave)
    assert mel.shape == (1 + sr // 256, 128)
    fb = mel_filterbank(sr, 512, 128, 0.0, 8000.0)
    bin_1k = round(1000 * 512 / sr)
    assert mel.mean(axis=0).argmax() == fb[:, bin_1k].argmax()
    assert mel.max() - mel.min() <= 80.0 + 1e-4


def test_silence_and_one_sample_clips_are_defined() -> None:
    assert np.isfinite(log_mel_spectrogram(np.zeros(1000))).all()
    assert log_mel_spectrogram(np.array([0.5])).shape == (1, 128)
    with pytest.raises(ValueError):
        log_mel_spectrogram(np.zeros(0))


def test_encoder_outputs_sequences_and_flattens_by_default() -> None:
    enc = LogMelEncoder()
    outs = enc.embed([np.zeros(2560, dtype=np.float32), np.ones(5120, dtype=np.float32)])
    assert [o.shape for o in outs] == [(11, 128), (21, 128)]
    assert enc.pooling.name == "flatten"
