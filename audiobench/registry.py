"""Task and model registries, filled from Python entry points.

audiobench registers its built-ins through the same entry-point groups a
third party uses (``audiobench.tasks`` and ``audiobench.models``), so a plugin
is a pip package with an ``[project.entry-points."audiobench.models"]`` table.

A distribution with many tasks of one pattern (a benchmark's per-locale variants) registers
them through one entry point of ``audiobench.task_catalogues`` naming a module-level
sequence of task classes; each class is then registered under its ``metadata.name`` as if it
had its own ``audiobench.tasks`` entry point.

A plugin that fails to import gives a :class:`PluginWarning` naming it and is
left out; everything else keeps working. A name registered by two
distributions is ambiguous: asking for it raises
:class:`DuplicateRegistrationError` naming both.
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Generic, TypeVar

from audiobench.encoder import Encoder
from audiobench.errors import UserError
from audiobench.task import Task

__all__ = [
    "DuplicateRegistrationError",
    "PluginWarning",
    "Registry",
    "UnknownNameError",
    "UnsupportedTask",
    "UnsupportedTaskError",
    "models",
    "tasks",
    "unsupported_tasks",
]

T = TypeVar("T")


class PluginWarning(UserWarning):
    """A plugin could not be loaded; it is skipped."""


class UnknownNameError(UserError, LookupError):
    def __init__(self, kind: str, name: str, known: list[str]) -> None:
        close = difflib.get_close_matches(name, known, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        listing = f" (see `audiobench list {kind}s`)"
        super().__init__(f"unknown {kind} {name!r}{hint}{listing}")


class DuplicateRegistrationError(UserError, LookupError):
    def __init__(self, kind: str, name: str, distributions: list[str]) -> None:
        self.distributions = sorted(distributions)
        super().__init__(
            f"{kind} name {name!r} is registered by more than one distribution: "
            f"{' and '.join(self.distributions)}; uninstall one of them"
        )


@dataclass
class Registration:
    name: str
    value: str
    distribution: str
    entry_point: metadata.EntryPoint = field(repr=False)
    #: The class itself, for a member of a task catalogue (loaded with its catalogue).
    loaded: Any = field(default=None, repr=False)


class Registry(Generic[T]):
    """One entry-point group, loaded lazily and cached."""

    def __init__(
        self, kind: str, group: str, base: type[T], catalogue_group: str | None = None
    ) -> None:
        self.kind = kind
        self.group = group
        #: Entry points each naming a sequence of classes, registered by their names.
        self.catalogue_group = catalogue_group
        self.base = base
        self._regs: dict[str, list[Registration]] | None = None
        self._loaded: dict[str, type[T]] = {}
        self._broken: set[str] = set()
        self._resolvers: dict[str, Callable[..., T]] = {}

    # -- discovery -------------------------------------------------------------

    def refresh(self) -> None:
        """Forget what was discovered (after installing a plugin in-process)."""
        self._regs = None
        self._loaded.clear()
        self._broken.clear()

    def registrations(self) -> dict[str, list[Registration]]:
        if self._regs is None:
            regs: dict[str, list[Registration]] = {}
            for ep in metadata.entry_points(group=self.group):
                dist = ep.dist.name if ep.dist is not None else "<unknown distribution>"
                same = regs.setdefault(ep.name, [])
                # One distribution can be visible twice (an editable install's
                # metadata in the source tree and in site-packages): that is not
                # a conflict.
                if all(r.distribution != dist for r in same):
                    same.append(Registration(ep.name, ep.value, dist, ep))
            if self.catalogue_group is not None:
                self._add_catalogues(regs, self.catalogue_group)
            self._regs = regs
        return self._regs

    def _add_catalogues(self, regs: dict[str, list[Registration]], group: str) -> None:
        for ep in metadata.entry_points(group=group):
            dist = ep.dist.name if ep.dist is not None else "<unknown distribution>"
            try:
                members = list(ep.load())
            except Exception as exc:
                warnings.warn(
                    f"{self.kind} catalogue {ep.name!r} ({ep.value}) from distribution "
                    f"{dist!r} failed to import: {type(exc).__name__}: {exc}; skipping it",
                    PluginWarning,
                    stacklevel=3,
                )
                continue
            for member in members:
                meta = getattr(member, "metadata", None)
                name = getattr(meta, "name", None)
                if not isinstance(name, str):
                    warnings.warn(
                        f"{self.kind} catalogue {ep.name!r} ({ep.value}): {member!r} declares "
                        "no metadata.name; skipping it",
                        PluginWarning,
                        stacklevel=3,
                    )
                    continue
                same = regs.setdefault(name, [])
                if all(r.distribution != dist for r in same):
                    value = f"{ep.value}[{name}]"
                    same.append(Registration(name, value, dist, ep, loaded=member))

    def names(self) -> list[str]:
        return sorted(self.registrations())

    def duplicates(self) -> dict[str, list[str]]:
        """Names registered by more than one distribution -> those distributions."""
        return {
            name: sorted(r.distribution for r in regs)
            for name, regs in self.registrations().items()
            if len(regs) > 1
        }

    # -- loading ---------------------------------------------------------------

    def get(self, name: str) -> type[T]:
        """The class registered under ``name``."""
        if name in self._loaded:
            return self._loaded[name]
        regs = self.registrations().get(name)
        if not regs:
            if self.kind == "task" and name in unsupported_tasks():
                raise UnsupportedTaskError(unsupported_tasks()[name])
            raise UnknownNameError(self.kind, name, self.names())
        if len(regs) > 1:
            raise DuplicateRegistrationError(self.kind, name, [r.distribution for r in regs])
        cls = self._load(regs[0], warn=False)
        self._loaded[name] = cls
        return cls

    def _load(self, reg: Registration, *, warn: bool) -> type[T]:
        try:
            obj = reg.loaded if reg.loaded is not None else reg.entry_point.load()
        except Exception as exc:
            raise PluginLoadError(
                f"{self.kind} plugin {reg.name!r} ({reg.value}) from distribution "
                f"{reg.distribution!r} failed to import: {type(exc).__name__}: {exc}"
            ) from exc
        if not (isinstance(obj, type) and issubclass(obj, self.base)):
            raise PluginLoadError(
                f"{self.kind} plugin {reg.name!r} from distribution {reg.distribution!r}: "
                f"{reg.value} is not a subclass of {self.base.__name__}"
            )
        declared = obj.metadata.name if hasattr(obj, "metadata") else obj.meta.name  # type: ignore[attr-defined]
        if declared != reg.name:
            raise PluginLoadError(
                f"{self.kind} plugin {reg.name!r} from distribution {reg.distribution!r}: "
                f"the class declares the name {declared!r}; the entry-point name must match"
            )
        return obj

    def load_all(self) -> dict[str, type[T]]:
        """Every loadable, unambiguous registration; broken plugins warn and are left out."""
        out: dict[str, type[T]] = {}
        for name, regs in sorted(self.registrations().items()):
            if len(regs) > 1:
                continue
            if name in self._broken:
                continue
            try:
                out[name] = self.get(name)
            except PluginLoadError as exc:
                self._broken.add(name)
                warnings.warn(f"{exc}; skipping it", PluginWarning, stacklevel=2)
        return out

    # -- dynamic names (prefix:argument) ---------------------------------------

    def add_resolver(self, prefix: str, factory: Callable[..., T]) -> None:
        """Resolve names of the form ``prefix:argument`` with ``factory(argument, **kw)``."""
        self._resolvers[prefix] = factory

    def create(self, name: str, **kwargs: Any) -> T:
        """Instantiate ``name`` (a registered name, or ``prefix:argument``)."""
        prefix, sep, argument = name.partition(":")
        if sep and prefix in self._resolvers and name not in self.registrations():
            return self._resolvers[prefix](argument, **kwargs)
        return self.get(name)(**kwargs)


class PluginLoadError(ImportError):
    """A registered plugin exists but cannot be used."""


@dataclass(frozen=True)
class UnsupportedTask:
    """A task of another benchmark that audiobench knows of but does not score, and why.

    Listed by ``audiobench list tasks`` beside the tasks it scores, so that a benchmark's
    catalogue is complete there; asking to evaluate one is an error giving the reason.
    """

    name: str
    source: str  # the benchmark and its task type, e.g. "MTEB 2.26 Any2AnyRetrieval"
    family: str | None  # the audiobench family it would belong to, if any
    dataset: str | None
    revision: str | None
    reason: str
    protocol: str = "mteb"  # the protocol of the benchmark it comes from
    main_score: str | None = None  # the benchmark's name of its headline metric, if given


class UnsupportedTaskError(UserError, LookupError):
    def __init__(self, task: UnsupportedTask) -> None:
        super().__init__(
            f"task {task.name!r} ({task.source}) is not supported by audiobench: {task.reason} "
            "(see `audiobench list tasks --json`, entries with 'unsupported')"
        )


_UNSUPPORTED_GROUP = "audiobench.unsupported_tasks"
_unsupported: dict[str, UnsupportedTask] | None = None


def unsupported_tasks() -> dict[str, UnsupportedTask]:
    """Tasks listed as not supported, by name: entry points of ``audiobench.unsupported_tasks``,
    each a sequence of :class:`UnsupportedTask`. One that fails to load warns and is skipped."""
    global _unsupported
    if _unsupported is None:
        found: dict[str, UnsupportedTask] = {}
        for ep in metadata.entry_points(group=_UNSUPPORTED_GROUP):
            try:
                entries = list(ep.load())
            except Exception as exc:
                warnings.warn(
                    f"unsupported-task list {ep.name!r} ({ep.value}) failed to import: "
                    f"{type(exc).__name__}: {exc}; skipping it",
                    PluginWarning,
                    stacklevel=2,
                )
                continue
            found.update((e.name, e) for e in entries if isinstance(e, UnsupportedTask))
        _unsupported = found
    return _unsupported


tasks: Registry[Task] = Registry(
    "task",
    "audiobench.tasks",
    Task,  # type: ignore[type-abstract]
    catalogue_group="audiobench.task_catalogues",
)
models: Registry[Encoder] = Registry("model", "audiobench.models", Encoder)  # type: ignore[type-abstract]


def _folder_task(argument: str, **kwargs: Any) -> Task:
    from audiobench.tasks.folder import folder_task

    task: Task = folder_task(argument, **kwargs)
    return task


tasks.add_resolver("folder", _folder_task)


def _folder_family_task(family: str) -> Callable[..., Task]:
    """The resolver of ``folder-<family>:PATH`` (see ``tasks/folder.py``)."""

    def create(argument: str, **kwargs: Any) -> Task:
        from audiobench.tasks.folder import folder_task

        task: Task = folder_task(argument, family=family, **kwargs)
        return task

    return create


#: The families a folder task can take (``folder-<family>:PATH``); kept here, not in
#: tasks/folder.py, so that resolving names does not import the task modules.
FOLDER_FAMILIES: tuple[str, ...] = (
    "similarity",
    "classification",
    "multilabel",
    "clustering",
    "retrieval",
    "pair-classification",
)

#: Each folder family's task family (as a result records it) and main score; tasks/folder.py
#: builds its tasks with these, and the leaderboard checks a folder result against them.
FOLDER_FAMILY_SCORES: dict[str, tuple[str, str]] = {
    "similarity": ("zero_shot_similarity", "pca100/spearman:gsr"),
    "classification": ("classification", "linear:accuracy"),
    "multilabel": ("classification", "linear:map"),
    "clustering": ("clustering", "v_measure"),
    "retrieval": ("retrieval", "mrr"),
    "pair-classification": ("pair_classification", "max_ap"),
}

for _family in FOLDER_FAMILIES:
    tasks.add_resolver(f"folder-{_family}", _folder_family_task(_family))


# Model resolvers import their module when first used (torch and transformers are heavy);
# models never import the registry: the cascade gets ``models.create`` as an argument.


def _hf_model(argument: str, **kwargs: Any) -> Encoder:
    from audiobench.models.hf_auto import hf_encoder

    encoder: Encoder = hf_encoder(argument, **kwargs)
    return encoder


def _hear_model(argument: str, **kwargs: Any) -> Encoder:
    from audiobench.models.hear import hear_encoder

    encoder: Encoder = hear_encoder(argument, **kwargs)
    return encoder


models.add_resolver("hf", _hf_model)
models.add_resolver("hear", _hear_model)


def _cascade_model(argument: str, **kwargs: Any) -> Encoder:
    from audiobench.models.cascade import cascade_encoder

    encoder: Encoder = cascade_encoder(argument, models.create, **kwargs)
    return encoder


models.add_resolver("cascade", _cascade_model)


def _text_model(argument: str, **kwargs: Any) -> Encoder:
    from audiobench.models.text_embedding import text_encoder

    encoder: Encoder = text_encoder(argument, **kwargs)
    return encoder


models.add_resolver("text", _text_model)
