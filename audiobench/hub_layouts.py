"""Reading MAEB's datasets the way the reference evaluator lays them out.

A MAEB task (``tasks/maeb.py``) is an ordinary task of its family with a ``hub`` attribute, a
:class:`HubData` that says how its pinned hub dataset is organised; :func:`load_hub_clips`
reads it into clips, from the hub at the task's revision or from a local copy in the same
layout (``--dataset DIR``: parquet files and a ``README.md`` whose ``configs`` name them, as
the hub serves them). Four layouts:

- ``"table"``: one row per clip, the columns named by the task's ``Columns``. With
  ``configs`` every hub configuration (a language) is read as a subset of its own.
- ``"pairs"``: one row per pair, two audio columns (``pair_columns``) and a 0/1 label; each
  row gives two clips sharing ``metadata["pair"]`` (the pair classification family's
  ``"given"`` layout).
- ``"retrieval"``: the configurations ``corpus`` (``id`` and ``audio``, or ``text`` with
  ``corpus_modality="text"``), ``queries`` (``id`` and
  ``text``, or ``audio``) and the judgements ``default`` (else ``qrels``: ``query-id``,
  ``corpus-id``, ``score``). Corpus clips keep their ids and have split ``corpus``; queries
  become clips ``query:<id>`` of split ``query`` whose ``metadata["relevant"]`` lists the
  documents judged relevant (score ≥ 1) in the corpus, and ``metadata["judgements"]`` every
  judgement as given (the reference protocol's graded relevance, documents missing from the
  corpus included). Only judged queries are kept, as the reference keeps them. A text query is
  a clip without audio (:class:`TextOnly`).
- ``"reranking"``: as ``"retrieval"``, plus ``top_ranked`` (``query-id``, ``corpus-ids``):
  each query's ``metadata["candidates"]`` (empty without a row); its ``positives`` are its
  relevant documents. Under ``protocol=mteb`` corpus rows sharing an id are one document, the
  last row, as the reference looks candidates up.

What the reference does to the data at load time is declared here too and done the same way:
rows left out by a column's value (``exclude``), splits cut to 2,048 rows stratified by the
label (``subsample``; drawn by ``datasets``' own stratified ``train_test_split`` with seed 42,
as the reference draws them), clips whose decoded audio is shorter than ``min_samples``
samples or not finite left out, labels renamed (``relabel``, e.g. gender names to the 0/1 ids
the reference scores), zero-shot labels read as indices into the candidate texts
(``classes``), ids built from columns (``id_format``), and a split read under another name
(``hub_splits``). Clip ids are unique: with configurations they start with ``<config>/``, and a
repeated id gets ``#2``, ``#3``, ... and keeps the id it had as ``metadata["source_id"]``
(the reference keys queries and documents by id, so under ``protocol=mteb`` rows sharing an
id collapse as they do there; see docs/MAEB.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from audiobench.audio import AudioRef, Clip
from audiobench.registry import FOLDER_FAMILIES
from audiobench.sources import DatasetError, _clips_from_table
from audiobench.task import Columns

if TYPE_CHECKING:
    from audiobench.task import Task

__all__ = [
    "MTEB_TASK_TYPES",
    "SUBSAMPLE_SEED",
    "SUBSAMPLE_SIZE",
    "HubData",
    "TextOnly",
    "load_hub_clips",
    "mteb_task_type",
]

#: MTEB's task type of each family (its leaderboard averages the main scores per type).
MTEB_TASK_TYPES: dict[str, str] = {
    "retrieval": "Any2AnyRetrieval",
    "reranking": "AudioReranking",
    "classification": "AudioClassification",
    "clustering": "AudioClustering",
    "pair_classification": "AudioPairClassification",
    "zero_shot_classification": "AudioZeroshotClassification",
}


def mteb_task_type(task: type[Task]) -> str:
    """MTEB's task type of ``task`` (multi-label classification has its own)."""
    family = str(task.metadata.family)
    if family == "classification" and getattr(task.options, "multilabel", False):
        return "AudioMultilabelClassification"
    return MTEB_TASK_TYPES[family]


#: The reference's stratified subsampling: rows kept, and its seed.
SUBSAMPLE_SIZE = 2048
SUBSAMPLE_SEED = 42


