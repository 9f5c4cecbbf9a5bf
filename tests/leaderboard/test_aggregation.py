"""MTEB's leaderboard aggregations against hand-computed values and a brute-force Borda count."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from audiobench.leaderboard.aggregation import (
    borda_ranks,
    mean_over_task_types,
    means_per_task_type,
)

MTEB_FACTS = Path(__file__).parents[1] / "mteb" / "mteb_audio_tasks.json"

TABLE = {
    "a": {"t1": 0.9, "t2": 0.5, "c1": 0.7},
    "b": {"t1": 0.8, "t2": 0.5, "c1": None},
    "c": {"t1": 0.8, "t2": 0.1, "c1": 0.9},
}
TYPES = {"t1": "Retrieval", "t2": "Retrieval", "c1": "Classification"}


def test_means_per_task_type_by_hand() -> None:
    means = means_per_task_type(TABLE, TYPES)
    assert means["a"] == pytest.approx({"Retrieval": 0.7, "Classification": 0.7})
    assert means["b"]["Retrieval"] == pytest.approx(0.65) and means["b"]["Classification"] is None
    over = mean_over_task_types(TABLE, TYPES)
    assert over["a"] == pytest.approx(0.7)
    assert over["b"] is None  # a type mean is undefined
    assert over["c"] == pytest.approx((0.45 + 0.9) / 2)


def test_borda_by_hand() -> None:
    # t1: a 1, b and c tie at 2.5 -> points 2, .5, .5
    # t2: a and b tie at 1.5, c 3 -> points 1.5, 1.5, 0
    # c1: c 1, a 2 (b has none) -> points c 2, a 1
    # totals: a 4.5, b 2, c 2.5 -> ranks a 1, c 2, b 3
    assert borda_ranks(TABLE) == {"a": 1, "b": 3, "c": 2}
    # Tied totals share the best position.
    assert borda_ranks({"x": {"t": 1.0}, "y": {"t": 1.0}, "z": {"t": 0.0}}) == {
        "x": 1,
        "y": 1,
        "z": 3,
    }


def _borda_brute(table: dict[str, dict[str, float | None]]) -> dict[str, int]:
    models = list(table)
    tasks = sorted({t for s in table.values() for t in s})
    points = dict.fromkeys(models, 0.0)
    for task in tasks:
        scored = [m for m in models if table[m].get(task) is not None]
        for m in scored:
            v = table[m][task]
            better = sum(table[o][task] > v for o in scored)  # type: ignore[operator]
            tied = sum(table[o][task] == v for o in scored)
            points[m] += len(models) - (better + (tied + 1) / 2)
    return {m: 1 + sum(points[o] > points[m] for o in models) for m in models}


@pytest.mark.parametrize("seed", range(6))
def test_borda_against_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    models = [f"m{i}" for i in range(int(rng.integers(2, 8)))]
    tasks = [f"t{j}" for j in range(int(rng.integers(1, 6)))]
    table: dict[str, dict[str, float | None]] = {
        m: {t: None if rng.random() < 0.2 else float(np.round(rng.random(), 1)) for t in tasks}
        for m in models
    }
    assert borda_ranks(table) == _borda_brute(table)


def test_benchmark_rows_hold_the_aggregations() -> None:
    from types import SimpleNamespace

    from audiobench.benchmark import Benchmark, ScoreColumn

    bench = Benchmark(
        name="demo",
        description="demo",
        tasks=("t1", "t2", "c1"),
        columns=tuple(
            ScoreColumn(name=t, task=t, score="main", aggregate=None) for t in ("t1", "t2", "c1")
        ),
        rank_by=("t1",),
        task_types=TYPES,
    )
    results = [
        SimpleNamespace(
            task=SimpleNamespace(name=t),
            model=SimpleNamespace(name=m, revision=None),
            main_score=v,
        )
        for m, scores in TABLE.items()
        for t, v in scores.items()
        if v is not None
    ]
    rows = {r["model"]: r for r in bench.table(results)}  # type: ignore[arg-type]
    assert {m: r["borda_rank"] for m, r in rows.items()} == {"a": 1, "b": 3, "c": 2}
    assert rows["a"]["mean_task_type"] == pytest.approx(0.7)
    assert rows["b"]["mean_task_type"] is None
    with pytest.raises(ValueError, match="unknown column"):
        Benchmark(
            name="x",
            description="x",
            tasks=("t1",),
            columns=(ScoreColumn(name="t1", task="t1", score="main"),),
            rank_by=("t1",),
            task_types={"nope": "Retrieval"},
        )


def test_maeb_benchmarks_carry_mtebs_task_types() -> None:
    import json

    from audiobench.benchmark import get_benchmark

    # MTEB 2.26's facts, and MAEB(v1)'s for the six tasks 2.26 replaced by .v2 versions.
    mteb_types: dict[str, str] = {}
    for source in (Path("/work/shared/peers/maeb_v1_tasks.json"), MTEB_FACTS):
        facts = json.loads(source.read_text())
        rows = facts if isinstance(facts, list) else facts["tasks"]
        mteb_types.update({row["name"]: row["type"] for row in rows})
    for name in ("MAEB", "MAEB-audio-only"):
        bench = get_benchmark(name)
        assert set(bench.task_types) == set(bench.tasks)
        for task, kind in bench.task_types.items():
            assert kind == mteb_types[task], task
