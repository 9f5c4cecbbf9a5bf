"""Encoding on a Ray cluster (``evaluate --ray``): warm the embedding cache, then score locally.

Before a task is scored, :func:`warm_cache` fills the driver's embedding cache
with the embeddings the task is about to ask for:

1. The driver groups the task's clips the way the local runner will meet them
   (by subset, in chunks of 512 in dataset order) and ships each clip's
   *encoded* audio to CPU tasks, which decode and resample it exactly as the
   runner does and return its waveform hash and length. The waveforms stay in
   Ray's object store.
2. The driver looks every hash up in the cache; what the cache holds is never
   sent to an encoder (nor is a waveform already sent for another clip).
3. The misses of each chunk, sorted by length and cut into batches of
   ``batch_size`` (the runner's own batching), go to a pool of encoder actors:
   one per GPU of the cluster with ``--device cuda`` (in the dtype a local run
   uses, fp16 unless ``--dtype`` says otherwise), else ``ray_actors`` CPU
   actors. Each actor loads the model once and keeps it for every task of the
   run.
4. Embeddings stream back as batches finish; the driver commits each batch to
   the SQLite cache at once, so an interrupted run resumes from there.

Then the ordinary local pass runs (:class:`~audiobench.runner.CachedEmbedder`)
and finds every embedding in the cache: the scores are those of a local run by
construction. Frame-level outputs are prefilled too for the families that ask
for them (token-level classification probes, reconstruction).

Audio transport (``ray_audio``): ``"bytes"`` (the default) needs no shared
filesystem: the driver reads each clip's encoded bytes (the audio file, or the
hub dataset row's bytes) and they travel through the object store. With
``"paths"`` the workers read the audio themselves: files at the same path (a
shared filesystem), hub datasets from their own hub cache (download the
dataset on every node first, under the same ``HF_HOME``).

Faults: encoder actors are restarted by Ray (``max_restarts``) and a call cut
short by a dying actor is retried (``max_task_retries``), then resubmitted to
another actor; nothing committed is recomputed. A clip the cluster cannot
encode is left to the local pass, which reports it as a local run would.
Ctrl-C cancels the cluster's work; what was committed stays cached.

Ray is imported only here, and only when ``--ray`` is used.
"""

from __future__ import annotations

import io
import logging
import math
import os
import socket
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from rich.console import Console
from rich.markup import escape

from audiobench.audio import (
    ArrowAudioRef,
    AudioRef,
    Clip,
    FileAudioRef,
    decode_clip,
    waveform_hash,
)
from audiobench.cache import EmbeddingCache
from audiobench.encoder import Encoder
from audiobench.results import RayInfo
from audiobench.runner import (
    EmbeddingError,
    ProgressBar,
    free_accelerator_memory,
    inference_mode,
    is_out_of_memory,
)
from audiobench.task import Task

__all__ = [
    "DEFAULT_ADDRESS",
    "INSTALL_HINT",
    "RaySession",
    "import_ray",
    "needed_passes",
    "session_scope",
    "warm_cache",
]

#: ``ray`` value meaning: ``RAY_ADDRESS`` if set, else the cluster started on this
#: machine with ``ray start``, else a new local instance (``--ray`` without an address).
DEFAULT_ADDRESS = "default"
INSTALL_HINT = "pip install 'audiobench[ray]'"

#: Clips per chunk: the local runner's default, so that batches hold the same clips.
CHUNK = 512
#: Clips decoded by one CPU task.
DECODE_PART = 32
#: Calls queued on one actor, so the next batch's waveforms travel while one encodes.
CALLS_PER_ACTOR = 2
#: Ray-level fault tolerance of the encoder actors.
MAX_RESTARTS = 4
MAX_TASK_RETRIES = 2
#: Times the driver itself resubmits a batch whose actor died for good.
MAX_ATTEMPTS = 3

_log = logging.getLogger(__name__)


