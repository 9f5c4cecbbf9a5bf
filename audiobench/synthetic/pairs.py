"""Generated pairs of sounds, same class or not, for the pair classification mock task.

The sounds come from :mod:`audiobench.synthetic.sounds`. Every pair is two rows of
``labels.csv`` that share a ``pair`` id and its label (1: both renditions of one class, 0:
two classes); a sound may be listed in several pairs, each time under its own clip ``id``.
The same arguments always give the same files, bit for bit.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from audiobench.synthetic.sounds import sound_classes, write_sound_files
from audiobench.synthetic.writer import write_labels

__all__ = ["write_sound_pairs"]


def write_sound_pairs(
    directory: Path,
    *,
    seed: int,
    sample_rate: int = 16000,
    classes: int,
    renditions: int,
    n_pairs: int,
) -> int:
    """Write ``classes`` × ``renditions`` sounds and ``n_pairs`` labelled pairs of them.

    Pairs alternate between "same" (two renditions of one class, label 1) and "different"
    (renditions of two classes, label 0). ``labels.csv`` has columns ``file``, ``id``
    (``<pair>-a`` / ``<pair>-b``), ``pair`` and ``label``. Returns the number of rows.
    """
    if renditions < 2 or classes < 2:
        raise ValueError("pairs need at least 2 classes and 2 renditions of each")
    rows = write_sound_files(
        directory, sound_classes(classes, seed), renditions, seed=seed, sample_rate=sample_rate
    )
    by_class: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        by_class.setdefault(row["label"], []).append(row)
    names = sorted(by_class)
    rng = np.random.default_rng([seed, 1])
    out: list[dict[str, str]] = []
    for p in range(n_pairs):
        same = p % 2 == 0
        c1 = names[int(rng.integers(len(names)))]
        if same:
            i, j = rng.choice(len(by_class[c1]), size=2, replace=False)
            a, b = by_class[c1][int(i)], by_class[c1][int(j)]
        else:
            c2 = [n for n in names if n != c1][int(rng.integers(len(names) - 1))]
            a = by_class[c1][int(rng.integers(len(by_class[c1])))]
            b = by_class[c2][int(rng.integers(len(by_class[c2])))]
        pair = f"pair{p:03d}"
        for side, row in (("a", a), ("b", b)):
            out.append(
                {"file": row["file"], "id": f"{pair}-{side}", "pair": pair, "label": str(int(same))}
            )
    write_labels(directory, out, ("file", "id", "pair", "label"))
    return len(out)
