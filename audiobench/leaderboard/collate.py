"""Collate validated results into the tables every leaderboard output is rendered from.

One :class:`Leaderboard` holds a table per registered benchmark (columns,
aggregation and ranking exactly as the :class:`~audiobench.benchmark.Benchmark`
defines them) and a table per task family for the tasks no benchmark covers
(one column per task: its main score). Missing scores stay ``None`` all the
way to the page, where they are shown as missing, never as 0. The Markdown,
CSV, HTML and plot renderers read only this structure.

**Titles.** Every table is a tab of the page, so no two tables share a title.
A benchmark's table carries the benchmark's name; a family table is titled
``"Other <family> tasks"`` (:func:`family_table_title`), which no benchmark
name matches by accident (the ``Classification`` benchmark beside the
classification tasks in no benchmark reads "Classification" and "Other
classification tasks"). :class:`Leaderboard` refuses two tables whose titles
differ only in case or spacing, so a plugin benchmark that takes one of these
titles fails the build instead of making two tabs no reader can tell apart.

**One scale per table.** Every column has a :attr:`Column.unit`: ``"%"``
(:data:`PERCENT`) for a benchmark column declared ``percent`` (a fraction shown
×100), and for the rest, shown as computed, ``"0–1"`` (:data:`FRACTION`) for a
fraction or rate where higher is better, or the metric's own unit (``"FAD"``,
``"KAD"``, ``"WER"``, ``"CS"``...) for a distance, an error or any other number
that is not a fraction (:func:`column_unit`). A table holds columns of one unit
only (:attr:`Table.unit`, checked when it is built) and says how its numbers
are shown (:attr:`Table.scale`). So a benchmark whose columns differ in unit is
split: its table keeps the columns of the unit its ranking is read in (the
first ``rank_by`` column's) and its name; each other unit gets its own table,
``"<benchmark> (<unit>)"``, with the same ranks (the benchmark's rule) and the
models that have a score there. Every registered benchmark is homogeneous
today (VocSim, MAEB, Classification... in percent; Reconstruction in raw FAD),
so each is one table. Family tables show each task's main score as computed,
so a family whose tasks' main scores differ in unit is split the same way,
each table titled ``"Other <family> tasks (<unit>)"``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from audiobench import benchmark as benchmark_module
from audiobench.benchmark import BORDA_RANK, MEAN_TASK_TYPE, Benchmark, list_benchmarks
from audiobench.leaderboard.context import score_context
from audiobench.results import ReportedSource, TaskResult
from audiobench.task import TaskMetadata
from audiobench.version import __version__

__all__ = [
    "FRACTION",
    "PERCENT",
    "Column",
    "Leaderboard",
    "ModelCard",
    "Row",
    "Table",
    "collate",
    "column_unit",
    "family_table_title",
    "model_key",
    "scale_note",
    "task_metadata",
]

# Name of the aggregate entry of a benchmark row with ``mean_of``; older
# benchmark definitions have no such rule.
_MEAN = getattr(benchmark_module, "MEAN", "mean")

# For results of tasks that are not registered here (no metadata to say the
# direction): CS and CSCF are reported raw, where lower is better.
_LOWER_IS_BETTER_METRICS = frozenset({"cs", "cscf"})

#: Unit of a column shown ×100: a fraction read as a percentage.
PERCENT = "%"
#: Unit of a fraction or rate shown as computed, between 0 and 1.
FRACTION = "0–1"
# Metrics that are no fraction in [0, 1]: shown as computed, each in its own unit.
_OWN_UNITS = {
    "fad": "FAD",
    "kad": "KAD",
    "embedding_mse": "embedding MSE",
    "log_mel_distance": "log-mel distance",
    "bits_per_second": "bits/s",
    "wer": "WER",
    "char_error_rate": "CER",
    "cs": "CS",
    "cscf": "CSCF",
    "silhouette": "silhouette",
}

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
    open_weights: bool | None = None
    release_date: date | None = None
    origin: Literal["computed", "reported", "mixed"] = Field(
        "computed",
        description="'computed': every score was computed with audiobench; 'reported': every "
        "score was published elsewhere and imported (results import-mteb); 'mixed': both.",
    )
    reported_from: str | None = Field(
        None, description="Where the reported scores come from (source, MTEB version)."
    )
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
    unit: str = Field(
        description="'%' (a fraction shown ×100), '0–1' (a fraction shown as computed) or the "
        "metric's own unit ('FAD', ...): see column_unit."
    )


class Row(BaseModel):
    model_config = _STRICT

    model: str = Field(description="Key into Leaderboard.models.")
    rank: int | None = Field(description="Rank under the table's rule; None: unranked.")
    values: list[float | None] = Field(description="One per column, in column order.")
    notes: list[str] = Field(
        default=[],
        description="Empty, or one per column: what the value reads against (permutation "
        "baseline and lift, chance and spread across folds, local data; see "
        "leaderboard/context.py), '' where nothing is known.",
    )


class Table(BaseModel):
    model_config = _STRICT

    id: str
    title: str
    kind: Literal["benchmark", "family"]
    description: str
    rank_by: list[str] = Field(description="Column names ranking the rows; empty: unranked.")
    unit: str = Field(description="The one unit of every column (see Column.unit).")
    scale: str = Field(description="How the table's numbers are shown, in a sentence.")
    columns: list[Column]
    rows: list[Row]

    @model_validator(mode="after")
    def _one_scale(self) -> Table:
        mixed = sorted({c.unit for c in self.columns if c.unit != self.unit})
        if mixed:
            raise ValueError(
                f"table {self.title!r} is in {self.unit!r} but has columns in {mixed}: "
                "a table holds one scale"
            )
        return self


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
    local_data: list[str] = Field(
        default=[],
        description="Tasks with results on local data, an unpinned revision or (reported) "
        "another revision than the pinned one: a private board.",
    )
    results: list[TaskResult] = Field(default=[], exclude=True)

    @model_validator(mode="after")
    def _one_tab_per_title(self) -> Leaderboard:
        seen: dict[str, str] = {}
        for table in self.tables:
            key = _title_key(table.title)
            if key in seen:
                raise ValueError(
                    f"tables {seen[key]!r} and {table.id!r} would both be titled "
                    f"{table.title!r}: every tab needs a title of its own"
                )
            seen[key] = table.id
        return self


def _title_key(title: str) -> str:
    """What a reader sees of a title: case and runs of spaces do not tell two tabs apart."""
    return " ".join(title.split()).casefold()


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


def _family_words(family: str) -> str:
    return family.replace("zero_shot", "zero-shot").replace("_", " ")


def family_title(family: str) -> str:
    """``"zero_shot_similarity"`` -> ``"Zero-shot similarity"``."""
    return _family_words(family).capitalize()


def family_table_title(family: str) -> str:
    """The title of a family's table: ``"classification"`` -> ``"Other classification tasks"``.

    Never just the family's name, which benchmarks take too (``Classification``,
    ``Clustering``, ``Reconstruction``).
    """
    return f"Other {_family_words(family)} tasks"


def column_unit(metric: str, *, percent: bool, higher_is_better: bool) -> str:
    """The unit a column of ``metric`` (a score in the main-score grammar) is shown in.

    ``percent``: :data:`PERCENT`. Otherwise a metric known not to be a fraction (FAD,
    KAD, WER, CS...) or one where lower is better (an error, a distance) has its own
    unit; any other is a fraction or rate: :data:`FRACTION`.
    """
    if percent:
        return PERCENT
    name = metric.rpartition(":")[2]
    if name in _OWN_UNITS:
        return _OWN_UNITS[name]
    return FRACTION if higher_is_better else name


def scale_note(unit: str) -> str:
    """How the numbers of a table in ``unit`` are shown, in a sentence."""
    if unit == PERCENT:
        return "Scores ×100."
    if unit == FRACTION:
        return "Scores as computed, from 0 to 1 (not ×100)."
    return f"Raw {unit} values, as computed (not ×100)."


def _unit_label(unit: str) -> str:
    """``unit`` in a table's title."""
    return {PERCENT: "×100", FRACTION: "0–1"}.get(unit, unit)


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
    Raises ``ValueError`` if two tables would share a title.
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
    tables: list[Table] = []
    # An empty table per benchmark nobody has run yet would bury the ones with
    # results; those benchmarks are named instead.
    pending: list[str] = []
    for bench in benches.values():
        made = _benchmark_tables(bench, results, metas, taken)
        if made:
            tables += made
        else:
            pending.append(bench.name)
    covered = {t for b in benches.values() for t in b.tasks}
    by_family: dict[str, list[TaskResult]] = {}
    for result in results:
        if result.task.name not in covered:
            by_family.setdefault(result.task.family, []).append(result)
    for family in sorted(by_family):
        tables += _family_tables(family, by_family[family], metas, taken)
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
        local_data=sorted(
            {
                r.task.name
                for r in results
                if score_context(r).local_data or score_context(r).other_revision
            }
        ),
        results=results,
    )


