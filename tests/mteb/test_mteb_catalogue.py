"""Every one of MTEB 2.26's 150 audio tasks is declared as MTEB pins it, or listed as not
supported with the reason; ``mteb_audio_tasks.json`` holds MTEB's facts (name, type, dataset,
revision, evaluation splits, main score) for the check."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from audiobench import registry
from audiobench.cli import app
from audiobench.tasks.mteb_audio import RENAMED, mteb_task_names

MTEB_TASKS = json.loads((Path(__file__).parent / "mteb_audio_tasks.json").read_text())

#: MTEB's task types -> the audiobench family that scores them.
FAMILIES = {
    "Any2AnyRetrieval": "retrieval",
    "Any2AnyReranking": "reranking",
    "AudioReranking": "reranking",
    "AudioClassification": "classification",
    "AudioMultilabelClassification": "classification",
    "AudioClustering": "clustering",
    "AudioPairClassification": "pair_classification",
    "AudioZeroshotClassification": "zero_shot_classification",
}


def test_the_fixture_is_mtebs_audio_collection() -> None:
    assert len(MTEB_TASKS) == 150 and len({t["name"] for t in MTEB_TASKS}) == 150
    assert Counter(t["type"] for t in MTEB_TASKS) == {
        "Any2AnyRetrieval": 69, "AudioClassification": 41, "AudioClustering": 15,
        "Any2AnyReranking": 6, "AudioPairClassification": 5, "AudioReranking": 5,
        "AudioZeroshotClassification": 5, "AudioMultilabelClassification": 4,
    }  # fmt: skip


@pytest.mark.parametrize("entry", MTEB_TASKS, ids=[t["name"] for t in MTEB_TASKS])
def test_each_mteb_audio_task_is_declared_as_pinned_or_unsupported_with_a_reason(
    entry: dict[str, object],
) -> None:
    declared = mteb_task_names()
    unsupported = registry.unsupported_tasks()
    name = str(entry["name"])
    assert (name in declared) != (name in unsupported), "declared xor listed unsupported"
    if name in unsupported:
        missing = unsupported[name]
        assert len(missing.reason) > 20
        assert (missing.dataset, missing.revision) == (entry["path"], entry["revision"])
        assert missing.family == FAMILIES[str(entry["type"])]
        assert missing.source == f"MTEB 2.26 {entry['type']}"
        return
    cls = registry.tasks.get(declared[name])
    meta = cls.metadata
    assert (meta.dataset.path, meta.dataset.revision) == (entry["path"], entry["revision"])
    assert meta.main_score == entry["main_score"]
    # The evaluated split is the last one declared (a training split, if any, comes first).
    assert [meta.splits[-1]] == entry["eval_splits"]
    assert str(meta.family) == FAMILIES[str(entry["type"])]
    assert cls.options.protocol == "mteb"
    assert getattr(cls.options, "multilabel", False) == (
        entry["type"] == "AudioMultilabelClassification"
    )
    cls.check_main_score((meta.main_score,))


def test_counts_of_declared_and_unsupported_tasks() -> None:
    names = {t["name"] for t in MTEB_TASKS}
    declared = set(mteb_task_names()) & names
    unsupported = set(registry.unsupported_tasks()) & names
    assert (len(declared), len(unsupported)) == (24 + 87, 39)
    assert declared | unsupported == names


def test_mteb_names_taken_by_audiobench_tasks_are_declared_under_a_suffix() -> None:
    for mteb_name, name in RENAMED.items():
        assert name == f"{mteb_name}.mteb" and mteb_task_names()[mteb_name] == name
        own, mteb = registry.tasks.get(mteb_name), registry.tasks.get(name)
        assert own.options.protocol == "audiobench"  # audiobench's task is unchanged
        assert mteb.metadata.dataset.path.startswith("mteb/") and mteb.options.protocol == "mteb"


def test_list_tasks_json_lists_unsupported_tasks_with_the_reason() -> None:
    result = CliRunner().invoke(app, ["list", "tasks", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    for name, entry in registry.unsupported_tasks().items():
        assert rows[name]["unsupported"] == entry.reason
        mteb = entry.source.startswith("MTEB")  # MSEB's are listed too, under protocol mseb
        assert rows[name]["revision"] == entry.revision
        assert rows[name]["protocols"] == (["mteb"] if mteb else ["mseb"])
    for name in mteb_task_names().values():
        assert "unsupported" not in rows[name] and rows[name]["options"]["protocol"] == "mteb"
    clustering = CliRunner().invoke(app, ["list", "tasks", "--json", "--type", "clustering"])
    listed = {row["name"]: row for row in json.loads(clustering.stdout)}
    assert "NSynthInstrumentFamilyClustering" in listed and "BirdSet" not in listed
    assert "GTZANGenreClustering" in listed


def test_an_unsupported_task_is_refused_by_name_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(registry.UnsupportedTaskError, match="21 training clips per label"):
        registry.tasks.get("BirdSet")
    result = CliRunner().invoke(
        app, ["evaluate", "--task", "SpeechCocoA2IRetrieval", "--model", "log-mel",
              "--output-dir", str(tmp_path)],
    )  # fmt: skip
    assert result.exit_code != 0
    assert "not supported" in result.output and "needs image input" in result.output
