"""Item 10: ``on_error="skip"`` covers every per-clip failure of the embedding stage."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from audiobench import registry
from audiobench.audio import AudioDecodeError, decode_clip, waveform_hash
from audiobench.cache import EmbeddingCache
from audiobench.runner import CachedEmbedder
from audiobench.sources import DatasetError, load_folder_clips
from tests.encoders import NaNEncoder, StatsEncoder
from tests.hostile.files import tone_folder, write_labels


def _with_missing_file(root: Path) -> Path:
    tone_folder(root, n=3)
    write_labels(root, ["c0.wav,a", "gone.wav,b", "c1.wav,b", "c2.wav,a"])
    return root


def test_a_missing_file_is_skipped_and_recorded(tmp_path: Path) -> None:
    root = _with_missing_file(tmp_path / "d")
    with pytest.raises(DatasetError, match=r"line 3: audio file .*gone.wav not found"):
        load_folder_clips(root)  # without the opt-in, found before anything is encoded
    clips = load_folder_clips(root, missing_ok=True)
    with pytest.raises(
        AudioDecodeError, match=r"clip 'gone' \(file .*gone.wav\): unreadable audio: file not found"
    ):
        CachedEmbedder(StatsEncoder(), None).embed(clips, "")
    embedder = CachedEmbedder(StatsEncoder(), None, on_error="skip")
    kept, arrays = embedder.embed(clips, "")
    assert [c.id for c in kept] == ["c0", "c1", "c2"] and len(arrays) == 3
    [skipped] = embedder.stats.skipped
    assert skipped.id == "gone"
    assert skipped.location == f"file {(root / 'gone.wav').resolve()}"
    assert "file not found" in skipped.reason


def test_a_task_loads_a_missing_file_for_the_runner_to_skip(tmp_path: Path) -> None:
    root = _with_missing_file(tmp_path / "d")
    task = registry.tasks.create(f"folder:{root}")
    with pytest.raises(DatasetError, match=r"gone\.wav not found"):
        task.load_data()
    assert [c.id for c in task.load_data(missing_ok=True)] == ["c0", "gone", "c1", "c2"]


def _plant(cache_dir: Path, encoder: StatsEncoder, clip_path: Path, value: float) -> None:
    """Overwrite (or create) the cached embedding of one clip with a non-finite vector."""
    from audiobench.audio import Clip, FileAudioRef

    wave = decode_clip(Clip(id="x", audio=FileAudioRef(clip_path)), 16000, 16000)
    with EmbeddingCache(cache_dir) as cache:
        cache.put_many(
            encoder.fingerprint(), [(waveform_hash(wave, 16000), np.full(4, value, np.float32))]
        )


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_a_non_finite_vector_in_the_cache_is_encoded_again(tmp_path: Path, value: float) -> None:
    root = tone_folder(tmp_path / "d", n=4)
    clips = load_folder_clips(root)
    with EmbeddingCache(tmp_path / "c") as cache:
        _, reference = CachedEmbedder(StatsEncoder(), cache).embed(clips, "")
    _plant(tmp_path / "c", StatsEncoder(), root / "c2.wav", value)
    with EmbeddingCache(tmp_path / "c") as cache:
        embedder = CachedEmbedder(StatsEncoder(), cache)
        kept, arrays = embedder.embed(clips, "")
        assert (embedder.stats.n_cached, embedder.stats.n_encoded) == (3, 1)
        assert len(kept) == 4 and not embedder.stats.skipped
        for got, want in zip(arrays, reference, strict=True):
            np.testing.assert_array_equal(got, want)
        assert (
            "held NaN/Inf values and were encoded again (clips 'c2')" in (embedder.stats.events[0])
        )
        # The repaired entry is served next time.
        again = CachedEmbedder(StatsEncoder(), cache)
        again.embed(clips, "")
        assert again.stats.n_cached == 4 and not again.stats.events


def test_a_clip_non_finite_in_cache_and_encoder_is_skipped(tmp_path: Path) -> None:
    root = tone_folder(tmp_path / "d", n=4)  # c0 and c1 are shorter than NaNEncoder's 0.32 s
    clips = load_folder_clips(root)
    _plant(tmp_path / "c", NaNEncoder(), root / "c1.wav", np.nan)
    with EmbeddingCache(tmp_path / "c") as cache:
        embedder = CachedEmbedder(NaNEncoder(), cache, on_error="skip")
        kept, _ = embedder.embed(clips, "")
    assert [c.id for c in kept] == ["c2", "c3"]
    assert [
        (s.id, "embedding has 1 NaN/Inf values" in s.reason) for s in embedder.stats.skipped
    ] == [
        ("c0", True),
        ("c1", True),
    ]
    assert "encoded again (clips 'c1')" in embedder.stats.events[0]


def test_evaluate_under_skip_records_a_missing_file_and_scores_the_rest(tmp_path: Path) -> None:
    import audiobench

    root = tone_folder(tmp_path / "d", n=8)
    rows = [f"c{k}.wav,{'ab'[k % 2]}" for k in range(8)]
    write_labels(root, [*rows[:3], "gone.wav,b", *rows[3:]])
    settings = {
        "output_dir": tmp_path / "out",
        "progress": False,
        "use_cache": False,
        "task_options": {"n_permutations": 5, "n_bootstrap": 5},
    }
    with pytest.raises(DatasetError, match=r"gone.wav not found"):
        audiobench.evaluate(f"folder:{root}", "log-mel", **settings)
    [result] = audiobench.evaluate(f"folder:{root}", "log-mel", on_error="skip", **settings)
    assert [s.id for s in result.skipped] == ["gone"]
    assert "file not found" in result.skipped[0].reason
    assert result.cache.n_encoded == 8 and result.main_score is not None