def import_ray() -> Any:
    """The ``ray`` module, or an error that says how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise ImportError(f"--ray needs Ray, which is not installed: {INSTALL_HINT}") from exc
    return ray


# -- which embeddings a task will ask for ------------------------------------------------


def needed_passes(task: Task, encoder: Encoder) -> tuple[bool, ...]:
    """The embedding passes ``task`` runs (:meth:`~audiobench.task.Task.embedding_passes`)."""
    return task.embedding_passes(encoder)


def _units(task: Task, clips: Sequence[Clip]) -> list[list[Clip]]:
    """The clips in the chunks the local runner will embed them in (by subset, 512 at a time)."""
    if type(task).evaluate is Task.evaluate:
        groups = list(task.clips_by_subset(clips).values())
    else:  # a family with its own loop embeds the whole task at once
        groups = [list(clips)]
    return [group[i : i + CHUNK] for group in groups for i in range(0, len(group), CHUNK)]


# -- what runs on the cluster ----------------------------------------------------------


@dataclass(frozen=True, eq=False)
class BytesAudioRef(AudioRef):
    """A clip's encoded audio (a file's bytes), shipped to a worker without a shared filesystem."""

    data: bytes = field(repr=False)
    origin: str

    def read(self) -> tuple[np.ndarray, int]:
        return self.read_bounded(None)

    def read_bounded(self, max_seconds: float | None) -> tuple[np.ndarray, int]:
        import soundfile as sf

        with sf.SoundFile(io.BytesIO(self.data)) as fh:
            seconds = fh.frames / fh.samplerate if fh.samplerate > 0 else 0.0
            if max_seconds is not None and seconds > max_seconds:
                raise ValueError(f"longer than {max_seconds:g} s")
            return fh.read(dtype="float32", always_2d=True), fh.samplerate

    @property
    def location(self) -> str:
        return self.origin


def _payload(ref: AudioRef, mode: str) -> AudioRef | None:
    """What travels to the decoding task for ``ref`` (None: unreadable here, left local)."""
    if mode == "paths":
        return ref
    try:
        if isinstance(ref, FileAudioRef):
            return BytesAudioRef(ref.path.read_bytes(), ref.location)
        if isinstance(ref, ArrowAudioRef):
            cell = ref.dataset[ref.row][ref.column]
            raw = cell.get("bytes") if isinstance(cell, dict) else None
            path = cell.get("path") if isinstance(cell, dict) else None
            if not raw and path:
                with open(path, "rb") as fh:
                    raw = fh.read()
            return BytesAudioRef(raw, ref.location) if raw else None
    except OSError:
        return None
    return ref  # audio held in memory (or a custom reference) travels as it is


def decode_part(
    items: list[tuple[str, AudioRef | None]],
    canonical_rate: int,
    model_rate: int,
    max_seconds: float | None,
) -> tuple[Any, ...]:
    """Decode clips as the runner does; return ``(meta, *waveforms)``.

    ``meta[i]`` is ``(waveform hash, samples)``, or None for a clip that could
    not be decoded (the local pass reports it); ``waveforms[i]`` the waveform
    (None likewise). Runs as a Ray task with one return value per waveform.
    """
    meta: list[tuple[str, int] | None] = []
    waves: list[np.ndarray | None] = []
    for clip_id, ref in items:
        wave = None
        if ref is not None:
            try:
                wave = decode_clip(
                    Clip(id=clip_id, audio=ref), canonical_rate, model_rate, max_seconds=max_seconds
                )
            except Exception:
                wave = None
        meta.append(None if wave is None else (waveform_hash(wave, model_rate), len(wave)))
        waves.append(wave)
    return (meta, *waves)


class EncoderWorker:
    """The body of an encoder actor: one model load, then batches until the run ends.

    ``encoder`` is the driver's (unloaded) encoder; on a GPU actor its device
    becomes the GPU Ray assigned (``cuda``), its dtype stays the one a local run
    on that device uses.
    """

    def __init__(self, encoder: Encoder, device: str | None) -> None:
        if device is not None:
            encoder.device = device
        self.encoder = encoder
        self.load_s = 0.0

    def _load(self) -> None:
        if not getattr(self.encoder, "_loaded", False):
            t0 = time.perf_counter()
            self.encoder.load()
            self.load_s = time.perf_counter() - t0

    def ready(self) -> dict[str, Any]:
        import ray

        self._load()
        return {
            "pid": os.getpid(),
            "node": socket.gethostname(),
            "gpus": [str(g) for g in ray.get_gpu_ids()],
            "fingerprint": self.encoder.fingerprint(),
            "load_s": self.load_s,
        }

    def encode(self, passes: tuple[bool, ...], *waves: np.ndarray) -> dict[str, Any]:
        """Encode as the local runner does: ``embed`` when pooled, else ``encode_audio``."""
        self._load()
        batch = list(waves)
        t0 = time.perf_counter()
        outputs: dict[bool, list[np.ndarray]] = {}
        try:
            with inference_mode():
                for pooled in passes:
                    raw = self.encoder.embed(batch) if pooled else self.encoder.encode_audio(batch)
                    if len(raw) != len(batch):
                        raise RuntimeError(
                            f"encoder {self.encoder.meta.name!r} returned {len(raw)} outputs "
                            f"for {len(batch)} waveforms"
                        )
                    outputs[pooled] = [np.asarray(z) for z in raw]
        except Exception as exc:
            if is_out_of_memory(exc):
                free_accelerator_memory()
            raise
        notes = dict(getattr(self.encoder, "_notes", {}))
        if notes:
            self.encoder._notes.clear()
        return {
            "outputs": outputs,
            "encode_s": time.perf_counter() - t0,
            "pid": os.getpid(),
            "notes": notes,
        }


# -- the session: one connection, at most one pool of encoder actors ----------------


@dataclass
class _Actor:
    index: int
    handle: Any
    node: str = "?"
    gpus: list[str] = field(default_factory=list)
    pids: set[int] = field(default_factory=set)
    inflight: int = 0
    failures: int = 0
    alive: bool = True


class EncoderPool:
    """Encoder actors for one model (same fingerprint, device and size), reused across tasks."""

    def __init__(
        self, ray: Any, encoder: Encoder, *, use_gpu: bool, n_actors: int, console: Console
    ) -> None:
        self.ray = ray
        self.key = (encoder.fingerprint(), use_gpu, n_actors)
        self.use_gpu = use_gpu
        self.name = encoder.meta.name
        device = None
        if use_gpu and encoder.device.startswith("cuda") and encoder.device != "cuda":
            device = "cuda"  # Ray makes the GPU it assigns the actor's only visible one
        remote = ray.remote(EncoderWorker).options(
            num_cpus=1,
            num_gpus=1 if use_gpu else 0,
            max_restarts=MAX_RESTARTS,
            max_task_retries=MAX_TASK_RETRIES,
        )
        template = _portable(encoder)
        what = f"{n_actors} {'GPU' if use_gpu else 'CPU'} encoder actor(s)"
        console.print(f"  ray: starting {what} for {escape(self.name)} (one model load each)")
        self.actors = [_Actor(i, remote.remote(template, device)) for i in range(n_actors)]
        try:
            self._wait_ready(encoder, console)
        except BaseException:
            self.kill()
            raise

    def _wait_ready(self, encoder: Encoder, console: Console) -> None:
        ray = self.ray
        pending = {a.handle.ready.remote(): a for a in self.actors}
        waited = 0.0
        while pending:
            done, _ = ray.wait(list(pending), num_returns=len(pending), timeout=5.0)
            if not done:
                waited += 5.0
                if waited % 60 == 0:
                    console.print(
                        f"  ray: still waiting for {len(pending)} actor(s) to start "
                        "(the cluster may lack the resources they ask for)"
                    )
                continue
            for ref in done:
                actor = pending.pop(ref)
                try:
                    info = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    raise RuntimeError(
                        f"the encoder actors could not load model {self.name!r}: "
                        f"{_cause(exc)} (every node needs audiobench and the model's "
                        "packages installed, and access to its weights)"
                    ) from None
                if info["fingerprint"] != encoder.fingerprint():
                    raise RuntimeError(
                        f"model {self.name!r} on the cluster has fingerprint "
                        f"{info['fingerprint']}, the driver's is {encoder.fingerprint()}: "
                        "install the same audiobench and model versions on every node"
                    )
                actor.node = info["node"]
                actor.gpus = info["gpus"]
                actor.pids.add(info["pid"])

    @property
    def live(self) -> list[_Actor]:
        return [a for a in self.actors if a.alive]

    def kill(self) -> None:
        for actor in self.actors:
            with suppress(Exception):  # already gone
                self.ray.kill(actor.handle, no_restart=True)


def _portable(encoder: Encoder) -> Encoder:
    """The encoder as it travels to the actors: never with loaded weights.

    An encoder is constructed cheaply and loads lazily, so the driver's is
    normally unloaded; a loaded one is copied without its torch modules.
    """
    if not getattr(encoder, "_loaded", False):
        return encoder
    import copy

    clone = copy.copy(encoder)
    try:
        import torch

        for name, value in list(vars(clone).items()):
            if isinstance(value, torch.nn.Module):
                setattr(clone, name, None)
    except ImportError:  # pragma: no cover - torch is a dependency
        pass
    clone._loaded = False
    return clone


class RaySession:
    """A connection to a Ray cluster for a run (or a grid of runs), and its encoder pool.

    It connects on first use, so a run whose results are all reused never
    starts or joins a cluster; it leaves alone a Ray already initialised.
    """

    def __init__(self, address: str) -> None:
        self.address = None if address in ("", DEFAULT_ADDRESS) else address
        self.owns = False
        self._ray: Any = None
        self.pool: EncoderPool | None = None

    @property
    def ray(self) -> Any:
        if self._ray is None:
            ray = import_ray()
            if not ray.is_initialized():
                ray.init(address=self.address, logging_level=logging.WARNING)
                self.owns = True
            self._ray = ray
        return self._ray

    def resources(self) -> dict[str, float]:
        return {k: float(v) for k, v in self.ray.cluster_resources().items()}

    def n_nodes(self) -> int:
        return sum(1 for node in self.ray.nodes() if node.get("Alive", node.get("alive")))

    def plan(self, config: Any, console: Console) -> tuple[bool, int]:
        """(GPU actors?, how many) for ``config`` on this cluster."""
        resources = self.resources()
        gpus, cpus = int(resources.get("GPU", 0)), int(resources.get("CPU", 0))
        use_gpu = str(config.device).startswith("cuda")
        if use_gpu:
            if gpus < 1:
                raise RuntimeError(
                    "--device cuda with --ray: the cluster has no GPUs (use --device cpu for "
                    "CPU encoder actors)"
                )
            n = config.ray_actors or gpus
            if n > gpus:
                console.print(f"  ray: {n} actors asked for, the cluster has {gpus} GPU(s)")
                n = gpus
            return True, n
        if gpus >= 1:
            console.print(
                f"  ray: the cluster has {gpus} GPU(s); pass --device cuda to encode on them"
            )
        n = config.ray_actors or max(1, cpus // 2)
        if n > max(1, cpus):
            console.print(f"  ray: {n} actors asked for, the cluster has {cpus} CPU(s)")
            n = max(1, cpus)
        return False, n

    def pool_for(
        self, encoder: Encoder, use_gpu: bool, n_actors: int, console: Console
    ) -> EncoderPool:
        key = (encoder.fingerprint(), use_gpu, n_actors)
        if self.pool is not None and self.pool.key == key and self.pool.live:
            return self.pool
        self.drop_pool()  # another model's actors hold the resources
        self.pool = EncoderPool(
            self.ray, encoder, use_gpu=use_gpu, n_actors=n_actors, console=console
        )
        return self.pool

    def drop_pool(self) -> None:
        if self.pool is not None:
            self.pool.kill()
            self.pool = None

    def close(self) -> None:
        self.drop_pool()
        if self.owns and self._ray is not None and self._ray.is_initialized():
            self._ray.shutdown()


_SESSION: RaySession | None = None


@contextmanager
def session_scope(config: Any, console: Console | None = None) -> Iterator[RaySession | None]:
    """The Ray session of ``config.ray`` for the block (None without ``--ray``).

    Nested scopes share the outermost session, so a grid of runs keeps one
    connection and reuses a model's actors across its tasks.
    """
    global _SESSION
    if config.ray is None:
        yield None
        return
    if _SESSION is not None:
        yield _SESSION
        return
    session = RaySession(config.ray)
    _SESSION = session
    try:
        yield session
    finally:
        _SESSION = None
        session.close()


# -- the stage ---------------------------------------------------------------------------


@dataclass
class _Unit:
    """A chunk of clips as the runner embeds it, from decoding until its last batch commits."""

    clips: list[Clip]
    parts: dict[Any, int] = field(default_factory=dict)  # decode ref -> part index
    meta: list[list[tuple[str, int] | None]] = field(default_factory=list)
    waves: list[list[Any]] = field(default_factory=list)
    decoded: int = 0
    outstanding: int = 0  # batches not yet committed
    planned: bool = False


@dataclass
class _Batch:
    unit: _Unit
    keys: list[str]
    waves: list[Any]  # object refs of the waveforms
    clips: list[Clip]  # the first clip of each key, for messages
    passes: tuple[bool, ...]
    weight: int  # clips of the task this batch stands for (duplicates included)
    attempts: int = 0


@dataclass
class _Work:
    """One actor's share of a stage."""

    batches: int = 0
    clips: int = 0
    encode_s: float = 0.0


