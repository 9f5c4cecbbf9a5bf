"""A reproduction check: one set of results (yours) against another (reported ones).

Results pair by (model, task): a model is read through :func:`~audiobench.reported.model_ids.
hub_id`, so ``whisper-large-v3``, ``hf:openai/whisper-large-v3`` and the published
``openai/whisper-large-v3`` meet. For each pair the main score and every key both results
share (in the mean over subsets, or the one subset's report) are set side by side with their
difference, and the pair gets a verdict:

- ``agree``: every shared number is within the family's tolerance (:data:`TOLERANCES`);
- ``disagree``: one is not, or one side has a number where the other has none;
- ``not comparable``: the two were not scored the same way (another protocol, another
  dataset revision), so their numbers are not expected to match.

The tolerances are stated per family, with why (:class:`Tolerance`). Every published MTEB
number is rounded to six decimals, so "exact" means equal at that precision (half a unit of
the sixth decimal, :data:`PUBLISHED_PRECISION`).
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from audiobench.reported.model_ids import hub_id
from audiobench.results import TaskResult

__all__ = [
    "PUBLISHED_PRECISION",
    "TOLERANCES",
    "Comparison",
    "KeyDifference",
    "PairComparison",
    "Tolerance",
    "compare_results",
    "load_for_comparison",
    "tolerance_for",
]

#: Half a unit of the sixth decimal: MTEB writes its scores rounded to six decimals.
PUBLISHED_PRECISION = 5e-7
# Keys that count what was scored rather than score it.
_COUNTS = frozenset({"n_samples", "n_documents", "n_subsets", "subsets", "per_experiment"})

Verdict = Literal["agree", "disagree", "not comparable"]


@dataclass(frozen=True)
class Tolerance:
    """The largest absolute difference read as agreement, and why it is honest."""

    absolute: float
    why: str


_DETERMINISTIC = (
    "a deterministic function of the embeddings (float32 cosine scores, a sort, counts): the "
    "same embeddings give the same number, so only the publication's rounding is allowed"
)
#: The tolerance of each family's MTEB protocol (see docs/RESULTS.md).
TOLERANCES: dict[str, Tolerance] = {
    "retrieval": Tolerance(PUBLISHED_PRECISION, _DETERMINISTIC),
    "reranking": Tolerance(PUBLISHED_PRECISION, _DETERMINISTIC),
    "zero_shot_classification": Tolerance(PUBLISHED_PRECISION, _DETERMINISTIC),
    "pair_classification": Tolerance(
        PUBLISHED_PRECISION,
        _DETERMINISTIC + " (thresholds are searched exhaustively over the pairs' scores)",
    ),
    "classification": Tolerance(
        1e-3,
        "the few-shot draws are seeded (seed 42, 8 clips per label) and so identical, but the "
        "logistic regression (lbfgs, max_iter=100) often stops before converging, so another "
        "BLAS or last-bit differences in the embeddings move its weights and flip borderline "
        "predictions; one flip moves a 10-experiment mean by 1/(10·n_test), and 1e-3 allows a "
        "handful of flips on MAEB's test sets while catching any real difference",
    ),
    "clustering": Tolerance(
        1e-2,
        "the bootstraps and k-means++ starts are seeded, but mini-batch k-means follows the "
        "order of floating-point sums: last-bit differences in the embeddings can end a "
        "bootstrap in another local optimum, which moves its V-measure by up to a few "
        "hundredths; the mean of 10 bootstraps is allowed 1e-2",
    ),
}
_DEFAULT = Tolerance(PUBLISHED_PRECISION, "no family rule: exact at the published precision")


def tolerance_for(family: str, override: float | None = None) -> Tolerance:
    """The tolerance of ``family`` (``override`` replaces it, for every family)."""
    if override is not None:
        return Tolerance(override, "given on the command line")
    return TOLERANCES.get(family, _DEFAULT)


@dataclass(frozen=True)
class KeyDifference:
    """One number of a pair side by side (``subset`` None: the task's mean or only report)."""

    key: str
    mine: float | None
    reported: float | None
    within: bool
    subset: str | None = None

    @property
    def difference(self) -> float | None:
        if self.mine is None or self.reported is None:
            return None
        return self.mine - self.reported


@dataclass
class PairComparison:
    """A (model, task) present on both sides."""

    model: str
    task: str
    family: str
    mine: TaskResult
    reported: TaskResult
    tolerance: Tolerance
    keys: list[KeyDifference] = field(default_factory=list)
    not_comparable: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> Verdict:
        if self.not_comparable:
            return "not comparable"
        return "agree" if all(k.within for k in self.keys) else "disagree"

    @property
    def main(self) -> KeyDifference:
        return self.keys[0]


@dataclass
class Comparison:
    pairs: list[PairComparison]
    only_mine: list[tuple[str, str]]
    only_reported: list[tuple[str, str]]

    def count(self, verdict: Verdict) -> int:
        return sum(1 for p in self.pairs if p.verdict == verdict)

    @property
    def ok(self) -> bool:
        return self.count("disagree") == 0


def load_for_comparison(
    paths: Sequence[str | os.PathLike[str]],
) -> tuple[list[TaskResult], list[str]]:
    """The valid results under ``paths`` (private-table rules) and one line per problem."""
    from pathlib import Path

    from audiobench.leaderboard.validate import validate_paths

    validation = validate_paths([Path(p) for p in paths], allow_unpinned=True)
    return [r for _, r in validation.accepted], [p.line() for p in validation.problems]


def _summary(result: TaskResult) -> Mapping[str, Any] | None:
    """The mean over subsets, or the one subset's report."""
    from audiobench.registry import tasks

    group = "mean"
    with contextlib.suppress(LookupError, ImportError):
        group = tasks.get(result.task.name).public_group
    if group in result.aggregates:
        return result.aggregates[group]
    if len(result.scores) == 1:
        return next(iter(result.scores.values()))
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _numbers(entry: Mapping[str, Any] | None) -> dict[str, float | None]:
    if entry is None:
        return {}
    return {
        k: (float(v) if v is not None else None)
        for k, v in entry.items()
        if k not in _COUNTS
        and (v is None or (isinstance(v, int | float) and not isinstance(v, bool)))
    }


def _within(mine: float | None, reported: float | None, tolerance: float) -> bool:
    if mine is None or reported is None:
        return mine is None and reported is None
    # The tolerance itself is a float: a hair of slack so that 0.5e-6 apart passes at 5e-7.
    return abs(mine - reported) <= tolerance * (1 + 1e-9) + 1e-12 or math.isclose(mine, reported)


def _protocol(result: TaskResult) -> str | None:
    if result.reported is not None:
        return result.reported.origin
    options = result.run.task_options if result.run is not None else {}
    value = options.get("protocol")
    return str(value) if value is not None else None


def _why_not_comparable(mine: TaskResult, reported: TaskResult) -> list[str]:
    found = []
    protocol = _protocol(mine)
    if reported.reported is not None and protocol != reported.reported.origin:
        found.append(
            f"yours was scored under protocol {protocol!r}, the reported one as "
            f"{reported.reported.origin.upper()} scores it (--task-option protocol=mteb)"
        )
    if mine.task.revision != reported.task.revision:
        found.append(
            f"dataset revision {mine.task.revision!r} against the reported "
            f"{reported.task.revision!r}"
        )
    if mine.main_score_name != reported.main_score_name:
        found.append(f"main score {mine.main_score_name!r} against {reported.main_score_name!r}")
    return found


def _compare_pair(mine: TaskResult, reported: TaskResult, override: float | None) -> PairComparison:
    tolerance = tolerance_for(mine.task.family, override)
    pair = PairComparison(
        model=hub_id(reported.model.name),
        task=mine.task.name,
        family=mine.task.family,
        mine=mine,
        reported=reported,
        tolerance=tolerance,
        not_comparable=_why_not_comparable(mine, reported),
    )
    limit = tolerance.absolute
    pair.keys.append(
        KeyDifference(
            f"main score ({mine.main_score_name})",
            mine.main_score,
            reported.main_score,
            _within(mine.main_score, reported.main_score, limit),
        )
    )
    ours, theirs = _numbers(_summary(mine)), _numbers(_summary(reported))
    for key in sorted(set(ours) & set(theirs)):
        pair.keys.append(
            KeyDifference(key, ours[key], theirs[key], _within(ours[key], theirs[key], limit))
        )
    # Each subset's main key, where there are several: a language that moved shows itself.
    if len(mine.scores) > 1 or len(reported.scores) > 1:
        main_key = mine.main_score_name
        for subset in sorted(set(mine.scores) & set(reported.scores)):
            a = _numbers(mine.scores[subset]).get(main_key)
            b = _numbers(reported.scores[subset]).get(main_key)
            pair.keys.append(KeyDifference(main_key, a, b, _within(a, b, limit), subset=subset))
    return pair


def compare_results(
    mine: Iterable[TaskResult],
    reported: Iterable[TaskResult],
    *,
    tolerance: float | None = None,
) -> Comparison:
    """Every (model, task) on both sides compared; those on one side only listed."""

    def grouped(results: Iterable[TaskResult]) -> dict[tuple[str, str], list[TaskResult]]:
        found: dict[tuple[str, str], list[TaskResult]] = {}
        for r in results:
            found.setdefault((hub_id(r.model.name), r.task.name), []).append(r)
        return found

    ours, theirs = grouped(mine), grouped(reported)
    pairs = [
        _compare_pair(a, b, tolerance)
        for key in sorted(set(ours) & set(theirs))
        for a in ours[key]
        for b in theirs[key]
    ]
    return Comparison(
        pairs=pairs,
        only_mine=sorted(set(ours) - set(theirs)),
        only_reported=sorted(set(theirs) - set(ours)),
    )
