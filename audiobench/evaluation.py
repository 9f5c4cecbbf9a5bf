"""``audiobench.evaluate``: run tasks with a model and write one result file per task."""

from __future__ import annotations

import os
import resource
import sys
import time
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from rich.console import Console

from audiobench import registry
from audiobench.cache import EmbeddingCache
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
from audiobench.runner import CachedEmbedder, OnError
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
    kwargs: dict[str, Any] = dict(task_options)
    if dataset is not None:
        kwargs["dataset_path"] = dataset
    if dataset_revision is not None:
        kwargs["revision"] = dataset_revision
    if subsets:
        kwargs["subsets"] = subsets
    return registry.tasks.create(spec, **kwargs)


def _make_encoder(spec: str | Encoder, model_options: dict[str, Any]) -> Encoder:
    if isinstance(spec, Encoder):
        return spec
    return registry.models.create(spec, **model_options)


def _peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports kilobytes, macOS bytes.
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


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
            source=encoder.meta.source,
            params=encoder.params,
            pooling=encoder.pooling.name,
            fingerprint=encoder.fingerprint(),
            n_parameters=encoder.meta.n_parameters,
            embedding_dim=encoder.meta.embedding_dim,
            sample_rate=encoder.meta.sample_rate,
        ),
        audiobench_version=__version__,
        main_score=scores.main_score,
        main_score_name=task.metadata.main_score,
        scores=scores.scores,
        aggregates=scores.aggregates,
        details=scores.details,
        skipped=stats.skipped,
        cache=CacheStats(n_clips=stats.n_clips, n_cached=stats.n_cached, n_encoded=stats.n_encoded),
        efficiency=Efficiency(
            clips_per_s=(stats.n_encoded / stats.encode_s) if stats.encode_s > 0 else None,
            audio_seconds=stats.audio_seconds,
            peak_memory_mb=_peak_rss_mb(),
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
        + (f", {len(stats.skipped)} skipped" if stats.skipped else "")
    )
    main = "undefined" if result.main_score is None else f"{result.main_score:.4f}"
    console.print(f"  {task.metadata.main_score} = [bold]{main}[/]  ->  {written}")
    return result