class HubData(BaseModel):
    """How a MAEB task's hub dataset is laid out, and what the reference does to it on load."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    layout: Literal["table", "pairs", "retrieval", "reranking"] = "table"
    configs: tuple[str, ...] = Field(
        (), description="Hub configurations read, each a subset; empty: the task's one."
    )
    hub_splits: dict[str, str] = Field(
        default_factory=dict, description="Hub split read for an evaluated split, if renamed."
    )
    exclude: dict[str, tuple[str, ...]] = Field(
        default_factory=dict, description="Rows whose value in a column is listed are left out."
    )
    subsample: tuple[str, ...] = Field(
        (), description="Splits cut to 2,048 rows, stratified by the label column."
    )
    min_samples: int | None = Field(
        None, ge=1, description="Clips with fewer decoded samples, or non-finite ones, left out."
    )
    relabel: dict[str, str] = Field(
        default_factory=dict, description="Label renaming; every label must be listed."
    )
    classes: tuple[str, ...] = Field(
        (), description="Zero-shot: candidate texts; the label column holds their index."
    )
    label_column: str | None = Field(
        None, description="Raw label column (when Columns.label is not used, as zero-shot)."
    )
    id_format: str | None = Field(
        None, description="Clip id built from metadata columns, e.g. '{song_name}{line[0]}'."
    )
    pair_columns: tuple[str, str] = ("audio1", "audio2")
    query_modality: Literal["audio", "text"] = "text"
    corpus_modality: Literal["audio", "text"] = "audio"


@dataclass(frozen=True)
class TextOnly(AudioRef):
    """The audio of a clip that is only a text (a text query): reading it is an error."""

    name: str

    def read(self) -> tuple[np.ndarray, int]:
        raise ValueError(f"{self.name} is a text query; it has no audio")

    @property
    def location(self) -> str:
        return f"{self.name} (text only)"


def load_hub_clips(
    task: Task, hub: HubData, progress: Callable[[str], None] | None = None
) -> list[Clip]:
    """The task's clips, read as ``hub`` says (see the module docstring)."""
    say = progress or (lambda _msg: None)
    meta = task.metadata
    where = (
        f"local copy {task.dataset_path}"
        if task.dataset_path
        else (f"{meta.dataset.path}@{task.dataset_revision}")
    )
    if task.dataset_path is not None:
        _check_local_copy(task)
    say(f"loading {meta.name} from {where}")
    if hub.layout in ("retrieval", "reranking"):
        clips = _ranking_clips(task, hub)
    else:
        clips = _table_clips(task, hub, say)
    return _unique_ids(clips)


# ---------------------------------------------------------------------------- hub access


def _source(task: Task) -> tuple[str, str | None]:
    if task.dataset_path is not None:
        return str(task.dataset_path), None
    return task.metadata.dataset.path, task.dataset_revision


def _check_local_copy(task: Task) -> None:
    """Refuse a ``--dataset`` that cannot be a copy of the task's hub dataset, saying why."""
    path = Path(task.dataset_path or "")
    if not path.exists():
        raise DatasetError(f"task {task.name}: --dataset {path} does not exist")
    if path.is_dir() and (path / "labels.csv").is_file():
        family = str(task.metadata.family).replace("_", "-")
        folder = f"folder-{family}" if family in FOLDER_FAMILIES else "folder-<family>"
        raise DatasetError(
            f"task {task.name}: --dataset {path} is a folder of audio with a labels.csv; this "
            f"task reads a copy of the hub dataset {task.metadata.dataset.path} in its layout "
            f"(parquet or arrow files, or a saved dataset). To score your own folder, run "
            f"--task {folder}:{path} (see `audiobench evaluate --help`)"
        )


def _root_cause(exc: BaseException) -> str:
    """The innermost error's message (``datasets`` wraps the one that says what is wrong)."""
    inner = exc
    while inner.__cause__ is not None or (
        inner.__context__ is not None and not inner.__suppress_context__
    ):
        inner = inner.__cause__ or inner.__context__  # type: ignore[assignment]
    return "" if inner is exc else f" ({type(inner).__name__}: {inner})"


