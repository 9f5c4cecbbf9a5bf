"""The leaderboard as one self-contained HTML page: no external scripts, fonts or styles.

Safety has two layers. First, nothing from a result file is ever written as
markup: the data travel as JSON in a ``<script type="application/json">``
block with ``<``, ``>`` and ``&`` escaped as ``\\u003c`` etc. (so no string
can close the block), the script renders it with ``textContent``, and the
few strings written by Python (the rejected list) go through
:func:`html.escape`. Second, a Content-Security-Policy admits only the
page's own script (by its SHA-256) and no inline event handlers, remote
scripts or images, so even a mistake in the first layer could not run code.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json

from audiobench.leaderboard.collate import Leaderboard
from audiobench.leaderboard.formatting import plural
from audiobench.leaderboard.page_assets import SCRIPT, STYLE
from audiobench.leaderboard.plots import PLOTS, inline_svg

__all__ = ["json_for_script", "render_page"]

_SCRIPT_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def json_for_script(data: object) -> str:
    """JSON that is inert inside a ``<script>`` element whatever strings it holds."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return "".join(_SCRIPT_ESCAPES.get(ch, ch) for ch in text)


def _csp(script: str) -> str:
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return (
        "default-src 'none'; "
        f"script-src 'sha256-{digest}'; "
        "style-src 'unsafe-inline'; "
        "img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )


def render_page(board: Leaderboard, svgs: dict[str, str]) -> str:
    """The page for ``board``, with the plots ``svgs`` (stem -> SVG document) inlined."""
    esc = html.escape
    n_models = len(board.models)
    figures = []
    for stem, title in PLOTS.items():
        if stem not in svgs:
            continue
        figures.append(
            f'<figure id="plot-{esc(stem)}">{inline_svg(svgs[stem])}'
            f'<figcaption>{esc(title)}: <a href="plots/{esc(stem)}.svg">SVG file</a>'
            "</figcaption></figure>"
        )
    if board.rejected:
        rejected = (
            f"<p>{len(board.rejected)} problem(s) kept these files off the leaderboard:</p>"
            '<ul id="rejected-list">'
            + "".join(f"<li>{esc(line)}</li>" for line in board.rejected)
            + "</ul>"
        )
    else:
        rejected = "<p>No result file was rejected.</p>"
    pending = (
        '<p class="note" id="pending">No results yet for the benchmarks '
        f"{esc(', '.join(board.pending_benchmarks))}.</p>"
        if board.pending_benchmarks
        else ""
    )
    private = (
        '<p class="note private" id="private">A private board: '
        f"{esc(', '.join(board.local_data))} ran on local data or an unpinned dataset "
        "revision (or, reported, on another revision than the pinned one), which the "
        "public leaderboard does not take. Scores carry what they read "
        "against: the permutation baseline and lift, or chance and the spread across folds "
        "(see docs/METRICS.md).</p>"
        if board.local_data
        else ""
    )
    data = json_for_script(board.model_dump(mode="json"))
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{esc(_csp(SCRIPT))}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>audiobench leaderboard</title>
<style>{STYLE}</style>
</head>
<body>
<header>
<h1>audiobench leaderboard</h1>
<p class="meta">Built {board.generated:%Y-%m-%d %H:%M} UTC from
{plural(board.n_results, "result file")} of {plural(n_models, "model")} with audiobench
{esc(board.audiobench_version)}.
Click a column to sort it, a model for its details; the address bar keeps the view as a link.</p>
{private}
</header>
<div class="controls">
<label>Task family <select id="filter-family"></select></label>
<label>Domain <select id="filter-domain"></select></label>
<label title="Computed with audiobench, or published elsewhere and imported (marked REPORTED)">
Results <select id="filter-origin"></select></label>
<label><input type="checkbox" id="show-model-columns"> Model columns (embedding size, open
weights, release date)</label>
</div>
<nav role="tablist" id="tabs" aria-label="Leaderboards"></nav>
<main>
<noscript><p>The tables need JavaScript; leaderboard.md and the CSV files next to this page
hold the same numbers.</p></noscript>
<div id="panels"></div>
{pending}
<section role="tabpanel" id="panel-plots" data-tab="plots" aria-labelledby="tab-plots" hidden>
<h2>Plots</h2>
<div class="plots">{"".join(figures)}</div>
</section>
</main>
<section id="rejected" class="rejected">
<h2>Rejected files</h2>
{rejected}
</section>
<footer><p>Results are submitted by pull request to <code>leaderboard/results/</code>;
see <code>leaderboard/README.md</code>.</p></footer>
<script type="application/json" id="leaderboard-data">{data}</script>
<script>{SCRIPT}</script>
</body>
</html>
"""
