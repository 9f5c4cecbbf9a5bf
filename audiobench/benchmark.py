"""Benchmarks: named collections of tasks with a rule that turns results into a table.

A benchmark declares its columns (which task, which aggregate, which score,
which direction is better) and what it is ranked by. Built-in and plugin
benchmarks register under the entry-point group ``audiobench.benchmarks``,
each entry pointing at a :class:`Benchmark` instance.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from importlib import metadata
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from audiobench.results import TaskResult

__all__ = [
    "BORDA_RANK",
    "MEAN",
    "MEAN_TASK_TYPE",
    "Benchmark",
    "ScoreColumn",
    "get_benchmark",
    "list_benchmarks",
]

GROUP = "audiobench.benchmarks"
#: Name of the aggregate column of a benchmark with ``mean_of``.
MEAN = "mean"
#: The row keys of MTEB's leaderboard aggregations (benchmarks that name task types).
MEAN_TASK_TYPE = "mean_task_type"
BORDA_RANK = "borda_rank"


class ScoreColumn(BaseModel):
    """One column of a benchmark table."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    task: str
    score: str = Field(
        description="A score in the family's main-score grammar: '<config>:<metric>' for "
        "zero-shot similarity, '<probe>:<metric>' for classification, else a metric name."
    )
    aggregate: str | None = Field(
        default="public", description="Aggregate group ('public', 'blind'); None: main score."
    )
    higher_is_better: bool = True
    percent: bool = Field(default=True, description="Shown ×100 in tables.")


class Benchmark(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str
    tasks: tuple[str, ...]
    columns: tuple[ScoreColumn, ...]
    rank_by: tuple[str, ...] = Field(
        description="Column names, in order: the first available one ranks a model."
    )
    on_leaderboard: bool = Field(
        default=True,
        description="Shown on the public leaderboard (False for demos on generated data).",
    )
    mean_of: tuple[str, ...] = Field(
        default=(),
        description="Columns whose mean is the benchmark's 'mean' column (the aggregation "
        "rule); a model missing any of them gets no mean, so gaps are never rewarded.",
    )
    task_types: dict[str, str] = Field(
        default_factory=dict,
        description="MTEB's aggregations: each column's task type (e.g. 'Any2AnyRetrieval'); "
        "when given, rows also hold 'mean_task_type' (the mean of the per-type means) and "
        "'borda_rank' over these columns (audiobench.leaderboard.aggregation).",
    )

    @model_validator(mode="after")
    def _check_names(self) -> Benchmark:
        names = [c.name for c in self.columns]
        if len(set(names)) != len(names):
            raise ValueError(f"benchmark {self.name}: duplicate column names {names}")
        known = {*names, MEAN} if self.mean_of else set(names)
        unknown = [n for n in (*self.rank_by, *self.mean_of, *self.task_types) if n not in known]
        if unknown:
            raise ValueError(f"benchmark {self.name}: unknown column(s) {unknown}")
        directions = {c.higher_is_better for c in self.columns if c.name in self.mean_of}
        if len(directions) > 1:
            raise ValueError(
                f"benchmark {self.name}: mean_of mixes higher- and lower-is-better columns"
            )
        if len({c.percent for c in self.columns if c.name in self.mean_of}) > 1:
            raise ValueError(
                f"benchmark {self.name}: mean_of mixes percent and raw columns (one scale per mean)"
            )
        return self

    @property
    def mean_higher_is_better(self) -> bool:
        return all(c.higher_is_better for c in self.columns if c.name in self.mean_of)

    def value(self, column: ScoreColumn, result: TaskResult) -> float | None:
        """The column's number in ``result`` (None where the result does not have it)."""
        if column.aggregate is None:
            return result.main_score
        from audiobench.families import family_task

        # Result files are validated: scores are finite or null.
        family = family_task(result.task.family)
        return family.summary_score(result.aggregates.get(column.aggregate), column.score)

    def table(self, results: Iterable[TaskResult]) -> list[dict[str, Any]]:
        """One row per (model, revision), ranked; missing scores stay None, never 0.

        Rows hold ``model``, ``revision``, one entry per column and, with
        ``mean_of``, the ``"mean"`` entry.
        """
        rows: dict[tuple[str, str | None], dict[str, Any]] = {}
        for result in results:
            if result.task.name not in self.tasks:
                continue
            key = (result.model.name, result.model.revision)
            row = rows.setdefault(
                key, {"model": key[0], "revision": key[1], **{c.name: None for c in self.columns}}
            )
            for column in self.columns:
                if column.task == result.task.name:
                    row[column.name] = self.value(column, result)
        if self.mean_of:
            for row in rows.values():
                values = [row[name] for name in self.mean_of]
                row[MEAN] = None if None in values else sum(values) / len(values)
        if self.task_types:
            from audiobench.leaderboard.aggregation import borda_ranks, mean_over_task_types

            named = {f"{r['model']}@{r['revision']}": r for r in rows.values()}
            scores = {k: {c: r[c] for c in self.task_types} for k, r in named.items()}
            means = mean_over_task_types(scores, self.task_types)
            ranks = borda_ranks(scores, list(self.task_types))
            for name, row in named.items():
                row[MEAN_TASK_TYPE], row[BORDA_RANK] = means[name], ranks[name]
        return self.ranked(list(rows.values()))

    def ranked(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``rows`` in rank order: by the first ``rank_by`` column a row has, best first."""
        higher = {c.name: c.higher_is_better for c in self.columns}
        higher[MEAN] = self.mean_higher_is_better

        def rank_key(row: dict[str, Any]) -> tuple[Any, ...]:
            for name in self.rank_by:
                value = row.get(name)
                if value is not None:
                    sign = -1.0 if higher[name] else 1.0
                    return (self.rank_by.index(name), sign * value, row["model"])
            return (len(self.rank_by), 0.0, row["model"])

        return sorted(rows, key=rank_key)


def list_benchmarks() -> dict[str, Benchmark]:
    """Every registered benchmark; a broken entry warns and is left out."""
    found: dict[str, Benchmark] = {}
    for ep in metadata.entry_points(group=GROUP):
        try:
            bench = ep.load()
        except Exception as exc:
            dist = ep.dist.name if ep.dist else "?"
            warnings.warn(
                f"benchmark {ep.name!r} from {dist!r} failed to load: {exc}", stacklevel=2
            )
            continue
        if isinstance(bench, Benchmark):
            found.setdefault(bench.name, bench)
    return found


def get_benchmark(name: str) -> Benchmark:
    benches = list_benchmarks()
    if name not in benches:
        raise LookupError(f"unknown benchmark {name!r}; known: {', '.join(sorted(benches))}")
    return benches[name]
