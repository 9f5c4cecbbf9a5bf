"""MSEB's result lines in and out: ``results export --format mseb`` and ``results import-mseb``.

Results of MSEB tasks are generated here (``tests/reported/mseb_files.py``), and so are lines in
MSEB's format; MSEB's own files are never read.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from audiobench.cli import app
from audiobench.leaderboard.validate import validate_file
from audiobench.reported.mseb_export import export_mseb, result_lines
from audiobench.reported.mseb_format import METRICS, mseb_task_names, task_type
from audiobench.reported.mseb_import import import_mseb
from audiobench.results import load_result
from tests.reported.mseb_files import (
    MODEL,
    mseb_line,
    mseb_task_result,
    reasoning_report,
    score,
    transcription_lines,
    transcription_report,
    write_lines,
)

runner = CliRunner()

TRANSCRIPTION = "SVQEnUsSpeechTranscription"
REASONING = "SVQEnUsSpanInLangReasoning"


def _generated(folder: Path) -> dict[str, object]:
    results = {
        TRANSCRIPTION: mseb_task_result(TRANSCRIPTION, {"en_us": transcription_report(0.2)}),
        REASONING: mseb_task_result(REASONING, {"default": reasoning_report(0.5, 0.9)}),
    }
    for result in results.values():
        result.save(folder)
    return results


def test_export_writes_one_line_per_sub_task_with_msebs_fields(tmp_path: Path) -> None:
    _generated(tmp_path / "mine")
    outcome = export_mseb(tmp_path / "mine", tmp_path / "mseb")
    assert outcome.ok and outcome.lines == 4  # 1 + 2 noise slices, and 1 reasoning line
    path = tmp_path / "mseb" / "acme__speech-encoder" / f"{TRANSCRIPTION}.jsonl"
    assert sorted(outcome.written) == sorted(
        [path, tmp_path / "mseb" / "acme__speech-encoder" / f"{REASONING}.jsonl"]
    )
    text = path.read_text()
    assert "Infinity" in text  # WER's unbounded max, written as MSEB writes it
    lines = [json.loads(line) for line in text.splitlines()]
    assert [line["sub_task_name"] for line in lines] == [
        "speech_transcription",
        "speech_transcription:clean",
        "speech_transcription:traffic_noise",
    ]
    first = lines[0]
    assert set(first) == {
        "name",
        "sub_task_name",
        "task_metadata",
        "scores",
        "url",
        "base_model",
        "tags",
        "task_specific_data",
    }
    assert first["name"] == MODEL
    meta = first["task_metadata"]
    assert (meta["name"], meta["type"], meta["main_score"], meta["task_subtypes"]) == (
        TRANSCRIPTION,
        "SpeechTranscription",
        "WER",
        ["transcription"],
    )
    assert meta["eval_langs"] == ["en-US"] and meta["dataset"]["revision"] == "main"
    scores = {s["metric"]: s for s in first["scores"]}
    assert list(scores) == [
        "WER",
        "SER",
        "NoResultRate",
        "UtteranceCount",
        "WordCount",
        "mean_encoding_size_bytes",
        "flops",
    ]
    assert scores["WER"] == {
        "metric": "WER",
        "description": "Word Error Rate",
        "value": 0.2,
        "min": 0,
        "max": math.inf,
        "std": 0.1,
    }
    assert scores["NoResultRate"]["std"] is None  # audiobench keeps none: never invented
    assert (scores["mean_encoding_size_bytes"]["value"], scores["flops"]["value"]) == (8.0, 1.5e9)
    # audiobench's own metric, which MSEB has none for, rides where MSEB's reader ignores it.
    assert first["task_specific_data"] == {"audiobench": {"character_error_rate": 0.2 / 3}}
    assert lines[1]["scores"][0]["value"] == 0.1  # the clean slice's WER
    reasoning = json.loads(path.with_name(f"{REASONING}.jsonl").read_text())
    assert reasoning["task_metadata"]["eval_langs"] == ["en-US"]  # from the name: no subsets


def test_round_trip_export_then_import_gives_the_same_scores(tmp_path: Path) -> None:
    results = _generated(tmp_path / "mine")
    export_mseb(tmp_path / "mine", tmp_path / "mseb")
    summary = import_mseb(tmp_path / "mseb", tmp_path / "back", repository="acme/mseb")
    assert summary.refused == [] and summary.converted == 2 and summary.converted_lines == 4
    assert summary.line() == (
        "converted 2 of 2 file(s) (4 of 4 line(s)) into 2 result(s); refused none"
    )
    for path in summary.written:
        back = load_result(path)
        mine = results[back.task.name]
        assert back.scores == mine.scores  # type: ignore[attr-defined]
        assert back.aggregates == mine.aggregates  # type: ignore[attr-defined]
        assert back.main_score == mine.main_score  # type: ignore[attr-defined]
        assert back.efficiency.mean_encoding_size_bytes == 8.0
        assert back.efficiency.flops_per_example == 1.5e9
        reported = back.reported
        assert reported is not None and reported.origin == "mseb"
        assert (reported.repository, reported.model, reported.audiobench_model) == (
            "acme/mseb",
            MODEL,
            f"hf:{MODEL}",
        )
        assert reported.file == f"acme__speech-encoder/{back.task.name}.jsonl"
        assert reported.dropped_keys == [] and back.model.name == MODEL
        # A private table takes it (SVQ is versioned by label: unpinned), a public one not.
        assert validate_file(path, allow_unpinned=True)[1] == []
        assert validate_file(path)[1] != []


def test_msebs_own_lines_import_the_keys_they_hold(tmp_path: Path) -> None:
    """Lines written as MSEB writes them (no audiobench data): the metrics MSEB publishes fill
    the report, audiobench's own are left out, never invented."""
    lines = transcription_lines()
    write_lines(tmp_path / "mseb" / "acme_encoder", TRANSCRIPTION, lines)
    older = [
        {**line, "scores": [s for s in line["scores"] if not s["metric"].endswith("Count")]}
        for line in lines
    ]
    write_lines(tmp_path / "mseb" / "older_encoder", TRANSCRIPTION, older)
    summary = import_mseb(tmp_path / "mseb", tmp_path / "out")
    assert summary.refused == [] and len(summary.written) == 2
    by_model = {load_result(p).model.name: load_result(p) for p in summary.written}
    result = by_model["acme_encoder"]
    report = result.scores["en_us"]
    assert report == {
        "wer": 0.1,
        "wer_std": 0.4,
        "ser": 0.2,
        "ser_std": 0.3,
        "no_result_rate": 0.0,
        "utterance_count": 10,
        "word_count": 50,
        "environments": {
            env: {
                "wer": 0.1 + 0.05 * i,
                "wer_std": 0.4,
                "ser": 0.2 + 0.01 * i,
                "ser_std": 0.3,
                "no_result_rate": 0.0,
                "utterance_count": 10 + i,
                "word_count": 50 + i,
            }
            for i, env in enumerate(
                ["clean", "media_noise", "traffic_noise", "background_speech"], start=1
            )
        },
    }
    assert result.main_score == 0.1 and result.main_score_name == "wer"
    reported = result.reported
    assert reported is not None
    assert (reported.dataset_revision, reported.revision_matches) == ("1.0.0", False)
    assert reported.audiobench_model is None  # MSEB's encoder name is no hub id
    assert reported.dropped_keys == ["no_result_rate_std"]  # a std audiobench keeps no place for
    assert result.efficiency.flops_per_example is None  # MSEB's 0.0: not counted
    assert "utterance_count" not in by_model["older_encoder"].scores["en_us"]


