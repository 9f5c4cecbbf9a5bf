"""Benchmark tables: columns, the mean aggregation rule, ranking, missing scores."""

from __future__ import annotations

import pytest

from audiobench.benchmark import MEAN, Benchmark, ScoreColumn
from audiobench.results import TaskResult


def result(model: str, task: str, main: float | None) -> TaskResult:
    return TaskResult.model_validate(
        {
            "task": {"name": task, "family": "classification", "revision": "r", "dataset": "d"},
            "model": {
                "name": model,
                "revision": "v1",
                "pooling": "none",
                "fingerprint": "f",
                "sample_rate": 16000,
            },
            "audiobench_version": "0",
            "main_score": main,
            "main_score_name": "accuracy",
            "scores": {},
            "cache": {"n_clips": 1, "n_cached": 0, "n_encoded": 1},
            "timings": {"load_data_s": 0, "encode_s": 0, "evaluate_s": 0, "total_s": 0},
            "environment": {"python": "3", "platform": "p", "numpy": "2", "device": "cpu"},
            "date": "2026-11-21T00:00:00Z",
        }
    )


BENCH = Benchmark(
    name="Two",
    description="two tasks",
    tasks=("A", "B"),
    columns=(
        ScoreColumn(name="A", task="A", score="accuracy", aggregate=None),
        ScoreColumn(name="B", task="B", score="accuracy", aggregate=None),
    ),
    mean_of=("A", "B"),
    rank_by=(MEAN, "A"),
)


def test_mean_column_ranks_and_never_rewards_missing_tasks() -> None:
    rows = BENCH.table(
        [
            result("m1", "A", 0.9),
            result("m1", "B", 0.5),  # mean 0.7
            result("m2", "A", 0.8),
            result("m2", "B", 0.8),  # mean 0.8
            result("m3", "A", 0.99),  # no B: no mean, ranked after every model with one
        ]
    )
    assert [r["model"] for r in rows] == ["m2", "m1", "m3"]
    assert rows[0][MEAN] == pytest.approx(0.8) and rows[1][MEAN] == pytest.approx(0.7)
    assert rows[2][MEAN] is None and rows[2]["B"] is None


def test_definition_errors() -> None:
    with pytest.raises(ValueError, match=r"unknown column\(s\) \['C'\]"):
        Benchmark(name="x", description="", tasks=("A",), columns=BENCH.columns, rank_by=("C",))
    mixed = (
        BENCH.columns[0],
        ScoreColumn(name="F", task="B", score="fad", aggregate=None, higher_is_better=False),
    )
    with pytest.raises(ValueError, match="mixes higher- and lower-is-better"):
        Benchmark(
            name="x",
            description="",
            tasks=("A", "B"),
            columns=mixed,
            mean_of=("A", "F"),
            rank_by=("A",),
        )


def test_every_registered_benchmark_names_registered_tasks_and_valid_scores() -> None:
    from audiobench import registry
    from audiobench.benchmark import list_benchmarks

    benches = list_benchmarks()
    assert {"VocSim", "Offline", "Classification", "AudioRetrieval"} <= set(benches)
    for bench in benches.values():
        for column in bench.columns:
            assert column.task in bench.tasks, (bench.name, column.name)
            cls = registry.tasks.get(column.task)
            if column.aggregate is None:  # the main score: its direction must agree
                assert column.higher_is_better == cls.metadata.higher_is_better, column.name


def test_offline_benchmark_runs_only_offline_audio_tasks() -> None:
    from audiobench import registry
    from audiobench.benchmark import get_benchmark

    offline = get_benchmark("Offline")
    assert not offline.on_leaderboard  # generated data: runnable, never ranked publicly
    for task in offline.tasks:
        cls = registry.tasks.get(task)
        assert cls.metadata.offline, task
        assert "text" not in (
            getattr(cls, "query_modality", "audio"),
            getattr(cls, "document_modality", "audio"),
            getattr(cls, "candidate_modality", "audio"),
        ), task
