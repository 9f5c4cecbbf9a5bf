"""Collate validated results into the tables every leaderboard output is rendered from.

One :class:`Leaderboard` holds a table per registered benchmark (columns,
aggregation and ranking exactly as the :class:`~audiobench.benchmark.Benchmark`
defines them) and a table per task family for the tasks no benchmark covers
(one column per task: its main score). Missing scores stay ``None`` all the
way to the page, where they are shown as missing, never as 0. The Markdown,
CSV, HTML and plot renderers read only this structure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from audiobench import benchmark as benchmark_module
from audiobench.benchmark import Benchmark, list_benchmarks
from audiobench.results import TaskResult
from audiobench.task import TaskMetadata
from audiobench.version import __version__

__all__ = [
    "Column",
    "Leaderboard",
    "ModelCard",
    "Row",
    "Table",
    "collate",
    "model_key",
    "task_metadata",
]

# Name of the aggregate entry of a benchmark row with ``mean_of``; older
# benchmark definitions have no such rule.
_MEAN = getattr(benchmark_module, "MEAN", "mean")

# For results of tasks that are not registered here (no metadata to say the
# direction): CS and CSCF are reported raw, where lower is better.
_LOWER_IS_BETTER_METRICS = frozenset({"cs", "cscf"})

_STRICT = ConfigDict(extra="forbid")

FLAGSHIP = "VocSim"

#: Column ids the page uses for its own columns (rank, model name, parameter count).
RESERVED_COLUMN_IDS = frozenset({"rank", "model", "params"})


class ModelCard(BaseModel):
    """What the leaderboard shows about a (model, revision) beside its scores."""

    model_config = _STRICT

    key: str
    name: str
    revision: str | None
    source: str | None = None
    pooling: str | None = None
    license: str | None = None
    n_parameters: int | None = None
    embedding_dim: int | None = None
    compression_ratio: float | None = None
    bytes_per_second: float | None = None
    flops_per_second: float | None = None
    clips_per_s: float | None = None
    tasks: list[str] = []
    latest: datetime
    audiobench_version: str


class Column(BaseModel):
    model_config = _STRICT

    id: str = Field(description="Unique within its table; used in links (#sort=<id>).")
    name: str
    label: str = Field(description="Shown under the group header (the name without the group).")
    group: str | None = None
    task: str
    family: str | None
    domains: list[str]
    score: str
    higher_is_better: bool
    percent: bool


class Row(BaseModel):
    model_config = _STRICT

    model: str = Field(description="Key into Leaderboard.models.")
    rank: int | None = Field(description="Rank under the table's rule; None: unranked.")
    values: list[float | None] = Field(description="One per column, in column order.")


class Table(BaseModel):
    model_config = _STRICT

    id: str
    title: str
    kind: Literal["benchmark", "family"]
    description: str
    rank_by: list[str] = Field(description="Column names ranking the rows; empty: unranked.")
    columns: list[Column]
    rows: list[Row]


class Leaderboard(BaseModel):
    model_config = _STRICT

    generated: datetime
    audiobench_version: str
    n_results: int
    tables: list[Table]
    models: dict[str, ModelCard]
    families: list[str]
    domains: list[str]
    pending_benchmarks: list[str] = Field(
        default=[], description="Registered benchmarks with no result yet (no table)."
    )
    rejected: list[str] = Field(description="One line per problem of every rejected file.")
    results: list[TaskResult] = Field(default=[], exclude=True)


def model_key(name: str, revision: str | None) -> str:
    """An unambiguous key for a (model, revision) pair, whatever characters the names hold."""
    return json.dumps([name, revision], ensure_ascii=False)


def task_metadata(name: str) -> TaskMetadata | None:
    """The registered metadata of task ``name`` (None if it is not installed or is broken)."""
    from audiobench import registry

    try:
        return registry.tasks.get(name).metadata
    except (LookupError, ImportError):
        return None


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def _unique(base: str, taken: set[str]) -> str:
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}-{n}", n + 1
    taken.add(candidate)
    return candidate


def family_title(family: str) -> str:
    """``"zero_shot_similarity"`` -> ``"Zero-shot similarity"``."""
    return family.replace("zero_shot", "zero-shot").replace("_", " ").capitalize()


def collate(
    results: Iterable[TaskResult],
    *,
    rejected: Iterable[str] = (),
    benchmarks: Mapping[str, Benchmark] | None = None,
    generated: datetime | None = None,
) -> Leaderboard:
    """Build the leaderboard from validated ``results``.

    ``benchmarks`` defaults to every registered one meant for the leaderboard
    (``Benchmark.on_leaderboard``); ``rejected`` is carried
    through so that every output can list what was left out and why.
    """
    results = sorted(results, key=lambda r: (r.model.name, r.model.revision or "", r.task.name))
    if benchmarks is None:
        benchmarks = {n: b for n, b in list_benchmarks().items() if b.on_leaderboard}
    # The flagship first, the others in registration order.
    benches = dict(sorted(benchmarks.items(), key=lambda kv: kv[0] != FLAGSHIP))
    metas = {name: task_metadata(name) for name in {r.task.name for r in results}}
    for bench in benches.values():
        for name in bench.tasks:
            metas.setdefault(name, task_metadata(name))
    models = _model_cards(results)
    taken: set[str] = set()
    tables = [_benchmark_table(b, results, metas, taken) for b in benches.values()]
    # An empty table per benchmark nobody has run yet would bury the ones with
    # results; those benchmarks are named instead.
    pending = [t.title for t in tables if not t.rows]
    tables = [t for t in tables if t.rows]
    covered = {t for b in benches.values() for t in b.tasks}
    by_family: dict[str, list[TaskResult]] = {}
    for result in results:
        if result.task.name not in covered:
            by_family.setdefault(result.task.family, []).append(result)
    for family in sorted(by_family):
        tables.append(_family_table(family, by_family[family], metas, taken))
    columns = [c for t in tables for c in t.columns]
    return Leaderboard(
        generated=generated or datetime.now(UTC).replace(microsecond=0),
        audiobench_version=__version__,
        n_results=len(results),
        tables=tables,
        models=models,
        families=sorted({c.family for c in columns if c.family}),
        domains=sorted({d for c in columns for d in c.domains}),
        pending_benchmarks=pending,
        rejected=list(rejected),
        results=results,
    )


def _column_context(meta: TaskMetadata | None) -> dict[str, Any]:
    if meta is None:
        return {"family": None, "domains": []}
    return {"family": str(meta.family), "domains": list(meta.domains)}


def _benchmark_table(
    bench: Benchmark,
    results: list[TaskResult],
    metas: Mapping[str, TaskMetadata | None],
    taken: set[str],
) -> Table:
    ids = set(RESERVED_COLUMN_IDS)
    columns = []
    mean_of = tuple(getattr(bench, "mean_of", ()))
    if mean_of:
        columns.append(_mean_column(bench, mean_of, metas, ids))
    for column in bench.columns:
        group = column.aggregate
        label = column.name
        if group and label.lower().startswith(f"{group.lower()} "):
            label = label[len(group) + 1 :]
        columns.append(
            Column(
                id=_unique(slug(column.name), ids),
                name=column.name,
                label=label,
                group=group,
                task=column.task,
                score=column.score,
                higher_is_better=column.higher_is_better,
                percent=column.percent,
                **_column_context(metas.get(column.task)),
            )
        )
    rows = []
    ranked = 0
    for row in bench.table(results):
        has_rank = any(row.get(name) is not None for name in bench.rank_by)
        ranked += has_rank
        values = [row.get(_MEAN)] if mean_of else []
        rows.append(
            Row(
                model=model_key(row["model"], row["revision"]),
                rank=ranked if has_rank else None,
                values=values + [row[c.name] for c in bench.columns],
            )
        )
    return Table(
        id=_unique(slug(bench.name), taken),
        title=bench.name,
        kind="benchmark",
        description=bench.description,
        rank_by=list(bench.rank_by),
        columns=columns,
        rows=rows,
    )


def _mean_column(
    bench: Benchmark,
    mean_of: tuple[str, ...],
    metas: Mapping[str, TaskMetadata | None],
    ids: set[str],
) -> Column:
    """The column of a benchmark's aggregation rule: the mean of ``mean_of``."""
    averaged = [c for c in bench.columns if c.name in mean_of]
    tasks = sorted({c.task for c in averaged})
    contexts = [_column_context(metas.get(t)) for t in tasks]
    families = {c["family"] for c in contexts}
    return Column(
        id=_unique(slug(_MEAN), ids),
        name=_MEAN,
        label=_MEAN,
        task=", ".join(tasks),
        family=families.pop() if len(families) == 1 else None,
        domains=sorted({d for c in contexts for d in c["domains"]}),
        score=f"mean of {', '.join(mean_of)}",
        higher_is_better=all(c.higher_is_better for c in averaged),
        percent=all(c.percent for c in averaged),
    )


