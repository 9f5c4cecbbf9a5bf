from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audiobench.audio import (
    AudioDecodeError,
    AudioRef,
    Clip,
    DuplicateAudioError,
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


class _MemoryRef(AudioRef):
    """An AudioRef without a header: the limit is checked after reading."""

    def __init__(self, seconds: float, rate: int = 1000) -> None:
        self.data = np.zeros((int(seconds * rate), 1), dtype=np.float32)
        self.rate = rate

    def read(self) -> tuple[np.ndarray, int]:
        return self.data, self.rate

    @property
    def location(self) -> str:
        return "memory"


def test_any_audio_ref_honours_the_clip_duration_limit() -> None:
    with pytest.raises(AudioDecodeError, match=r"clip 'm' \(memory\): too long: declares 3.0 s"):
        load_waveform(_MemoryRef(3.0), 1000, clip_id="m", max_seconds=2.0)
    assert len(load_waveform(_MemoryRef(2.0), 1000, clip_id="m", max_seconds=2.0)) == 2000


def test_hub_audio_is_checked_from_its_header(tmp_path: Path) -> None:
    from audiobench.sources import load_hf_clips
    from audiobench.task import Columns
    from tests.hub_copy import write_hub_like

    rows = [{"audio": (np.zeros(3000, dtype=np.float32), 1000), "label": 0}]
    root = write_hub_like(tmp_path / "ds", rows)
    [clip] = load_hf_clips(
        str(root), revision=None, config=None, splits=("train",), columns=Columns()
    )
    with pytest.raises(AudioDecodeError, match=r"train\] row 0\): too long: declares 3.0 s"):
        load_waveform(clip.audio, 1000, clip_id=clip.id, max_seconds=2.5)


def test_duplicate_audio_error_names_both_clips() -> None:
    err = DuplicateAudioError(("a", "file /x/a.wav"), ("b", "file /x/b.wav"), "S1")
    assert err.first == ("a", "file /x/a.wav") and err.second == ("b", "file /x/b.wav")
    assert str(err).startswith(
        "clips 'a' (file /x/a.wav) and 'b' (file /x/b.wav) of subset 'S1' hold the same audio"
    )