def _open(task: Task, config: str | None, split: str, *, any_split: bool = False) -> Any:
    """One split of one configuration as a ``datasets.Dataset``.

    ``any_split``: a configuration with one split is read whatever that split is called (the
    reference's rule for retrieval configurations).
    """
    import datasets

    path, revision = _source(task)
    try:
        if any_split:
            names = datasets.get_dataset_split_names(path, config_name=config, revision=revision)
            if split not in names and len(names) == 1:
                split = names[0]
        return datasets.load_dataset(path, name=config, revision=revision, split=split)
    except Exception as exc:
        hint = (
            " (no network? point --dataset at a local copy in the hub's layout)"
            if task.dataset_path is None
            else ""
        )
        what = f"configuration {config!r} " if config else ""
        raise DatasetError(
            f"task {task.name}: could not load {path!r} {what}split {split!r}"
            f"{f' at revision {revision}' if revision else ''}: {exc}{_root_cause(exc)}{hint}"
        ) from exc


def _config_names(task: Task) -> list[str]:
    import datasets

    path, revision = _source(task)
    try:
        return list(datasets.get_dataset_config_names(path, revision=revision))
    except Exception as exc:
        raise DatasetError(
            f"task {task.name}: could not list the configurations of {path!r}: {exc}"
        ) from exc


# ---------------------------------------------------------------------------- tables


def _table_clips(task: Task, hub: HubData, say: Callable[[str], None]) -> list[Clip]:
    meta = task.metadata
    wanted = task.subsets_to_run()
    configs: Sequence[str | None] = hub.configs or (meta.dataset.config,)
    if hub.configs and wanted:
        configs = [c for c in hub.configs if c in wanted]
    label_column = hub.label_column or meta.columns.label
    clips: list[Clip] = []
    for config in configs:
        tables = {}
        for split in meta.splits:
            ds = _open(task, config, hub.hub_splits.get(split, split))
            for column, values in hub.exclude.items():
                excluded = set(values)
                ds = ds.filter(lambda v, ex=excluded: v not in ex, input_columns=[column])
            tables[split] = ds
        if hub.subsample:
            if label_column is None:
                raise ValueError(f"task {meta.name}: subsampling needs a label column")
            tables = _subsample(tables, hub.subsample, label_column)
        prefix = f"{config}/" if hub.configs else ""
        for split, ds in tables.items():
            name = f"{meta.dataset.path}[{config or 'default'}][{split}]"
            if hub.layout == "pairs":
                part = _pair_clips(ds, meta.columns, hub, split, name, prefix)
            else:
                part = _clips_from_table(ds, meta.columns, split, name)
                part = [
                    dataclasses.replace(
                        c,
                        id=prefix + _clip_id(c, hub),
                        subset=config if hub.configs else c.subset,
                    )
                    for c in part
                ]
            clips.extend(part)
    if not hub.configs and meta.subsets and meta.columns.subset:
        keep = set(wanted)  # rows of other languages are not scored (the reference drops them)
        clips = [c for c in clips if c.subset in keep]
    if hub.relabel:
        clips = _relabelled(clips, hub.relabel, meta.name)
    if hub.classes:
        clips = _class_texts(clips, hub, label_column, meta.name)
    if hub.min_samples is not None:
        clips = _long_enough(clips, hub.min_samples, say)
    return clips


def _clip_id(clip: Clip, hub: HubData) -> str:
    if hub.id_format is None:
        return clip.id
    try:
        return hub.id_format.format(**clip.metadata)
    except (KeyError, IndexError, TypeError) as exc:
        raise DatasetError(
            f"clip {clip.id!r}: cannot build its id from {hub.id_format!r}: {exc}"
        ) from exc


def _pair_clips(
    ds: Any, columns: Columns, hub: HubData, split: str, name: str, prefix: str
) -> list[Clip]:
    """Two clips per row, sharing ``metadata["pair"]`` and the row's label."""
    sides = []
    for audio in hub.pair_columns:
        side = Columns(audio=audio, label=columns.label, id=columns.id, required=("audio", "label"))
        sides.append(_clips_from_table(ds, side, split, name))
    clips = []
    for row, (first, second) in enumerate(zip(*sides, strict=True)):
        pair = f"{prefix}{first.id if columns.id else f'{split}:{row}'}"
        for k, clip in enumerate((first, second), start=1):
            clips.append(dataclasses.replace(clip, id=f"{pair}-{k}", metadata={"pair": pair}))
    return clips


