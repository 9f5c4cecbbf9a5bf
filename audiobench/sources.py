"""Dataset sources: Hugging Face datasets, local folders, and generated data.

All three end as a list of :class:`~audiobench.audio.Clip` in dataset order.
Audio is never decoded here: a Hugging Face audio column is cast with
``Audio(decode=False)`` (decoding through ``datasets`` needs torchcodec, which
does not install on CPU machines) and read by the runner with soundfile.
"""

from __future__ import annotations

import csv
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import platformdirs

from audiobench.audio import AUDIO_EXTENSIONS, ArrowAudioRef, Clip, FileAudioRef
from audiobench.task import Columns

if TYPE_CHECKING:
    from audiobench.task import Task

__all__ = [
    "DatasetError",
    "data_dir",
    "load_folder_clips",
    "load_hf_clips",
    "load_task_clips",
]

_LABEL_FILES = ("labels.csv", "metadata.csv")
_FILE_COLUMNS = ("file", "path", "filename", "file_name")
_READY_MARK = ".complete"


class DatasetError(ValueError):
    """A dataset could not be found or does not have the expected layout."""


def data_dir() -> Path:
    """``$AUDIOBENCH_DATA`` if set, else the user's data directory (generated datasets)."""
    env = os.environ.get("AUDIOBENCH_DATA")
    return Path(env) if env else Path(platformdirs.user_data_dir("audiobench"))


def load_task_clips(task: Task, progress: Callable[[str], None] | None = None) -> list[Clip]:
    """Load a task's clips from its declared source or the user's local copy."""
    meta = task.metadata
    say = progress or (lambda _msg: None)
    wanted = _subsets_available(task, say)
    if task.dataset_path is not None:
        say(f"loading {meta.name} from local copy {task.dataset_path}")
        clips = _load_local(task.dataset_path, meta.columns, meta.splits, meta.dataset.config)
    elif meta.dataset.kind == "huggingface":
        say(f"loading {meta.dataset.path}@{task.dataset_revision} from the Hugging Face hub")
        clips = load_hf_clips(
            meta.dataset.path,
            revision=task.dataset_revision,
            config=meta.dataset.config,
            splits=meta.splits,
            columns=meta.columns,
        )
    elif meta.dataset.kind == "folder":
        clips = load_folder_clips(Path(meta.dataset.path).expanduser())
    else:
        clips = load_folder_clips(_generated_dir(task, say))
    if wanted:
        keep = set(wanted)
        clips = [c for c in clips if c.subset in keep]
    return clips


def _subsets_available(task: Task, say: Callable[[str], None]) -> tuple[str, ...]:
    """The subsets to run; blind ones only where a local copy was given."""
    meta = task.metadata
    wanted = task.subsets_to_run()
    if task.dataset_path is not None or not meta.blind_subsets:
        return wanted
    # Blind subsets are never published; they exist only in an owner's local copy.
    blind = [s for s in wanted if s in meta.blind_subsets]
    if not blind:
        return wanted
    rest = tuple(s for s in wanted if s not in meta.blind_subsets)
    if not rest:
        raise DatasetError(
            f"task {meta.name}: subsets {blind} are blind and not on the hub; "
            "point --dataset at the local copy that holds them"
        )
    say(
        f"blind subsets {', '.join(blind)} are evaluated only from a local copy (--dataset); "
        "leaving them out"
    )
    return rest


