"""Items 7 and 11: a damaged cache database, and `cache clear` during a run."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

import audiobench
from audiobench.cache import CacheDamagedError, EmbeddingCache
from audiobench.runner import CachedEmbedder
from audiobench.sources import load_folder_clips
from tests.encoders import StatsEncoder
from tests.hostile.files import tone_folder

RECOVER = r"`audiobench cache clear --cache-dir \S+` \(embeddings are recomputed"


def _not_sqlite(directory: Path) -> Path:
    directory.mkdir(parents=True)
    (directory / "embeddings.sqlite").write_bytes(b"this is not a database\n" * 200)
    return directory


def _corrupted(directory: Path) -> Path:
    with EmbeddingCache(directory) as cache:
        rng = np.random.default_rng(0)
        cache.put_many("fp", [(f"k{i}", rng.standard_normal(128)) for i in range(600)])
    with sqlite3.connect(directory / "embeddings.sqlite") as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    path = directory / "embeddings.sqlite"
    data = bytearray(path.read_bytes())
    data[4096 * 3 : 4096 * 60] = b"\xff" * (4096 * 57)
    path.write_bytes(bytes(data))
    return directory


def test_a_file_that_is_not_sqlite_gives_a_recoverable_error(tmp_path: Path) -> None:
    directory = _not_sqlite(tmp_path / "c")
    with pytest.raises(
        CacheDamagedError,
        match=rf"c/embeddings.sqlite is damaged \(file is not a database\); .*{RECOVER}",
    ):
        EmbeddingCache(directory)
    with EmbeddingCache(directory, repair=True) as cache:  # what `cache clear` opens with
        assert cache.repaired and cache.count() == 0
        cache.put_many("fp", [("h", np.ones(2))])
    with EmbeddingCache(directory) as cache:
        assert not cache.repaired and cache.count() == 1


def test_corrupted_pages_give_a_recoverable_error_and_clear_rebuilds(tmp_path: Path) -> None:
    directory = _corrupted(tmp_path / "c")
    with EmbeddingCache(directory) as cache:
        with pytest.raises(CacheDamagedError, match=rf"malformed.*{RECOVER}"):
            cache.count()
        with pytest.raises(CacheDamagedError):
            cache.summary()
        assert cache.clear() == 0 and cache.repaired
        assert cache.count() == 0 and cache.summary() == []
        cache.put_many("fp", [("h", np.ones(2))])
        assert cache.count() == 1


def test_evaluate_reports_a_damaged_cache_by_its_error(tmp_path: Path) -> None:
    root = tone_folder(tmp_path / "d", n=4)
    with pytest.raises(CacheDamagedError, match=RECOVER):
        audiobench.evaluate(
            f"folder:{root}",
            StatsEncoder(),
            output_dir=tmp_path / "res",
            cache_dir=_not_sqlite(tmp_path / "c"),
            progress=False,
            count_flops=False,
        )


class ClearsTheCacheMidRun(StatsEncoder):
    """Runs `cache clear` from another connection after its first batch."""

    def __init__(self, cache_dir: Path) -> None:
        super().__init__()
        self.cache_dir = cache_dir

    def encode_audio(self, waveforms: list[np.ndarray]) -> list[np.ndarray]:  # type: ignore[override]
        if len(self.calls) == 1:
            with EmbeddingCache(self.cache_dir) as other:
                assert other.clear() == 1
        return super().encode_audio(waveforms)


def test_cache_clear_during_a_run_leaves_no_orphaned_entries(tmp_path: Path) -> None:
    clips = load_folder_clips(tone_folder(tmp_path / "d", n=4))
    with EmbeddingCache(tmp_path / "c") as cache:
        CachedEmbedder(ClearsTheCacheMidRun(tmp_path / "c"), cache, batch_size=1).embed(clips, "")
        [entry] = cache.summary()
        assert (entry.name, entry.n_entries) == ("test-stats", 3)  # written after the clear
        assert cache.clear("test-stats") == 3
        assert cache.count() == 0
