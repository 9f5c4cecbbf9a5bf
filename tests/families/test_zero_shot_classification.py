"""The zero-shot classification family: prompts, hand-computed accuracy, bad input, CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from audiobench import registry
from audiobench.benchmark import get_benchmark
from audiobench.families import ZeroShotClassificationTask
from audiobench.results import load_result
from audiobench.task import TaskFamily
from audiobench.tasks.zero_shot_classification import ESC50_CLASSES
from tests.families.test_retrieval import (
    FAST,
    FakeEmbedder,
    _tone,
    clip,
    hashed_vector,
    meta,
    run_cli,
    tiny_clap,  # noqa: F401 - a session fixture used below
)
from tests.hub_copy import write_hub_like


class ZeroShot(ZeroShotClassificationTask):
    metadata = meta("TestZeroShot", TaskFamily.ZERO_SHOT_CLASSIFICATION, "accuracy")


class Declared(ZeroShot):
    options = ZeroShot.Options(classes=("rain", "dog_bark", "sea_waves"))


PROMPTS = {
    "This is a sound of dog bark.": [1.0, 0.0],
    "This is a sound of rain.": [0.0, 1.0],
    "This is a sound of sea waves.": [-1.0, 0.0],
}


def test_prompts_and_hand_computed_accuracy() -> None:
    clips = [
        clip("a", label="dog_bark"),  # [1, 0.2]: dog bark
        clip("b", label="rain"),  # [0.1, 1]: rain
        clip("c", label="rain"),  # [1, 0.5]: dog bark (wrong)
    ]
    audio = {"a": [1.0, 0.2], "b": [0.1, 1.0], "c": [1.0, 0.5]}
    fake = FakeEmbedder(audio, PROMPTS)
    result = ZeroShot().evaluate(fake, clips)
    report = result.scores["default"]
    assert report["accuracy"] == pytest.approx(2 / 3)
    assert report["balanced_accuracy"] == pytest.approx((1 + 1 / 2) / 2)
    assert report["n_samples"] == 3 and report["n_classes"] == 2
    assert "top_5_accuracy" not in report  # 2 classes: trivially 1
    assert result.main_score == report["accuracy"]
    assert result.details["prompts"] == {
        "dog_bark": "This is a sound of dog bark.",
        "rain": "This is a sound of rain.",
    }
    assert fake.text_calls == [["This is a sound of dog bark.", "This is a sound of rain."]]
    assert ZeroShot.score_problems(result.scores) == []
    # Declared classes keep their order and include classes absent from the data.
    declared = Declared().evaluate(FakeEmbedder(audio, PROMPTS), clips)
    assert list(declared.details["prompts"]) == ["rain", "dog_bark", "sea_waves"]
    assert declared.scores["default"]["n_classes"] == 3
    assert declared.main_score == pytest.approx(2 / 3)


def test_prompt_template_option() -> None:
    task = ZeroShot(prompt_template="the sound of a {label}")
    assert task.prompts(["dog_bark"]) == ["the sound of a dog bark"]
    for bad in ("no field", "{label} and {other}", "{}"):
        with pytest.raises(ValueError, match="prompt_template"):
            ZeroShot(prompt_template=bad)


def test_bad_input_is_named() -> None:
    fake = FakeEmbedder({"a": [1.0, 0.0], "b": [0.0, 1.0]}, PROMPTS)
    with pytest.raises(ValueError, match=r"1 clip\(s\) have no label: 'b'"):
        ZeroShot().evaluate(fake, [clip("a", label="rain"), clip("b")])
    with pytest.raises(ValueError, match="needs two classes"):
        ZeroShot().evaluate(fake, [clip("a", label="rain"), clip("b", label="rain")])
    with pytest.raises(ValueError, match="'thunder' are not among the task's classes"):
        Declared().evaluate(fake, [clip("a", label="rain"), clip("b", label="thunder")])
    with pytest.raises(ValueError, match="share the prompt"):
        ZeroShot().evaluate(fake, [clip("a", label="sea waves"), clip("b", label="sea_waves")])
    wide = FakeEmbedder({"a": [1.0, 0.0, 0.0], "b": [0.0, 1.0, 0.0]}, PROMPTS)
    with pytest.raises(ValueError, match="dimension 3 but text embeddings 2"):
        ZeroShot().evaluate(wide, [clip("a", label="rain"), clip("b", label="dog_bark")])
    log_mel = registry.models.create("log-mel")
    with pytest.raises(ValueError, match="'log-mel' has no text encoder"):
        ZeroShot.check_encoder(log_mel)


def test_skipped_clips_are_counted() -> None:
    clips = [clip("a", label="dog_bark"), clip("b", label="rain"), clip("c", label="rain")]
    audio = {"a": [1.0, 0.2], "b": [0.1, 1.0], "c": [1.0, 0.5]}
    result = ZeroShot().evaluate(FakeEmbedder(audio, PROMPTS, skip=["c"]), clips)
    assert result.scores["default"]["n_unembedded"] == 1
    assert result.main_score == 1.0


def test_score_problems() -> None:
    good = {
        "default": {
            "accuracy": 0.5,
            "balanced_accuracy": 0.4,
            "top_5_accuracy": 1.0,
            "f1_macro": 0.1,
            "n_samples": 12,
            "n_classes": 6,
            "n_unembedded": 0,
        }
    }
    assert ZeroShot.score_problems(good) == []
    problems = ZeroShot.score_problems(
        {"default": {**good["default"], "accuracy": 1.2, "top_x_accuracy": 0.1}}
    )
    assert any(
        p.startswith("default.accuracy: Input should be less than or equal to 1, not 1.2")
        for p in problems
    )
    assert any(p.startswith("default.top_x_accuracy: unknown metric") for p in problems)
    assert len(problems) == 2


def test_every_declared_task_instantiates() -> None:
    tasks = registry.tasks.load_all()
    for name, offline in (("ESC50ZeroShot", False), ("MockZeroShotClassification", True)):
        task = tasks[name]()
        assert task.metadata.family == TaskFamily.ZERO_SHOT_CLASSIFICATION
        assert task.metadata.main_score == "accuracy" and task.metadata.offline is offline
    assert len(ESC50_CLASSES) == 50 and len(set(ESC50_CLASSES)) == 50
    assert get_benchmark("ZeroShotClassification").tasks == ("ESC50ZeroShot",)


def test_esc50_zero_shot_on_a_hub_like_copy(tmp_path: Path) -> None:
    rows = [
        {
            "filename": f"{fold}-{category}.wav",
            "fold": fold,
            "target": ESC50_CLASSES.index(category),
            "category": category,
            "audio": (_tone(freq), 44100),
        }
        for fold in (1, 2)
        for category, freq in (("dog", 300.0), ("sea_waves", 900.0))
    ]
    root = write_hub_like(tmp_path / "esc50", rows)
    task = registry.tasks.load_all()["ESC50ZeroShot"](dataset_path=root)
    clips = task.load_data()
    assert sorted({c.label for c in clips}) == ["dog", "sea_waves"]
    # Each clip's audio points at its own class's prompt.
    target = {c.id: hashed_vector(task.prompts([c.label])[0]) for c in clips}
    result = task.evaluate(FakeEmbedder(target, hashed_vector), clips)
    report = result.scores["default"]
    assert report["accuracy"] == 1.0 and report["n_classes"] == 50
    assert result.details["prompts"]["sea_waves"] == "This is a sound of sea waves."


def test_mock_needs_a_text_encoder(tmp_path: Path) -> None:
    code, out = run_cli(
        "evaluate", "--task", "MockZeroShotClassification", "--model", "log-mel",
        "--output-dir", str(tmp_path), *FAST,
    )  # fmt: skip
    assert code == 1 and "no text encoder" in out and "CLAP" in out


def test_mock_runs_with_the_tiny_clap(tmp_path: Path, tiny_clap: Path) -> None:  # noqa: F811
    code, out = run_cli(
        "evaluate", "--task", "MockZeroShotClassification", "--model", f"hf:{tiny_clap}",
        "--output-dir", str(tmp_path), *FAST,
    )  # fmt: skip
    assert code == 0, out
    (path,) = tmp_path.glob("*/*/MockZeroShotClassification.json")
    result = load_result(path)
    report = result.scores["default"]
    assert report["n_samples"] == 30 and report["n_classes"] == 6
    assert 0.0 <= report["accuracy"] <= 1.0
    assert result.details["prompts"]["rising_whistle"] == "This is a sound of rising whistle."
