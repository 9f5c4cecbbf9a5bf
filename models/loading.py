"""Loading transformers weights the way users load them, with errors that say how to fix things.

Every built-in transformers encoder and the ``hf:`` loader go through
:func:`from_pretrained`, so a registered name, a hub id and a local directory
take the same path (tests exercise it on tiny models saved to a temporary
directory).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from audiobench.encoder import DTYPES, canonical_dtype

__all__ = [
    "DTYPES",
    "ModelLoadError",
    "from_pretrained",
    "local_directory",
    "looks_like_path",
    "resolve_dtype",
    "torch_dtype",
]


class ModelLoadError(OSError):
    """Weights or configuration could not be found or read."""


def resolve_dtype(dtype: str | None, device: str) -> str:
    """The compute dtype: the user's choice, else float16 on CUDA and float32 elsewhere.

    Half precision is the default on GPUs because encoders evaluated here are
    run in inference only, where fp16 changes embeddings far less than the
    differences the benchmark measures; ``--dtype fp32`` forces full precision.
    """
    if dtype is None:
        return "float16" if device.startswith("cuda") else "float32"
    return canonical_dtype(dtype)


def torch_dtype(name: str) -> Any:
    import torch

    return getattr(torch, resolve_dtype(name, "cpu"))


#: A hub id: ``name`` or ``namespace/name`` of letters, digits, ``-``, ``_`` and ``.``.
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")


def looks_like_path(source: str) -> bool:
    """Whether ``source`` can only be a filesystem path, never a hub id.

    Paths start with ``/``, ``./``, ``../`` or ``~``, hold the platform's own
    separator when that is not ``/`` (a hub id has at most one ``/``), or are
    not hub ids at all (two ``/``, spaces, ``..``).
    """
    if source.startswith(("/", "./", "../", "~", ".\\", "..\\")) or source in (".", ".."):
        return True
    if any(sep and sep != "/" and sep in source for sep in (os.sep, os.altsep)):
        return True
    return _HUB_ID.fullmatch(source) is None or ".." in source


def local_directory(source: str, what: str) -> Path | None:
    """The local checkpoint directory ``source`` names; None when it is a hub id.

    A ``source`` that exists is a path; one that looks like a path
    (:func:`looks_like_path`) but is not an existing directory is an error
    saying so, rather than a hub lookup with hub advice. ``what`` names the
    argument in that error (``"weights '/models/x'"``, ``"model 'hf:/models/x'"``).
    """
    path = Path(source).expanduser()
    if path.is_dir():
        return path
    if path.exists():
        raise ModelLoadError(
            f"{what}: {path.resolve()} is a file, not a directory holding a "
            "checkpoint (config.json and weights)"
        )
    if looks_like_path(source):
        raise ModelLoadError(
            f"{what}: local directory {path.resolve()} not found (this is a path, "
            "so it is not looked up on the hub)"
        )
    return None


def _hint(source: str, revision: str | None) -> str:
    path = Path(source).expanduser()
    offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0", "false", "False")
    hf_home = os.environ.get("HF_HOME", "~/.cache/huggingface (default)")
    tried = []
    if path.exists():
        tried.append(f"the local directory {path.resolve()} (it exists but could not be loaded)")
    else:
        tried.append(f"a local directory {path.resolve()} (not found)")
    tried.append(
        f"the Hugging Face hub id {source!r} at revision {revision or 'main'!r} "
        f"(HF_HOME={hf_home}, offline mode {'on' if offline else 'off'})"
    )
    fixes = [
        "download it on a machine with network access "
        f"(`huggingface-cli download {source}`"
        + (f" --revision {revision}" if revision else "")
        + ") and point HF_HOME at that cache",
        "or pass a local directory holding the files (`--weights DIR` or `--model hf:DIR`)",
        "or check the id and `--revision`",
    ]
    if offline:
        fixes.insert(0, "unset HF_HUB_OFFLINE if this machine has network access")
    return "tried " + "; then ".join(tried) + ".\nTo fix: " + "; ".join(fixes) + "."


def from_pretrained(
    loader: Any,
    source: str,
    *,
    revision: str | None = None,
    trust_remote_code: bool = False,
    what: str = "model",
    **kwargs: Any,
) -> Any:
    """``loader.from_pretrained(source, ...)`` with an error that names what was tried.

    ``source`` is a hub id or a local directory (a revision is ignored for
    directories, as transformers does).
    """
    if Path(source).expanduser().is_dir():
        source = str(Path(source).expanduser())
        revision = None
    try:
        return loader.from_pretrained(
            source, revision=revision, trust_remote_code=trust_remote_code, **kwargs
        )
    except (OSError, ValueError, KeyError) as exc:
        message = str(exc)
        if "trust_remote_code" in message and not trust_remote_code:
            raise ModelLoadError(
                f"{source!r} needs code from its hub repository to load; audiobench runs such "
                "code only when asked: pass --trust-remote-code if you trust it"
            ) from exc
        raise ModelLoadError(
            f"could not load the {what} {source!r}: {type(exc).__name__}: "
            f"{message.splitlines()[0] if message else ''}\n{_hint(source, revision)}"
        ) from exc
