"""Typed score reports and the one main-score grammar.

Every family describes its scores as pydantic models: a :class:`Report` per
subset and a :class:`Summary` for the mean over subsets. Both forbid unknown
fields and bound every number (:data:`Unit`, :data:`Signed`, :data:`Count`),
so the same models check a freshly computed report, a result file read back
from disk, and a file submitted to the leaderboard.

A main score is a path into a family's summary: segments joined by ``:``,
e.g. ``"pca100/spearman:gsr"`` (configuration, metric) or ``"linear:accuracy"``
(probe, metric) or ``"v_measure"``. :func:`parse_score_path` is the only
parser and :func:`score_at` the only lookup; results, benchmarks, the
leaderboard and the plots all go through them.
"""

from __future__ import annotations

import decimal
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "Count",
    "KeyedReport",
    "Report",
    "Signed",
    "Summary",
    "Unit",
    "cutoff_of",
    "finite_or_none",
    "mean_or_none",
    "mean_summary",
    "metric_names",
    "parse_score_path",
    "problems_of",
    "same_number",
    "score_at",
]

#: A fraction or rate: undefined values are ``None``.
Unit = Annotated[float, Field(ge=0.0, le=1.0)]
#: A correlation-like number in [-1, 1].
Signed = Annotated[float, Field(ge=-1.0, le=1.0)]
#: A non-negative count.
Count = Annotated[int, Field(ge=0)]
#: A finite number with no bound of its own (distances, losses).
NonNegative = Annotated[float, Field(ge=0.0)]

R = TypeVar("R", bound="Report")
S = TypeVar("S", bound="Summary")


class Report(BaseModel):
    """Base of every family's typed scores: strict, and dumped exactly as built.

    Fields a family leaves unset are left out of the JSON (``exclude_unset``),
    so optional parts (a filter's counts, a metric defined only for more than
    five classes) appear only when they were computed.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON (str, int, float, None, lists and dicts) of the fields that were set."""
        return self.model_dump(mode="json", exclude_unset=True)


class KeyedReport(Report):
    """A report that also keys scores by name (metrics such as ``hit@5``, probes, distances)
    in extra fields; a subclass types them with ``__pydantic_extra__: dict[<name>, <score>]``."""

    model_config = ConfigDict(extra="allow")


class Summary(Report):
    """Base of the mean over subsets (``aggregates`` of a result)."""

    subsets: list[str] = Field(description="The subsets averaged, in evaluation order.")


def parse_score_path(spec: str) -> tuple[str, ...]:
    """``"pca100/spearman:gsr"`` -> ("pca100/spearman", "gsr"); every segment non-empty."""
    parts = tuple(spec.split(":"))
    if not spec or any(not p for p in parts):
        raise ValueError(f"score {spec!r} must be one or more non-empty names joined by ':'")
    return parts


def score_at(report: BaseModel | Mapping[str, Any], path: Sequence[str]) -> float | None:
    """The number at ``path`` inside ``report`` (a model or its JSON), or None where absent.

    A step names a field of a model (or an extra field) or a key of a mapping. A metric summary
    reached at the end (anything with a ``value``) gives its ``value``.
    """
    node: Any = report
    for step in path:
        if isinstance(node, BaseModel):
            if step in type(node).model_fields:
                node = getattr(node, step, None)
            else:  # a name-keyed report keeps its names (probes, metrics) as extra fields
                node = (node.model_extra or {}).get(step)
        elif isinstance(node, Mapping):
            node = node.get(step)
        else:
            return None
        if node is None:
            return None
    if isinstance(node, BaseModel) and "value" in type(node).model_fields:
        node = node.value  # type: ignore[attr-defined]
    elif isinstance(node, Mapping) and "value" in node:
        node = node["value"]
    if isinstance(node, bool) or not isinstance(node, int | float):
        return None
    return float(node)


def cutoff_of(name: str, prefix: str, suffix: str = "") -> int | None:
    """k of a metric named ``<prefix><k><suffix>`` (``"hit@5"``, ``"top_5_accuracy"``), k a
    positive integer written plainly; None for any other name."""
    k = name.removeprefix(prefix).removesuffix(suffix)
    if f"{prefix}{k}{suffix}" != name or not re.fullmatch(r"[1-9][0-9]*", k):
        return None
    return int(k)


