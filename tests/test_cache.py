from __future__ import annotations

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
