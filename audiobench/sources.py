"""Dataset sources: Hugging Face datasets, local folders, and generated data.

All three end as a list of :class:`~audiobench.audio.Clip` in dataset order.
Audio is never decoded here: a Hugging Face audio column is cast with
``Audio(decode=False)`` (decoding through ``datasets`` needs torchcodec, which
does not install on CPU machines) and read by the runner with soundfile.
"""

from __future__ import annotations

import csv
import importlib
import io
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, model_validator

from audiobench.audio import AUDIO_EXTENSIONS, ArrowAudioRef, Clip, FileAudioRef
from audiobench.errors import UserError

__all__ = [
    "Columns",
    "DatasetError",
    "DatasetSource",
    "Synthetic",
    "data_dir",
    "generated_dir",
    "load_folder_clips",
    "load_hf_clips",
    "load_source",
]

_LABEL_FILES = ("labels.csv", "metadata.csv")
_FILE_COLUMNS = ("file", "path", "filename", "file_name")
_READY_MARK = ".complete"


class DatasetError(UserError, ValueError):
    """A dataset could not be found or does not have the expected layout."""


class DatasetSource(BaseModel):
    """Where a task's data comes from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["huggingface", "folder", "synthetic"]
    path: str = Field(description="Hub id, folder path, or generator name.")
    revision: str | None = Field(
        default=None, description="Pinned dataset revision (required for huggingface)."
    )
    config: str | None = Field(default=None, description="Dataset configuration name.")


class Synthetic(DatasetSource):
    """A generated dataset: ``generator`` (``"module:function"``) writes it on first use.

    The generator is called as ``function(directory, seed=seed,
    sample_rate=<task rate>, **params)`` and writes WAV files and a
    ``labels.csv``; it is imported only when the data is needed.
    """

    kind: Literal["synthetic"] = "synthetic"
    path: str = ""
    revision: str | None = "v1"
    generator: str = Field(pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
    seed: int
    params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _path_names_generator(self) -> Synthetic:
        if not self.path:
            object.__setattr__(self, "path", self.generator)
        return self

    def generate(self, directory: Path, sample_rate: int) -> None:
        """Write the dataset into ``directory``."""
        module, _, function = self.generator.partition(":")
        write = getattr(importlib.import_module(module), function)
        write(directory, seed=self.seed, sample_rate=sample_rate, **self.params)


class Columns(BaseModel):
    """Which dataset columns hold what. ``None`` means the task does not use one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    audio: str = "audio"
    label: str | None = "label"
    subset: str | None = None
    id: str | None = None
    text: str | None = None
    group: str | None = None
    split: str | None = None
    extra: tuple[str, ...] = Field(
        default=(),
        description="Further columns copied into Clip.metadata (e.g. ESC-50's 'fold').",
    )
    required: tuple[str, ...] = Field(
        default=("audio", "label"),
        description="Keys above whose column must exist; the others are used when present.",
    )


def data_dir() -> Path:
    """``$AUDIOBENCH_DATA`` if set, else the user's data directory (generated datasets)."""
    env = os.environ.get("AUDIOBENCH_DATA")
    return Path(env) if env else Path(platformdirs.user_data_dir("audiobench"))


def load_source(
    source: DatasetSource,
    columns: Columns,
    splits: Sequence[str],
    *,
    name: str,
    revision: str | None,
    local_copy: Path | None = None,
    generate: Callable[[Path], None] | None = None,
    progress: Callable[[str], None] | None = None,
    allow_outside: bool = False,
    allow_duplicates: bool = False,
    missing_ok: bool = False,
) -> list[Clip]:
    """Clips from a dataset source, or from the user's ``local_copy`` of it, in dataset order.

    ``name`` names the data in messages and the generated-data folder; ``generate`` writes a
    synthetic source's files into a folder (called once; the files are reused afterwards).
    For folder layouts, ``allow_outside`` accepts entries that resolve outside the folder,
    ``allow_duplicates`` entries that name one file twice, and ``missing_ok`` keeps entries
    whose file is missing (the runner then skips or reports them); see
    :func:`load_folder_clips`.
    """
    say = progress or (lambda _msg: None)
    folder_options = {
        "allow_outside": allow_outside,
        "allow_duplicates": allow_duplicates,
        "missing_ok": missing_ok,
    }
    if local_copy is not None:
        say(f"loading {name} from local copy {local_copy}")
        return _load_local(local_copy, columns, splits, source.config, **folder_options)
    if source.kind == "huggingface":
        say(f"loading {source.path}@{revision} from the Hugging Face hub")
        return load_hf_clips(
            source.path, revision=revision, config=source.config, splits=splits, columns=columns
        )
    if source.kind == "folder":
        return load_folder_clips(Path(source.path).expanduser(), **folder_options)
    if generate is None:
        raise DatasetError(f"{name}: generated data needs a generator")
    folder = generated_dir(f"{name}-{source.revision or 'v0'}", generate, say)
    return load_folder_clips(folder, **folder_options)


