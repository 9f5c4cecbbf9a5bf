"""Fixtures for the metric-engine tests."""

from __future__ import annotations

import pytest

from audiobench.metrics import blocks


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shrink row blocks to a few dozen elements so small inputs span many blocks."""
    monkeypatch.setattr(blocks, "BLOCK_ELEMENTS", 48)
