"""``results compare``: does a run reproduce a reported number, within the stated tolerance?"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from audiobench.cli import app
from audiobench.reported.compare import (
    PUBLISHED_PRECISION,
    TOLERANCES,
    compare_results,
    tolerance_for,
)
from audiobench.reported.mteb_import import import_mteb
from audiobench.results import TaskResult, load_result
from tests.reported.mteb_files import model_dir, task_file, write_task_file

runner = CliRunner()


def _published_from(result: TaskResult) -> dict[str, Any]:
    """The MTEB file that publishes ``result``'s numbers, rounded to six decimals as MTEB
    writes them."""
    entries = []
    for subset, report in result.scores.items():
        metrics = {
            k: round(v, 6)
            for k, v in report.items()
            if isinstance(v, float | int) and not isinstance(v, bool) and not k.startswith("n_")
        }
        entries.append(
            {**metrics, "main_score": metrics[result.main_score_name], "hf_subset": subset}
        )
    assert result.task.revision is not None
    return {
        "dataset_revision": result.task.revision,
        "task_name": result.task.name,
        "mteb_version": "2.3.0",
        "scores": {"train": entries},
    }


def test_a_reproduced_run_agrees_and_a_planted_difference_is_flagged(tmp_path: Path) -> None:
    from tests.maeb.test_maeb_tasks import _run

    mine = _run("BeijingOpera", tmp_path / "run")  # protocol=mteb, log-mel on a hub-layout copy
    folder = model_dir(tmp_path / "mteb", {"name": "log-mel", "revision": "v1"})
    write_task_file(folder, _published_from(mine))
    import_mteb(tmp_path / "mteb", tmp_path / "reported")
    args = ["results", "compare", str(tmp_path / "run" / "out"), str(tmp_path / "reported")]
    agreed = runner.invoke(app, args)
    assert agreed.exit_code == 0, agreed.output
    assert "BeijingOpera · log-mel (v1) vs reported log-mel (v1): AGREE" in agreed.stdout
    assert "1 pair(s): 1 agree, 0 disagree, 0 not comparable" in agreed.stderr

    planted = _published_from(mine)
    (entry,) = planted["scores"]["train"]
    entry["accuracy"] = entry["main_score"] = round(entry["accuracy"] - 0.05, 6)
    write_task_file(folder, planted)
    import_mteb(tmp_path / "mteb", tmp_path / "reported")
    differs = runner.invoke(app, [*args, "--json"])
    assert differs.exit_code == 1, differs.output
    (pair,) = json.loads(differs.stdout)["pairs"]
    assert (
        pair["verdict"] == "disagree" and pair["tolerance"] == TOLERANCES["classification"].absolute
    )
    bad = [k for k in pair["keys"] if not k["within"]]
    assert {k["key"] for k in bad} == {"main score (accuracy)", "accuracy"}
    assert all(k["difference"] == pytest.approx(0.05, abs=1e-6) for k in bad)
    text = runner.invoke(app, args)
    assert (
        "DISAGREE" in text.stdout and "accuracy: mine" in text.stdout and "DIFFERS" in text.stdout
    )


def _pair(tmp_path: Path, task: str = "GTZANAudioReranking") -> tuple[TaskResult, dict[str, Any]]:
    """A reported result, and the JSON of a computed one with the same numbers, under the
    audiobench spelling of the same hub model."""
    folder = model_dir(tmp_path / "mteb", {"name": "openai/whisper-tiny", "revision": "main"})
    write_task_file(folder, task_file(task))
    (path,) = import_mteb(tmp_path / "mteb", tmp_path / "reported").written
    reported = load_result(path)
    data = json.loads(path.read_text())
    data.update(
        reported=None,
        cache={"n_clips": 4, "n_cached": 0, "n_encoded": 4},
        timings={"load_data_s": 0, "encode_s": 0, "evaluate_s": 0, "total_s": 0},
        environment={"python": "3", "platform": "p", "numpy": "2", "device": "cpu"},
    )
    data["model"].update(name="whisper-tiny", revision="abc", sample_rate=16000)
    return reported, data


def _shifted(data: dict[str, Any], key: str, by: float) -> TaskResult:
    changed = json.loads(json.dumps(data))
    report = changed["scores"]["default"]
    report[key] += by
    if key == changed["main_score_name"]:
        changed["main_score"] = report[key]
    return TaskResult.model_validate(changed)


def test_deterministic_families_agree_only_at_the_published_precision(tmp_path: Path) -> None:
    reported, data = _pair(tmp_path)
    assert tolerance_for("reranking").absolute == PUBLISHED_PRECISION
    # whisper-tiny (audiobench) and openai/whisper-tiny (published) are one model.
    within = compare_results([_shifted(data, "map_at_1000", 4e-7)], [reported])
    (pair,) = within.pairs
    assert pair.model == "openai/whisper-tiny" and pair.verdict == "agree" and within.ok
    beyond = compare_results([_shifted(data, "map_at_1000", 2e-6)], [reported])
    assert beyond.pairs[0].verdict == "disagree" and not beyond.ok
    differs = {k.key for k in beyond.pairs[0].keys if not k.within}
    assert differs == {"main score (map_at_1000)", "map_at_1000"}
    # Any other shared key counts as much as the main score.
    other = compare_results([_shifted(data, "ndcg_at_10", 1e-3)], [reported])
    assert [k.key for k in other.pairs[0].keys if not k.within] == ["ndcg_at_10"]
    loose = compare_results([_shifted(data, "ndcg_at_10", 1e-3)], [reported], tolerance=1e-2)
    assert loose.pairs[0].verdict == "agree"


def test_a_number_against_none_disagrees(tmp_path: Path) -> None:
    reported, data = _pair(tmp_path)
    data["scores"]["default"]["ndcg_at_10"] = None
    (pair,) = compare_results([TaskResult.model_validate(data)], [reported]).pairs
    assert pair.verdict == "disagree"


def test_another_protocol_or_revision_is_not_comparable(tmp_path: Path) -> None:
    reported, data = _pair(tmp_path)
    data["run"]["task_options"]["protocol"] = "audiobench"
    (pair,) = compare_results([_shifted(data, "map_at_1000", 0.3)], [reported]).pairs
    assert pair.verdict == "not comparable" and "protocol 'audiobench'" in pair.not_comparable[0]
    data["run"]["task_options"]["protocol"] = "mteb"
    data["task"]["revision"] = "0" * 40
    (pair,) = compare_results([TaskResult.model_validate(data)], [reported]).pairs
    assert pair.verdict == "not comparable" and "dataset revision" in pair.not_comparable[0]


def test_results_without_a_counterpart_are_listed_and_nothing_paired_exits_2(
    tmp_path: Path,
) -> None:
    reported, data = _pair(tmp_path)
    data["model"]["name"] = "whisper-base"
    comparison = compare_results([TaskResult.model_validate(data)], [reported])
    assert comparison.pairs == []
    assert comparison.only_mine == [("openai/whisper-base", "GTZANAudioReranking")]
    assert comparison.only_reported == [("openai/whisper-tiny", "GTZANAudioReranking")]
    empty = tmp_path / "empty"
    empty.mkdir()
    done = runner.invoke(app, ["results", "compare", str(empty), str(tmp_path / "reported")])
    assert done.exit_code == 2 and "0 pair(s)" in done.stderr


def test_every_mteb_family_states_its_tolerance_and_why() -> None:
    from audiobench.evaluators.mteb_protocol.subset_scores import MAIN_SCORE_KEYS

    assert set(TOLERANCES) == set(MAIN_SCORE_KEYS)
    for family, tolerance in TOLERANCES.items():
        assert tolerance.absolute >= PUBLISHED_PRECISION and len(tolerance.why) > 40, family
