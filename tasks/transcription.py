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
from collections.abc import Callable
from pathlib import Path

from audiobench.audio import Clip
from audiobench.benchmark import Benchmark, ScoreColumn
from audiobench.families import TranscriptionTask
from audiobench.sources import DatasetError
from audiobench.task import Columns, Synthetic, Task, TaskFamily, TaskMetadata
from audiobench.tasks.svq import (
    INDEX_FILE,
    SVQ_LOCALES,
    SVQ_SOURCE,
    svq_folder,
    svq_task_rows,
    svq_utterances,
)

__all__ = [
    "SVQ_TRANSCRIPTION_TASKS",
    "TRANSCRIPTION",
    "MockTranscription",
    "SVQEnUsSpeechTranscription",
    "read_svq",
]

#: MSEB's task file of the transcription tasks inside SVQ.
SVQ_TASK_FILE = "speech_transcription.jsonl"
SVQ_CITATION = (
    "Heigold et al. Massive Sound Embedding Benchmark (MSEB). NeurIPS 2025 Datasets and "
    "Benchmarks; Simple Voice Questions (SVQ), google/svq."
)


def read_svq(folder: Path, task_file: str, locales: tuple[str, ...], name: str) -> list[Clip]:
    """SVQ clips of ``task_file`` in ``locales``: audio, transcript, locale as the subset,
    and every other field of the record in ``Clip.metadata`` (``environment``...).

    Errors name the task, the file and the line.
    """
    utterances = svq_utterances(folder, name)
    clips: list[Clip] = []
    path = folder / task_file
    for row in svq_task_rows(folder, task_file, name):
        locale = row["locale"]
        if locale not in locales:
            continue
        utt_id, text, line = row["utt_id"], row.get("text"), row["_line"]
        where = f"{name}: {path} line {line}"
        if not isinstance(text, str):
            raise DatasetError(f"{where}: needs a string 'text'")
        utterance = utterances.get(utt_id)
        if utterance is None:
            raise DatasetError(f"{where}: utterance {utt_id!r} is not in {INDEX_FILE}")
        extra = {
            k: v
            for k, v in row.items()
            if k not in ("utt_id", "text", "locale", "_line") and v != ""
        }
        clips.append(
            Clip(
                id=utt_id,
                audio=utterance.audio,
                subset=locale,
                text=text,
                metadata={k: v if isinstance(v, str) else json.dumps(v) for k, v in extra.items()},
            )
        )
    return clips


class SVQSpeechTranscription(TranscriptionTask):
    """An SVQ transcription task: the locales are its ``metadata.subsets``."""

    def read_clips(self, say: Callable[[str], None], *, missing_ok: bool) -> list[Clip]:
        where = self.dataset_path or f"{SVQ_SOURCE.path}@{self.dataset_revision or 'main'}"
        say(f"reading SVQ from {where}")
        folder = svq_folder(self.name, self.dataset_path, self.dataset_revision, SVQ_TASK_FILE)
        return read_svq(folder, SVQ_TASK_FILE, self.metadata.subsets, self.name)


def _svq_metadata(locale: str) -> TaskMetadata:
    english = locale.startswith("en_")
    return TaskMetadata(
        name=f"SVQ{SVQ_LOCALES[locale][0]}SpeechTranscription",
        family=TaskFamily.TRANSCRIPTION,
        description=(
            f"MSEB's SVQ speech transcription, locale {locale}: each utterance's transcript "
            f"against SVQ's, after Whisper's {'English' if english else 'basic'} normaliser. "
            "Main score: corpus WER (lower is better); SER, NoResultRate and the character "
            "error rate too, also per recording environment."
        ),
        # MSEB labels SVQ 1.0.0 and reads the default branch: unpinned.
        dataset=SVQ_SOURCE,
        columns=Columns(label=None, text="text", subset="locale", required=("audio",)),
        splits=("test",),
        subsets=(locale,),
        main_score="wer",
        higher_is_better=False,
        domains=("speech",),
        license="CC-BY-4.0",
        citation=SVQ_CITATION,
        reference="https://github.com/google-research/mseb",
    )


class SVQEnUsSpeechTranscription(SVQSpeechTranscription):
    metadata = _svq_metadata("en_us")


#: MSEB's 26 SVQ transcription tasks, one per locale, under MSEB's names (the
#: ``audiobench.task_catalogues`` entry point ``svq-transcription`` registers them).
SVQ_TRANSCRIPTION_TASKS: tuple[type[Task], ...] = tuple(
    SVQEnUsSpeechTranscription
    if locale == "en_us"
    else type(
        _svq_metadata(locale).name,
        (SVQSpeechTranscription,),
        {"metadata": _svq_metadata(locale), "__module__": __name__},
    )
    for locale in SVQ_LOCALES
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
