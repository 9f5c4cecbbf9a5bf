"""MSEB's published result lines, read into audiobench result files marked *reported*.

MSEB keeps ``<results>/<encoder>/<Task>.jsonl``: one JSON line per sub-task of the task (see
:mod:`audiobench.reported.mseb_format`). A file converts when its task is one audiobench
declares and scores the MSEB way by default (``protocol="mseb"``), found by MSEB's task name
(the task itself, or the subset of a task naming it in ``mseb_task_names``): nothing is
per task, so a task declared later converts too. The file's lines become the report of that
subset (the task's own ``Report`` model: the base sub-task's scores, the noise slices as
``environments``, SVQ clustering's targets as ``targets``), averaged by the task's own
``summarize``; the encoder's sizes go to ``efficiency``. The result records where the numbers
come from (:class:`~audiobench.results.ReportedSource`, origin ``mseb``), passes
:func:`audiobench.leaderboard.validate.validate_file` (taking unpinned data: MSEB versions
its datasets by label, never by hub commit) and is written only then.

A file that does not convert is refused with a reason (:data:`REASONS`) naming the file (and
the line, for a malformed one), and the rest go on.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import typing
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from audiobench.reported.model_ids import HUB_MODELS, audiobench_model
from audiobench.reported.mseb_format import (
    AUDIOBENCH_DATA,
    EFFICIENCY,
    ENVIRONMENTS,
    METRICS,
    TARGETS,
    mseb_task_names,
    task_type,
)
from audiobench.reported.mteb_import import (
    ImportSummary,
    Refusal,
    _fingerprint,
    placement_problem,
    reported_parts,
)
from audiobench.results import (
    PINNED_REVISION,
    Efficiency,
    ModelInfo,
    ReportedSource,
    TaskResult,
    utc_now,
)
from audiobench.version import __version__

if TYPE_CHECKING:
    from audiobench.task import Task

__all__ = [
    "REASONS",
    "MsebImportSummary",
    "MsebRefused",
    "convert_files",
    "find_mseb_files",
    "import_mseb",
]

#: Why a file is refused, in the order the summary lists them.
REASONS = (
    "unreadable",
    "malformed line",
    "unknown task",
    "not scored the MSEB way",
    "dataset revision",
    "missing metric",
    "invalid scores",
    "fails validation",
    "duplicate",
    "would overwrite",
)

#: The fields every line must have, with their JSON types.
_LINE_FIELDS: Mapping[str, type | tuple[type, ...]] = {
    "name": str,
    "sub_task_name": str,
    "task_metadata": dict,
    "scores": list,
}
_EFFICIENCY_NAMES = frozenset(name for name, _, _ in EFFICIENCY)


class MsebRefused(Exception):
    """A published file that does not convert: ``reason`` is one of :data:`REASONS`."""

    def __init__(self, reason: str, message: str) -> None:
        assert reason in REASONS, reason
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass
class MsebImportSummary(ImportSummary):
    """What an MSEB import saw (files and lines), wrote and refused."""

    lines: int = 0
    #: Files converted (a result holds one file per subset of its task).
    converted: int = 0
    #: Lines in the files converted.
    converted_lines: int = 0

    def counts(self) -> dict[str, int]:
        found = Counter(r.reason for r in self.refused)
        return {reason: found[reason] for reason in REASONS if found[reason]}

    def line(self) -> str:
        """``converted 3 of 5 file(s) (15 of 25 line(s)) into 3 result(s); refused 2: ...``."""
        text = (
            f"converted {self.converted} of {self.seen} file(s) ({self.converted_lines} of "
            f"{self.lines} line(s)) into {len(self.written)} result(s)"
        )
        if not self.refused:
            return text + "; refused none"
        reasons = ", ".join(f"{reason} {n}" for reason, n in self.counts().items())
        return f"{text}; refused {len(self.refused)} file(s): {reasons}"


def find_mseb_files(root: str | os.PathLike[str]) -> list[Path]:
    """Every ``.jsonl`` file under ``root`` (MSEB's ``results`` folder, one folder per encoder),
    sorted; hidden entries and links are not followed."""
    found: list[Path] = []
    for directory, subdirs, files in os.walk(Path(root)):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
        found += [
            path
            for name in sorted(files)
            if name.endswith(".jsonl")
            and not name.startswith(".")
            and not (path := Path(directory) / name).is_symlink()
        ]
    return found


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _check_score(score: Any, where: str) -> dict[str, Any]:
    if not isinstance(score, dict) or not isinstance(score.get("metric"), str):
        raise MsebRefused("malformed line", f"{where}: a score is not an object with a 'metric'")
    value = _number(score.get("value"))
    if value is None or math.isnan(value):
        raise MsebRefused(
            "malformed line", f"{where}: score {score['metric']!r} has no number 'value'"
        )
    std = score.get("std")
    if std is not None and (_number(std) is None or not math.isfinite(float(std)) or std < 0):
        raise MsebRefused(
            "malformed line", f"{where}: score {score['metric']!r} has a bad 'std' {std!r}"
        )
    return score


def read_lines(path: Path) -> list[dict[str, Any]]:
    """The lines of one MSEB file, each checked for MSEB's fields; refusals name the line."""
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MsebRefused("unreadable", f"cannot be read as UTF-8 text: {exc}") from exc
    lines: list[dict[str, Any]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"line {number}"
        try:
            data = json.loads(raw)  # MSEB writes Infinity for unbounded maxima: json reads it
        except (ValueError, RecursionError) as exc:
            raise MsebRefused("malformed line", f"{where}: not JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise MsebRefused("malformed line", f"{where}: not a JSON object")
        for key, kind in _LINE_FIELDS.items():
            if not isinstance(data.get(key), kind):
                raise MsebRefused("malformed line", f"{where}: no {key!r} of MSEB's line")
        if not isinstance(data["task_metadata"].get("name"), str):
            raise MsebRefused("malformed line", f"{where}: task_metadata has no 'name'")
        data["scores"] = [_check_score(s, where) for s in data["scores"]]
        data["_line"] = number
        lines.append(data)
    if not lines:
        raise MsebRefused("unreadable", "holds no line")
    names = {line["task_metadata"]["name"] for line in lines}
    if len(names) > 1:
        raise MsebRefused("malformed line", f"lines of several tasks ({', '.join(sorted(names))})")
    return lines


@cache
def _declared() -> dict[str, tuple[str, str]]:
    """MSEB task name -> (audiobench task, subset), over every task scored the MSEB way."""
    from audiobench import registry

    found: dict[str, tuple[str, str]] = {}
    for name in registry.tasks.names():
        try:
            cls = registry.tasks.get(name)
        except (LookupError, ImportError):
            continue
        for subset, mseb_name in mseb_task_names(cls).items():
            found.setdefault(mseb_name, (cls.metadata.name, subset))
    return found


def _task_for(mseb_name: str) -> tuple[type[Task], str]:
    from audiobench import registry

    place = _declared().get(mseb_name)
    if place is None:
        try:
            cls = registry.tasks.get(mseb_name)
        except (LookupError, ImportError):
            raise MsebRefused(
                "unknown task", f"audiobench declares no MSEB task {mseb_name!r}"
            ) from None
        protocol = getattr(cls.options, "protocol", None)
        raise MsebRefused(
            "not scored the MSEB way",
            f"audiobench's task {mseb_name} is scored under protocol {protocol!r} by default, "
            "so MSEB's metrics do not mean its scores; only tasks scored the MSEB way import",
        )
    return registry.tasks.get(place[0]), place[1]


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The report model inside ``annotation`` (``X | None``, ``dict[str, X] | None``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def _values(family: str, line: Mapping[str, Any], dropped: set[str]) -> dict[str, Any]:
    """The report fields of one line: each MSEB metric at its key (``std`` at ``<key>_std``),
    and the fields an audiobench export kept in ``task_specific_data``."""
    by_name = {m.name: m for m in METRICS.get(family, ())}
    values: dict[str, Any] = {}
    for score in line["scores"]:
        metric = by_name.get(score["metric"])
        if metric is None:
            if score["metric"] not in _EFFICIENCY_NAMES:
                dropped.add(score["metric"])
            continue
        values[metric.key] = float(score["value"])
        if score.get("std") is not None:
            values[f"{metric.key}_std"] = float(score["std"])
    extra = line.get("task_specific_data")
    if isinstance(extra, dict) and isinstance(extra.get(AUDIOBENCH_DATA), dict):
        values.update(extra[AUDIOBENCH_DATA])
    return values


def _fit(model: type[BaseModel], values: dict[str, Any], dropped: set[str]) -> dict[str, Any]:
    """``values`` without the fields ``model`` has no place for (recorded in ``dropped``);
    a model taking extra fields keeps them all."""
    if model.model_config.get("extra") == "allow":
        return values
    kept = {k: v for k, v in values.items() if k in model.model_fields}
    dropped.update(k for k in values if k not in kept)
    return kept


def _report(
    task: Task, family: str, lines: list[dict[str, Any]], base: str, dropped: set[str]
) -> Any:
    """The subset's report built from its lines (the task's ``Report``)."""
    Report = task.Report
    top: dict[str, Any] | None = None
    slices: dict[str, dict[str, Any]] = {}
    targets: dict[str, float] = {}
    main = METRICS[family][0] if METRICS.get(family) else None
    for line in lines:
        sub = line["sub_task_name"]
        values = _values(family, line, dropped)
        if ":" in sub:
            head, _, environment = sub.partition(":")
            if head != base:
                raise MsebRefused(
                    "malformed line",
                    f"line {line['_line']}: sub-task {sub!r} of another task than {base!r}",
                )
            slices[environment] = values
        elif sub == base:
            top = values
        elif main is not None and main.key in values:
            targets[sub] = values.pop(main.key)
            extra = {k: v for k, v in values.items() if not k.startswith(main.key)}
            if extra and top is None:
                top = extra  # the report's own fields, exported beside the first target
        else:
            raise MsebRefused(
                "missing metric",
                f"line {line['_line']}: sub-task {sub!r} is neither {base!r}, a noise slice of "
                "it, nor a target with the family's main score",
            )
    if top is None and not targets:
        raise MsebRefused("missing metric", f"no line of the task's own sub-task {base!r}")
    data = _fit(Report, dict(top or {}), dropped)
    if slices:
        field = Report.model_fields.get(ENVIRONMENTS)
        nested = _model_of(field.annotation) if field is not None else None
        if nested is None:
            dropped.update(f"{base}:{e}" for e in slices)
        else:
            data[ENVIRONMENTS] = {e: _fit(nested, v, dropped) for e, v in slices.items()}
    if targets:
        if TARGETS not in Report.model_fields:
            dropped.update(targets)
        else:
            data[TARGETS] = targets
    try:
        return Report.model_validate(data)
    except ValidationError as exc:
        missing = [e["loc"] for e in exc.errors() if e["type"] == "missing"]
        if missing:
            names = ", ".join(dict.fromkeys(str(loc[-1]) for loc in missing))
            sliced = " (also in its noise slices)" if any(len(loc) > 1 for loc in missing) else ""
            raise MsebRefused(
                "missing metric",
                f"{task.metadata.name}'s report needs {names}{sliced}, which MSEB's lines do not "
                "hold",
            ) from exc
        raise MsebRefused(
            "invalid scores", f"{exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}"
        ) from exc


@dataclass(frozen=True)
class _Parsed:
    path: Path
    lines: list[dict[str, Any]]
    mseb_name: str
    cls: type[Task]
    subset: str


def _parse(path: Path) -> _Parsed:
    lines = read_lines(path)
    mseb_name = lines[0]["task_metadata"]["name"]
    cls, subset = _task_for(mseb_name)
    return _Parsed(path, lines, mseb_name, cls, subset)


def _revision(metadata: Mapping[str, Any]) -> str | None:
    dataset = metadata.get("dataset")
    revision = dataset.get("revision") if isinstance(dataset, dict) else None
    revision = revision or metadata.get("revision")
    return revision if isinstance(revision, str) and revision else None


def convert_files(
    files: list[_Parsed],
    root: Path,
    *,
    allow_revision_mismatch: bool = False,
    repository: str | None = None,
    imported: datetime | None = None,
) -> TaskResult:
    """One audiobench result from the MSEB files of one encoder and one audiobench task (one
    file per subset); raises :class:`MsebRefused`."""

    first = files[0]
    cls = first.cls
    meta = cls.metadata
    family = str(meta.family)
    task = cls()
    revision = _revision(first.lines[0]["task_metadata"])
    matches = revision == meta.revision
    task_pinned = (
        meta.revision is not None and re.fullmatch(PINNED_REVISION, meta.revision) is not None
    )
    if not matches and task_pinned and not allow_revision_mismatch:
        raise MsebRefused(
            "dataset revision",
            f"{first.mseb_name} was run on dataset revision {revision!r}, not the pinned "
            f"{meta.revision!r} (--allow-revision-mismatch imports it for a private table)",
        )
    dropped: set[str] = set()
    reports = {}
    for parsed in sorted(files, key=lambda p: p.subset):
        kind = task_type(parsed.mseb_name)
        if kind is None:
            raise MsebRefused(
                "unknown task", f"{parsed.mseb_name} is of no MSEB task type known here"
            )
        reports[parsed.subset] = _report(task, family, parsed.lines, kind.sub_task, dropped)
    # MSEB's leaderboard knows a model by its folder (a few lines name another encoder);
    # an export here writes a hub id's "/" as "__".
    model = first.path.parent.name.replace("__", "/", 1)
    published = first.lines[0]["name"]
    fingerprint = _fingerprint(model, None, "mseb")
    base_scores = {s["metric"]: s["value"] for s in first.lines[0]["scores"]}
    size = base_scores.get("mean_encoding_size_bytes")
    flops = base_scores.get("flops")
    declared = list(meta.subsets)
    chosen = sorted(reports)
    splits = first.lines[0]["task_metadata"].get("eval_splits")
    split = (
        splits[0] if isinstance(splits, list) and splits and isinstance(splits[0], str) else "test"
    )
    return TaskResult(
        **reported_parts(
            task,
            reports,
            revision=revision,
            fingerprint=fingerprint,
            subsets=None if chosen == sorted(declared) else chosen,
        ),
        model=ModelInfo(
            name=model,
            revision=None,
            source=model,
            pooling="as published",
            fingerprint=fingerprint,
            sample_rate=None,
        ),
        audiobench_version=__version__,
        details={"protocol": {"name": "mseb", "computed_by": "MSEB"}},
        efficiency=Efficiency(
            mean_encoding_size_bytes=size if isinstance(size, float) and size >= 0 else None,
            # MSEB writes 0.0 when it did not count them.
            flops_per_example=flops if isinstance(flops, float) and flops > 0 else None,
        ),
        cache=None,
        timings=None,
        environment=None,
        date=imported or utc_now(),
        reported=ReportedSource(
            origin="mseb",
            repository=repository or str(root),
            file=", ".join(
                p.path.relative_to(root).as_posix() if p.path.is_relative_to(root) else str(p.path)
                for p in files
            ),
            mteb_version=None,
            model=published,
            model_revision=None,
            dataset_revision=revision,
            revision_matches=matches,
            split=split,
            audiobench_model=_audiobench_model(model),
            dropped_keys=sorted(dropped),
            dropped_subsets=[],
        ),
    )


def _audiobench_model(model: str) -> str | None:
    """The audiobench model computing ``model``'s embeddings, for a hub id or a model of the
    table; MSEB's own encoder names (``whisper_speech_to_text``) are none of those."""
    return audiobench_model(model) if "/" in model or model in HUB_MODELS else None


def import_mseb(
    root: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    allow_revision_mismatch: bool = False,
    repository: str | None = None,
) -> MsebImportSummary:
    """Convert every MSEB file under ``root`` into audiobench results under ``output``.

    The files of one encoder folder that are subsets of one audiobench task become one result;
    every file is converted or refused, and a refusal never stops the others. A result is
    written only once it validates, and never over a result computed here.
    """
    base = Path(root)
    summary = MsebImportSummary(root=base)
    stamp = utc_now()
    groups: dict[tuple[Path, str], list[_Parsed]] = {}
    for path in find_mseb_files(base):
        summary.seen += 1
        with contextlib.suppress(OSError):  # an unreadable file is refused below
            summary.lines += sum(1 for raw in path.read_bytes().splitlines() if raw.strip())
        try:
            parsed = _parse(path)
        except MsebRefused as exc:
            summary.refused.append(Refusal(path, exc.reason, exc.message))
            continue
        groups.setdefault((path.parent, parsed.cls.metadata.name), []).append(parsed)
    targets: dict[Path, list[Path]] = {}
    for files in groups.values():
        paths = [p.path for p in files]
        try:
            subsets = Counter(p.subset for p in files)
            repeated = [s for s, n in subsets.items() if n > 1]
            if repeated:
                raise MsebRefused(
                    "duplicate", f"several files hold subset(s) {', '.join(repeated)} of one task"
                )
            result = convert_files(
                files,
                base,
                allow_revision_mismatch=allow_revision_mismatch,
                repository=repository or str(root),
                imported=stamp,
            )
            target = result.path(output)
            earlier = targets.get(target)
            # MSEB's data is versioned by label: unpinned.
            problem = placement_problem(
                result, target, earlier[0] if earlier else None, allow_unpinned=True
            )
            if problem:
                raise MsebRefused(*problem)
        except MsebRefused as exc:
            summary.refused += [Refusal(p, exc.reason, exc.message) for p in paths]
            continue
        targets[target] = paths
        summary.written.append(result.save(output))
        summary.converted += len(files)
        summary.converted_lines += sum(len(p.lines) for p in files)
    return summary
