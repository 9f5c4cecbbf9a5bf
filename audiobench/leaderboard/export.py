"""Copy a user's result files into the leaderboard's submission layout.

``leaderboard/results/<model>/<revision>/<Task>.json`` is where submitted
results live. Export validates every file first (see
:mod:`audiobench.leaderboard.validate`), copies the bytes unchanged (the file
that was written by the run is the file that is reviewed), and never replaces
a different run already in place unless asked to.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from audiobench.leaderboard.validate import Problem, validate_paths
from audiobench.results import TaskResult, load_result

__all__ = ["DEFAULT_DESTINATION", "Export", "export_results", "write_atomically"]

DEFAULT_DESTINATION = Path("leaderboard") / "results"


@dataclass
class Export:
    """What an export did, file by file."""

    copied: list[tuple[Path, Path]] = field(default_factory=list)
    unchanged: list[tuple[Path, Path]] = field(default_factory=list)
    #: (source, destination, why it was not copied)
    refused: list[tuple[Path, Path, str]] = field(default_factory=list)
    #: Problems of invalid source files; with any of them nothing is copied
    #: unless ``skip_invalid``.
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.refused and not self.problems


def export_results(
    results_dir: str | os.PathLike[str],
    destination: str | os.PathLike[str] = DEFAULT_DESTINATION,
    *,
    overwrite: bool = False,
    skip_invalid: bool = False,
    allow_unpinned: bool = False,
) -> Export:
    """Copy every valid result under ``results_dir`` to ``destination/<model>/<revision>/``.

    A file already at the destination with the same bytes is left alone; one
    with different bytes (another run of the same model, revision and task)
    is refused unless ``overwrite``. If any source file is invalid, nothing is
    copied unless ``skip_invalid``, so a submission is never half exported by
    accident.
    """
    validation = validate_paths([results_dir], allow_unpinned=allow_unpinned)
    outcome = Export(problems=validation.problems)
    if validation.problems and not skip_invalid:
        return outcome
    for source, result in validation.accepted:
        target = result.path(destination)
        data = source.read_bytes()
        through = _linked_folder(Path(destination), target)
        if through is not None:
            outcome.refused.append(
                (
                    source,
                    target,
                    f"{through} is a symbolic link or not a folder; results are written only "
                    "into real folders under the destination (replace it with a folder)",
                )
            )
            continue
        if target.is_symlink() or (target.exists() and not target.is_file()):
            outcome.refused.append((source, target, "the destination is not a regular file"))
            continue
        if target.exists():
            if target.read_bytes() == data:
                outcome.unchanged.append((source, target))
                continue
            if not overwrite:
                outcome.refused.append(
                    (
                        source,
                        target,
                        f"it holds a different run ({_describe(target)}) than the one exported "
                        f"({_describe_result(result)}); pass --overwrite to replace it",
                    )
                )
                continue
        write_atomically(target, data)
        outcome.copied.append((source, target))
    return outcome


def _linked_folder(destination: Path, target: Path) -> Path | None:
    """The first folder between ``destination`` and ``target`` that is a link or no folder.

    A model or revision folder linked elsewhere would carry the write outside the
    destination; the destination itself is the user's choice and may be a link.
    """
    folder = destination
    for part in target.parent.relative_to(destination).parts:
        folder = folder / part
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            return folder
    return None


def _describe_result(result: TaskResult) -> str:
    return (
        f"run on {result.date:%Y-%m-%d %H:%M:%S}Z, "
        f"encoder fingerprint {result.model.fingerprint[:12]}"
    )


def _describe(path: Path) -> str:
    try:
        return _describe_result(load_result(path))
    except ValueError:
        return "an unreadable file"


def write_atomically(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
