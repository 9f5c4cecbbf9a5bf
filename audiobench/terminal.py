"""What reaches the terminal: user-controlled text shown, never obeyed.

File names, clip ids, labels and option values come from other people's data.
A name holding an escape sequence would clear the screen or forge an
``error:`` line if printed raw, so everything the command line prints goes
through :class:`SafeConsole`, which shows control and invisible characters as
their escapes (``\\x1b``, ``\\u202e``), the way ``repr`` shows a clip id.
Strings printed through it cannot hold a line break either; rich text built by
the program (tables, JSON, tracebacks) keeps its own line breaks and tabs.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Text

__all__ = ["SafeConsole", "printable"]

# Unicode categories a terminal does not show as themselves: controls, format
# characters (bidirectional overrides, zero-width marks), surrogates, private
# use, unassigned, and line/paragraph separators.
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def _shown(ch: str, keep: str) -> str:
    if ch in keep or unicodedata.category(ch) not in _HIDDEN:
        return ch
    return ch.encode("unicode_escape").decode("ascii")


def printable(text: str, *, keep: str = "") -> str:
    """``text`` with control and invisible characters as escapes, except those in ``keep``.

    >>> printable("a\\x1b[2Jb\\nc")
    'a\\\\x1b[2Jb\\\\nc'
    """
    if text.isprintable():
        return text
    return "".join(_shown(ch, keep) for ch in text)


def _neutralised(text: Text, console: Console, keep: str) -> Text:
    """A copy of ``text`` whose characters are all printable (styles kept); itself if they are."""
    if printable(text.plain, keep=keep) == text.plain:
        return text
    safe = Text(
        justify=text.justify,
        overflow=text.overflow,
        no_wrap=text.no_wrap,
        end=text.end,
        tab_size=text.tab_size,
    )
    for segment in text.render(console, end=""):
        safe.append(printable(segment.text, keep=keep), segment.style)
    return safe


class SafeConsole(Console):
    """A Rich console that cannot be made to emit a terminal control sequence by its text."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        # Strings are what messages are formatted into: one line each, escapes shown.
        return _neutralised(super().render_str(text, **kwargs), self, keep="")

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        if isinstance(renderable, Text):
            renderable = _neutralised(renderable, self, keep="\n\t")
        return super().render(renderable, options)


#: Width of tables printed to a pipe or file (`list models | less`, `results table > t.txt`):
#: Rich assumes 80 columns there, which breaks a hub id or a task name over five lines.
PIPED_TABLE_WIDTH = 160


def stdout_console(**kwargs: Any) -> SafeConsole:
    """The console for a command's output: at a pipe or file it is
    :data:`PIPED_TABLE_WIDTH` wide unless ``COLUMNS`` or ``TERMINAL_WIDTH`` says otherwise."""
    console = SafeConsole(**kwargs)
    if not console.is_terminal and not (
        os.environ.get("COLUMNS") or os.environ.get("TERMINAL_WIDTH")
    ):
        console.width = PIPED_TABLE_WIDTH
    return console
