"""``audiobench.evaluate``: run tasks with a model and write one result file per task."""

from __future__ import annotations

import inspect
import os
import statistics
import time
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from rich.console import Console

from audiobench import registry
from audiobench.cache import EmbeddingCache
from audiobench.efficiency import compression_ratio, count_flops_per_second, peak_memory_mb
from audiobench.encoder import Encoder
from audiobench.progress import RichProgress
from audiobench.results import (
    CacheStats,
    Efficiency,
    Environment,
    ModelInfo,
    TaskInfo,
    TaskResult,
    Timings,
    load_result,
    result_path,
    utc_now,
)
from audiobench.runner import CachedEmbedder, OnError, RunStats
from audiobench.task import Task
from audiobench.version import __version__

__all__ = ["evaluate"]


def _make_task(
    spec: str | Task,
    dataset: str | os.PathLike[str] | None,
    dataset_revision: str | None,
    subsets: Sequence[str] | None,
    task_options: dict[str, Any],
) -> Task:
    if isinstance(spec, Task):
        return spec
    if ":" not in spec or spec in registry.tasks.names():
        accepted = task_option_names(registry.tasks.get(spec))
        unused = sorted(k for k in task_options if k not in accepted)
        task_options = {k: v for k, v in task_options.items() if k in accepted}
    else:  # dynamic names (folder:PATH) build zero-shot similarity tasks: all options apply
        unused = []
    kwargs: dict[str, Any] = dict(task_options)
    if dataset is not None:
        kwargs["dataset_path"] = dataset
    if dataset_revision is not None:
        kwargs["revision"] = dataset_revision
    if subsets:
        kwargs["subsets"] = subsets
    task = registry.tasks.create(spec, **kwargs)
    task.unused_options = unused
    return task


def task_option_names(cls: type[Task]) -> set[str]:
    """Keyword options some ``__init__`` along the task class's MRO declares.

    A multi-task run hands every task the same options (``--permutations``
    only means something to zero-shot similarity); each task gets those it
    declares, and the others are recorded in its result as unused.
    """
    names: set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        for param in inspect.signature(init).parameters.values():
            if param.kind in (param.KEYWORD_ONLY, param.POSITIONAL_OR_KEYWORD):
                names.add(param.name)
    names.discard("self")
    return names


def _make_encoder(spec: str | Encoder, model_options: dict[str, Any]) -> Encoder:
    if isinstance(spec, Encoder):
        return spec
    return registry.models.create(spec, **model_options)


