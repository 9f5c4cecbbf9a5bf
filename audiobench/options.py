"""The base of every options model (a task family's, a model's): validated, never reinterpreted.

Pydantic's lax mode turns ``true`` into ``1`` for an integer and accepts
``nan`` and ``inf`` for any float. On a command line these are mistakes
(``-o dim=true``, ``-O n_permutations=true``), so options refuse them: a
boolean is accepted only where the field admits a boolean, and no float
option takes a non-finite value. Everything else (``"64"`` for an integer,
a list for a tuple) converts as before.

An option renamed in a later version keeps its old name as an alias
(:attr:`StrictOptions.renamed`): a result file that recorded it still reads, and a
command line that gives it still runs, with a :class:`DeprecatedOptionWarning` naming the new
name.
"""

from __future__ import annotations

import types
import warnings
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal, Union, get_args, get_origin

from pydantic import (
    BaseModel,
    ConfigDict,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from audiobench.errors import OptionError

__all__ = [
    "DeprecatedOptionWarning",
    "StrictOptions",
    "current_option_names",
    "option_problems",
    "read_recorded_options",
]


class DeprecatedOptionWarning(FutureWarning):
    """An option given under the name it had before a rename (read as the new name)."""


def _admits_bool(annotation: Any) -> bool:
    """Whether a field of this type takes ``True``/``False`` as such (not as 1/0)."""
    if annotation is bool or annotation is Any or annotation is object:
        return True
    origin = get_origin(annotation)
    if origin is Annotated:
        return _admits_bool(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return any(_admits_bool(arm) for arm in get_args(annotation))
    if origin is Literal:
        return any(isinstance(v, bool) for v in get_args(annotation))
    return False


def _misread_bool(annotation: Any, value: Any) -> bool:
    """Whether ``value`` holds a boolean where ``annotation`` wants something else."""
    if isinstance(value, bool):
        return not _admits_bool(annotation)
    origin = get_origin(annotation)
    if origin is Annotated:
        return _misread_bool(get_args(annotation)[0], value)
    if origin is Union or origin is types.UnionType:
        arms = [a for a in get_args(annotation) if a is not type(None)]
        return all(_misread_bool(arm, value) for arm in arms) if arms else False
    if isinstance(value, list | tuple) and origin in (tuple, list, set, frozenset):
        args = [a for a in get_args(annotation) if a is not Ellipsis]
        if not args:
            return False
        if origin is tuple and Ellipsis not in get_args(annotation):
            return any(_misread_bool(a, v) for a, v in zip(args, value, strict=False))
        return any(_misread_bool(args[0], v) for v in value)
    return False


class StrictOptions(BaseModel):
    """Options: unknown keys, booleans taken for numbers and non-finite floats are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    #: Options renamed since results recorded them: old name -> current name. The old name is
    #: read as the current one wherever options are validated (result files written before the
    #: rename stay valid); :func:`current_option_names` also warns a user who types it.
    renamed: ClassVar[Mapping[str, str]] = {}

    @model_validator(mode="before")
    @classmethod
    def _current_names(cls, data: Any) -> Any:
        if cls.renamed and isinstance(data, Mapping):
            return current_option_names(cls, data)
        return data

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_for_a_number(cls, value: Any, info: ValidationInfo) -> Any:
        field = cls.model_fields.get(info.field_name or "")
        if field is not None and _misread_bool(field.annotation, value):
            shown = str(value).lower() if isinstance(value, bool) else repr(value)
            raise ValueError(
                f"{info.field_name} must be {_kind(field.annotation)}, got {shown} "
                "(a boolean is not taken for a number)"
            )
        return value


_KINDS = {int: "an integer", float: "a number", str: "text"}


def _kind(annotation: Any) -> str:
    """``int`` → "an integer", ``tuple[int, ...] | None`` → "a list of integers or null"."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _kind(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return " or ".join(
            "null" if arm is type(None) else _kind(arm) for arm in get_args(annotation)
        )
    if origin in (tuple, list, set, frozenset):
        args = [a for a in get_args(annotation) if a is not Ellipsis]
        return f"a list, each item {_kind(args[0])}" if args else "a list"
    if origin is Literal:
        return "one of " + ", ".join(repr(v) for v in get_args(annotation))
    return _KINDS.get(annotation, getattr(annotation, "__name__", str(annotation)))


def option_problems(exc: ValidationError) -> str:
    """Pydantic's errors as ``crop must be 'center' or 'start', got 'random'``."""
    problems = []
    for error in exc.errors(include_url=False):
        field = str(error["loc"][0]) if error["loc"] else "options"
        message = str(error["msg"])
        if message.startswith("Input should be "):
            expected = message.removeprefix("Input should be ")
            message = f"{field} must be {expected}, got {error.get('input')!r}"
        elif message.startswith("Value error, "):
            message = message.removeprefix("Value error, ")  # the validator names the field
        else:
            message = f"{field}: {message}"
        problems.append(message)
    return "; ".join(problems)


def current_option_names(
    options: type[StrictOptions], values: Mapping[str, Any], *, where: str | None = None
) -> dict[str, Any]:
    """``values`` with each renamed option under its current name (:attr:`StrictOptions.renamed`).

    With ``where`` (how errors name the task or model, e.g. ``"task ESC50"``), the values are a
    user's input: each old name gets a :class:`DeprecatedOptionWarning` that names the new one.
    Giving both names of one option is an error, whatever their values.
    """
    current: dict[str, Any] = {}
    for key, value in values.items():
        new = options.renamed.get(key)
        if new is None:
            current[key] = value
            continue
        if new in values:
            raise OptionError(
                f"{where or 'options'}: {key} is the old name of {new}; give {new} only"
            )
        if where is not None:
            warnings.warn(
                f"{where}: option {key} is deprecated, read as {new} (its new name); "
                f"write -O {new}=... instead",
                DeprecatedOptionWarning,
                stacklevel=3,
            )
        current[new] = value
    return current


def read_recorded_options(
    options: type[StrictOptions], values: Mapping[str, Any]
) -> dict[str, Any]:
    """The options a result file recorded that ``options`` still takes, under current names.

    Options a later version dropped are left out (they no longer change how a file is read);
    renamed ones are read under their new name, silently (the file is not the user's input).
    """
    return {
        k: v for k, v in current_option_names(options, values).items() if k in options.model_fields
    }
