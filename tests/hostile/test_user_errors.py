"""A user's mistake is one line naming it; a bug is reported as a bug, never as the user's."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from audiobench import cli, grid
from audiobench.audio import AudioDecodeError, DuplicateAudioError
from audiobench.cache import CacheDamagedError
from audiobench.errors import CacheError, DataError, OptionError, UnsuitableModelError, UserError
from audiobench.metrics.errors import InsufficientClassesError, InvalidEmbeddingsError
from audiobench.pooling import CollateTooLargeError
from audiobench.probes.errors import GroupLeakError, MissingClassError
from audiobench.registry import UnknownNameError
from audiobench.runner import EmbeddingError
from audiobench.sources import DatasetError


def test_user_errors_are_their_own_types_and_keep_their_old_bases() -> None:
    assert not issubclass(ValueError, UserError) and not issubclass(RuntimeError, UserError)
    for cls, old in (
        (OptionError, ValueError),
        (DataError, ValueError),
        (UnsuitableModelError, ValueError),
        (CacheError, RuntimeError),
        (CacheDamagedError, RuntimeError),
        (DatasetError, ValueError),
        (AudioDecodeError, ValueError),
        (DuplicateAudioError, ValueError),
        (EmbeddingError, RuntimeError),
        (CollateTooLargeError, ValueError),
        (InsufficientClassesError, ValueError),
        (InvalidEmbeddingsError, ValueError),
        (MissingClassError, ValueError),
        (GroupLeakError, ValueError),
        (UnknownNameError, LookupError),
    ):
        assert issubclass(cls, UserError) and issubclass(cls, old), cls
    assert ValueError not in cli.USER_ERRORS and RuntimeError not in cli.USER_ERRORS
    assert LookupError not in cli.USER_ERRORS  # a KeyError from a bug is not a wrong name


def _run_main(monkeypatch: pytest.MonkeyPatch, raised: BaseException, *extra: str) -> int:
    def fails(*args: Any, **kwargs: Any) -> None:
        raise raised

    monkeypatch.setattr(grid, "evaluate_grid", fails)
    monkeypatch.setattr(sys, "argv", ["audiobench", "evaluate", "-t", "T", "-m", "M", *extra])
    monkeypatch.setitem(cli._debug, "on", False)
    with pytest.raises(SystemExit) as exited:
        cli.main()
    return int(exited.value.code or 0)


def test_an_internal_value_error_is_reported_as_a_bug(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run_main(monkeypatch, ValueError("shapes (3,) and (4,) not aligned")) == 1
    assert capsys.readouterr().err == (
        "error: internal error (a bug in audiobench or a plugin; rerun with --debug and "
        "report the traceback): ValueError: shapes (3,) and (4,) not aligned\n"
    )


def test_a_user_error_stays_one_plain_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run_main(monkeypatch, DataError("subset 'a': fewer than 2 clips")) == 1
    assert capsys.readouterr().err == "error: subset 'a': fewer than 2 clips\n"


def test_a_failed_pair_of_a_grid_says_which_kind_of_error_it_was(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from audiobench.grid import RunFailure

    cli._report_failure(RunFailure(task="T", model="M", error=OptionError("bad option")))
    cli._report_failure(RunFailure(task="T", model="N", error=KeyError("oops")))
    assert capsys.readouterr().err.splitlines() == [
        "error: T with M: bad option",
        "error: T with N: internal error (a bug in audiobench or a plugin; rerun with --debug "
        "and report the traceback): KeyError: 'oops'",
    ]


def test_an_unsuitable_model_is_a_user_error(tmp_path: Path) -> None:
    import audiobench

    with pytest.raises(UnsuitableModelError, match="no text encoder"):
        audiobench.evaluate(
            "MockZeroShotClassification",
            "log-mel",
            output_dir=tmp_path,
            progress=False,
            use_cache=False,
        )
