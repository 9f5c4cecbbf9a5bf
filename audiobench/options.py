"""The base of every options model (a task family's, a model's): validated, never reinterpreted.

Pydantic's lax mode turns ``true`` into ``1`` for an integer and accepts
``nan`` and ``inf`` for any float. On a command line these are mistakes
(``-o dim=true``, ``-O n_permutations=true``), so options refuse them: a
boolean is accepted only where the field admits a boolean, and no float
option takes a non-finite value. Everything else (``"64"`` for an integer,
a list for a tuple) converts as before.
"""

from __future__ import annotations

import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo, field_validator

__all__ = ["StrictOptions", "option_problems"]


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
