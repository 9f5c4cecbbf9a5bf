"""What a main score is measured against: permutation baseline and lift, chance and spread.

A raw number misleads on its own. Zero-shot similarity scores (GSR, P@k) come with the
score a label permutation gives (the baseline differs by model and data: 0.15 for one
encoder, 0.23 for another on the same clips), so the lift over it is what an encoder
learnt; a classification accuracy reads against chance (1 / number of classes) and its
spread across folds. :func:`score_context` reads these from a result's own scores;
``results table``, the leaderboard page and its CSV show them beside the main score.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from audiobench.reports import parse_score_path
from audiobench.results import TaskResult
from audiobench.task import TaskFamily

__all__ = ["METRICS_PAGE", "ScoreContext", "main_score_line", "score_context"]

#: The page that defines every metric and reference point shown beside a score.
METRICS_PAGE = "docs/METRICS.md"

#: Classification metrics whose chance level is 1 / number of classes (a uniform guess).
_CHANCE_METRICS = frozenset({"accuracy", "balanced_accuracy"})


@dataclass(frozen=True)
class ScoreContext:
    """The main score's reference points; None where the result does not give one."""

    baseline: float | None = None
    lift: float | None = None
    chance: float | None = None
    spread: float | None = None
    n_folds: int | None = None
    local_data: bool = False
    #: A reported score run on another dataset revision than the task's pinned one.
    other_revision: bool = False

    def describe(self, *, percent: bool = False) -> str:
        """One short line, e.g. ``permutation baseline 0.149, lift +0.324`` ('' if nothing).

        ``percent``: the numbers ×100, for a table that shows its scores so.
        """
        scale, digits = (100.0, 1) if percent else (1.0, 3)

        def fmt(value: float, sign: str = "") -> str:
            return f"{value * scale:{sign}.{digits}f}"

        parts = []
        if self.baseline is not None:
            parts.append(f"permutation baseline {fmt(self.baseline)}")
        if self.lift is not None:
            parts.append(f"lift {fmt(self.lift, '+')}")
        if self.chance is not None:
            parts.append(f"chance {fmt(self.chance)}")
        if self.spread is not None:
            plural = "" if self.n_folds == 1 else "s"
            folds = f" over {self.n_folds} fold{plural}" if self.n_folds else ""
            parts.append(f"±{fmt(self.spread)} (std{folds})")
        if self.local_data:
            parts.append("local data")
        if self.other_revision:
            parts.append("reported on another dataset revision")
        return ", ".join(parts)


def _summary(result: TaskResult) -> Mapping[str, Any] | None:
    """The scores the main score is read from: an aggregate group, or the one subset."""
    for group in ("public", "mean", "blind"):
        found = result.aggregates.get(group)
        if isinstance(found, Mapping):
            return found
    if len(result.scores) == 1:
        only = next(iter(result.scores.values()))
        return only if isinstance(only, Mapping) else None
    return None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def score_context(
    result: TaskResult, score: str | None = None, aggregate: str | None = None
) -> ScoreContext:
    """The reference points of a score of ``result`` (see the module docstring).

    By default its main score; ``score`` (main-score grammar) read in the ``aggregate`` group
    (``public``, ``blind``) is how a benchmark column reads it.
    """
    local = result.run is not None and not result.run.dataset.pinned
    other = result.reported is not None and not result.reported.revision_matches
    summary: Mapping[str, Any] | None = _summary(result)
    if aggregate is not None:
        found = result.aggregates.get(aggregate)
        summary = found if isinstance(found, Mapping) else None
    try:
        path = parse_score_path(score or result.main_score_name)
    except ValueError:
        return ScoreContext(local_data=local, other_revision=other)
    if summary is None or not path:
        return ScoreContext(local_data=local, other_revision=other)
    if result.task.family == TaskFamily.ZERO_SHOT_SIMILARITY and len(path) == 2:
        config, metric = path
        metrics = summary.get("configs", {}).get(config, {})
        entry = metrics.get(metric) if isinstance(metrics, Mapping) else None
        if isinstance(entry, Mapping):  # one subset's report: value, baseline_mean, lift
            baseline = _number(entry.get("baseline_mean"))
            value = _number(entry.get("value"))
        else:  # a summary: <metric> and <metric>_baseline side by side
            baseline = _number(metrics.get(f"{metric}_baseline"))
            value = _number(entry)
        lift = value - baseline if value is not None and baseline is not None else None
        return ScoreContext(baseline=baseline, lift=lift, local_data=local, other_revision=other)
    if result.task.family == TaskFamily.CLASSIFICATION and len(path) == 2:
        probe, metric = path
        scores = summary.get(probe)
        if not isinstance(scores, Mapping):
            return ScoreContext(local_data=local, other_revision=other)
        n_classes = _number(scores.get("n_classes"))
        chance = 1.0 / n_classes if metric in _CHANCE_METRICS and n_classes else None
        std = scores.get("std")
        spread = _number(std.get(metric)) if isinstance(std, Mapping) else None
        n_splits = _number(scores.get("n_splits"))
        return ScoreContext(
            chance=chance,
            spread=spread,
            n_folds=int(n_splits) if n_splits is not None and spread is not None else None,
            local_data=local,
            other_revision=other,
        )
    return ScoreContext(local_data=local, other_revision=other)


def main_score_line(result: TaskResult) -> str:
    """The end-of-run line: the main score by name, what it reads against, where it is defined.

    e.g. ``main score pca100/spearman:gsr = 0.4726 (permutation baseline 0.334, lift +0.139);
    metrics: docs/METRICS.md``.
    """
    value = "undefined" if result.main_score is None else f"{result.main_score:.4f}"
    context = score_context(result).describe()
    shown = f" ({context})" if context else ""
    return f"main score {result.main_score_name} = {value}{shown}; metrics: {METRICS_PAGE}"
