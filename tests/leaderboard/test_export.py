"""``audiobench results export``: into the submission layout, never over another run silently."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from audiobench.cli import app
from audiobench.leaderboard.export import export_results


def run_cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_export_copies_bytes_into_the_layout(real_results: Path, tmp_path: Path) -> None:
    dest = tmp_path / "leaderboard" / "results"
    code, out, err = run_cli(
        "results", "export", "--allow-unpinned", str(real_results), "--to", str(dest)
    )
    assert code == 0, out + err
    for source in sorted(real_results.rglob("*.json")):
        target = dest / source.relative_to(real_results)
        assert target.read_bytes() == source.read_bytes()
        assert f"copied {source} -> {target}" in out
    assert "6 copied, 0 unchanged, 0 refused, 0 problem(s)" in err

    # Exporting the same runs again changes nothing.
    code, out, err = run_cli(
        "results", "export", "--allow-unpinned", str(real_results), "--to", str(dest)
    )
    assert code == 0 and "0 copied, 6 unchanged" in err


def test_export_refuses_to_replace_a_different_run(real_results: Path, tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    assert export_results(real_results, dest, allow_unpinned=True).ok
    mine = tmp_path / "mine"
    shutil.copytree(real_results, mine)
    rerun = mine / "log-mel" / "v1" / "ExampleChirps.json"
    data = json.loads(rerun.read_text())
    data["date"] = "2027-01-01T00:00:00Z"
    rerun.write_text(json.dumps(data))
    target = dest / "log-mel" / "v1" / "ExampleChirps.json"
    before = target.read_bytes()

    code, out, err = run_cli("results", "export", "--allow-unpinned", str(mine), "--to", str(dest))
    assert code == 1
    assert f"refused {rerun} -> {target}: it holds a different run (run on " in out
    assert "than the one exported (run on 2027-01-01 00:00:00Z" in out
    assert "pass --overwrite to replace it" in out
    assert target.read_bytes() == before

    code, out, err = run_cli(
        "results", "export", "--allow-unpinned", str(mine), "--to", str(dest), "--overwrite"
    )
    assert code == 0, out + err
    assert target.read_bytes() == rerun.read_bytes()


def test_export_of_invalid_files_copies_nothing(real_results: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    shutil.copytree(real_results, mine)
    bad = mine / "log-mel" / "v1" / "ExampleChirps.json"
    bad.write_text(bad.read_text().replace('"main_score_name"', '"main_score_nme"'))
    dest = tmp_path / "dest"
    code, out, err = run_cli("results", "export", "--allow-unpinned", str(mine), "--to", str(dest))
    assert code == 1
    assert out.splitlines() == [
        f"{bad}: main_score_name: missing field",
        f"{bad}: main_score_nme: unknown field",
    ]
    assert "nothing exported" in err
    assert not dest.exists()

    code, out, err = run_cli(
        "results", "export", "--allow-unpinned", str(mine), "--to", str(dest), "--skip-invalid"
    )
    assert code == 1  # still says something was left out
    assert len(list(dest.rglob("*.json"))) == 5
    assert "5 copied, 0 unchanged, 0 refused, 2 problem(s)" in err