def test_a_report_field_msebs_lines_do_not_hold_is_a_named_refusal(tmp_path: Path) -> None:
    line = mseb_line(
        REASONING,
        "span_reasoning_in_lang",
        [score("GmeanF1", 0.5), score("F1", 0.6, std=0.2)],
        main="GmeanF1",
        kind="SpanInLangReasoning",
    )
    write_lines(tmp_path / "mseb" / "acme_encoder", REASONING, [line])
    ((refusal),) = import_mseb(tmp_path / "mseb", tmp_path / "out").refused
    assert refusal.reason == "missing metric"
    assert refusal.message.startswith(f"{REASONING}'s report needs InvalidResultRate, ")
    assert "answerable_F1" in refusal.message and "GmeanF1" not in refusal.message


def _refusals(tmp_path: Path) -> dict[str, tuple[str, str]]:
    root = tmp_path / "mseb" / "acme_encoder"
    good = transcription_lines()
    write_lines(root, "UnknownSpeechTask", [mseb_line("UnknownSpeechTask", "x", [])])
    write_lines(root, "NotJson", [json.dumps(good[0]), "{not json"])
    no_scores = {k: v for k, v in good[0].items() if k != "scores"}
    write_lines(root, "NoScores", [no_scores])
    bad_std = mseb_line(TRANSCRIPTION, "speech_transcription", [score("WER", 0.1, std=-1.0)])
    write_lines(root, "BadStd", [bad_std])
    write_lines(root, "ESC50", [mseb_line("ESC50", "classification", [score("Accuracy", 0.5)])])
    no_base = [line for line in good if ":" in line["sub_task_name"]]
    write_lines(root, "NoBase", no_base)
    summary = import_mseb(tmp_path / "mseb", tmp_path / "out")
    return {r.file.stem: (r.reason, r.message) for r in summary.refused}


