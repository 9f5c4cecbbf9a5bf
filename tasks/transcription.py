"""Transcription tasks: MSEB's SVQ speech transcription, and an offline mock.

``SVQEnUsSpeechTranscription`` is MSEB's task of that name: the en_us utterances of Simple
Voice Questions (``google/svq``, SVQ's ``speech_transcription.jsonl``), each scored against
its transcript after Whisper's English normaliser; main score ``wer`` (lower is better),
also per recording environment (clean, media_noise, traffic_noise, background_speech).
MSEB versions SVQ by a label (1.0.0), not a hub commit, so the data is read at ``main`` and
the result records it as unpinned. A local copy of the dataset's files (``--dataset DIR``:
``utt_index.jsonl``, ``speech_transcription.jsonl``, ``audio/*.parquet``) is read the same
way.

``MockTranscription`` runs offline: generated speech-like utterances with known transcripts
in two locales (en_us, sw), half of them with traffic noise.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from audiobench.audio import ArrowAudioRef, Clip
from audiobench.benchmark import Benchmark, ScoreColumn
from audiobench.families import TranscriptionTask
from audiobench.sources import DatasetError
from audiobench.task import Columns, DatasetSource, Synthetic, TaskFamily, TaskMetadata

__all__ = ["TRANSCRIPTION", "MockTranscription", "SVQEnUsSpeechTranscription", "read_svq"]

SVQ_REPOSITORY = "google/svq"
#: MSEB's task file of the transcription tasks inside SVQ.
SVQ_TASK_FILE = "speech_transcription.jsonl"
SVQ_INDEX_FILE = "utt_index.jsonl"
SVQ_CITATION = (
    "Heigold et al. Massive Sound Embedding Benchmark (MSEB). NeurIPS 2025 Datasets and "
    "Benchmarks; Simple Voice Questions (SVQ), google/svq."
)


class _ShardRows:
    """A parquet shard's ``waveform`` column seen as rows of ``{"waveform": {"bytes": ...}}``.

    What :class:`~audiobench.audio.ArrowAudioRef` reads; the shard stays memory-mapped.
    """

    def __init__(self, path: Path) -> None:
        import pyarrow.parquet as pq

        self.column = pq.read_table(path, columns=["waveform"], memory_map=True).column(0)

    def __len__(self) -> int:
        return len(self.column)

    def __getitem__(self, row: int) -> dict[str, Any]:
        cell = self.column[row].as_py()
        if isinstance(cell, bytes | bytearray):
            cell = {"bytes": bytes(cell)}
        return {"waveform": cell}


def _jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open(encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path} line {line_no}: not JSON ({exc.msg})") from None
            if not isinstance(record, dict):
                raise DatasetError(f"{path} line {line_no}: not a JSON object")
            yield line_no, record


def read_svq(
    root: Path, task_file: str, locales: tuple[str, ...], fetch: Callable[[str], Path] | None
) -> list[Clip]:
    """SVQ clips of ``task_file`` in ``locales``: audio, transcript, locale as the subset,
    and every other field of the record in ``Clip.metadata`` (``environment``...).

    ``fetch(relative path)`` brings a file of the dataset (hub downloads); None reads
    ``root`` alone. Errors name the file and line.
    """

    def file(name: str) -> Path:
        path = fetch(name) if fetch is not None else root / name
        if not path.is_file():
            raise DatasetError(f"SVQ copy {root}: {name} not found")
        return path

    index: dict[str, str] = {}
    index_path = file(SVQ_INDEX_FILE)
    for line_no, record in _jsonl(index_path):
        if not isinstance(record.get("utt_id"), str) or not isinstance(record.get("index"), str):
            raise DatasetError(f"{index_path} line {line_no}: needs string utt_id and index")
        index[record["utt_id"]] = record["index"]
    shards: dict[str, _ShardRows] = {}
    clips: list[Clip] = []
    task_path = file(task_file)
    for line_no, record in _jsonl(task_path):
        locale = record.get("locale")
        if locale not in locales:
            continue
        utt_id, text = record.get("utt_id"), record.get("text")
        where = f"{task_path} line {line_no}"
        if not isinstance(utt_id, str) or not isinstance(text, str):
            raise DatasetError(f"{where}: needs string utt_id and text")
        if utt_id not in index:
            raise DatasetError(f"{where}: utterance {utt_id!r} is not in {SVQ_INDEX_FILE}")
        shard, _, row = index[utt_id].rpartition(":")
        if not shard or not row.isdigit():
            raise DatasetError(f"{SVQ_INDEX_FILE}: {utt_id!r} has index {index[utt_id]!r}")
        if shard not in shards:
            shards[shard] = _ShardRows(file(f"{shard}.parquet"))
        if int(row) >= len(shards[shard]):
            raise DatasetError(f"{where}: row {row} is past the end of {shard}.parquet")
        extra = {
            k: v for k, v in record.items() if k not in ("utt_id", "text", "locale") and v != ""
        }
        clips.append(
            Clip(
                id=utt_id,
                audio=ArrowAudioRef(shards[shard], int(row), "waveform", f"{shard}.parquet"),
                subset=locale,
                text=text,
                metadata={k: v if isinstance(v, str) else json.dumps(v) for k, v in extra.items()},
            )
        )
    return clips


class SVQSpeechTranscription(TranscriptionTask):
    """An SVQ transcription task: the locales are its ``metadata.subsets``."""

    def read_clips(self, say: Callable[[str], None], *, missing_ok: bool) -> list[Clip]:
        locales = self.metadata.subsets
        if self.dataset_path is not None:
            say(f"reading SVQ from {self.dataset_path}")
            return read_svq(self.dataset_path, SVQ_TASK_FILE, locales, None)
        from huggingface_hub import hf_hub_download

        revision = self.dataset_revision or "main"
        say(f"loading {SVQ_REPOSITORY}@{revision} from the Hugging Face hub")

        def fetch(name: str) -> Path:
            try:
                return Path(
                    hf_hub_download(SVQ_REPOSITORY, name, repo_type="dataset", revision=revision)
                )
            except Exception as exc:  # offline, missing file, no access: one actionable line
                raise DatasetError(
                    f"{self.name}: cannot fetch {name} from {SVQ_REPOSITORY}@{revision} "
                    f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); "
                    "download the dataset on a machine with network access and pass "
                    "--dataset DIR"
                ) from None

        return read_svq(Path(SVQ_REPOSITORY), SVQ_TASK_FILE, locales, fetch)


class SVQEnUsSpeechTranscription(SVQSpeechTranscription):
    metadata = TaskMetadata(
        name="SVQEnUsSpeechTranscription",
        family=TaskFamily.TRANSCRIPTION,
        description=(
            "MSEB's SVQ speech transcription, locale en_us: each utterance's transcript "
            "against SVQ's, after Whisper's English normaliser. Main score: corpus WER "
            "(lower is better); SER, NoResultRate and the character error rate too, also "
            "per recording environment."
        ),
        # MSEB labels SVQ 1.0.0 and reads the default branch: unpinned.
        dataset=DatasetSource(kind="huggingface", path=SVQ_REPOSITORY, revision="main"),
        columns=Columns(label=None, text="text", subset="locale", required=("audio",)),
        splits=("test",),
        subsets=("en_us",),
        main_score="wer",
        higher_is_better=False,
        domains=("speech",),
        license="CC-BY-4.0",
        citation=SVQ_CITATION,
        reference="https://github.com/google-research/mseb",
    )


class MockTranscription(TranscriptionTask):
    metadata = TaskMetadata(
        name="MockTranscription",
        family=TaskFamily.TRANSCRIPTION,
        description=(
            "Generated speech-like utterances with known transcripts in two locales (en_us, "
            "sw), half with traffic noise; MSEB's transcription metrics per locale and "
            "environment, main score corpus WER (lower is better). Runs offline."
        ),
        dataset=Synthetic(
            generator="audiobench.synthetic.utterances:write_utterances",
            seed=20261128,
            params={"per_subset": 6},
        ),
        columns=Columns(label=None, text="text", subset="subset", required=("audio",)),
        subsets=("en_us", "sw"),
        main_score="wer",
        higher_is_better=False,
        domains=("synthetic", "speech"),
        license="Apache-2.0",
    )
    # Offline: no Whisper tokenizer to read the British→American table from (not MSEB data).
    options = TranscriptionTask.Options(spelling_table="none")


TRANSCRIPTION = Benchmark(
    name="Transcription",
    description="MSEB's SVQ speech transcription (en_us): corpus word error rate.",
    tasks=("SVQEnUsSpeechTranscription",),
    columns=(
        ScoreColumn(
            name="SVQ en_us WER",
            task="SVQEnUsSpeechTranscription",
            score="wer",
            aggregate=None,
            higher_is_better=False,
        ),
    ),
    rank_by=("SVQ en_us WER",),
)
