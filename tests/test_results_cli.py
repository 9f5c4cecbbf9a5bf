"""``results table``, ``results schema`` and the end-of-run summary."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from audiobench.cli import app

V1 = Path(__file__).parent / "trust" / "v1_results"


def test_results_table_shows_every_task_and_model() -> None:
    result = CliRunner().invoke(app, ["results", "table", str(V1)])
    assert result.exit_code == 0, result.stderr
    assert "log-mel@v1" in result.stdout
    assert "SyntheticVocalisations" in result.stdout and "0.4596" in result.stdout
    csv = CliRunner().invoke(app, ["results", "table", "--csv", str(V1)])
    header, row = csv.stdout.splitlines()[:2]
    assert header.startswith("model,") and "MockClustering" in header
    assert row.startswith("log-mel@v1,")


def test_results_schema_publishes_every_family() -> None:
    result = CliRunner().invoke(app, ["results", "schema"])
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["result"]["title"] == "TaskResult"
    clustering = document["families"]["clustering"]
    assert clustering["report"]["additionalProperties"] is False
    assert set(clustering["options"]["properties"]) >= {"seeds", "batch_size", "n_init"}
    one = CliRunner().invoke(app, ["results", "schema", "--family", "clustering"])
    assert list(json.loads(one.stdout)["families"]) == ["clustering"]
    bad = CliRunner().invoke(app, ["results", "schema", "--family", "nope"])
    assert bad.exit_code == 2


def test_evaluate_summarises_p_at_k_and_gsr_against_their_baselines(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "evaluate", "--task", "SyntheticVocalisations", "--model", "log-mel",
            "--output-dir", str(tmp_path), "--no-flops", "--no-progress",
            "-O", "n_permutations=20", "-O", "n_bootstrap=5", "-O", "pca=null,100",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    lines = [line.strip() for line in result.stderr.splitlines()]
    for metric in ("p@1", "p@5", "gsr"):
        line = next(x for x in lines if x.startswith(f"public pca100/spearman {metric} = "))
        assert "permutation baseline" in line and "lift" in line


def test_a_bad_task_option_is_one_line_naming_the_task(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["evaluate", "--task", "MockClustering", "--model", "log-mel", "-O", "seeds=",
         "--output-dir", str(tmp_path), "--no-progress"],
    )  # fmt: skip
    assert result.exit_code == 1
    assert "task MockClustering: invalid option seeds" in result.stderr
    assert "Traceback" not in result.stderr
