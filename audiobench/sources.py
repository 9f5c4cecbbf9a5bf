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
import re
import shutil
import tempfile
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, TypedDict, Unpack

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, model_validator

from audiobench.audio import AUDIO_EXTENSIONS, ArrowAudioRef, Clip, FileAudioRef
from audiobench.errors import UserError

__all__ = [
    "Columns",
    "DatasetError",
    "DatasetSource",
    "FolderColumns",
    "Synthetic",
    "data_dir",
    "generated_dir",
    "load_folder_clips",
    "load_hf_clips",
    "load_source",
    "read_csv_table",
    "resolve_folder_columns",
]

_LABEL_FILES = ("labels.csv", "metadata.csv")
_FILE_COLUMNS = ("file", "path", "filename", "file_name")
_GROUP_COLUMNS = ("group", "speaker")
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


class FolderColumns(BaseModel):
    """Which columns of a folder's label table hold what.

    ``None`` (the default) reads the usual column when the table has it: the first of
    ``file``/``path``/``filename``/``file_name``, then ``label``, ``id``, ``subset``,
    ``split``, ``group`` (else ``speaker``), ``text``, and ``fold``, ``pair``, ``relevant``
    (kept in ``Clip.metadata`` under those names). A name reads that column, which must
    exist; ``""`` reads none (the usual column then reaches the clip's metadata as any other
    column does).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str | None = None
    label: str | None = None
    id: str | None = None
    subset: str | None = None
    split: str | None = None
    group: str | None = None
    text: str | None = None
    fold: str | None = None
    pair: str | None = None
    relevant: str | None = None


#: Roles whose values a family reads from ``Clip.metadata`` under the role's name.
_METADATA_ROLES = ("fold", "pair", "relevant")
#: Roles whose cells name or classify a clip: no control or invisible characters at all.
_KEY_ROLES = ("file", "label", "id", "subset", "split", "group", "fold", "pair", "relevant")


class _FolderOptions(TypedDict):
    allow_outside: bool
    allow_duplicates: bool
    missing_ok: bool


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
    folder_options: _FolderOptions = {
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
    **folder_options: Unpack[_FolderOptions],
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
    columns: FolderColumns | None = None,
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
       as text. ``columns`` names other columns for these roles
       (:class:`FolderColumns`). The table is read strictly
       (:func:`read_csv_table`): every row has as many fields as the header,
       column names are unique and written without surrounding spaces, no
       cell holds a control character, and the cells that name or classify a
       clip hold no invisible one either. File names are read exactly as
       written (a leading space is part of the name; only a NUL is refused);
       labels and ids are stripped;
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
                columns or FolderColumns(),
                allow_outside=allow_outside,
                allow_duplicates=allow_duplicates,
                missing_ok=missing_ok,
            )
    named = {role: name for role, name in (columns or FolderColumns()).model_dump().items() if name}
    if named:
        shown = ", ".join(f"{role}={name!r}" for role, name in named.items())
        raise DatasetError(
            f"{root} has no {' or '.join(_LABEL_FILES)}, so the columns asked for ({shown}) "
            "cannot be read; write a labels.csv, or leave the column options out"
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

#: Characters no cell may hold: C0/C1 controls other than tab, line feed and carriage return
#: (a NUL would make an invisible class of its own). File names are read exactly as written
#: (a file may be named so); only a NUL, which no path can hold, is refused there.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_NUL = re.compile("\x00")
#: Characters no column name and no cell that names or classifies a clip may hold: every
#: control character, zero-width spaces, a byte order mark, and direction marks and overrides
#: (labels that look alike but differ).
_INVISIBLE = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]"
)


def _char_name(char: str) -> str:
    return f"U+{ord(char):04X} ({unicodedata.name(char, 'a control character').lower()})"


def check_cell(
    csv_path: Path,
    line: int,
    position: int,
    name: str,
    value: str,
    refused: re.Pattern[str] = _INVISIBLE,
) -> None:
    """Raise :class:`DatasetError` naming the file, line and column if the cell ``value``
    holds a character ``refused`` matches (by default any invisible one, for cells that name
    a clip or a class: two names that look alike would be two clips or classes)."""
    if found := refused.search(value):
        raise DatasetError(
            f"{csv_path} line {line}, column {position} ({name!r}): the cell holds "
            f"{_char_name(found.group())}"
            + (
                ", which would make a clip or class that looks like another"
                if refused is _INVISIBLE
                else ""
            )
            + "; remove it"
        )


def read_csv_table(csv_path: Path) -> list[tuple[int, list[str]]]:
    """The rows of a CSV label table with their line numbers, header first.

    UTF-8 only (a byte order mark is accepted); blank lines are ignored. Errors name the
    file, the line and the column: a row whose number of fields differs from the header's,
    an empty, repeated or space-padded column name, and a column name holding an invisible
    character. The cells are checked by their reader (:func:`load_folder_clips`).
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
    _check_header(csv_path, *rows[0])
    header = rows[0][1]
    width = len(header)
    for line, row in rows:
        if len(row) != width:
            raise DatasetError(
                f"{csv_path} line {line}: {len(row)} field(s), but the header has {width}"
            )
    return rows


