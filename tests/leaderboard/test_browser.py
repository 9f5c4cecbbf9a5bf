"""The built page in headless Chromium: tabs, sorting, filters, escaping, a screenshot.

The page keeps its view in the URL fragment (``#tab=…&sort=…&dir=…&family=…&domain=…``),
so each test opens a link and reads the DOM Chromium leaves after the page's script ran
(``--dump-dom``). Chromium comes from ``scripts/install-chromium.sh`` (``make test`` runs
it); without it these tests skip and say why.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from tests.leaderboard.browser import Element, find_chromium, page_url, parse, run_chromium
from tests.leaderboard.conftest import HOSTILE_NAME, MARKING_NAME, Site

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="headless Chromium is not installed (run `bash scripts/install-chromium.sh`; "
    "it needs apt-get and root)",
)
FAMILY_TAB = "family-zero-shot-similarity"


def open_page(site: Site, fragment: str = "") -> Element:
    assert CHROMIUM is not None
    dom = parse(
        run_chromium(CHROMIUM, page_url(site.output / "index.html", fragment), "--dump-dom")
    )
    body = dom.find(lambda e: e.tag == "body")
    assert body is not None and body.attrs.get("data-ready") == "true", (
        "the page script did not run"
    )
    return dom


def table_rows(dom: Element, table_id: str) -> list[Element]:
    table = dom.find(lambda e: e.tag == "table" and e.attrs.get("data-table") == table_id)
    assert table is not None, f"table {table_id} is not on the page"
    return table.find_all(lambda e: e.tag == "tr" and "data-model" in e.attrs)


def cell(row: Element, column: str) -> Element:
    found = row.find(lambda e: e.tag == "td" and e.attrs.get("data-col") == column)
    assert found is not None
    return found


def tabs(dom: Element) -> dict[str, bool]:
    """Visible tab ids -> whether selected."""
    return {
        e.attrs["data-tab"]: e.attrs.get("aria-selected") == "true"
        for e in dom.find_all(lambda e: e.attrs.get("role") == "tab")
    }


def test_default_view_is_the_first_benchmark_ranked(site: Site) -> None:
    dom = open_page(site)
    assert tabs(dom) == {"vocsim": True, FAMILY_TAB: False, "plots": False}
    rows = table_rows(dom, "vocsim")
    board_rows = next(t for t in site.build.board.tables if t.id == "vocsim").rows
    assert [r.attrs["data-model"] for r in rows] == [json.loads(r.model)[0] for r in board_rows]
    headers = dom.find_all(lambda e: e.tag == "th" and "data-col" in e.attrs)
    assert [h.attrs["data-col"] for h in headers] == [
        "rank",
        "model",
        "params",
        "blind-p-1",
        "blind-p-5",
        "blind-gsr",
        "public-p-1",
        "public-p-5",
        "public-gsr",
    ]
    groups = dom.find(lambda e: e.tag == "tr" and e.attrs.get("class") == "groups")
    assert groups is not None and "blind subsets" in groups.text and "public subsets" in groups.text
    # Every column states its direction.
    assert all(h.find(lambda e: e.attrs.get("class") == "dir") for h in headers[3:])


@pytest.mark.parametrize("direction", ["desc", "asc"])
def test_sorting_a_column_reorders_rows_missing_last(site: Site, direction: str) -> None:
    dom = open_page(site, f"tab={FAMILY_TAB}&sort=examplechirps&dir={direction}")
    assert tabs(dom)[FAMILY_TAB] is True
    header = dom.find(lambda e: e.tag == "th" and e.attrs.get("data-col") == "examplechirps")
    assert header is not None
    assert header.attrs["aria-sort"] == ("descending" if direction == "desc" else "ascending")
    rows = table_rows(dom, FAMILY_TAB)
    values = [cell(r, "examplechirps").attrs["data-value"] for r in rows]
    present = [float(v) for v in values if v != "missing"]
    assert present == sorted(present, reverse=direction == "desc") and len(present) == 2
    # The two hostile copies have no ExampleChirps score: last, shown as missing, not 0.
    assert values[2:] == ["missing", "missing"]
    assert [cell(r, "examplechirps").text for r in rows[2:]] == ["–", "–"]
    # The order read from the DOM is the order of the numbers in the result files.
    by_model = {
        r.attrs["data-model"]: float(cell(r, "examplechirps").attrs["data-value"]) for r in rows[:2]
    }
    best_first = sorted(by_model, key=by_model.__getitem__, reverse=direction == "desc")
    assert [r.attrs["data-model"] for r in rows[:2]] == best_first


def test_switching_to_the_plots_tab(site: Site) -> None:
    dom = open_page(site, "tab=plots")
    assert tabs(dom)["plots"] is True
    body = dom.find(lambda e: e.tag == "body")
    assert body is not None and body.attrs["data-active-tab"] == "plots"
    panel = dom.by_id("panel-plots")
    assert panel is not None and "hidden" not in panel.attrs
    assert len(panel.find_all(lambda e: e.tag == "svg")) == 3
    assert dom.find(lambda e: e.tag == "table") is None  # the table panels are gone


def test_filters_by_family_and_domain(site: Site) -> None:
    dom = open_page(site, "domain=synthetic")
    # VocSim has no task in the synthetic domain: its tab goes, the family table shows.
    assert tabs(dom) == {FAMILY_TAB: True, "plots": False}
    select = dom.by_id("filter-domain")
    assert select is not None
    dom = open_page(site, f"tab={FAMILY_TAB}&domain=bioacoustics&family=zero_shot_similarity")
    headers = dom.find_all(lambda e: e.tag == "th" and "data-col" in e.attrs)
    # ExampleChirps is synthetic only: filtered out; SyntheticVocalisations stays.
    assert [h.attrs["data-col"] for h in headers] == ["model", "params", "syntheticvocalisations"]
    assert len(table_rows(dom, FAMILY_TAB)) == 4


def test_no_script_from_a_result_file_runs(site: Site, tmp_path: Path) -> None:
    assert CHROMIUM is not None
    # Control: the marking payload does leave its mark when it is markup, so its
    # absence below means it did not run, not that this browser cannot run it.
    control = tmp_path / "control.html"
    control.write_text(f"<!DOCTYPE html><html><body>{MARKING_NAME}</body></html>")
    assert 'data-pwned="1"' in run_chromium(CHROMIUM, page_url(control), "--dump-dom")

    dom = open_page(site, f"tab={FAMILY_TAB}")
    html_element = dom.find(lambda e: e.tag == "html")
    assert html_element is not None and "data-pwned" not in html_element.attrs
    assert dom.find(lambda e: e.tag == "img") is None
    names = [r.attrs["data-model"] for r in table_rows(dom, FAMILY_TAB)]
    assert HOSTILE_NAME in names and MARKING_NAME in names
    shown = {
        r.find(lambda e: e.tag == "button").text  # type: ignore[union-attr]
        for r in table_rows(dom, FAMILY_TAB)
    }
    assert HOSTILE_NAME in shown  # shown as the text it is


def test_model_details_and_screenshot(site: Site, artifacts_dir: Path, tmp_path: Path) -> None:
    assert CHROMIUM is not None
    dom = open_page(site)
    button = table_rows(dom, "vocsim")[0].find(lambda e: e.tag == "button")
    assert button is not None
    hover = button.attrs["title"]
    assert hover.startswith("parameters 0 · embedding size ") and "license " in hover
    assert "compression ratio " in hover and "revision v1" in hover

    for name, fragment, size in (
        ("leaderboard-vocsim.png", "", "1400,900"),
        (
            "leaderboard-family-sorted.png",
            f"tab={FAMILY_TAB}&sort=syntheticvocalisations",
            "1400,900",
        ),
        ("leaderboard-plots.png", "tab=plots", "1400,2200"),
    ):
        shot = tmp_path / name
        run_chromium(
            CHROMIUM,
            page_url(site.output / "index.html", fragment),
            f"--screenshot={shot}",
            f"--window-size={size}",
        )
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert shot.stat().st_size > 10_000
        # Kept for people to look at; replaced in one step, so concurrent runs never
        # see half a picture.
        partial = artifacts_dir / f".{name}.{os.getpid()}.partial"
        shutil.copyfile(shot, partial)
        os.replace(partial, artifacts_dir / name)


CLICKS = """<script>
window.addEventListener("load", function () {
  document.querySelector("#panels tr.row td.model button").click();
  var header = function () { return document.querySelector('th[data-col="public-gsr"] button'); };
  header().click();
  header().click();
});
</script>
"""


def test_clicks_sort_and_open_model_details(site: Site, tmp_path: Path) -> None:
    assert CHROMIUM is not None
    # A copy of the page that clicks like a reader would: the first model's name,
    # then the public GSR header twice (best first, then reversed). The copy drops
    # the page's script-only Content-Security-Policy so the clicking script may run.
    page = (site.output / "index.html").read_text()
    page = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
    clicked = tmp_path / "clicked.html"
    clicked.write_text(page.replace("</body>", CLICKS + "</body>"))
    dom = parse(run_chromium(CHROMIUM, page_url(clicked), "--dump-dom"))
    header = dom.find(lambda e: e.tag == "th" and e.attrs.get("data-col") == "public-gsr")
    assert header is not None and header.attrs["aria-sort"] == "ascending"
    rows = table_rows(dom, "vocsim")
    values = [float(cell(r, "public-gsr").attrs["data-value"]) for r in rows]
    assert values == sorted(values)
    board = next(t for t in site.build.board.tables if t.id == "vocsim")
    first = json.loads(board.rows[0].model)[0]  # ranked first, clicked before sorting
    detail = dom.find(lambda e: e.tag == "tr" and e.attrs.get("class") == "detail")
    assert detail is not None and json.loads(detail.attrs["data-detail-for"])[0] == first
    terms = [e.text for e in detail.find_all(lambda e: e.tag == "dt")]
    assert terms[:3] == ["Parameters", "Embedding size", "Compression ratio"]
    assert "License" in terms and "Revision" in terms
    card = site.build.board.models[board.rows[0].model]
    texts = [e.text for e in detail.find_all(lambda e: e.tag == "dd")]
    described = dict(zip(terms, texts, strict=True))
    assert described["Revision"] == card.revision
    assert described["Embedding size"] == str(card.embedding_dim)


def tab_texts(dom: Element) -> list[str]:
    return [e.text for e in dom.find_all(lambda e: e.attrs.get("role") == "tab")]


@pytest.mark.parametrize("which", ["site", "maeb_site"])
def test_no_two_tabs_share_a_title(which: str, request: pytest.FixtureRequest) -> None:
    built: Site = request.getfixturevalue(which)
    texts = tab_texts(open_page(built))
    assert len(texts) == len({" ".join(t.split()).casefold() for t in texts}), texts
    assert len(texts) == len(built.build.board.tables) + 1  # and the plots


def test_maeb_tabs_rank_by_the_mean(maeb_site: Site) -> None:
    dom = open_page(maeb_site)
    # The benchmark named like the clustering family and that family's table, apart; each
    # MAEB benchmark's Borda rank (MTEB's aggregation) in a tab of its own, as ranks are no
    # scores.
    assert tab_texts(dom) == [
        "Clustering",
        "MAEB",
        "MAEB (rank)",
        "MAEB-audio-only",
        "MAEB-audio-only (rank)",
        "Other clustering tasks",
        "Plots",
    ]
    dom = open_page(maeb_site, "tab=maeb-audio-only")
    assert tabs(dom)["maeb-audio-only"] is True
    table = dom.find(lambda e: e.tag == "table" and e.attrs.get("data-table") == "maeb-audio-only")
    assert table is not None and table.attrs["data-unit"] == "%"
    rule = dom.find(lambda e: e.attrs.get("class") == "rule")
    assert rule is not None and "Ranked by mean." in rule.text and "Scores ×100." in rule.text
    rows = table_rows(dom, "maeb-audio-only")
    assert [r.attrs["data-model"] for r in rows] == [
        "audio-strong",
        "maeb-full",
        "audio-weak",
        "audio-gap",
    ]
    ranks = [r.find(lambda e: e.tag == "td").text for r in rows]  # type: ignore[union-attr]
    assert ranks == ["1", "2", "3", "–"]
    means = [float(cell(r, "mean").attrs["data-value"]) for r in rows[:3]]
    assert means == sorted(means, reverse=True)
    assert [cell(r, "mean").text for r in rows[:3]] == [f"{m * 100:.2f}" for m in means]
    # One task short: no mean (shown as –, never 0), though every score it has is the best.
    gap = rows[3]
    assert cell(gap, "mean").attrs["data-value"] == "missing" and cell(gap, "mean").text == "–"
    assert cell(gap, "gtzanaudioreranking").text == "–"
    assert cell(gap, "beijingopera").text == "95.00"
    # The whole benchmark: only the model with every task has a mean.
    dom = open_page(maeb_site, "tab=maeb")
    rows = table_rows(dom, "maeb")
    assert rows[0].attrs["data-model"] == "maeb-full"
    assert [cell(r, "mean").text for r in rows[1:]] == ["–", "–", "–"]
    # A family table shows its main scores as computed, and says so.
    dom = open_page(maeb_site, "tab=family-clustering")
    table = dom.find(
        lambda e: e.tag == "table" and e.attrs.get("data-table") == "family-clustering"
    )
    assert table is not None and table.attrs["data-unit"] == "0–1"
    rule = dom.find(lambda e: e.attrs.get("class") == "rule")
    assert rule is not None and "from 0 to 1 (not ×100)" in rule.text
    assert cell(table_rows(dom, "family-clustering")[0], "mockclustering").text == "0.6200"
