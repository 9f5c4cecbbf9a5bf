"""How results become tables: one title per tab, one scale per table, MAEB's two benchmarks.

Results are hand-made (:func:`hand_made_result`): the tables depend on which task each
result is for and its main score, not on how it was computed.
"""

from __future__ import annotations

import json
import statistics

import pytest

from audiobench.benchmark import (
    BORDA_RANK,
    MEAN_TASK_TYPE,
    Benchmark,
    ScoreColumn,
    list_benchmarks,
)
from audiobench.leaderboard.aggregation import borda_ranks, mean_over_task_types
from audiobench.leaderboard.collate import (
    FRACTION,
    PERCENT,
    Leaderboard,
    Table,
    collate,
    scale_note,
)
from audiobench.leaderboard.formatting import MISSING
from audiobench.leaderboard.markdown import render_markdown
from audiobench.results import TaskResult
from audiobench.tasks.maeb import MAEB_AUDIO_ONLY_TASKS, MAEB_TASKS
from tests.leaderboard.conftest import (
    BUILT_AT,
    MAEB_GAP_TASK,
    Site,
    clustering_report,
    hand_made_result,
    maeb_scores,
)


def _name(row_model: str) -> str:
    name: str = json.loads(row_model)[0]
    return name


def _sections(board: Leaderboard) -> dict[str, str]:
    """Table title -> its Markdown section."""
    text = render_markdown(board)
    sections = {}
    for table in board.tables:
        start = text.index(f"## {table.title}\n")
        end = text.find("\n## ", start + 1)
        sections[table.title] = text[start : end if end >= 0 else len(text)]
    return sections


# ---------------------------------------------------------------------------- titles

#: Benchmarks named like a task family, with a task of theirs and one of the family in none.
NAMESAKES = (
    ("Classification", "ESC50", "MockClassification"),
    ("Clustering", "ESC50Clustering", "MockClustering"),
    ("Reconstruction", "ESC50Reconstruction", "MockReconstruction"),
)


def test_family_tables_never_take_a_benchmark_title() -> None:
    results = [hand_made_result(task, "model-a", 0.5) for _, *tasks in NAMESAKES for task in tasks]
    board = collate(results, generated=BUILT_AT)
    titles = [t.title for t in board.tables]
    assert titles == [
        "Classification",
        "Clustering",
        "Reconstruction",
        "Other classification tasks",
        "Other clustering tasks",
        "Other reconstruction tasks",
    ]
    assert len({t.casefold() for t in titles}) == len(titles)
    # The tables' ids (the page's links) are those they always had.
    assert [t.id for t in board.tables][3:] == [
        "family-classification",
        "family-clustering",
        "family-reconstruction",
    ]


def test_two_tables_with_one_title_are_refused() -> None:
    results = [hand_made_result(t, "model-a", 0.5) for t in ("ESC50Clustering", "MockClustering")]
    clash = Benchmark(
        name="Other clustering tasks",
        description="A plugin benchmark that takes the family table's title.",
        tasks=("ESC50Clustering",),
        columns=(ScoreColumn(name="V", task="ESC50Clustering", score="v_measure", aggregate=None),),
        rank_by=("V",),
    )
    with pytest.raises(ValueError, match="every tab needs a title of its own"):
        collate(results, benchmarks={"clash": clash})
    # Case and spacing do not tell two tabs apart either.
    upper = clash.model_copy(update={"name": "ESC  clustering"})
    lower = clash.model_copy(update={"name": "esc clustering"})
    with pytest.raises(ValueError, match="would both be titled 'esc clustering'"):
        collate(results, benchmarks={"upper": upper, "lower": lower})


# ---------------------------------------------------------------------------- scales


def _assert_one_scale(table: Table) -> None:
    assert {c.unit for c in table.columns} == {table.unit}, table.title
    assert len({c.percent for c in table.columns}) == 1, table.title
    assert all(c.percent == (table.unit == PERCENT) for c in table.columns)
    assert table.scale == scale_note(table.unit)


