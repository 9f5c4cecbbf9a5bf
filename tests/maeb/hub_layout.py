"""Write local datasets in the hub's layout: parquet per configuration and split, a README.

``datasets.load_dataset(DIR, name=CONFIG, split=SPLIT)`` reads them exactly as it reads the
hub repository (configurations from the README's ``configs`` metadata, features, ``ClassLabel``
and ``Audio`` types included), so a MAEB task pointed at one with ``dataset_path`` goes
through the same loading code as on the hub.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tests.hub_copy import wav_bytes

__all__ = ["audio", "tone", "write_hub_dataset"]


def tone(freq: float, seconds: float = 0.4, sr: int = 16000, seed: int = 0) -> np.ndarray:
    """A sine tone with a little noise (distinct waveforms for distinct seeds)."""
    t = np.arange(int(seconds * sr)) / sr
    noise = np.random.default_rng(seed).standard_normal(t.shape[0]) * 0.01
    return (0.3 * np.sin(2 * np.pi * freq * t) + noise).astype(np.float32)


def audio(freq: float, seed: int = 0, sr: int = 16000, seconds: float = 0.4) -> dict[str, Any]:
    """An audio cell as the hub stores it: ``{"bytes": <wav>, "path": <name>}``."""
    return {"bytes": wav_bytes(tone(freq, seconds, sr, seed), sr), "path": f"{freq:.0f}-{seed}.wav"}


def write_hub_dataset(
    root: Path,
    configs: Mapping[str, Mapping[str, Sequence[Mapping[str, Any]]]],
    features: Mapping[str, Mapping[str, Any]] | None = None,
) -> Path:
    """Write ``configs`` (config -> split -> rows) under ``root``; return ``root``.

    ``features`` gives, per configuration, the ``datasets`` feature of some columns (e.g.
    ``{"label": ClassLabel(names=[...])}``); a column named ``audio``, or any column whose
    cells are audio dicts, is an ``Audio`` feature.
    """
    import datasets

    root.mkdir(parents=True, exist_ok=True)
    yaml = ["---", "configs:"]
    for config, splits in configs.items():
        yaml.append(f"- config_name: {config}")
        yaml.append("  data_files:")
        for split, rows in splits.items():
            columns: dict[str, list[Any]] = {key: [row[key] for row in rows] for key in rows[0]}
            given = dict((features or {}).get(config, {}))
            for key, values in columns.items():
                if key not in given and isinstance(values[0], dict) and "bytes" in values[0]:
                    given[key] = datasets.Audio()
            ds = datasets.Dataset.from_dict(columns)
            for key, feature in given.items():
                # A cast, not an encoding: audio cells already hold their bytes.
                ds = ds.cast_column(key, feature)
            folder = root / config
            folder.mkdir(exist_ok=True)
            ds.to_parquet(str(folder / f"{split}-00000-of-00001.parquet"))
            yaml.append(f"  - split: {split}")
            yaml.append(f"    path: {config}/{split}-*.parquet")
    yaml.append("---")
    (root / "README.md").write_text("\n".join(yaml) + "\n")
    return root
