"""Ad-hoc tasks over a user's own folder, in any audio-only family.

``--task folder:PATH`` is zero-shot similarity (VocSim's protocol); ``--task
folder-<family>:PATH`` picks another family explicitly (main score in brackets):

- ``folder-similarity`` (= ``folder``): zero-shot similarity (``pca100/spearman:gsr``);
- ``folder-classification``: probes; the folds of a ``fold`` column, else the splits of a
  ``split`` column (``train`` / ``validation`` / ``test``), else 5 generated folds
  (``linear:accuracy``);
- ``folder-multilabel``: probes on labels joined by ``|`` (``linear:map``);
- ``folder-clustering``: k-means with k = the number of labels (``v_measure``);
- ``folder-retrieval``: query by example: ``split`` = ``query`` / ``corpus``, else every clip
  queries all the others; relevant: same label, or the ids in a ``relevant`` column
  (``mrr``);
- ``folder-pair-classification``: the pairs of a ``pair`` column (two rows per pair id, label
  1/0), else every two clips, same label or not (``max_ap``).

The folder holds a ``labels.csv`` (or one subfolder per class; see
:func:`audiobench.sources.load_folder_clips`). Its columns, read by every family: ``file``
(required), ``label``, ``id``, ``subset``, ``split``, ``speaker`` or ``group``, ``text``; any
other column (``fold``, ``pair``, ``relevant``) is kept in the clip's metadata. When a
``speaker`` or ``group`` column exists, classification splits are grouped by it (no speaker on
both sides of a split; generated folds are group folds), and the result records it
(``details["folder"]`` and ``details["protocol"]["grouped"]``); ``--task-option
grouped=false`` turns it off. The family's own options (``--task-option``) apply as usual.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar

from audiobench.errors import OptionError
from audiobench.families import (
    ClassificationTask,
    ClusteringTask,
    PairClassificationTask,
    RetrievalTask,
    ZeroShotSimilarityTask,
)
from audiobench.registry import FOLDER_FAMILIES
from audiobench.sources import load_folder_clips
from audiobench.task import DatasetSource, Task, TaskMetadata

__all__ = ["FOLDER_FAMILIES", "folder_task"]


def folder_task(path: str, family: str = "similarity", **kwargs: Any) -> Task:
    """A task of ``family`` over the clips in ``path`` (see the module docstring)."""
    if family not in FOLDER_FAMILIES:
        raise OptionError(
            f"unknown folder task family {family!r}; known: {', '.join(FOLDER_FAMILIES)}"
        )
    root = Path(path).expanduser().resolve()
    if not root.is_dir():
        raise FileNotFoundError(f"folder task: {root} is not a folder")
    slug = re.sub(r"[^A-Za-z0-9._+-]", "_", root.name) or "root"
    name = f"Folder-{slug}" if family == "similarity" else f"Folder-{slug}-{family}"
    source = DatasetSource(kind="folder", path=str(root))
    if family == "similarity":
        meta = TaskMetadata(
            name=name,
            description=f"Zero-shot similarity over the clips in {root}.",
            dataset=source,
            main_score="pca100/spearman:gsr",
        )
        cls = type(f"Folder_{slug}", (ZeroShotSimilarityTask,), {"metadata": meta})
        return cls(**kwargs)
    base, options, main, info = _layout(root, family)
    meta = TaskMetadata(
        name=name,
        description=f"{family.replace('-', ' ').capitalize()} over the clips in {root}.",
        dataset=source,
        main_score=main,
    )
    cls = type(
        f"Folder_{slug}_{family.replace('-', '_')}",
        (_FolderTask, base),
        {"metadata": meta, "options": options, "folder_info": info},
    )
    return cls(**kwargs)


class _FolderTask:
    """Records what the folder's columns made of the task in the result's details."""

    folder_info: ClassVar[dict[str, Any]] = {}

    def protocol(self) -> dict[str, Any]:
        own: dict[str, Any] = super().protocol()  # type: ignore[misc]
        grouped = getattr(self.options, "grouped", None)  # type: ignore[attr-defined]
        info = dict(self.folder_info)
        if grouped is not None:
            info["grouped"] = grouped
        return {**own, "folder": info}


def _layout(root: Path, family: str) -> tuple[type[Task], Any, str, dict[str, Any]]:
    """The family's base class, default options, main score and what the columns gave."""
    clips = load_folder_clips(root, allow_outside=True, allow_duplicates=True, missing_ok=True)
    columns = _columns(root)
    group_column = "group" if "group" in columns else ("speaker" if "speaker" in columns else None)
    has_group = group_column is not None and any(c.group is not None for c in clips)
    info: dict[str, Any] = {"family": family, "columns": columns}
    if family in ("classification", "multilabel"):
        folds = sorted(
            {str(c.metadata["fold"]) for c in clips if c.metadata.get("fold") not in (None, "")},
            key=lambda v: (
                not v.lstrip("-").isdigit(),
                int(v) if v.lstrip("-").isdigit() else 0,
                v,
            ),
        )
        if has_group:
            info["grouped_by"] = group_column
        multilabel = family == "multilabel"
        options = ClassificationTask.Options(
            folds=tuple(folds),
            grouped=has_group,
            multilabel=multilabel,
            label_separator="|" if multilabel else ",",
        )
        return ClassificationTask, options, "linear:map" if multilabel else "linear:accuracy", info
    if family == "clustering":
        return ClusteringTask, ClusteringTask.Options(), "v_measure", info
    if family == "retrieval":
        splits = {c.split for c in clips}
        if {"query", "corpus"} <= splits:
            options = RetrievalTask.Options()
        else:  # every clip queries the others (leave-one-out); lone classes are left out
            options = RetrievalTask.Options(layout="all", on_missing="skip")
        info["layout"] = options.layout
        return RetrievalTask, options, "mrr", info
    pairs = "given" if any("pair" in c.metadata for c in clips) else "from_labels"
    info["pairs"] = pairs
    return PairClassificationTask, PairClassificationTask.Options(pairs=pairs), "max_ap", info


def _columns(root: Path) -> list[str]:
    """The header of the folder's label table (empty for a folder of class subfolders)."""
    from audiobench.sources import _read_table

    for name in ("labels.csv", "metadata.csv"):
        table = root / name
        if table.is_file():
            rows = _read_table(table)
            return list(rows[0][1]) if rows else []
    return []