def test_every_registered_benchmark_has_one_scale_per_table() -> None:
    benches = list_benchmarks()  # all of them, those kept off the leaderboard too
    tasks = sorted({t for b in benches.values() for t in b.tasks})
    results = [hand_made_result(task, "model-a", 0.5) for task in tasks]
    board = collate(results, benchmarks=benches, generated=BUILT_AT)
    assert board.pending_benchmarks == []
    by_title = {t.title: t for t in board.tables}
    for name, bench in benches.items():
        tables = [t for t in board.tables if t.title == name or t.title.startswith(f"{name} (")]
        assert tables and tables[0].title == name and tables[0].kind == "benchmark"
        # Split or not, every column of the benchmark is on the leaderboard, once.
        shown = sorted(c.name for t in tables for c in t.columns)
        assert shown == sorted(
            [
                *(["mean"] if bench.mean_of else []),
                *(c.name for c in bench.columns),
                *([MEAN_TASK_TYPE, BORDA_RANK] if bench.task_types else []),
            ]
        )
    sections = _sections(board)
    for table in board.tables:
        _assert_one_scale(table)
        section = sections[table.title]
        assert table.scale in section
        assert ("Scores ×100." in section) == (table.unit == PERCENT)
    # What the registered benchmarks declare: fractions ×100, and FAD as it is.
    for name in ("VocSim", "MAEB", "MAEB-audio-only", "Classification", "AudioRetrieval"):
        assert by_title[name].unit == PERCENT
    assert by_title["Reconstruction"].unit == "FAD"
    # None of them mixes scales: nothing was split, but for the Borda rank of the benchmarks
    # with MTEB's aggregations, which stands in a table of its own.
    with_ranks = [f"{b.name} (rank)" for b in benches.values() if b.task_types]
    assert with_ranks and all(title in by_title for title in with_ranks)
    assert len(board.tables) == len(benches) + len(with_ranks)


def test_a_benchmark_mixing_scales_is_split_into_homogeneous_tables() -> None:
    mixed = Benchmark(
        name="Mixed",
        description="Accuracy beside FAD.",
        tasks=("ESC50", "ESC50Reconstruction"),
        columns=(
            ScoreColumn(name="ESC-50 acc", task="ESC50", score="linear:accuracy", aggregate=None),
            ScoreColumn(
                name="FAD",
                task="ESC50Reconstruction",
                score="fad",
                aggregate=None,
                higher_is_better=False,
                percent=False,
            ),
        ),
        mean_of=("ESC-50 acc",),
        rank_by=("mean", "FAD"),
    )
    results = [
        hand_made_result("ESC50", "both", 0.8),
        hand_made_result("ESC50Reconstruction", "both", 3.25),
        hand_made_result("ESC50", "accuracy-only", 0.6),
        hand_made_result("ESC50Reconstruction", "fad-only", 1.5),
    ]
    board = collate(results, benchmarks={"Mixed": mixed}, generated=BUILT_AT)
    main, fad = board.tables
    assert (main.title, main.unit, [c.id for c in main.columns]) == (
        "Mixed",
        PERCENT,
        ["mean", "esc-50-acc"],
    )
    assert (fad.title, fad.unit, [c.id for c in fad.columns]) == ("Mixed (FAD)", "FAD", ["fad"])
    for table in board.tables:
        _assert_one_scale(table)
    # Ranks are the benchmark's in both; the FAD table lists the models with a FAD.
    assert [(_name(r.model), r.rank) for r in main.rows] == [
        ("both", 1),
        ("accuracy-only", 2),
        ("fad-only", 3),
    ]
    assert [(_name(r.model), r.rank, r.values) for r in fad.rows] == [
        ("both", 1, [3.25]),
        ("fad-only", 3, [1.5]),
    ]
    sections = _sections(board)
    assert "Scores ×100." in sections["Mixed"] and "| 80.00 | 80.00 |" in sections["Mixed"]
    assert "Raw FAD values" in sections["Mixed (FAD)"] and "| 3.2500 |" in sections["Mixed (FAD)"]
    assert "Scores ×100." not in sections["Mixed (FAD)"]


def test_a_family_whose_main_scores_differ_in_unit_is_split() -> None:
    gsr = hand_made_result("SyntheticVocalisations", "model-a", 0.4)
    # A plugin task that is not installed here, reporting a raw separation score.
    separation = gsr.model_copy(
        update={
            "task": gsr.task.model_copy(update={"name": "PluginSeparation"}),
            "main_score_name": "raw/cosine:cs",
            "main_score": 2.5,
        }
    )
    board = collate([gsr, separation], benchmarks={}, generated=BUILT_AT)
    assert [(t.title, t.unit, [c.task for c in t.columns]) for t in board.tables] == [
        ("Other zero-shot similarity tasks (0–1)", FRACTION, ["SyntheticVocalisations"]),
        ("Other zero-shot similarity tasks (CS)", "CS", ["PluginSeparation"]),
    ]
    for table in board.tables:
        _assert_one_scale(table)
    assert board.tables[1].columns[0].higher_is_better is False


