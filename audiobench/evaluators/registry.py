"""Which evaluator scores a (family, protocol) pair.

Built-in evaluators register when their module is imported (:data:`BUILTIN_MODULES`); a
plugin adds a protocol with an ``[project.entry-points."audiobench.evaluators"]`` entry
naming its module, whose import registers its evaluators. Modules load on the first lookup,
so a family module never imports its evaluators (nor they the family).
"""

from __future__ import annotations

import importlib
import warnings
from importlib.metadata import entry_points
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from audiobench.evaluators.evaluator import Evaluator

__all__ = ["BUILTIN_MODULES", "evaluator_for", "protocols_for", "register"]

#: The modules holding the built-in protocols' evaluators.
BUILTIN_MODULES = (
    "audiobench.evaluators.classification",
    "audiobench.evaluators.clustering",
    "audiobench.evaluators.mteb",
    "audiobench.evaluators.pair_classification",
    "audiobench.evaluators.reasoning",
    "audiobench.evaluators.reranking",
    "audiobench.evaluators.retrieval",
    "audiobench.evaluators.segmentation",
    "audiobench.evaluators.stability",
    "audiobench.evaluators.transcription",
    "audiobench.evaluators.zero_shot_classification",
    "audiobench.evaluators.mseb",
)
ENTRY_POINT_GROUP = "audiobench.evaluators"

_REGISTRY: dict[tuple[str, str], type[Evaluator]] = {}
_loaded = False


def register(cls: type[Evaluator]) -> type[Evaluator]:
    """Class decorator: make ``cls`` the evaluator of its ``(family, protocol)``."""
    key = (str(cls.family), cls.protocol)
    known = _REGISTRY.get(key)
    if known is not None and known is not cls:
        raise ValueError(
            f"protocol {cls.protocol!r} of family {cls.family} is already scored by "
            f"{known.__module__}.{known.__qualname__}; {cls.__qualname__} cannot replace it"
        )
    _REGISTRY[key] = cls
    return cls


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for module in BUILTIN_MODULES:
        importlib.import_module(module)
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        try:
            entry.load()
        except Exception as exc:  # a broken plugin must not take the built-ins down
            warnings.warn(
                f"evaluator plugin {entry.name!r} ({entry.value}) failed to load: {exc}",
                stacklevel=2,
            )


def protocols_for(family: str) -> tuple[str, ...]:
    """The protocols that can score ``family``'s tasks, sorted."""
    _load()
    return tuple(sorted(p for f, p in _REGISTRY if f == str(family)))


def evaluator_for(family: str, protocol: str) -> type[Evaluator]:
    """The evaluator of ``protocol`` for ``family``; the error lists the family's protocols."""
    _load()
    try:
        return _REGISTRY[(str(family), protocol)]
    except KeyError:
        available = ", ".join(protocols_for(family)) or "none"
        raise ValueError(
            f"family {family} has no evaluator for protocol {protocol!r}; available: {available}"
        ) from None
