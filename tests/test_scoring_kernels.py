"""What a run records about the machine that scored it: the CPU and the scoring kernels."""

from __future__ import annotations

from pathlib import Path

import pytest

import audiobench
from audiobench.machine import cpu_capability, cpu_model


def _similarity(folder: Path, out: Path) -> audiobench.results.TaskResult:
    [result] = audiobench.evaluate(
        f"folder:{folder}",
        "log-mel",
        output_dir=out,
        progress=False,
        task_options={"n_permutations": 20, "n_bootstrap": 0, "distances": ["cosine"]},
    )
    return result


def test_result_environment_records_cpu_and_kernels(tmp_path: Path, labelled_folder: Path) -> None:
    result = _similarity(labelled_folder, tmp_path)
    environment = result.environment
    assert environment.cpu is not None
    assert environment.cpu.startswith(cpu_model())
    assert cpu_capability() in environment.cpu
    chosen = environment.scoring_kernels["chosen"]  # type: ignore[index]
    # One engine per configuration scored: a kernel for its nulls and one for the observed.
    engines = len(result.scores["default"]["configs"])
    assert sum(n for key, n in chosen.items() if key.startswith("avgid-nulls/")) == engines
    assert sum(n for key, n in chosen.items() if key.startswith("avgid-observed/")) == engines
    [rates] = environment.scoring_kernels["rates"]  # type: ignore[index]
    assert rates["device"] == "cpu" and rates["float64_gmacs"] > 0
    # Not part of the run's identity: the same run is reused whatever the kernels were.
    assert "scoring_kernels" not in result.run.model_dump_json()


def test_forced_kernel_is_recorded_and_scores_are_unchanged(
    tmp_path: Path, labelled_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    measured = _similarity(labelled_folder, tmp_path / "measured")
    monkeypatch.setenv("AUDIOBENCH_SCORING_KERNEL", "int8")
    forced = _similarity(labelled_folder, tmp_path / "forced")
    engines = len(forced.scores["default"]["configs"])
    assert forced.environment.scoring_kernels["chosen"] == {  # type: ignore[index]
        "avgid-nulls/int8": engines,
        "avgid-observed/int8": engines,
        "integer-rows/int8": 1,  # the spearman ranks of the raw configuration
    }
    # Every kernel but float32 is exact, and float32 is left out of work this small.
    assert forced.scores == measured.scores