def _subsample(tables: dict[str, Any], splits: Sequence[str], label: str) -> dict[str, Any]:
    """The reference's stratified subsampling, drawn by ``datasets`` from the label alone.

    A label column that is not a ``ClassLabel`` is encoded as the reference encodes it: class
    names sorted as text over every split read. The draw depends only on those codes, so it is
    made on a table of codes and row numbers and the rows are then taken from the real one, in
    the drawn order.
    """
    import datasets

    first = next(iter(tables.values()))
    feature = first.features[label]
    if isinstance(feature, datasets.ClassLabel):
        codes = {split: list(ds[label]) for split, ds in tables.items()}
        classes = feature
    else:
        names = sorted({str(v) for ds in tables.values() for v in ds[label] if v is not None})
        index = {n: i for i, n in enumerate(names)}
        codes = {split: [index[str(v)] for v in ds[label]] for split, ds in tables.items()}
        classes = datasets.ClassLabel(names=names)
    out = dict(tables)
    for split in splits:
        ds = tables[split]
        if len(ds) <= SUBSAMPLE_SIZE:
            continue
        small = datasets.Dataset.from_dict(
            {label: codes[split], "row": list(range(len(ds)))},
            features=datasets.Features({label: classes, "row": datasets.Value("int64")}),
        )
        drawn = small.train_test_split(
            test_size=SUBSAMPLE_SIZE, seed=SUBSAMPLE_SEED, stratify_by_column=label
        )["test"]
        out[split] = ds.select(list(drawn["row"]))
    return out


def _relabelled(clips: list[Clip], mapping: dict[str, str], task: str) -> list[Clip]:
    unknown = sorted({str(c.label) for c in clips if c.label not in mapping})
    if unknown:
        raise DatasetError(f"task {task}: label(s) {unknown[:5]} have no renaming")
    return [dataclasses.replace(c, label=mapping[str(c.label)]) for c in clips]


def _class_texts(clips: list[Clip], hub: HubData, column: str | None, task: str) -> list[Clip]:
    """Zero-shot labels: an index into the candidate texts, or one of the texts."""
    out = []
    for clip in clips:
        raw = clip.metadata.get(column) if column else clip.label
        text = str(raw).strip() if raw is not None else ""
        if text in hub.classes:
            label = text
        elif text.lstrip("-").isdigit() and 0 <= int(text) < len(hub.classes):
            label = hub.classes[int(text)]
        else:
            raise DatasetError(
                f"task {task}: clip {clip.id!r} has label {raw!r}, neither one of the "
                f"{len(hub.classes)} candidate texts nor an index into them"
            )
        out.append(dataclasses.replace(clip, label=label))
    return out


def _long_enough(clips: list[Clip], min_samples: int, say: Callable[[str], None]) -> list[Clip]:
    """Clips whose audio, decoded at its own rate, has ``min_samples`` finite samples."""
    kept = []
    for clip in clips:
        try:
            data, _ = clip.audio.read()
        except Exception:  # an unreadable clip is the runner's to report
            kept.append(clip)
            continue
        if data.shape[0] >= min_samples and np.isfinite(data).all():
            kept.append(clip)
    if len(kept) < len(clips):
        say(f"left out {len(clips) - len(kept)} clip(s) shorter than {min_samples} samples")
    return kept


def _unique_ids(clips: list[Clip]) -> list[Clip]:
    """Clips with unique ids: a repeated id gets ``#2``, ``#3``, ...; every clip of a repeated
    id records it as ``metadata["source_id"]`` (the reference protocol keys rows by it)."""
    counts: dict[str, int] = {}
    for clip in clips:
        counts[clip.id] = counts.get(clip.id, 0) + 1
    seen: dict[str, int] = {}
    out = []
    for clip in clips:
        n = seen.get(clip.id, 0) + 1
        seen[clip.id] = n
        if counts[clip.id] == 1:
            out.append(clip)
            continue
        metadata = {**clip.metadata, "source_id": clip.id}
        new_id = clip.id if n == 1 else f"{clip.id}#{n}"
        out.append(dataclasses.replace(clip, id=new_id, metadata=metadata))
    return out


