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

Under ``--task-option protocol=mteb`` the main score is the reference protocol's
(:data:`MTEB_MAIN_SCORES`).

The folder holds a ``labels.csv`` (or one subfolder per class; see
:func:`audiobench.sources.load_folder_clips`). Its columns, read by every family: ``file``
(required), ``label``, ``id``, ``subset``, ``split``, ``speaker`` or ``group``, ``text``; any
other column (``fold``, ``pair``, ``relevant``) is kept in the clip's metadata. Each family
takes an option ``<role>_column`` for every column it reads (:data:`COLUMN_ROLES`;
``--task-option label_column=speaker``; an empty value reads no column for that role), so a
table is never rewritten to score another of its columns; the options are recorded in the
result like any other and enter the run identity. When a ``speaker`` or ``group`` column
exists, classification splits are grouped by it (no speaker on both sides of a split;
generated folds are group folds), and the result records it (``details["folder"]`` and
``details["protocol"]["grouped"]``); ``--task-option grouped=false`` turns it off. The
family's own options (``--task-option``) apply as usual.

A task is named ``Folder-<folder name>[+<label column>]-<digest>[-<family>]``, the digest
being the first 8 hex digits of the SHA-256 of the folder's resolved path, so two folders never
share a result file, whatever their names; a label column other than ``label``
(``label_column=speaker``) asks another question of the same clips and gets its own file.

What a family cannot score honestly is refused before any audio is encoded, naming the
table and the column: split values the family does not know (or a classification split
column without a ``test`` clip), a pair whose two rows are the same file, a file listed
twice where every two clips are paired, and clustering where every clip is its own class.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field, create_model

from audiobench.audio import Clip
from audiobench.errors import OptionError
from audiobench.families import family_task
from audiobench.metrics.naming import describe_clips
from audiobench.registry import FOLDER_FAMILIES, FOLDER_FAMILY_SCORES
from audiobench.sources import (
    DatasetError,
    FolderColumns,
    load_folder_clips,
    read_csv_table,
    resolve_folder_columns,
)
from audiobench.task import DatasetSource, Task, TaskMetadata, TaskOptions

__all__ = [
    "COLUMN_ROLES",
    "FOLDER_FAMILIES",
    "MTEB_MAIN_SCORES",
    "folder_options",
    "folder_task",
    "folder_task_name",
]

_LABEL_TABLES = ("labels.csv", "metadata.csv")

#: The label-table columns each family reads, each set by a ``<role>_column`` option.
COLUMN_ROLES: dict[str, tuple[str, ...]] = {
    "similarity": ("file", "label", "id", "subset"),
    "classification": ("file", "label", "id", "subset", "split", "group", "fold"),
    "multilabel": ("file", "label", "id", "subset", "split", "group", "fold"),
    "clustering": ("file", "label", "id", "subset"),
    "retrieval": ("file", "label", "id", "subset", "split", "relevant"),
    "pair-classification": ("file", "label", "id", "subset", "pair"),
}

#: The main score under ``--task-option protocol=mteb``: the reference's own for the family.
MTEB_MAIN_SCORES: dict[str, str] = {
    "classification": "accuracy",
    "multilabel": "lrap",
    "clustering": "v_measure",
    "retrieval": "ndcg_at_10",
    "pair-classification": "max_ap",
}


#: Split values a classification split column may hold.
_CLASSIFICATION_SPLITS = ("train", "validation", "test")


def _base(family: str) -> type[Task]:
    """The family class a folder family's tasks subclass."""
    return family_task(FOLDER_FAMILY_SCORES[family][0])


def _check_family(family: str) -> None:
    if family not in FOLDER_FAMILIES:
        raise OptionError(
            f"unknown folder task family {family!r}; known: {', '.join(FOLDER_FAMILIES)}"
        )


@cache
def folder_options(family: str) -> type[TaskOptions]:
    """The options of a ``family`` folder task: the family's own and its ``<role>_column``s.

    Reads no folder, so a run can tell which options a folder task takes before making it.
    """
    _check_family(family)
    base = _base(family).Options
    columns: dict[str, Any] = {
        f"{role}_column": (
            str | None,
            Field(
                None,
                description=f"The label-table column read as the clip's {role} (None: the "
                "usual column when present; '': none).",
            ),
        )
        for role in COLUMN_ROLES[family]
    }
    options: type[TaskOptions] = create_model(  # type: ignore[call-overload]
        "Options", __base__=base, __module__=__name__, **columns
    )
    return options


