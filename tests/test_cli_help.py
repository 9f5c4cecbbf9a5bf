"""Help a newcomer can read: piped to a file or a pager, with every option and name intact."""

from __future__ import annotations

import os
import subprocess
import sys

from typer.testing import CliRunner

from audiobench.cli import PIPED_HELP_WIDTH, app


def _piped(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "TERMINAL_WIDTH")}
    return subprocess.run(
        [sys.executable, "-c", "from audiobench.cli import main; main()", *args],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )


def test_piped_help_is_wide_and_keeps_bracketed_names() -> None:
    done = _piped("evaluate", "--help")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    widths = {len(line) for line in text.splitlines()}
    # Rich's 80 columns squeezed each option's help into 15 characters; piped help is wider.
    assert max(widths) == PIPED_HELP_WIDTH
    assert "'audiobench[ray]'" in " ".join(text.split())  # not eaten as Rich markup
    assert "--no-cache" in text and "--no-no-cache" not in text
    assert "folder-<family>:PATH" in " ".join(text.replace("│", " ").split())


def test_piped_tables_keep_each_model_on_one_line() -> None:
    done = _piped("list", "models")
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("│ clap ")]
    # at 80 columns the hub id was broken over five lines of the source column
    assert len(rows) == 1 and "laion/clap-htsat-unfused" in rows[0]


def test_cache_clear_without_a_terminal_says_that_y_confirms() -> None:
    done = _piped("cache", "clear", "--cache-dir", os.devnull + "-no-such-cache")
    assert done.returncode == 1
    message = " ".join(done.stderr.split())
    assert message.startswith("error: cache clear asks for confirmation")
    assert "pass -y (--yes) to confirm" in message


def test_no_cache_is_one_flag() -> None:
    result = CliRunner().invoke(app, ["evaluate", "--no-no-cache"])
    assert result.exit_code == 2
