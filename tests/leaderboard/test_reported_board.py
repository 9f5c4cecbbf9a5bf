"""A board of runs computed with audiobench beside reported ones (imported MTEB results).

Reported rows are ranked with computed ones and marked apart: a marker and a filter on the
page (checked in headless Chromium), an Origin column in the Markdown, an origin column in
results.csv; the model columns (embedding size, open weights, release date) sort. A board can
hold only one's own runs (``--origin computed``).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from audiobench.cli import app
from audiobench.leaderboard.build import build_leaderboard
from audiobench.reported.mteb_import import evaluated_split, import_mteb
from tests.leaderboard.browser import Element
from tests.leaderboard.conftest import BUILT_AT, Site, hand_made_result
from tests.leaderboard.test_browser import CHROMIUM, cell, open_page, table_rows
from tests.reported.mteb_files import model_dir, write_task_file

#: Reported models: hub id -> (the score of every task, model_meta.json fields).
REPORTED = {
    "acme/open-encoder": (
        0.6,
        {
            "n_parameters": 95_000_000,
            "embed_dim": 768,
            "open_weights": True,
            "release_date": "2025-03-14",
        },
    ),
    "acme/closed-encoder": (
        0.2,
        {
            "n_parameters": None,
            "embed_dim": 512,
            "open_weights": False,
            "release_date": "2024-01-02",
        },
    ),
}
COMPUTED = {"audio-strong": 0.8, "audio-weak": 0.3}


def _publish(root: Path) -> None:
    """MTEB files of the reported models on every MAEB audio-only task, each key at one value."""
    from audiobench import registry
    from audiobench.evaluators.mteb_protocol.subset_scores import MAIN_SCORE_KEYS
    from audiobench.task import DEFAULT_SUBSET
    from audiobench.tasks.maeb import MAEB_AUDIO_ONLY_TASKS

    for hub, (score, meta) in REPORTED.items():
        folder = model_dir(root, {"name": hub, "revision": "main", "license": "mit", **meta})
        for task in MAEB_AUDIO_ONLY_TASKS:
            cls = registry.tasks.get(task)
            info = cls.metadata
            multilabel = getattr(cls.options, "multilabel", False)
            keys = ("lrap", "f1") if multilabel else MAIN_SCORE_KEYS[str(info.family)][:3]
            entries = [
                {
                    **dict.fromkeys(keys, score),
                    info.main_score: score,
                    "main_score": score,
                    "hf_subset": subset,
                }
                for subset in (info.subsets or (DEFAULT_SUBSET,))
            ]
            split = evaluated_split(tuple(info.splits))
            write_task_file(
                folder,
                {
                    "task_name": task,
                    "dataset_revision": info.revision,
                    "mteb_version": "2.3.0",
                    "scores": {split: entries},
                },
            )


@pytest.fixture(scope="module")
def reported_site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    from audiobench.tasks.maeb import MAEB_AUDIO_ONLY_TASKS

    base = tmp_path_factory.mktemp("leaderboard-reported")
    results = base / "results"
    for model, score in COMPUTED.items():
        for task in MAEB_AUDIO_ONLY_TASKS:
            hand_made_result(task, model, score).save(results)
    _publish(base / "mteb")
    summary = import_mteb(base / "mteb", base / "reported", repository="acme/results")
    assert summary.refused == [], [r.line() for r in summary.refused]
    output = base / "site"
    build = build_leaderboard(results, output, generated=BUILT_AT, reported=[base / "reported"])
    return Site(results, output, build)


def _names(rows: list[Element]) -> list[str]:
    return [r.attrs["data-model"] for r in rows]


# ---------------------------------------------------------------------------- outputs


def test_reported_and_computed_rank_together(reported_site: Site) -> None:
    board = reported_site.build.board
    table = next(t for t in board.tables if t.id == "maeb-audio-only")
    order = [json.loads(r.model)[0] for r in table.rows]
    assert order == ["audio-strong", "acme/open-encoder", "audio-weak", "acme/closed-encoder"]
    assert [r.rank for r in table.rows] == [1, 2, 3, 4]
    origins = {board.models[r.model].name: board.models[r.model].origin for r in table.rows}
    assert origins == {
        "audio-strong": "computed",
        "acme/open-encoder": "reported",
        "audio-weak": "computed",
        "acme/closed-encoder": "reported",
    }
    card = next(c for c in board.models.values() if c.name == "acme/open-encoder")
    assert (card.embedding_dim, card.open_weights, str(card.release_date)) == (
        768,
        True,
        "2025-03-14",
    )
    assert card.reported_from == "MTEB 2.3.0 (acme/results)"


def test_markdown_and_csv_say_which_rows_are_reported(reported_site: Site) -> None:
    text = (reported_site.output / "leaderboard.md").read_text()
    assert "| # | Model | Revision | Origin | Parameters |" in text
    assert "| 2 | acme/open-encoder | main | reported | 95M |" in text
    assert "| 1 | audio-strong | v1 | computed |" in text
    with (reported_site.output / "results.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    by_origin = {(r["model"], r["origin"]) for r in rows}
    assert by_origin == {
        ("audio-strong", "computed"),
        ("audio-weak", "computed"),
        ("acme/open-encoder", "reported"),
        ("acme/closed-encoder", "reported"),
    }
    reported = next(r for r in rows if r["model"] == "acme/open-encoder")
    assert reported["mteb_version"] == "2.3.0" and reported["dataset_revision_matches"] == "True"
    assert reported["open_weights"] == "True" and reported["release_date"] == "2025-03-14"
    assert reported["reported_source"].startswith("acme/results:acme__open-encoder/main/")


def test_a_board_of_ones_own_runs_only(reported_site: Site, tmp_path: Path) -> None:
    base = reported_site.results.parent
    mine = build_leaderboard(
        reported_site.results, tmp_path / "mine", reported=[base / "reported"], origin="computed"
    )
    assert {c.name for c in mine.board.models.values()} == {"audio-strong", "audio-weak"}
    assert "Origin" not in (tmp_path / "mine" / "leaderboard.md").read_text()
    theirs = runner_build(reported_site, tmp_path / "theirs", "--origin", "reported")
    assert theirs == {"acme/open-encoder", "acme/closed-encoder"}
    bad = CliRunner().invoke(
        app, ["leaderboard", "build", "--results", str(reported_site.results), "--origin", "x"]
    )
    assert bad.exit_code == 2 and "--origin must be one of all, computed, reported" in bad.stderr


def runner_build(site: Site, output: Path, *extra: str) -> set[str]:
    base = site.results.parent
    done = CliRunner().invoke(
        app,
        [
            "leaderboard",
            "build",
            "--results",
            str(site.results),
            "--output",
            str(output),
            "--reported",
            str(base / "reported"),
            *extra,
        ],
    )
    assert done.exit_code == 0, done.output
    data = json.loads((output / "leaderboard.json").read_text())
    return {card["name"] for card in data["models"].values()}


# ---------------------------------------------------------------------------- the page


pytestmark_browser = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium is not installed (bash scripts/install-chromium.sh)"
)


@pytestmark_browser
def test_page_marks_reported_rows_ranked_with_computed_ones(reported_site: Site) -> None:
    dom = open_page(reported_site, "tab=maeb-audio-only")
    rows = table_rows(dom, "maeb-audio-only")
    assert _names(rows) == [
        "audio-strong",
        "acme/open-encoder",
        "audio-weak",
        "acme/closed-encoder",
    ]
    assert [r.attrs["data-origin"] for r in rows] == ["computed", "reported"] * 2
    markers = [r.find(lambda e: e.attrs.get("data-origin-marker") is not None) for r in rows]
    assert [m.text if m else None for m in markers] == [None, "reported", None, "reported"]
    assert markers[1] is not None and "MTEB 2.3.0 (acme/results)" in markers[1].attrs["title"]
    ranks = [r.find(lambda e: e.tag == "td").text for r in rows]  # type: ignore[union-attr]
    assert ranks == ["1", "2", "3", "4"]
    select = dom.by_id("filter-origin")
    assert select is not None
    assert [o.attrs["value"] for o in select.find_all(lambda e: e.tag == "option")] == [
        "",
        "computed",
        "reported",
    ]


@pytestmark_browser
@pytest.mark.parametrize(
    ("origin", "shown", "ranks"),
    [
        ("computed", ["audio-strong", "audio-weak"], ["1", "3"]),
        ("reported", ["acme/open-encoder", "acme/closed-encoder"], ["2", "4"]),
    ],
)
def test_page_filters_by_origin(
    reported_site: Site, origin: str, shown: list[str], ranks: list[str]
) -> None:
    dom = open_page(reported_site, f"tab=maeb-audio-only&origin={origin}")
    rows = table_rows(dom, "maeb-audio-only")
    assert _names(rows) == shown
    # Ranks stay those of the whole board, and the page says what it hides.
    assert [r.find(lambda e: e.tag == "td").text for r in rows] == ranks  # type: ignore[union-attr]
    note = dom.by_id("origin-hidden")
    assert note is not None and note.text.startswith("2 model(s) with ")


@pytestmark_browser
@pytest.mark.parametrize(
    ("sort", "direction", "expected"),
    [
        ("released", "desc", ["acme/open-encoder", "acme/closed-encoder"]),
        ("released", "asc", ["acme/closed-encoder", "acme/open-encoder"]),
        ("embdim", "asc", ["acme/closed-encoder", "acme/open-encoder"]),
        ("open", "desc", ["acme/open-encoder", "acme/closed-encoder"]),
    ],
)
def test_page_sorts_by_the_model_columns(
    reported_site: Site, sort: str, direction: str, expected: list[str]
) -> None:
    dom = open_page(reported_site, f"tab=maeb-audio-only&sort={sort}&dir={direction}")
    headers = dom.find_all(lambda e: e.tag == "th" and "data-col" in e.attrs)
    assert [h.attrs["data-col"] for h in headers][:6] == [
        "rank",
        "model",
        "params",
        "embdim",
        "open",
        "released",
    ]
    rows = table_rows(dom, "maeb-audio-only")
    # The computed rows have no such metadata: last, shown as missing, whichever direction.
    assert _names(rows)[:2] == expected
    assert [cell(r, sort).text for r in rows[2:]] == ["–", "–"]
    first = rows[0]
    assert cell(first, "open").text in ("yes", "no")
    assert cell(first, "released").text in ("2025-03-14", "2024-01-02")


@pytestmark_browser
def test_page_hides_model_columns_unless_asked(reported_site: Site) -> None:
    dom = open_page(reported_site, "tab=maeb-audio-only")
    headers = [
        h.attrs["data-col"] for h in dom.find_all(lambda e: e.tag == "th" and "data-col" in e.attrs)
    ]
    assert "embdim" not in headers
    dom = open_page(reported_site, "tab=maeb-audio-only&cols=model")
    headers = [
        h.attrs["data-col"] for h in dom.find_all(lambda e: e.tag == "th" and "data-col" in e.attrs)
    ]
    assert headers[3:6] == ["embdim", "open", "released"]


def test_reported_on_another_revision_goes_on_a_private_board_only(tmp_path: Path) -> None:
    from tests.reported.mteb_files import task_file

    folder = model_dir(tmp_path / "mteb", {"name": "acme/open-encoder", "revision": "main"})
    write_task_file(folder, task_file("CREMA_D", dataset_revision="f" * 40))
    import_mteb(tmp_path / "mteb", tmp_path / "reported", allow_revision_mismatch=True)
    (tmp_path / "mine").mkdir()
    public = build_leaderboard(
        tmp_path / "mine", tmp_path / "public", reported=[tmp_path / "reported"]
    )
    assert public.board.n_results == 0 and "private tables only" in public.board.rejected[0]
    private = build_leaderboard(
        tmp_path / "mine",
        tmp_path / "private",
        reported=[tmp_path / "reported"],
        allow_unpinned=True,
    )
    assert private.board.n_results == 1 and private.board.local_data == ["CREMA_D"]
    (row,) = next(t for t in private.board.tables if "CREMA_D" in [c.task for c in t.columns]).rows
    assert "reported on another dataset revision" in " ".join(row.notes)
    assert (
        "on another revision than the pinned one"
        in (tmp_path / "private" / "leaderboard.md").read_text()
    )


def test_an_mseb_source_names_its_dataset_label_not_an_unknown_version() -> None:
    from audiobench.leaderboard.collate import _source_label
    from audiobench.results import ReportedSource

    def source(origin: str, version: str | None, dataset: str | None) -> ReportedSource:
        return ReportedSource.model_validate(
            {
                "origin": origin,
                "repository": "acme/mseb",
                "file": "enc/SVQEnUsSpeechTranscription.jsonl",
                "mteb_version": version,
                "model": "acme/encoder",
                "model_revision": None,
                "dataset_revision": dataset,
                "revision_matches": False,
                "split": "test",
                "audiobench_model": None,
            }
        )

    assert _source_label(source("mseb", None, "1.0.0")) == "MSEB, dataset 1.0.0 (acme/mseb)"
    assert _source_label(source("mseb", None, None)) == "MSEB (acme/mseb)"
    assert _source_label(source("mteb", None, None)) == "MTEB (version unknown) (acme/mseb)"
    assert _source_label(source("mteb", "2.3.0", None)) == "MTEB 2.3.0 (acme/mseb)"
