"""Content digests of local weights, so a cache key follows the files and not their path.

A model loaded from a local directory (``hf:<dir>``, ``--weights <dir>``) is
identified by a SHA-256 over the weight and configuration files in that
directory (top level, the files ``from_pretrained`` reads: ``*.safetensors``,
``*.bin``, ``*.json``, tokenizer files, shipped code, ...; hidden files and
documentation are left out). Rewriting the weights in place therefore changes
the encoder's fingerprint, and cached embeddings of the old weights are no
longer served.

Hashing gigabytes on every run would be slow, so each file's hash is kept in a
small index (``weights-digests.json`` in the default cache folder) keyed by
the file's path, size, modification and change times and inode: an unchanged
directory costs one ``stat`` per file, a changed file is hashed again in full.
The index is only a shortcut: when it cannot be read or written, files are
hashed every time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["DIGESTED_SUFFIXES", "INDEX_NAME", "file_sha256", "index_path", "weights_digest"]

#: Suffixes of the files that make up a checkpoint: weights, then configuration and tokenizers.
DIGESTED_SUFFIXES = frozenset(
    {
        ".safetensors",
        ".bin",
        ".pt",
        ".pth",
        ".ckpt",
        ".h5",
        ".msgpack",
        ".onnx",
        ".npz",
        ".npy",
        ".gguf",
        ".json",
        ".txt",
        ".model",
        ".py",
        ".yaml",
        ".yml",
        ".tiktoken",
    }
)

INDEX_NAME = "weights-digests.json"
_INDEX_VERSION = 1
_BLOCK = 1 << 20


def index_path() -> Path:
    """Where the (path, size, times, inode) → SHA-256 index lives: the default cache folder."""
    from audiobench.cache import default_cache_dir

    return default_cache_dir() / INDEX_NAME


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _stat_key(stat: os.stat_result) -> list[int]:
    return [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino]


def _read_index(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != _INDEX_VERSION:
        return {}
    files = data.get("files")
    return files if isinstance(files, dict) else {}


def _write_index(path: Path, files: dict[str, Any]) -> None:
    """Replace the index atomically; entries of files that are gone are dropped."""
    kept = {name: entry for name, entry in files.items() if os.path.exists(name)}
    blob = json.dumps({"version": _INDEX_VERSION, "files": kept}, sort_keys=True)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".weights-digests-", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(blob)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError:
        pass  # a read-only cache folder: the next run hashes again


def _digested_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(
        p
        for p in root.iterdir()
        if not p.name.startswith(".") and p.suffix.lower() in DIGESTED_SUFFIXES and p.is_file()
    )


def weights_digest(path: str | os.PathLike[str]) -> str:
    """``sha256:<hex>`` over the checkpoint files of a local directory (or of one file).

    The digest covers each file's name and content; files whose size, times
    and inode match the index are not read again.
    """
    root = Path(path).expanduser().resolve()
    index_file = index_path()
    index = _read_index(index_file)
    changed = False
    digest = hashlib.sha256()
    for file in _digested_files(root):
        name = str(file)
        key = _stat_key(file.stat())
        entry = index.get(name)
        if isinstance(entry, dict) and entry.get("stat") == key and "sha256" in entry:
            sha = str(entry["sha256"])
        else:
            sha = file_sha256(file)
            index[name] = {"stat": key, "sha256": sha}
            changed = True
        digest.update(f"{file.name}\t{sha}\n".encode())
    if changed:
        _write_index(index_file, index)
    return f"sha256:{digest.hexdigest()}"
