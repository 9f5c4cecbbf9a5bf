"""audiobench results as MSEB's result lines (``audiobench results export --format mseb``).

Every valid result of a task scored the MSEB way (``protocol=mseb``) becomes, subset by
subset, the ``.jsonl`` file MSEB writes for that task: ``<to>/<encoder>/<MSEB task>.jsonl``,
one line per sub-task (:mod:`audiobench.reported.mseb_format` says how reports map onto
lines), ready for a submission to MSEB's leaderboard. Nothing is per task: a task declared
later exports as soon as it is scored the MSEB way.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from audiobench.reported.model_ids import hub_id
from audiobench.reported.mseb_format import (
    AUDIOBENCH_DATA,
    EFFICIENCY,
    ENVIRONMENTS,
    METRICS,
    TARGETS,
    TaskType,
    metric_for_key,
    mseb_task_names,
    task_type,
)
from audiobench.results import TaskResult

if TYPE_CHECKING:
    from audiobench.leaderboard.validate import Problem
    from audiobench.task import Task

__all__ = ["MsebExport", "encoder_folder", "export_mseb", "result_lines"]


class NotExportable(ValueError):
    """A valid result that has no MSEB lines (another protocol, a task MSEB does not have)."""


@dataclass
class MsebExport:
    """What an MSEB export did: files written or left unchanged, results refused and why."""

    written: list[Path] = field(default_factory=list)
    unchanged: list[Path] = field(default_factory=list)
    #: (result file, why it has no MSEB lines) and (MSEB file, why it was not written)
    refused: list[tuple[Path, str]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    lines: int = 0

    @property
    def ok(self) -> bool:
        return not self.refused and not self.problems


def encoder_folder(model: str) -> str:
    """The folder of a model's lines: its hub id, ``/`` written ``__`` (one path component)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", hub_id(model).replace("/", "__")) or "_"


def _languages(subset: str, mseb_name: str) -> list[str]:
    """MSEB's ``eval_langs`` of a subset: ``en_us`` -> ``en-US``; a task without locale
    subsets takes it from an SVQ task name (``SVQEnUs...`` -> ``en-US``), else none."""
    from audiobench.task import DEFAULT_SUBSET

    if subset == DEFAULT_SUBSET:
        found = re.match(r"SVQ([A-Z][a-z]+)([A-Z][a-z]+)", mseb_name)
        return [f"{found[1].lower()}-{found[2].upper()}"] if found else []
    parts = subset.split("_")
    if len(parts) == 2 and all(p.isalpha() for p in parts):
        return [f"{parts[0]}-{parts[1].upper()}"]
    return [subset.replace("_", "-")]


def _score(
    metric_name: str, description: str, value: float, lo: float, hi: float, std: Any
) -> dict[str, Any]:
    return {
        "metric": metric_name,
        "description": description,
        "value": float(value),
        "min": lo,
        "max": hi,
        "std": float(std) if isinstance(std, int | float) and not isinstance(std, bool) else None,
    }


