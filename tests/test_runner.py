from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from audiobench.audio import AudioDecodeError
from audiobench.cache import EmbeddingCache
from audiobench.runner import CachedEmbedder, EmbeddingError
from audiobench.sources import load_folder_clips
from tests.conftest import write_tone
from tests.encoders import NaNEncoder, PickyEncoder, StatsEncoder


def expected(path: Path) -> np.ndarray:
    enc = StatsEncoder()
    from audiobench.audio import FileAudioRef, load_waveform

    return enc.embed([load_waveform(FileAudioRef(path), 16000, clip_id="x")])[0]


def test_second_pass_is_served_from_cache(labelled_folder: Path, tmp_path: Path) -> None:
    clips = load_folder_clips(labelled_folder)
    with EmbeddingCache(tmp_path / "c") as cache:
        enc = StatsEncoder()
        first = CachedEmbedder(enc, cache, batch_size=5)
        kept, arrays = first.embed(clips, "pass 1")
        assert (first.stats.n_encoded, first.stats.n_cached) == (12, 0)
        assert sum(enc.calls) == 12 and max(enc.calls) <= 5
        enc2 = StatsEncoder()
        second = CachedEmbedder(enc2, cache, batch_size=5)
        kept2, arrays2 = second.embed(clips, "pass 2")
        assert (second.stats.n_encoded, second.stats.n_cached) == (0, 12)
        assert enc2.calls == []
    assert [c.id for c in kept] == [c.id for c in kept2] == [c.id for c in clips]
    for a, b in zip(arrays, arrays2, strict=True):
        np.testing.assert_array_equal(a, b)


