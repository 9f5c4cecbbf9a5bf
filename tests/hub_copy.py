"""Build local datasets laid out like a Hugging Face hub dataset (parquet, audio as bytes)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import soundfile as sf


def wav_bytes(wave: np.ndarray, sr: int) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, wave, sr, format="WAV", subtype="PCM_16")
    return buf.getvalue()


def write_hub_like(
    root: Path, rows: Sequence[dict[str, Any]], *, split: str = "train", n_shards: int = 1
) -> Path:
    """Write ``rows`` (each with ``audio`` as (wave, sr) and other columns) as parquet shards.

    The audio column is the struct ``{bytes, path}`` that ``datasets`` stores
    for an ``Audio`` feature, so loading goes through the same code as the hub.
    """
    data = root / "data"
    data.mkdir(parents=True, exist_ok=True)
    columns: dict[str, list[Any]] = {k: [] for k in rows[0]}
    for i, row in enumerate(rows):
        for key, value in row.items():
            if key == "audio":
                wave, sr = value
                value = {"bytes": wav_bytes(wave, sr), "path": f"clip{i}.wav"}
            columns[key].append(value)
    table = pa.table(columns)
    bounds = np.linspace(0, len(rows), n_shards + 1).astype(int)
    for s in range(n_shards):
        shard = table.slice(bounds[s], bounds[s + 1] - bounds[s])
        pq.write_table(shard, data / f"{split}-{s:05d}-of-{n_shards:05d}.parquet")
    return root
