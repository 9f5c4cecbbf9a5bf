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


class _BugError(ValueError):
    """A ValueError subclass as a bug deep in a check raises it (a decode or schema error)."""


@pytest.mark.parametrize(
    ("raised", "expected"), [(ValueError, UnsuitableModelError), (_BugError, _BugError)]
)
def test_only_the_encoder_contracts_own_refusal_becomes_a_user_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, raised: type[ValueError], expected: type
) -> None:
    import audiobench
    from audiobench import registry

    def check(cls: type, encoder: Any) -> None:
        raise raised("no decoder")

    task = registry.tasks.get("SyntheticVocalisations")
    monkeypatch.setattr(task, "check_encoder", classmethod(check))
    with pytest.raises(expected, match="no decoder") as caught:
        audiobench.evaluate(
            "SyntheticVocalisations", "log-mel", output_dir=tmp_path, use_cache=False
        )
    assert type(caught.value) is expected
    assert isinstance(caught.value, UserError) == (raised is ValueError)


def test_an_unreadable_result_file_is_a_user_error_naming_it(tmp_path: Path) -> None:
    from audiobench.errors import ResultFileError
    from audiobench.results import load_result

    cases = {
        "missing.json": None,
        "text.json": b"not json",
        "latin1.json": '{"task": "é"}'.encode("latin-1"),
        "empty.json": b"{}",
    }
    for name, content in cases.items():
        path = tmp_path / name
        if content is not None:
            path.write_bytes(content)
        with pytest.raises(ResultFileError, match=rf"^{path}: (not a readable|invalid) ") as exc:
            load_result(path)
        assert isinstance(exc.value, UserError) and isinstance(exc.value, ValueError)


def test_option_syntax_and_an_empty_grid_are_option_errors() -> None:
    with pytest.raises(OptionError, match=r"--task-option expects KEY=VALUE, got 'x'"):
        cli.parse_options(["x"], "--task-option")
    with pytest.raises(OptionError, match="no model given"):
        grid.evaluate_grid(["SyntheticVocalisations"], [])


def test_leaderboard_build_names_a_missing_folder_and_shows_a_bug_as_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from audiobench.leaderboard import build

    missing = tmp_path / "no-results"
    argv = ["audiobench", "leaderboard", "build", "--results", str(missing)]
    monkeypatch.setattr(sys, "argv", [*argv, "--output", str(tmp_path / "site")])
    monkeypatch.setitem(cli._debug, "on", False)
    with pytest.raises(SystemExit) as refused:
        cli.main()
    assert refused.value.code == 2
    assert capsys.readouterr().err == f"error: {missing}: not a directory of result files\n"

    def fails(*args: Any, **kwargs: Any) -> None:
        raise ValueError("tables 'a' and 'b' would both be titled 'A'")

    monkeypatch.setattr(build, "build_leaderboard", fails)
    with pytest.raises(SystemExit) as bug:
        cli.main()
    assert bug.value.code == 1
    assert capsys.readouterr().err.startswith("error: internal error (a bug in audiobench")


def test_an_unreadable_result_in_the_way_names_it_and_the_remedy(tmp_path: Path) -> None:
    import audiobench
    from audiobench.errors import ResultFileError

    path = tmp_path / "log-mel" / "v1" / "SyntheticVocalisations.json"
    path.parent.mkdir(parents=True)
    path.write_text("{", encoding="utf-8")
    with pytest.raises(ResultFileError, match=r"in the way: move it aside or pass --overwrite"):
        audiobench.evaluate(
            "SyntheticVocalisations", "log-mel", output_dir=tmp_path, use_cache=False
        )
    assert path.read_text(encoding="utf-8") == "{"


def test_an_unknown_protocol_and_too_few_groups_are_user_errors() -> None:
    import numpy as np

    from audiobench import registry
    from audiobench.probes.splits import group_folds

    with pytest.raises(OptionError, match=r"task MockClustering: invalid option protocol: .*'zzz'"):
        registry.tasks.create("MockClustering", options={"protocol": "zzz"})
    codes = np.array([0, 0, 1, 1, 2, 2])
    with pytest.raises(DataError, match=r"into 5 folds needs at least 5 groups, got 3"):
        group_folds(np.array([0, 1, 0, 1, 0, 1]), codes, 5, 0, False)
