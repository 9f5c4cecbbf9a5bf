"""``audiobench.evaluate``: run tasks with a model and write one result file per task."""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from rich.console import Console
from rich.markup import escape

from audiobench import distributed, registry
from audiobench.audio import MAX_CLIP_SECONDS, Clip, resampler_for
from audiobench.cache import EmbeddingCache
from audiobench.efficiency import (
    FLOPS_PROBE_SECONDS,
    count_flops,
    pcm_compression_ratio,
    peak_memory_mb,
)
from audiobench.encoder import Encoder, check_device
from audiobench.errors import DataError, OptionError, ResultFileError, UnsuitableModelError
from audiobench.leaderboard.context import main_score_line
from audiobench.options import option_problems
from audiobench.outputs import OutputType, require_output
from audiobench.pooling import Pooling
from audiobench.progress import RichProgress
from audiobench.results import (
    PINNED_REVISION,
    CacheStats,
    DatasetIdentity,
    Efficiency,
    Environment,
    ModelInfo,
    RunIdentity,
    TaskInfo,
    TaskResult,
    Timings,
    load_result,
    result_path,
    utc_now,
)
from audiobench.runner import CachedEmbedder, OnError, RunStats
from audiobench.task import Task
from audiobench.terminal import SafeConsole
from audiobench.version import __version__
from audiobench.vocsim import kernels

__all__ = ["RunConfig", "dataset_identity", "evaluate", "run_identity"]


class RunConfig(BaseModel):
    """Every setting of an ``evaluate`` run, typed; what a result records of its run.

    ``task_options`` go to the tasks that declare them (each family's
    ``Options``); a task that does not take one records it as unused.
    ``model_options`` go to the encoder (its own ``Options``).
    """

    model_config = ConfigDict(
        extra="forbid", frozen=True, arbitrary_types_allowed=True, allow_inf_nan=False
    )

    output_dir: Path = Field(Path("results"), description="DIR/<model>/<revision>/<Task>.json")
    batch_size: int = Field(16, ge=1, description="Clips per encoder batch.")
    device: str = Field("cpu", description="Torch device: cpu, cuda, cuda:1.")
    dtype: str | None = Field(None, description="float32, float16 or bfloat16.")
    pooling: str | None = Field(None, description="Pooling overriding the model's default.")
    revision: str | None = Field(None, description="Model revision.")
    overwrite: bool = Field(False, description="Recompute even an identical run's result.")
    on_error: OnError = "raise"
    allow_outside_paths: bool = Field(
        False, description="Read label-table entries outside the dataset folder."
    )
    max_clip_seconds: float | None = Field(
        MAX_CLIP_SECONDS, gt=0, description="Longest clip decoded (None: no limit)."
    )
    cache_dir: Path | None = None
    use_cache: bool = True
    dataset: Path | None = Field(None, description="Local copy of the task's data.")
    dataset_revision: str | None = None
    subsets: tuple[str, ...] | None = None
    task_options: dict[str, Any] = Field(default_factory=dict)
    model_options: dict[str, Any] = Field(default_factory=dict)
    progress: bool = True
    count_flops: bool = True
    threads: int | None = Field(
        None,
        ge=1,
        description="Torch threads while encoding (default: the usable cores the decoding "
        "threads leave, at least 1). Recorded in the result's environment.",
    )
    # Where the embeddings are computed: never part of the run identity.
    ray: str | None = Field(
        None,
        description="Encode on a Ray cluster: its address, or 'default' (RAY_ADDRESS, else "
        "the cluster started on this machine, else a new local instance).",
    )
    ray_actors: int | None = Field(
        None, ge=1, description="Encoder actors (default: one per GPU, or half the CPUs)."
    )
    ray_audio: Literal["bytes", "paths"] = Field(
        "bytes",
        description="How audio reaches the workers: the driver ships the encoded bytes, or "
        "the workers read the paths (shared filesystem or hub cache).",
    )

    @field_validator("pooling")
    @classmethod
    def _known_pooling(cls, spec: str | None) -> str | None:
        if spec is not None:
            Pooling.parse(spec)  # an unknown pooling is refused before any model is loaded
        return spec

    @classmethod
    def model_validate(cls, obj: Any, **kwargs: Any) -> RunConfig:
        """Validate settings; a refused one is an :class:`OptionError` naming it."""
        try:
            return super().model_validate(obj, **kwargs)
        except ValidationError as exc:
            raise OptionError(f"invalid setting(s): {option_problems(exc)}") from None


