"""The perturbation of MSEB's stability tasks: SpecAugment masks on the STFT magnitude, inverted.

Source: ``mseb/utils.py`` (``SpecAugmentConfig``, ``get_deterministic_seed``,
``apply_specaugment_to_waveform``) and ``mseb/tasks/stability.py``, read at commit ``a88af49``;
written here in NumPy (MSEB calls librosa, which audiobench does not depend on).

For variant ``i`` of utterance ``u``:

1. The generator is ``numpy.random.default_rng(md5("<u>_<i>") mod 2**32)``
   (:func:`variant_seed`), so every model sees the same variants.
2. The STFT of the waveform (:func:`stft`): periodic Hann window of ``n_fft`` samples, hop
   ``hop_length``, the signal padded with ``n_fft // 2`` zeros at each end (librosa's centred
   frames), one-sided spectrum. Magnitude |S| and phase S/|S| (1 where |S| = 0).
3. Frequency masks: a share p_f ~ U(0, ``max_freq_mask_proportion``) of the F bins,
   ``int(F·p_f)`` bins in all, is masked in bands: while fewer are masked, a width
   w ~ U{1, …, min(``max_freq_mask_width``, remaining)} and a start f0 ~ U{0, …, F − w} are
   drawn and bins [f0, f0 + w) set to ``mask_value`` (bands may overlap; the count is of widths
   drawn). Then time masks the same way over the T frames with ``max_time_mask_proportion`` and
   ``max_time_mask_width``. The draws are made in exactly this order (p_f, p_t, then each
   band's width and start), so the variants equal MSEB's.
4. The masked magnitude times the original phase is inverted (:func:`istft`): windowed
   overlap-add divided by the summed squared window (where it is above the smallest normal
   float), the padding cut, the length the input's.

The defaults (:class:`SpecAugmentConfig`) are MSEB's: ``n_fft`` 2048, hop 512, at most 15 % of
bins and 20 % of frames, bands at most 27 bins and 100 frames wide, masked to 0.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

__all__ = ["SpecAugmentConfig", "istft", "spec_augment", "stft", "variant_seed"]


@dataclass(frozen=True)
class SpecAugmentConfig:
    """SpecAugment's settings (MSEB's defaults)."""

    n_fft: int = 2048
    hop_length: int = 512
    max_freq_mask_proportion: float = 0.15
    max_time_mask_proportion: float = 0.20
    max_freq_mask_width: int = 27
    max_time_mask_width: int = 100
    mask_value: float = 0.0


def variant_seed(utterance_id: str, index: int) -> int:
    """The seed of variant ``index`` of an utterance: md5 of ``"<id>_<index>"`` mod 2**32."""
    digest = hashlib.md5(f"{utterance_id}_{index}".encode(), usedforsecurity=False)
    return int(digest.hexdigest(), 16) % (2**32)


def _hann(n: int) -> np.ndarray:
    """The periodic Hann window (the one an FFT frame expects)."""
    return 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(n) / n)


def stft(x: np.ndarray, n_fft: int, hop_length: int) -> np.ndarray:
    """The centred STFT ``[n_fft // 2 + 1, frames]`` of a 1-D signal (module docstring)."""
    if x.ndim != 1:
        raise ValueError(f"stft needs a 1-D signal, got shape {x.shape}")
    if n_fft < 2 or hop_length < 1:
        raise ValueError(f"need n_fft >= 2 and hop_length >= 1, got {n_fft} and {hop_length}")
    padded = np.pad(np.asarray(x, dtype=np.float64), n_fft // 2)
    if padded.size < n_fft:
        padded = np.pad(padded, (0, n_fft - padded.size))
    n_frames = 1 + (padded.size - n_fft) // hop_length
    starts = np.arange(n_frames)[:, None] * hop_length
    frames = padded[starts + np.arange(n_fft)[None, :]] * _hann(n_fft)[None, :]
    spectrum: np.ndarray = np.fft.rfft(frames, axis=1).T
    return spectrum


def istft(spectrum: np.ndarray, hop_length: int, length: int) -> np.ndarray:
    """The signal of ``length`` samples whose centred STFT is ``spectrum`` (module docstring)."""
    n_fft = 2 * (spectrum.shape[0] - 1)
    window = _hann(n_fft)
    n_frames = spectrum.shape[1]
    total = n_fft + hop_length * (n_frames - 1)
    signal = np.zeros(total)
    weight = np.zeros(total)
    frames = np.fft.irfft(spectrum.T, n=n_fft, axis=1) * window[None, :]
    for t in range(n_frames):
        start = t * hop_length
        signal[start : start + n_fft] += frames[t]
        weight[start : start + n_fft] += window**2
    nonzero = weight > np.finfo(np.float64).tiny
    signal[nonzero] /= weight[nonzero]
    out = signal[n_fft // 2 : n_fft // 2 + length]
    if out.size < length:
        out = np.pad(out, (0, length - out.size))
    return out


def _mask_bands(
    magnitude: np.ndarray,
    axis: int,
    total: int,
    max_width: int,
    value: float,
    rng: np.random.Generator,
) -> None:
    size = magnitude.shape[axis]
    masked = 0
    while masked < total:
        widest = min(max_width, total - masked)
        if widest < 1:
            break
        width = int(rng.integers(1, widest + 1))
        start = int(rng.integers(0, size - width + 1))
        if axis == 0:
            magnitude[start : start + width, :] = value
        else:
            magnitude[:, start : start + width] = value
        masked += width


def spec_augment(x: np.ndarray, config: SpecAugmentConfig, rng: np.random.Generator) -> np.ndarray:
    """One SpecAugment variant of the 1-D waveform ``x`` (float32, same length; module
    docstring), drawing from ``rng``."""
    spectrum = stft(x, config.n_fft, config.hop_length)
    magnitude = np.abs(spectrum)
    silent = magnitude == 0
    phase = spectrum / np.where(silent, 1.0, magnitude) + silent
    n_bins, n_frames = magnitude.shape
    freq_share = rng.uniform(0.0, config.max_freq_mask_proportion)
    time_share = rng.uniform(0.0, config.max_time_mask_proportion)
    _mask_bands(
        magnitude,
        0,
        int(n_bins * freq_share),
        config.max_freq_mask_width,
        config.mask_value,
        rng,
    )
    _mask_bands(
        magnitude,
        1,
        int(n_frames * time_share),
        config.max_time_mask_width,
        config.mask_value,
        rng,
    )
    return istft(magnitude * phase, config.hop_length, x.size).astype(np.float32)
