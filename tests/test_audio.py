from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audiobench.audio import (
    AudioDecodeError,
    Clip,
    FileAudioRef,
    decode_clip,
    load_waveform,
    waveform_hash,
)
from tests.conftest import write_tone


@pytest.mark.parametrize("sr", [8000, 16000, 44100])
def test_resamples_to_target_rate(tmp_path: Path, sr: int) -> None:
    path = write_tone(tmp_path / "a.wav", sr=sr, seconds=1.0, freq=440.0)
    wave = load_waveform(FileAudioRef(path), 16000, clip_id="a")
    assert wave.dtype == np.float32
    assert abs(len(wave) - 16000) <= 2
    # The tone survives resampling: its spectrum still peaks at 440 Hz.
    spec = np.abs(np.fft.rfft(wave))
    assert abs(np.argmax(spec) * 16000 / len(wave) - 440.0) < 3


def test_stereo_is_downmixed_and_flac_reads(tmp_path: Path) -> None:
    path = write_tone(tmp_path / "s.flac", channels=2)
    wave = load_waveform(FileAudioRef(path), 16000, clip_id="s")
    assert wave.ndim == 1 and len(wave) == 8000


def test_decode_goes_through_canonical_rate(tmp_path: Path) -> None:
    path = write_tone(tmp_path / "a.wav", sr=44100, seconds=0.5)
    clip = Clip(id="a", audio=FileAudioRef(path))
    wave = decode_clip(clip, 16000, 48000)
    assert abs(len(wave) - 24000) <= 3


def test_empty_file_names_clip_and_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.wav"
    sf.write(path, np.zeros(0, dtype=np.float32), 16000)
    with pytest.raises(AudioDecodeError, match=r"clip 'e1' \(file .*empty.wav\): empty audio"):
        load_waveform(FileAudioRef(path), 16000, clip_id="e1")


def test_corrupt_file_names_clip_and_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.wav"
    path.write_bytes(b"RIFF\x00\x00not really audio")
    with pytest.raises(AudioDecodeError, match=r"clip 'b' \(file .*bad.wav\): unreadable"):
        load_waveform(FileAudioRef(path), 16000, clip_id="b")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(AudioDecodeError, match="unreadable"):
        load_waveform(FileAudioRef(tmp_path / "nope.wav"), 16000, clip_id="x")


def test_non_finite_samples(tmp_path: Path) -> None:
    path = tmp_path / "nan.wav"
    data = np.zeros(100, dtype=np.float32)
    data[10] = np.nan
    sf.write(path, data, 16000, subtype="FLOAT")
    with pytest.raises(AudioDecodeError, match="1 non-finite samples"):
        load_waveform(FileAudioRef(path), 16000, clip_id="n")


def test_waveform_hash_depends_on_content_and_rate() -> None:
    a = np.zeros(10, dtype=np.float32)
    b = a.copy()
    b[3] = 1e-3
    assert waveform_hash(a, 16000) == waveform_hash(a.copy(), 16000)
    assert waveform_hash(a, 16000) != waveform_hash(b, 16000)
    assert waveform_hash(a, 16000) != waveform_hash(a, 24000)
