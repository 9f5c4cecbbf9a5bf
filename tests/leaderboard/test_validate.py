"""``audiobench results validate``: one malformed or hostile file per rule, one exact line each."""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from audiobench.cli import app
from audiobench.leaderboard.validate import MAX_RESULT_BYTES, validate_file, validate_paths

Mutation = Callable[[dict[str, Any]], None]


def _load(real_results: Path, model: str, task: str) -> dict[str, Any]:
    return json.loads((real_results / model / "v1" / f"{task}.json").read_text())


def _write(root: Path, data: dict[str, Any], rel: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


def _set(*keys: str, value: Any) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        for key in keys[:-1]:
            data = data[key]
        data[keys[-1]] = value

    return mutate


def _delete(*keys: str) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        for key in keys[:-1]:
            data = data[key]
        del data[keys[-1]]

    return mutate


CHIRPS = "log-mel/v1/ExampleChirps.json"
P1 = ("scores", "CHIRPS", "configs", "raw/cosine", "p@1")

# (case id, mutation of log-mel's ExampleChirps result, where it is written, expected line
# after "<file>: ").
SCHEMA_CASES: list[tuple[str, Mutation, str, str]] = [
    ("unknown-field", _set("model", "colour", value="red"), CHIRPS, "model.colour: unknown field"),
    ("missing-field", _delete("timings"), CHIRPS, "timings: missing field"),
    (
        "wrong-type",
        _set("model", "n_parameters", value="many"),
        CHIRPS,
        "model.n_parameters: Input should be a valid integer, unable to parse string as an "
        "integer (got 'many')",
    ),
    (
        "future-schema",
        _set("schema_version", value=3),
        CHIRPS,
        "schema_version: Input should be 1 or 2 (got 3)",
    ),
    (
        "not-finite-main",
        _set("main_score", value=math.inf),
        CHIRPS,
        "main_score: main_score must be finite or null",
    ),
    (
        "not-finite-score",
        _set(*P1, "value", value=math.nan),
        CHIRPS,
        "scores: score CHIRPS.configs.raw/cosine.p@1.value is not finite (nan); use null",
    ),
    (
        "p1-out-of-range",
        _set(*P1, "value", value=1.5),
        CHIRPS,
        "scores.CHIRPS.configs.raw/cosine.p@1.value: "
        "Input should be less than or equal to 1, not 1.5",
    ),
    (
        "aggregate-out-of-range",
        _set("aggregates", "public", "configs", "raw/cosine", "gsr", value=-0.2),
        CHIRPS,
        "aggregates.public.configs.raw/cosine: gsr -0.2 is outside [0, 1]",
    ),
    (
        "unknown-metric",
        _set("scores", "CHIRPS", "configs", "raw/cosine", "accuracy", value={"value": 0.5}),
        CHIRPS,
        "scores.CHIRPS.configs.raw/cosine.accuracy: unknown metric; known: p@<k>, gsr, csr, cs, "
        "cscf, silhouette, purity",
    ),
    (
        "unknown-distance",
        _set("aggregates", "public", "configs", "raw/manhattan", value={"p@1": 0.5}),
        CHIRPS,
        "aggregates.public.configs.raw/manhattan: unknown distance 'manhattan'; known: cosine, "
        "euclidean, spearman",
    ),
    (
        "unknown-subset",
        _set("scores", "ZZ", value={"configs": {}}),
        CHIRPS,
        "scores.ZZ: unknown subset; the task declares CHIRPS",
    ),
    (
        "unknown-task",
        _set("task", "name", value="NoSuchTask"),
        "log-mel/v1/NoSuchTask.json",
        "task.name: unknown task 'NoSuchTask': no installed package registers it",
    ),
    (
        "task-revision",
        _set("task", "revision", value="v0"),
        CHIRPS,
        "task.revision: 'v0' does not match the registered task's revision 'v1'",
    ),
    (
        "main-score-name",
        _set("main_score_name", value="raw/cosine:gsr"),
        CHIRPS,
        "main_score_name: 'raw/cosine:gsr' is not the task's main score 'raw/cosine:p@1'",
    ),
    (
        "task-family",
        _set("task", "family", value="retrieval"),
        CHIRPS,
        "task.family: 'retrieval' does not match the registered task's 'zero_shot_similarity'",
    ),
    (
        "unsafe-dots",
        _set("model", "name", value=".."),
        "_/v1/ExampleChirps.json",
        "model.name: '..' is not a safe name: must contain a letter or digit",
    ),
    (
        "unsafe-option",
        _set("model", "revision", value="--force"),
        "log-mel/--force/ExampleChirps.json",
        "model.revision: '--force' is not a safe name: must not start with '-', '.', '=', '+' "
        "or '@'",
    ),
    (
        "unsafe-formula",
        _set("model", "name", value="=HYPERLINK(1)"),
        "=HYPERLINK_1_/v1/ExampleChirps.json",
        "model.name: '=HYPERLINK(1)' is not a safe name: must not start with '-', '.', '=', '+' "
        "or '@'",
    ),
    (
        "unsafe-bidi",
        _set("model", "name", value="log-mel\u202egnp.exe"),
        "log-mel_gnp.exe/v1/ExampleChirps.json",
        "model.name: 'log-mel\\u202egnp.exe' is not a safe name: contains control or invisible "
        "characters",
    ),
    (
        "unsafe-newline",
        _set("model", "name", value="log-mel\nfake.json: ok"),
        "log-mel_fake.json__ok/v1/ExampleChirps.json",
        "model.name: 'log-mel\\nfake.json: ok' is not a safe name: contains control or invisible "
        "characters",
    ),
    (
        "too-long",
        _set("model", "name", value="m" * 101),
        f"{'m' * 101}/v1/ExampleChirps.json",
        f"model.name: '{'m' * 101}' is not a safe name: longer than 100 characters",
    ),
    (
        "wrong-model-dir",
        lambda data: None,
        "other-model/v1/ExampleChirps.json",
        "model.name: 'log-mel' belongs in directory 'log-mel', but the file is in 'other-model'",
    ),
    (
        "wrong-revision-dir",
        lambda data: None,
        "log-mel/v2/ExampleChirps.json",
        "model.revision: 'v1' belongs in directory 'v1', but the file is in 'v2'",
    ),
    (
        "wrong-file-name",
        lambda data: None,
        "log-mel/v1/SyntheticVocalisations.json",
        "task.name: 'ExampleChirps' belongs in file 'ExampleChirps.json', but the file is named "
        "'SyntheticVocalisations.json'",
    ),
]


@pytest.mark.parametrize(
    ("mutate", "rel", "expected"),
    [case[1:] for case in SCHEMA_CASES],
    ids=[case[0] for case in SCHEMA_CASES],
)
def test_each_rule_gives_one_exact_line(
    real_results: Path, tmp_path: Path, mutate: Mutation, rel: str, expected: str
) -> None:
    data = _load(real_results, "log-mel", "ExampleChirps")
    mutate(data)
    path = _write(tmp_path, data, rel)
    result, problems = validate_file(path, allow_unpinned=True)
    assert result is None
    assert [p.line() for p in problems] == [f"{path}: {expected}"]


def test_blind_subset_scores_must_not_leave_the_machine(real_results: Path, tmp_path: Path) -> None:
    data = _load(real_results, "log-mel", "VocSimGSR")
    data["scores"]["HU3"] = data["scores"].pop("BS1")
    path = _write(tmp_path, data, "log-mel/v1/VocSimGSR.json")
    _, problems = validate_file(path, allow_unpinned=True)
    assert [p.line() for p in problems] == [
        f"{path}: scores.HU3: blind subset: only its public/blind averages may be written"
    ]


def test_blind_average_must_list_blind_subsets(real_results: Path, tmp_path: Path) -> None:
    data = _load(real_results, "log-mel", "VocSimGSR")
    data["aggregates"]["blind"]["subsets"] = ["BC"]
    path = _write(tmp_path, data, "log-mel/v1/VocSimGSR.json")
    _, problems = validate_file(path, allow_unpinned=True)
    assert [p.line() for p in problems] == [
        f"{path}: aggregates.blind.subsets[0]: BC is a public subset"
    ]


def test_file_level_rules(real_results: Path, tmp_path: Path) -> None:
    good = real_results / CHIRPS
    oversized = tmp_path / "big" / "v1" / "ExampleChirps.json"
    oversized.parent.mkdir(parents=True)
    # Valid JSON padded with whitespace: rejected on size alone, before parsing.
    oversized.write_bytes(good.read_bytes() + b" " * MAX_RESULT_BYTES)
    not_json = tmp_path / "nj" / "v1" / "ExampleChirps.json"
    not_json.parent.mkdir(parents=True)
    not_json.write_text("{not json")
    deep = tmp_path / "deep" / "v1" / "ExampleChirps.json"
    deep.parent.mkdir(parents=True)
    deep.write_text("[" * 100_000 + "]" * 100_000)
    link = tmp_path / "link" / "v1" / "ExampleChirps.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(good)
    binary = tmp_path / "bin" / "v1" / "ExampleChirps.json"
    binary.parent.mkdir(parents=True)
    binary.write_bytes(b"\xff\xfe\x00garbage")
    top_level_list = tmp_path / "list" / "v1" / "ExampleChirps.json"
    top_level_list.parent.mkdir(parents=True)
    top_level_list.write_text("[]")
    size = oversized.stat().st_size
    expected = {
        oversized: f"(file): {size:,} bytes, over the limit of 5,242,880 bytes (5 MiB) for a "
        "result file",
        not_json: "(file): not valid JSON: Expecting property name enclosed in double quotes: "
        "line 1 column 2 (char 1)",
        deep: "(file): JSON nested too deeply",
        link: "(file): symbolic links are not accepted; commit the file itself",
        binary: "(file): not UTF-8 text",
        top_level_list: "(file): Input should be a valid dictionary or instance of TaskResult",
    }
    for path, message in expected.items():
        _, problems = validate_file(path, allow_unpinned=True)
        assert [p.line() for p in problems] == [f"{path}: {message}"], path


def test_folder_walk_reports_strays_and_skips_hidden_files(
    real_results: Path, tmp_path: Path
) -> None:
    root = tmp_path / "results"
    shutil.copytree(real_results, root)
    (root / ".gitkeep").touch()
    (root / "log-mel" / "notes.txt").write_text("hello")
    (root / "linked").symlink_to(real_results / "log-mel", target_is_directory=True)
    outcome = validate_paths([root, tmp_path / "missing"], allow_unpinned=True)
    assert len(outcome.accepted) == 6
    assert [p.line() for p in outcome.problems] == [
        f"{root / 'log-mel' / 'notes.txt'}: (file): not a result file (*.json)",
        f"{tmp_path / 'missing'}: (file): no such file or directory",
        f"{root / 'linked'}: (file): symbolic links are not accepted; commit the file itself",
    ]


def test_a_flood_of_problems_is_capped(real_results: Path, tmp_path: Path) -> None:
    data = _load(real_results, "log-mel", "ExampleChirps")
    data["model"].update({f"extra{i}": i for i in range(200)})
    path = _write(tmp_path, data, CHIRPS)
    _, problems = validate_file(path, allow_unpinned=True)
    assert len(problems) == 50
    assert problems[-1].line() == f"{path}: (file): and 151 more"


def test_real_runs_are_valid(real_results: Path) -> None:
    outcome = validate_paths([real_results], allow_unpinned=True)
    assert outcome.ok, [p.line() for p in outcome.problems]
    assert len(outcome.accepted) == 6


def test_cli_prints_one_line_per_problem_and_exits_1(real_results: Path, tmp_path: Path) -> None:
    data = _load(real_results, "log-mel", "ExampleChirps")
    data["model"]["colour"] = "red"
    data["main_score"] = 7
    bad = _write(tmp_path, data, CHIRPS)
    hostile = dict(data, main_score=0.5)
    hostile["model"] = dict(data["model"], name="[red]x[/red]\x1b[2J", colour=None)
    del hostile["model"]["colour"]
    evil = _write(tmp_path, hostile, "x/v1/ExampleChirps.json")
    result = CliRunner().invoke(
        app, ["results", "validate", "--allow-unpinned", str(bad), str(evil)]
    )
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"{bad}: model.colour: unknown field",
        f"{evil}: model.name: '[red]x[/red]\\x1b[2J' is not a safe name: contains control or "
        "invisible characters",
        f"{evil}: main_score: 0.5 is not 'raw/cosine:p@1' of the file's own scores (0.9)",
    ]
    assert "2 of 2 result file(s) invalid (3 problem(s))" in result.stderr

    good = CliRunner().invoke(app, ["results", "validate", "--allow-unpinned", str(real_results)])
    assert good.exit_code == 0, good.stdout
    assert good.stdout == ""
    assert "6 result file(s) valid" in good.stderr


