"""MSEB's leaderboard rule: how its per-task scores become a super-task score and an average.

MSEB's leaderboard (its Gradio space, ``src/data/aggregator.py``) aggregates as follows, and
so do the benchmarks here (:class:`MsebBenchmark`):

- A task's record is its main score over all utterances (MSEB's colon-free sub-task; the
  noise slices are shown beside it, not averaged in). SVQ clustering's record is the mean
  V-measure of its three targets (speaker gender, age, id): audiobench's
  ``targets_mean_v_measure``, the main score of those tasks.
- A super task's score (one column of the overall table) is the unweighted mean of the
  records of the tasks a model has (:func:`super_task_score`).
- The overall average is the unweighted mean over the seven aggregated super tasks
  (:data:`AVERAGED`: classification, clustering, reasoning, reranking, retrieval,
  segmentation, transcription), transcription taken as 100 − WER % (:func:`as_accuracy`),
  and **a missing super task counted as 0** (:func:`overall_average`). Stability is not
  among them.
- A super task's own tab has one column per task and a "Task Average" over the tasks shown
  (those some model has), a missing task counted as 0 (:func:`tab_average`). Here, where
  lower is better (WER, stability distances), a missing task leaves the average empty
  instead: counting it as 0 would reward the gap.

Scores are kept as fractions and shown ×100, as MSEB shows a score in [0, 1].
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import Field

from audiobench.benchmark import MEAN, Benchmark
from audiobench.results import TaskResult

__all__ = [
    "AVERAGED",
    "MsebBenchmark",
    "as_accuracy",
    "overall_average",
    "super_task_score",
    "tab_average",
]

#: The super tasks MSEB's overall average is taken over, in its order.
AVERAGED = (
    "classification",
    "clustering",
    "reasoning",
    "reranking",
    "retrieval",
    "segmentation",
    "transcription",
)


def super_task_score(records: Iterable[float | None]) -> float | None:
    """The unweighted mean of a model's task records in one super task (None: it has none)."""
    present = [r for r in records if r is not None]
    return sum(present) / len(present) if present else None


def as_accuracy(wer: float | None) -> float | None:
    """Transcription in the average: 1 − WER as a fraction, shown ×100 as 100 − WER %."""
    return None if wer is None else 1.0 - wer


def overall_average(scores: Mapping[str, float | None]) -> float:
    """MSEB's average over :data:`AVERAGED`, a missing super task counted as 0; ``scores``
    holds transcription already as :func:`as_accuracy`."""
    return sum(scores.get(name) or 0.0 for name in AVERAGED) / len(AVERAGED)


def tab_average(values: Sequence[float | None], *, higher_is_better: bool) -> float | None:
    """A tab's "Task Average" over its shown tasks: a missing one counts 0 where higher is
    better; where lower is better a missing one leaves it None (0 would reward the gap)."""
    if not values:
        return None
    if not higher_is_better and None in values:
        return None
    return sum(v or 0.0 for v in values) / len(values)


class MsebBenchmark(Benchmark):
    """A benchmark aggregated by MSEB's rule instead of the plain mean of its columns.

    ``overall``: one column per super task, named for it, ``groups`` naming each super task's
    tasks, and MSEB's average as the mean (the ``transcription`` column is 1 − WER).
    ``super_task``: one column per task, and the tab's "Task Average" as the mean.
    """

    kind: Literal["overall", "super_task"]
    groups: dict[str, tuple[str, ...]] = Field(
        default={}, description="Overall: super task (a column's name) -> its tasks."
    )

    def table(self, results: Iterable[TaskResult]) -> list[dict[str, Any]]:
        records: dict[tuple[str, str | None], dict[str, float | None]] = {}
        for result in results:
            if result.task.name in self.tasks:
                key = (result.model.name, result.model.revision)
                records.setdefault(key, {})[result.task.name] = result.main_score
        rows = []
        for (model, revision), scores in records.items():
            row: dict[str, Any] = {"model": model, "revision": revision}
            for column in self.columns:
                if self.kind == "overall":
                    value = super_task_score(scores.get(t) for t in self.groups[column.name])
                    if column.name == "transcription":
                        value = as_accuracy(value)
                    row[column.name] = value
                else:
                    row[column.name] = scores.get(column.task)
            rows.append(row)
        if self.kind == "overall":
            for row in rows:
                row[MEAN] = overall_average({c.name: row[c.name] for c in self.columns})
        else:
            shown = [c.name for c in self.columns if any(r[c.name] is not None for r in rows)]
            for row in rows:
                row[MEAN] = tab_average(
                    [row[name] for name in shown], higher_is_better=self.mean_higher_is_better
                )
        return self.ranked(rows)
