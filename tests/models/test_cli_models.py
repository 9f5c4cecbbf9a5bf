"""`audiobench evaluate --model hf:<tiny checkpoint>` end to end, through the CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from audiobench.cli import app
from audiobench.results import load_result, result_path

FAST = ["--permutations", "20", "--bootstrap", "10", "--no-progress", "--subset", "SYN-A"]


@pytest.mark.parametrize("kind", ["whisper", "wavlm", "clap", "encodec"])
def test_synthetic_task_with_tiny_hf_model(
    kind: str, tiny: Callable[[str], Path], tmp_path: Path
) -> None:
    model = f"hf:{tiny(kind)}"
    args = ["evaluate", "--task", "SyntheticVocalisations", "--model", model]
    result = CliRunner().invoke(app, [*args, "--output-dir", str(tmp_path), *FAST])
    assert result.exit_code == 0, result.stderr
    saved = load_result(result_path(tmp_path, model, "main", "SyntheticVocalisations"))
    assert saved.model.source == str(tiny(kind))
    assert saved.main_score is not None
    eff = saved.efficiency
    assert eff.n_parameters and eff.n_parameters > 1000
    assert eff.flops_per_second and eff.flops_per_second > 0
    assert eff.compression_ratio and eff.bytes_per_second and eff.embedding_size


def test_model_options_reach_the_encoder(tiny: Callable[[str], Path], tmp_path: Path) -> None:
    model = f"hf:{tiny('wavlm')}"
    args = ["evaluate", "--task", "SyntheticVocalisations", "--model", model, "-o", "layer=1"]
    result = CliRunner().invoke(app, [*args, "--output-dir", str(tmp_path), "--no-flops", *FAST])
    assert result.exit_code == 0, result.stderr
    saved = load_result(result_path(tmp_path, model, "main", "SyntheticVocalisations"))
    assert saved.model.params == {"layer": 1}
    assert saved.efficiency.flops_per_second is None

    bad = CliRunner().invoke(app, [*args[:-1], "layer", "--output-dir", str(tmp_path)])
    assert bad.exit_code == 2 and "KEY=VALUE" in bad.stderr


def test_list_models_shows_the_built_ins() -> None:
    result = CliRunner().invoke(app, ["list", "models", "--json"])
    assert result.exit_code == 0
    models = {m["name"]: m for m in json.loads(result.stdout)}
    for name in ("whisper-large-v3", "wavlm-large", "wav2vec2-base", "hubert-large", "clap"):
        assert name in models
    assert models["whisper-large-v3"]["default_pooling"] == "mean_time_feat"
    assert models["encodec-24khz"]["can_decode"] is True
    assert models["clap"]["modalities"] == ["audio", "text"]
    assert models["random-projection"]["n_parameters"] == 0


def test_list_models_shows_each_models_options() -> None:
    result = CliRunner().invoke(app, ["list", "models", "--json"])
    assert result.exit_code == 0
    options = {m["name"]: m["options"] for m in json.loads(result.stdout)}
    common = {"layer": None, "weights": None, "trust_remote_code": False}
    assert options["encodec-24khz"] == {**common, "output": "latents", "bandwidth": None}
    asr = {"language": None, "task": None, "max_new_tokens": None, "num_beams": None}
    assert options["whisper-large-v3"] == {**common, "long_clips": "truncate", **asr}
    assert options["clap"] == {**common, "crop": "center", "seed": 0}
    assert options["wavlm-large"] == common
    assert options["mfcc"] == {"n_mfcc": 20}
    assert options["random-projection"] == {"dim": 512, "seed": 0}
    assert options["log-mel"] == {}
