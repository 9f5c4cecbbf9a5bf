"""``audiobench results import-mteb`` and ``audiobench results compare``.

Lines that quote files are printed as plain text (no Rich markup), as the other results
commands print them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from audiobench.leaderboard.cli import say

if TYPE_CHECKING:
    from audiobench.reported.compare import Comparison, KeyDifference
    from audiobench.reported.mteb_import import ImportSummary

__all__ = ["compare_command", "import_mseb_command", "import_mteb_command"]


def import_mteb_command(
    directory: Annotated[
        Path,
        typer.Argument(
            help="A clone of MTEB's results repository, or any folder in its layout "
            "(<org>__<model>/<revision>/<Task>.json beside model_meta.json).",
            show_default=False,
        ),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Folder to write the audiobench results to.")
    ] = Path("results/reported"),
    allow_revision_mismatch: Annotated[
        bool,
        typer.Option(
            help="Also import scores run on another dataset revision than the task's pinned "
            "one (recorded as not matching; only private tables, --allow-unpinned, take them)."
        ),
    ] = False,
    repository: Annotated[
        str | None,
        typer.Option(
            help="Name of the source recorded in each result's provenance "
            "(default: DIRECTORY as given), e.g. embeddings-benchmark/results."
        ),
    ] = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose", "-v", help="Also list each file of a task audiobench does not declare."
        ),
    ] = False,
) -> None:
    """Convert MTEB's published result files into audiobench results marked reported.

    Every file of a task that audiobench declares and scores as MTEB scores it
    (protocol=mteb) becomes a result file with the same typed reports and main score a local
    protocol=mteb run writes, checked by `results validate`, with its provenance: source
    repository and file, MTEB version, model and dataset revisions, and whether the dataset
    revision is the task's pinned one. Model size, embedding size, release date, licence and
    modalities come from model_meta.json. A file that does not convert is refused with its
    reason (unknown task, missing split or subset, another dataset revision, ...), and the
    others go on. Exit 1 if no file converted.
    """
    from audiobench.reported.mteb_import import import_mteb

    if not directory.is_dir():
        say(f"error: {directory}: not a directory (a clone of MTEB's results repository)")
        raise typer.Exit(2)
    summary = import_mteb(
        directory,
        output,
        allow_revision_mismatch=allow_revision_mismatch,
        repository=repository,
    )
    _print_refusals(summary, verbose)
    say(summary.line())
    if summary.written:
        say(f"wrote {len(summary.written)} result file(s) under {output}")
    if not summary.written:
        raise typer.Exit(1)


def import_mseb_command(
    directory: Annotated[
        Path,
        typer.Argument(
            help="MSEB's results folder (mseb/results: <encoder>/<Task>.jsonl, one line per "
            "sub-task), or any folder in its layout.",
            show_default=False,
        ),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Folder to write the audiobench results to.")
    ] = Path("results/reported"),
    allow_revision_mismatch: Annotated[
        bool,
        typer.Option(
            help="Also import scores of a task audiobench pins to a hub commit when MSEB ran "
            "it on another revision (MSEB's own datasets carry version labels only)."
        ),
    ] = False,
    repository: Annotated[
        str | None,
        typer.Option(
            help="Name of the source recorded in each result's provenance "
            "(default: DIRECTORY as given), e.g. google-research/mseb."
        ),
    ] = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose", "-v", help="Also list each file of a task audiobench does not declare."
        ),
    ] = False,
) -> None:
    """Convert MSEB's published result lines into audiobench results marked reported.

    Every file of a task that audiobench declares and scores as MSEB scores it
    (protocol=mseb), found by MSEB's task name, becomes a result file with the typed report a
    local run writes: the task's own sub-task, its noise slices as environments, checked by
    `results validate` (MSEB's datasets are versioned by label, so the results are unpinned:
    private tables, --allow-unpinned). Its provenance names the source file, MSEB's dataset
    version and the audiobench model computing the same embeddings. A file that does not
    convert is refused with its reason (unknown task, missing metric, malformed line naming
    its number, ...), and the others go on. Exit 1 if no file converted.
    """
    from audiobench.reported.mseb_import import import_mseb

    if not directory.is_dir():
        say(f"error: {directory}: not a directory (MSEB's results folder)")
        raise typer.Exit(2)
    summary = import_mseb(
        directory, output, allow_revision_mismatch=allow_revision_mismatch, repository=repository
    )
    _print_refusals(summary, verbose)
    say(summary.line())
    if summary.written:
        say(f"wrote {len(summary.written)} result file(s) under {output}")
    if not summary.written:
        raise typer.Exit(1)


def _print_refusals(summary: ImportSummary, verbose: bool) -> None:
    """Each refusal, those of undeclared tasks summed up unless ``verbose``."""
    unknown = [r for r in summary.refused if r.reason == "unknown task"]
    for refusal in summary.refused:
        if refusal.reason != "unknown task" or verbose:
            typer.echo(refusal.line(summary.root))
    if unknown and not verbose:
        names = sorted({r.file.stem for r in unknown})
        shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
        typer.echo(
            f"{len(unknown)} file(s) of {len(names)} task(s) audiobench does not declare "
            f"({shown}); --verbose lists them"
        )


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.6f}"


def _difference(key: KeyDifference) -> str:
    difference = key.difference
    return "—" if difference is None else f"{difference:+.2e}"


def _print(comparison: Comparison, show_all: bool) -> None:
    for pair in comparison.pairs:
        mine, theirs = pair.mine, pair.reported
        typer.echo(
            f"{pair.task} · {mine.model.name} ({mine.model.revision}) vs reported "
            f"{theirs.model.name} ({theirs.model.revision}): {pair.verdict.upper()} "
            f"(tolerance {pair.tolerance.absolute:g}, {pair.family})"
        )
        for reason in pair.not_comparable:
            typer.echo(f"    not comparable: {reason}")
        for key in pair.keys:
            if not show_all and key.within and key is not pair.main:
                continue
            where = f"[{key.subset}] " if key.subset else ""
            mark = "ok" if key.within else "DIFFERS"
            typer.echo(
                f"    {where}{key.key}: mine {_number(key.mine)}  reported "
                f"{_number(key.reported)}  diff {_difference(key)}  {mark}"
            )
        hidden = sum(1 for k in pair.keys if k.within and k is not pair.main)
        if hidden and not show_all:
            typer.echo(f"    ... and {hidden} more shared key(s) within tolerance (--all)")


def _as_json(comparison: Comparison) -> dict[str, Any]:
    return {
        "pairs": [
            {
                "model": pair.model,
                "task": pair.task,
                "family": pair.family,
                "mine": {"name": pair.mine.model.name, "revision": pair.mine.model.revision},
                "reported": {
                    "name": pair.reported.model.name,
                    "revision": pair.reported.model.revision,
                },
                "verdict": pair.verdict,
                "tolerance": pair.tolerance.absolute,
                "tolerance_why": pair.tolerance.why,
                "not_comparable": pair.not_comparable,
                "keys": [
                    {
                        "key": k.key,
                        "subset": k.subset,
                        "mine": k.mine,
                        "reported": k.reported,
                        "difference": k.difference,
                        "within": k.within,
                    }
                    for k in pair.keys
                ],
            }
            for pair in comparison.pairs
        ],
        "only_mine": [list(k) for k in comparison.only_mine],
        "only_reported": [list(k) for k in comparison.only_reported],
    }


def compare_command(
    mine: Annotated[
        Path, typer.Argument(help="Your result files, or a folder of them.", show_default=False)
    ],
    reported: Annotated[
        Path,
        typer.Argument(
            help="The results to reproduce (e.g. imported by `results import-mteb`), or a "
            "folder of them.",
            show_default=False,
        ),
    ],
    tolerance: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            help="One absolute tolerance for every family instead of each family's own "
            "(docs/RESULTS.md says why each is what it is); 5e-7 is exact at MTEB's "
            "published precision.",
        ),
    ] = None,
    show_all: Annotated[
        bool, typer.Option("--all", help="List every shared key, not only those that differ.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the comparison as JSON on stdout.")
    ] = False,
) -> None:
    """Check your results against reported ones: does your run reproduce the published number?

    Results pair by (model, task); a model's audiobench name and its hub id meet
    (whisper-large-v3 = hf:openai/whisper-large-v3 = openai/whisper-large-v3; see
    docs/RESULTS.md). For each pair: the main score and every shared key side by side, the
    difference and a verdict within the family's tolerance; a pair scored another way
    (protocol, dataset revision) is 'not comparable'. Exit 1 if any pair disagrees, 2 if no
    pair was found or a file is invalid.
    """
    from audiobench.reported.compare import compare_results, load_for_comparison

    ours, our_problems = load_for_comparison([mine])
    theirs, their_problems = load_for_comparison([reported])
    for line in [*our_problems, *their_problems]:
        say(f"invalid: {line}")
    comparison = compare_results(ours, theirs, tolerance=tolerance)
    if as_json:
        typer.echo(json.dumps(_as_json(comparison), indent=1))
    else:
        _print(comparison, show_all)
    say(
        f"{len(comparison.pairs)} pair(s): {comparison.count('agree')} agree, "
        f"{comparison.count('disagree')} disagree, {comparison.count('not comparable')} not "
        f"comparable; {len(comparison.only_mine)} of yours and "
        f"{len(comparison.only_reported)} reported without a counterpart"
    )
    if not comparison.ok:
        raise typer.Exit(1)
    if not comparison.pairs or our_problems or their_problems:
        raise typer.Exit(2)
