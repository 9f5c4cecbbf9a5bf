"""The embedding cache: a SQLite key-value store of pooled encoder outputs.

Key: (encoder fingerprint, content hash of the waveform the encoder saw), so
the same clip in two tasks or two datasets is encoded once, and any change to
model, revision, parameters or pooling misses. Values keep dtype and shape.

SQLite in WAL mode is an embedded, crash-safe database: every batch is
committed as soon as it is encoded, so a run that is killed resumes from the
last committed batch.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import platformdirs

__all__ = ["CacheSummary", "EmbeddingCache", "default_cache_dir"]

_DB_NAME = "embeddings.sqlite"
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


@dataclass(frozen=True)
class CacheSummary:
    fingerprint: str
    name: str
    description: dict[str, Any]
    n_entries: int
    n_bytes: int


class EmbeddingCache:
    """SQLite-backed store of pooled embeddings; one file shared by all runs."""

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / _DB_NAME
        # Autocommit mode; transactions are opened explicitly around batches.
        self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA busy_timeout=30000")
        self._conn.executescript(_SCHEMA)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading and writing ---------------------------------------------------

    def register_encoder(self, fingerprint: str, description: Mapping[str, Any]) -> None:
        self._conn.execute(
            "INSERT OR IGNORE INTO encoders VALUES (?, ?, ?, ?)",
            (
                fingerprint,
                str(description.get("name", "?")),
                json.dumps(description, sort_keys=True, default=str),
                time.time(),
            ),
        )

    def get_many(self, fingerprint: str, clip_hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """Cached arrays for those hashes that are present (absent ones are omitted)."""
        wanted = list(dict.fromkeys(clip_hashes))
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self._conn.execute(
                "SELECT clip_hash, dtype, shape, data FROM embeddings "
                f"WHERE fingerprint = ? AND clip_hash IN ({marks})",
                (fingerprint, *chunk),
            )
            for clip_hash, dtype, shape, data in rows:
                found[clip_hash] = np.frombuffer(data, dtype=np.dtype(dtype)).reshape(
                    json.loads(shape)
                )
        return found

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
        with self._transaction():
            self._conn.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?, ?)", rows)

    def _transaction(self) -> _Transaction:
        return _Transaction(self._conn)

    # -- inspection and maintenance --------------------------------------------

    def summary(self) -> list[CacheSummary]:
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
        if fingerprint is None:
            return self._conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
        return self._conn.execute(
            "SELECT COUNT(*) FROM embeddings WHERE fingerprint = ?", (fingerprint,)
        ).fetchone()[0]

    def clear(self, model: str | None = None) -> int:
        """Delete everything, or only the entries of encoders with registry name ``model``."""
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
        self._conn.execute("ROLLBACK" if exc_type is not None else "COMMIT")