def _family_table(
    family: str,
    results: list[TaskResult],
    metas: Mapping[str, TaskMetadata | None],
    taken: set[str],
) -> Table:
    tasks = sorted({r.task.name for r in results})
    ids = set(RESERVED_COLUMN_IDS)
    columns = []
    for task in tasks:
        meta = metas.get(task)
        score = meta.main_score if meta is not None else results[0].main_score_name
        columns.append(
            Column(
                id=_unique(slug(task), ids),
                name=task,
                label=task,
                task=task,
                score=score,
                higher_is_better=(
                    meta.higher_is_better
                    if meta is not None
                    else score.rpartition(":")[2] not in _LOWER_IS_BETTER_METRICS
                ),
                percent=False,
                **_column_context(meta),
            )
        )
    index = {task: i for i, task in enumerate(tasks)}
    values: dict[str, list[float | None]] = {}
    for result in results:
        key = model_key(result.model.name, result.model.revision)
        values.setdefault(key, [None] * len(tasks))[index[result.task.name]] = result.main_score
    # No benchmark defines how to combine these tasks, so rows are not ranked:
    # they are listed by name and the reader sorts by the column they care about.
    rows = [
        Row(model=key, rank=None, values=vals)
        for key, vals in sorted(values.items(), key=lambda kv: json.loads(kv[0])[0].lower())
    ]
    return Table(
        id=_unique(f"family-{slug(family)}", taken),
        title=family_title(family),
        kind="family",
        description=f"{family_title(family)} tasks in no benchmark: each task's main score.",
        rank_by=[],
        columns=columns,
        rows=rows,
    )


