"""MTEB's published result files, read into audiobench result files marked *reported*.

MTEB's results repository (and any folder in its layout) holds
``<org>__<model>/<revision>/<Task>.json`` and a ``model_meta.json`` beside them. A task file
names its task (``task_name``), the dataset revision and MTEB version it was run with, and its
``scores`` per split: a list of entries, one per ``hf_subset``, each with ``main_score`` and the
metric keys (``scores_per_experiment`` for repeated classification experiments,
``v_measures`` for clustering's bootstraps).

A file converts when its task is one audiobench declares and scores the MTEB way by default
(``protocol="mteb"``, so the keys mean what they mean in MTEB): nothing is hard-coded per task,
so every such task declared later converts too. The scores of the task's evaluated split
become, subset by subset, the report a local ``protocol=mteb`` run writes (the task's own
``Report`` model), averaged by the task's own ``summarize``; the main score is the task's main
key of that summary. The result records where the numbers come from
(:class:`~audiobench.results.ReportedSource`) and the model's metadata from
``model_meta.json``; it has no cache, timings or environment, which only a run here records.
Each converted file passes :func:`audiobench.leaderboard.validate.validate_file` before it is
written.

A file that does not convert is refused with a reason (:data:`REASONS`) and the rest go on.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import tempfile
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from audiobench.reported.model_ids import audiobench_model
from audiobench.results import (
    PINNED_REVISION,
    DatasetIdentity,
    ModelInfo,
    ReportedSource,
    RunIdentity,
    TaskInfo,
    TaskResult,
    load_result,
    utc_now,
)
from audiobench.version import __version__

if TYPE_CHECKING:
    from audiobench.reports import Report
    from audiobench.task import Task

__all__ = [
    "MODEL_META",
    "REASONS",
    "ImportSummary",
    "Refusal",
    "Refused",
    "convert_file",
    "find_mteb_files",
    "import_mteb",
    "reported_parts",
]

#: The model metadata file beside a model revision's task files.
MODEL_META = "model_meta.json"

#: Why a file is refused, in the order the summary lists them.
REASONS = (
    "unreadable",
    "old MTEB format",
    "unknown task",
    "not scored the MTEB way",
    "dataset revision",
    "missing split",
    "missing subset",
    "missing main score",
    "invalid scores",
    "fails validation",
    "duplicate",
    "would overwrite",
)

#: Published keys kept apart from the metric keys (what the entry is, not a score).
_ENTRY_KEYS = frozenset({"hf_subset", "languages", "main_score"})
#: The prefix MTEB's files before 2.5 give the hit rate (``cv_recall_at_5``), read as
#: ``hit_rate_at_<k>``.
_LEGACY_HIT_RATE = "cv_recall_at_"
_METRIC_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


class Refused(Exception):
    """A published file that does not convert: ``reason`` is one of :data:`REASONS`."""

    def __init__(self, reason: str, message: str) -> None:
        assert reason in REASONS, reason
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass(frozen=True)
class Refusal:
    """One refused file, its reason and what is wrong."""

    file: Path
    reason: str
    message: str

    def line(self, root: Path | None = None) -> str:
        shown = (
            self.file.relative_to(root) if root and self.file.is_relative_to(root) else self.file
        )
        return f"{shown}: refused ({self.reason}): {self.message}"


@dataclass
class ImportSummary:
    """What an import saw, wrote and refused."""

    root: Path
    seen: int = 0
    written: list[Path] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """Refused files by reason, in :data:`REASONS` order."""
        found = Counter(r.reason for r in self.refused)
        return {reason: found[reason] for reason in REASONS if found[reason]}

    def line(self) -> str:
        """``converted 12 of 20 file(s); refused 8: unknown task 6, dataset revision 2``."""
        text = f"converted {len(self.written)} of {self.seen} file(s)"
        if not self.refused:
            return text + "; refused none"
        reasons = ", ".join(f"{reason} {n}" for reason, n in self.counts().items())
        return f"{text}; refused {len(self.refused)}: {reasons}"


def _results_root(root: Path) -> Path:
    """A clone of the results repository keeps its files under ``results/``."""
    inner = root / "results"
    return inner if inner.is_dir() and not (root / MODEL_META).exists() else root


def find_mteb_files(root: str | os.PathLike[str]) -> list[Path]:
    """Every task file under ``root`` (a clone of MTEB's results repository or a folder in its
    layout), sorted; ``model_meta.json`` files are metadata, not task files. Links are not
    followed."""
    base = _results_root(Path(root))
    found: list[Path] = []
    for directory, subdirs, files in os.walk(base):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
        found += [
            path
            for name in sorted(files)
            if name.endswith(".json")
            and name != MODEL_META
            and not name.startswith(".")
            and not (path := Path(directory) / name).is_symlink()
        ]
    return found


# ---------------------------------------------------------------------------- reading


def _read_json(path: Path, raw: bytes | None = None) -> Any:
    try:
        return json.loads((path.read_bytes() if raw is None else raw).decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise Refused("unreadable", f"not a readable JSON file: {exc}") from exc


_TASK_NAME = re.compile(rb'"task_name"\s*:\s*"((?:[^"\\]|\\.)*)"')


def _undeclared_task(raw: bytes) -> str | None:
    """The task a file names, when that is plainly a task audiobench does not declare.

    A clone of the results repository is mostly text tasks (1.8 GB); their files are refused
    from the one ``"task_name"`` they hold, found without parsing the whole file. Anything
    less plain (no such key, or several) is parsed.
    """
    from audiobench import registry

    found = _TASK_NAME.findall(raw)
    if len(found) != 1:
        return None
    try:
        name = json.loads(b'"' + found[0] + b'"')
    except ValueError:
        return None
    return None if _audiobench_name(name) in registry.tasks.names() else str(name)


@cache
def _mteb_names() -> dict[str, str]:
    from audiobench.tasks.mteb_audio import mteb_task_names

    names: dict[str, str] = mteb_task_names()
    return names


def _audiobench_name(mteb_name: str) -> str:
    """The task that scores MTEB's ``mteb_name`` (``ESC50`` is ``ESC50.mteb`` here: audiobench's
    own ESC50 is scored another way)."""
    return _mteb_names().get(mteb_name, mteb_name)


def _model_meta(revision_dir: Path) -> dict[str, Any]:
    """``model_meta.json`` of a model revision ({} when there is none)."""
    path = revision_dir / MODEL_META
    if not path.is_file():
        return {}
    try:
        data = _read_json(path)
    except Refused as exc:
        raise Refused("unreadable", f"{MODEL_META} beside it: {exc.message}") from exc
    return data if isinstance(data, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _whole(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value >= 0:
        return value
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    return None


def _release(value: Any) -> date | None:
    try:
        return date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _number(value: Any) -> float | None:
    """A published number as audiobench writes it: finite, else None (undefined)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _is_score(value: Any) -> bool:
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool))


