"""MSEB's leaderboard rule, against hand-computed values: super-task means, 100 − WER,
the average over seven super tasks with a missing one as 0, and each tab's task average."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from audiobench.benchmark import MEAN, list_benchmarks
from audiobench.cli import app
from audiobench.leaderboard.collate import collate
from audiobench.mseb_benchmark import (
    AVERAGED,
    as_accuracy,
    overall_average,
    super_task_score,
    tab_average,
)
from audiobench.tasks.mseb_benchmarks import MSEB, MSEB_SUPER_TASKS, mseb_tasks_of
from tests.test_benchmark import result


def test_super_task_score_is_the_mean_of_the_records_a_model_has() -> None:
    assert super_task_score([0.2, None, 0.5]) == pytest.approx(0.35)
    assert super_task_score([None, None]) is None
    assert super_task_score([]) is None


def test_transcription_enters_as_one_minus_wer() -> None:
    assert as_accuracy(0.25) == pytest.approx(0.75)  # shown ×100: 100 − 25 %
    assert as_accuracy(1.5) == pytest.approx(-0.5)  # WER above 1 is below 0, not clipped
    assert as_accuracy(None) is None


def test_the_average_counts_a_missing_super_task_as_zero() -> None:
    scores = {name: 0.7 for name in AVERAGED}
    assert overall_average(scores) == pytest.approx(0.7)
    del scores["segmentation"]
    assert overall_average(scores) == pytest.approx(0.6)  # 6 × 0.7 / 7
    assert overall_average({"retrieval": 0.7, "stability": 0.9}) == pytest.approx(0.1)


def test_the_tab_average_counts_missing_as_zero_only_where_higher_is_better() -> None:
    assert tab_average([0.6, None, 0.3], higher_is_better=True) == pytest.approx(0.3)
    assert tab_average([0.6, None, 0.3], higher_is_better=False) is None
    assert tab_average([0.1, 0.3], higher_is_better=False) == pytest.approx(0.2)
    assert tab_average([], higher_is_better=True) is None


def test_list_benchmarks_has_msebs_and_one_per_super_task() -> None:
    benches = list_benchmarks()
    assert "MSEB" in benches
    for name in (*AVERAGED, "stability"):
        assert f"MSEB {name.capitalize()}" in benches
    assert len(benches["MSEB Transcription"].tasks) == 26
    assert len(benches["MSEB Retrieval"].tasks) == 72  # full-index documents unsupported
    assert set(MSEB.tasks) == {t for name in AVERAGED for t in MSEB_SUPER_TASKS[name].tasks}
    out = CliRunner().invoke(app, ["list", "benchmarks"], terminal_width=300).stdout
    assert "MSEB Segmentation" in out


def test_the_overall_table_aggregates_as_msebs_leaderboard() -> None:
    fi, ja = "SVQFiFiSpeechTranscription", "SVQJaJpSpeechTranscription"
    rows = MSEB.table(
        [
            result("m1", "SVQFiFiPassageCrossLangRetrieval", 0.4),
            result("m1", "SVQJaJpPassageCrossLangRetrieval", 0.6),  # retrieval 0.5
            result("m1", "SVQFiFiClustering", 0.3),  # clustering 0.3
            result("m1", fi, 0.2),
            result("m1", ja, 0.4),  # WER 0.3 -> 0.7
            result("m2", "SVQFiFiQueryReranking", 0.9),  # reranking 0.9, the rest missing
            result("m2", "SVQFiFiContinuousStability", 0.1),  # stability: not counted
        ]
    )
    by_model = {r["model"]: r for r in rows}
    m1 = by_model["m1"]
    assert m1["retrieval"] == pytest.approx(0.5) and m1["clustering"] == pytest.approx(0.3)
    assert m1["transcription"] == pytest.approx(0.7)
    assert m1["reranking"] is None
    assert m1[MEAN] == pytest.approx((0.5 + 0.3 + 0.7) / 7)
    assert by_model["m2"][MEAN] == pytest.approx(0.9 / 7)
    assert [r["model"] for r in rows] == ["m1", "m2"]  # 0.2143 > 0.1286


def test_a_super_task_tab_shows_each_task_and_the_task_average() -> None:
    tab = MSEB_SUPER_TASKS["retrieval"]
    rows = tab.table(
        [
            result("m1", "SVQFiFiPassageCrossLangRetrieval", 0.4),
            result("m1", "SVQJaJpPassageCrossLangRetrieval", 0.6),
            result("m2", "SVQFiFiPassageCrossLangRetrieval", 0.8),
        ]
    )
    by_model = {r["model"]: r for r in rows}
    assert by_model["m1"][MEAN] == pytest.approx(0.5)
    assert by_model["m2"][MEAN] == pytest.approx(0.4)  # the missing ja_jp counts 0
    wer = MSEB_SUPER_TASKS["transcription"]
    rows = wer.table(
        [
            result("m1", "SVQFiFiSpeechTranscription", 0.2),
            result("m1", "SVQJaJpSpeechTranscription", 0.4),
            result("m2", "SVQFiFiSpeechTranscription", 0.1),
        ]
    )
    assert [(r["model"], r[MEAN]) for r in rows] == [("m1", pytest.approx(0.3)), ("m2", None)]


def test_the_leaderboard_shows_msebs_table_as_a_tab_of_its_own() -> None:
    board = collate(
        [
            result("m1", "SVQFiFiPassageCrossLangRetrieval", 0.4),
            result("m1", "SVQFiFiClustering", 0.3),
        ],
        benchmarks={"MSEB": MSEB, "MSEB Retrieval": MSEB_SUPER_TASKS["retrieval"]},
    )
    titles = [t.title for t in board.tables]
    assert "MSEB" in titles and "MSEB Retrieval" in titles
    (overall,) = [t for t in board.tables if t.title == "MSEB"]
    assert overall.rows[0].values[0] == pytest.approx((0.4 + 0.3) / 7)


def test_every_declared_super_task_has_tasks() -> None:
    for name in (*AVERAGED, "stability"):
        assert mseb_tasks_of(name), name
