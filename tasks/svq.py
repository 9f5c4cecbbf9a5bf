"""Simple Voice Questions (SVQ, ``google/svq``), the speech data of MSEB, read in its own layout.

SVQ is not a ``datasets`` table. Its repository holds:

- ``utt_index.jsonl``: one line per utterance: ``utt_id``, ``index`` (``"<shard>:<row>"``, the
  shard a path without extension, e.g. ``audio/en_us_0``), ``locale`` (``en_us``),
  ``environment`` (``clean``, ``media_noise``, ``traffic_noise``, ``background_speech``),
  ``text`` and speaker fields;
- ``<shard>.parquet``: a ``waveform`` column of WAV bytes (or ``{"bytes": ...}`` cells);
- one file per task kind, e.g. ``span_reasoning_in_lang.jsonl``: ``utt_id``, ``locale`` and the
  task's fields.

A task reads it from a local copy (``--dataset DIR``) or downloads the files it needs from the
hub (``huggingface_hub.snapshot_download``, only the index, the task file and the audio
shards). MSEB versions SVQ by a label (``1.0.0``), not a hub commit, and reads the default
branch: the tasks here read ``main`` as well, so their results are recorded as **unpinned**
(as VocSim's are) until a commit is given with ``--dataset-revision``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from audiobench.audio import ArrowAudioRef
from audiobench.sources import DatasetError
from audiobench.task import DatasetSource

__all__ = [
    "INDEX_FILE",
    "SVQ_CITATION",
    "SVQ_CROSS_LANG_LOCALES",
    "SVQ_IN_LANG_LOCALES",
    "SVQ_LICENSE",
    "SVQ_LOCALES",
    "SVQ_REFERENCE",
    "SVQ_SOURCE",
    "SvqUtterance",
    "svq_folder",
    "svq_locale_rows",
    "svq_rows",
    "svq_task_rows",
    "svq_utterances",
]

SVQ_SOURCE = DatasetSource(kind="huggingface", path="google/svq", revision="main")
SVQ_REFERENCE = "https://huggingface.co/datasets/google/svq"
SVQ_LICENSE = "CC-BY-4.0"
SVQ_CITATION = (
    "@misc{mseb2025, title={Massive Sound Embedding Benchmark (MSEB)}, "
    "author={Google Research}, year={2025}, howpublished={\\url{https://github.com/"
    "google-research/mseb}}}"
)
INDEX_FILE = "utt_index.jsonl"

#: SVQ's 26 locales, as MSEB names its per-locale tasks: locale -> (the task-name part,
#: MSEB's ``eval_langs`` entry). ``SVQ`` + part + the task kind is MSEB's task name, e.g.
#: ``en_us`` -> ``SVQEnUsSalientTermSegmentation``.
SVQ_LOCALES: dict[str, tuple[str, str]] = {
    "ar_eg": ("ArEg", "ar-EG"),
    "ar_x_gulf": ("ArXGulf", "ar-x-gulf"),
    "ar_x_levant": ("ArXLevant", "ar-x-levant"),
    "ar_x_maghrebi": ("ArXMaghrebi", "ar-x-maghrebi"),
    "bn_bd": ("BnBd", "bn-BD"),
    "bn_in": ("BnIn", "bn-IN"),
    "en_au": ("EnAu", "en-AU"),
    "en_gb": ("EnGb", "en-GB"),
    "en_in": ("EnIn", "en-IN"),
    "en_ph": ("EnPh", "en-PH"),
    "en_us": ("EnUs", "en-US"),
    "fi_fi": ("FiFi", "fi-FI"),
    "gu_in": ("GuIn", "gu-IN"),
    "hi_in": ("HiIn", "hi-IN"),
    "id_id": ("IdId", "id-ID"),
    "ja_jp": ("JaJp", "ja-JP"),
    "kn_in": ("KnIn", "kn-IN"),
    "ko_kr": ("KoKr", "ko-KR"),
    "ml_in": ("MlIn", "ml-IN"),
    "mr_in": ("MrIn", "mr-IN"),
    "ru_ru": ("RuRu", "ru-RU"),
    "sw": ("Sw", "sw"),
    "ta_in": ("TaIn", "ta-IN"),
    "te_in": ("TeIn", "te-IN"),
    "ur_in": ("UrIn", "ur-IN"),
    "ur_pk": ("UrPk", "ur-PK"),
}

#: The locales of MSEB's in-language passage, document and span tasks (17): those whose
#: questions have Wikipedia pages in their own language.
SVQ_IN_LANG_LOCALES: tuple[str, ...] = (
    *("ar_eg", "ar_x_gulf", "ar_x_levant", "ar_x_maghrebi", "bn_bd", "bn_in", "en_au"),
    *("en_gb", "en_in", "en_ph", "en_us", "fi_fi", "id_id", "ko_kr", "ru_ru", "sw", "te_in"),
)
#: The locales of MSEB's cross-language tasks (19): questions answered from English pages.
SVQ_CROSS_LANG_LOCALES: tuple[str, ...] = (
    *("ar_eg", "ar_x_gulf", "ar_x_levant", "ar_x_maghrebi", "bn_bd", "bn_in", "fi_fi"),
    *("gu_in", "hi_in", "ja_jp", "kn_in", "ko_kr", "ml_in", "mr_in", "ru_ru", "ta_in"),
    *("te_in", "ur_in", "ur_pk"),
)


def svq_folder(name: str, local_copy: Path | None, revision: str | None, task_file: str) -> Path:
    """The folder holding SVQ's index, ``task_file`` and audio: ``local_copy``, else a hub
    download of just those files at ``revision``."""
    if local_copy is not None:
        folder = Path(local_copy).expanduser()
        if not (folder / INDEX_FILE).is_file():
            raise DatasetError(
                f"{name}: {folder} is not a copy of SVQ: it has no {INDEX_FILE} (download "
                "google/svq, or leave --dataset out to fetch it)"
            )
        return folder
    from huggingface_hub import snapshot_download

    try:
        path = snapshot_download(
            repo_id=SVQ_SOURCE.path,
            repo_type="dataset",
            revision=revision,
            allow_patterns=[INDEX_FILE, task_file, "audio/*.parquet"],
        )
    except Exception as exc:  # offline, unknown revision, no access: all say the same
        raise DatasetError(
            f"{name}: could not fetch {SVQ_SOURCE.path}@{revision} from the hub: {exc}; "
            "download it and pass --dataset DIR"
        ) from exc
    return Path(path)


def _jsonl(path: Path, name: str) -> Iterator[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        raise DatasetError(f"{name}: {path} not found (is the SVQ copy complete?)")
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{name}: {path} line {number}: not JSON: {exc}") from None
            if not isinstance(row, dict):
                raise DatasetError(f"{name}: {path} line {number}: not a JSON object")
            yield number, row


@dataclass(eq=False)
class _Shard:
    """The ``waveform`` column of one audio shard, read on first use (thread-safe)."""

    path: Path
    _cells: list[Any] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __getitem__(self, row: int) -> dict[str, Any]:
        with self._lock:
            if self._cells is None:
                import pyarrow.parquet as pq

                self._cells = pq.read_table(self.path, columns=["waveform"])["waveform"].to_pylist()
        if not 0 <= row < len(self._cells):
            raise IndexError(f"{self.path} has {len(self._cells)} rows, not row {row}")
        cell = self._cells[row]
        return {"waveform": {"bytes": cell} if isinstance(cell, bytes) else cell}


@dataclass(frozen=True)
class SvqUtterance:
    """One utterance of the index, and its audio."""

    id: str
    locale: str
    environment: str | None
    text: str | None
    audio: ArrowAudioRef
    #: The index's speaker fields (``speaker_id``, ``speaker_age``, ``speaker_gender``...).
    speaker: dict[str, Any] = field(default_factory=dict)


def svq_utterances(folder: Path, name: str) -> dict[str, SvqUtterance]:
    """Every utterance of SVQ's index, by id."""
    shards: dict[str, _Shard] = {}
    out: dict[str, SvqUtterance] = {}
    index_path = folder / INDEX_FILE
    for number, row in _jsonl(index_path, name):
        where = f"{name}: {index_path} line {number}"
        utt_id, index = row.get("utt_id"), row.get("index")
        if not isinstance(utt_id, str) or not isinstance(index, str) or ":" not in index:
            raise DatasetError(f"{where}: needs 'utt_id' and 'index' ('<shard>:<row>')")
        shard, _, position = index.rpartition(":")
        if not position.isdigit():
            raise DatasetError(f"{where}: index {index!r} does not end in a row number")
        if utt_id in out:
            raise DatasetError(f"{where}: utterance {utt_id!r} is listed twice")
        parquet = folder / f"{shard}.parquet"
        if shard not in shards:
            if not parquet.resolve().is_relative_to(folder.resolve()):
                raise DatasetError(f"{where}: shard {shard!r} lies outside {folder}")
            shards[shard] = _Shard(parquet)
        out[utt_id] = SvqUtterance(
            id=utt_id,
            locale=str(row.get("locale", "")),
            environment=row.get("environment"),
            text=row.get("text"),
            audio=ArrowAudioRef(
                dataset=shards[shard],
                row=int(position),
                column="waveform",
                dataset_name=f"SVQ {shard}.parquet",
            ),
            speaker={k: v for k, v in row.items() if k.startswith("speaker_")},
        )
    return out


