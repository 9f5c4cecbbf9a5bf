"""``audiobench results ...`` and ``audiobench leaderboard ...`` commands.

Messages that quote result files are printed as plain text (no Rich markup),
so a name like ``[red]x[/]`` or a terminal escape in a file shows as written.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

if TYPE_CHECKING:
    from audiobench.leaderboard.context import ScoreContext

__all__ = ["leaderboard_app", "results_app"]

results_app = typer.Typer(
    help="Validate result files and export them for a leaderboard submission.",
    no_args_is_help=True,
)
leaderboard_app = typer.Typer(
    help="Build the leaderboard (HTML, Markdown, CSV, plots) from result files.",
    no_args_is_help=True,
)


def say(message: str) -> None:
    """One line (or several) on stderr, with any control character in a path shown escaped."""
    from audiobench.terminal import printable

    typer.echo(printable(message, keep="\n"), err=True)


@results_app.command("validate")
def validate(
    paths: Annotated[
        list[Path],
        typer.Argument(help="Result files, or folders searched for *.json.", show_default=False),
    ],
    allow_unpinned: Annotated[
        bool,
        typer.Option(
            help="Accept results computed on local data (--dataset, folder tasks) or an "
            "unpinned dataset revision such as 'main', for a private table. The public "
            "leaderboard refuses them."
        ),
    ] = False,
) -> None:
    """Check result files strictly; print one line per problem and exit 1 if any.

    Besides the schema: the task is registered and agrees with the file, every
    score is a known metric inside its range, counts and derived values agree
    with each other, the main score and every aggregate are what the file's own
    subset scores give, the recorded data identity is one the task can have,
    and the data was pinned (see --allow-unpinned).
    """
    from audiobench.leaderboard.validate import validate_paths

    validation = validate_paths(paths, allow_unpinned=allow_unpinned)
    for problem in validation.problems:
        typer.echo(problem.line())
    n_bad = len(validation.rejected)
    n_files = len(validation.accepted) + n_bad
    if validation.problems:
        say(f"{n_bad} of {n_files} result file(s) invalid ({len(validation.problems)} problem(s))")
        raise typer.Exit(1)
    say(f"{n_files} result file(s) valid" if n_files else "no result files found")


@results_app.command("table")
def table(
    paths: Annotated[
        list[Path],
        typer.Argument(help="Result files, or folders searched for *.json.", show_default=False),
    ],
    as_csv: Annotated[bool, typer.Option("--csv", help="Print CSV instead of a table.")] = False,
) -> None:
    """Print the main score of every result: one row per task, one column per model.

    Under each score, what it reads against: the permutation baseline and the lift over
    it for GSR and P@k (baselines differ by model, so rank by lift, not raw score), chance
    and the spread across folds for classification, and "local data" for results a public
    board refuses. The CSV has one column per task and one per task and reference
    ("<task> baseline", "<task> lift", "<task> chance", "<task> std"). Any result file
    that reads as a result is shown (your own folder tasks and local data included); files
    that do not are listed on stderr. The metrics are defined in docs/METRICS.md.
    """
    import csv
    import sys

    from rich.table import Table

    from audiobench.errors import ResultFileError
    from audiobench.leaderboard.context import ScoreContext, score_context
    from audiobench.leaderboard.validate import find_result_files
    from audiobench.results import load_result
    from audiobench.terminal import stdout_console

    files, problems = find_result_files(paths)
    for problem in problems:
        say(problem.line())
    cells: dict[str, dict[str, tuple[float | None, ScoreContext]]] = {}
    columns: dict[str, str] = {}
    for path in files:
        try:
            result = load_result(path)
        except ResultFileError as exc:
            say(f"left out: {exc}".splitlines()[0])
            continue
        model = result.model.name + (f"@{result.model.revision}" if result.model.revision else "")
        columns.setdefault(result.task.name, result.main_score_name)
        cells.setdefault(model, {})[result.task.name] = (result.main_score, score_context(result))
    tasks = sorted(columns)
    models = sorted(cells)
    if as_csv:
        references = ("baseline", "lift", "chance", "std")
        used = {
            (task, ref)
            for task in tasks
            for model in models
            if task in cells[model]
            for ref, value in zip(references, _references(cells[model][task][1]), strict=True)
            if value is not None
        }
        from audiobench.leaderboard.frames import spreadsheet_cell

        header = ["model"]
        for task in tasks:
            header += [task, *(f"{task} {ref}" for ref in references if (task, ref) in used)]
        # Model and task names come from any file that reads as a result: no formula may run.
        writer = csv.writer(sys.stdout)
        writer.writerow([spreadsheet_cell(cell) for cell in header])
        for model in models:
            row: list[object] = [model]
            for task in tasks:
                value, context = cells[model].get(task, (None, ScoreContext()))
                row.append(value)
                row += [
                    number
                    for ref, number in zip(references, _references(context), strict=True)
                    if (task, ref) in used
                ]
            writer.writerow([spreadsheet_cell(cell) for cell in row])
        return
    shown = Table(
        title="main score of each task, per model",
        caption="under each score: what it reads against (docs/METRICS.md)",
    )
    shown.add_column("task", no_wrap=True)
    shown.add_column("main score", overflow="fold")
    for model in models:
        shown.add_column(model, justify="right", overflow="fold")
    for task in tasks:
        shown.add_row(task, columns[task], *(_cell(cells[m].get(task)) for m in models))
    stdout_console(soft_wrap=True).print(shown)
    if not cells:
        say("no result files found")


def _references(context: ScoreContext) -> tuple[float | None, ...]:
    return (context.baseline, context.lift, context.chance, context.spread)


def _cell(entry: tuple[float | None, ScoreContext] | None) -> Text:
    """A score and, on the lines below it, what it reads against."""
    return Text(_cell_lines(entry))


def _cell_lines(entry: tuple[float | None, ScoreContext] | None) -> str:
    if entry is None or entry[0] is None:
        return "–"
    value, context = entry
    text = f"{value:.4f}"
    if context.spread is not None:
        text += f" ± {context.spread:.4f}"
    if context.baseline is not None:
        text += f"\nbaseline {context.baseline:.4f}"
    if context.lift is not None:
        text += f"\nlift {context.lift:+.4f}"
    if context.chance is not None:
        text += f"\nchance {context.chance:.4f}"
    if context.n_folds is not None:
        text += f"\n{context.n_folds} fold{'' if context.n_folds == 1 else 's'}"
    if context.local_data:
        text += "\nlocal data"
    return text


@results_app.command("schema")
def schema(
    family: Annotated[
        str | None,
        typer.Option(help="Only this task family's report schemas (e.g. clustering)."),
    ] = None,
) -> None:
    """Print the JSON Schema of result files and of every family's scores and options.

    A result's ``scores[<subset>]`` follow the family's ``report`` schema,
    ``aggregates[<group>]`` its ``summary`` schema; ``run.task_options`` its
    ``options`` schema. Use it to check submissions outside audiobench.
    """
    import json

    from audiobench.families import FAMILIES
    from audiobench.results import TaskResult

    families = {
        str(name): {
            "options": cls.Options.model_json_schema(),
            "report": cls.Report.model_json_schema(),
            "summary": cls.Summary.model_json_schema(),
            "aggregate_groups": [cls.public_group, "blind"],
        }
        for name, cls in FAMILIES.items()
        if family is None or str(name) == family
    }
    if family is not None and not families:
        say(f"error: unknown family {family!r}; known: {', '.join(map(str, FAMILIES))}")
        raise typer.Exit(2)
    document = {"families": families}
    if family is None:
        document = {"result": TaskResult.model_json_schema(), **document}
    typer.echo(json.dumps(document, indent=2))


@results_app.command("export")
def export(
    results_dir: Annotated[
        Path,
        typer.Argument(
            help="Your results folder (as written by `audiobench evaluate`).", show_default=False
        ),
    ],
    to: Annotated[
        Path | None,
        typer.Option(
            "--to",
            help="Where to write: the leaderboard's results folder in your checkout "
            "(default leaderboard/results), or with --format mseb a folder of MSEB's "
            "<encoder>/<Task>.jsonl files (default mseb-results).",
            show_default=False,
        ),
    ] = None,
    overwrite: Annotated[
        bool, typer.Option(help="Replace a different run of the same model, revision and task.")
    ] = False,
    skip_invalid: Annotated[
        bool, typer.Option(help="Export the valid files even if others are invalid.")
    ] = False,
    allow_unpinned: Annotated[
        bool,
        typer.Option(help="Also export results on local or unpinned data (a private board)."),
    ] = False,
    output_format: Annotated[
        str,
        typer.Option(
            "--format",
            help="'audiobench': copy the result files for a leaderboard pull request; "
            "'mseb': write MSEB's result lines (one per sub-task) of every result scored the "
            "MSEB way (protocol=mseb), for a submission to MSEB's leaderboard.",
        ),
    ] = "audiobench",
) -> None:
    """Copy valid results into <to>/<model>/<revision>/<Task>.json for a pull request, or
    (--format mseb) write them as MSEB's <to>/<encoder>/<Task>.jsonl result lines."""
    from audiobench.leaderboard.export import export_results

    if output_format not in ("audiobench", "mseb"):
        say(f"error: --format must be 'audiobench' or 'mseb', not {output_format!r}")
        raise typer.Exit(2)
    if not results_dir.is_dir():
        say(f"error: {results_dir}: not a directory")
        raise typer.Exit(2)
    if output_format == "mseb":
        _export_mseb(results_dir, to or Path("mseb-results"), overwrite, skip_invalid)
        return
    to = to or Path("leaderboard/results")
    outcome = export_results(
        results_dir,
        to,
        overwrite=overwrite,
        skip_invalid=skip_invalid,
        allow_unpinned=allow_unpinned,
    )
    for problem in outcome.problems:
        typer.echo(problem.line())
    if outcome.problems and not skip_invalid:
        say("nothing exported: fix the files above, or pass --skip-invalid to leave them out")
        raise typer.Exit(1)
    for source, target in outcome.copied:
        typer.echo(f"copied {source} -> {target}")
    for _, target in outcome.unchanged:
        typer.echo(f"unchanged {target}")
    for source, target, why in outcome.refused:
        typer.echo(f"refused {source} -> {target}: {why}")
    say(
        f"{len(outcome.copied)} copied, {len(outcome.unchanged)} unchanged, "
        f"{len(outcome.refused)} refused, {len(outcome.problems)} problem(s)"
    )
    if outcome.copied:
        say(f"next: git add {to} and open a pull request (see leaderboard/README.md)")
    if not outcome.ok:
        raise typer.Exit(1)