def warm_cache(
    task: Task,
    encoder: Encoder,
    cache: EmbeddingCache | None,
    clips: Sequence[Clip],
    config: Any,
    console: Console,
) -> RayInfo | None:
    """Fill ``cache`` with ``task``'s embeddings on the Ray cluster of ``config.ray``.

    Returns what the result records of the cluster (None without ``--ray``).
    """
    if config.ray is None:
        return None
    if cache is None:
        console.print(
            "  [yellow]warning:[/] --ray fills the embedding cache, which --no-cache turns off; "
            "encoding locally"
        )
        return None
    with session_scope(config, console) as session:
        assert session is not None
        return _Stage(session, task, encoder, cache, clips, config, console).run()


class _Stage:
    def __init__(
        self,
        session: RaySession,
        task: Task,
        encoder: Encoder,
        cache: EmbeddingCache,
        clips: Sequence[Clip],
        config: Any,
        console: Console,
    ) -> None:
        self.session = session
        self.ray = session.ray
        self.task = task
        self.encoder = encoder
        self.cache = cache
        self.config = config
        self.console = console
        self.batch_size = int(config.batch_size)
        self.passes = needed_passes(task, encoder)
        self.fingerprints = {p: encoder.fingerprint(pooled=p) for p in self.passes}
        self.units = [_Unit(list(u)) for u in _units(task, clips)]
        self.total = sum(len(u.clips) for u in self.units)
        self.claimed: dict[bool, set[str]] = {p: set() for p in self.passes}
        self.queue: deque[_Batch] = deque()
        self.inflight: dict[Any, tuple[_Batch, _Actor]] = {}
        self.decoding: dict[Any, int] = {}  # decode ref -> unit index
        self.pool: EncoderPool | None = None
        self.n_cached = self.n_dispatched = self.n_encoded = self.n_local = 0
        self.work: dict[int, _Work] = {}
        self.lives_before: dict[int, int] = {}
        self.wall_s = 0.0
        self.bar: ProgressBar | None = None

    # -- driving ---------------------------------------------------------------

    def run(self) -> RayInfo:
        for pooled, fp in self.fingerprints.items():
            description = self.encoder.describe()
            self.cache.register_encoder(
                fp, description if pooled else {**description, "pooling": "unpooled"}
            )
        self.use_gpu, self.n_actors = self.session.plan(self.config, self.console)
        free_cpus = self.session.resources().get("CPU", 0.0) - self.n_actors
        self.decode_cpus = 1.0 if free_cpus >= 1 else 0.0  # never starve decoding of a slot
        per_round = CALLS_PER_ACTOR * self.n_actors * self.batch_size
        self.prefetch = max(2, math.ceil(per_round / CHUNK) + 1)
        self.decode = self.ray.remote(decode_part)
        t0 = time.perf_counter()
        progress = None
        if self.config.progress:
            from audiobench.progress import RichProgress

            progress = RichProgress(self.console)
        try:
            if progress is not None:
                with progress:
                    self.bar = progress.start(f"{self.task.name} on ray", self.total, "clips")
                    self._loop()
                    self.bar.close()
            else:
                self._loop()
        except BaseException:
            self._abort()
            raise
        self.wall_s = time.perf_counter() - t0
        self._summary()
        return self._info()

    def _advance(self, n: int) -> None:
        if self.bar is not None and n:
            self.bar.advance(n)

    def _loop(self) -> None:
        next_submit = next_plan = 0
        while True:
            open_units = sum(1 for u in self.units[:next_submit] if not u.planned or u.outstanding)
            while next_submit < len(self.units) and open_units < self.prefetch:
                self._submit_decode(next_submit)
                next_submit += 1
                open_units += 1
            while next_plan < next_submit and self._decoded(self.units[next_plan]):
                self._plan(self.units[next_plan])
                next_plan += 1
            self._dispatch()
            if not (self.decoding or self.inflight or self.queue) and next_plan == len(self.units):
                return
            refs = list(self.decoding) + list(self.inflight)
            if not refs:  # decoded units wait to be planned
                continue
            ready, _ = self.ray.wait(refs, num_returns=1, timeout=0.5)
            if ready:
                more, _ = self.ray.wait(refs, num_returns=len(refs), timeout=0)
                ready = list(dict.fromkeys([*ready, *more]))
            for ref in ready:
                if ref in self.decoding:
                    self._decoded_part(ref)
                else:
                    self._finished(ref)

    # -- decoding --------------------------------------------------------------

    def _submit_decode(self, index: int) -> None:
        unit = self.units[index]
        model_rate = self.encoder.meta.sample_rate
        rate = self.task.metadata.sample_rate
        mode = self.config.ray_audio
        for part, start in enumerate(range(0, len(unit.clips), DECODE_PART)):
            chunk = unit.clips[start : start + DECODE_PART]
            items = [(c.id, _payload(c.audio, mode)) for c in chunk]
            refs = self.decode.options(
                num_cpus=self.decode_cpus, num_returns=1 + len(items)
            ).remote(items, rate, model_rate, self.config.max_clip_seconds)
            unit.parts[refs[0]] = part
            unit.meta.append([])
            unit.waves.append(list(refs[1:]))
            self.decoding[refs[0]] = index

    def _decoded(self, unit: _Unit) -> bool:
        return unit.decoded == len(unit.parts)

    def _decoded_part(self, ref: Any) -> None:
        unit = self.units[self.decoding.pop(ref)]
        part = unit.parts[ref]
        try:
            unit.meta[part] = self.ray.get(ref)
        except self.ray.exceptions.RayError:  # the whole part is left to the local pass
            unit.meta[part] = [None] * len(unit.waves[part])
        unit.decoded += 1

    # -- planning: the runner's batches ----------------------------------------

    def _plan(self, unit: _Unit) -> None:
        unit.planned = True
        items: list[tuple[Clip, str, int, Any]] = []
        n_failed = 0
        index = 0
        for meta, waves in zip(unit.meta, unit.waves, strict=True):
            for m, wave in zip(meta, waves, strict=True):
                clip = unit.clips[index]
                index += 1
                if m is None:
                    n_failed += 1
                else:
                    items.append((clip, m[0], m[1], wave))
        unit.meta, unit.waves = [], []  # drop references: cached clips' waveforms are freed
        self.n_local += n_failed
        keys = {key for _, key, _, _ in items}
        found = {p: _cached(self.cache, fp, keys, p) for p, fp in self.fingerprints.items()}
        first: dict[str, tuple[Clip, int, Any]] = {}
        weight: dict[str, int] = {}
        needs: dict[str, tuple[bool, ...]] = {}
        done = n_failed
        for clip, key, length, wave in items:
            if key not in needs:
                needs[key] = tuple(
                    p for p in self.passes if key not in found[p] and key not in self.claimed[p]
                )
                if not needs[key] and all(key in found[p] for p in self.passes):
                    self.n_cached += 1
            if not needs[key]:
                done += 1
                continue
            first.setdefault(key, (clip, length, wave))
            weight[key] = weight.get(key, 0) + 1
        self._advance(done)
        groups: dict[tuple[bool, ...], list[str]] = {}
        for key in first:
            groups.setdefault(needs[key], []).append(key)
            for p in needs[key]:
                self.claimed[p].add(key)
        for passes, group in groups.items():
            group.sort(key=lambda k: first[k][1])  # stable, like the runner's sort
            for start in range(0, len(group), self.batch_size):
                keys_ = group[start : start + self.batch_size]
                batch = _Batch(
                    unit=unit,
                    keys=keys_,
                    waves=[first[k][2] for k in keys_],
                    clips=[first[k][0] for k in keys_],
                    passes=passes,
                    weight=sum(weight[k] for k in keys_),
                )
                unit.outstanding += 1
                self.queue.append(batch)
                self.n_dispatched += len(keys_)

    # -- encoding --------------------------------------------------------------

    def _dispatch(self) -> None:
        if not self.queue:
            return
        if self.pool is None:
            self.pool = self.session.pool_for(
                self.encoder, self.use_gpu, self.n_actors, self.console
            )
            self.lives_before = {a.index: len(a.pids) for a in self.pool.actors}
        while self.queue:
            live = self.pool.live
            if not live:
                raise RuntimeError(
                    f"every encoder actor of model {self.encoder.meta.name!r} died; the "
                    "batches already encoded are cached, rerun to resume"
                )
            actor = min(live, key=lambda a: a.inflight)
            if actor.inflight >= CALLS_PER_ACTOR:
                return
            batch = self.queue.popleft()
            ref = actor.handle.encode.remote(batch.passes, *batch.waves)
            actor.inflight += 1
            self.inflight[ref] = (batch, actor)

    def _finished(self, ref: Any) -> None:
        batch, actor = self.inflight.pop(ref)
        actor.inflight -= 1
        exceptions = self.ray.exceptions
        try:
            out = self.ray.get(ref)
        except exceptions.RayActorError as exc:
            self._actor_failed(batch, actor, exc)
            return
        except exceptions.RayTaskError as exc:
            self._batch_failed(batch, exc)
            return
        except exceptions.RayError as exc:  # inputs lost with a node: leave to the local pass
            self._give_up(batch, f"{type(exc).__name__}")
            return
        actor.pids.add(out["pid"])
        self._commit(batch, out)
        work = self.work.setdefault(actor.index, _Work())
        work.batches += 1
        work.clips += len(batch.keys)
        work.encode_s += float(out["encode_s"])

    def _commit(self, batch: _Batch, out: dict[str, Any]) -> None:
        outputs: dict[bool, list[np.ndarray]] = out["outputs"]
        stored: set[str] = set(batch.keys)
        for pooled in batch.passes:
            items = []
            for key, array in zip(batch.keys, outputs[pooled], strict=True):
                arr = np.asarray(array)
                if arr.size == 0 or (arr.dtype.kind in "fc" and not np.isfinite(arr).all()):
                    stored.discard(key)  # unusable: the local pass skips or raises as usual
                    continue
                items.append((key, arr))
            if items:
                self.cache.put_many(self.fingerprints[pooled], items)
        for message, count in out["notes"].items():
            self.encoder.note(message, count)
        self.n_encoded += len(stored)
        self.n_local += len(batch.keys) - len(stored)
        self._close(batch)

    def _close(self, batch: _Batch) -> None:
        batch.unit.outstanding -= 1
        self._advance(batch.weight)

    def _actor_failed(self, batch: _Batch, actor: _Actor, exc: Exception) -> None:
        actor.failures += 1
        if actor.failures > MAX_RESTARTS:
            actor.alive = False
        batch.attempts += 1
        if batch.attempts > MAX_ATTEMPTS:
            self._give_up(batch, f"its actor died {batch.attempts} times ({_cause(exc)})")
            return
        self.queue.appendleft(batch)  # redone; what was committed stays

    def _batch_failed(self, batch: _Batch, exc: Exception) -> None:
        cause = _cause(exc)
        n = len(batch.keys)
        if n > 1 and (is_out_of_memory(getattr(exc, "cause", exc)) or "out of memory" in cause):
            half = (n + 1) // 2
            self.batch_size = min(self.batch_size, half)
            self.console.print(
                f"  ray: out of memory on a batch of {n} clips; retrying in batches of {half}"
            )
            self._split(batch, half)
            return
        if self.config.on_error == "raise":
            ids = ", ".join(repr(c.id) for c in batch.clips[:5])
            more = f" and {n - 5} more" if n > 5 else ""
            raise EmbeddingError(
                batch.clips[0],
                f"encoder failed on the cluster on a batch with clips {ids}{more}: {cause}",
            )
        if n > 1:  # find the offending clips one by one
            self._split(batch, 1)
            return
        self._give_up(batch, cause)

    def _split(self, batch: _Batch, size: int) -> None:
        parts = []
        for start in range(0, len(batch.keys), size):
            sl = slice(start, start + size)
            part = _Batch(
                unit=batch.unit,
                keys=batch.keys[sl],
                waves=batch.waves[sl],
                clips=batch.clips[sl],
                passes=batch.passes,
                weight=0,
            )
            parts.append(part)
        parts[-1].weight = batch.weight
        batch.unit.outstanding += len(parts) - 1
        self.queue.extendleft(reversed(parts))

    def _give_up(self, batch: _Batch, reason: str) -> None:
        self.n_local += len(batch.keys)
        for pooled in batch.passes:
            self.claimed[pooled].difference_update(batch.keys)
        _log.info("left %d clip(s) to the local pass: %s", len(batch.keys), reason)
        self._close(batch)

    def _abort(self) -> None:
        """Ctrl-C or an error: stop the cluster's work; what was committed stays cached."""
        for ref in list(self.decoding) + list(self.inflight):
            with suppress(Exception):
                self.ray.cancel(ref, force=False)
        self.decoding.clear()
        self.inflight.clear()
        self.queue.clear()
        self.session.drop_pool()

    # -- reporting -------------------------------------------------------------

    def _restarts(self) -> int:
        if self.pool is None:
            return 0
        return sum(
            len(a.pids) - self.lives_before.get(a.index, len(a.pids)) for a in self.pool.actors
        )

    def _summary(self) -> None:
        """One line for the stage, one per actor: clips, batches, encoding throughput."""
        pool = self.pool
        local = f", {self.n_local} left to the local pass" if self.n_local else ""
        if pool is None:
            self.console.print(
                f"  ray: nothing to encode ({self.n_cached} clip(s) already cached{local})"
            )
            return
        rate = self.n_encoded / self.wall_s if self.wall_s > 0 else 0.0
        nodes = len({a.node for a in pool.actors})
        kind = "GPU" if pool.use_gpu else "CPU"
        restarts = self._restarts()
        self.console.print(
            f"  ray: encoded {self.n_encoded} clip(s) on {len(pool.actors)} {kind} actor(s) "
            f"on {nodes} node(s) in {self.wall_s:.1f} s ({rate:.1f} clips/s); "
            f"{self.n_cached} already cached{local}"
            + (f"; {restarts} actor restart(s)" if restarts else "")
        )
        for actor in pool.actors:
            work = self.work.get(actor.index, _Work())
            speed = work.clips / work.encode_s if work.encode_s > 0 else 0.0
            where = actor.node + (f", GPU {','.join(actor.gpus)}" if actor.gpus else "")
            lives = len(actor.pids) - self.lives_before.get(actor.index, len(actor.pids))
            self.console.print(
                f"    actor {actor.index} ({escape(where)}): {work.clips} clip(s) in "
                f"{work.batches} batch(es), {speed:.1f} clips/s while encoding"
                + (f", restarted {lives}x" if lives else "")
                + ("" if actor.alive else ", dead")
            )

    def _info(self) -> RayInfo:
        resources = self.session.resources()
        pool = self.pool
        return RayInfo(
            address=self.session.address,
            ray_version=str(self.ray.__version__),
            nodes=self.session.n_nodes(),
            cluster_cpus=resources.get("CPU", 0.0),
            cluster_gpus=resources.get("GPU", 0.0),
            workers=len(pool.actors) if pool else 0,
            gpus=float(len(pool.actors)) if pool and pool.use_gpu else 0.0,
            n_dispatched=self.n_dispatched,
            n_encoded=self.n_encoded,
            restarts=self._restarts(),
            wall_s=self.wall_s,
        )


