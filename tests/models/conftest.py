"""Tiny random-weight checkpoints, built once per test session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tiny_models import build


@pytest.fixture(scope="session")
def tiny_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("tiny-models")


@pytest.fixture(scope="session")
def tiny(tiny_root: Path):  # type: ignore[no-untyped-def]
    """``tiny("whisper")`` → a directory holding a saved tiny checkpoint."""

    def make(kind: str) -> Path:
        return build(kind, tiny_root)

    return make
