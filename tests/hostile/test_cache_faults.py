"""Cache faults name the path and a remedy, and the remedy works (each test applies it)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from audiobench import cache as cache_module
from audiobench.cache import CacheDamagedError, CacheError, CacheFaultError, EmbeddingCache
from audiobench.cli import app
from tests.hostile.files import tone_folder

OTHER_FOLDER = r"keep the cache in another folder \(--cache-dir DIR or \$AUDIOBENCH_CACHE\)"


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_the_advised_cache_clear_repairs_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    directory = tmp_path / "c"
    directory.mkdir()
    (directory / "embeddings.sqlite").write_bytes(b"this is not a database\n" * 200)
    with pytest.raises(CacheDamagedError) as damaged:
        EmbeddingCache(directory)
    assert f"`audiobench cache clear --cache-dir {directory}`" in str(damaged.value)
    code, out, err = _cli("cache", "clear", "--cache-dir", str(directory), "--yes")
    assert (code, err) == (0, "")
    assert "embeddings.sqlite was damaged: deleted it and started an empty cache" in out
    with EmbeddingCache(directory) as cache:
        cache.put_many("fp", [("h", np.ones(2))])
        assert cache.count() == 1
    code, out, _ = _cli("cache", "info", "--cache-dir", str(directory))
    assert code == 0 and "1 embeddings" in out


def test_a_cache_folder_that_is_a_file_is_named_with_the_file_in_the_way(tmp_path: Path) -> None:
    blocking = tmp_path / "cache"
    blocking.write_text("a file\n")
    for asked in (blocking, blocking / "sub"):
        with pytest.raises(
            CacheError,
            match=rf"the embedding cache folder {asked} cannot be made: {blocking} is a file, "
            rf"not a folder; remove or rename it, or {OTHER_FOLDER}",
        ):
            EmbeddingCache(asked)
    code, _, err = _cli("cache", "info", "--cache-dir", str(blocking))
    assert code == 1 and err.startswith(f"error: the embedding cache folder {blocking} cannot")
    assert "damaged" not in err  # the old advice, which did not apply
    blocking.unlink()  # the remedy
    with EmbeddingCache(blocking) as cache:
        assert cache.count() == 0


def test_a_database_path_that_is_a_folder_is_named(tmp_path: Path) -> None:
    (tmp_path / "c" / "embeddings.sqlite").mkdir(parents=True)
    with pytest.raises(CacheError, match=r"c/embeddings.sqlite is a folder: remove it, or keep"):
        EmbeddingCache(tmp_path / "c")


def _read_only_connect(monkeypatch: pytest.MonkeyPatch) -> None:
    """Open the cache as SQLite does on a read-only file system (works as root too)."""
    connect = sqlite3.connect

    def read_only(path: object, **kwargs: object) -> sqlite3.Connection:
        return connect(f"file:{path}?mode=ro", uri=True, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cache_module.sqlite3, "connect", read_only)


def test_a_read_only_cache_names_the_path_and_another_folder_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with EmbeddingCache(tmp_path / "ro"):
        pass
    with monkeypatch.context() as patched:
        _read_only_connect(patched)
        with (
            pytest.raises(
                CacheFaultError,
                match=rf"cannot write the embedding cache {tmp_path}/ro/embeddings.sqlite "
                rf"\(attempt to write a readonly database\): make {tmp_path}/ro and the files in "
                rf"it writable, or {OTHER_FOLDER}; `audiobench evaluate --no-cache` runs without",
            ),
            EmbeddingCache(tmp_path / "ro") as cache,
        ):
            cache.put_many("fp", [("h", np.ones(2))])
    with EmbeddingCache(tmp_path / "elsewhere") as cache:  # the remedy
        cache.put_many("fp", [("h", np.ones(2))])
        assert cache.count() == 1


def test_a_cache_folder_that_cannot_be_created_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(self: Path, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(self))

    with monkeypatch.context() as patched:
        patched.setattr(Path, "mkdir", refuse)
        with pytest.raises(
            CacheError,
            match=rf"cannot create the embedding cache folder {tmp_path}/new \(Permission "
            rf"denied\): create it or make its parent writable, or {OTHER_FOLDER}",
        ):
            EmbeddingCache(tmp_path / "new")
    with EmbeddingCache(tmp_path / "new") as cache:
        assert cache.count() == 0


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through file permissions")
def test_a_read_only_folder_for_real(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        with pytest.raises(CacheError, match=rf"{folder}.*writable"), EmbeddingCache(folder) as c:
            c.put_many("fp", [("h", np.ones(2))])
    finally:
        folder.chmod(0o755)


def _limit_pages(cache: EmbeddingCache) -> None:
    """A disk that is full from now on: no page beyond those the database holds."""
    pages = cache._conn.execute("PRAGMA page_count").fetchone()[0]
    cache._conn.execute(f"PRAGMA max_page_count={pages + 2}")


def test_a_full_disk_names_the_path_and_clearing_frees_room(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    with EmbeddingCache(tmp_path / "c") as cache:
        cache.put_many("old", [(f"k{i}", rng.standard_normal(512)) for i in range(40)])
        _limit_pages(cache)
        with pytest.raises(
            CacheFaultError,
            match=rf"the disk holding the embedding cache {tmp_path}/c/embeddings.sqlite is full "
            rf"\(database or disk is full\): free space there \(`audiobench cache clear "
            rf"--cache-dir {tmp_path}/c` deletes cached embeddings\), or {OTHER_FOLDER}",
        ) as full:
            cache.put_many("new", [(f"n{i}", rng.standard_normal(4096)) for i in range(8)])
        assert isinstance(full.value, sqlite3.OperationalError)  # as before, and more
        assert cache.count("new") == 0 and cache.count("old") == 40  # nothing half-written
        assert cache.clear() == 40  # the remedy, within the same limit
        cache.put_many("new", [(f"n{i}", rng.standard_normal(512)) for i in range(8)])
        assert cache.count("new") == 8


def test_a_full_disk_during_a_run_is_one_line_naming_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    connect = EmbeddingCache._connect

    def full_disk(self: EmbeddingCache) -> sqlite3.Connection:
        conn = connect(self)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count={pages}")
        return conn

    monkeypatch.setattr(EmbeddingCache, "_connect", full_disk)
    root = tone_folder(tmp_path / "d", n=8)
    args = ["evaluate", "--task", f"folder:{root}", "--model", "log-mel", "--no-flops",
            "--no-progress", "--permutations", "5", "--bootstrap", "5",
            "--output-dir", str(tmp_path / "out")]  # fmt: skip
    code, _, err = _cli(*args, "--cache-dir", str(tmp_path / "c"))
    assert code == 1
    [line] = [line for line in err.splitlines() if line.startswith("error:")]
    assert line.startswith(f"error: the disk holding the embedding cache {tmp_path}/c/")
    assert "`audiobench evaluate --no-cache` runs without one" in line
    code, _, err = _cli(*args, "--no-cache")  # the remedy named last
    assert code == 0, err


def test_a_locked_database_names_the_path_and_a_rerun_goes_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_module, "BUSY_TIMEOUT_MS", 50)
    with EmbeddingCache(tmp_path / "c") as cache, EmbeddingCache(tmp_path / "c") as other:
        other._conn.execute("BEGIN IMMEDIATE")
        with pytest.raises(
            CacheFaultError,
            match=rf"the embedding cache {tmp_path}/c/embeddings.sqlite is locked by another "
            r"process \(an audiobench run or `cache clear` using the same cache; waited "
            r"0.05 s\): rerun when it has finished \(finished batches stay cached\), or keep",
        ):
            cache.put_many("fp", [("x", np.ones(2))])
        other._conn.execute("ROLLBACK")  # the other process finishes
        cache.put_many("fp", [("x", np.ones(2))])  # the rerun
        assert cache.count() == 1
