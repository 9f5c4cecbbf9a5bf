"""MTEB's leaderboard aggregations over a (model × task) table of main scores.

- **Mean per task type**: for each model and task type, the mean of its scores on that type's
  tasks, undefined (None) when any of them is missing (MTEB's ``skipna=False``); the **mean
  over task types** is the mean of those means, None when any is None.
- **Borda rank**: on each task, the models that have a score are ranked by decreasing score,
  tied models sharing the mean of their positions (``average`` ranking), and each gets
  ``n_models − rank`` points, n_models counting every model of the table (a model without a
  score on the task gets no points there). The points are summed over the tasks and the
  models ranked by decreasing total, tied totals sharing the best position (``min``
  ranking): 1, 2, 2, 4, ...

Scores are compared exactly as given; a table is ``{model: {task: score or None}}``.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["borda_ranks", "mean_over_task_types", "means_per_task_type"]

Table = Mapping[str, Mapping[str, float | None]]


def _mean(values: list[float | None]) -> float | None:
    if not values or any(v is None for v in values):
        return None
    return sum(v for v in values if v is not None) / len(values)


def means_per_task_type(
    table: Table, task_types: Mapping[str, str]
) -> dict[str, dict[str, float | None]]:
    """Each model's mean score per task type (None where a task of the type is missing)."""
    by_type: dict[str, list[str]] = {}
    for task, kind in task_types.items():
        by_type.setdefault(kind, []).append(task)
    return {
        model: {kind: _mean([scores.get(t) for t in tasks]) for kind, tasks in by_type.items()}
        for model, scores in table.items()
    }


def mean_over_task_types(table: Table, task_types: Mapping[str, str]) -> dict[str, float | None]:
    """Each model's mean of its per-type means (None when one is undefined)."""
    return {
        model: _mean(list(means.values()))
        for model, means in means_per_task_type(table, task_types).items()
    }


def _average_ranks(values: Mapping[str, float]) -> dict[str, float]:
    """Rank 1 for the largest value; tied values share the mean of their positions."""
    ordered = sorted(values.items(), key=lambda item: -item[1])
    ranks: dict[str, float] = {}
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1][1] == ordered[i][1]:
            j += 1
        for model, _ in ordered[i : j + 1]:
            ranks[model] = (i + 1 + j + 1) / 2
        i = j + 1
    return ranks


def borda_ranks(table: Table, tasks: list[str] | None = None) -> dict[str, int]:
    """Each model's Borda rank over ``tasks`` (default: every task in the table)."""
    names = tasks if tasks is not None else sorted({t for s in table.values() for t in s})
    n_models = len(table)
    points = dict.fromkeys(table, 0.0)
    for task in names:
        scored = {m: v for m, s in table.items() if (v := s.get(task)) is not None}
        for model, rank in _average_ranks(scored).items():
            points[model] += n_models - rank
    return {
        model: 1 + sum(other > total for other in points.values())
        for model, total in points.items()
    }
