"""Small generated datasets for the hostile-input tests."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tests.conftest import write_tone


def write_labels(root: Path, rows: Sequence[str], header: str = "file,label") -> Path:
    """Write ``labels.csv`` under ``root`` from literal rows (no quoting, no checks)."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / "labels.csv"
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def tone_folder(root: Path, n: int = 4) -> Path:
    """``n`` distinct tones ``c0.wav`` ... in ``root``, two classes, with a labels.csv."""
    rows = []
    for k in range(n):
        write_tone(root / f"c{k}.wav", freq=300.0 + 170.0 * k, seconds=0.3 + 0.01 * k)
        rows.append(f"c{k}.wav,{'ab'[k % 2]}")
    write_labels(root, rows)
    return root
