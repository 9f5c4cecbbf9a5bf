"""Whole runs through the CLI and the Python API, on generated data, offline."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import audiobench
from audiobench.benchmark import get_benchmark
from audiobench.cli import app
from audiobench.results import load_result
from audiobench.synthetic import SubsetSpec, render_call, sample_call_types
from tests.conftest import folder_digest, write_tone
from tests.hub_copy import write_hub_like

FAST = ["--permutations", "200", "--bootstrap", "50", "--no-progress"]


def run_cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_synthetic_task_with_log_mel_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "results"
    args = [
        "evaluate",
        "--task",
        "SyntheticVocalisations",
        "--model",
        "log-mel",
        "--output-dir",
        str(out),
        *FAST,
    ]
    code, _, err = run_cli(*args)
    assert code == 0, err
    assert "encoded 160 clip(s), 0 served from cache" in err
    path = out / "log-mel" / "v1" / "SyntheticVocalisations.json"
    result = load_result(path)
    assert result.task.subsets == ["SYN-A", "SYN-B"]
    assert result.cache.n_encoded == 160 and result.skipped == []
    assert result.main_score is not None
    public = result.aggregates["public"]["configs"]
    for subset in ("SYN-A", "SYN-B"):
        cosine = result.scores[subset]["configs"]["raw/cosine"]
        for metric in ("p@1", "p@5", "gsr"):
            m = cosine[metric]
            # Clearly above chance: above the permutation null's upper percentile.
            assert m["value"] > m["baseline_ci"][1], (subset, metric, m)
            assert m["p_value"] < 0.05
    assert public["raw/cosine"]["p@1"] > 0.5  # 8 classes: chance is 1/8

    # Recomputing reuses every embedding, and says so.
    code, _, err = run_cli(*args, "--overwrite")
    assert code == 0, err
    assert "encoded 0 clip(s), 160 served from cache" in err
    again = load_result(path)
    assert again.cache.n_cached == 160 and again.cache.n_encoded == 0
    assert again.scores == result.scores  # seeded: identical numbers

    # Without --overwrite the existing result is reused untouched.
    code, _, err = run_cli(*args)
    assert code == 0 and "reusing existing result" in err
    assert load_result(path).date == again.date


def test_plugin_task_and_model_run(tmp_path: Path) -> None:
    code, _, err = run_cli(
        "evaluate",
        "--task",
        "ExampleChirps",
        "--model",
        "example-spectral-stats",
        "--output-dir",
        str(tmp_path),
        *FAST,
    )
    assert code == 0, err
    result = load_result(tmp_path / "example-spectral-stats" / "v1" / "ExampleChirps.json")
    assert result.main_score_name == "raw/cosine:p@1" and result.main_score is not None


def _bad_folder(root: Path) -> Path:
    for label, freq in (("low", 300.0), ("high", 3000.0)):
        for k in range(4):
            write_tone(root / label / f"{k}.wav", freq=freq * (1 + 0.01 * k), seconds=0.3)
    (root / "high" / "2.wav").write_bytes(b"not audio at all")
    return root


def test_folder_task_bad_audio_errors_or_is_skipped(tmp_path: Path) -> None:
    root = _bad_folder(tmp_path / "calls")
    code, _, err = run_cli(
        "evaluate",
        "--task",
        f"folder:{root}",
        "--model",
        "log-mel",
        "--output-dir",
        str(tmp_path / "r"),
        *FAST,
    )
    assert code == 1
    assert "clip 'high/2'" in err and "high/2.wav" in err

    code, _, err = run_cli(
        "evaluate",
        "--task",
        f"folder:{root}",
        "--model",
        "log-mel",
        "--output-dir",
        str(tmp_path / "r"),
        "--on-error",
        "skip",
        *FAST,
    )
    assert code == 0, err
    result = load_result(
        tmp_path / "r" / "log-mel" / "v1" / f"Folder-calls-{folder_digest(root)}.json"
    )
    assert [s.id for s in result.skipped] == ["high/2"]
    assert result.scores["default"]["counts"]["n_clips"] == 7


def _vocsim_like_copy(root: Path) -> Path:
    """A local dataset laid out like the hub one: public BC, BS1 and blind HU3."""
    rng = np.random.default_rng(5)
    rows = []
    for subset, f0 in (("BC", (1000.0, 5000.0)), ("BS1", (200.0, 800.0)), ("HU3", (100.0, 400.0))):
        spec = SubsetSpec(subset, n_classes=4, clips_per_class=5, f0_range=f0, max_harmonics=4)
        for call in sample_call_types(spec, rng):
            for _ in range(spec.clips_per_class):
                wave = render_call(
                    call, rng, 22050, individual_shift=1.0, individual_formant=(1500.0, 300.0)
                )
                rows.append(
                    {"audio": (wave, 22050), "label": call.name, "subset": subset, "speaker": "s0"}
                )
    return write_hub_like(root, rows, n_shards=2)


def test_vocsim_from_local_copy_writes_blind_subsets_only_as_averages(tmp_path: Path) -> None:
    data = _vocsim_like_copy(tmp_path / "vocsim")
    code, stdout, err = run_cli(
        "evaluate",
        "--benchmark",
        "VocSim",
        "--model",
        "log-mel",
        "--dataset",
        str(data),
        "--output-dir",
        str(tmp_path / "r"),
        *FAST,
    )
    assert code == 0, err
    result = load_result(tmp_path / "r" / "log-mel" / "v1" / "VocSimGSR.json")
    assert set(result.scores) == {"BC", "BS1"}  # HU3 is blind: no per-subset scores
    assert result.aggregates["public"]["subsets"] == ["BC", "BS1"]
    assert result.aggregates["blind"]["subsets"] == ["HU3"]
    assert result.main_score_name == "pca100/spearman:gsr"
    bc = result.scores["BC"]["configs"]["pca100/spearman"]["gsr"]["value"]
    bs1 = result.scores["BS1"]["configs"]["pca100/spearman"]["gsr"]["value"]
    assert result.main_score == pytest.approx((bc + bs1) / 2)
    # The benchmark table reports public and blind apart.
    row = get_benchmark("VocSim").table([result])[0]
    assert row["public GSR"] == pytest.approx(result.main_score)
    assert row["blind GSR"] is not None
    assert "VocSim" in stdout and "blind GSR" in stdout
    assert "HU3" not in json.dumps(result.scores)


def test_blind_only_task_from_hub_explains(tmp_path: Path) -> None:
    code, _, err = run_cli(
        "evaluate",
        "--task",
        "VocSim-HU3",
        "--model",
        "log-mel",
        "--output-dir",
        str(tmp_path),
        *FAST,
    )
    assert code == 1 and "blind" in err and "--dataset" in err


def test_python_api(tmp_path: Path, labelled_folder: Path) -> None:
    [result] = audiobench.evaluate(
        f"folder:{labelled_folder}",
        "log-mel",
        output_dir=tmp_path,
        progress=False,
        task_options={
            "n_permutations": 100,
            "n_bootstrap": 20,
            "distances": ["cosine"],
            "pca": [None],
        },
    )
    configs = result.scores["default"]["configs"]
    assert configs["raw/cosine"]["p@1"]["value"] > 0.8  # 3 tone classes; chance is 1/3
    # The headline configuration is evaluated even though the grid asked for raw/cosine only.
    assert result.main_score_name == "pca100/spearman:gsr"
    assert result.main_score == configs["pca100/spearman"]["gsr"]["value"] is not None


def test_paper_filters_drop_long_clips_and_small_classes(tmp_path: Path) -> None:
    root = tmp_path / "calls"
    for k in range(8):  # class "a": 8 clips, the last one far longer than the rest
        write_tone(root / "a" / f"{k}.wav", freq=300.0 + k, seconds=2.0 if k == 7 else 0.3)
    for k in range(7):
        write_tone(root / "b" / f"{k}.wav", freq=3000.0 + k, seconds=0.3)
    for k in range(3):  # class "c": too small for the paper's minimum of 6
        write_tone(root / "c" / f"{k}.wav", freq=1200.0 + k, seconds=0.3)
    code, _, err = run_cli(
        "evaluate",
        "--task",
        f"folder:{root}",
        "--model",
        "log-mel",
        "--output-dir",
        str(tmp_path / "r"),
        "--paper-filters",
        *FAST,
    )
    assert code == 0, err
    result = load_result(
        tmp_path / "r" / "log-mel" / "v1" / f"Folder-calls-{folder_digest(root)}.json"
    )
    scores = result.scores["default"]
    # 18 clips: 98th percentile of durations excludes only the 2 s clip; then class c goes.
    assert scores["filtered"] == {"n_long_clips": 1, "n_small_class_clips": 3}
    assert scores["counts"]["n_clips"] == 14
    assert result.details["filters"] == {"max_duration_percentile": 98.0, "min_clips_per_class": 6}


def test_options_of_other_families_are_passed_only_where_they_apply(tmp_path: Path) -> None:
    code, _, err = run_cli(
        "evaluate",
        "--task",
        "MockClustering",
        "--task",
        "SyntheticVocalisations",
        "--model",
        "log-mel",
        "--output-dir",
        str(tmp_path),
        "--no-flops",
        *FAST,
    )
    assert code == 0, err
    assert "options not used by MockClustering (clustering): n_bootstrap, n_permutations" in err
    clustering = load_result(tmp_path / "log-mel" / "v1" / "MockClustering.json")
    assert clustering.details["unused_options"] == ["n_bootstrap", "n_permutations"]
    similarity = load_result(tmp_path / "log-mel" / "v1" / "SyntheticVocalisations.json")
    assert "unused_options" not in similarity.details
