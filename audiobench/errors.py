"""The exceptions that mean "the user can fix this": the command line prints them as one line.

Anything else that escapes a command is a bug (in audiobench or a plugin) and
is reported as one, with a pointer to ``--debug`` for its traceback. An error
raised for a user's input, option, file or environment therefore derives from
:class:`UserError`; it also derives from the built-in type it always was
(``ValueError``, ``RuntimeError``...), so code that catches that keeps working.
"""

from __future__ import annotations

__all__ = [
    "CacheError",
    "DataError",
    "OptionError",
    "ResultFileError",
    "UnsuitableModelError",
    "UserError",
]


class UserError(Exception):
    """A mistake or a condition the user can fix; its message says what and how."""


class OptionError(UserError, ValueError):
    """An option's value is refused: the message names the option and what it accepts."""


class CacheError(UserError, RuntimeError):
    """The embedding cache cannot be used: the message names its path and a remedy that works."""


class DataError(UserError, ValueError):
    """A task's data cannot be scored as given: the message names the subset, clip or file."""


class UnsuitableModelError(UserError, ValueError):
    """The model lacks what the task needs (a text encoder, a decoder...)."""


class ResultFileError(UserError, ValueError):
    """A result file cannot be read, or is not a valid result: the message names the file."""
