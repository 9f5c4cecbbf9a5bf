"""Test isolation: no network, and no reads or writes outside temporary folders."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf


@pytest.fixture(scope="session")
def generated_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Generated task data is deterministic: share it across the session.
    return tmp_path_factory.mktemp("audiobench-data")


@pytest.fixture(autouse=True)
def _isolated_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, generated_data_dir: Path
) -> Iterator[None]:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("AUDIOBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("AUDIOBENCH_DATA", str(generated_data_dir))
    monkeypatch.setenv("NO_COLOR", "1")
    yield


def folder_digest(root: Path) -> str:
    """The digest in a folder task's name: 8 hex digits of SHA-256 of the resolved path."""
    import hashlib

    return hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:8]


def write_tone(
    path: Path,
    *,
    freq: float = 440.0,
    seconds: float = 0.5,
    sr: int = 16000,
    channels: int = 1,
    subtype: str = "PCM_16",
    amplitude: float = 0.3,
) -> Path:
    """Write a sine tone as a real audio file."""
    t = np.arange(int(seconds * sr)) / sr
    wave = (amplitude * np.sin(2 * np.pi * freq * t)).astype(np.float32)
    data = np.stack([wave] * channels, axis=1) if channels > 1 else wave
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(path, data, sr, subtype=subtype)
    return path


@pytest.fixture
def labelled_folder(tmp_path: Path) -> Path:
    """Three classes (distinct tones), four clips each, one subfolder per class."""
    root = tmp_path / "clips"
    rng = np.random.default_rng(0)
    for label, base in (("low", 300.0), ("mid", 1200.0), ("high", 4000.0)):
        for k in range(4):
            write_tone(
                root / label / f"{label}{k}.wav",
                freq=base * (1 + 0.02 * rng.standard_normal()),
                seconds=0.3 + 0.05 * k,
            )
    return root