def _column_context(meta: TaskMetadata | None) -> dict[str, Any]:
    if meta is None:
        return {"family": None, "domains": []}
    return {"family": str(meta.family), "domains": list(meta.domains)}


def _by_unit(columns: list[Column], first: str | None = None) -> dict[str, list[int]]:
    """Column indices by unit: ``first``'s group first, the others in column order."""
    groups: dict[str, list[int]] = {first: []} if first is not None else {}
    for i, column in enumerate(columns):
        groups.setdefault(column.unit, []).append(i)
    return {unit: members for unit, members in groups.items() if members}


def _benchmark_tables(
    bench: Benchmark,
    results: list[TaskResult],
    metas: Mapping[str, TaskMetadata | None],
    taken: set[str],
) -> list[Table]:
    """The benchmark's table, split by unit where its columns differ in scale; [] with no row."""
    ids = set(RESERVED_COLUMN_IDS)
    columns = []
    mean_of = tuple(getattr(bench, "mean_of", ()))
    # The mean comes first, and has first claim on its id.
    mean_id = _unique(slug(_MEAN), ids) if mean_of else ""
    for column in bench.columns:
        group = column.aggregate
        label = column.name
        if group and label.lower().startswith(f"{group.lower()} "):
            label = label[len(group) + 1 :]
        meta = metas.get(column.task)
        # A column without an aggregate reads the task's main score, whatever its score says.
        metric = meta.main_score if column.aggregate is None and meta is not None else column.score
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
                unit=column_unit(
                    metric, percent=column.percent, higher_is_better=column.higher_is_better
                ),
                **_column_context(meta),
            )
        )
    if mean_of:
        columns.insert(0, _mean_column(mean_id, mean_of, columns, metas))
    # MTEB's leaderboard aggregations, where the benchmark names its columns' task types.
    aggregations = _aggregation_columns(bench, columns, ids) if bench.task_types else []
    columns += aggregations
    by_model: dict[str, dict[str, TaskResult]] = {}
    for result in results:
        key = model_key(result.model.name, result.model.revision)
        by_model.setdefault(key, {})[result.task.name] = result
    rows = []
    ranked = 0
    for row in bench.table(results):
        has_rank = any(row.get(name) is not None for name in bench.rank_by)
        ranked += has_rank
        values = [row.get(_MEAN)] if mean_of else []
        key = model_key(row["model"], row["revision"])
        notes = [""] if mean_of else []
        for column in bench.columns:
            found = by_model.get(key, {}).get(column.task)
            context = (
                score_context(found, column.score if column.aggregate else None, column.aggregate)
                if found is not None and row[column.name] is not None
                else None
            )
            notes.append(context.describe(percent=column.percent) if context else "")
        rows.append(
            Row(
                model=key,
                rank=ranked if has_rank else None,
                values=values
                + [row[c.name] for c in bench.columns]
                + [row.get(c.name) for c in aggregations],
                notes=notes + [""] * len(aggregations),
            )
        )
    if not rows:
        return []
    # The table keeps the unit its ranking is read in; each other unit gets a table of its own.
    by_name = {c.name: c for c in columns}
    ranking = next((by_name[n].unit for n in bench.rank_by if n in by_name), None)
    tables: list[Table] = []
    for unit, members in _by_unit(columns, ranking).items():
        picked = [
            Row(
                model=row.model,
                rank=row.rank,
                values=[row.values[i] for i in members],
                notes=[row.notes[i] for i in members],
            )
            for row in rows
        ]
        primary = not tables
        if primary:
            title, description = bench.name, bench.description
        else:
            # Only the models with a score in these columns.
            picked = [row for row in picked if any(v is not None for v in row.values)]
            if not picked:
                continue
            title = f"{bench.name} ({_unit_label(unit)})"
            description = (
                f"{bench.description} The columns of {bench.name} in {_unit_label(unit)}, apart "
                f"so that no table mixes scales; ranks as in the {bench.name} table."
            )
        tables.append(
            Table(
                id=_unique(slug(title), taken),
                title=title,
                kind="benchmark",
                description=description,
                rank_by=list(bench.rank_by),
                unit=unit,
                scale=scale_note(unit),
                columns=[columns[i] for i in members],
                rows=picked,
            )
        )
    return tables