def _registered_license(name: str) -> str | None:
    from audiobench import registry

    if name not in registry.models.names():
        return None
    try:
        return registry.models.get(name).meta.license
    except Exception:  # a broken plugin must not stop the build; the license is then unknown
        return None


def _model_cards(results: list[TaskResult]) -> dict[str, ModelCard]:
    grouped: dict[str, list[TaskResult]] = {}
    for result in results:
        grouped.setdefault(model_key(result.model.name, result.model.revision), []).append(result)
    cards = {}
    for key, group in grouped.items():
        latest = max(group, key=lambda r: r.date)
        model, efficiency = latest.model, latest.efficiency
        # Optional fields are read defensively: result files from older or
        # newer schema versions may lack them, and missing must stay missing.
        cards[key] = ModelCard(
            key=key,
            name=model.name,
            revision=model.revision,
            source=model.source,
            pooling=model.pooling,
            license=getattr(model, "license", None) or _registered_license(model.name),
            n_parameters=model.n_parameters
            if model.n_parameters is not None
            else _integer(efficiency, "n_parameters"),
            embedding_dim=model.embedding_dim
            if model.embedding_dim is not None
            else _integer(efficiency, "embedding_size"),
            compression_ratio=_number(efficiency, "compression_ratio"),
            bytes_per_second=_number(efficiency, "bytes_per_second"),
            flops_per_second=_number(efficiency, "flops_per_second"),
            clips_per_s=_number(efficiency, "clips_per_s"),
            tasks=sorted({r.task.name for r in group}),
            latest=latest.date,
            audiobench_version=latest.audiobench_version,
        )
    return cards


def _number(obj: Any, name: str) -> float | None:
    value = getattr(obj, name, None)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _integer(obj: Any, name: str) -> int | None:
    value = getattr(obj, name, None)
    return value if isinstance(value, int) and not isinstance(value, bool) else None
