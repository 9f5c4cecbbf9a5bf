"""The ``audiobench`` command line."""

from __future__ import annotations

import json
import os
import sys
import warnings
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python
from rich.table import Table
from rich.text import Text

from audiobench import registry
from audiobench.audio import MAX_CLIP_SECONDS
from audiobench.errors import OptionError, UserError
from audiobench.leaderboard.cli import leaderboard_app, results_app
from audiobench.reported.cli import compare_command, import_mseb_command, import_mteb_command
from audiobench.terminal import SafeConsole, printable, stdout_console
from audiobench.version import __version__

if TYPE_CHECKING:
    from audiobench.grid import RunFailure


class _Group(typer.core.TyperGroup):
    """The top command; lets ``evaluate --ray`` stand without an address."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, _bare_ray(args))


def _bare_ray(args: list[str]) -> list[str]:
    """``--ray`` followed by nothing or another option means ``--ray=default``."""
    if "evaluate" not in args:
        return args
    return [
        "--ray=default" if a == "--ray" and (i + 1 == len(args) or args[i + 1][:1] == "-") else a
        for i, a in enumerate(args)
    ]


app = typer.Typer(
    help="Benchmark audio embeddings: VocSim zero-shot similarity and more.",
    cls=_Group,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
cache_app = typer.Typer(help="Inspect or clear the embedding cache.", no_args_is_help=True)
app.add_typer(cache_app, name="cache")
results_app.command("import-mteb")(import_mteb_command)
results_app.command("import-mseb")(import_mseb_command)
results_app.command("compare")(compare_command)
app.add_typer(results_app, name="results")
app.add_typer(leaderboard_app, name="leaderboard")

# Every message goes through SafeConsole: names from data are shown, never obeyed.
err = SafeConsole(stderr=True, soft_wrap=True)  # messages hold paths: never wrap them
out = stdout_console()


#: Errors that are the user's to fix, printed as one line: audiobench's own user errors
#: (a name, an option, a file, a clip, the cache), the operating system's (a path, a
#: permission) and a missing extra or capability. Anything else is a bug, reported as one
#: (``_internal``), never passed off as the user's mistake.
USER_ERRORS = (UserError, OSError, ImportError, NotImplementedError)


class OnErrorChoice(StrEnum):
    raise_ = "raise"
    skip = "skip"


class RayAudio(StrEnum):
    bytes = "bytes"
    paths = "paths"


class ListWhat(StrEnum):
    tasks = "tasks"
    models = "models"
    benchmarks = "benchmarks"


#: Set by ``--debug`` (or ``AUDIOBENCH_DEBUG=1``): show tracebacks instead of one-line errors.
_debug = {"on": bool(os.environ.get("AUDIOBENCH_DEBUG"))}


def _fail(message: str, code: int = 1) -> typer.Exit:
    # Messages quote paths and labels: print them literally, never as Rich markup, on one line.
    err.print(Text.assemble(("error: ", "bold red"), printable(message)), highlight=False)
    if _debug["on"] and sys.exc_info()[1] is not None:
        err.print_exception()
    return typer.Exit(code)


def _version(value: bool) -> None:
    if value:
        out.print(f"audiobench {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
    debug: Annotated[
        bool,
        typer.Option(
            "--debug", help="Show the full traceback of an error (default: one line naming it)."
        ),
    ] = False,
) -> None:
    """Benchmark audio embeddings: VocSim zero-shot similarity and more."""
    if debug:
        _debug["on"] = True


@app.command()
def evaluate(
    model: Annotated[
        list[str],
        typer.Option(
            "--model",
            "-m",
            help="Model name (see `audiobench list models`). Repeat for several models: every "
            "(task, model) pair runs, and a failed pair does not stop the others.",
        ),
    ],
    task: Annotated[
        list[str] | None,
        typer.Option(
            "--task",
            "-t",
            help="Task name (see `audiobench list tasks`), or a task over your own clips: "
            "folder:PATH (zero-shot similarity) or folder-<family>:PATH with family "
            "classification, multilabel, clustering, retrieval, pair-classification or "
            "similarity (docs/OWN-DATA.md). Repeat for several tasks.",
        ),
    ] = None,
    benchmark: Annotated[
        str | None,
        typer.Option(
            help="Run every task of a benchmark (see `audiobench list benchmarks`) and print "
            "its table."
        ),
    ] = None,
    batch_size: Annotated[
        int, typer.Option(min=1, help="Clips per encoder batch (batches group similar lengths).")
    ] = 16,
    threads: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Torch threads while encoding (default: the usable cores the decoding "
            "threads leave, at least 1). Recorded in the result's environment.",
        ),
    ] = None,
    device: Annotated[
        str, typer.Option(help="Torch device for the encoder: cpu, cuda, cuda:1.")
    ] = ("cpu"),
    dtype: Annotated[
        str | None,
        typer.Option(
            help="Encoder precision: float32 (fp32), float16 (fp16), bfloat16 (bf16). "
            "Default: float16 on CUDA, float32 on CPU."
        ),
    ] = None,
    pooling: Annotated[
        str | None,
        typer.Option(
            help="Pooling of sequence outputs, overriding the model's default: mean_time, "
            "mean_feat, first_time, first_feat, max_time, mean_time_feat, first_time_feat, "
            "flatten, joined with '+'; prefix 'masked:' to ignore padding frames."
        ),
    ] = None,
    revision: Annotated[
        str | None, typer.Option(help="Model revision (hub commit or tag) to load.")
    ] = None,
    weights: Annotated[
        str | None,
        typer.Option(
            help="Load a registered model's weights from this local directory (or another "
            "hub id of the same architecture) instead of its hub id."
        ),
    ] = None,
    model_option: Annotated[
        list[str] | None,
        typer.Option(
            "--model-option",
            "-o",
            help="Model option KEY=VALUE, repeatable: layer=8 (hidden state), "
            "long_clips=chunk (Whisper), crop=seeded (CLAP), output=codes and bandwidth=6 "
            "(EnCodec), mode=timestamp (hear:). Values are parsed as JSON when they can be.",
        ),
    ] = None,
    trust_remote_code: Annotated[
        bool,
        typer.Option(
            help="Allow models whose hub repository ships its own Python code (runs that code)."
        ),
    ] = False,
    flops: Annotated[
        bool,
        typer.Option(help="Count the model's FLOPs per second of audio (one extra 10 s pass)."),
    ] = True,
    dataset: Annotated[
        Path | None,
        typer.Option(
            help="Local copy of the task's data: a dataset folder laid out like the hub "
            "one (parquet/arrow), a saved dataset, or a folder of audio with labels.csv."
        ),
    ] = None,
    dataset_revision: Annotated[
        str | None, typer.Option(help="Dataset revision overriding the task's pinned one.")
    ] = None,
    allow_outside_paths: Annotated[
        bool,
        typer.Option(
            "--allow-outside-paths",
            help="Read labels.csv entries that resolve outside the dataset folder (.., absolute "
            "paths, symlinks leaving it); refused by default.",
        ),
    ] = False,
    subset: Annotated[
        list[str] | None, typer.Option("--subset", help="Evaluate only these subsets.")
    ] = None,
    output_dir: Annotated[
        Path, typer.Option(help="Where result files go: DIR/<model>/<revision>/<Task>.json.")
    ] = Path("results"),
    overwrite: Annotated[
        bool, typer.Option(help="Recompute even if a result file exists (embeddings stay cached).")
    ] = False,
    on_error: Annotated[
        OnErrorChoice,
        typer.Option(
            help="What to do with a clip that cannot be decoded or embedded: raise (stop, "
            "naming the clip and file) or skip (leave it out and list it in the result)."
        ),
    ] = OnErrorChoice.raise_,
    max_clip_seconds: Annotated[
        float,
        typer.Option(
            help="Longest clip a run decodes, in seconds, checked from the file's header before "
            "decoding (a longer clip is an error, or skipped under --on-error skip); 0: no limit.",
        ),
    ] = MAX_CLIP_SECONDS,
    cache_dir: Annotated[
        Path | None,
        typer.Option(help="Embedding cache folder (default: $AUDIOBENCH_CACHE or the user cache)."),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Do not read or write the embedding cache.")
    ] = False,
    task_option: Annotated[
        list[str] | None,
        typer.Option(
            "--task-option",
            "-O",
            help="Task option KEY=VALUE, repeatable: n_permutations=100 (zero-shot "
            "similarity), probes=linear,knn (classification), seeds=0,1 (clustering). "
            "`audiobench list tasks --json` shows each task's options. Values are parsed as "
            "JSON when they can be; a list may be given comma-separated. A task that does "
            "not take an option records it as unused.",
        ),
    ] = None,
    permutations: Annotated[
        int | None,
        typer.Option(min=0, help="Alias of --task-option n_permutations=N (zero-shot similarity)."),
    ] = None,
    bootstrap: Annotated[
        int | None,
        typer.Option(min=0, help="Alias of --task-option n_bootstrap=N (zero-shot similarity)."),
    ] = None,
    paper_filters: Annotated[
        bool,
        typer.Option(
            help="Zero-shot similarity on your own data: apply the VocSim paper's filters per "
            "subset (drop clips above the 98th duration percentile, then classes with fewer "
            "than 6 clips). The published VocSim data is already filtered."
        ),
    ] = False,
    progress: Annotated[bool, typer.Option(help="Show progress bars.")] = True,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            help="Encode on a Ray cluster: `--ray ADDRESS` (ray://head:10001, head:6379), or "
            "`--ray` alone for $RAY_ADDRESS, else the cluster started on this machine, else a "
            "new local one. The cache and results stay on this machine. Needs "
            "pip install 'audiobench\\[ray]'.",  # escaped: Rich would read [ray] as markup
        ),
    ] = None,
    ray_actors: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Encoder actors on the cluster (default: one per GPU with --device cuda, "
            "else half the cluster's CPUs).",
        ),
    ] = None,
    ray_audio: Annotated[
        RayAudio,
        typer.Option(
            help="How audio reaches the Ray workers: bytes (this machine reads the files and "
            "ships them; no shared filesystem needed) or paths (the workers read the files, "
            "or hub datasets from their own hub cache).",
        ),
    ] = RayAudio.bytes,
) -> None:
    """Evaluate models on tasks and write a JSON result per (task, model) pair."""
    from audiobench.evaluation import RunConfig
    from audiobench.grid import evaluate_grid

    tasks = list(task or [])
    bench = None
    if benchmark is not None:
        from audiobench.benchmark import get_benchmark

        try:
            bench = get_benchmark(benchmark)
        except LookupError as exc:
            raise _fail(str(exc)) from None
        tasks += [t for t in bench.tasks if t not in tasks]
    if not tasks:
        raise _fail("give at least one --task (or a --benchmark)", code=2)
    try:
        model_options = parse_options(model_option or [], "--model-option")
        task_options = parse_options(task_option or [], "--task-option")
    except OptionError as exc:
        raise _fail(str(exc), code=2) from None
    if weights is not None:
        model_options["weights"] = weights
    if trust_remote_code:
        model_options["trust_remote_code"] = True
    if permutations is not None:
        task_options["n_permutations"] = permutations
    if bootstrap is not None:
        task_options["n_bootstrap"] = bootstrap
    if paper_filters:
        task_options.update(max_duration_percentile=98.0, min_clips_per_class=6)
    try:  # the one validation of the run's settings; a refusal names the flag
        config = RunConfig(
            output_dir=output_dir,
            batch_size=batch_size,
            threads=threads,
            device=device,
            dtype=dtype,
            pooling=pooling,
            revision=revision,
            overwrite=overwrite,
            on_error=on_error.value,
            max_clip_seconds=max_clip_seconds or None,  # 0: no limit
            cache_dir=cache_dir,
            use_cache=not no_cache,
            dataset=dataset,
            dataset_revision=dataset_revision,
            allow_outside_paths=allow_outside_paths,
            subsets=subset or None,
            task_options=task_options,
            model_options=model_options,
            progress=progress,
            count_flops=flops,
            ray=ray,
            ray_actors=ray_actors,
            ray_audio=ray_audio.value,
        )
    except ValidationError as exc:
        raise _fail(refused_flags(exc), code=2) from None
    try:
        outcome = evaluate_grid(
            tasks,
            model,
            config,
            console=err,
            on_failure=_report_failure if len(tasks) * len(model) > 1 else None,
        )
    except USER_ERRORS as exc:
        raise _fail(str(exc)) from None
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]: finished batches are cached; rerun to resume")
        raise typer.Exit(130) from None
    if bench is not None:
        out.print(_benchmark_table(bench, outcome.results))
    if outcome.failures:
        n_runs = len(tasks) * len(model)
        err.print(
            Text.assemble(
                ("error: ", "bold red"),
                f"{len(outcome.failures)} of {n_runs} runs failed (the others' results are "
                "written; a rerun does only what is missing)",
            ),
            highlight=False,
        )
        raise typer.Exit(1)


def _report_failure(failure: RunFailure) -> None:
    """One line per failed (task, model) pair of a grid; the grid goes on."""
    exc = failure.error
    detail = str(exc) if isinstance(exc, USER_ERRORS) else _internal(exc)
    where = f"{failure.task} with {failure.model}" if failure.task else f"model {failure.model}"
    err.print(
        Text.assemble(("error: ", "bold red"), printable(f"{where}: {detail}")), highlight=False
    )
    if _debug["on"]:
        err.print_exception()


#: The ``evaluate`` flag of each run setting whose flag is not its name in dashes.
_FLAG_OF_SETTING = {
    "subsets": "--subset",
    "use_cache": "--no-cache",
    "count_flops": "--flops",
    "task_options": "--task-option",
    "model_options": "--model-option",
}

#: What a flag takes where its values differ from the setting's (0 seconds: no limit).
_FLAG_TAKES = {"max_clip_seconds": "a number of seconds >= 0 (0: no limit)"}


def refused_flags(exc: ValidationError) -> str:
    """A run settings' :class:`~pydantic.ValidationError` as the ``evaluate`` flags refused:
    ``--max-clip-seconds must be a number of seconds >= 0 (0: no limit), got -1.0``."""
    problems = []
    for error in exc.errors(include_url=False):
        setting = str(error["loc"][0]) if error["loc"] else ""
        flag = _FLAG_OF_SETTING.get(setting, "--" + setting.replace("_", "-"))
        got, message = error.get("input"), str(error["msg"])
        if setting in _FLAG_TAKES:
            problems.append(f"{flag} must be {_FLAG_TAKES[setting]}, got {got}")
        elif message.startswith("Input should be "):
            problems.append(f"{flag} must be {message.removeprefix('Input should be ')}, got {got}")
        else:  # a validator's own message names what it takes
            problems.append(f"{flag}: {message.removeprefix('Value error, ')}")
    return "; ".join(problems)


def parse_options(items: list[str], flag: str) -> dict[str, Any]:
    """``["layer=8", "long_clips=chunk"]`` → ``{"layer": 8, "long_clips": "chunk"}``.

    Values are JSON where they parse as JSON, else text; the option's own model
    (a task's or a model's ``Options``) validates and converts them.
    """
    options: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise OptionError(f"{flag} expects KEY=VALUE, got {item!r}")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        options[key.strip()] = value
    return options


def _benchmark_table(bench: Any, results: list[Any]) -> Table:
    from audiobench.benchmark import MEAN

    table = Table(title=f"{bench.name} (ranked by {', then '.join(bench.rank_by)})")
    table.add_column("model")
    shown = [(c.name, c.higher_is_better, c.percent) for c in bench.columns]
    if bench.mean_of:
        percent = all(c.percent for c in bench.columns if c.name in bench.mean_of)
        shown.append((MEAN, bench.mean_higher_is_better, percent))
    for name, higher, _ in shown:
        table.add_column(f"{name} {'↑' if higher else '↓'}", justify="right")
    for row in bench.table(results):
        cells = []
        for name, _, percent in shown:
            value = row[name]
            cells.append("–" if value is None else f"{value * (100.0 if percent else 1.0):.2f}")
        table.add_row(row["model"], *cells)
    return table


def _task_rows(family: str | None) -> list[dict[str, Any]]:
    from audiobench.evaluators.evaluator import task_protocols

    rows = []
    for name, cls in registry.tasks.load_all().items():
        meta = cls.metadata
        if family and meta.family != family:
            continue
        rows.append(
            {
                "name": name,
                "family": str(meta.family),
                "description": meta.description,
                "offline": meta.offline,
                "dataset": meta.dataset.path,
                "revision": meta.dataset.revision,
                "subsets": list(meta.subsets),
                "main_score": meta.main_score,
                "domains": list(meta.domains),
                "options": cls.options.model_dump(mode="json"),
                "protocols": list(task_protocols(cls)),
            }
        )
    # Tasks of other benchmarks that audiobench does not score are listed too, with the reason.
    for name, entry in sorted(registry.unsupported_tasks().items()):
        if family and entry.family != family:
            continue
        rows.append(
            {
                "name": name,
                "family": entry.family,
                "description": f"{entry.source}: not supported ({entry.reason})",
                "offline": False,
                "dataset": entry.dataset,
                "revision": entry.revision,
                "subsets": [],
                "main_score": entry.main_score,
                "domains": [],
                "options": {},
                # The protocol of the benchmark it comes from; "unsupported" says it cannot run.
                "protocols": [entry.protocol],
                "source": entry.source,
                "unsupported": entry.reason,
            }
        )
    return rows


def _model_rows(kind: str | None) -> list[dict[str, Any]]:
    rows = []
    for name, cls in registry.models.load_all().items():
        meta = cls.meta
        if kind and meta.output_kind != kind:
            continue
        rows.append(
            {
                "name": name,
                **meta.model_dump(mode="json", exclude={"name"}),
                "outputs": sorted(str(o) for o in getattr(cls, "produces", ())),
                "options": _option_defaults(cls.Options),
            }
        )
    return rows


def _option_defaults(options: type[BaseModel]) -> dict[str, Any]:
    """Each option's default (JSON), ``None`` where a plugin's option has none (required)."""
    return {
        name: None if field.is_required() else to_jsonable_python(field.get_default())
        for name, field in options.model_fields.items()
    }


@app.command("list")
def list_(
    what: Annotated[ListWhat, typer.Argument(help="tasks, models or benchmarks")],
    type_: Annotated[
        str | None,
        typer.Option(
            "--type",
            help="Only this task family (e.g. zero_shot_similarity) or model output kind "
            "(vector, sequence, tokens).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List registered tasks, models or benchmarks (built-in and plugins)."""
    if what is ListWhat.benchmarks:
        from audiobench.benchmark import list_benchmarks

        benches = list_benchmarks()
        if as_json:
            out.print_json(json.dumps([b.model_dump(mode="json") for b in benches.values()]))
            return
        table = Table()
        for col in ("name", "tasks", "columns", "ranked by"):
            table.add_column(col, overflow="fold")
        for b in benches.values():
            table.add_row(
                b.name,
                ", ".join(b.tasks),
                ", ".join(c.name for c in b.columns),
                ", ".join(b.rank_by),
            )
        out.print(table)
        return
    reg = registry.tasks if what is ListWhat.tasks else registry.models
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", registry.PluginWarning)
        rows = _task_rows(type_) if what is ListWhat.tasks else _model_rows(type_)
    for w in caught:
        err.print(Text.assemble(("warning: ", "yellow"), str(w.message)), highlight=False)
    dupes = reg.duplicates()
    if as_json:
        out.print_json(json.dumps(rows))
    else:
        table = Table(show_lines=False)
        if what is ListWhat.tasks:
            for col in ("name", "family", "offline", "main score", "description"):
                table.add_column(col, overflow="fold")
            for r in rows:
                if "unsupported" in r:
                    table.add_row(r["name"], r["family"] or "-", "-", "-", r["description"])
                    continue
                offline = "yes" if r["offline"] else "no"
                table.add_row(r["name"], r["family"], offline, r["main_score"], r["description"])
        else:
            table.add_column("name", no_wrap=True)
            for col in ("output", "rate", "dim", "params", "pooling", "source"):
                table.add_column(col, overflow="fold")
            for r in rows:
                n_params = r["n_parameters"]
                table.add_row(
                    r["name"],
                    r["output_kind"],
                    str(r["sample_rate"]),
                    str(r["embedding_dim"] or "-"),
                    "-" if n_params is None else f"{n_params / 1e6:.1f}M" if n_params else "0",
                    r["default_pooling"],
                    r["source"] or "-",
                )
        out.print(table)
    for name, dists in dupes.items():
        err.print(
            f"[bold red]error:[/] {what.value[:-1]} name {name!r} is registered by more than "
            f"one distribution: {' and '.join(dists)}",
            highlight=False,
        )
    if dupes:
        raise typer.Exit(1)