def _aggregation_columns(bench: Benchmark, columns: list[Column], ids: set[str]) -> list[Column]:
    """The columns of MTEB's leaderboard aggregations of ``bench`` (it names its columns' task
    types): the mean over task types of each type's mean, in the unit of the columns it
    averages, and the Borda rank (a unit of its own, so it stands in a table apart)."""
    averaged = [c for c in columns if c.name in bench.task_types]
    tasks = sorted({c.task for c in averaged})
    percent = all(c.percent for c in averaged)
    units = sorted({c.unit for c in averaged})
    shared: dict[str, Any] = {
        "task": ", ".join(tasks),
        "family": None,
        "domains": sorted({d for c in averaged for d in c.domains}),
    }
    return [
        Column(
            id=_unique(slug(MEAN_TASK_TYPE), ids),
            name=MEAN_TASK_TYPE,
            label="mean (task type)",
            score="mean over task types of each type's mean (MTEB)",
            higher_is_better=all(c.higher_is_better for c in averaged),
            percent=percent,
            unit=PERCENT if percent else " + ".join(units),
            **shared,
        ),
        Column(
            id=_unique(slug(BORDA_RANK), ids),
            name=BORDA_RANK,
            label="Borda rank",
            score="Borda count over the tasks, 1 = best (MTEB)",
            higher_is_better=False,
            percent=False,
            unit="rank",
            **shared,
        ),
    ]


