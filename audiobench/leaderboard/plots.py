"""Leaderboard plots as SVG: P@1 against GSR, public against blind, score against size.

Figures are drawn with matplotlib's object API (``Figure``, no pyplot), so no
GUI backend is ever selected and nothing global changes: it works the same
headless, in CI and inside a notebook. Text is kept as SVG ``<text>``, which
matplotlib XML-escapes, so a model name such as ``<img src=x>`` stays text
when the SVG is inlined into the page.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable
from dataclasses import dataclass

from audiobench.families import ZeroShotSimilarityTask
from audiobench.leaderboard.collate import Leaderboard, model_key
from audiobench.results import TaskResult
from audiobench.task import TaskFamily

__all__ = ["PLOTS", "Point", "inline_svg", "render_plots"]

#: File stem -> title of every plot, in page order.
PLOTS = {
    "p1_vs_gsr": "P@1 against GSR (zero-shot similarity, headline configuration)",
    "public_vs_blind": "Public against blind subsets (zero-shot similarity, main score)",
    "score_vs_parameters": "Main score against parameter count",
}

_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
_LABEL_LENGTH = 32


@dataclass(frozen=True)
class Point:
    model: str  # model key
    task: str
    x: float
    y: float


def _label(text: str) -> str:
    """A legend label: short, and never read as mathtext (``$...$``)."""
    text = text if len(text) <= _LABEL_LENGTH else text[: _LABEL_LENGTH - 1] + "…"
    return text.replace("\\", "\\\\").replace("$", r"\$")


def _zero_shot(results: Iterable[TaskResult]) -> list[TaskResult]:
    return [r for r in results if r.task.family == TaskFamily.ZERO_SHOT_SIMILARITY]


def _headline(result: TaskResult, group: str, metric: str | None = None) -> float | None:
    config, _, main_metric = result.main_score_name.rpartition(":")
    spec = f"{config}:{metric or main_metric}"
    return ZeroShotSimilarityTask.summary_score(result.aggregates.get(group), spec)


def p1_vs_gsr_points(results: Iterable[TaskResult]) -> list[Point]:
    """Per (model, task): GSR and P@1 at the task's headline configuration, public subsets
    (blind where a result has no public ones)."""
    points = []
    for r in _zero_shot(results):
        group = "public" if "public" in r.aggregates else "blind"
        gsr, p1 = _headline(r, group, "gsr"), _headline(r, group, "p@1")
        if gsr is not None and p1 is not None:
            points.append(Point(model_key(r.model.name, r.model.revision), r.task.name, gsr, p1))
    return points


def public_vs_blind_points(results: Iterable[TaskResult]) -> list[Point]:
    """Per (model, task) evaluated on both: the main metric on public and on blind subsets."""
    points = []
    for r in _zero_shot(results):
        public, blind = _headline(r, "public"), _headline(r, "blind")
        if public is not None and blind is not None:
            points.append(
                Point(model_key(r.model.name, r.model.revision), r.task.name, public, blind)
            )
    return points


def score_vs_parameters_points(results: Iterable[TaskResult]) -> list[Point]:
    return [
        Point(
            model_key(r.model.name, r.model.revision),
            r.task.name,
            float(r.model.n_parameters),
            r.main_score,
        )
        for r in results
        if r.main_score is not None and r.model.n_parameters is not None
    ]


def render_plots(board: Leaderboard) -> dict[str, str]:
    """Every plot of :data:`PLOTS` as a standalone SVG document."""
    import matplotlib as mpl

    models = sorted(board.models)
    names = {key: _label(board.models[key].name) for key in models}
    revisions = {board.models[k].name for k in models}
    if len(revisions) < len(models):  # several revisions of one model: tell them apart
        names = {
            key: _label(f"{board.models[key].name} @ {board.models[key].revision}")
            for key in models
        }
    colours = {key: f"C{i % 10}" for i, key in enumerate(models)}
    tasks = sorted({r.task.name for r in board.results})
    markers = {task: _MARKERS[i % len(_MARKERS)] for i, task in enumerate(tasks)}
    specs = {
        "p1_vs_gsr": (p1_vs_gsr_points(board.results), "GSR", "P@1", False),
        "public_vs_blind": (
            public_vs_blind_points(board.results),
            "public subsets",
            "blind subsets",
            True,
        ),
        "score_vs_parameters": (
            score_vs_parameters_points(board.results),
            "parameters",
            "main score",
            False,
        ),
    }
    svgs = {}
    for stem, (points, xlabel, ylabel, diagonal) in specs.items():
        # Each plot's own salt keeps marker and clip ids distinct when the
        # SVGs are inlined into one page.
        with mpl.rc_context({"svg.fonttype": "none", "svg.hashsalt": f"audiobench-{stem}"}):
            svgs[stem] = _draw(
                points,
                title=PLOTS[stem],
                xlabel=xlabel,
                ylabel=ylabel,
                names=names,
                colours=colours,
                markers=markers,
                diagonal=diagonal,
                log_x=stem == "score_vs_parameters",
            )
    return svgs


def _draw(
    points: list[Point],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    names: dict[str, str],
    colours: dict[str, str],
    markers: dict[str, str],
    diagonal: bool,
    log_x: bool,
) -> str:
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    fig = Figure(figsize=(8.0, 4.8), layout="constrained")
    ax = fig.add_subplot()
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    if not points:
        ax.text(
            0.5,
            0.5,
            "no results for this plot yet",
            ha="center",
            va="center",
            transform=ax.transAxes,
            color="0.4",
        )
        ax.set_xticks([])
        ax.set_yticks([])
    for point in points:
        ax.scatter(
            point.x,
            point.y,
            color=colours[point.model],
            marker=markers.get(point.task, "o"),
            s=46,
            edgecolors="black",
            linewidths=0.4,
            zorder=3,
        )
    if log_x and points:
        if max(p.x for p in points) > 0:
            # Symmetric log: parameter-free baselines (0 parameters) stay on the axis.
            ax.set_xscale("symlog", linthresh=1.0)
            ax.set_xlim(left=-0.5)
        else:
            ax.set_xlim(-1.0, 1.0)
            ax.set_xticks([0.0])
    if diagonal and points:
        low = min(min(p.x, p.y) for p in points)
        high = max(max(p.x, p.y) for p in points)
        ax.plot([low, high], [low, high], color="0.6", linestyle="--", linewidth=0.8, zorder=1)
    shown_models = sorted({p.model for p in points}, key=lambda k: names[k].lower())
    shown_tasks = sorted({p.task for p in points})
    if points:
        model_handles = [
            Line2D([], [], linestyle="", marker="o", color=colours[k], label=names[k])
            for k in shown_models
        ]
        task_handles = [
            Line2D([], [], linestyle="", marker=markers[t], color="0.35", label=_label(t))
            for t in shown_tasks
        ]
        # Figure legends "outside" the axes get room from the constrained layout.
        fig.legend(
            handles=model_handles,
            title="model",
            loc="outside right upper",
            fontsize=8,
            title_fontsize=8,
            frameon=False,
        )
        fig.legend(
            handles=task_handles,
            title="task",
            loc="outside right lower",
            fontsize=8,
            title_fontsize=8,
            frameon=False,
        )
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def inline_svg(document: str) -> str:
    """An SVG document without its XML prologue and doctype, for inlining into HTML."""
    start = document.find("<svg")
    if start < 0:
        raise ValueError("not an SVG document")
    # The RDF metadata block only names vocabularies; the page does not need it.
    return re.sub(r"<metadata>.*?</metadata>\s*", "", document[start:], count=1, flags=re.S)