def _export_mseb(results_dir: Path, to: Path, overwrite: bool, skip_invalid: bool) -> None:
    """``results export --format mseb``: MSEB's lines of every result scored the MSEB way."""
    from audiobench.reported.mseb_export import export_mseb

    outcome = export_mseb(results_dir, to, overwrite=overwrite, skip_invalid=skip_invalid)
    for problem in outcome.problems:
        typer.echo(problem.line())
    if outcome.problems and not skip_invalid:
        say("nothing exported: fix the files above, or pass --skip-invalid to leave them out")
        raise typer.Exit(1)
    for target in outcome.written:
        typer.echo(f"wrote {target}")
    for target in outcome.unchanged:
        typer.echo(f"unchanged {target}")
    for path, why in outcome.refused:
        typer.echo(f"refused {path}: {why}")
    say(
        f"{len(outcome.written)} MSEB file(s) written ({outcome.lines} line(s)), "
        f"{len(outcome.unchanged)} unchanged, {len(outcome.refused)} refused, "
        f"{len(outcome.problems)} problem(s)"
    )
    if not outcome.ok or not (outcome.written or outcome.unchanged):
        raise typer.Exit(1)


@leaderboard_app.command("build")
def build(
    results: Annotated[
        Path, typer.Option("--results", help="Folder of result files (searched recursively).")
    ] = Path("leaderboard/results"),
    output: Annotated[
        Path, typer.Option("--output", help="Folder to write the leaderboard to.")
    ] = (Path("leaderboard/site")),
    strict: Annotated[bool, typer.Option(help="Exit 1 if any result file was rejected.")] = False,
    allow_unpinned: Annotated[
        bool,
        typer.Option(help="A private board: also take results on local or unpinned data."),
    ] = False,
    reported: Annotated[
        list[Path] | None,
        typer.Option(
            "--reported",
            help="A folder of reported results (from `results import-mteb` or `import-mseb`) to "
            "rank beside yours, marked as reported; repeatable.",
        ),
    ] = None,
    origin: Annotated[
        str,
        typer.Option(
            help="Which results the board takes: 'all', 'computed' (only runs computed with "
            "audiobench: a board of your own runs) or 'reported' (only imported ones)."
        ),
    ] = "all",
) -> None:
    """Collate every valid result into HTML, Markdown, CSV and plots; list rejected files.

    Results computed with audiobench and reported ones (imported with `results import-mteb`)
    are ranked together and marked apart: a REPORTED marker and a filter on the page, an
    Origin column in the Markdown and an origin column in results.csv.
    """
    from audiobench.errors import UserError
    from audiobench.leaderboard.build import ORIGINS, build_leaderboard

    if origin not in ORIGINS:
        say(f"error: --origin must be one of {', '.join(ORIGINS)}, not {origin!r}")
        raise typer.Exit(2)
    try:
        made = build_leaderboard(
            results,
            output,
            allow_unpinned=allow_unpinned,
            reported=reported or [],
            origin=origin,  # type: ignore[arg-type]  # checked against ORIGINS above
        )
    except UserError as exc:  # a refused folder; any other error is a bug, shown as one
        say(f"error: {exc}")
        raise typer.Exit(2) from None
    board = made.board
    say(
        f"accepted {board.n_results} result file(s): {len(board.models)} model(s), "
        f"{len(board.tables)} table(s)"
    )
    if board.rejected:
        say(f"rejected ({len(board.rejected)} problem(s)):")
        for line in board.rejected:
            say(f"  {line}")
    else:
        say("rejected: none")
    for path in made.files:
        say(f"wrote {path}")
    if strict and board.rejected:
        raise typer.Exit(1)