def _protocol(task: Task) -> str | None:
    """The protocol the task is scored under (None: a family without the option)."""
    return getattr(task.options, "protocol", None)


# ---------------------------------------------------------------------------- retrieval


def _ranking_clips(task: Task, hub: HubData) -> list[Clip]:
    meta = task.metadata
    split = meta.splits[0]
    configs = _config_names(task)
    corpus_ds = _open(task, "corpus", split, any_split=True)
    queries_ds = _open(task, "query" if "query" in configs else "queries", split, any_split=True)
    qrels_ds = _open(task, "default" if "default" in configs else "qrels", split, any_split=True)
    id_column = "_id" if "_id" in corpus_ds.column_names else "id"
    if hub.corpus_modality == "text":
        corpus = _text_corpus(corpus_ds, id_column, meta.name)
    else:
        corpus = _clips_from_table(
            corpus_ds,
            Columns(audio="audio", id=id_column, label=None, required=("audio",)),
            "corpus",
            f"{meta.dataset.path}[corpus]",
        )
    if hub.layout == "reranking" and _protocol(task) == "mteb":
        # The reference looks a candidate up by id in a table keyed by id: of rows sharing an
        # id, the last one is the document.
        last = {c.id: c for c in corpus}
        corpus = list(last.values())
    corpus_ids = {c.id for c in corpus}
    judged: dict[str, dict[str, int]] = {}
    for q, d, score in zip(
        qrels_ds["query-id"], qrels_ds["corpus-id"], qrels_ds["score"], strict=True
    ):
        judged.setdefault(str(q), {})[str(d)] = int(score)
    top: dict[str, list[str]] = {}
    if hub.layout == "reranking":
        ranked = _open(task, "top_ranked", split, any_split=True)
        top = {
            str(q): [str(d) for d in ds]
            for q, ds in zip(ranked["query-id"], ranked["corpus-ids"], strict=True)
        }
    q_id_column = "_id" if "_id" in queries_ds.column_names else "id"
    if hub.query_modality == "audio":
        queries = _clips_from_table(
            queries_ds,
            Columns(audio="audio", id=q_id_column, label=None, required=("audio",)),
            "query",
            f"{meta.dataset.path}[queries]",
        )
    else:
        queries = [
            Clip(id=str(qid), audio=TextOnly(f"query {qid!r}"), text=text, split="query")
            for qid, text in zip(queries_ds[q_id_column], queries_ds["text"], strict=True)
        ]
    out = list(corpus)
    for query in queries:
        grades = judged.get(query.id)
        if grades is None:  # the reference loads judged queries only
            continue
        relevant = [d for d, g in grades.items() if g >= 1 and d in corpus_ids]
        extra: dict[str, Any] = {"relevant": relevant}
        if hub.layout == "reranking":
            extra = {"candidates": top.get(query.id, []), "positives": relevant}
        # Every judgement as given (grades, documents missing from the corpus): the
        # reference protocol scores with these; audiobench's reads ``relevant``.
        extra["judgements"] = dict(grades)
        out.append(
            dataclasses.replace(
                query, id=f"query:{query.id}", split="query", metadata={**query.metadata, **extra}
            )
        )
    return out


def _text_corpus(corpus_ds: Any, id_column: str, task: str) -> list[Clip]:
    """Text documents (audio→text retrieval): clips without audio whose text is the document.

    The reference joins a non-empty ``title`` to the text; no task read here has one, so a
    corpus with titles is refused rather than scored on part of its text.
    """
    if "title" in corpus_ds.column_names and any(corpus_ds["title"]):
        raise DatasetError(
            f"task {task}: the text corpus has a 'title' column; documents with titles are "
            "not supported by this loader"
        )
    return [
        Clip(id=str(did), audio=TextOnly(f"document {did!r}"), text=text, split="corpus")
        for did, text in zip(corpus_ds[id_column], corpus_ds["text"], strict=True)
    ]
