"""The embedding cache: a SQLite key-value store of pooled encoder outputs.

Key: (encoder fingerprint, content hash of the waveform the encoder saw), so
the same clip in two tasks or two datasets is encoded once, and any change to
model, revision, parameters or pooling misses. Values keep dtype and shape.

SQLite in WAL mode is an embedded, crash-safe database: every batch is
committed as soon as it is encoded, so a run that is killed resumes from the
last committed batch.

A damaged database file (not SQLite, or corrupted pages) raises
:class:`CacheDamagedError`, whose message says how to recover: the cache only
holds what can be recomputed, so ``EmbeddingCache(..., repair=True)`` and
:meth:`EmbeddingCache.clear` delete a damaged file and start an empty one.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import platformdirs

__all__ = ["CacheDamagedError", "CacheSummary", "EmbeddingCache", "default_cache_dir"]

_DB_NAME = "embeddings.sqlite"
# The database and SQLite's companion files (write-ahead log, shared memory, journal).
_DB_SUFFIXES = ("", "-wal", "-shm", "-journal")
# SQLite result codes of a damaged file: SQLITE_CORRUPT and SQLITE_NOTADB.
_DAMAGE_CODES = (11, 26)
# SQLite's default limit on host parameters is 999 in old builds.
_CHUNK = 900

_SCHEMA = """
CREATE TABLE IF NOT EXISTS encoders (
    fingerprint TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS embeddings (
    fingerprint TEXT NOT NULL,
    clip_hash TEXT NOT NULL,
    dtype TEXT NOT NULL,
    shape TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (fingerprint, clip_hash)
) WITHOUT ROWID;
"""


def default_cache_dir() -> Path:
    """``$AUDIOBENCH_CACHE`` if set, else the user's cache directory."""
    env = os.environ.get("AUDIOBENCH_CACHE")
    return Path(env) if env else Path(platformdirs.user_cache_dir("audiobench"))


class CacheDamagedError(RuntimeError):
    """The cache database is not a readable SQLite database; deleting it is the fix."""

    def __init__(self, path: Path, detail: object) -> None:
        self.path = path
        super().__init__(
            f"the embedding cache {path} is damaged ({detail}); delete and rebuild it with "
            f"`audiobench cache clear --cache-dir {path.parent}` (embeddings are recomputed "
            "when next needed)"
        )


def _is_damage(exc: sqlite3.DatabaseError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in _DAMAGE_CODES
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


@dataclass(frozen=True)
class CacheSummary:
    fingerprint: str
    name: str
    description: dict[str, Any]
    n_entries: int
    n_bytes: int


class EmbeddingCache:
    """SQLite-backed store of pooled embeddings; one file shared by all runs.

    ``repair=True`` deletes a database found damaged on opening and starts an
    empty one (``repaired`` then says so); otherwise damage raises
    :class:`CacheDamagedError`.
    """

    def __init__(
        self, directory: str | os.PathLike[str] | None = None, *, repair: bool = False
    ) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / _DB_NAME
        #: Whether a damaged database was deleted and replaced by an empty one.
        self.repaired = False
        # Encoders registered through this connection, re-registered with every
        # write so that a concurrent `cache clear` cannot leave nameless entries.
        self._encoders: dict[str, tuple[str, str, str, float]] = {}
        try:
            self._conn = self._connect()
        except CacheDamagedError:
            if not repair:
                raise
            self._rebuild()

    def _connect(self) -> sqlite3.Connection:
        # Autocommit mode; transactions are opened explicitly around batches.
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            with self._guard():
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute("PRAGMA busy_timeout=30000")
                conn.executescript(_SCHEMA)
        except BaseException:
            conn.close()
            raise
        return conn

    def _rebuild(self) -> None:
        """Delete the damaged database (and its companion files) and open an empty one."""
        for suffix in _DB_SUFFIXES:
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        self._conn = self._connect()
        self.repaired = True

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """Turn SQLite's corruption errors into :class:`CacheDamagedError`."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            if _is_damage(exc):
                raise CacheDamagedError(self.path, exc) from exc
            raise

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading and writing ---------------------------------------------------

    def register_encoder(self, fingerprint: str, description: Mapping[str, Any]) -> None:
        row = (
            fingerprint,
            str(description.get("name", "?")),
            json.dumps(description, sort_keys=True, default=str),
            time.time(),
        )
        self._encoders[fingerprint] = row
        with self._guard():
            self._conn.execute("INSERT OR IGNORE INTO encoders VALUES (?, ?, ?, ?)", row)

    def get_many(self, fingerprint: str, clip_hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """Cached arrays for those hashes that are present (absent ones are omitted).

        An entry whose bytes do not match its recorded dtype and shape is
        treated as absent, so the caller recomputes (and overwrites) it.
        """
        wanted = list(dict.fromkeys(clip_hashes))
        found: dict[str, np.ndarray] = {}
        with self._guard():
            for start in range(0, len(wanted), _CHUNK):
                chunk = wanted[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    "SELECT clip_hash, dtype, shape, data FROM embeddings "
                    f"WHERE fingerprint = ? AND clip_hash IN ({marks})",
                    (fingerprint, *chunk),
                )
                for clip_hash, dtype, shape, data in rows:
                    try:
                        found[clip_hash] = np.frombuffer(data, dtype=np.dtype(dtype)).reshape(
                            json.loads(shape)
                        )
                    except (TypeError, ValueError):
                        continue
        return found

    def has_many(self, fingerprint: str, clip_hashes: Iterable[str]) -> set[str]:
        """The hashes with a non-empty entry, looked up without reading the data.

        For outputs too large to read only to learn that they are there (frame
        outputs: megabytes per clip); a damaged entry still counts as present.
        """
        wanted = list(dict.fromkeys(clip_hashes))
        present: set[str] = set()
        with self._guard():
            for start in range(0, len(wanted), _CHUNK):
                chunk = wanted[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    "SELECT clip_hash FROM embeddings WHERE fingerprint = ? "
                    f"AND length(data) > 0 AND clip_hash IN ({marks})",
                    (fingerprint, *chunk),
                )
                present.update(row[0] for row in rows)
        return present

    def put_many(self, fingerprint: str, items: Sequence[tuple[str, np.ndarray]]) -> None:
        """Store a batch in one transaction, so it is either all there or not at all."""
        rows = [
            (
                fingerprint,
                clip_hash,
                np.asarray(arr).dtype.str,
                json.dumps(list(np.shape(arr))),
                np.ascontiguousarray(arr).tobytes(),
            )
            for clip_hash, arr in items
        ]
        encoder = self._encoders.get(fingerprint)
        with self._guard(), self._transaction():
            if encoder is not None:
                self._conn.execute("INSERT OR IGNORE INTO encoders VALUES (?, ?, ?, ?)", encoder)
            self._conn.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?, ?)", rows)

    def _transaction(self) -> _Transaction:
        return _Transaction(self._conn)

    # -- inspection and maintenance --------------------------------------------

    def summary(self) -> list[CacheSummary]:
        with self._guard():
            rows = self._conn.execute(
                "SELECT e.fingerprint, COALESCE(m.name, '?'), COALESCE(m.description, '{}'), "
                "COUNT(*), SUM(LENGTH(e.data)) FROM embeddings e "
                "LEFT JOIN encoders m ON m.fingerprint = e.fingerprint GROUP BY e.fingerprint "
                "ORDER BY 2"
            ).fetchall()
        return [
            CacheSummary(fp, name, json.loads(desc), n, b or 0) for fp, name, desc, n, b in rows
        ]

    def count(self, fingerprint: str | None = None) -> int:
        with self._guard():
            if fingerprint is None:
                return int(self._conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])
            row = self._conn.execute(
                "SELECT COUNT(*) FROM embeddings WHERE fingerprint = ?", (fingerprint,)
            ).fetchone()
            return int(row[0])

    def clear(self, model: str | None = None) -> int:
        """Delete everything, or only the entries of encoders with registry name ``model``.

        Returns the number of entries deleted. A damaged database is deleted
        whole and replaced by an empty one (``repaired`` becomes true; 0 is
        returned, as its entries cannot be counted).
        """
        try:
            return self._clear(model)
        except CacheDamagedError:
            self._conn.close()
            self._rebuild()
            return 0

    def _clear(self, model: str | None) -> int:
        with self._guard():
            with self._transaction():
                if model is None:
                    n = self._conn.execute("DELETE FROM embeddings").rowcount
                    self._conn.execute("DELETE FROM encoders")
                else:
                    fps = [
                        r[0]
                        for r in self._conn.execute(
                            "SELECT fingerprint FROM encoders WHERE name = ?", (model,)
                        )
                    ]
                    n = 0
                    for fp in fps:
                        n += self._conn.execute(
                            "DELETE FROM embeddings WHERE fingerprint = ?", (fp,)
                        ).rowcount
                        self._conn.execute("DELETE FROM encoders WHERE fingerprint = ?", (fp,))
            self._conn.execute("VACUUM")
        return n


class _Transaction:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def __enter__(self) -> None:
        self._conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            self._conn.execute("COMMIT")
            return
        # SQLite may have rolled back by itself; the first error is the one to report.
        with suppress(sqlite3.Error):
            self._conn.execute("ROLLBACK")