def _scores(family: str, values: Mapping[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """MSEB's score objects of ``values`` (one sub-task), and the fields MSEB has no metric
    for (kept for the way back)."""
    scores: list[dict[str, Any]] = []
    used: set[str] = set()
    for metric in METRICS.get(family, ()):
        value = values.get(metric.key)
        if not isinstance(value, int | float) or isinstance(value, bool):
            continue
        hi = metric.max
        if metric.name.endswith("Hits") and isinstance(values.get("num_segments"), int):
            hi = float(values["num_segments"])  # MSEB bounds the hits by the reference count
        if metric.name == "NumSegments":
            hi = float(value)
        std_key = f"{metric.key}_std"
        scores.append(
            _score(metric.name, metric.description, value, metric.min, hi, values.get(std_key))
        )
        used.update((metric.key, std_key))
    rest = {k: v for k, v in values.items() if k not in used and k not in (ENVIRONMENTS, TARGETS)}
    return scores, rest


def _efficiency(result: TaskResult) -> list[dict[str, Any]]:
    """``mean_encoding_size_bytes`` (when recorded) and ``flops`` (0.0 when not counted, as
    MSEB writes it)."""
    out = []
    for name, description, attribute in EFFICIENCY:
        value = getattr(result.efficiency, attribute)
        if value is None and name != "flops":
            continue
        out.append(_score(name, description, value or 0.0, 0, float("inf"), None))
    return out


def _task_metadata(
    cls: type[Task], result: TaskResult, name: str, kind: TaskType, subset: str
) -> dict[str, Any]:
    meta = cls.metadata
    main = metric_for_key(str(meta.family), meta.main_score)
    dataset = meta.dataset
    path = (
        f"https://huggingface.co/datasets/{dataset.path}"
        if dataset.kind == "huggingface"
        else dataset.path
    )
    declared = [
        _score(m.name, m.description, 0.0, m.min, m.max, None) for m in ([main] if main else [])
    ]
    return {
        "name": name,
        "description": meta.description,
        "reference": meta.reference,
        "type": kind.type,
        "category": "speech",
        "main_score": main.name if main else meta.main_score,
        "revision": result.task.revision,
        "dataset": {
            "path": path,
            "revision": result.task.revision,
            "documentation_file": None,
            "name": dataset.path.rsplit("/", 1)[-1],
        },
        "scores": declared,
        "eval_splits": list(meta.splits),
        "eval_langs": _languages(subset, name),
        "domains": list(meta.domains),
        "task_subtypes": list(kind.subtypes),
        "documentation_file": None,
        "dataset_documentation_file": None,
    }


def _line(
    encoder: str,
    sub_task: str,
    metadata: dict[str, Any],
    scores: list[dict[str, Any]],
    rest: dict[str, Any],
) -> dict[str, Any]:
    return {
        "name": encoder,
        "sub_task_name": sub_task,
        "task_metadata": metadata,
        "scores": scores,
        "url": None,
        "base_model": None,
        "tags": [],
        "task_specific_data": {AUDIOBENCH_DATA: rest} if rest else None,
    }


def result_lines(result: TaskResult) -> dict[str, list[dict[str, Any]]]:
    """MSEB task name -> its lines, for every subset of ``result``.

    Raises :class:`NotExportable` for a result with no MSEB lines, saying why.
    """
    from audiobench import registry

    cls = registry.tasks.get(result.task.name)
    protocol = (result.run.task_options.get("protocol") if result.run else None) or getattr(
        cls.options, "protocol", None
    )
    if protocol != "mseb":
        raise NotExportable(
            f"scored under protocol {protocol!r}; only results scored the MSEB way "
            "(protocol=mseb) mean what MSEB's metrics mean"
        )
    names = mseb_task_names(cls)
    if not names:
        raise NotExportable(
            f"{result.task.name} is no MSEB task: it is not scored the MSEB way by default, or "
            "it has several subsets and names no MSEB task for them (mseb_task_names)"
        )
    family = result.task.family
    encoder = hub_id(result.model.name)
    efficiency = _efficiency(result)
    files: dict[str, list[dict[str, Any]]] = {}
    for subset, report in result.scores.items():
        name = names.get(subset)
        if name is None:
            raise NotExportable(f"subset {subset!r} of {result.task.name} is no MSEB task")
        kind = task_type(name)
        if kind is None:
            raise NotExportable(f"{name} is not a task name of MSEB's kinds (its type is unknown)")
        metadata = _task_metadata(cls, result, name, kind, subset)
        scores, rest = _scores(family, report)
        lines: list[dict[str, Any]] = []
        targets = report.get(TARGETS)
        if isinstance(targets, Mapping) and targets:
            # SVQ clustering: one line per target, scored by the family's main metric; the
            # report's own fields ride along with the first.
            main = METRICS[family][0]
            for i, (target, value) in enumerate(targets.items()):
                own = [_score(main.name, main.description, value, main.min, main.max, None)]
                extra = {**rest, **{m["metric"]: m for m in scores}} if i == 0 else {}
                lines.append(_line(encoder, target, metadata, own + efficiency, extra))
        else:
            lines.append(_line(encoder, kind.sub_task, metadata, scores + efficiency, rest))
        environments = report.get(ENVIRONMENTS)
        for environment, values in (environments or {}).items():
            env_scores, env_rest = _scores(family, values)
            lines.append(
                _line(
                    encoder,
                    f"{kind.sub_task}:{environment}",
                    metadata,
                    env_scores + efficiency,
                    env_rest,
                )
            )
        files[name] = lines
    return files


def export_mseb(
    results_dir: str | os.PathLike[str],
    destination: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    skip_invalid: bool = False,
) -> MsebExport:
    """Write MSEB's ``<destination>/<encoder>/<Task>.jsonl`` for every valid MSEB result.

    Results are validated first (``results validate``, taking unpinned data: MSEB's datasets
    are versioned by label, not by hub commit); with any invalid file nothing is written
    unless ``skip_invalid``. A file already there with other lines is refused unless
    ``overwrite``.
    """
    from audiobench.leaderboard.validate import validate_paths

    validation = validate_paths([results_dir], allow_unpinned=True)
    outcome = MsebExport(problems=validation.problems)
    if validation.problems and not skip_invalid:
        return outcome
    planned: dict[Path, tuple[Path, list[dict[str, Any]]]] = {}
    for source, result in validation.accepted:
        try:
            files = result_lines(result)
        except NotExportable as exc:
            outcome.refused.append((source, str(exc)))
            continue
        folder = Path(destination) / encoder_folder(result.model.name)
        for name, lines in files.items():
            target = folder / f"{name}.jsonl"
            if target in planned:
                outcome.refused.append(
                    (
                        source,
                        f"{target} is also written from {planned[target][0]} (the same encoder "
                        "and MSEB task)",
                    )
                )
                continue
            planned[target] = (source, lines)
    for target, (_, lines) in planned.items():
        text = "".join(json.dumps(line) + "\n" for line in lines)
        if target.is_symlink() or (target.exists() and not target.is_file()):
            outcome.refused.append((target, "the destination is not a regular file"))
            continue
        if target.exists():
            if target.read_text(encoding="utf-8") == text:
                outcome.unchanged.append(target)
                continue
            if not overwrite:
                outcome.refused.append(
                    (
                        target,
                        "it holds other lines than the ones exported; pass --overwrite to "
                        "replace it",
                    )
                )
                continue
        from audiobench.leaderboard.export import write_atomically

        write_atomically(target, text.encode("utf-8"))
        outcome.written.append(target)
        outcome.lines += len(lines)
    return outcome