def generated_dir(key: str, generate: Callable[[Path], None], say: Callable[[str], None]) -> Path:
    """The folder of generated data ``key``: written once, atomically, reused afterwards."""
    target = data_dir() / "generated" / key
    if (target / _READY_MARK).exists():
        return target
    say(f"generating {key.rsplit('-', 1)[0]} audio into {target}")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=target.parent))
    try:
        generate(tmp)
        (tmp / _READY_MARK).write_text("ok\n")
        if target.exists():  # an incomplete earlier attempt
            shutil.rmtree(target)
        tmp.rename(target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def _load_local(
    path: Path,
    columns: Columns,
    splits: Sequence[str],
    config: str | None,
    **folder_options: bool,
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
    return load_folder_clips(path, **folder_options)


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


def load_folder_clips(
    root: Path,
    *,
    allow_outside: bool = False,
    allow_duplicates: bool = False,
    missing_ok: bool = False,
) -> list[Clip]:
    """Clips from a folder of audio files.

    Three layouts, tried in order:

    1. a ``labels.csv`` (or ``metadata.csv``, UTF-8 with or without a byte
       order mark) with a file column (``file``, ``path``, ``filename`` or
       ``file_name``, relative to the folder), a ``label`` column, and optional
       ``subset``, ``id``, ``split``, ``text`` and ``speaker``/``group``
       columns; any other column (``fold``, ...) is kept in ``Clip.metadata``
       as text. Every row must have as many fields as the header;
    2. one subfolder per class (``root/<label>/*.wav``), or per subset and
       class (``root/<subset>/<label>/*.wav``);
    3. audio files directly in the folder, without labels.

    Paths are resolved (``x/../a.wav``, ``./a.wav`` and symbolic links name
    the file they point to). A path that resolves outside ``root`` (``..``,
    an absolute path, a link leaving the folder) is an error unless
    ``allow_outside``; two entries resolving to one file are an error unless
    ``allow_duplicates``; a listed file that does not exist is an error
    unless ``missing_ok`` (then the runner meets it as an unreadable clip).
    """
    root = Path(root)
    if not root.is_dir():
        raise DatasetError(f"dataset folder {root} does not exist or is not a folder")
    for name in _LABEL_FILES:
        if (root / name).is_file():
            return _clips_from_csv(
                root,
                root / name,
                allow_outside=allow_outside,
                allow_duplicates=allow_duplicates,
                missing_ok=missing_ok,
            )
    clips = _clips_from_tree(root, allow_outside=allow_outside, allow_duplicates=allow_duplicates)
    if not clips:
        raise DatasetError(
            f"no audio files ({', '.join(AUDIO_EXTENSIONS)}) found in {root}, "
            f"and no {' or '.join(_LABEL_FILES)}"
        )
    return clips


_OUTSIDE_HINT = "pass --allow-outside-paths to read files outside the dataset folder"
_DUPLICATE_HINT = "one recording listed twice inflates the score; remove one of the entries"


def _read_table(csv_path: Path) -> list[tuple[int, list[str]]]:
    """The rows of a CSV label table with their line numbers, header first.

    UTF-8 only (a byte order mark is accepted); blank lines are ignored; a
    row whose number of fields differs from the header's is an error.
    """
    raw = csv_path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise DatasetError(
            f"{csv_path} line {line}: not UTF-8 text (byte 0x{raw[exc.start]:02x}); "
            "save the file as UTF-8"
        ) from None
    # strict: a stray quote is an error rather than a field that swallows the next rows.
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[tuple[int, list[str]]] = []
    start = 1
    try:
        for row in reader:
            if row:
                rows.append((start, row))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise DatasetError(f"{csv_path} line {start}: malformed CSV: {exc}") from None
    if not rows:
        return rows
    width = len(rows[0][1])
    for line, row in rows[1:]:
        if len(row) != width:
            raise DatasetError(
                f"{csv_path} line {line}: {len(row)} field(s), but the header has {width}"
            )
    return rows


def _clips_from_csv(
    root: Path,
    csv_path: Path,
    *,
    allow_outside: bool,
    allow_duplicates: bool,
    missing_ok: bool,
) -> list[Clip]:
    table = _read_table(csv_path)
    fields = table[0][1] if table else []
    file_col = next((c for c in _FILE_COLUMNS if c in fields), None)
    if file_col is None:
        raise DatasetError(
            f"{csv_path}: needs a file column named one of {list(_FILE_COLUMNS)}; found {fields}"
        )
    group_col = "group" if "group" in fields else ("speaker" if "speaker" in fields else None)
    known = {file_col, "id", "label", "subset", "split", "text", group_col}
    extra = [c for c in fields if c not in known]
    top = root.resolve()
    clips = []
    seen: dict[str, int] = {}
    files: dict[Path, tuple[int, str]] = {}
    for line, cells in table[1:]:
        row = dict(zip(fields, cells, strict=True))
        rel = (row.get(file_col) or "").strip()
        if not rel:
            raise DatasetError(f"{csv_path} line {line}: empty {file_col!r}")
        path = (root / rel).resolve()
        if not allow_outside and not path.is_relative_to(top):
            raise DatasetError(
                f"{csv_path} line {line}: file {rel!r} resolves to {path}, outside the "
                f"dataset folder {top}; {_OUTSIDE_HINT}"
            )
        if not path.is_file() and not missing_ok:
            raise DatasetError(f"{csv_path} line {line}: audio file {path} not found")
        clip_id = (row.get("id") or "").strip() or _default_id(rel)
        if path in files and not allow_duplicates:
            first_line, first_id = files[path]
            raise DatasetError(
                f"{csv_path} line {line}: clip {clip_id!r} ({rel!r}) is the same file as "
                f"clip {first_id!r} on line {first_line}: {path}; {_DUPLICATE_HINT}"
            )
        files.setdefault(path, (line, clip_id))
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


def _default_id(rel: str) -> str:
    """A row's clip id when it has none: its path without extension, lexically normalised
    (``./a.wav`` and ``x/../a.wav`` both give ``a``)."""
    return Path(os.path.normpath(rel)).with_suffix("").as_posix()


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


def _clips_from_tree(root: Path, *, allow_outside: bool, allow_duplicates: bool) -> list[Clip]:
    clips: list[Clip] = []
    top = root.resolve()
    files: dict[Path, Clip] = {}

    def add(path: Path, label: str | None, subset: str | None) -> None:
        clip_id = path.relative_to(root).with_suffix("").as_posix()
        resolved = path.resolve()
        if not allow_outside and not resolved.is_relative_to(top):
            raise DatasetError(
                f"{path} resolves to {resolved}, outside the dataset folder {top}; {_OUTSIDE_HINT}"
            )
        clip = Clip(id=clip_id, audio=FileAudioRef(resolved), label=label, subset=subset)
        first = files.setdefault(resolved, clip)
        if first is not clip and not allow_duplicates:
            raise DatasetError(
                f"clips {first.id!r} and {clip_id!r} in {root} are the same file "
                f"{resolved}; {_DUPLICATE_HINT}"
            )
        clips.append(clip)

    for path in _audio_files(root):
        add(path, None, None)
    for first in _subdirs(root):
        for path in _audio_files(first):
            add(path, first.name, None)
        for second in _subdirs(first):
            for path in _audio_files(second):
                add(path, second.name, first.name)
    return clips