def _with_settings(config: RunConfig | None, settings: Mapping[str, Any]) -> RunConfig:
    """``config`` (default: every setting's default) with ``settings`` given by keyword over it.

    A :class:`RunConfig` is valid once made, so it is passed on as it is: only settings given
    by keyword are validated, together with the fields ``config`` set.
    """
    if not settings:
        return config if config is not None else RunConfig()
    given = {name: getattr(config, name) for name in config.model_fields_set} if config else {}
    return RunConfig.model_validate({**given, **settings})


def _make_task(spec: str | Task, config: RunConfig) -> Task:
    if isinstance(spec, Task):
        if spec.device is None:
            spec.device = config.device
        spec.allow_outside_paths = spec.allow_outside_paths or config.allow_outside_paths
        return spec
    options = dict(config.task_options)
    unused: list[str] = []
    accepted = _accepted_options(spec)
    if accepted is not None:
        unused = sorted(k for k in options if k not in accepted)
        options = {k: v for k, v in options.items() if k in accepted}
    kwargs: dict[str, Any] = {
        "options": options,
        "device": config.device,
        "allow_outside_paths": config.allow_outside_paths,
    }
    if config.dataset is not None:
        kwargs["dataset_path"] = config.dataset
    if config.dataset_revision is not None:
        kwargs["revision"] = config.dataset_revision
    if config.subsets:
        kwargs["subsets"] = config.subsets
    task = registry.tasks.create(spec, **kwargs)
    task.unused_options = unused
    return task


def _accepted_options(spec: str) -> set[str] | None:
    """The options task ``spec`` takes, known before it is made (None: not known)."""
    if ":" not in spec or spec in registry.tasks.names():
        return set(registry.tasks.get(spec).Options.model_fields)
    prefix = spec.partition(":")[0]
    family = "similarity" if prefix == "folder" else prefix.removeprefix("folder-")
    if prefix.startswith("folder") and family in registry.FOLDER_FAMILIES:
        from audiobench.tasks.folder import folder_options

        return set(folder_options(family).model_fields)
    return None


def _make_encoder(spec: str | Encoder, model_options: dict[str, Any]) -> Encoder:
    if isinstance(spec, Encoder):
        return spec
    return registry.models.create(spec, **model_options)


class _FlopCounter:
    """The encoder's FLOPs, each probe length counted at most once per evaluate() call.

    After a failed count no other is tried: the figures are worth a warning, never a
    finished run.
    """

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.failed = False
        self.counted: dict[float, float | None] = {}

    def __call__(self, encoder: Encoder, console: Console) -> float | None:
        """FLOPs per second of audio (on a ``FLOPS_PROBE_SECONDS`` clip)."""
        total = self.total(encoder, FLOPS_PROBE_SECONDS, console)
        return None if total is None else total / FLOPS_PROBE_SECONDS

    def total(self, encoder: Encoder, seconds: float, console: Console) -> float | None:
        """FLOPs of one forward pass on a clip of ``seconds`` (rounded to 10 ms)."""
        key = round(seconds, 2)
        if not self.enabled or self.failed or key <= 0:
            return None
        if OutputType.EMBEDDING not in encoder.produces:  # no forward pass to count
            return None
        if key not in self.counted:
            try:
                self.counted[key] = count_flops(encoder, seconds=key)
            except Exception as exc:
                self.failed = True
                self.counted[key] = None
                console.print(f"  [yellow]FLOP count failed[/] ({type(exc).__name__}: {exc})")
        return self.counted[key]


