"""The weightless baselines beside log-mel: MFCC and the seeded random projection."""

from __future__ import annotations

import numpy as np
import pytest

from audiobench import registry
from audiobench.models.baselines import log_mel_spectrogram


def tone(seconds: float = 0.5, freq: float = 440.0) -> np.ndarray:
    t = np.arange(int(seconds * 16000)) / 16000
    return (0.3 * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def test_mfcc_is_the_orthonormal_dct_of_the_log_mel_bands() -> None:
    wave = tone()
    z = registry.models.create("mfcc").encode_audio([wave])[0]
    mel = log_mel_spectrogram(wave).astype(np.float64)
    n = 128
    k = np.arange(n)
    # DCT-II, orthonormal: c_k = s_k Σ_m x_m cos(π k (2m + 1) / 2N), s_0 = √(1/N), s_k = √(2/N).
    basis = np.cos(np.pi * k[:, None] * (2 * k[None, :] + 1) / (2 * n))
    scale = np.full(n, np.sqrt(2 / n))
    scale[0] = np.sqrt(1 / n)
    expected = (mel @ (basis * scale[:, None]).T)[:, :20]
    assert z.shape == (mel.shape[0], 20)
    np.testing.assert_allclose(z, expected, rtol=1e-4, atol=1e-3)
    assert registry.models.create("mfcc", n_mfcc=13).encode_audio([wave])[0].shape[1] == 13
    with pytest.raises(ValueError, match=r"n_mfcc must be in 1\.\.128"):
        registry.models.create("mfcc", n_mfcc=0)


def test_random_projection_is_seeded_and_linear_in_the_log_mel_frames() -> None:
    wave = tone()
    a = registry.models.create("random-projection")
    b = registry.models.create("random-projection")
    other = registry.models.create("random-projection", seed=1)
    za, zb = a.encode_audio([wave])[0], b.encode_audio([wave])[0]
    np.testing.assert_array_equal(za, zb)
    assert not np.allclose(za, other.encode_audio([wave])[0])
    np.testing.assert_allclose(za, log_mel_spectrogram(wave) @ a.projection, rtol=1e-5)
    assert a.embed([wave])[0].shape == (512,)
    small = registry.models.create("random-projection", dim=16)
    assert small.meta.embedding_dim == 16 and small.embed([wave])[0].shape == (16,)
    assert a.fingerprint() != other.fingerprint()