def svq_rows(folder: Path, file: str, name: str) -> Iterator[dict[str, Any]]:
    """The rows of one of SVQ's JSON-lines files (an index of documents...), each with its
    line number as ``_line``."""
    for number, row in _jsonl(folder / file, name):
        yield {**row, "_line": number}


def svq_task_rows(folder: Path, task_file: str, name: str) -> Iterator[dict[str, Any]]:
    """The rows of one of SVQ's task files (JSON lines), each checked to name an utterance."""
    path = folder / task_file
    for number, row in _jsonl(path, name):
        if not isinstance(row.get("utt_id"), str) or not isinstance(row.get("locale"), str):
            raise DatasetError(f"{name}: {path} line {number}: needs 'utt_id' and 'locale'")
        yield {**row, "_line": number}


def svq_locale_rows(
    folder: Path, task_file: str, locale: str, name: str
) -> Iterator[tuple[dict[str, Any], SvqUtterance, str]]:
    """The rows of ``task_file`` in ``locale``, each with its utterance from the index and
    where it is (``"<task>: <file> line <n>"``, for errors). An utterance missing from the
    index, or listed twice in the locale, is an error naming the line."""
    utterances = svq_utterances(folder, name)
    path = folder / task_file
    seen: set[str] = set()
    for row in svq_task_rows(folder, task_file, name):
        if row["locale"] != locale:
            continue
        where = f"{name}: {path} line {row['_line']}"
        utterance = utterances.get(row["utt_id"])
        if utterance is None:
            raise DatasetError(f"{where}: utterance {row['utt_id']!r} is not in {INDEX_FILE}")
        if utterance.id in seen:
            raise DatasetError(f"{where}: utterance {utterance.id!r} is listed twice")
        seen.add(utterance.id)
        yield row, utterance, where