def _efficiency(
    stats: RunStats,
    encoder: Encoder,
    n_parameters: int | None,
    canonical_rate: int,
    flops: float | None,
    flops_per_example: float | None,
    device: str,
    batch_size: int,
) -> Efficiency:
    per_s = stats.embedding_bytes / stats.embedded_seconds if stats.embedded_seconds > 0 else None
    ratios = stats.compression_ratios
    return Efficiency(
        n_parameters=n_parameters,
        embedding_size=int(statistics.median(stats.embedding_sizes))
        if stats.embedding_sizes
        else None,
        bytes_per_second=per_s,
        compression_ratio=statistics.fmean(ratios) if ratios else None,
        mean_encoding_size_bytes=statistics.fmean(stats.encoding_sizes)
        if stats.encoding_sizes
        else None,
        pcm_compression_ratio=pcm_compression_ratio(per_s, canonical_rate) if per_s else None,
        flops_per_example=flops_per_example,
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
    config: RunConfig | None = None,
    *,
    console: Console | None = None,
    on_failure: Callable[[str, Exception], None] | None = None,
    **settings: Any,
) -> list[TaskResult]:
    """Evaluate ``model`` on each of ``tasks``; write and return one result per task.

    Tasks and models are registry names (``audiobench list tasks``), dynamic
    names such as ``folder:PATH``, or instances. Settings come as a
    :class:`RunConfig`, or as its fields by keyword (``batch_size=8``, over
    ``config`` where both are given). An
    existing result file is reused only if it records the identical run
    (same data, model fingerprint, task options, subsets); embeddings come
    from the cache whenever the same encoder has seen the same waveform.
    With ``on_failure``, a task that fails is passed to it (name, exception)
    and the others go on; without, the first failure raises.
    """
    config = _with_settings(config, settings)
    check_device(config.device)  # before any work: no CUDA, no run (DSP baselines included)
    console = console or SafeConsole(stderr=True, soft_wrap=True)  # paths must not wrap
    task_specs = [tasks] if isinstance(tasks, str | Task) else list(tasks)
    if not task_specs:
        raise OptionError("no task given")
    if config.dataset is not None and len(task_specs) > 1:
        raise OptionError(
            "--dataset (a local dataset path) applies to one task; run tasks separately"
        )
    if isinstance(model, Encoder) and config.pooling is not None:
        raise OptionError(
            "pooling applies to a model given by name; give an encoder instance its pooling "
            "when you construct it"
        )
    encoder = _make_encoder(
        model,
        {
            "device": config.device,
            "dtype": config.dtype,
            "pooling": config.pooling,
            "revision": config.revision,
            **config.model_options,
        },
    )
    cache = EmbeddingCache(config.cache_dir) if config.use_cache else None
    flops = _FlopCounter(config.count_flops)
    results = []
    try:
        with distributed.session_scope(config, console):
            for spec in task_specs:
                try:
                    task = _make_task(spec, config)
                    results.append(_run_one(task, encoder, cache, config, console, flops))
                except Exception as exc:  # with on_failure, one failed task does not stop the rest
                    if on_failure is None:
                        raise
                    on_failure(spec if isinstance(spec, str) else spec.name, exc)
    finally:
        if cache is not None:
            cache.close()
    return results


def dataset_identity(task: Task, clips: Sequence[Clip] | None = None) -> DatasetIdentity:
    """Which data ``task`` runs on; local data needs its ``clips`` for the content digest."""
    source = task.metadata.dataset
    if task.dataset_path is not None or source.kind == "folder":
        if clips is None:
            raise ValueError("the identity of local data needs its clips")
        root = Path(task.dataset_path or source.path).resolve()
        return DatasetIdentity(
            kind="local_copy" if task.dataset_path is not None else "folder",
            source=str(root),
            revision=None,
            config=source.config,
            digest=_clips_digest(clips),
            pinned=False,
        )
    revision = task.dataset_revision
    if source.kind == "synthetic":
        return DatasetIdentity(kind="synthetic", source=source.path, revision=revision, pinned=True)
    return DatasetIdentity(
        kind="huggingface",
        source=source.path,
        revision=revision,
        config=source.config,
        pinned=revision is not None and re.fullmatch(PINNED_REVISION, revision) is not None,
    )


