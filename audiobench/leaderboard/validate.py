"""Strict validation of result files before they reach a leaderboard.

Every check reports one :class:`Problem` per finding, printed as
``<file>: <field>: <message>``, so a contributor sees everything that is
wrong with a pull request at once. A file passes only if it

- is a regular file (no symbolic link) named ``*.json`` of at most
  :data:`MAX_RESULT_BYTES`, checked before it is parsed;
- parses as a :class:`~audiobench.results.TaskResult` (no unknown or missing
  fields, right types, finite numbers);
- names a registered task, with that task's family, dataset revision, main
  score and subsets;
- has scores its task family accepts (:meth:`audiobench.task.Task.score_problems`:
  known metric names, values in range, counts and derived values consistent);
- has a main score and a public aggregate that are what the family makes of the
  file's own subset reports (:meth:`audiobench.task.Task.summarize`);
- records a data identity its task can have, and pinned data unless
  ``allow_unpinned`` (:mod:`audiobench.leaderboard.provenance`);
- uses model and revision names that are safe as path components, and sits
  at the path its content determines (:func:`audiobench.results.result_path`).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from audiobench.options import read_recorded_options
from audiobench.reports import same_number
from audiobench.results import NO_REVISION, TaskResult, load_result, result_path

if TYPE_CHECKING:
    from audiobench.task import Task

__all__ = [
    "MAX_NAME_LENGTH",
    "MAX_PROBLEMS_PER_FILE",
    "MAX_RESULT_BYTES",
    "Problem",
    "Validation",
    "find_result_files",
    "validate_file",
    "validate_paths",
]

#: Largest result file accepted. A full VocSim result with every metric is
#: about 0.3 MB; the limit keeps a hostile file from exhausting the builder.
MAX_RESULT_BYTES = 5 * 1024 * 1024

#: Longest model or revision name; path components stay well below the
#: 255-byte limit of common file systems even after ``safe_component``.
MAX_NAME_LENGTH = 100

#: Problems listed per file; a hostile file could otherwise flood a CI log.
MAX_PROBLEMS_PER_FILE = 50

#: Field name used for problems with the file itself rather than a field in it.
FILE = "(file)"


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one file."""

    file: Path
    field: str
    message: str

    def line(self, relative_to: Path | None = None) -> str:
        """``<file>: <field>: <message>``, on one line whatever the file contained."""
        shown = self.file
        if relative_to is not None:
            with contextlib.suppress(ValueError):
                shown = self.file.relative_to(relative_to)
        return _one_line(f"{shown}: {self.field}: {self.message}")

    def __str__(self) -> str:
        return self.line()


