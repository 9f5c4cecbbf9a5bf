"""Item 9: bounded memory on hostile audio (a per-clip duration limit, a collate budget)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audiobench import audio, pooling
from audiobench.audio import MAX_CLIP_SECONDS, AudioDecodeError, FileAudioRef, load_waveform
from audiobench.models.baselines import LogMelEncoder
from audiobench.pooling import CollateTooLargeError
from audiobench.runner import CachedEmbedder
from audiobench.sources import load_folder_clips
from tests.conftest import write_tone
from tests.encoders import StatsEncoder
from tests.hostile.files import tone_folder, write_labels


def _one_hertz_wav(path: Path) -> Path:
    """4 KB of PCM that declares a 1 Hz rate: 2000 s once decoded."""
    noise = 0.1 * np.random.default_rng(0).standard_normal(2000)
    sf.write(path, noise.astype(np.float32), 1, subtype="PCM_16")
    assert path.stat().st_size < 4096 + 64
    return path


def test_tiny_file_declaring_1_hz_is_refused_from_its_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _one_hertz_wav(tmp_path / "slow.wav")

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("decoded or resampled a clip over the limit")

    monkeypatch.setattr(sf.SoundFile, "read", never)
    monkeypatch.setattr(audio.soxr, "resample", never)
    with pytest.raises(
        AudioDecodeError,
        match=r"clip 'slow' \(file .*slow.wav\): too long: declares 2000.0 s of audio "
        r"\(2000 frames at 1 Hz\), over the limit of 600 s per clip",
    ):
        load_waveform(FileAudioRef(path), 16000, clip_id="slow")


def test_the_limit_is_documented_and_can_be_raised(tmp_path: Path) -> None:
    assert MAX_CLIP_SECONDS == 600.0
    path = write_tone(tmp_path / "two.wav", seconds=2.0, sr=8000)
    with pytest.raises(AudioDecodeError, match=r"over the limit of 1\.5 s per clip"):
        load_waveform(FileAudioRef(path), 16000, clip_id="two", max_seconds=1.5)
    assert len(load_waveform(FileAudioRef(path), 16000, clip_id="two", max_seconds=None)) == 32000


def test_a_30_minute_clip_is_skipped_and_recorded(tmp_path: Path) -> None:
    root = tone_folder(tmp_path / "d", n=3)
    # 30 minutes at 100 Hz: 350 KB on disk, 28.8 million samples at 16 kHz.
    sf.write(root / "long.wav", np.zeros(180_000, dtype=np.float32), 100, subtype="PCM_16")
    write_labels(root, ["c0.wav,a", "long.wav,a", "c1.wav,b", "c2.wav,a"])
    clips = load_folder_clips(root)
    with pytest.raises(AudioDecodeError, match=r"clip 'long' .*declares 1800.0 s"):
        CachedEmbedder(StatsEncoder(), None).embed(clips, "")
    embedder = CachedEmbedder(StatsEncoder(), None, on_error="skip")
    kept, _ = embedder.embed(clips, "")
    assert [c.id for c in kept] == ["c0", "c1", "c2"]
    [skipped] = embedder.stats.skipped
    assert skipped.id == "long" and skipped.location.endswith("long.wav")
    assert skipped.reason.startswith("clip 'long'") and "too long: declares 1800.0 s" in (
        skipped.reason
    )
    # The runner's limit is its own option.
    short = CachedEmbedder(StatsEncoder(), None, on_error="skip", max_clip_seconds=0.305)
    kept, _ = short.embed(clips, "")
    assert [c.id for c in kept] == ["c0"]


def test_flatten_pooling_refuses_to_pad_every_clip_to_one_long_clip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tone_folder(tmp_path / "d", n=4)  # 0.30-0.33 s: about 20 log-mel frames each
    write_tone(root / "long.wav", seconds=20.0, freq=500.0)  # 1251 frames
    write_labels(root, ["c0.wav,a", "c1.wav,b", "long.wav,a", "c2.wav,a", "c3.wav,b"])
    clips = load_folder_clips(root)
    monkeypatch.setattr(pooling, "collate_budget", lambda: 100_000)
    embedder = CachedEmbedder(LogMelEncoder(), None)
    _, arrays = embedder.embed(clips[:2] + clips[3:], "short clips")  # 4 x 128 x 21 fits
    assert pooling.collate(arrays).shape == (4, 128 * max(a.shape[0] for a in arrays))
    with pytest.raises(
        CollateTooLargeError,
        match=r"padding 5 embeddings to the longest, clip 'long' \(1251×128; median length "
        r"21\), needs 800,640 values .* over the budget of 100,000",
    ):
        embedder.embed(clips, "with the long clip")
    with pytest.raises(CollateTooLargeError, match=r"embedding #2 \(1251×128"):
        pooling.collate(
            [np.zeros((21, 128)), np.zeros((21, 128)), np.zeros((1251, 128))],
            max_elements=100_000,
        )


def test_the_run_limit_is_an_option_recorded_in_the_run_identity(tmp_path: Path) -> None:
    import audiobench

    root = tone_folder(tmp_path / "d", n=6)  # 0.30-0.35 s each
    write_tone(root / "long.wav", seconds=2.0, freq=700.0)
    write_labels(root, [*(f"c{i}.wav,{'ab'[i % 2]}" for i in range(6)), "long.wav,a"])
    options = {"n_permutations": 5, "n_bootstrap": 5}
    settings = {"output_dir": tmp_path / "out", "progress": False, "use_cache": False}
    [limited] = audiobench.evaluate(
        f"folder:{root}", "log-mel", on_error="skip", max_clip_seconds=1.0,
        task_options=options, **settings,
    )  # fmt: skip
    assert [s.id for s in limited.skipped] == ["long"]
    assert "over the limit of 1 s per clip" in limited.skipped[0].reason
    assert limited.run is not None and limited.run.max_clip_seconds == 1.0
    # Another limit is another run: the file is recomputed, not reused.
    [unlimited] = audiobench.evaluate(
        f"folder:{root}", "log-mel", on_error="skip", max_clip_seconds=None,
        task_options=options, **settings,
    )  # fmt: skip
    assert unlimited.skipped == [] and unlimited.run is not None
    assert unlimited.run.max_clip_seconds is None
    assert unlimited.run.digest != limited.run.digest


def test_no_limit_and_flatten_pooling_refuse_a_long_clip_before_scoring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The budget counts what scoring really holds (48 bytes per element), not 12.

    Five minutes of audio padded into every clip's flattened log-mel, 5 clips: 12.0 M
    elements. On a machine of 512 MiB the old figure let it through (budget 22.4 M),
    and scoring then needed about 0.5 GiB; the measured figure refuses it (5.6 M).
    """
    root = tone_folder(tmp_path / "d", n=4)
    sf.write(root / "long.wav", np.zeros(30_000, dtype=np.float32), 100, subtype="PCM_16")
    write_labels(root, ["c0.wav,a", "long.wav,a", "c1.wav,b", "c2.wav,a", "c3.wav,b"])
    sizes = {"SC_PAGE_SIZE": 4096, "SC_PHYS_PAGES": (512 << 20) // 4096}
    monkeypatch.setattr(pooling.os, "sysconf", lambda name: sizes[name])
    assert pooling.collate_budget() == (512 << 20) // 2 // 48
    embedder = CachedEmbedder(LogMelEncoder(), None, max_clip_seconds=None)
    with pytest.raises(
        CollateTooLargeError,
        match=r"padding 5 embeddings to the longest, clip 'long' \(18751×128; .* over the "
        r"budget of 5,592,405; drop or shorten that clip, set --max-clip-seconds below its "
        r"duration \(with --on-error skip it is then left out and recorded\), or use a "
        r"pooling that does not keep time \(--pooling mean_time\)",
    ):
        embedder.embed(load_folder_clips(root), "no limit")
    # The remedy it names: a limit below the clip's duration, with --on-error skip.
    limited = CachedEmbedder(LogMelEncoder(), None, max_clip_seconds=60.0, on_error="skip")
    kept, _ = limited.embed(load_folder_clips(root), "limited")
    assert [c.id for c in kept] == ["c0", "c1", "c2", "c3"]