@cache_app.command("info")
def cache_info(
    cache_dir: Annotated[Path | None, typer.Option(help="Cache folder.")] = None,
) -> None:
    """Show where the cache is and what it holds, per encoder."""
    from audiobench.cache import EmbeddingCache

    try:
        _cache_info(EmbeddingCache, cache_dir)
    except USER_ERRORS as exc:
        raise _fail(str(exc)) from None


def _cache_info(cache_type: Any, cache_dir: Path | None) -> None:
    with cache_type(cache_dir) as cache:
        rows = cache.summary()
        table = Table(title=str(cache.path))
        for col in ("model", "revision", "pooling", "params", "entries", "size", "fingerprint"):
            table.add_column(col, overflow="fold")
        total = 0
        for r in rows:
            total += r.n_bytes
            table.add_row(
                r.name,
                str(r.description.get("revision")),
                str(r.description.get("pooling")),
                json.dumps(r.description.get("params", {})),
                str(r.n_entries),
                _human(r.n_bytes),
                r.fingerprint[:12],
            )
        out.print(table)
        size = cache.path.stat().st_size if cache.path.exists() else 0
        out.print(
            f"{sum(r.n_entries for r in rows)} embeddings, {_human(total)} of data, "
            f"database file {_human(size)}"
        )


@cache_app.command("clear")
def cache_clear(
    model: Annotated[
        str | None, typer.Option(help="Only clear embeddings of this model (all revisions).")
    ] = None,
    cache_dir: Annotated[Path | None, typer.Option(help="Cache folder.")] = None,
    yes: Annotated[
        bool,
        typer.Option(
            "--yes", "-y", help="Confirm without being asked (needed without a terminal)."
        ),
    ] = False,
) -> None:
    """Delete cached embeddings (all, or one model's); asks first unless -y confirms."""
    from audiobench.cache import EmbeddingCache

    if not yes and not sys.stdin.isatty():
        raise _fail(
            "cache clear asks for confirmation, and there is no terminal to ask on; "
            "pass -y (--yes) to confirm"
        )
    try:
        # A damaged database is what this command is advised for: opening repairs it
        # (deletes it and starts an empty one), as does a damage found while clearing.
        with EmbeddingCache(cache_dir, repair=True) as cache:
            if not cache.repaired:
                what = f"cached embeddings of {model!r}" if model else "all cached embeddings"
                if not yes and not typer.confirm(f"Delete {what} in {cache.path}?"):
                    raise typer.Exit(1)
                n = cache.clear(model)
    except USER_ERRORS as exc:
        raise _fail(str(exc)) from None
    if cache.repaired:
        out.print(
            f"{cache.path} was damaged: deleted it and started an empty cache", soft_wrap=True
        )
    else:
        out.print(f"deleted {n} embedding(s)")


def _human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


#: Width of help printed to a pipe or file (Rich assumes 80 columns there, which squeezes the
#: option tables into a column of 15 characters); TERMINAL_WIDTH or COLUMNS override it.
PIPED_HELP_WIDTH = 120


def _piped_help_width() -> None:
    if sys.stdout.isatty() or os.environ.get("TERMINAL_WIDTH") or os.environ.get("COLUMNS"):
        return
    import typer.rich_utils

    typer.rich_utils.MAX_WIDTH = PIPED_HELP_WIDTH


def main() -> None:
    _piped_help_width()
    try:
        app()
    except BrokenPipeError:  # e.g. `audiobench list tasks --json | head`
        sys.exit(0)
    except Exception as exc:  # anything a command did not turn into a message itself
        if _debug["on"]:
            raise
        err.print(
            Text.assemble(("error: ", "bold red"), printable(_internal(exc))), highlight=False
        )
        sys.exit(1)


def _internal(exc: BaseException) -> str:
    """An error that is not the user's: named as a bug, with the way to its traceback."""
    return (
        f"internal error (a bug in audiobench or a plugin; rerun with --debug and report the "
        f"traceback): {type(exc).__name__}: {exc}"
    )


if __name__ == "__main__":
    main()
