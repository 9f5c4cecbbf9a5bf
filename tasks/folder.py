"""Ad-hoc zero-shot similarity over a user's own folder: ``--task folder:PATH``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from audiobench.families import ZeroShotSimilarityTask
from audiobench.task import DatasetSource, TaskMetadata

__all__ = ["folder_task"]


def folder_task(path: str, **kwargs: Any) -> ZeroShotSimilarityTask:
    """A zero-shot similarity task over ``path`` (labels.csv, or one subfolder per class)."""
    root = Path(path).expanduser().resolve()
    if not root.is_dir():
        raise FileNotFoundError(f"folder task: {root} is not a folder")
    slug = re.sub(r"[^A-Za-z0-9._+-]", "_", root.name) or "root"
    meta = TaskMetadata(
        name=f"Folder-{slug}",
        description=f"Zero-shot similarity over the clips in {root}.",
        dataset=DatasetSource(kind="folder", path=str(root)),
        main_score="pca100/spearman:gsr",
    )
    cls = type(f"Folder_{slug}", (ZeroShotSimilarityTask,), {"metadata": meta})
    return cls(**kwargs)
