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
Every other fault (a folder that is a file or not writable, a full disk, a
database locked by another process) raises :class:`~audiobench.errors.CacheError`
naming the path and what to do about it.
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

from audiobench.errors import CacheError

__all__ = [
    "CacheDamagedError",
    "CacheError",
    "CacheFaultError",
    "CacheSummary",
    "EmbeddingCache",
    "default_cache_dir",
]

_DB_NAME = "embeddings.sqlite"
# The database and SQLite's companion files (write-ahead log, shared memory, journal).
_DB_SUFFIXES = ("", "-wal", "-shm", "-journal")
# SQLite result codes of a damaged file: SQLITE_CORRUPT and SQLITE_NOTADB.
_DAMAGE_CODES = (11, 26)
# SQLite's primary result codes of the faults a user can fix (sqlite3.h).
_PERM, _BUSY, _LOCKED, _READONLY, _IOERR, _FULL, _CANTOPEN = 3, 5, 6, 8, 10, 13, 14
#: How long a write waits for another process's lock before giving up (milliseconds).
BUSY_TIMEOUT_MS = 30_000
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


class CacheDamagedError(CacheError):
    """The cache database is not a readable SQLite database; deleting it is the fix."""

    def __init__(self, path: Path, detail: object) -> None:
        self.path = path
        super().__init__(
            f"the embedding cache {path} is damaged ({detail}); delete and rebuild it with "
            f"`audiobench cache clear --cache-dir {path.parent}` (embeddings are recomputed "
            "when next needed)"
        )


class CacheFaultError(CacheError, sqlite3.OperationalError):
    """SQLite refused an operation on the cache (locked, disk full, read-only...).

    Still a ``sqlite3.OperationalError``, as it was before it named the path and a remedy.
    """


def _is_damage(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in _DAMAGE_CODES
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


# The remedy every fault shares: another place, or no cache at all.
_ELSEWHERE = (
    "or keep the cache in another folder (--cache-dir DIR or $AUDIOBENCH_CACHE); "
    "`audiobench evaluate --no-cache` runs without one"
)


def _fault(path: Path, exc: sqlite3.DatabaseError) -> CacheError:
    """SQLite's error on the cache database as a message naming the path and a remedy."""
    if _is_damage(exc):
        return CacheDamagedError(path, exc)
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    folder = path.parent
    if code in (_BUSY, _LOCKED):
        return CacheFaultError(
            f"the embedding cache {path} is locked by another process (an audiobench run or "
            f"`cache clear` using the same cache; waited {BUSY_TIMEOUT_MS / 1000:g} s): rerun "
            f"when it has finished (finished batches stay cached), {_ELSEWHERE}"
        )
    if code == _FULL:
        return CacheFaultError(
            f"the disk holding the embedding cache {path} is full ({exc}): free space there "
            f"(`audiobench cache clear --cache-dir {folder}` deletes cached embeddings), "
            f"{_ELSEWHERE}"
        )
    if code in (_READONLY, _PERM, _CANTOPEN):
        return CacheFaultError(
            f"cannot write the embedding cache {path} ({exc}): make {folder} and the files "
            f"in it writable, {_ELSEWHERE}"
        )
    return CacheFaultError(
        f"the embedding cache {path} cannot be used ({exc}); if it persists, "
        f"`audiobench cache clear --cache-dir {folder}` starts an empty one, "
        f"{_ELSEWHERE}"
    )


def _make_folder(directory: Path) -> None:
    """Create the cache folder; a file in the way or a refusal is a :class:`CacheError`."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        # The file in the way: the folder itself or one of the folders above it.
        blocking = next(
            (p for p in (directory, *directory.parents) if p.exists() and not p.is_dir()),
            directory,
        )
        raise CacheError(
            f"the embedding cache folder {directory} cannot be made: {blocking} is a file, "
            f"not a folder; remove or rename it, {_ELSEWHERE}"
        ) from None
    except OSError as exc:
        raise CacheError(
            f"cannot create the embedding cache folder {directory} "
            f"({exc.strerror or exc}): create it or make its parent writable, "
            f"{_ELSEWHERE}"
        ) from None


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
        _make_folder(self.directory)
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
        if self.path.is_dir():
            raise CacheError(
                f"the embedding cache database {self.path} is a folder: remove it, {_ELSEWHERE}"
            )
        # Autocommit mode; transactions are opened explicitly around batches.
        with self._guard():
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            with self._guard():
                conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_MS)}")
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.executescript(_SCHEMA)
        except BaseException:
            conn.close()
            raise
        return conn

    def _rebuild(self) -> None:
        """Delete the damaged database (and its companion files) and open an empty one."""
        for suffix in _DB_SUFFIXES:
            companion = Path(f"{self.path}{suffix}")
            try:
                companion.unlink(missing_ok=True)
            except OSError as exc:
                raise CacheError(
                    f"the embedding cache {self.path} is damaged and cannot be deleted "
                    f"({exc.strerror or exc}): delete {companion} by hand, {_ELSEWHERE}"
                ) from None
        self._conn = self._connect()
        self.repaired = True

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """Turn SQLite's errors into a :class:`CacheError` naming the path and a remedy.

        Corruption becomes :class:`CacheDamagedError` (what ``repair`` acts on).
        """
        try:
            yield
        except (sqlite3.ProgrammingError, sqlite3.InterfaceError, sqlite3.IntegrityError):
            raise  # misuse of the database by this module: a bug, not the user's to fix
        except sqlite3.DatabaseError as exc:
            raise _fault(self.path, exc) from exc

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
