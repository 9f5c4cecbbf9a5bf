"""Options are validated, never reinterpreted: each refusal names the option and what it takes."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import audiobench
from audiobench import registry
from audiobench.cli import app
from audiobench.encoder import DeviceError, check_device
from audiobench.errors import OptionError, UserError
from audiobench.sources import DatasetError
from audiobench.task import TaskOptions
from tests.hostile.files import tone_folder

RUN = ["--no-cache", "--no-flops", "--no-progress", "--permutations", "5", "--bootstrap", "5"]


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stderr


def test_a_boolean_is_not_taken_for_a_model_number() -> None:
    with pytest.raises(
        OptionError,
        match=r"model 'random-projection': invalid option\(s\): dim must be an integer, "
        r"got true \(a boolean is not taken for a number\)",
    ):
        registry.models.create("random-projection", dim=True)


def test_a_boolean_is_not_taken_for_a_task_number_even_inside_a_list() -> None:
    task = registry.tasks.get("SyntheticVocalisations")
    with pytest.raises(
        OptionError, match=r"invalid option n_permutations: n_permutations must be an integer"
    ):
        task.resolve_options({"n_permutations": True})
    with pytest.raises(OptionError, match=r"invalid option ks: ks must be a list, each item an"):
        task.resolve_options({"ks": [True, 5]})
    # Real values still convert as before.
    assert task.resolve_options({"ks": [1, 10], "n_permutations": "20"}).ks == (1, 10)  # type: ignore[attr-defined]


def test_non_finite_floats_are_refused_by_every_options_model() -> None:
    class Knobs(TaskOptions):
        scale: float = 1.0
        flag: bool = False

    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match=r"scale\n.*finite number"):
            Knobs.model_validate({"scale": bad})
    assert Knobs.model_validate({"scale": 2, "flag": True}).flag is True


def test_a_huge_dimension_is_refused_by_name_before_allocating() -> None:
    with pytest.raises(
        OptionError, match=r"dim must be less than or equal to 65536, got 2000000000"
    ):
        registry.models.create("random-projection", dim=2_000_000_000)
    with pytest.raises(OptionError, match=r"seed must be greater than or equal to 0"):
        registry.models.create("random-projection", seed=-1)


def test_the_cli_names_the_model_option(tmp_path: Path) -> None:
    root = tone_folder(tmp_path / "d", n=4)
    code, err = _cli("evaluate", "--task", f"folder:{root}", "-m", "random-projection",
                     "-o", "dim=true", "--output-dir", str(tmp_path / "o"), *RUN)  # fmt: skip
    assert code == 1
    assert err.startswith("error: model 'random-projection': invalid option(s): dim must be an")
    assert not (tmp_path / "o").exists()


def test_dtype_is_checked_against_what_the_model_computes_in() -> None:
    with pytest.raises(OptionError, match=r"unknown dtype 'banana' \(--dtype\); choose float32"):
        registry.models.create("log-mel", dtype="banana")
    with pytest.raises(
        OptionError,
        match=r"model 'log-mel' computes in float32 only; --dtype float16 does not apply",
    ):
        registry.models.create("log-mel", dtype="float16")
    # What is recorded is what ran, in its canonical name.
    assert registry.models.create("log-mel", dtype="fp32").describe()["dtype"] == "float32"
    assert registry.models.create("log-mel").describe()["dtype"] is None


def test_the_cli_refuses_a_dtype_that_would_be_recorded_but_not_run(tmp_path: Path) -> None:
    root = tone_folder(tmp_path / "d", n=4)
    for dtype, message in (("banana", "unknown dtype 'banana'"), ("float16", "float32 only")):
        code, err = _cli("evaluate", "--task", f"folder:{root}", "-m", "log-mel", "--dtype",
                         dtype, "--output-dir", str(tmp_path / "o"), *RUN)  # fmt: skip
        assert code == 1 and message in err, err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("device", ["meta", "xla", "cuda:x"])
def test_devices_that_hold_no_data_are_refused_in_one_line(device: str) -> None:
    with pytest.raises(DeviceError, match=rf"unknown device '{device}'; use cpu, cuda, cuda:N"):
        check_device(device)
    assert issubclass(DeviceError, OptionError)


def test_the_cli_refuses_device_meta_without_torch_internals(tmp_path: Path) -> None:
    root = tone_folder(tmp_path / "d", n=4)
    code, err = _cli("evaluate", "--task", f"folder:{root}", "-m", "log-mel", "--device",
                     "meta", "--output-dir", str(tmp_path / "o"), *RUN)  # fmt: skip
    assert code == 1
    assert err == "error: unknown device 'meta'; use cpu, cuda, cuda:N (N-th GPU) or mps\n"


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "-inf"])
def test_max_clip_seconds_never_turns_the_limit_off_by_accident(tmp_path: Path, value: str) -> None:
    root = tone_folder(tmp_path / "d", n=4)
    code, err = _cli("evaluate", "--task", f"folder:{root}", "-m", "log-mel",
                     f"--max-clip-seconds={value}", "--output-dir", str(tmp_path / "o"),
                     *RUN)  # fmt: skip
    assert code == 2
    assert "--max-clip-seconds must be a number of seconds >= 0 (0: no limit)" in err
    assert not (tmp_path / "o").exists()


def test_run_settings_refused_by_name_from_the_python_api(tmp_path: Path) -> None:
    for value in (-1.0, float("nan")):
        with pytest.raises(OptionError, match=r"invalid setting\(s\): max_clip_seconds"):
            audiobench.evaluate("SyntheticVocalisations", "log-mel", max_clip_seconds=value)
    with pytest.raises(OptionError, match=r"invalid setting\(s\): batch_size"):
        audiobench.evaluate("SyntheticVocalisations", "log-mel", batch_size=0)


def test_a_maeb_task_given_a_labels_csv_folder_says_what_to_run_instead(tmp_path: Path) -> None:
    root = tone_folder(tmp_path / "mine", n=4)
    task = registry.tasks.create("CREMA_D", dataset_path=root)
    with pytest.raises(
        DatasetError,
        match=r"task CREMA_D: --dataset .*mine is a folder of audio with a labels.csv; this "
        r"task reads a copy of the hub dataset mteb/crema-d .* run --task "
        r"folder-classification:.*mine",
    ):
        task.load_data()
    missing = registry.tasks.create("CREMA_D", dataset_path=tmp_path / "nowhere")
    with pytest.raises(DatasetError, match=r"--dataset .*nowhere does not exist"):
        missing.load_data()
    assert issubclass(DatasetError, UserError)