def _clips_digest(clips: Sequence[Clip]) -> str:
    """SHA-256 over every clip's table row and a hash of its encoded audio bytes.

    The audio is hashed, not its file's size and modification time, so audio edited in
    place is another dataset whatever its timestamps; a file that cannot be read (missing,
    to be skipped under ``--on-error skip``) counts as absent.
    """
    digest = hashlib.sha256()
    for clip in clips:
        try:
            content: str | None = clip.audio.content_digest()
        except (OSError, ValueError):
            content = None
        row: list[object] = [clip.id, clip.label, clip.subset, clip.split, clip.text, clip.group]
        row += [clip.audio.location, content]
        digest.update(json.dumps(row, default=str).encode() + b"\n")
    return digest.hexdigest()


def run_identity(
    task: Task, encoder: Encoder, config: RunConfig, clips: Sequence[Clip] | None = None
) -> RunIdentity:
    return RunIdentity(
        task=task.name,
        dataset=dataset_identity(task, clips),
        model_fingerprint=encoder.fingerprint(),
        task_options=task.options.model_dump(mode="json"),
        subsets=list(task.selected_subsets) if task.selected_subsets else None,
        on_error=config.on_error,
        max_clip_seconds=config.max_clip_seconds,
    )


def _reusable(
    path: Path, identity: RunIdentity, config: RunConfig, console: Console
) -> TaskResult | None:
    """The result at ``path`` if it records exactly ``identity`` (and no overwrite)."""
    if config.overwrite or not path.exists():
        return None
    try:
        existing = load_result(path)
    except ResultFileError as exc:
        raise ResultFileError(
            f"{exc}; an unreadable result is in the way: move it aside or pass --overwrite"
        ) from exc
    if existing.run is not None and existing.run.digest == identity.digest:
        console.print(f"reusing existing result {escape(str(path))} (identical run)")
        return existing
    what = (
        "it has no run identity"
        if existing.run is None
        else ("it differs in " + ", ".join(identity.differences(existing.run)))
    )
    console.print(
        f"[yellow]replacing[/] {escape(str(path))}: it holds another run ({escape(what)})"
    )
    return None


#: Free space a results folder must have before a run starts (a result file is tens of kB).
MIN_FREE_BYTES = 1 << 20


def check_output_dir(folder: Path) -> None:
    """Raise before any work if result files cannot be written into ``folder``.

    Nothing is created: the folder, or the nearest of its parents that exists, must be a
    folder that takes a test write (made and removed at once) on a disk with at least
    :data:`MIN_FREE_BYTES` free. Errors name the path.
    """
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise NotADirectoryError(
            f"cannot write results into {folder}: {existing} is a file, not a folder; "
            "pass --output-dir with a folder"
        )
    remedy = "pass --output-dir with a writable folder"
    probe = existing / f".audiobench-write-test-{secrets.token_hex(4)}"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, b"ok\n")
        finally:
            os.close(fd)
            probe.unlink(missing_ok=True)
    except OSError as exc:
        raise OSError(
            f"cannot write results into {folder}: {existing}: {exc.strerror or exc}; {remedy}"
        ) from None
    free = shutil.disk_usage(existing).free
    if free < MIN_FREE_BYTES:
        raise OSError(
            f"cannot write results into {folder}: {free} bytes free on its disk, under the "
            f"{MIN_FREE_BYTES} a run keeps for its result files; free some space or {remedy}"
        )


def _is_local(task: Task) -> bool:
    return task.dataset_path is not None or task.metadata.dataset.kind == "folder"


