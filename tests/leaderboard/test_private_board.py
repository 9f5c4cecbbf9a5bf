"""A private leaderboard of one's own folder runs: it builds, opens, and says it is private.

Folder tasks (``folder:PATH``, ``folder-<family>:PATH``) are registered by no package; with
``--allow-unpinned`` their results are checked against the folder family's task and shown,
marked as local data. The public board keeps refusing them, with advice that works.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from audiobench.cli import app
from audiobench.leaderboard.build import build_leaderboard
from audiobench.leaderboard.validate import validate_paths
from audiobench.registry import FOLDER_FAMILIES, FOLDER_FAMILY_SCORES
from audiobench.results import TaskResult, load_result
from tests.conftest import folder_digest
from tests.leaderboard.browser import find_chromium, page_url, parse, run_chromium
from tests.test_folder_families import _folder

FAST = {"n_permutations": 50, "n_bootstrap": 20, "pca": [100], "distances": ["spearman"]}


@pytest.fixture(scope="module")
def folder_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Results of ``folder:`` and ``folder-classification:`` runs on a folder named ``fsdd``."""
    import audiobench

    tmp = tmp_path_factory.mktemp("private")
    data = _folder(tmp / "fsdd", speakers=5, renditions=1)
    out = tmp / "results"
    for spec, options in ((f"folder:{data}", FAST), (f"folder-classification:{data}", {})):
        audiobench.evaluate(
            spec,
            "log-mel",
            output_dir=out,
            cache_dir=tmp / "cache",
            pooling="mean_time",
            progress=False,
            count_flops=False,
            task_options=options,
        )
    return out


def _names(folder_results: Path) -> tuple[str, str]:
    """The similarity and classification task names of the ``fsdd`` folder's runs."""
    digest = folder_digest(folder_results.parent / "fsdd")
    return f"Folder-fsdd-{digest}", f"Folder-fsdd-{digest}-classification"


def _results(root: Path) -> list[TaskResult]:
    return [load_result(p) for p in sorted(root.rglob("*.json"))]


def test_folder_family_scores_match_the_folder_tasks(tmp_path: Path) -> None:
    # The table the validator checks folder results against is the one folder_task builds with.
    from audiobench.tasks.folder import folder_task

    data = _folder(tmp_path / "d", speakers=2, renditions=1)
    assert set(FOLDER_FAMILY_SCORES) == set(FOLDER_FAMILIES)
    for family, (task_family, main_score) in FOLDER_FAMILY_SCORES.items():
        meta = folder_task(str(data), family=family).metadata
        assert (str(meta.family), meta.main_score) == (task_family, main_score), family


def test_private_validation_takes_folder_results_the_public_one_refuses(
    folder_results: Path,
) -> None:
    names = sorted(r.task.name for r in _results(folder_results))
    assert names == list(_names(folder_results))
    public = validate_paths([folder_results])
    assert not public.accepted and len(public.problems) == 2
    for problem in public.problems:
        # One reason, the real one, and the option named in it works (below).
        assert problem.field == "run.dataset"
        assert "local data" in problem.message and "--allow-unpinned" in problem.message
    private = validate_paths([folder_results], allow_unpinned=True)
    assert private.ok and len(private.accepted) == 2

    runner = CliRunner()
    refused = runner.invoke(app, ["results", "validate", str(folder_results)])
    assert refused.exit_code == 1 and "--allow-unpinned" in refused.output
    taken = runner.invoke(app, ["results", "validate", "--allow-unpinned", str(folder_results)])
    assert taken.exit_code == 0, taken.output
    assert "2 result file(s) valid" in taken.output


def test_private_validation_still_checks_folder_results(
    folder_results: Path, tmp_path: Path
) -> None:
    # Taking folder results is not taking anything: an edited headline or a wrong family fails.
    sim, cls = _names(folder_results)
    root = tmp_path / "edited"
    shutil.copytree(folder_results, root)
    path = next(root.rglob(f"{cls}.json"))
    data = json.loads(path.read_text())
    data["main_score"] = 0.123
    data["main_score_name"] = "knn:accuracy"
    path.write_text(json.dumps(data))
    other = next(root.rglob(f"{sim}.json"))
    data = json.loads(other.read_text())
    data["details"]["folder"] = {"family": "clustering"}
    other.write_text(json.dumps(data))
    found = validate_paths([root], allow_unpinned=True)
    lines = [p.line() for p in found.problems]
    assert not found.accepted
    assert any("main_score_name" in line and "linear:accuracy" in line for line in lines), lines
    assert any(f"{sim}.json: task.name" in line and "clustering" in line for line in lines)