def test_bad_files_are_refused_by_name_reason_and_line(tmp_path: Path) -> None:
    refused = _refusals(tmp_path)
    assert refused["UnknownSpeechTask"] == (
        "unknown task",
        "audiobench declares no MSEB task 'UnknownSpeechTask'",
    )
    assert refused["NotJson"][0] == "malformed line"
    assert refused["NotJson"][1].startswith("line 2: not JSON")
    assert refused["NoScores"] == ("malformed line", "line 1: no 'scores' of MSEB's line")
    assert refused["BadStd"] == ("malformed line", "line 1: score 'WER' has a bad 'std' -1.0")
    assert refused["ESC50"][0] == "not scored the MSEB way"
    assert refused["NoBase"] == (
        "missing metric",
        "no line of the task's own sub-task 'speech_transcription'",
    )
    assert len(refused) == 6


def test_cli_import_prints_refusals_and_the_summary(tmp_path: Path) -> None:
    _refusals(tmp_path)
    result = runner.invoke(
        app, ["results", "import-mseb", str(tmp_path / "mseb"), "-o", str(tmp_path / "o")]
    )
    assert result.exit_code == 1  # nothing converted
    assert "acme_encoder/NotJson.jsonl: refused (malformed line): line 2: not JSON" in result.output
    assert "1 file(s) of 1 task(s) audiobench does not declare (UnknownSpeechTask)" in result.output
    assert "converted 0 of 6 file(s)" in result.output


def test_cli_export_format_mseb_then_import(tmp_path: Path) -> None:
    _generated(tmp_path / "mine")
    out = runner.invoke(
        app,
        [
            "results",
            "export",
            str(tmp_path / "mine"),
            "--format",
            "mseb",
            "--to",
            str(tmp_path / "m"),
        ],
    )
    assert out.exit_code == 0, out.output
    assert "2 MSEB file(s) written (4 line(s))" in out.output
    again = runner.invoke(
        app,
        [
            "results",
            "export",
            str(tmp_path / "mine"),
            "--format",
            "mseb",
            "--to",
            str(tmp_path / "m"),
        ],
    )
    assert again.exit_code == 0 and "2 unchanged" in again.output
    back = runner.invoke(
        app, ["results", "import-mseb", str(tmp_path / "m"), "-o", str(tmp_path / "b")]
    )
    assert back.exit_code == 0, back.output
    assert "into 2 result(s); refused none" in back.output
    wrong = runner.invoke(app, ["results", "export", str(tmp_path / "mine"), "--format", "csv"])
    assert wrong.exit_code == 2 and "--format must be 'audiobench' or 'mseb'" in wrong.output


