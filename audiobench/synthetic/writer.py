"""The one writer of generated datasets' ``labels.csv`` (the folder loader's layout)."""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["write_labels"]


def write_labels(
    directory: Path, rows: Sequence[Mapping[str, str]], fields: Sequence[str] | None = None
) -> None:
    """Write ``directory/labels.csv``: one row per clip, ``file`` relative to ``directory``.

    ``fields`` fixes the columns and their order (keys outside it are left out);
    by default the columns are the keys of the rows, in first-seen order, so a
    column only some rows have (``fold``) is still written, empty elsewhere.
    """
    if fields is None:
        fields = list(dict.fromkeys(key for row in rows for key in row))
    with (directory / "labels.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(fields), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