# ---------------------------------------------------------------------------- converting


def _task_class(mteb_name: str) -> type[Task]:
    from audiobench import registry

    name = _audiobench_name(mteb_name)
    try:
        cls = registry.tasks.get(name)
    except registry.UnknownNameError as exc:
        raise Refused("unknown task", f"audiobench declares no task {name!r}") from exc
    except (LookupError, ImportError) as exc:
        raise Refused("unknown task", f"task {name!r} cannot be loaded: {exc}") from exc
    protocol = getattr(cls.options, "protocol", None)
    if protocol != "mteb" or cls.metadata.dataset.kind != "huggingface":
        raise Refused(
            "not scored the MTEB way",
            f"audiobench's task {name} is scored under protocol {protocol!r} on "
            f"{cls.metadata.dataset.kind} data by default, so MTEB's keys do not mean its "
            "scores; only tasks scored as MTEB scores them (protocol=mteb) import",
        )
    return cls


def evaluated_split(splits: tuple[str, ...]) -> str:
    """The split a task's scores are published under: its one split, or the split scored
    against ``train`` (``test`` where present), as the MTEB protocol picks it."""
    others = [s for s in splits if s != "train"]
    if len(splits) == 1 or not others:
        return splits[0]
    return "test" if "test" in others else others[0]


