"""The installed audiobench version (one place, read from the package metadata)."""

from __future__ import annotations

from importlib import metadata

try:
    __version__ = metadata.version("audiobench")
except metadata.PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.0.0+unknown"
