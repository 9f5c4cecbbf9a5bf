"""Names from data reach the terminal shown, never obeyed (escape sequences, forged lines)."""

from __future__ import annotations

import io
from pathlib import Path

from rich.text import Text
from typer.testing import CliRunner

from audiobench.cli import app
from audiobench.terminal import SafeConsole, printable
from tests.hostile.files import tone_folder, write_labels

# Clears the screen, homes the cursor and starts a line that looks like ours.
FORGED = "x\x1b[2J\x1b[Herror: forged\n\u202e.wav"


def test_printable_shows_controls_as_escapes_and_leaves_text_alone() -> None:
    assert printable("a\x1b[2Jb\nc\rd\u202ee\u2028") == "a\\x1b[2Jb\\nc\\rd\\u202ee\\u2028"
    assert printable("line\nbreak\ttab", keep="\n\t") == "line\nbreak\ttab"
    assert printable("naïve 日本 ☃ [red]x[/]") == "naïve 日本 ☃ [red]x[/]"


def test_the_console_shows_what_a_string_or_rich_text_holds() -> None:
    buffer = io.StringIO()
    console = SafeConsole(file=buffer, force_terminal=True, color_system="standard", width=200)
    console.print(f"reading {FORGED}", highlight=False)
    console.print(Text.assemble(("error: ", "bold"), f"clip {FORGED}"))
    shown = buffer.getvalue()
    assert "\x1b[2J" not in shown and "\x1b[H" not in shown and "\u202e" not in shown
    # A string holds no line break of its own: everything after "reading" is one line.
    assert "reading x\\x1b[2J\\x1b[Herror: forged\\n\\u202e.wav\n" in shown
    # Rich text keeps the line breaks the program put in it (tables, JSON, tracebacks);
    # one-line messages are made printable before (see the CLI test below).
    assert "clip x\\x1b[2J\\x1b[Herror: forged\n\\u202e.wav\n" in shown
    assert "\x1b[1merror: \x1b[0m" in shown  # our own styling still reaches the terminal


def test_a_file_name_with_escapes_cannot_clear_the_screen_or_forge_a_line(tmp_path: Path) -> None:
    root = tone_folder(tmp_path / "d", n=4)
    (root / FORGED).write_bytes(b"not audio at all")
    rows = [f"c{k}.wav,{'ab'[k % 2]}" for k in range(4)]
    write_labels(root, [*rows, f'"{FORGED}",a'])
    result = CliRunner().invoke(
        app,
        ["evaluate", "--task", f"folder:{root}", "--model", "log-mel", "--no-cache",
         "--no-flops", "--no-progress", "--output-dir", str(tmp_path / "out")],
    )  # fmt: skip
    assert result.exit_code == 1
    err = result.stderr
    assert "\x1b" not in err and "\u202e" not in err
    [line] = [line for line in err.splitlines() if "forged" in line]
    assert line.startswith("error: clip 'x\\x1b[2J\\x1b[Herror: forged\\n\\u202e' (file ")
    # The path is shown as the clip id is: escaped, on the same line.
    assert "/x\\x1b[2J\\x1b[Herror: forged\\n\\u202e.wav): unreadable audio" in line
    assert sum(line.startswith("error:") for line in err.splitlines()) == 1
