"""Issue 22, items 7 and 8: ``results table`` and ``results export`` on hostile folders.

One deeply nested file is left out of the table (named), not the end of it; a formula in a
model name is neutralised in ``--csv``; a model folder linked outside the destination is
never written through.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from audiobench.cli import app
from audiobench.leaderboard.export import export_results
from audiobench.results import load_result

V1 = Path(__file__).parents[1] / "trust" / "v1_results"
CLUSTERING = V1 / "log-mel" / "v1" / "MockClustering.json"


def test_a_deeply_nested_file_is_left_out_and_the_rest_is_tabled(tmp_path: Path) -> None:
    root = tmp_path / "results"
    shutil.copytree(V1, root)
    deep = root / "deep" / "v1" / "MockClustering.json"
    deep.parent.mkdir(parents=True)
    deep.write_text("[" * 100_000 + "]" * 100_000)
    result = CliRunner().invoke(app, ["results", "table", str(root)])
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"left out: {deep}: not a readable JSON result file: nested too deeply"
    ]
    assert "SyntheticVocalisations" in result.stdout and "0.4596" in result.stdout


def test_results_table_csv_neutralises_formulas(tmp_path: Path) -> None:
    data = json.loads(CLUSTERING.read_text())
    data["model"]["name"] = '=HYPERLINK("http://x","y")'
    path = tmp_path / "m" / "v1" / "MockClustering.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data))
    result = CliRunner().invoke(app, ["results", "table", "--csv", str(path)])
    assert result.exit_code == 0, result.stderr
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert rows[1][0] == '\'=HYPERLINK("http://x","y")@v1'
    assert float(rows[1][1]) == data["main_score"]


def test_export_never_writes_through_a_linked_model_folder(tmp_path: Path) -> None:
    source = tmp_path / "mine"
    shutil.copytree(V1, source)
    dest = tmp_path / "leaderboard" / "results"
    outside = tmp_path / "outside"
    outside.mkdir()
    dest.mkdir(parents=True)
    (dest / "log-mel").symlink_to(outside, target_is_directory=True)
    outcome = export_results(source, dest)
    assert outcome.copied == [] and not outcome.ok
    assert not any(outside.rglob("*"))  # nothing was written outside the destination
    assert len(outcome.refused) == 7
    for _, target, why in outcome.refused:
        assert target.parent.parent == dest / "log-mel"
        assert why == (
            f"{dest / 'log-mel'} is a symbolic link or not a folder; results are written only "
            "into real folders under the destination (replace it with a folder)"
        )
    # A revision folder that is a file is refused the same way, naming it.
    (dest / "log-mel").unlink()
    (dest / "log-mel").mkdir()
    (dest / "log-mel" / "v1").write_text("not a folder")
    outcome = export_results(source, dest)
    assert {why.split(" is ")[0] for _, _, why in outcome.refused} == {str(dest / "log-mel" / "v1")}
    # Through the command line: exit 1, each refusal printed with its reason.
    result = CliRunner().invoke(app, ["results", "export", str(source), "--to", str(dest)])
    assert result.exit_code == 1
    assert "refused" in result.stdout and "is a symbolic link or not a folder" in result.stdout
    assert load_result(CLUSTERING).task.name == "MockClustering"  # the sources are untouched


def test_results_table_shows_escape_sequences_in_names_and_keeps_its_lines(
    tmp_path: Path,
) -> None:
    data = json.loads(CLUSTERING.read_text())
    data["model"]["name"] = "evil\x1b[2J\x1b[1;1Herror: forged"
    path = tmp_path / "m" / "v1" / "MockClustering.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data))
    result = CliRunner().invoke(app, ["results", "table", str(path)])
    assert result.exit_code == 0, result.stderr
    assert "\x1b" not in result.stdout  # the screen is not cleared, no line forged
    assert "\\x1b[2J" in result.stdout
    assert "0.4021" in result.stdout
    # what a score reads against stays on lines of its own, not as a written "\n"
    result = CliRunner().invoke(app, ["results", "table", str(V1)])
    assert "\\n" not in result.stdout
    cells = [c.strip() for line in result.stdout.splitlines() for c in line.split("│")]
    assert "baseline 0.3994" in cells and "lift +0.0602" in cells and "1 fold" in cells


def test_a_path_holding_an_escape_sequence_is_shown_escaped(tmp_path: Path) -> None:
    missing = tmp_path / "a\x1b[2Jb"
    for args in (["results", "import-mteb", str(missing)], ["results", "export", str(missing)]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2
        assert "\x1b" not in result.stderr and "\\x1b[2J" in result.stderr
