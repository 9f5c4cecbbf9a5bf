"""``audiobench leaderboard build`` from real runs: Markdown, CSV, plots, page, rejected files."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import audiobench
from audiobench.benchmark import get_benchmark
from audiobench.cli import app
from audiobench.leaderboard.page import json_for_script
from audiobench.results import load_result
from tests.leaderboard.conftest import HOSTILE_NAME, MARKING_NAME, MARKING_REVISION, Site

OUTPUTS = {
    "index.html",
    "leaderboard.md",
    "results.csv",
    "scores.csv",
    "leaderboard.json",
    "rejected.txt",
    "plots/p1_vs_gsr.svg",
    "plots/public_vs_blind.svg",
    "plots/score_vs_parameters.svg",
}
REJECTED = [
    "broken-model/v1/SyntheticVocalisations.json: (file): not valid JSON: Expecting property "
    "name enclosed in double quotes: line 1 column 2 (char 1)",
    "log-mel/v1/NoSuchTask.json: task.name: unknown task 'NoSuchTask': no installed package "
    "registers it",
]


def test_build_writes_every_output(site: Site) -> None:
    written = {p.relative_to(site.output).as_posix() for p in site.build.files}
    assert written == OUTPUTS
    assert site.build.rejected == REJECTED
    assert (site.output / "rejected.txt").read_text().splitlines() == REJECTED


def test_vocsim_table_follows_the_benchmark_definition(site: Site, real_results: Path) -> None:
    [table] = [t for t in site.build.board.tables if t.id == "vocsim"]
    assert [(c.group, c.label) for c in table.columns] == [
        ("blind", "P@1"),
        ("blind", "P@5"),
        ("blind", "GSR"),
        ("public", "P@1"),
        ("public", "P@5"),
        ("public", "GSR"),
    ]
    results = [load_result(p) for p in real_results.rglob("VocSimGSR.json")]
    expected = get_benchmark("VocSim").table(results)
    assert [json.loads(r.model)[0] for r in table.rows] == [r["model"] for r in expected]
    assert [r.rank for r in table.rows] == [1, 2]
    blind_gsr = [r.values[2] for r in table.rows]
    assert blind_gsr == sorted(blind_gsr, reverse=True)  # type: ignore[type-var]
    assert all(v is not None for r in table.rows for v in r.values)


def test_markdown_tables_escape_and_show_missing(site: Site) -> None:
    text = (site.output / "leaderboard.md").read_text()
    assert "## VocSim" in text and "## Other zero-shot similarity tasks" in text
    assert "| # | Model | Revision | Parameters | blind P@1 ↑ | blind P@5 ↑ | blind GSR ↑ |" in text
    assert "Ranked by blind GSR, then public GSR." in text
    # The hostile name is text, not markup; the table keeps its shape.
    assert "<img" not in text and "&lt;img src=x onerror=alert(1)&gt;" in text
    assert "</script>" not in text
    start = text.index("## Other zero-shot similarity tasks")
    family = text[start : text.index("## Rejected files")]
    rows = [line for line in family.splitlines() if line.startswith("| ")]
    assert len({line.count(" | ") for line in rows}) == 1
    hostile_row = next(line for line in rows if "alert" in line)
    # It has SyntheticVocalisations only: ExampleChirps is missing, shown as –, never 0.
    cells = hostile_row.strip("| ").split(" | ")
    assert cells[2:4] == ["0", "–"] and re.fullmatch(r"0\.\d{4}", cells[4])
    assert "## Rejected files" in text and "NoSuchTask" in text


def test_csv_and_loader_agree(site: Site, real_results: Path) -> None:
    from_csv = pd.read_csv(site.output / "results.csv")
    assert len(from_csv) == 8  # 6 real runs + 2 hostile copies
    runs = audiobench.load_results(real_results)
    assert len(runs) == 6
    assert set(runs["model"]) == {"log-mel", "example-spectral-stats"}
    assert set(runs["task"]) == {"SyntheticVocalisations", "ExampleChirps", "VocSimGSR"}
    chirps = runs.set_index(["model", "task"]).loc[("log-mel", "ExampleChirps"), "main_score"]
    result = load_result(real_results / "log-mel" / "v1" / "ExampleChirps.json")
    assert chirps == result.main_score
    scores = audiobench.load_results(real_results, level="score")
    blind = scores.query(
        "model == 'log-mel' and task == 'VocSimGSR' and scope == 'blind' "
        "and score == 'pca100/spearman:gsr' and field == 'value'"
    )["value"]
    vocsim = load_result(real_results / "log-mel" / "v1" / "VocSimGSR.json")
    assert blind.tolist() == [vocsim.aggregates["blind"]["configs"]["pca100/spearman"]["gsr"]]
    assert "HU3" not in set(scores["scope"])  # blind subsets exist only as averages
    csv_scores = pd.read_csv(site.output / "scores.csv")
    assert list(csv_scores.columns) == list(scores.columns)


def test_loader_is_strict_unless_told(site: Site) -> None:
    with pytest.raises(ValueError, match=r"2 invalid result file\(s\):\n.*not valid JSON"):
        audiobench.load_results(site.results)
    with pytest.warns(UserWarning) as caught:
        frame = audiobench.load_results(site.results, strict=False)
    assert len(frame) == 8
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2 and all(m.startswith("left out: ") for m in messages)
    assert "not valid JSON" in messages[0] and "NoSuchTask" in messages[1]


def test_plots_are_svg_with_escaped_names(site: Site) -> None:
    for stem in ("p1_vs_gsr", "public_vs_blind", "score_vs_parameters"):
        svg = (site.output / "plots" / f"{stem}.svg").read_text()
        assert svg.startswith("<?xml") and "<svg" in svg
        assert "<img" not in svg and "<script" not in svg
    scatter = (site.output / "plots" / "p1_vs_gsr.svg").read_text()
    assert html.escape(HOSTILE_NAME, quote=False) in scatter  # a legend entry, as text
    assert "example-spectral-stats" in scatter
    # Public against blind has real points: VocSimGSR was run with a blind subset.
    assert (
        "no results for this plot yet"
        not in (site.output / "plots/public_vs_blind.svg").read_text()
    )


def test_page_is_self_contained_and_inert(site: Site) -> None:
    page = (site.output / "index.html").read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert "@import" not in page and "url(http" not in page
    assert "<link" not in page
    # The plots are inlined without their XML prologue.
    assert page.count("<svg") == 3 and "<?xml" not in page
    # Everything from result files sits in one JSON block that no string can close.
    start = page.index('<script type="application/json" id="leaderboard-data">')
    end = page.index("</script>", start)
    block = page[start:end]
    for name in (HOSTILE_NAME, MARKING_NAME, MARKING_REVISION):
        assert json_for_script(name)[1:-1] in block
    assert "<img" not in page and page.count("</script>") == 2
    # The rejected files are listed, escaped.
    assert "log-mel/v1/NoSuchTask.json: task.name: unknown task &#x27;NoSuchTask&#x27;" in page


def test_cli_build_logs_rejected_files(site: Site, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "leaderboard",
            "build",
            "--allow-unpinned",
            "--results",
            str(site.results),
            "--output",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.stderr
    lines = result.stderr.splitlines()
    assert "accepted 8 result file(s): 4 model(s), 2 table(s)" in lines
    assert "rejected (2 problem(s)):" in lines
    assert [f"  {line}" for line in REJECTED] == lines[2:4]
    strict = CliRunner().invoke(
        app,
        [
            "leaderboard",
            "build",
            "--results",
            str(site.results),
            "--output",
            str(tmp_path),
            "--strict",
        ],
    )
    assert strict.exit_code == 1


@pytest.mark.parametrize(
    ("text", "line_start", "expected"),
    [
        ("log-mel", False, "log-mel"),
        (HOSTILE_NAME, False, "&lt;img src=x onerror=alert(1)&gt;"),
        ("a|b", False, "a\\|b"),
        ("[click](javascript:x)", False, "\\[click\\](javascript:x)"),
        ("x_y*z`w`", False, "x\\_y\\*z\\`w\\`"),
        ("two\nlines", False, "two lines"),
        ("0.1.0", False, "0.1.0"),
        ("1. item", True, "1\\. item"),
        ("# heading", True, "\\# heading"),
        ("- item", True, "\\- item"),
    ],
)
def test_escape_markdown(text: str, line_start: bool, expected: str) -> None:
    from audiobench.leaderboard.markdown import escape_markdown

    assert escape_markdown(text, line_start=line_start) == expected


def test_a_benchmark_mean_column_and_pending_benchmarks(site: Site) -> None:
    from audiobench.benchmark import Benchmark, ScoreColumn
    from audiobench.leaderboard.collate import collate
    from audiobench.leaderboard.markdown import render_markdown

    if "mean_of" not in Benchmark.model_fields:
        pytest.skip("this audiobench's Benchmark has no mean_of aggregation rule")
    offline = Benchmark(
        name="Offline",
        description="The two offline tasks.",
        tasks=("SyntheticVocalisations", "ExampleChirps"),
        columns=(
            ScoreColumn(
                name="Synthetic GSR", task="SyntheticVocalisations", score="pca100/spearman:gsr"
            ),
            ScoreColumn(name="Chirps P@1", task="ExampleChirps", score="raw/cosine:p@1"),
        ),
        rank_by=("mean",),
        mean_of=("Synthetic GSR", "Chirps P@1"),
    )
    empty = offline.model_copy(update={"name": "Nobody ran this", "tasks": ("VocSimP1",)})
    board = collate(site.build.board.results, benchmarks={"Offline": offline, "Empty": empty})
    [table] = [t for t in board.tables if t.kind == "benchmark"]
    assert [c.id for c in table.columns] == ["mean", "synthetic-gsr", "chirps-p-1"]
    assert table.columns[0].family == "zero_shot_similarity"
    by_model = {json.loads(r.model)[0]: r for r in table.rows}
    log_mel = by_model["log-mel"]
    assert log_mel.values[0] == pytest.approx((log_mel.values[1] + log_mel.values[2]) / 2)  # type: ignore[operator]
    # A model without every averaged column gets no mean and no rank (gaps are not rewarded).
    assert by_model[HOSTILE_NAME].values[0] is None and by_model[HOSTILE_NAME].rank is None
    assert [r.rank for r in table.rows[:2]] == [1, 2]
    assert board.pending_benchmarks == ["Nobody ran this"]
    assert "No results yet for the benchmarks Nobody ran this." in render_markdown(board)


def test_benchmark_scores_carry_their_permutation_baseline(site: Site) -> None:
    # VocSim's GSR and P@k columns read against each model's own permutation baseline (it
    # differs by model), in the table's scale (×100), on the page, in Markdown and the JSON.
    board = site.build.board
    table = next(t for t in board.tables if t.title == "VocSim")
    notes = [note for row in table.rows for note in row.notes]
    assert len(notes) == len(table.rows) * len(table.columns)
    filled = [note for note in notes if note]
    assert filled and all("permutation baseline" in n and "lift" in n for n in filled)
    for row in table.rows:
        for column, value, note in zip(table.columns, row.values, row.notes, strict=True):
            if value is None:
                assert note == ""
                continue
            baseline = float(note.split("permutation baseline ")[1].split(",")[0])
            lift = float(note.split("lift ")[1].split(",")[0])
            # ×100 like the value itself; value - baseline = lift up to rounding.
            assert value * 100 - baseline == pytest.approx(lift, abs=0.11), (column.name, note)
    markdown = (site.output / "leaderboard.md").read_text()
    assert "What each score reads against (see docs/METRICS.md):" in markdown
