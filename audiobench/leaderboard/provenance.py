"""A result's provenance: the data identity it records must be one its task can have.

A result says which data it was computed on (``run.dataset``, see
:class:`~audiobench.results.DatasetIdentity`), and the public leaderboard takes
only results on pinned data. A file edited into "public" must not pass, so the
identity is checked against the registered task before it is trusted:

- generated data (``synthetic``) names the task's own generator and version
  (the generator's seed and parameters belong to the registered task), and is
  pinned;
- hub data names the task's own hub id and configuration, with no digest, and
  is pinned exactly when its revision is a full commit hash;
- local data (``local_copy``, ``folder``) is never pinned and carries its
  content digest; ``folder`` only for a task whose data is a folder;
- the ``task`` block agrees (a result on the registered data names the
  registered dataset; one on local data does not).

A version-1 file has no ``run`` block: its identity is read from its ``task``
block (:func:`recorded_dataset`), so the same policy applies to it, and a
local path is never taken for pinned data.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from audiobench.results import PINNED_REVISION, DatasetIdentity, TaskResult

if TYPE_CHECKING:
    from audiobench.sources import DatasetSource

__all__ = ["identity_problems", "recorded_dataset"]

#: How version-1 files named generated data: a Python module (``audiobench.synthetic``).
_MODULE_NAME = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+(:[A-Za-z_]\w*)?$")


def _pinned_revision(revision: str | None) -> bool:
    return revision is not None and re.fullmatch(PINNED_REVISION, revision) is not None


def _names_registered_data(name: str, source: DatasetSource) -> bool:
    """Whether a version-1 ``task.dataset`` names the task's registered data (not a path).

    Generated data was named by its generator's module before the generator itself was
    recorded; such a name has the registered generator's top-level package.
    """
    if name == source.path:
        return True
    return (
        source.kind == "synthetic"
        and _MODULE_NAME.fullmatch(name) is not None
        and name.split(".")[0] == source.path.split(".")[0].split(":")[0]
    )


def recorded_dataset(result: TaskResult, source: DatasetSource) -> DatasetIdentity:
    """The data identity ``result`` records; for a version-1 file, the one its task implies.

    ``source`` is the registered task's data. A version-1 file computed on anything but
    that data (a local copy, a folder) is local data, never pinned.
    """
    if result.run is not None:
        return result.run.dataset
    task = result.task
    if source.kind == "folder" or not _names_registered_data(task.dataset, source):
        # Read back, not recorded: version 1 kept no content digest to check it against.
        return DatasetIdentity.model_construct(
            kind="folder" if source.kind == "folder" else "local_copy",
            source=task.dataset,
            revision=None,
            config=None,
            digest=None,
            pinned=False,
        )
    if source.kind == "synthetic":
        return DatasetIdentity(
            kind="synthetic", source=source.path, revision=task.revision, pinned=True
        )
    return DatasetIdentity(
        kind="huggingface",
        source=source.path,
        revision=task.revision,
        config=source.config,
        pinned=_pinned_revision(task.revision),
    )


def identity_problems(result: TaskResult, source: DatasetSource) -> list[tuple[str, str]]:
    """(field, message) for every way ``result``'s provenance contradicts itself or its task."""
    run = result.run
    if run is None:
        return []  # a version-1 identity is derived (recorded_dataset): nothing to contradict
    data = run.dataset
    found: list[tuple[str, str]] = []

    def wrong(name: str, why: str) -> None:
        value = getattr(data, name)
        found.append((f"run.dataset.{name}", f"{value!r}: {why}"))

    if run.task != result.task.name:
        found.append(("run.task", f"{run.task!r} is not the file's task {result.task.name!r}"))
    if run.model_fingerprint != result.model.fingerprint:
        found.append(
            (
                "run.model_fingerprint",
                f"{run.model_fingerprint!r} is not the model's fingerprint "
                f"{result.model.fingerprint!r}",
            )
        )
    if data.kind in ("local_copy", "folder"):
        if data.kind == "folder" and source.kind != "folder":
            wrong("kind", f"task {result.task.name} does not read its data from a folder")
        return found
    if data.kind != source.kind:
        wrong("kind", f"task {result.task.name}'s data is {source.kind!r}, not {data.kind!r}")
        return found
    what = "generator" if data.kind == "synthetic" else "hub dataset"
    if data.source != source.path:
        wrong("source", f"task {result.task.name}'s {what} is {source.path!r}")
    # A task block at another revision than the registered one is reported by the task checks.
    if result.task.revision == source.revision and data.revision != source.revision:
        wrong("revision", f"the task block records revision {result.task.revision!r}")
    if data.kind == "huggingface" and data.config != source.config:
        wrong("config", f"task {result.task.name}'s configuration is {source.config!r}")
    return found