def _report_fields(
    entry: Mapping[str, Any],
) -> tuple[dict[str, float | None], list[dict[str, float | None]] | None, list[str]]:
    """An entry's metric keys, its repeated experiments (or None), and the keys left out.

    Kept: every key named as audiobench names metrics (lower-case words) with a number or
    null. ``scores_per_experiment`` gives the experiments; ``v_measures`` (one level of
    bootstraps) gives clustering's. Anything else (MTEB 1's ``nAUC_*`` and ``mrr@10``, a
    hierarchy of levels) is listed as left out.
    """
    metrics: dict[str, float | None] = {}
    experiments: list[dict[str, float | None]] | None = None
    dropped: list[str] = []
    for key, value in entry.items():
        if key in _ENTRY_KEYS:
            continue
        if key == "scores_per_experiment" and isinstance(value, list):
            rows = [e for e in value if isinstance(e, dict)]
            experiments = [
                {k: _number(v) for k, v in e.items() if _METRIC_NAME.match(k) and _is_score(v)}
                for e in rows
            ]
        elif key == "v_measures" and isinstance(value, dict) and len(value) == 1:
            (level,) = value.values()
            if isinstance(level, list) and all(_is_score(v) for v in level):
                experiments = [{"v_measure": _number(v)} for v in level]
            else:
                dropped.append(key)
        elif _METRIC_NAME.match(key) and _is_score(value):
            metrics[key] = _number(value)
        else:
            dropped.append(key)
    for key in [k for k in metrics if k.startswith(_LEGACY_HIT_RATE)]:
        # MTEB before 2.5 called the hit rate cv_recall (trec_eval's success@k).
        renamed = "hit_rate_at_" + key.removeprefix(_LEGACY_HIT_RATE)
        metrics.setdefault(renamed, metrics[key])
        del metrics[key]
    return metrics, experiments, dropped


def _subset_reports(
    task: Task, entries: list[Any], where: str
) -> tuple[dict[str, Any], list[str], list[str]]:
    """Each declared subset's report (the task's ``Report``), the keys left out, and the
    subsets whose published experiments were left out for not averaging to the published
    means. Published subsets the task does not declare are not read (a local run scores the
    declared ones only, so its mean is over those)."""
    from audiobench.task import DEFAULT_SUBSET

    meta = task.metadata
    declared = list(meta.subsets) or [DEFAULT_SUBSET]
    by_subset: dict[str, Mapping[str, Any]] = {}
    for entry in entries:
        if isinstance(entry, dict):
            by_subset[str(entry.get("hf_subset", DEFAULT_SUBSET))] = entry
    missing = [s for s in declared if s not in by_subset]
    if missing:
        shown = ", ".join(missing[:5]) + (
            f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        )
        raise Refused(
            "missing subset",
            f"{where}: no scores for subset(s) {shown} of {meta.name}; its mean needs all "
            f"{len(declared)}",
        )
    main_key = meta.main_score
    reports: dict[str, Any] = {}
    dropped: set[str] = set()
    experiments_dropped: list[str] = []
    for subset in declared:
        metrics, experiments, left_out = _report_fields(by_subset[subset])
        dropped.update(left_out)
        if main_key not in metrics:
            published = by_subset[subset].get("main_score")
            raise Refused(
                "missing main score",
                f"{where}, subset {subset}: no key {main_key!r} (the task's main score); the "
                f"file's main_score {published!r} is another metric's",
            )
        fields: dict[str, Any] = {**metrics, "n_samples": None}
        try:
            reports[subset] = task.Report.model_validate(
                {**fields, **({"per_experiment": experiments} if experiments else {})}
            )
        except ValueError as exc:
            if not experiments:
                raise Refused("invalid scores", f"{where}, subset {subset}: {exc}") from exc
            # Published experiments rounded apart from their mean: the means are the scores.
            try:
                reports[subset] = task.Report.model_validate(fields)
            except ValueError as inner:
                raise Refused("invalid scores", f"{where}, subset {subset}: {inner}") from inner
            experiments_dropped.append(subset)
    return reports, sorted(dropped), experiments_dropped


def _fingerprint(model: str, revision: str | None, loader: str | None) -> str:
    blob = json.dumps({"model": model, "revision": revision, "loader": loader}, sort_keys=True)
    return "reported-" + hashlib.blake2b(blob.encode(), digest_size=16).hexdigest()