def folder_task_name(
    root: Path, family: str = "similarity", label_column: str | None = None
) -> str:
    """``Folder-<folder name>[+<label column>]-<digest of the resolved path>[-<family>]``.

    A label column other than the usual ``label`` asks another question of the same clips
    (speakers instead of words), so its results get a file of their own.
    """
    slug = re.sub(r"[^A-Za-z0-9._+-]", "_", root.name) or "root"
    if label_column and label_column != "label":
        slug += "+" + (re.sub(r"[^A-Za-z0-9._-]", "_", label_column))
    digest = hashlib.sha256(str(root).encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f"Folder-{slug}-{digest}" + ("" if family == "similarity" else f"-{family}")


def folder_task(path: str, family: str = "similarity", **kwargs: Any) -> Task:
    """A task of ``family`` over the clips in ``path`` (see the module docstring)."""
    _check_family(family)
    root = Path(path).expanduser().resolve()
    if not root.is_dir():
        raise FileNotFoundError(f"folder task: {root} is not a folder")
    options_type = folder_options(family)
    raw = _raw_options(kwargs)
    label_column = raw.get("label_column")
    name = folder_task_name(root, family, label_column if isinstance(label_column, str) else None)
    columns = _columns_of(raw, family, name)
    base, defaults, main, info = _layout(root, family, columns)
    if raw.get("protocol") == "mteb" and family in MTEB_MAIN_SCORES:
        defaults = {**defaults, "protocol": "mteb"}
        main = MTEB_MAIN_SCORES[family]
    meta = TaskMetadata(
        name=name,
        description=f"{family.replace('-', ' ').capitalize()} over the clips in {root}.",
        dataset=DatasetSource(kind="folder", path=str(root)),
        main_score=main,
    )
    cls = type(
        f"Folder_{family.replace('-', '_')}",
        (_FolderTask, base),
        {
            "metadata": meta,
            "Options": options_type,
            "options": options_type.model_validate(defaults),
            "folder_family": family,
            "folder_root": root,
            "folder_info": info,
        },
    )
    task: Task = cls(**kwargs)
    return task


def _raw_options(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The option values a task is being made with (``options=`` and loose keywords)."""
    given = kwargs.get("options")
    raw = given.model_dump() if isinstance(given, TaskOptions) else dict(given or {})
    task_arguments = {
        "dataset_path", "revision", "subsets", "device", "options", "allow_outside_paths"
    }  # fmt: skip
    raw.update({k: v for k, v in kwargs.items() if k not in task_arguments})
    return raw


def _columns_of(values: Mapping[str, Any], family: str, name: str) -> FolderColumns:
    """The ``<role>_column`` options among ``values``, checked (errors name the task)."""
    roles = {role: values.get(f"{role}_column") for role in COLUMN_ROLES[family]}
    odd = {r: v for r, v in roles.items() if v is not None and not isinstance(v, str)}
    if odd:
        shown = ", ".join(f"{r}_column={v!r}" for r, v in odd.items())
        raise OptionError(f"task {name}: invalid option {shown}: a column name is text")
    return FolderColumns(**roles)


def _table(root: Path) -> Path | None:
    return next((root / n for n in _LABEL_TABLES if (root / n).is_file()), None)


class _FolderTask(Task):
    """A folder's columns read as its options say, checked before any audio is encoded, and
    recorded in the result's details."""

    folder_family: ClassVar[str]
    folder_root: ClassVar[Path]
    folder_info: ClassVar[dict[str, Any]] = {}

    def run_facts(self) -> dict[str, Any]:
        own: dict[str, Any] = super().run_facts()
        grouped = getattr(self.options, "grouped", None)
        info = dict(self.folder_info)
        if grouped is not None:
            info["grouped"] = grouped
        return {**own, "folder": info}

    def folder_columns(self) -> FolderColumns:
        return _columns_of(self.options.model_dump(), self.folder_family, self.name)

    def read_clips(self, say: Callable[[str], None], *, missing_ok: bool) -> list[Clip]:
        o = self.options
        # Where every two clips are paired, a file listed twice is paired with itself.
        paired_by_label = getattr(o, "pairs", None) == "from_labels"
        clips = load_folder_clips(
            self.folder_root,
            columns=self.folder_columns(),
            allow_outside=self.allow_outside_paths,
            allow_duplicates=bool(getattr(self, "allow_duplicates", False)) and not paired_by_label,
            missing_ok=missing_ok,
        )
        self._refuse(clips)
        return clips

    # ------------------------------------------------------------------ refusals

    def _refuse(self, clips: Sequence[Clip]) -> None:
        """Raise where the family cannot score the folder's clips honestly."""
        family, o = self.folder_family, self.options
        table = _table(self.folder_root)
        if table is None:
            return  # class subfolders: labels and subsets only, nothing to refuse here
        split = self.folder_info.get("read", {}).get("split")
        if family in ("classification", "multilabel") and not getattr(o, "folds", ()):
            self._refuse_splits(clips, table, split, _CLASSIFICATION_SPLITS, need=("train", "test"))
        if family == "retrieval" and (o.layout, o.split_field) == ("split", None):  # type: ignore[attr-defined]
            known = (*o.query_splits, *o.corpus_splits)  # type: ignore[attr-defined]
            self._refuse_splits(clips, table, split, known, need=())
        if family == "pair-classification" and getattr(o, "pairs", None) == "given":
            self._refuse_self_pairs(clips, table)
        if family == "clustering":
            for subset, members in self.clips_by_subset(clips).items():
                labels = {c.label for c in members if c.label is not None}
                if len(members) > 1 and len(labels) == len(members):
                    where = "" if subset == "default" else f" of subset {subset!r}"
                    raise DatasetError(
                        f"{table}: every clip{where} is its own class ({len(members)} clips, "
                        f"{len(labels)} labels); clustering measures how the clips of a class "
                        "gather, so each class needs two clips or more (pick another column "
                        "with --task-option label_column=...)"
                    )

    def _refuse_splits(
        self,
        clips: Sequence[Clip],
        table: Path,
        column: str | None,
        known: Sequence[str],
        need: Sequence[str],
    ) -> None:
        """Every clip's split is one of ``known``, and the splits ``need``-ed occur."""
        if column is None or all(c.split is None for c in clips):
            return
        remedy = (
            f"fix the {column!r} column, or pass --task-option split_column= to read no split "
            "column"
        )
        odd = sorted({c.split or "" for c in clips} - set(known))
        if odd:
            holders = [c.id for c in clips if (c.split or "") in odd]
            shown = ", ".join(repr(v) if v else "blank" for v in odd)
            raise DatasetError(
                f"{table}: column {column!r} holds split value(s) {shown} (clips "
                f"{describe_clips(holders)}); {self.folder_family} knows only "
                f"{', '.join(map(repr, known))} (case matters); {remedy}"
            )
        present = {c.split for c in clips}
        missing = [v for v in need if v not in present]
        if self.folder_family == "retrieval":
            missing = [
                side
                for side, values in (
                    ("query", self.options.query_splits),  # type: ignore[attr-defined]
                    ("corpus", self.options.corpus_splits),  # type: ignore[attr-defined]
                )
                if not present & set(values)
            ]
        if missing:
            found = ", ".join(sorted(repr(v) for v in present if v))
            raise DatasetError(
                f"{table}: column {column!r} holds only {found}; {self.folder_family} needs "
                f"{' and '.join(repr(v) for v in missing)} clips as well, and would otherwise "
                f"score something else than the split it was given; {remedy}"
                + (" (then 5 generated folds are scored)" if "test" in missing else "")
            )

    def _refuse_self_pairs(self, clips: Sequence[Clip], table: Path) -> None:
        members: dict[str, list[Clip]] = {}
        for clip in clips:
            pair = str(clip.metadata.get("pair", "")).strip()
            if pair:
                members.setdefault(pair, []).append(clip)
        for pair, (first, *rest) in members.items():
            same = [c for c in rest if c.audio == first.audio]
            if same:
                raise DatasetError(
                    f"{table}: pair {pair!r} pairs clip {first.id!r} with clip {same[0].id!r}, "
                    f"the same file ({first.audio.location}); a file is always like itself, "
                    "so the pair would raise the score; pair two different recordings"
                )


def _layout(
    root: Path, family: str, columns: FolderColumns
) -> tuple[type[Task], dict[str, Any], str, dict[str, Any]]:
    """The family's base class, default options, main score and what the columns gave."""
    clips = load_folder_clips(
        root, columns=columns, allow_outside=True, allow_duplicates=True, missing_ok=True
    )
    header = _header(root)
    info: dict[str, Any] = {"family": family, "columns": header}
    table = _table(root)
    if table is not None:
        read = resolve_folder_columns(header, columns, table)
        info["read"] = {r: c for r in COLUMN_ROLES[family] if (c := read.get(r)) is not None}
    base, main = _base(family), FOLDER_FAMILY_SCORES[family][1]
    if family in ("classification", "multilabel"):
        folds = sorted(
            {str(c.metadata["fold"]) for c in clips if c.metadata.get("fold") not in (None, "")},
            key=lambda v: (
                not v.lstrip("-").isdigit(),
                int(v) if v.lstrip("-").isdigit() else 0,
                v,
            ),
        )
        has_group = any(c.group is not None for c in clips)
        if has_group and table is not None:
            info["grouped_by"] = info["read"]["group"]
        multilabel = family == "multilabel"
        options = {
            "folds": tuple(folds),
            "grouped": has_group,
            "multilabel": multilabel,
            "label_separator": "|" if multilabel else ",",
        }
        return base, options, main, info
    if family == "retrieval":
        # A split column decides the layout; values it does not know are refused when the
        # data is loaded, never read as "no split".
        layout = "split" if any(c.split is not None for c in clips) else "all"
        options = {} if layout == "split" else {"layout": "all", "on_missing": "skip"}
        info["layout"] = layout
        return base, options, main, info
    if family == "pair-classification":
        pairs = "given" if any("pair" in c.metadata for c in clips) else "from_labels"
        info["pairs"] = pairs
        return base, {"pairs": pairs}, main, info
    return base, {}, main, info


def _header(root: Path) -> list[str]:
    """The header of the folder's label table (empty for a folder of class subfolders)."""
    table = _table(root)
    if table is None:
        return []
    rows = read_csv_table(table)
    return list(rows[0][1]) if rows else []