def test_private_board_builds_and_marks_local_data(folder_results: Path, tmp_path: Path) -> None:
    sim, cls = _names(folder_results)
    public = build_leaderboard(folder_results, tmp_path / "public")
    assert public.board.n_results == 0 and len(public.rejected) == 2
    made = build_leaderboard(folder_results, tmp_path / "site", allow_unpinned=True)
    assert made.rejected == [] and made.board.n_results == 2
    assert made.board.local_data == [sim, cls]
    markdown = (tmp_path / "site" / "leaderboard.md").read_text()
    assert f"A private board: {sim}, {cls} ran on local data" in markdown
    assert "permutation baseline" in markdown and "chance 0.333" in markdown
    with (tmp_path / "site" / "results.csv").open() as fh:
        rows = {row["task"]: row for row in csv.DictReader(fh)}
    similarity, classification = rows[sim], rows[cls]
    lift = float(similarity["main_score"]) - float(similarity["main_score_baseline"])
    assert float(similarity["main_score_lift"]) == pytest.approx(lift)
    assert float(classification["chance_level"]) == pytest.approx(1 / 3)
    assert classification["n_folds"] == "5" and classification["main_score_std"] != ""
    assert similarity["local_data"] == classification["local_data"] == "True"


@pytest.mark.skipif(
    find_chromium() is None,
    reason="headless Chromium is not installed (run `bash scripts/install-chromium.sh`; "
    "it needs apt-get and root)",
)
def test_private_board_opens_in_chromium(folder_results: Path, tmp_path: Path) -> None:
    binary = find_chromium()
    assert binary is not None
    build_leaderboard(folder_results, tmp_path / "site", allow_unpinned=True)
    index = tmp_path / "site" / "index.html"
    for tab, reference in (
        ("family-classification", "chance 0.333"),
        ("family-zero-shot-similarity", "permutation baseline"),
    ):
        dom = parse(run_chromium(binary, page_url(index, f"tab={tab}"), "--dump-dom"))
        body = dom.find(lambda e: e.tag == "body")
        assert body is not None and body.attrs.get("data-ready") == "true"
        private = dom.by_id("private")
        assert private is not None and "local data" in private.text
        cells = dom.find_all(lambda e: e.tag == "td" and "data-col" in e.attrs)
        assert len(cells) == 1
        (td,) = cells
        # The number, then what it reads against, shown and as the cell's title.
        assert reference in td.attrs["title"] and "local data" in td.attrs["title"]
        shown = td.find(lambda e: e.tag == "span" and e.attrs.get("class") == "context")
        assert shown is not None and shown.text == td.attrs["title"]


def test_score_context_reads_the_result_own_numbers(folder_results: Path) -> None:
    from audiobench.leaderboard.context import METRICS_PAGE, main_score_line, score_context

    sim, cls = _names(folder_results)
    by_task = {r.task.name: r for r in _results(folder_results)}
    similarity = by_task[sim]
    config, metric = similarity.main_score_name.split(":")
    summary = similarity.aggregates["public"]["configs"][config]
    context = score_context(similarity)
    assert context.baseline == summary[f"{metric}_baseline"]
    assert context.lift == pytest.approx(summary[metric] - summary[f"{metric}_baseline"])
    assert context.chance is None and context.local_data

    classification = by_task[cls]
    (scores,) = classification.scores.values()
    context = score_context(classification)
    assert context.chance == pytest.approx(1 / scores["linear"]["n_classes"])
    assert context.spread == scores["linear"]["std"]["accuracy"] and context.n_folds == 5
    assert context.baseline is None

    # The end of a run names the main score, its reference and the page defining both.
    for result in by_task.values():
        line = main_score_line(result)
        assert line.startswith(f"main score {result.main_score_name} = {result.main_score:.4f} (")
        assert line.endswith(f"; metrics: {METRICS_PAGE}")
    assert (Path(__file__).parents[2] / METRICS_PAGE).is_file()