def metric_names(known: Sequence[str], *cutoffs: tuple[str, str]) -> Callable[[str], str]:
    """A validator of the metric names a report keys: one of ``known``, or
    ``<prefix><k><suffix>`` for a ``(prefix, suffix)`` of ``cutoffs`` (``("hit@", "")``)."""
    shown = ", ".join([*known, *(f"{prefix}<k>{suffix}" for prefix, suffix in cutoffs)])

    def check(name: str) -> str:
        if name in known or any(cutoff_of(name, *cutoff) is not None for cutoff in cutoffs):
            return name
        raise ValueError(f"unknown metric; known: {shown}")

    return check


def finite_or_none(value: float | None) -> float | None:
    """``value`` as a float, or None where it is undefined (None, NaN or infinite)."""
    if value is None or not math.isfinite(value):
        return None
    return float(value)


def mean_or_none(values: Iterable[float | None]) -> float | None:
    """Unweighted mean; None if any value is undefined (never a mean of fewer subsets)."""
    items = list(values)
    if not items or any(v is None for v in items):
        return None
    return math.fsum(items) / len(items)  # type: ignore[arg-type]


#: Fewest decimals a number may be rounded to where a file repeats a derived value.
MIN_DECIMALS = 4


def same_number(written: float, computed: float) -> bool:
    """Whether ``written`` is ``computed`` to the precision written (at least four decimals).

    Full-precision values agree to a relative 1e-9 (sums taken in another order differ in
    the last bits); a rounded one must be ``computed`` rounded, so dropping digits cannot
    move a number by more than half a unit of its fourth decimal.
    """
    if math.isclose(written, computed, rel_tol=1e-9, abs_tol=1e-12):
        return True
    exponent = decimal.Decimal(repr(float(written))).as_tuple().exponent
    decimals = -exponent if isinstance(exponent, int) else 0
    return decimals >= MIN_DECIMALS and abs(written - computed) <= 0.5 * 10.0**-decimals * (
        1 + 1e-9
    )


def _show(value: Any) -> str:
    """``repr(value)``, cut to 40 characters: hostile files may hold huge values."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def problems_of(model: type[BaseModel], data: Any, where: str = "") -> list[str]:
    """``"<path>: <message>"`` for everything ``model`` rejects in ``data`` (empty if valid)."""
    try:
        model.model_validate(data)
    except ValidationError as exc:
        lines = []
        for error in exc.errors(include_url=False):
            path = where
            for part in error["loc"]:
                if part == "[key]":
                    continue
                path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else part)
            if error["type"] == "extra_forbidden":
                message = "unknown field"
            elif error["type"] == "missing":
                message = "missing field"
            elif error["type"] == "value_error":
                message = str(error["msg"]).removeprefix("Value error, ")
            else:
                message = f"{error['msg']}, not {_show(error.get('input'))}"
            lines.append(f"{path or '<root>'}: {message}")
        return lines
    return []


def mean_summary(summary: type[S], reports: Mapping[str, Report], **given: Any) -> S:
    """The ``summary`` of ``reports`` (subset name -> report): unweighted means over subsets.

    Each field of ``summary`` that the reports set, and each name-keyed metric a report keeps
    as an extra field (``hit@5``, ``top_3_accuracy``), is averaged with :func:`mean_or_none`:
    undefined in one subset, undefined in the mean; ``given`` fields (a family's nested
    means) are taken as they are. ``subsets`` (and ``n_subsets`` where the summary has it)
    name what was averaged.
    """
    typed = list(reports.values())
    shared = [f for f in summary.model_fields if any(f in r.model_fields_set for r in typed)]
    extras = dict.fromkeys(n for r in typed for n in r.model_extra or {})
    counts = {"n_subsets": len(typed)} if "n_subsets" in summary.model_fields else {}
    means = {f: mean_or_none(getattr(r, f) for r in typed) for f in shared if f not in given}
    return summary(
        **means,
        **{n: mean_or_none((r.model_extra or {}).get(n) for r in typed) for n in extras},
        **given,
        **counts,
        subsets=list(reports),
    )