def _check_header(csv_path: Path, line: int, names: Sequence[str]) -> None:
    first: dict[str, int] = {}
    for column, name in enumerate(names, start=1):
        where = f"{csv_path} line {line}, column {column}"
        if not name.strip():
            raise DatasetError(f"{where}: empty column name; name the column or remove it")
        if found := _INVISIBLE.search(name):
            raise DatasetError(
                f"{where}: the column name {name!r} holds {_char_name(found.group())}; remove it"
            )
        if name != name.strip():
            raise DatasetError(
                f"{where}: the column name {name!r} starts or ends with a space; column names "
                f"are read exactly as written, so write {name.strip()!r}"
            )
        if name in first:
            raise DatasetError(
                f"{csv_path} line {line}, columns {first[name]} and {column}: the column name "
                f"{name!r} appears twice; give each column its own name"
            )
        first[name] = column


def resolve_folder_columns(
    header: Sequence[str], columns: FolderColumns, table: Path
) -> dict[str, str | None]:
    """The column of ``table`` that each role of ``columns`` reads (None: no column).

    A column named in ``columns`` must exist and serve one role; a role left at its default
    takes its usual column when the table has it and no other role was given it.
    """
    given = columns.model_dump()
    named = {role: name for role, name in given.items() if name}
    present = set(header)
    for role, name in named.items():
        if name not in present:
            raise DatasetError(
                f"{table}: no column {name!r} (asked for as the {role} column); "
                f"columns: {list(header)}"
            )
    owners: dict[str, str] = {}
    for role, name in named.items():
        if name in owners:
            raise DatasetError(
                f"{table}: column {name!r} is asked for as both the {owners[name]} and the "
                f"{role} column; give each role its own column"
            )
        owners[name] = role
    resolved: dict[str, str | None] = {}
    for role, name in given.items():
        if name is not None:
            resolved[role] = name or None
            continue
        usual = _FILE_COLUMNS if role == "file" else _GROUP_COLUMNS if role == "group" else (role,)
        resolved[role] = next((c for c in usual if c in present and c not in owners), None)
    if resolved["file"] is None:
        raise DatasetError(
            f"{table}: needs a file column named one of {list(_FILE_COLUMNS)} (or the "
            f"file_column option); found {list(header)}"
        )
    return resolved


def _clips_from_csv(
    root: Path,
    csv_path: Path,
    columns: FolderColumns,
    *,
    allow_outside: bool,
    allow_duplicates: bool,
    missing_ok: bool,
) -> list[Clip]:
    table = read_csv_table(csv_path)
    fields = table[0][1] if table else []
    roles = resolve_folder_columns(fields, columns, csv_path)
    file_col = roles["file"]
    assert file_col is not None  # resolve_folder_columns refuses a table without one
    used = {c for c in roles.values() if c}
    extra = [c for c in fields if c not in used]
    key_columns = {roles[r] for r in _KEY_ROLES} - {file_col}
    checks = [
        (
            position,
            name,
            _NUL if name == file_col else _INVISIBLE if name in key_columns else _CONTROL,
        )
        for position, name in enumerate(fields, start=1)
    ]

    def cell(row: dict[str, str], role: str) -> str | None:
        name = roles[role]
        return None if name is None else row[name]

    top = root.resolve()
    clips = []
    seen: dict[str, int] = {}
    files: dict[Path, tuple[int, str]] = {}
    for line, cells in table[1:]:
        row = dict(zip(fields, cells, strict=True))
        for position, name, refused in checks:
            check_cell(csv_path, line, position, name, row[name], refused)
        rel = row[file_col]  # exactly as written: " a.wav" is another file than "a.wav"
        if not rel.strip():
            raise DatasetError(f"{csv_path} line {line}: empty {file_col!r}")
        path = (root / rel).resolve()
        if not allow_outside and not path.is_relative_to(top):
            raise DatasetError(
                f"{csv_path} line {line}: file {rel!r} resolves to {path}, outside the "
                f"dataset folder {top}; {_OUTSIDE_HINT}"
            )
        if not path.is_file() and not missing_ok:
            padded = rel != rel.strip() and (root / rel.strip()).is_file()
            hint = (
                f" (the name {rel!r} starts or ends with a space, which is part of the name; "
                f"{rel.strip()!r} exists)"
                if padded
                else ""
            )
            raise DatasetError(f"{csv_path} line {line}: audio file {path} not found{hint}")
        clip_id = (cell(row, "id") or "").strip() or _default_id(rel)
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
        metadata = {c: row[c] for c in extra if row[c] != ""}
        for role in _METADATA_ROLES:
            if value := cell(row, role):
                metadata[role] = value
        clips.append(
            Clip(
                id=clip_id,
                audio=FileAudioRef(path),
                label=_blank_to_none(cell(row, "label")),
                subset=_blank_to_none(cell(row, "subset")),
                split=_blank_to_none(cell(row, "split")),
                text=_blank_to_none(cell(row, "text")),
                group=_blank_to_none(cell(row, "group")),
                metadata=metadata,
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
