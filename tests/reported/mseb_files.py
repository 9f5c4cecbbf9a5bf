"""Generated data for the MSEB import/export tests: audiobench results of MSEB tasks, and
result lines in MSEB's format (written here from MSEB's documented fields, not copied)."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import audiobench
from audiobench import registry
from audiobench.reports import score_at
from audiobench.results import (
    CacheStats,
    DatasetIdentity,
    Efficiency,
    Environment,
    ModelInfo,
    RunIdentity,
    TaskInfo,
    TaskResult,
    Timings,
)

MODEL = "acme/speech-encoder"
BUILT_AT = datetime(2026, 11, 1, tzinfo=UTC)


def transcription_scores(wer: float, words: int = 40, utterances: int = 10) -> dict[str, Any]:
    """One set of transcription scores (a subset or a noise slice)."""
    return {
        "wer": wer,
        "wer_std": wer / 2,
        "ser": min(1.0, wer * 2),
        "ser_std": 0.25,
        "no_result_rate": 0.1,
        "character_error_rate": wer / 3,
        "utterance_count": utterances,
        "word_count": words,
    }


def transcription_report(wer: float) -> dict[str, Any]:
    return {
        **transcription_scores(wer),
        "environments": {
            "clean": transcription_scores(wer / 2, 20, 5),
            "traffic_noise": transcription_scores(wer * 1.5, 20, 5),
        },
    }


def reasoning_report(answerable_f1: float, no_answer_f1: float) -> dict[str, Any]:
    """A consistent reasoning report: 3 answerable and 1 'No Answer' examples."""
    weight = 0.75
    return {
        "GmeanF1": answerable_f1**weight * no_answer_f1 ** (1 - weight),
        "F1": weight * answerable_f1 + (1 - weight) * no_answer_f1,
        "InvalidResultRate": 0.25,
        "MissingResultRate": 0.0,
        "F1_std": 0.125,
        "InvalidResultRate_std": math.sqrt(0.25 * 0.75),
        "MissingResultRate_std": 0.0,
        "answerable_F1": answerable_f1,
        "no_answer_F1": no_answer_f1,
        "n_examples": 4,
        "n_answerable": 3,
        "n_no_answer": 1,
        "n_predicted_no_answer": 1,
        "n_without_spans": 0,
        "n_answer_not_in_spans": 0,
        "n_unembedded": 0,
        "no_answer_threshold": 0.5,
        "threshold_fitted": True,
    }


def mseb_task_result(
    task: str, reports: dict[str, dict[str, Any]], *, model: str = MODEL
) -> TaskResult:
    """A valid computed result of ``task`` under ``protocol=mseb`` with ``reports`` (subset ->
    report), summarised by the task's own evaluator as a run summarises them."""
    cls = registry.tasks.get(task)
    meta = cls.metadata
    instance = cls()
    typed = {s: instance.Report.model_validate(r) for s, r in reports.items()}
    summary = instance.summarize(typed)
    written = instance.always_aggregate or len(typed) > 1
    return TaskResult(
        task=TaskInfo(
            name=task,
            family=str(meta.family),
            revision=meta.revision,
            dataset=meta.dataset.path,
            subsets=sorted(meta.subsets),
        ),
        run=RunIdentity(
            task=task,
            dataset=DatasetIdentity(
                kind="huggingface",
                source=meta.dataset.path,
                revision=meta.revision,
                config=meta.dataset.config,
                pinned=False,
            ),
            model_fingerprint=f"{model}-fingerprint",
            task_options=cls.options.model_dump(mode="json"),
            subsets=None,
            on_error="raise",
        ),
        model=ModelInfo(
            name=model,
            revision="v1",
            pooling="mean_time",
            fingerprint=f"{model}-fingerprint",
            n_parameters=1000,
            sample_rate=16000,
        ),
        audiobench_version=audiobench.__version__,
        main_score=score_at(summary, instance.main_score_path),
        main_score_name=meta.main_score,
        scores={s: r.to_json() for s, r in typed.items()},
        aggregates={instance.public_group: summary.to_json()} if written else {},
        efficiency=Efficiency(mean_encoding_size_bytes=8.0, flops_per_example=1.5e9),
        cache=CacheStats(n_clips=16, n_cached=0, n_encoded=16),
        timings=Timings(load_data_s=0.0, encode_s=0.0, evaluate_s=0.0, total_s=0.0),
        environment=Environment(python="3.11", platform="linux", numpy="2", device="cpu"),
        date=BUILT_AT,
    )


def score(metric: str, value: float, *, std: float | None = None, hi: float = 1) -> dict[str, Any]:
    return {
        "metric": metric,
        "description": metric,
        "value": value,
        "min": 0,
        "max": hi,
        "std": std,
    }


def mseb_line(
    task: str,
    sub_task: str,
    scores: list[dict[str, Any]],
    *,
    encoder: str = "acme_encoder",
    main: str = "WER",
    kind: str = "SpeechTranscription",
) -> dict[str, Any]:
    """One line as MSEB writes it (its field names; the efficiency scores last)."""
    return {
        "name": encoder,
        "sub_task_name": sub_task,
        "task_metadata": {
            "name": task,
            "description": "generated",
            "reference": None,
            "type": kind,
            "category": "speech",
            "main_score": main,
            "revision": "1.0.0",
            "dataset": {"path": "https://example.org/svq", "revision": "1.0.0", "name": "SVQ"},
            "scores": [],
            "eval_splits": ["test"],
            "eval_langs": ["en-US"],
            "domains": ["speech"],
            "task_subtypes": ["transcription"],
        },
        "scores": [
            *scores,
            score("mean_encoding_size_bytes", 8.0, hi=math.inf),
            score("flops", 0.0, hi=math.inf),
        ],
        "url": None,
        "base_model": None,
        "tags": [],
    }


def transcription_lines(
    task: str = "SVQEnUsSpeechTranscription", **kw: Any
) -> list[dict[str, Any]]:
    """The five lines of a transcription task: all utterances, then the four noise slices,
    with the counts MSEB's transcription evaluator writes."""
    lines = []
    for i, sub in enumerate(["", ":clean", ":media_noise", ":traffic_noise", ":background_speech"]):
        wer = 0.1 + 0.05 * i
        lines.append(
            mseb_line(
                task,
                f"speech_transcription{sub}",
                [
                    score("WER", wer, std=0.4, hi=math.inf),
                    score("SER", 0.2 + 0.01 * i, std=0.3, hi=math.inf),
                    score("NoResultRate", 0.0, std=0.0),
                    score("UtteranceCount", 10.0 + i, hi=math.inf),
                    score("WordCount", 50.0 + i, hi=math.inf),
                ],
                **kw,
            )
        )
    return lines


def write_lines(folder: Path, task: str, lines: list[dict[str, Any]] | list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{task}.jsonl"
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines),
        encoding="utf-8",
    )
    return path