def reported_parts(
    task: Task,
    reports: Mapping[str, Report],
    *,
    revision: str | None,
    fingerprint: str,
    subsets: list[str] | None = None,
) -> dict[str, Any]:
    """The fields every imported result shares, whichever benchmark published it: ``task``'s
    identity on data ``revision`` (pinned when it is a hub commit), and the scores of
    ``reports`` summarised as a local run summarises them. ``subsets``: the subsets run, when
    fewer than the task declares (None: all)."""
    from audiobench.reports import score_at

    meta = task.metadata
    pinned = revision is not None and re.fullmatch(PINNED_REVISION, revision) is not None
    summary = task.summarize(reports)
    written = task.always_aggregate or len(reports) > 1
    return {
        "task": TaskInfo(
            name=meta.name,
            family=str(meta.family),
            revision=revision,
            dataset=meta.dataset.path,
            subsets=sorted(meta.subsets),
        ),
        "run": RunIdentity(
            task=meta.name,
            dataset=DatasetIdentity(
                kind="huggingface",
                source=meta.dataset.path,
                revision=revision,
                config=meta.dataset.config,
                pinned=pinned,
            ),
            model_fingerprint=fingerprint,
            task_options=task.options.model_dump(mode="json"),
            subsets=subsets,
            on_error="raise",
            max_clip_seconds=None,  # published scores read every clip whole
        ),
        "main_score": score_at(summary, task.main_score_path),
        "main_score_name": meta.main_score,
        "scores": {s: r.to_json() for s, r in reports.items()},
        "aggregates": {task.public_group: summary.to_json()} if written else {},
    }


