"""Probe names, registered once: :data:`PROBE_NAMES`, their levels, :data:`PROBES` and
:func:`make_probe`.

The table below is the one place a probe is registered: its name, its level and where its
class lives. Reading names and levels imports nothing heavy (a task declaring its probes, and
``audiobench list tasks``, need no torch or scikit-learn); :data:`PROBES` and
:func:`make_probe` import the classes when first used. Each class states its own ``name`` and
``level`` too, and a test keeps them equal to this table.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal

from pydantic import AfterValidator

if TYPE_CHECKING:
    from audiobench.probes.base import Probe

__all__ = [
    "PROBES",
    "PROBE_NAMES",
    "TOKEN_PROBES",
    "VECTOR_PROBES",
    "ProbeName",
    "make_probe",
    "probe_class",
    "probe_level",
]

#: name -> (level, "module:Class"); the order is the order of listings and of PROBES.
_REGISTERED: Final[dict[str, tuple[Literal["vector", "token"], str]]] = {
    "knn": ("vector", "audiobench.probes.knn:KNNProbe"),
    "linear": ("vector", "audiobench.probes.linear:LinearProbe"),
    "mlp": ("vector", "audiobench.probes.mlp:MLPProbe"),
    "attentive": ("token", "audiobench.probes.attentive:AttentiveProbe"),
    "protobin": ("token", "audiobench.probes.protobin:ProtoBinProbe"),
}

#: Every probe name.
PROBE_NAMES: Final[tuple[str, ...]] = tuple(_REGISTERED)
#: Probes on one embedding per clip (``X``: ``[n, D]``).
VECTOR_PROBES: Final[tuple[str, ...]] = tuple(
    n for n, (level, _) in _REGISTERED.items() if level == "vector"
)
#: Probes on frame sequences (``X``: a list of ``[T_i, D]`` arrays).
TOKEN_PROBES: Final[tuple[str, ...]] = tuple(
    n for n, (level, _) in _REGISTERED.items() if level == "token"
)

if TYPE_CHECKING:
    #: Every probe class by name; ``PROBES[name].level`` is ``"vector"`` or ``"token"``.
    PROBES: dict[str, type[Probe]]


def _known(name: str) -> tuple[Literal["vector", "token"], str]:
    try:
        return _REGISTERED[name]
    except KeyError:
        raise ValueError(
            f"unknown probe {name!r}; known probes: {', '.join(PROBE_NAMES)}"
        ) from None


def _probe_name(name: str) -> str:
    _known(name)
    return name


#: A registered probe's name, as an option or a report key (validated against the table).
ProbeName = Annotated[str, AfterValidator(_probe_name)]


def probe_level(name: str) -> Literal["vector", "token"]:
    """``"vector"`` or ``"token"``, without importing the probe. ``ValueError`` when unknown."""
    return _known(name)[0]


def probe_class(name: str) -> type[Probe]:
    """The class registered as ``name`` (imported now). ``ValueError`` when unknown."""
    module, _, attribute = _known(name)[1].partition(":")
    probe: type[Probe] = getattr(importlib.import_module(module), attribute)
    return probe


def make_probe(name: str, **kwargs: Any) -> Probe:
    """Build the probe registered as ``name`` with keyword arguments ``kwargs``.

    Raises
    ------
    ValueError
        For an unknown name (lists the known ones).
    """
    return probe_class(name)(**kwargs)


def __getattr__(name: str) -> Any:
    if name == "PROBES":  # built on first use: it imports every probe class
        classes = {n: probe_class(n) for n in PROBE_NAMES}
        globals()["PROBES"] = classes
        return classes
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
