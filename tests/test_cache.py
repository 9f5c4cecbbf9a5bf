from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from audiobench.cache import EmbeddingCache, default_cache_dir


def test_round_trip_keeps_dtype_and_shape(tmp_path: Path) -> None:
    arrays = {
        "a": np.arange(6, dtype=np.float32).reshape(2, 3),
        "b": np.array([1, 2, 3], dtype=np.int16),
        "c": np.float64(2.5) * np.ones(4),
    }
    with EmbeddingCache(tmp_path) as cache:
        cache.put_many("fp", list(arrays.items()))
        got = cache.get_many("fp", ["a", "b", "c", "missing"])
    assert set(got) == {"a", "b", "c"}
    for key, arr in arrays.items():
        assert got[key].dtype == arr.dtype and got[key].shape == arr.shape
        np.testing.assert_array_equal(got[key], arr)


def test_keys_are_scoped_by_fingerprint_and_persist(tmp_path: Path) -> None:
    with EmbeddingCache(tmp_path) as cache:
        cache.put_many("fp1", [("h", np.ones(2))])
    with EmbeddingCache(tmp_path) as cache:  # reopened: still there
        assert set(cache.get_many("fp1", ["h"])) == {"h"}
        assert cache.get_many("fp2", ["h"]) == {}


def test_many_keys_are_chunked(tmp_path: Path) -> None:
    with EmbeddingCache(tmp_path) as cache:
        items = [(f"k{i}", np.full(3, i, dtype=np.float32)) for i in range(2500)]
        cache.put_many("fp", items)
        got = cache.get_many("fp", [k for k, _ in items])
        assert len(got) == 2500 and got["k2499"][0] == 2499
        assert cache.count("fp") == 2500


def test_summary_and_clear_by_model(tmp_path: Path) -> None:
    with EmbeddingCache(tmp_path) as cache:
        cache.register_encoder("fpA", {"name": "model-a", "revision": "r1"})
        cache.register_encoder("fpB", {"name": "model-b"})
        cache.put_many("fpA", [("x", np.ones(4, dtype=np.float32))])
        cache.put_many("fpB", [("x", np.ones(2)), ("y", np.ones(2))])
        summary = {s.name: s for s in cache.summary()}
        assert summary["model-a"].n_entries == 1 and summary["model-a"].n_bytes == 16
        assert summary["model-b"].n_entries == 2
        assert cache.clear("model-b") == 2
        assert cache.count() == 1
        assert cache.clear() == 1
        assert cache.count() == 0


def test_failed_batch_is_not_half_written(tmp_path: Path) -> None:
    class Boom:
        dtype = np.dtype("float32")

        def __array__(self, *a: object, **k: object) -> np.ndarray:
            raise RuntimeError("boom")

    with EmbeddingCache(tmp_path) as cache:
        with pytest.raises(RuntimeError):
            cache.put_many("fp", [("ok", np.ones(2)), ("bad", Boom())])  # type: ignore[list-item]
        assert cache.count("fp") == 0


def test_default_dir_honours_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AUDIOBENCH_CACHE", str(tmp_path / "c"))
    assert default_cache_dir() == tmp_path / "c"


def test_an_entry_whose_bytes_do_not_match_its_shape_is_a_miss(tmp_path: Path) -> None:
    with EmbeddingCache(tmp_path) as cache:
        cache.put_many("fp", [("good", np.ones(4)), ("bad", np.ones(4))])
        cache._conn.execute("UPDATE embeddings SET data = x'0102' WHERE clip_hash = 'bad'")
        assert set(cache.get_many("fp", ["good", "bad"])) == {"good"}
        cache.put_many("fp", [("bad", np.ones(4))])  # recomputed: replaces the entry
        np.testing.assert_array_equal(cache.get_many("fp", ["bad"])["bad"], np.ones(4))


def test_writes_re_register_their_encoder(tmp_path: Path) -> None:
    with EmbeddingCache(tmp_path) as writer, EmbeddingCache(tmp_path) as other:
        writer.register_encoder("fpA", {"name": "model-a"})
        writer.put_many("fpA", [("x", np.ones(2))])
        assert other.clear() == 1
        writer.put_many("fpA", [("y", np.ones(2))])  # a run that goes on after the clear
        assert [(s.name, s.n_entries) for s in other.summary()] == [("model-a", 1)]
        assert other.clear("model-a") == 1 and other.count() == 0


def test_lock_errors_are_not_taken_for_damage(tmp_path: Path) -> None:
    with EmbeddingCache(tmp_path) as cache:
        cache._conn.execute("PRAGMA busy_timeout=0")
        with EmbeddingCache(tmp_path) as other:
            other._conn.execute("BEGIN IMMEDIATE")
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                cache.put_many("fp", [("x", np.ones(2))])
            other._conn.execute("ROLLBACK")
        cache.put_many("fp", [("x", np.ones(2))])
        assert cache.count() == 1