def test_batched_equals_one_at_a_time_and_keeps_order(labelled_folder: Path) -> None:
    clips = load_folder_clips(labelled_folder)
    _, batched = CachedEmbedder(StatsEncoder(), None, batch_size=7, chunk_size=7).embed(clips, "")
    _, single = CachedEmbedder(StatsEncoder(), None, batch_size=1).embed(clips, "")
    for clip, a, b in zip(clips, batched, single, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
        np.testing.assert_allclose(a, expected(clip.audio.path), rtol=1e-6)  # type: ignore[attr-defined]


def test_changing_pooling_or_params_misses_the_cache(labelled_folder: Path, tmp_path: Path) -> None:
    clips = load_folder_clips(labelled_folder)[:3]
    with EmbeddingCache(tmp_path / "c") as cache:
        CachedEmbedder(StatsEncoder(), cache).embed(clips, "")
        other = CachedEmbedder(StatsEncoder(layer=3), cache)
        other.embed(clips, "")
        assert other.stats.n_encoded == 3


def test_identical_waveforms_are_encoded_once(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        write_tone(tmp_path / "x" / f"{name}.wav")
    clips = load_folder_clips(tmp_path / "x")
    enc = StatsEncoder()
    # A task that declares duplicates legitimate; otherwise they are an error.
    kept, _ = CachedEmbedder(enc, None, allow_duplicates=True).embed(clips, "")
    assert sum(enc.calls) == 1 and len(kept) == 3


def _folder_with_bad_files(root: Path) -> Path:
    for k in range(6):
        write_tone(root / "ok" / f"c{k}.wav", seconds=0.3 + 0.01 * k, freq=300 + 50 * k)
    (root / "ok" / "c2.wav").write_bytes(b"garbage")
    write_tone(root / "ok" / "c4.wav", seconds=0.0)
    return root


def test_bad_audio_raises_naming_clip_and_file(tmp_path: Path) -> None:
    clips = load_folder_clips(_folder_with_bad_files(tmp_path / "d"))
    with pytest.raises(AudioDecodeError, match=r"clip 'ok/c2' \(file .*ok/c2.wav\)"):
        CachedEmbedder(StatsEncoder(), None).embed(clips, "")


def test_skip_keeps_labels_aligned(tmp_path: Path) -> None:
    root = _folder_with_bad_files(tmp_path / "d")
    clips = load_folder_clips(root)
    embedder = CachedEmbedder(StatsEncoder(), None, on_error="skip", batch_size=2, chunk_size=2)
    kept, arrays = embedder.embed(clips, "")
    assert [c.id for c in kept] == ["ok/c0", "ok/c1", "ok/c3", "ok/c5"]
    for clip, arr in zip(kept, arrays, strict=True):
        np.testing.assert_allclose(arr, expected(clip.audio.path), rtol=1e-6)  # type: ignore[attr-defined]
    skipped = {s.id: s for s in embedder.stats.skipped}
    assert set(skipped) == {"ok/c2", "ok/c4"}
    assert "c4.wav" in skipped["ok/c4"].location and "empty audio" in skipped["ok/c4"].reason


def test_nan_embeddings_are_errors_or_skips(tmp_path: Path) -> None:
    for k in range(4):
        write_tone(tmp_path / "n" / f"c{k}.wav", seconds=0.3 + 0.01 * k, freq=200 + 100 * k)
    clips = load_folder_clips(tmp_path / "n")
    with pytest.raises(EmbeddingError, match=r"clip 'c0' .*NaN/Inf"):
        CachedEmbedder(NaNEncoder(), None).embed(clips, "")
    embedder = CachedEmbedder(NaNEncoder(), None, on_error="skip")
    kept, _ = embedder.embed(clips, "")
    assert [c.id for c in kept] == ["c2", "c3"]
    assert [s.id for s in embedder.stats.skipped] == ["c0", "c1"]


def test_encoder_failure_isolates_the_offending_clip(tmp_path: Path) -> None:
    for k in range(4):
        write_tone(tmp_path / "p" / f"c{k}.wav", seconds=0.33 + 0.01 * k, freq=200 + 100 * k)
    clips = load_folder_clips(tmp_path / "p")
    with pytest.raises(EmbeddingError, match="encoder failed on a batch with clips"):
        CachedEmbedder(PickyEncoder(), None, batch_size=4).embed(clips, "")
    embedder = CachedEmbedder(PickyEncoder(), None, batch_size=4, on_error="skip")
    kept, _ = embedder.embed(clips, "")
    assert [c.id for c in kept] == ["c0", "c1", "c3"]
    assert "cannot handle" in embedder.stats.skipped[0].reason


KILL_SCRIPT = textwrap.dedent(
    """
    import os, sys
    from audiobench.cache import EmbeddingCache
    from audiobench.runner import CachedEmbedder
    from audiobench.sources import load_folder_clips
    from tests.encoders import StatsEncoder

    class DiesOnThirdBatch(StatsEncoder):
        def encode_audio(self, waveforms):
            if len(self.calls) == 2:
                os._exit(9)  # like SIGKILL: no cleanup, no exception handlers
            return super().encode_audio(waveforms)

    clips = load_folder_clips(sys.argv[1])
    DiesOnThirdBatch.meta = StatsEncoder.meta
    CachedEmbedder(DiesOnThirdBatch(), EmbeddingCache(sys.argv[2]), batch_size=3).embed(clips, "")
    """
)


def test_killed_run_resumes_where_it_stopped(labelled_folder: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    proc = subprocess.run(
        [sys.executable, "-c", KILL_SCRIPT, str(labelled_folder), str(cache_dir)],
        cwd=Path(__file__).parents[1],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 9, proc.stderr
    clips = load_folder_clips(labelled_folder)
    with EmbeddingCache(cache_dir) as cache:
        assert cache.count() == 6  # two committed batches of three
        enc = StatsEncoder()
        embedder = CachedEmbedder(enc, cache, batch_size=3)
        kept, _ = embedder.embed(clips, "resume")
    assert (embedder.stats.n_cached, embedder.stats.n_encoded) == (6, 6)
    assert sum(enc.calls) == 6 and len(kept) == 12