def _cached(cache: EmbeddingCache, fingerprint: str, keys: set[str], pooled: bool) -> set[str]:
    """The keys the runner will find usable in ``cache`` (the rest are encoded).

    Pooled vectors are small: they are read and checked as the runner checks
    them (an empty or non-finite entry is encoded again). Frame outputs can be
    megabytes per clip, so only their presence is looked up; a damaged one is
    re-encoded by the local pass.
    """
    if not pooled:
        present = _present(cache, fingerprint, keys)
        if present is not None:
            return present
    return {
        key
        for key, arr in cache.get_many(fingerprint, keys).items()
        if arr.size and not (arr.dtype.kind in "fc" and not np.isfinite(arr).all())
    }


def _present(cache: EmbeddingCache, fingerprint: str, keys: set[str]) -> set[str] | None:
    """Keys with an entry in ``cache``, read without their data (None: cannot tell)."""
    import sqlite3

    wanted = sorted(keys)
    present: set[str] = set()
    try:
        conn = sqlite3.connect(f"file:{cache.path}?mode=ro", uri=True)
        try:
            for start in range(0, len(wanted), 900):
                chunk = wanted[start : start + 900]
                rows = conn.execute(
                    "SELECT clip_hash FROM embeddings WHERE fingerprint = ? AND length(data) > 0 "
                    f"AND clip_hash IN ({','.join('?' * len(chunk))})",
                    (fingerprint, *chunk),
                )
                present.update(row[0] for row in rows)
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return present


def _cause(exc: BaseException) -> str:
    """The worker's own error message, without Ray's traceback banner."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        return f"{type(cause).__name__}: {cause}"
    text = str(exc).strip().splitlines()
    return text[-1] if text else type(exc).__name__