def _mean_column(
    column_id: str,
    mean_of: tuple[str, ...],
    columns: list[Column],
    metas: Mapping[str, TaskMetadata | None],
) -> Column:
    """The column of a benchmark's aggregation rule: the mean of ``mean_of``."""
    averaged = [c for c in columns if c.name in mean_of]
    tasks = sorted({c.task for c in averaged})
    contexts = [_column_context(metas.get(t)) for t in tasks]
    families = {c["family"] for c in contexts}
    percent = all(c.percent for c in averaged)
    units = sorted({c.unit for c in averaged})
    return Column(
        id=column_id,
        name=_MEAN,
        label=_MEAN,
        task=", ".join(tasks),
        family=families.pop() if len(families) == 1 else None,
        domains=sorted({d for c in contexts for d in c["domains"]}),
        score=f"mean of {', '.join(mean_of)}",
        higher_is_better=all(c.higher_is_better for c in averaged),
        percent=percent,
        # A mean of numbers in different units is in none of them: it stands apart.
        unit=PERCENT if percent else " + ".join(units),
    )


def _family_tables(
    family: str,
    results: list[TaskResult],
    metas: Mapping[str, TaskMetadata | None],
    taken: set[str],
) -> list[Table]:
    """The family's tasks in no benchmark: one table per unit of their main scores."""
    tasks = sorted({r.task.name for r in results})
    ids = set(RESERVED_COLUMN_IDS)
    columns = []
    for task in tasks:
        meta = metas.get(task)
        score = (
            meta.main_score
            if meta is not None
            else next(r.main_score_name for r in results if r.task.name == task)
        )
        higher = (
            meta.higher_is_better
            if meta is not None
            else score.rpartition(":")[2] not in _LOWER_IS_BETTER_METRICS
        )
        columns.append(
            Column(
                id=_unique(slug(task), ids),
                name=task,
                label=task,
                task=task,
                score=score,
                higher_is_better=higher,
                percent=False,
                unit=column_unit(score, percent=False, higher_is_better=higher),
                **_column_context(meta),
            )
        )
    groups = _by_unit(columns, FRACTION)  # fractions first, then each other unit
    title = family_table_title(family)
    tables: list[Table] = []
    for unit, members in groups.items():
        index = {columns[i].task: k for k, i in enumerate(members)}
        values: dict[str, list[float | None]] = {}
        notes: dict[str, list[str]] = {}
        for result in results:
            if result.task.name in index:
                key = model_key(result.model.name, result.model.revision)
                row = values.setdefault(key, [None] * len(members))
                row[index[result.task.name]] = result.main_score
                notes.setdefault(key, [""] * len(members))[index[result.task.name]] = score_context(
                    result
                ).describe()
        # No benchmark defines how to combine these tasks, so rows are not ranked:
        # they are listed by name and the reader sorts by the column they care about.
        rows = [
            Row(model=key, rank=None, values=vals, notes=notes[key])
            for key, vals in sorted(values.items(), key=lambda kv: json.loads(kv[0])[0].lower())
        ]
        split = len(groups) > 1
        base = f"family-{slug(family)}"
        tables.append(
            Table(
                id=_unique(f"{base}-{slug(_unit_label(unit))}" if split else base, taken),
                title=f"{title} ({_unit_label(unit)})" if split else title,
                kind="family",
                description=f"{family_title(family)} tasks in no benchmark: each task's main "
                "score." + (f" Those whose main score is in {_unit_label(unit)}." if split else ""),
                rank_by=[],
                unit=unit,
                scale=scale_note(unit),
                columns=[columns[i] for i in members],
                rows=rows,
            )
        )
    return tables


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
            open_weights=model.open_weights,
            release_date=model.release_date,
            origin=_origin(group),
            reported_from=_reported_from(group),
            tasks=sorted({r.task.name for r in group}),
            latest=latest.date,
            audiobench_version=latest.audiobench_version,
        )
    return cards