@dataclass
class Validation:
    """Outcome of validating many files: the results that passed, and every problem."""

    accepted: list[tuple[Path, TaskResult]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def rejected(self) -> dict[Path, list[Problem]]:
        """Problems grouped by file, in the order the files were checked."""
        grouped: dict[Path, list[Problem]] = {}
        for problem in self.problems:
            grouped.setdefault(problem.file, []).append(problem)
        return grouped

    @property
    def ok(self) -> bool:
        return not self.problems


def _one_line(text: str) -> str:
    # File contents end up in messages; a newline or terminal escape in a
    # field must not forge extra lines in a CI log.
    return "".join(
        ch if ch == " " or unicodedata.category(ch)[0] not in "CZ" else repr(ch)[1:-1]
        for ch in text
    )


def find_result_files(paths: Iterable[str | os.PathLike[str]]) -> tuple[list[Path], list[Problem]]:
    """Result files named by ``paths``: files as given, directories searched for ``*.json``.

    Symbolic links are never followed into directories. Files in a directory
    that are not ``*.json`` (except hidden ones such as ``.gitkeep``) and paths
    that do not exist come back as problems: nothing is silently skipped.
    """
    files: list[Path] = []
    problems: list[Problem] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir() and not path.is_symlink():
            for found in _walk(path):
                if found.suffix == ".json" or found.is_symlink():
                    files.append(found)
                else:
                    problems.append(Problem(found, FILE, "not a result file (*.json)"))
        elif path.exists() or path.is_symlink():
            files.append(path)
        else:
            problems.append(Problem(path, FILE, "no such file or directory"))
    return files, problems


def _walk(root: Path) -> Iterator[Path]:
    """Visible files under ``root``, and links to folders (reported, never followed)."""
    for directory, dirnames, filenames in os.walk(root):
        here = Path(directory)
        visible = sorted(d for d in dirnames if not d.startswith("."))
        yield from (here / d for d in visible if (here / d).is_symlink())
        dirnames[:] = [d for d in visible if not (here / d).is_symlink()]
        for name in sorted(filenames):
            if not name.startswith("."):
                yield here / name


def validate_file(
    path: str | os.PathLike[str], *, allow_unpinned: bool = False
) -> tuple[TaskResult | None, list[Problem]]:
    """The parsed result (None if it failed) and every problem found in ``path``.

    At most :data:`MAX_PROBLEMS_PER_FILE` problems are listed, the last one
    counting the rest.
    """
    result, problems = _check_file(Path(path), allow_unpinned)
    if len(problems) > MAX_PROBLEMS_PER_FILE:
        more = len(problems) - MAX_PROBLEMS_PER_FILE + 1
        problems = [
            *problems[: MAX_PROBLEMS_PER_FILE - 1],
            Problem(Path(path), FILE, f"and {more} more"),
        ]
    return result, problems


def _check_file(p: Path, allow_unpinned: bool) -> tuple[TaskResult | None, list[Problem]]:

    def problem(field: str, message: str) -> Problem:
        return Problem(p, field, message)

    if p.is_symlink():
        return None, [problem(FILE, "symbolic links are not accepted; commit the file itself")]
    if not p.is_file():
        return None, [problem(FILE, "not a regular file")]
    if p.suffix != ".json":
        return None, [problem(FILE, "not a result file (*.json)")]
    size = p.stat().st_size
    if size > MAX_RESULT_BYTES:
        return None, [
            problem(
                FILE,
                f"{size:,} bytes, over the limit of {MAX_RESULT_BYTES:,} bytes "
                f"({MAX_RESULT_BYTES // 2**20} MiB) for a result file",
            )
        ]
    try:
        result = load_result(p)
    except ValueError as exc:
        return None, _load_problems(p, exc)
    problems = _name_problems(p, result)
    # Where the file should sit only means something once its names are sound.
    path_problems = [] if problems else _path_problems(p, result)
    problems += _task_problems(p, result, allow_unpinned) + path_problems
    problems += _provenance_problems(p, result, allow_unpinned)
    return (result if not problems else None), problems


def validate_paths(
    paths: Iterable[str | os.PathLike[str]], *, allow_unpinned: bool = False
) -> Validation:
    """Validate every result file under ``paths`` (files or directories).

    ``allow_unpinned`` keeps results computed on local data or an unpinned
    hub revision (for private tables; the public leaderboard refuses them).
    """
    files, problems = find_result_files(paths)
    outcome = Validation(problems=problems)
    for path in files:
        result, found = validate_file(path, allow_unpinned=allow_unpinned)
        if result is not None:
            outcome.accepted.append((path, result))
        outcome.problems += found
    return outcome


def _load_problems(path: Path, exc: ValueError) -> list[Problem]:
    """Turn :func:`load_result`'s error into one problem per schema error."""
    # load_result wraps parse errors; a decoding error reaches us unwrapped.
    cause = exc if isinstance(exc, UnicodeDecodeError) else exc.__cause__
    if isinstance(cause, ValidationError):
        return [
            Problem(path, _location(error["loc"]), _message(error))
            for error in cause.errors(include_url=False)
        ]
    if isinstance(cause, RecursionError):
        return [Problem(path, FILE, "JSON nested too deeply")]
    if isinstance(cause, json.JSONDecodeError):
        return [Problem(path, FILE, f"not valid JSON: {cause}")]
    if isinstance(cause, UnicodeDecodeError):
        return [Problem(path, FILE, "not UTF-8 text")]
    if isinstance(cause, OSError):
        return [Problem(path, FILE, f"cannot be read: {cause.strerror or cause}")]
    return [Problem(path, FILE, str(cause or exc))]


def _location(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or FILE


def _message(error: ErrorDetails) -> str:
    kind = error["type"]
    if kind == "missing":
        return "missing field"
    if kind == "extra_forbidden":
        return "unknown field"
    message = str(error["msg"]).removeprefix("Value error, ")
    if kind == "model_type":
        return message
    value = error.get("input")
    shown = repr(value) if not isinstance(value, dict | list) else type(value).__name__
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return f"{message} (got {shown})" if kind != "value_error" else message


def _name_problem(value: str) -> str | None:
    """Why ``value`` is not safe as a model or revision name (None if it is)."""
    if len(value) > MAX_NAME_LENGTH:
        return f"longer than {MAX_NAME_LENGTH} characters"
    # Control and format characters (newlines, escapes, bidirectional
    # overrides, zero-width marks) make names that print deceptively.
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn") for ch in value):
        return "contains control or invisible characters"
    if not any(ch.isalnum() for ch in value):
        return "must contain a letter or digit"
    # A leading '-' reads as an option on a command line, '.' as a hidden
    # file, and '=', '+', '@' as a formula in a spreadsheet opened from the CSV.
    if value[0] in "-.=+@":
        return "must not start with '-', '.', '=', '+' or '@'"
    return None


def _name_problems(path: Path, result: TaskResult) -> list[Problem]:
    problems = []
    for field_name, value in (
        ("model.name", result.model.name),
        ("model.revision", result.model.revision),
    ):
        if value is None:
            continue
        why = _name_problem(value)
        if why is not None:
            problems.append(Problem(path, field_name, f"{value!r} is not a safe name: {why}"))
    return problems


def _scored_as_run(cls: type[Task], result: TaskResult) -> type[Task] | str:
    """``cls`` as the file's run configured it, or why it cannot be.

    The protocol a run chose (``-O protocol=mteb``) selects the evaluator whose report models
    the file holds; checking it against the task's default protocol would refuse a sound file.
    """
    from audiobench.evaluators.evaluator import EvaluatedTask
    from audiobench.evaluators.registry import evaluator_for

    run = result.run
    protocol = run.task_options.get("protocol") if run is not None else None
    default = getattr(cls.options, "protocol", None)
    # A file from before the option existed scored under the default.
    if not issubclass(cls, EvaluatedTask) or protocol is None or protocol == default:
        return cls
    if not isinstance(protocol, str):
        return f"{protocol!r} is not a protocol name"
    try:
        evaluator_for(cls.family, protocol)
    except ValueError as exc:
        return str(exc)
    options = cls.options.model_copy(update={"protocol": protocol})
    return cast("type[Task]", type(cls.__name__, (cls,), {"options": options}))


def _task_problems(path: Path, result: TaskResult, allow_unpinned: bool) -> list[Problem]:
    """Checks against the registered task: it exists, and the file agrees with it.

    A folder task (``--task folder:PATH``) is registered by no package: on a private table
    (``allow_unpinned``) its file is checked against the folder family's task
    (:func:`_folder_task_class`); the public table refuses it as local data
    (:func:`_provenance_problems`, which names the option that takes it).
    """
    from audiobench import registry

    name = result.task.name
    try:
        cls = registry.tasks.get(name)
    except registry.UnknownNameError:
        if _on_local_folder(result):
            if not allow_unpinned:  # the provenance check says why, and what takes it
                return []
            folder_cls = _folder_task_class(result)
            if isinstance(folder_cls, str):
                return [Problem(path, "task.name", folder_cls)]
            cls = folder_cls
        else:
            return [
                Problem(
                    path, "task.name", f"unknown task {name!r}: no installed package registers it"
                )
            ]
    except (LookupError, ImportError) as exc:
        return [Problem(path, "task.name", f"task {name!r} cannot be loaded: {exc}")]
    run_cls = _scored_as_run(cls, result)
    if isinstance(run_cls, str):
        return [Problem(path, "run.task_options.protocol", run_cls)]
    cls = run_cls
    meta = cls.metadata
    problems = []
    if result.task.family != str(meta.family):
        problems.append(
            Problem(
                path,
                "task.family",
                f"{result.task.family!r} does not match the registered task's {str(meta.family)!r}",
            )
        )
    if result.task.revision != meta.revision and not (
        result.reported is not None and allow_unpinned
    ):
        # A reported result run on another revision is honest about it (reported.
        # revision_matches); a private table may show it beside the pinned ones.
        extra = (
            "; a reported result on another revision goes on private tables only (--allow-unpinned)"
            if result.reported is not None
            else ""
        )
        problems.append(
            Problem(
                path,
                "task.revision",
                f"{result.task.revision!r} does not match the registered task's revision "
                f"{meta.revision!r}{extra}",
            )
        )
    if result.main_score_name != meta.main_score:
        problems.append(
            Problem(
                path,
                "main_score_name",
                f"{result.main_score_name!r} is not the task's main score {meta.main_score!r}",
            )
        )
    reported = result.reported
    if reported is not None and reported.dataset_revision != result.task.revision:
        problems.append(
            Problem(
                path,
                "reported.dataset_revision",
                f"{reported.dataset_revision!r} is not the task block's revision "
                f"{result.task.revision!r}",
            )
        )
    if reported is not None and reported.revision_matches != (
        result.task.revision == meta.revision
    ):
        problems.append(
            Problem(
                path,
                "reported.revision_matches",
                f"{reported.revision_matches} contradicts the task block's revision "
                f"{result.task.revision!r} against the pinned {meta.revision!r}",
            )
        )
    for i, subset in enumerate(result.task.subsets):
        if subset not in meta.subsets:
            problems.append(
                Problem(path, f"task.subsets[{i}]", f"{subset!r} is not a subset of {name}")
            )
    scores = _subset_scores(result)
    n_before = len(problems)
    for field_name, mapping in (("scores", scores), ("aggregates", result.aggregates)):
        for found in cls.score_problems(mapping):
            where, sep, message = found.partition(": ")
            if not sep:
                where, message = "", found
            problems.append(
                Problem(path, f"{field_name}.{where}" if where else field_name, message)
            )
    if len(problems) == n_before:  # the headline is checked against scores that are sound
        problems += _main_score_problems(path, result, cls, scores)
        problems += _summary_problems(path, result, cls, scores)
    return problems


def _on_local_folder(result: TaskResult) -> bool:
    """Whether ``result`` comes from a folder task (``folder:PATH``) on the user's own data."""
    return (
        result.run is not None
        and result.run.dataset.kind == "folder"
        and result.task.name.startswith("Folder-")
    )


def _folder_task_class(result: TaskResult) -> type[Task] | str:
    """The folder family's task for ``result`` (as ``folder_task`` builds it), or why not.

    The folder itself need not exist here: the family (``details["folder"]["family"]``,
    similarity when absent), its base class and its main score are enough to check scores.
    """
    from audiobench.families import family_task
    from audiobench.registry import FOLDER_FAMILIES, FOLDER_FAMILY_SCORES
    from audiobench.task import DatasetSource, TaskMetadata
    from audiobench.tasks.folder import MTEB_MAIN_SCORES

    name = result.task.name
    recorded = result.details.get("folder")
    folder = recorded.get("family") if isinstance(recorded, dict) else None
    folder = folder if folder is not None else "similarity"
    if folder not in FOLDER_FAMILIES:
        return f"folder task {name!r}: unknown folder family {folder!r}"
    if folder != "similarity" and not name.endswith(f"-{folder}"):
        return f"folder task {name!r}: a folder-{folder} task's name ends in '-{folder}'"
    family, main_score = FOLDER_FAMILY_SCORES[folder]
    if result.task.family != family:
        return (
            f"folder task {name!r}: family {result.task.family!r} is not the folder-{folder} "
            f"family {family!r}"
        )
    base = family_task(family)
    attributes: dict[str, Any] = {}
    recorded_options = result.run.task_options if result.run is not None else {}
    if recorded_options.get("protocol") == "mteb" and folder in MTEB_MAIN_SCORES:
        # Under the reference protocol a folder task's main score is the reference's.
        main_score = MTEB_MAIN_SCORES[folder]
        attributes["options"] = base.Options.model_validate(
            read_recorded_options(base.Options, recorded_options)
        )
    meta = TaskMetadata(
        name=name,
        description=f"Folder task over {result.task.dataset}.",
        dataset=DatasetSource(kind="folder", path=result.task.dataset or "."),
        main_score=main_score,
    )
    return type(f"Folder_{folder.replace('-', '_')}", (base,), {"metadata": meta, **attributes})


def _subset_scores(result: TaskResult) -> dict[str, dict[str, Any]]:
    """``scores`` by subset.

    A version-1 file of a task run without subsets may hold its one report with no subset
    layer (perceptual alignment wrote its distances there): that is the default subset's.
    """
    from audiobench.task import DEFAULT_SUBSET

    scores = result.scores
    if result.schema_version == 1 and not result.task.subsets and DEFAULT_SUBSET not in scores:
        return {DEFAULT_SUBSET: scores} if scores else scores
    return scores


def _main_score_problems(
    path: Path, result: TaskResult, cls: type[Task], scores: dict[str, dict[str, Any]]
) -> list[Problem]:
    """``main_score`` must be the number the file's own scores give (no edited headline)."""
    summary: Any = result.aggregates.get(cls.public_group) or result.aggregates.get("blind")
    if summary is None:
        if len(scores) != 1:
            return [Problem(path, "aggregates", "missing: needed for the main score")]
        summary = next(iter(scores.values()))
    expected = cls.summary_score(summary, cls.metadata.main_score)
    given = result.main_score
    same = (
        expected is None
        if given is None
        else expected is not None and math.isclose(given, expected, rel_tol=1e-12, abs_tol=1e-12)
    )
    if same:
        return []
    return [
        Problem(
            path,
            "main_score",
            f"{given!r} is not {result.main_score_name!r} of the file's own scores ({expected!r})",
        )
    ]


def _summary_problems(
    path: Path, result: TaskResult, cls: type[Task], scores: dict[str, dict[str, Any]]
) -> list[Problem]:
    """The public aggregate must be the family's summary of the file's own subset reports.

    The task is built with the options the file records (its protocol decides its report
    model and its summary), each subset's scores are read as its report, and
    :meth:`~audiobench.task.Task.summarize` recomputes the aggregate: every number written
    must equal the recomputed one to the precision written (at least four decimals), and
    nothing may be missing or added. The blind average cannot be recomputed (its subsets'
    scores never leave the owner's machine); its form is checked by ``score_problems``.
    """
    group = cls.public_group
    written = result.aggregates.get(group)
    if written is None:
        return []  # one subset and no aggregate: the main score was checked against it
    where = f"aggregates.{group}"
    listed = written.get("subsets")
    if not isinstance(listed, list) or sorted(map(str, listed)) != sorted(scores):
        return [
            Problem(
                path,
                f"{where}.subsets",
                f"{listed!r} are not the subsets the file has scores of ({sorted(scores)!r})",
            )
        ]
    recorded = result.run.task_options if result.run is not None else {}
    # Options a later version dropped do not change how the subsets are summarized.
    options = read_recorded_options(cls.Options, recorded)
    try:
        task = cls(options=options)
    except ValueError as exc:
        return [Problem(path, "run.task_options", str(exc))]
    try:
        reports = {s: task.Report.model_validate(scores[s]) for s in map(str, listed)}
        expected = task.summarize(reports).to_json()
    except Exception as exc:  # a hostile file must never stop the validator
        return [Problem(path, where, f"cannot be recomputed from the subsets' scores: {exc}")]
    return [
        Problem(path, f"{where}.{field}", message)
        for field, message in _differences(written, expected, "")
    ]


def _differences(written: Any, expected: Any, where: str) -> list[tuple[str, str]]:
    """(path, message) for every place where ``written`` JSON is not ``expected`` JSON."""
    here = where or FILE
    if isinstance(written, dict) and isinstance(expected, dict):
        found: list[tuple[str, str]] = []
        for key in expected:
            inner = f"{where}.{key}" if where else str(key)
            if key not in written:
                found.append((inner, f"missing; the subsets' scores give {expected[key]!r}"))
            else:
                found += _differences(written[key], expected[key], inner)
        found += [
            (f"{where}.{key}" if where else str(key), "not in the summary of the subsets' scores")
            for key in written
            if key not in expected
        ]
        return found
    if isinstance(written, list) and isinstance(expected, list) and len(written) == len(expected):
        return [
            item
            for i, (w, e) in enumerate(zip(written, expected, strict=True))
            for item in _differences(w, e, f"{where}[{i}]")
        ]
    if _is_number(written) and _is_number(expected):
        if same_number(float(written), float(expected)):
            return []
    elif written == expected:
        return []
    return [(here, f"{written!r} is not what the subsets' scores give ({expected!r})")]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _provenance_problems(path: Path, result: TaskResult, allow_unpinned: bool) -> list[Problem]:
    """The recorded data identity agrees with the task; public tables take pinned data only.

    Pinned data is a hub commit or generated data (:mod:`audiobench.leaderboard.provenance`);
    a version-1 file is judged by the identity its task block implies.
    """
    from audiobench import registry
    from audiobench.leaderboard.provenance import identity_problems, recorded_dataset

    try:
        source = registry.tasks.get(result.task.name).metadata.dataset
    except (LookupError, ImportError):
        # A folder task is registered by no package: local data, which only a private table
        # takes; any other unknown task is reported by the task checks.
        if allow_unpinned or not _on_local_folder(result):
            return []
        assert result.run is not None
        what = f"local data ({result.run.dataset.source})"
    else:
        problems = [Problem(path, f, message) for f, message in identity_problems(result, source)]
        data = recorded_dataset(result, source)
        if allow_unpinned or problems or data.pinned:
            return problems
        what = (
            f"local data ({data.source})"
            if data.kind in ("folder", "local_copy")
            else f"{data.source} at unpinned revision {data.revision!r}"
        )
    field_name = "run.dataset" if result.run is not None else "task.dataset"
    return [
        Problem(
            path,
            field_name,
            f"computed on {what}; the public leaderboard takes results on pinned data only "
            "(use --allow-unpinned for a private table)",
        )
    ]


def _path_problems(path: Path, result: TaskResult) -> list[Problem]:
    """The file must sit at ``<root>/<model>/<revision>/<Task>.json`` for its own content."""
    if len(path.parts) < 3:
        return [
            Problem(
                path,
                FILE,
                "must sit at <model>/<revision>/<Task>.json, e.g. "
                f"{result_path('', result.model.name, result.model.revision, result.task.name)}",
            )
        ]
    expected = result_path(
        path.parent.parent.parent, result.model.name, result.model.revision, result.task.name
    )
    problems = []
    checks = (
        ("model.name", result.model.name, expected.parent.parent.name, path.parent.parent.name),
        (
            "model.revision",
            result.model.revision if result.model.revision is not None else NO_REVISION,
            expected.parent.name,
            path.parent.name,
        ),
        ("task.name", result.task.name, expected.name, path.name),
    )
    for field_name, value, want, have in checks:
        if want != have:
            kind = "file name" if field_name == "task.name" else "directory"
            problems.append(
                Problem(
                    path,
                    field_name,
                    f"{value!r} belongs in {kind} {want!r}, but the file is in {have!r}"
                    if kind == "directory"
                    else f"{value!r} belongs in file {want!r}, but the file is named {have!r}",
                )
            )
    return problems