def convert_file(
    path: Path,
    root: Path,
    *,
    allow_revision_mismatch: bool = False,
    repository: str | None = None,
    imported: datetime | None = None,
) -> TaskResult:
    """The audiobench result of one published task file; raises :class:`Refused`."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise Refused("unreadable", f"cannot be read: {exc}") from exc
    undeclared = _undeclared_task(raw)
    if undeclared is not None:
        raise Refused("unknown task", f"audiobench declares no task {undeclared!r}")
    data = _read_json(path, raw)
    old_name = data.get("mteb_dataset_name") if isinstance(data, dict) else None
    if isinstance(old_name, str) and "scores" not in data:
        # Before MTEB 1.11 a file named its task so and kept its splits at the top level;
        # it predates MTEB's audio tasks.
        _task_class(old_name)  # a task audiobench does not declare is refused as such
        raise Refused(
            "old MTEB format",
            f"MTEB's format before 1.11 (task {old_name}, splits at the top level) is not read",
        )
    if not isinstance(data, dict) or not isinstance(data.get("scores"), dict):
        raise Refused("unreadable", "not an MTEB result file (no 'scores' object)")
    name = _text(data.get("task_name")) or path.stem
    cls = _task_class(name)
    meta = cls.metadata
    revision = _text(data.get("dataset_revision"))
    matches = revision == meta.revision
    if not matches and not allow_revision_mismatch:
        raise Refused(
            "dataset revision",
            f"{name} was run on dataset revision {revision!r}, not the pinned {meta.revision!r} "
            "(--allow-revision-mismatch imports it for a private table)",
        )
    split = evaluated_split(tuple(meta.splits))
    entries = data["scores"].get(split)
    if not isinstance(entries, list) or not entries:
        published = ", ".join(map(str, data["scores"])) or "none"
        raise Refused(
            "missing split",
            f"no scores for split {split!r}, the one {name} evaluates (published: {published})",
        )
    task = cls()
    reports, dropped, experiments_dropped = _subset_reports(task, entries, f"split {split}")
    published_subsets = {str(e.get("hf_subset")) for e in entries if isinstance(e, dict)}
    model_meta = _model_meta(path.parent)
    model = _text(model_meta.get("name")) or path.parent.parent.name.replace("__", "/", 1)
    model_revision = _text(model_meta.get("revision")) or path.parent.name
    loader = _text(model_meta.get("loader"))
    fingerprint = _fingerprint(model, model_revision, loader)
    modalities = model_meta.get("modalities")
    open_weights = model_meta.get("open_weights")
    evaluation_time = _number(data.get("evaluation_time"))
    mteb_version = _text(data.get("mteb_version"))
    details: dict[str, Any] = {
        "protocol": {"name": "mteb", "computed_by": f"MTEB {mteb_version or '(version unknown)'}"}
    }
    if experiments_dropped:
        # MTEB rounds each experiment and their mean apart, to six decimals.
        details["per_experiment_left_out"] = {
            "subsets": experiments_dropped,
            "why": "the published experiments do not average to the published means at the "
            "precision written",
        }
    return TaskResult(
        **reported_parts(task, reports, revision=revision, fingerprint=fingerprint),
        model=ModelInfo(
            name=model,
            revision=model_revision,
            source=model,
            pooling=f"as MTEB's {loader} pools" if loader else "as published",
            fingerprint=fingerprint,
            n_parameters=_whole(model_meta.get("n_parameters")),
            embedding_dim=_whole(model_meta.get("embed_dim")),
            sample_rate=None,
            license=_text(model_meta.get("license")),
            open_weights=open_weights if isinstance(open_weights, bool) else None,
            release_date=_release(model_meta.get("release_date")),
            modalities=[str(m) for m in modalities] if isinstance(modalities, list) else None,
        ),
        audiobench_version=__version__,
        details=details,
        cache=None,
        timings=None,
        environment=None,
        date=imported or utc_now(),
        reported=ReportedSource(
            origin="mteb",
            repository=repository or str(root),
            file=path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path),
            mteb_version=mteb_version,
            model=model,
            model_revision=model_revision,
            dataset_revision=revision,
            revision_matches=matches,
            split=split,
            audiobench_model=audiobench_model(model),
            evaluation_time_s=evaluation_time if evaluation_time and evaluation_time >= 0 else None,
            dropped_keys=dropped,
            dropped_subsets=sorted(published_subsets - set(reports)),
        ),
    )


def _checked(result: TaskResult, allow_revision_mismatch: bool) -> list[str]:
    """The problems ``results validate`` finds in ``result`` (written to a scratch folder)."""
    from audiobench.leaderboard.validate import validate_file

    with tempfile.TemporaryDirectory(prefix="audiobench-import-") as scratch:
        path = result.save(scratch)
        _, problems = validate_file(path, allow_unpinned=allow_revision_mismatch)
        return [f"{p.field}: {p.message}" for p in problems]


def import_mteb(
    root: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    allow_revision_mismatch: bool = False,
    repository: str | None = None,
) -> ImportSummary:
    """Convert every MTEB task file under ``root`` into a result file under ``output``.

    ``repository`` names the source in each result's provenance (default: ``root`` as given).
    Every file is converted or refused; a refusal never stops the others. A converted file
    is written only once it validates, and never over a result computed here.
    """
    base = Path(root)
    summary = ImportSummary(root=_results_root(base))
    stamp = utc_now()
    targets: dict[Path, Path] = {}
    for path in find_mteb_files(base):
        summary.seen += 1
        try:
            result = convert_file(
                path,
                summary.root,
                allow_revision_mismatch=allow_revision_mismatch,
                repository=repository or str(base),
                imported=stamp,
            )
            target = result.path(output)
            problem = placement_problem(
                result, target, targets.get(target), allow_unpinned=allow_revision_mismatch
            )
            if problem:
                raise Refused(*problem)
        except Refused as exc:
            summary.refused.append(Refusal(path, exc.reason, exc.message))
            continue
        targets[target] = path
        summary.written.append(result.save(output))
    return summary


def placement_problem(
    result: TaskResult, target: Path, earlier: Path | None, *, allow_unpinned: bool
) -> tuple[str, str] | None:
    """Why ``result`` may not be written to ``target``, as (reason, message); None: it may.

    ``earlier`` is the published file this import already converted to ``target``. Shared by
    every importer so that they guard the output the same way.
    """
    if earlier is not None:
        return (
            "duplicate",
            f"the same model, revision and task as {earlier}, converted earlier in this import",
        )
    if target.exists() and not _is_reported(target):
        return (
            "would overwrite",
            f"{target} holds a result computed with audiobench; import into another --output",
        )
    problems = _checked(result, allow_unpinned)
    if problems:
        return ("fails validation", "; ".join(problems[:5]))
    return None


def _is_reported(path: Path) -> bool:
    try:
        return load_result(path).reported is not None
    except ValueError:
        return False  # unreadable: not ours to replace