def _origin(results: list[TaskResult]) -> Literal["computed", "reported", "mixed"]:
    kinds = {r.reported is not None for r in results}
    if kinds == {True}:
        return "reported"
    return "mixed" if kinds == {True, False} else "computed"


def _reported_from(results: list[TaskResult]) -> str | None:
    """``"MTEB 1.38.33 (embeddings-benchmark/results)"``: each source once, in order.

    MSEB publishes no framework version with its lines, only the dataset label it
    ran on, so an MSEB source reads ``"MSEB, dataset 1.0.0 (google-research/mseb)"``.
    """
    sources = [_source_label(r.reported) for r in results if r.reported is not None]
    return "; ".join(dict.fromkeys(sources)) or None


def _source_label(reported: ReportedSource) -> str:
    if reported.origin == "mseb" and reported.mteb_version is None:
        dataset = f", dataset {reported.dataset_revision}" if reported.dataset_revision else ""
        return f"MSEB{dataset} ({reported.repository})"
    version = reported.mteb_version or "(version unknown)"
    return f"{reported.origin.upper()} {version} ({reported.repository})"


def _number(obj: Any, name: str) -> float | None:
    value = getattr(obj, name, None)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _integer(obj: Any, name: str) -> int | None:
    value = getattr(obj, name, None)
    return value if isinstance(value, int) and not isinstance(value, bool) else None