def test_a_mean_over_percent_and_raw_columns_is_refused() -> None:
    with pytest.raises(ValueError, match="mean_of mixes percent and raw columns"):
        Benchmark(
            name="Bad mean",
            description="A mean of accuracy ×100 and raw V-measure.",
            tasks=("ESC50", "ESC50Clustering"),
            columns=(
                ScoreColumn(name="acc", task="ESC50", score="linear:accuracy", aggregate=None),
                ScoreColumn(
                    name="V",
                    task="ESC50Clustering",
                    score="v_measure",
                    aggregate=None,
                    percent=False,
                ),
            ),
            mean_of=("acc", "V"),
            rank_by=("mean",),
        )


# ---------------------------------------------------------------------------- MAEB


def test_maeb_benchmarks_are_tables_ranked_by_their_mean(maeb_site: Site) -> None:
    board = maeb_site.build.board
    assert maeb_site.build.rejected == []  # hand-made, and valid: pinned hub revisions
    assert {"MAEB", "MAEB-audio-only"}.isdisjoint(board.pending_benchmarks)
    tables = {t.id: t for t in board.tables}
    scores = maeb_scores()
    for table_id, title, tasks in (
        ("maeb", "MAEB", MAEB_TASKS),
        ("maeb-audio-only", "MAEB-audio-only", MAEB_AUDIO_ONLY_TASKS),
    ):
        table = tables[table_id]
        assert (table.title, table.kind, table.rank_by, table.unit) == (
            title,
            "benchmark",
            ["mean"],
            PERCENT,
        )
        # MTEB's aggregations: the mean over task types in the same scale, the Borda rank in
        # a table of its own (ranks are not scores).
        assert [c.name for c in table.columns] == ["mean", *tasks, MEAN_TASK_TYPE]
        types = list_benchmarks()[title].task_types
        held = {
            m: {t: got.get(t) for t in tasks} for m, got in scores.items() if set(tasks) & set(got)
        }
        shown = {_name(r.model): r.values[-1] for r in table.rows}
        assert shown == pytest.approx(mean_over_task_types(held, types))
        ranks = tables[f"{table_id}-rank"]
        assert [(c.name, c.higher_is_better) for c in ranks.columns] == [(BORDA_RANK, False)]
        assert {_name(r.model): r.values[0] for r in ranks.rows} == borda_ranks(held, list(tasks))
        expected = {
            model: statistics.mean(got[t] for t in tasks) if set(tasks) <= set(got) else None
            for model, got in scores.items()
            if set(tasks) & set(got)
        }
        means = {_name(r.model): r.values[0] for r in table.rows}
        assert means == pytest.approx(expected)
        ranked = [r for r in table.rows if r.rank is not None]
        # Best mean first; a model missing a task has no mean, no rank, and comes last.
        assert [r.values[0] for r in ranked] == sorted(
            (v for v in expected.values() if v is not None), reverse=True
        )
        assert [r.rank for r in ranked] == list(range(1, len(ranked) + 1))
        assert all(r.values[0] is None for r in table.rows[len(ranked) :])
    audio_only = tables["maeb-audio-only"]
    assert [(_name(r.model), r.rank) for r in audio_only.rows] == [
        ("audio-strong", 1),
        ("maeb-full", 2),
        ("audio-weak", 3),
        ("audio-gap", None),
    ]
    gap = audio_only.rows[-1]
    assert gap.values[[c.name for c in audio_only.columns].index(MAEB_GAP_TASK)] is None
    top = tables["maeb"].rows[0]
    assert (_name(top.model), top.rank) == ("maeb-full", 1)
    # In the Markdown the unranked model's rank and mean are shown as missing.
    section = _sections(board)["MAEB-audio-only"]
    gap_line = next(line for line in section.splitlines() if "| audio-gap |" in line)
    cells = gap_line.strip("| ").split(" | ")
    assert cells[0] == MISSING and cells[4] == MISSING
    assert cells[5] == "95.00"  # its first task's score, ×100


def test_hand_made_results_are_what_a_run_writes(maeb_site: Site) -> None:
    """The hand-made files pass the public leaderboard's validation, path included."""
    from audiobench.leaderboard.validate import validate_paths

    validation = validate_paths([maeb_site.results])
    assert validation.ok
    assert len(validation.accepted) == sum(len(s) for s in maeb_scores().values()) + 2
    results: list[TaskResult] = [r for _, r in validation.accepted]
    clustering = next(r for r in results if r.task.name == "ESC50Clustering")
    assert clustering.scores["default"] == clustering_report(0.41)
