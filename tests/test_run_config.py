"""The run's settings are typed from the command line down: one RunConfig, validated once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from audiobench import cli, evaluation, grid
from audiobench.evaluation import RunConfig
from audiobench.grid import evaluate_grid


def test_the_cli_hands_the_grid_one_typed_run_config(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls: list[tuple[Any, ...]] = []

    def record(tasks: Any, models: Any, config: Any = None, **kwargs: Any) -> grid.GridOutcome:
        calls.append((tasks, models, config, kwargs))
        return grid.GridOutcome()

    monkeypatch.setattr(grid, "evaluate_grid", record)
    args = ["evaluate", "-t", "A", "-t", "B", "-m", "log-mel", "--no-cache", "--no-flops"]
    args += ["--max-clip-seconds", "0", "--subset", "s1", "--permutations", "7", "-O", "x=[1,2]"]
    args += ["-o", "layer=3", "--ray-audio", "paths", "--on-error", "skip"]
    args += ["--output-dir", str(tmp_path)]
    result = CliRunner().invoke(cli.app, args)
    assert result.exit_code == 0, result.stderr
    [(tasks, models, config, kwargs)] = calls
    assert tasks == ["A", "B"] and models == ["log-mel"]
    assert type(config) is RunConfig
    assert set(kwargs) == {"console", "on_failure"}  # no setting by keyword beside the config
    assert config.use_cache is False and config.count_flops is False
    assert config.max_clip_seconds is None  # 0: no limit
    assert config.subsets == ("s1",)
    assert config.task_options == {"x": [1, 2], "n_permutations": 7}
    assert config.model_options == {"layer": 3}
    assert config.ray_audio == "paths" and config.on_error == "skip"
    assert config.output_dir == tmp_path


def test_a_refused_setting_is_named_by_its_flag() -> None:
    with pytest.raises(ValidationError) as batch:
        RunConfig(batch_size=0)
    assert cli.refused_flags(batch.value) == (
        "--batch-size must be greater than or equal to 1, got 0"
    )
    with pytest.raises(ValidationError) as audio:
        RunConfig(ray_audio="disk")
    assert cli.refused_flags(audio.value) == "--ray-audio must be 'bytes' or 'paths', got disk"
    with pytest.raises(ValidationError) as subsets:
        RunConfig(subsets=5)  # a setting whose flag is not its name
    assert cli.refused_flags(subsets.value) == "--subset must be a valid tuple, got 5"
    with pytest.raises(ValidationError) as limit:
        RunConfig(max_clip_seconds=float("nan"))
    assert cli.refused_flags(limit.value) == (
        "--max-clip-seconds must be a number of seconds >= 0 (0: no limit), got nan"
    )


def test_the_grid_passes_its_config_on_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[RunConfig] = []

    def record(tasks: Any, model: Any, config: RunConfig, **kwargs: Any) -> list[Any]:
        seen.append(config)
        return []

    monkeypatch.setattr(grid, "evaluate", record)
    config = RunConfig(batch_size=3, use_cache=False)
    evaluate_grid(["A"], ["m1", "m2"], config)
    assert seen == [config, config] and all(c is config for c in seen)


class _Stop(Exception):
    """Raised where the test has seen what it wanted, before any work."""


def test_evaluate_validates_only_settings_given_by_keyword(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    validated: list[Any] = []
    devices: list[str] = []
    real = RunConfig.model_validate

    def counting(obj: Any, **kwargs: Any) -> RunConfig:
        validated.append(obj)
        return real(obj, **kwargs)

    def stop(device: str) -> None:
        devices.append(device)
        raise _Stop

    monkeypatch.setattr(RunConfig, "model_validate", counting)
    monkeypatch.setattr(evaluation, "check_device", stop)
    config = RunConfig(batch_size=3, device="cuda")
    with pytest.raises(_Stop):
        evaluation.evaluate("T", "m", config)
    assert validated == []  # a RunConfig is valid once made
    with pytest.raises(_Stop):
        evaluation.evaluate("T", "m", config, device="cpu")
    # The keyword wins over the config; what the config set is kept, and validated with it.
    assert validated == [{"batch_size": 3, "device": "cpu"}]
    assert devices == ["cuda", "cpu"]


def test_an_unknown_pooling_is_refused_by_the_config_naming_the_flag(tmp_path: Path) -> None:
    from audiobench.errors import OptionError

    with pytest.raises(OptionError, match=r"invalid setting\(s\): unknown pooling 'banana'"):
        RunConfig.model_validate({"pooling": "banana"})
    assert RunConfig(pooling="masked:mean_time").pooling == "masked:mean_time"
    args = ["evaluate", "-t", "SyntheticVocalisations", "-m", "log-mel", "--pooling", "mean_time+x"]
    result = CliRunner().invoke(cli.app, [*args, "--output-dir", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert result.stderr.startswith(
        "error: --pooling: unknown pooling 'x' in 'mean_time+x'; known: "
    )
    assert not (tmp_path / "o").exists()