def test_a_result_of_another_protocol_or_task_has_no_mseb_lines() -> None:
    from audiobench.reported.mseb_export import NotExportable

    result = mseb_task_result(TRANSCRIPTION, {"en_us": transcription_report(0.2)})
    assert result.run is not None
    options = {**result.run.task_options, "protocol": "audiobench"}
    other = result.model_copy(
        update={"run": result.run.model_copy(update={"task_options": options})}
    )
    with pytest.raises(NotExportable, match="only results scored the MSEB way"):
        result_lines(other)
    mock = mseb_task_result("MockTranscription", {"en_us": transcription_report(0.2)})
    with pytest.raises(NotExportable, match="MockTranscription is no MSEB task"):
        result_lines(mock)


def test_existing_mseb_file_with_other_lines_is_kept_unless_overwrite(tmp_path: Path) -> None:
    _generated(tmp_path / "mine")
    target = tmp_path / "mseb" / "acme__speech-encoder" / f"{TRANSCRIPTION}.jsonl"
    target.parent.mkdir(parents=True)
    target.write_text("{}\n")
    outcome = export_mseb(tmp_path / "mine", tmp_path / "mseb")
    assert [p for p, _ in outcome.refused] == [target] and target.read_text() == "{}\n"
    assert export_mseb(tmp_path / "mine", tmp_path / "mseb", overwrite=True).ok


@pytest.mark.parametrize(
    ("name", "kind", "sub_task"),
    [
        ("SVQEnUsSpeechTranscription", "SpeechTranscription", "speech_transcription"),
        ("SVQArEgSalientTermSegmentation", "SalientTermSegmentation", "salient_term"),
        ("SVQJaJpSpanCrossLangReasoning", "SpanCrossLangReasoning", "span_reasoning_cross_lang"),
        (
            "SVQEnUsDocumentInLangRetrievalSmallIndex",
            "DocumentInLangRetrieval",
            "document_retrieval_in_lang",
        ),
        (
            "SVQEnUsPassageCrossLangRetrieval",
            "PassageCrossLangRetrieval",
            "passage_retrieval_cross_lang",
        ),
        ("SVQFiFiQueryReranking", "QueryReranking", "query_reranking"),
        ("SpeechMassiveDeDeIntentClassification", "IntentClassification", "intent_classification"),
        ("BirdsetHSNClassification", "Classification", "ebird_classification"),
        ("FSD50KTestClassification", "Classification", "classification"),
        ("FSD50KTestClustering", "Clustering", "sound_event"),
        ("SVQEnUsContinuousStability", "Stability", "stability"),
    ],
)
def test_msebs_task_types_and_sub_tasks_from_the_name(name: str, kind: str, sub_task: str) -> None:
    found = task_type(name)
    assert found is not None and (found.type, found.sub_task) == (kind, sub_task)


def test_every_family_table_maps_distinct_names_and_keys() -> None:
    for family, metrics in METRICS.items():
        assert len({m.name for m in metrics}) == len(metrics), family
        assert len({m.key for m in metrics}) == len(metrics), family
        assert all(m.min <= m.max for m in metrics), family


def test_mseb_task_names_are_the_task_itself_or_declared_per_subset() -> None:
    from audiobench import registry

    assert mseb_task_names(registry.tasks.get(TRANSCRIPTION)) == {"en_us": TRANSCRIPTION}
    mock = registry.tasks.get("MockTranscription")  # two subsets, no MSEB names: none
    assert mseb_task_names(mock) == {}
    named = type(
        "Locales",
        (mock,),
        {
            "mseb_task_names": {
                "en_us": "SVQEnUsSpeechTranscription",
                "sw": "SVQSwSpeechTranscription",
            }
        },
    )
    assert mseb_task_names(named)["sw"] == "SVQSwSpeechTranscription"
    assert mseb_task_names(registry.tasks.get("MockClustering")) == {}  # not scored the MSEB way


def test_lines_of_one_result_name_each_sub_task_once() -> None:
    result = mseb_task_result(TRANSCRIPTION, {"en_us": transcription_report(0.3)})
    (lines,) = result_lines(result).values()
    assert len({line["sub_task_name"] for line in lines}) == len(lines) == 3
