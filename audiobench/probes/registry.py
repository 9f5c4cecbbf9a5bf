"""Probe names: :data:`PROBES` and :func:`make_probe`."""

from __future__ import annotations

from typing import Any

from audiobench.probes.attentive import AttentiveProbe
from audiobench.probes.base import Probe
from audiobench.probes.knn import KNNProbe
from audiobench.probes.linear import LinearProbe
from audiobench.probes.mlp import MLPProbe
from audiobench.probes.protobin import ProtoBinProbe

__all__ = ["PROBES", "TOKEN_PROBES", "VECTOR_PROBES", "make_probe"]

#: Every probe class by name; ``PROBES[name].level`` is ``"vector"`` or ``"token"``.
PROBES: dict[str, type[Probe]] = {
    probe.name: probe for probe in (KNNProbe, LinearProbe, MLPProbe, AttentiveProbe, ProtoBinProbe)
}
#: Probes on one embedding per clip (``X``: ``[n, D]``).
VECTOR_PROBES: tuple[str, ...] = tuple(n for n, p in PROBES.items() if p.level == "vector")
#: Probes on frame sequences (``X``: a list of ``[T_i, D]`` arrays).
TOKEN_PROBES: tuple[str, ...] = tuple(n for n, p in PROBES.items() if p.level == "token")


def make_probe(name: str, **kwargs: Any) -> Probe:
    """Build the probe registered as ``name`` with keyword arguments ``kwargs``.

    Raises
    ------
    ValueError
        For an unknown name (lists the known ones).
    """
    try:
        probe = PROBES[name]
    except KeyError:
        raise ValueError(f"unknown probe {name!r}; known probes: {', '.join(PROBES)}") from None
    return probe(**kwargs)
