from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from audiobench.results import (
    CacheStats,
    Environment,
    ModelInfo,
    TaskInfo,
    TaskResult,
    Timings,
    load_result,
    result_path,
    safe_component,
    utc_now,
)


def make_result(**overrides: Any) -> TaskResult:
    fields: dict[str, Any] = {
        "task": TaskInfo(name="T", family="zero_shot_similarity", revision="abc", dataset="d"),
        "model": ModelInfo(
            name="org/m", revision=None, pooling="none", fingerprint="f", sample_rate=16000
        ),
        "audiobench_version": "0.1.0",
        "main_score": 0.5,
        "main_score_name": "raw/cosine:gsr",
        "scores": {"S1": {"configs": {"raw/cosine": {"gsr": {"value": 0.5}}}}},
        "cache": CacheStats(n_clips=2, n_cached=0, n_encoded=2),
        "timings": Timings(load_data_s=0, encode_s=1, evaluate_s=1, total_s=2),
        "environment": Environment.capture("cpu"),
        "date": utc_now(),
    }
    fields.update(overrides)
    return TaskResult(**fields)


def test_save_load_round_trip(tmp_path: Path) -> None:
    result = make_result()
    path = result.save(tmp_path)
    assert path == tmp_path / "org__m" / "no_revision" / "T.json"
    assert load_result(path) == result
    assert not list(path.parent.glob(".*"))  # no temp files left behind


def test_unknown_fields_and_bad_types_are_rejected(tmp_path: Path) -> None:
    data = json.loads(make_result().model_dump_json())
    data["surprise"] = 1
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"(?s)r.json: invalid result file.*surprise"):
        load_result(path)
    data.pop("surprise")
    data["cache"]["n_clips"] = "many"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="n_clips"):
        load_result(path)


def test_malformed_json_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    with pytest.raises(ValueError, match=r"broken\.json: not a readable JSON"):
        load_result(path)


def test_non_finite_scores_are_rejected() -> None:
    with pytest.raises(ValidationError, match=r"S1\.gsr"):
        make_result(scores={"S1": {"gsr": float("nan")}})
    with pytest.raises(ValidationError, match="main_score"):
        make_result(main_score=float("inf"))


def test_schema_version_is_pinned() -> None:
    data = json.loads(make_result().model_dump_json())
    data["schema_version"] = 2
    with pytest.raises(ValidationError):
        TaskResult.model_validate(data)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("openai/whisper-large-v3", "openai__whisper-large-v3"),
        ("../etc", "__etc"),
        ("a b<c>", "a_b_c_"),
        ("", "_"),
    ],
)
def test_safe_component(name: str, expected: str) -> None:
    assert safe_component(name) == expected


def test_result_path_layout(tmp_path: Path) -> None:
    assert result_path(tmp_path, "log-mel", "v1", "VocSimGSR") == (
        tmp_path / "log-mel" / "v1" / "VocSimGSR.json"
    )