def test_every_metric_group_has_a_range() -> None:
    from audiobench.families.zero_shot_similarity import metric_range
    from audiobench.vocsim import METRIC_GROUPS

    names = ["p@1", "p@5", "p@10", *(g for g in METRIC_GROUPS if g != "precision")]
    assert all(metric_range(name) is not None for name in names)
    assert [metric_range(n) for n in ("p@0", "p@x", "precision", "accuracy")] == [None] * 4
    assert metric_range("silhouette") == (-1.0, 1.0)


def test_the_task_base_class_finds_nothing_by_default() -> None:
    from audiobench.task import Task

    assert Task.score_problems({"anything": {"goes": 1}}) == []


@pytest.mark.parametrize("protocol", ["audiobench", "mteb"])
def test_a_result_is_checked_with_the_reports_of_the_protocol_it_ran_under(
    tmp_path: Path, protocol: str
) -> None:
    """MockClustering reports v_measure under both protocols; a run under the non-default
    one holds MTEB's report, which the validator reads as such (not as a forged default)."""
    import audiobench

    [run] = audiobench.evaluate(
        "MockClustering",
        "log-mel",
        output_dir=tmp_path / "r",
        cache_dir=tmp_path / "c",
        task_options={"protocol": protocol},
        progress=False,
        count_flops=False,
    )
    assert run.main_score is not None
    (path,) = (tmp_path / "r").rglob("MockClustering.json")
    checked, problems = validate_file(path, allow_unpinned=True)
    assert problems == [] and checked is not None
    assert checked.details["evaluator"]["name"] == protocol
    data = json.loads(path.read_text())
    data["run"]["task_options"]["protocol"] = "nonesuch"
    path.write_text(json.dumps(data))
    _, problems = validate_file(path, allow_unpinned=True)
    assert "run.task_options.protocol" in {p.field for p in problems}
