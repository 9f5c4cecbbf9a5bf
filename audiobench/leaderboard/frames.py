"""Result files as pandas DataFrames, for analysis and for the leaderboard's CSV files.

:func:`load_results` (also ``audiobench.load_results``) validates and loads
result files; ``level="result"`` gives one row per file (headline score,
model metadata, efficiency, and ``origin``: computed here or reported, imported),
``level="score"`` one row per number (tidy long form: scope, score, field, value),
ready for ``pivot_table``.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from audiobench.leaderboard.context import score_context
from audiobench.leaderboard.validate import validate_paths
from audiobench.results import TaskResult
from audiobench.task import TaskFamily

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "RESULT_COLUMNS",
    "SCORE_COLUMNS",
    "load_results",
    "results_frame",
    "scores_frame",
    "spreadsheet_cell",
    "spreadsheet_safe",
]

RESULT_COLUMNS = (
    "model",
    "revision",
    "task",
    "family",
    "main_score_name",
    "main_score",
    "main_score_baseline",
    "main_score_lift",
    "chance_level",
    "main_score_std",
    "n_folds",
    "local_data",
    "n_parameters",
    "embedding_dim",
    "pooling",
    "source",
    "fingerprint",
    "compression_ratio",
    "bytes_per_second",
    "flops_per_second",
    "clips_per_s",
    "audio_seconds_per_s",
    "audio_seconds",
    "peak_memory_mb",
    "total_s",
    "n_clips",
    "n_skipped",
    "audiobench_version",
    "date",
    "origin",
    "license",
    "open_weights",
    "release_date",
    "reported_source",
    "mteb_version",
    "dataset_revision_matches",
)
SCORE_COLUMNS = ("model", "revision", "task", "family", "scope", "score", "field", "value")

_EFFICIENCY = (
    "compression_ratio",
    "bytes_per_second",
    "flops_per_second",
    "clips_per_s",
    "audio_seconds_per_s",
    "audio_seconds",
    "peak_memory_mb",
)


#: First characters that make a spreadsheet read a cell as a formula.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_cell(value: object) -> object:
    """``value``, with a ``'`` in front if it is text a spreadsheet would run as a formula."""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy where every text cell a spreadsheet would run as a formula starts with ``'``.

    Result files carry free text (dataset paths, model sources, pooling names,
    option values); opened from ``results.csv`` a cell such as ``=HYPERLINK(..)``
    would otherwise execute.
    """
    return frame.map(spreadsheet_cell)


def results_frame(results: Iterable[TaskResult]) -> pd.DataFrame:
    """One row per result: who, what, the main score, model metadata and efficiency."""
    import pandas as pd

    rows = []
    for r in results:
        row: dict[str, Any] = {
            "model": r.model.name,
            "revision": r.model.revision,
            "task": r.task.name,
            "family": r.task.family,
            "main_score_name": r.main_score_name,
            "main_score": r.main_score,
            **_context_columns(r),
            "n_parameters": r.model.n_parameters,
            "embedding_dim": r.model.embedding_dim,
            "pooling": r.model.pooling,
            "source": r.model.source,
            "fingerprint": r.model.fingerprint,
        }
        # Efficiency fields vary between schema versions: absent means missing.
        row.update({name: getattr(r.efficiency, name, None) for name in _EFFICIENCY})
        row.update(
            total_s=r.timings.total_s if r.timings is not None else None,
            n_clips=r.cache.n_clips if r.cache is not None else None,
            n_skipped=len(r.skipped),
            audiobench_version=r.audiobench_version,
            date=r.date,
            **_origin_columns(r),
        )
        rows.append(row)
    frame = pd.DataFrame(rows, columns=list(RESULT_COLUMNS))
    for name in ("n_parameters", "embedding_dim"):
        frame[name] = frame[name].astype("Int64")
    frame["n_folds"] = frame["n_folds"].astype("Int64")
    for name in ("main_score", *_CONTEXT, *_EFFICIENCY):
        frame[name] = frame[name].astype("float64")
    return frame


def _origin_columns(result: TaskResult) -> dict[str, Any]:
    """Computed here or reported (imported), and the model metadata a reported file gives."""
    reported = result.reported
    model = result.model
    return {
        "origin": "computed" if reported is None else "reported",
        "license": model.license,
        "open_weights": model.open_weights,
        "release_date": model.release_date,
        "reported_source": None if reported is None else f"{reported.repository}:{reported.file}",
        "mteb_version": None if reported is None else reported.mteb_version,
        "dataset_revision_matches": None if reported is None else reported.revision_matches,
    }


_CONTEXT = ("main_score_baseline", "main_score_lift", "chance_level", "main_score_std")


def _context_columns(result: TaskResult) -> dict[str, Any]:
    """What the main score reads against (:func:`.context.score_context`)."""
    context = score_context(result)
    return {
        "main_score_baseline": context.baseline,
        "main_score_lift": context.lift,
        "chance_level": context.chance,
        "main_score_std": context.spread,
        "n_folds": context.n_folds,
        "local_data": context.local_data,
    }


def scores_frame(results: Iterable[TaskResult]) -> pd.DataFrame:
    """Every number of every result, one row each.

    ``scope`` is a subset, an aggregate group (``public``, ``blind``) or
    ``main``; for zero-shot similarity ``score`` reads ``<config>:<metric>``
    as in benchmark columns and ``field`` is ``value``, ``baseline_mean``,
    ``margin``, ``p_value``... Other families' scores are flattened with
    dotted key paths.
    """
    import pandas as pd

    rows = []
    for r in results:
        who = (r.model.name, r.model.revision, r.task.name, r.task.family)
        rows.append((*who, "main", r.main_score_name, "value", r.main_score))
        flatten = (
            _zero_shot_numbers
            if r.task.family == TaskFamily.ZERO_SHOT_SIMILARITY
            else _generic_numbers
        )
        for mapping in (r.aggregates, r.scores):
            rows.extend((*who, *entry) for entry in flatten(mapping))
    frame = pd.DataFrame(rows, columns=list(SCORE_COLUMNS))
    frame["value"] = frame["value"].astype("float64")
    return frame


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _zero_shot_numbers(
    mapping: dict[str, dict[str, Any]],
) -> Iterator[tuple[str, str, str, float]]:
    for scope, entry in mapping.items():
        for config, metrics in entry.get("configs", {}).items():
            for metric, summary in metrics.items():
                if isinstance(summary, dict):  # one subset: the full metric summary
                    for field, value in summary.items():
                        if field == "baseline_ci" and isinstance(value, list) and len(value) == 2:
                            for bound, number in zip(("low", "high"), value, strict=True):
                                if _is_number(number):
                                    yield scope, f"{config}:{metric}", f"baseline_{bound}", number
                        elif _is_number(value):
                            yield scope, f"{config}:{metric}", field, value
                elif _is_number(summary):  # an aggregate: value or its baseline
                    name = metric.removesuffix("_baseline")
                    field = "value" if name == metric else "baseline_mean"
                    yield scope, f"{config}:{name}", field, summary


def _generic_numbers(
    mapping: dict[str, dict[str, Any]],
) -> Iterator[tuple[str, str, str, float]]:
    def walk(value: Any, path: list[str]) -> Iterator[tuple[str, float]]:
        if isinstance(value, dict):
            for key, item in value.items():
                yield from walk(item, [*path, str(key)])
        elif isinstance(value, list):
            for i, item in enumerate(value):
                yield from walk(item, [*path, str(i)])
        elif _is_number(value):
            yield ".".join(path), value

    for scope, entry in mapping.items():
        for score, value in walk(entry, []):
            yield scope, score, "value", value


def load_results(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    level: Literal["result", "score"] = "result",
    strict: bool = True,
    allow_unpinned: bool = True,
) -> pd.DataFrame:
    """Validate and load result files (or folders of them) into a DataFrame.

    Results on local data or unpinned dataset revisions are kept (your own
    tables); ``allow_unpinned=False`` applies the public leaderboard's rule.

    ``level="result"``: one row per file (see :data:`RESULT_COLUMNS`);
    ``level="score"``: one row per number (see :data:`SCORE_COLUMNS`).
    An invalid file raises ``ValueError`` listing every problem, or with
    ``strict=False`` is left out with a warning per problem; never silently.
    """
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    validation = validate_paths([Path(p) for p in paths], allow_unpinned=allow_unpinned)
    if validation.problems:
        lines = [p.line() for p in validation.problems]
        if strict:
            n = len(validation.rejected)
            raise ValueError(f"{n} invalid result file(s):\n" + "\n".join(lines))
        for line in lines:
            warnings.warn(f"left out: {line}", stacklevel=2)
    results = [result for _, result in validation.accepted]
    if level == "result":
        return results_frame(results)
    if level == "score":
        return scores_frame(results)
    raise ValueError(f"level must be 'result' or 'score', not {level!r}")