def _run_one(
    task: Task,
    encoder: Encoder,
    cache: EmbeddingCache | None,
    config: RunConfig,
    console: Console,
    flops: _FlopCounter,
) -> TaskResult:
    output_dir = Path(config.output_dir)
    path = result_path(output_dir, encoder.meta.name, encoder.revision, task.name)
    check_output_dir(path.parent)  # before any audio is read: a result never lost at the end
    clips: list[Clip] | None = None
    t_start = time.perf_counter()
    if _is_local(task):  # the identity of local data is a digest of what is there now
        clips = task.load_data(
            progress=lambda msg: console.print(f"  {escape(msg)}"),
            missing_ok=config.on_error == "skip",
        )
    identity = run_identity(task, encoder, config, clips)
    existing = _reusable(path, identity, config, console)
    if existing is not None:
        return existing
    if not task.also_scores & encoder.produces:
        require_output(encoder, task.needs_output, f"task {task.name} scores them")
    try:
        task.check_encoder(encoder)  # its contract: a clear error for an unsuitable model
    except ValueError as exc:
        # The contract refuses a model with a plain ValueError naming what is missing; any
        # other kind (a UserError already, or a ValueError subclass from a bug) stays as it is.
        if type(exc) is not ValueError:
            raise
        raise UnsuitableModelError(str(exc)) from exc
    console.print(f"[bold]{escape(task.name)}[/] with [bold]{escape(encoder.meta.name)}[/]")
    if clips is None:
        clips = task.load_data(
            progress=lambda msg: console.print(f"  {escape(msg)}"),
            missing_ok=config.on_error == "skip",
        )
    if not clips:
        raise DataError(f"task {task.name}: the dataset holds no clips for the selected subsets")
    t_loaded = time.perf_counter()
    ray_info = distributed.warm_cache(task, encoder, cache, clips, config, console)
    hook = RichProgress(console) if config.progress else None
    embedder = CachedEmbedder(
        encoder,
        cache,
        canonical_rate=task.metadata.sample_rate,
        resampler=resampler_for(task.options),
        batch_size=config.batch_size,
        on_error=config.on_error,
        max_clip_seconds=config.max_clip_seconds,
        progress=hook,
        # A task whose data legitimately repeats audio (one clip in several pairs) says so.
        allow_duplicates=bool(getattr(task, "allow_duplicates", False)),
        threads=config.threads,
    )
    with hook if hook is not None else nullcontext(), kernels.recording() as chosen_kernels:
        scores = task.evaluate(embedder, clips)
    t_done = time.perf_counter()
    stats = embedder.stats
    embed_wall = stats.wall_s + (ray_info.wall_s if ray_info is not None else 0.0)
    notes = [*stats.events, *encoder.pop_notes()]
    for note in notes:
        console.print(f"  [yellow]warning:[/] {escape(encoder.meta.name)}: {escape(note)}")
    details = {**scores.details, **({"run_notes": notes} if notes else {})}
    flops_per_second = flops(encoder, console)  # loads the model if the cache served every clip
    durations = list(embedder.durations.values())
    flops_per_example = (
        flops.total(encoder, statistics.median(durations), console) if durations else None
    )
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
        run=identity,
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
            flops_per_example,
            config.device,
            embedder.batch_size,
        ),
        timings=Timings(
            load_data_s=t_loaded - t_start,
            encode_s=embed_wall,
            evaluate_s=max(0.0, (t_done - t_loaded) - embed_wall),
            total_s=t_done - t_start,
        ),
        environment=Environment.capture(
            config.device,
            ray=ray_info,
            threads=embedder.threads,
            scoring_kernels=chosen_kernels.summary(),
        ),
        date=utc_now(),
    )
    written = result.save(output_dir)
    console.print(
        f"  encoded {stats.n_encoded} clip(s), {stats.n_cached} served from cache"
        + (f" ({stats.n_unpooled} of them frame-level)" if stats.n_unpooled else "")
        + (f", {len(stats.skipped)} skipped" if stats.skipped else "")
    )
    for line in task.highlights(scores):
        console.print(f"  {escape(line)}")
    console.print(f"  {escape(main_score_line(result))}")
    console.print(f"  ->  {escape(str(written))}")
    return result