def _generated_dir(task: Task, say: Callable[[str], None]) -> Path:
    """Generate a synthetic task's files once, atomically, and reuse them afterwards."""
    meta = task.metadata
    target = data_dir() / "generated" / f"{meta.name}-{meta.dataset.revision or 'v0'}"
    if (target / _READY_MARK).exists():
        return target
    say(f"generating {meta.name} audio into {target}")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{meta.name}-", dir=target.parent))
    try:
        task.generate_data(tmp)
        (tmp / _READY_MARK).write_text("ok\n")
        if target.exists():  # an incomplete earlier attempt
            shutil.rmtree(target)
        tmp.rename(target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def _load_local(
    path: Path, columns: Columns, splits: Sequence[str], config: str | None
) -> list[Clip]:
    if not path.exists():
        raise DatasetError(f"local dataset {path} does not exist")
    if path.is_file():
        return load_hf_clips(str(path), revision=None, config=None, splits=splits, columns=columns)
    if (path / "dataset_dict.json").exists() or (path / "state.json").exists():
        return load_hf_clips(
            str(path), revision=None, config=None, splits=splits, columns=columns, from_disk=True
        )
    tabular = any(
        p.suffix in (".parquet", ".arrow", ".jsonl")
        for p in path.rglob("*")
        if p.is_file() and not p.name.startswith(".")
    )
    if tabular:
        return load_hf_clips(
            str(path), revision=None, config=config, splits=splits, columns=columns
        )
    return load_folder_clips(path)


def load_hf_clips(
    path: str,
    *,
    revision: str | None,
    config: str | None,
    splits: Sequence[str],
    columns: Columns,
    from_disk: bool = False,
) -> list[Clip]:
    """Clips from a Hugging Face dataset (hub id, local dataset dir, or saved dataset).

    Hub ids must be pinned (``revision``) so results stay reproducible; the
    hub is reached only here, only when a run needs the data.
    """
    import datasets

    clips: list[Clip] = []
    for split in splits:
        try:
            if from_disk:
                loaded = datasets.load_from_disk(path)
                ds = loaded[split] if isinstance(loaded, datasets.DatasetDict) else loaded
            else:
                ds = datasets.load_dataset(path, name=config, revision=revision, split=split)
        except Exception as exc:
            hint = (
                " (no network? set HF_HUB_OFFLINE=1 and point --dataset at a local copy, "
                "or check HF_HOME for a cached copy)"
                if not Path(path).exists()
                else ""
            )
            raise DatasetError(
                f"could not load dataset {path!r} split {split!r}"
                f"{f' at revision {revision}' if revision else ''}: {exc}{hint}"
            ) from exc
        clips.extend(_clips_from_table(ds, columns, split, dataset_name=f"{path}[{split}]"))
    return clips


def _clips_from_table(ds: Any, columns: Columns, split: str, dataset_name: str) -> list[Clip]:
    import datasets

    present = set(ds.column_names)
    mapping = columns.model_dump(exclude={"required"})
    missing = [
        mapping[key] for key in columns.required if mapping.get(key) and mapping[key] not in present
    ]
    if missing:
        raise DatasetError(
            f"{dataset_name}: missing column(s) {missing}; columns present: {sorted(present)}"
        )
    wanted = {
        key: name
        for key, name in mapping.items()
        if key not in ("audio", "extra") and name is not None and name in present
    }
    missing_extra = [name for name in columns.extra if name not in present]
    if missing_extra:
        raise DatasetError(
            f"{dataset_name}: missing column(s) {missing_extra}; columns present: {sorted(present)}"
        )
    audio_ds = ds.select_columns([columns.audio]).cast_column(
        columns.audio, datasets.Audio(decode=False)
    )
    meta_cols = list(dict.fromkeys([*wanted.values(), *columns.extra]))
    table: dict[str, list[Any]] = ds.select_columns(meta_cols).to_dict() if meta_cols else {}
    label_feature = ds.features.get(wanted["label"]) if "label" in wanted else None

    def col(key: str) -> list[Any] | None:
        name = wanted.get(key)
        return table.get(name) if name else None

    ids, labels, subsets = col("id"), col("label"), col("subset")
    texts, groups, splits = col("text"), col("group"), col("split")
    clips = []
    for row in range(len(ds)):
        label = None if labels is None else _label_text(labels[row], label_feature)
        clips.append(
            Clip(
                id=str(ids[row]) if ids is not None else f"{split}:{row}",
                audio=ArrowAudioRef(audio_ds, row, columns.audio, dataset_name),
                label=label,
                subset=None if subsets is None else _opt_str(subsets[row]),
                split=_opt_str(splits[row]) if splits is not None else split,
                text=None if texts is None else _opt_str(texts[row]),
                group=None if groups is None else _opt_str(groups[row]),
                metadata={name: table[name][row] for name in columns.extra},
            )
        )
    return clips


def _label_text(value: Any, feature: Any) -> str | None:
    """A label as text: class names for ClassLabel ids; label lists joined with ','."""
    import datasets

    inner = getattr(feature, "feature", feature)  # List / Sequence of labels
    if isinstance(feature, list) and feature:
        inner = feature[0]

    def name(v: Any) -> str:
        return inner.int2str(int(v)) if isinstance(inner, datasets.ClassLabel) else str(v)

    if value is None:
        return None
    if isinstance(value, list | tuple):
        return ",".join(name(v) for v in value)
    return name(value)


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def load_folder_clips(root: Path) -> list[Clip]:
    """Clips from a folder of audio files.

    Three layouts, tried in order:

    1. a ``labels.csv`` (or ``metadata.csv``) with a file column (``file``,
       ``path``, ``filename`` or ``file_name``, relative to the folder), a
       ``label`` column, and optional ``subset``, ``id``, ``split``, ``text``
       and ``speaker``/``group`` columns; any other column (``fold``, ...) is
       kept in ``Clip.metadata`` as text;
    2. one subfolder per class (``root/<label>/*.wav``), or per subset and
       class (``root/<subset>/<label>/*.wav``);
    3. audio files directly in the folder, without labels.
    """
    root = Path(root)
    if not root.is_dir():
        raise DatasetError(f"dataset folder {root} does not exist or is not a folder")
    for name in _LABEL_FILES:
        if (root / name).is_file():
            return _clips_from_csv(root, root / name)
    clips = _clips_from_tree(root)
    if not clips:
        raise DatasetError(
            f"no audio files ({', '.join(AUDIO_EXTENSIONS)}) found in {root}, "
            f"and no {' or '.join(_LABEL_FILES)}"
        )
    return clips


def _clips_from_csv(root: Path, csv_path: Path) -> list[Clip]:
    with csv_path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields = reader.fieldnames or []
        file_col = next((c for c in _FILE_COLUMNS if c in fields), None)
        if file_col is None:
            raise DatasetError(
                f"{csv_path}: needs a file column named one of {list(_FILE_COLUMNS)}; "
                f"found {fields}"
            )
        group_col = "group" if "group" in fields else ("speaker" if "speaker" in fields else None)
        known = {file_col, "id", "label", "subset", "split", "text", group_col}
        extra = [c for c in fields if c not in known]
        clips = []
        seen: dict[str, int] = {}
        for line, row in enumerate(reader, start=2):
            rel = (row.get(file_col) or "").strip()
            if not rel:
                raise DatasetError(f"{csv_path} line {line}: empty {file_col!r}")
            path = (root / rel).resolve()
            if not path.is_file():
                raise DatasetError(f"{csv_path} line {line}: audio file {path} not found")
            clip_id = (row.get("id") or "").strip() or Path(rel).with_suffix("").as_posix()
            if clip_id in seen:
                raise DatasetError(
                    f"{csv_path} line {line}: duplicate clip id {clip_id!r} "
                    f"(first on line {seen[clip_id]})"
                )
            seen[clip_id] = line
            clips.append(
                Clip(
                    id=clip_id,
                    audio=FileAudioRef(path),
                    label=_blank_to_none(row.get("label")),
                    subset=_blank_to_none(row.get("subset")),
                    split=_blank_to_none(row.get("split")),
                    text=_blank_to_none(row.get("text")),
                    group=_blank_to_none(row.get(group_col)) if group_col else None,
                    metadata={c: row[c] for c in extra if row.get(c) not in (None, "")},
                )
            )
    return clips


def _blank_to_none(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    return value or None


def _audio_files(folder: Path) -> list[Path]:
    return sorted(
        p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in AUDIO_EXTENSIONS
    )


def _subdirs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))


def _clips_from_tree(root: Path) -> list[Clip]:
    clips: list[Clip] = []

    def add(path: Path, label: str | None, subset: str | None) -> None:
        clips.append(
            Clip(
                id=path.relative_to(root).with_suffix("").as_posix(),
                audio=FileAudioRef(path),
                label=label,
                subset=subset,
            )
        )

    for path in _audio_files(root):
        add(path, None, None)
    for first in _subdirs(root):
        for path in _audio_files(first):
            add(path, first.name, None)
        for second in _subdirs(first):
            for path in _audio_files(second):
                add(path, second.name, first.name)
    return clips