class _FlopsOnce:
    """FLOPs per second of audio, counted at most once per evaluate() call."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.done = False
        self.value: float | None = None

    def __call__(self, encoder: Encoder, console: Console) -> float | None:
        if self.enabled and not self.done:
            self.done = True
            try:
                self.value = count_flops_per_second(encoder)
            except Exception as exc:  # a figure, never worth losing a finished run over
                console.print(f"  [yellow]FLOP count failed[/] ({type(exc).__name__}: {exc})")
        return self.value


def _efficiency(
    stats: RunStats,
    encoder: Encoder,
    n_parameters: int | None,
    canonical_rate: int,
    flops: float | None,
    device: str,
    batch_size: int,
) -> Efficiency:
    per_s = stats.embedding_bytes / stats.embedded_seconds if stats.embedded_seconds > 0 else None
    return Efficiency(
        n_parameters=n_parameters,
        embedding_size=int(statistics.median(stats.embedding_sizes))
        if stats.embedding_sizes
        else None,
        bytes_per_second=per_s,
        compression_ratio=compression_ratio(per_s, canonical_rate) if per_s else None,
        flops_per_second=flops,
        clips_per_s=(stats.n_encoded / stats.encode_s) if stats.encode_s > 0 else None,
        audio_seconds_per_s=(stats.audio_seconds / stats.encode_s) if stats.encode_s > 0 else None,
        audio_seconds=stats.audio_seconds,
        batch_size=batch_size,
        dtype=encoder.dtype,
        **peak_memory_mb(device),
    )


def evaluate(
    tasks: str | Task | Sequence[str | Task],
    model: str | Encoder,
    *,
    output_dir: str | os.PathLike[str] = "results",
    batch_size: int = 16,
    device: str = "cpu",
    dtype: str | None = None,
    pooling: str | None = None,
    revision: str | None = None,
    overwrite: bool = False,
    on_error: OnError = "raise",
    cache_dir: str | os.PathLike[str] | None = None,
    use_cache: bool = True,
    dataset: str | os.PathLike[str] | None = None,
    dataset_revision: str | None = None,
    subsets: Sequence[str] | None = None,
    task_options: dict[str, Any] | None = None,
    model_options: dict[str, Any] | None = None,
    progress: bool = True,
    count_flops: bool = True,
    console: Console | None = None,
) -> list[TaskResult]:
    """Evaluate ``model`` on each of ``tasks``; write and return one result per task.

    Tasks and models are registry names (``audiobench list tasks``), dynamic
    names such as ``folder:PATH``, or instances. An existing result file is
    reused unless ``overwrite``; embeddings come from the cache whenever the
    same encoder has seen the same waveform before.
    """
    console = console or Console(stderr=True)
    task_specs = [tasks] if isinstance(tasks, str | Task) else list(tasks)
    if not task_specs:
        raise ValueError("no task given")
    if dataset is not None and len(task_specs) > 1:
        raise ValueError("a local dataset path applies to one task; run tasks separately")
    if isinstance(model, Encoder) and pooling is not None:
        raise ValueError("pass pooling to the encoder's constructor when giving an instance")
    encoder = _make_encoder(
        model,
        {
            "device": device,
            "dtype": dtype,
            "pooling": pooling,
            "revision": revision,
            **(model_options or {}),
        },
    )
    cache = EmbeddingCache(cache_dir) if use_cache else None
    flops = _FlopsOnce(count_flops)
    results = []
    try:
        for spec in task_specs:
            task = _make_task(spec, dataset, dataset_revision, subsets, task_options or {})
            results.append(
                _run_one(
                    task,
                    encoder,
                    cache,
                    output_dir=Path(output_dir),
                    batch_size=batch_size,
                    on_error=on_error,
                    overwrite=overwrite,
                    device=device,
                    progress=progress,
                    console=console,
                    flops=flops,
                )
            )
    finally:
        if cache is not None:
            cache.close()
    return results


def _run_one(
    task: Task,
    encoder: Encoder,
    cache: EmbeddingCache | None,
    *,
    output_dir: Path,
    batch_size: int,
    on_error: OnError,
    overwrite: bool,
    device: str,
    progress: bool,
    console: Console,
    flops: _FlopsOnce,
) -> TaskResult:
    path = result_path(output_dir, encoder.meta.name, encoder.revision, task.name)
    if path.exists() and not overwrite:
        try:
            existing = load_result(path)
        except ValueError as exc:
            raise ValueError(
                f"{exc}\nan unreadable result is in the way; move it aside or pass --overwrite"
            ) from exc
        console.print(f"[yellow]reusing[/] existing result {path} (pass --overwrite to recompute)")
        return existing
    task.check_encoder(encoder)
    console.print(f"[bold]{task.name}[/] with [bold]{encoder.meta.name}[/]")
    t_start = time.perf_counter()
    clips = task.load_data(progress=lambda msg: console.print(f"  {msg}"))
    if not clips:
        raise ValueError(f"task {task.name}: the dataset holds no clips for the selected subsets")
    t_loaded = time.perf_counter()
    hook = RichProgress(console) if progress else None
    embedder = CachedEmbedder(
        encoder,
        cache,
        canonical_rate=task.metadata.sample_rate,
        batch_size=batch_size,
        on_error=on_error,
        progress=hook,
    )
    with hook if hook is not None else nullcontext():
        scores = task.evaluate(embedder, clips)
    t_done = time.perf_counter()
    stats = embedder.stats
    embed_wall = stats.wall_s
    notes = [*stats.events, *encoder.pop_notes()]
    for note in notes:
        console.print(f"  [yellow]warning:[/] {encoder.meta.name}: {note}")
    details = {**scores.details, **({"run_notes": notes} if notes else {})}
    flops_per_second = flops(encoder, console)  # loads the model if the cache served every clip
    n_parameters = encoder.parameter_count()
    if task.unused_options:
        details["unused_options"] = task.unused_options
        console.print(
            f"  options not used by {task.name} ({task.metadata.family}): "
            + ", ".join(task.unused_options)
        )
    result = TaskResult(
        task=TaskInfo(
            name=task.name,
            family=str(task.metadata.family),
            revision=task.dataset_revision,
            dataset=str(task.dataset_path) if task.dataset_path else task.metadata.dataset.path,
            subsets=sorted({c.subset for c in clips if c.subset}),
        ),
        model=ModelInfo(
            name=encoder.meta.name,
            revision=encoder.revision,
            source=encoder.source,
            params=encoder.params,
            pooling=encoder.pooling.name,
            fingerprint=encoder.fingerprint(),
            n_parameters=n_parameters,
            embedding_dim=encoder.meta.embedding_dim,
            sample_rate=encoder.meta.sample_rate,
        ),
        audiobench_version=__version__,
        main_score=scores.main_score,
        main_score_name=task.metadata.main_score,
        scores=scores.scores,
        aggregates=scores.aggregates,
        details=details,
        skipped=stats.skipped,
        cache=CacheStats(n_clips=stats.n_clips, n_cached=stats.n_cached, n_encoded=stats.n_encoded),
        efficiency=_efficiency(
            stats,
            encoder,
            n_parameters,
            task.metadata.sample_rate,
            flops_per_second,
            device,
            embedder.batch_size,
        ),
        timings=Timings(
            load_data_s=t_loaded - t_start,
            encode_s=embed_wall,
            evaluate_s=max(0.0, (t_done - t_loaded) - embed_wall),
            total_s=t_done - t_start,
        ),
        environment=Environment.capture(device),
        date=utc_now(),
    )
    written = result.save(output_dir)
    console.print(
        f"  encoded {stats.n_encoded} clip(s), {stats.n_cached} served from cache"
        + (f" ({stats.n_unpooled} of them frame-level)" if stats.n_unpooled else "")
        + (f", {len(stats.skipped)} skipped" if stats.skipped else "")
    )
    main = "undefined" if result.main_score is None else f"{result.main_score:.4f}"
    console.print(f"  {task.metadata.main_score} = [bold]{main}[/]  ->  {written}")
    return result
