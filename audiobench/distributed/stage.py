"""Warming the embedding cache on a Ray cluster before a task is scored.

1. The driver groups the task's clips the way the local runner will meet them
   (by subset, in chunks of 512 in dataset order) and ships each clip's audio
   (:mod:`~audiobench.distributed.transport`) to CPU tasks, which decode and
   resample it exactly as the runner does and return its waveform hash and
   length. The waveforms stay in Ray's object store.
2. The driver looks every hash up in the cache; what the cache holds is never
   sent to an encoder (nor is a waveform already sent for another clip).
3. The misses of each chunk go through the runner's own
   :class:`~audiobench.batching.BatchPlanner` (one copy per waveform, sorted by
   length, cut into batches of ``batch_size``) to the encoder actors
   (:mod:`~audiobench.distributed.pool`).
4. Embeddings stream back as batches finish; the driver commits each batch to
   the SQLite cache at once, so an interrupted run resumes from there. A batch
   that runs out of memory is halved, as the runner does.

A clip the cluster cannot encode is left to the local pass, which reports it
as a local run would. Ctrl-C cancels the cluster's work; what was committed
stays cached.
"""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from rich.console import Console
from rich.markup import escape

from audiobench.audio import Clip, resampler_for
from audiobench.batching import BatchPlanner, is_out_of_memory, unusable
from audiobench.cache import EmbeddingCache
from audiobench.distributed.pool import MAX_RESTARTS, Actor, EncoderPool, cause
from audiobench.distributed.session import RaySession, session_scope
from audiobench.distributed.transport import DECODE_PART, decode_part, payload
from audiobench.encoder import Encoder
from audiobench.results import RayInfo
from audiobench.runner import DECODE_WORKERS, EmbeddingError, ProgressBar
from audiobench.task import Task
from audiobench.torch_runtime import default_threads

if TYPE_CHECKING:
    from audiobench.evaluation import RunConfig

__all__ = ["CHUNK", "Stage", "needed_passes", "warm_cache"]

#: Clips per chunk: the local runner's default, so that batches hold the same clips.
CHUNK = 512
#: Calls queued on one actor, so the next batch's waveforms travel while one encodes.
CALLS_PER_ACTOR = 2
#: Times the driver itself resubmits a batch whose actor died for good.
MAX_ATTEMPTS = 3

_log = logging.getLogger(__name__)


def needed_passes(task: Task, encoder: Encoder) -> tuple[bool, ...]:
    """The embedding passes ``task`` runs (:meth:`~audiobench.task.Task.embedding_passes`)."""
    return task.embedding_passes(encoder)


def units(task: Task, clips: Sequence[Clip]) -> list[list[Clip]]:
    """The clips in the chunks the local runner will embed them in (by subset, 512 at a time)."""
    if type(task).evaluate is Task.evaluate:
        groups = list(task.clips_by_subset(clips).values())
    else:  # a family with its own loop embeds the whole task at once
        groups = [list(clips)]
    return [group[i : i + CHUNK] for group in groups for i in range(0, len(group), CHUNK)]


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
    config: RunConfig,
    console: Console,
) -> RayInfo | None:
    """Fill ``cache`` with ``task``'s embeddings on the Ray cluster of ``config.ray``.

    Returns what the result records of the cluster (None without ``--ray``).
    """
    if config.ray is None:
        return None
    if not needed_passes(task, encoder):  # text outputs (transcripts...): produced locally
        console.print(
            f"  {task.name} scores text outputs, which --ray does not compute; producing "
            "them locally"
        )
        return None
    if cache is None:
        console.print(
            "  [yellow]warning:[/] --ray fills the embedding cache, which --no-cache turns off; "
            "encoding locally"
        )
        return None
    with session_scope(config, console) as session:
        assert session is not None
        return Stage(session, task, encoder, cache, clips, config, console).run()


class Stage:
    """One task's clips through decoding, the cache, the planner and the actors."""

    def __init__(
        self,
        session: RaySession,
        task: Task,
        encoder: Encoder,
        cache: EmbeddingCache,
        clips: Sequence[Clip],
        config: RunConfig,
        console: Console,
    ) -> None:
        self.session = session
        self.ray = session.ray
        self.task = task
        self.encoder = encoder
        self.cache = cache
        self.config = config
        self.console = console
        self.planner: BatchPlanner[str] = BatchPlanner(config.batch_size)
        self.passes = needed_passes(task, encoder)
        self.fingerprints = {p: encoder.fingerprint(pooled=p) for p in self.passes}
        self.units = [_Unit(list(u)) for u in units(task, clips)]
        self.total = sum(len(u.clips) for u in self.units)
        self.claimed: dict[bool, set[str]] = {p: set() for p in self.passes}
        self.queue: deque[_Batch] = deque()
        self.inflight: dict[Any, tuple[_Batch, Actor]] = {}
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
        threads = self.config.threads or default_threads(DECODE_WORKERS)
        self.use_gpu, self.n_actors, self.threads = self.session.plan(
            self.config, self.console, threads
        )
        free_cpus = self.session.resources().get("CPU", 0.0) - self.n_actors
        self.decode_cpus = 1.0 if free_cpus >= 1 else 0.0  # never starve decoding of a slot
        per_round = CALLS_PER_ACTOR * self.n_actors * self.planner.size
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
            items = [(c.id, payload(c.audio, mode)) for c in chunk]
            refs = self.decode.options(
                num_cpus=self.decode_cpus, num_returns=1 + len(items)
            ).remote(
                items,
                rate,
                model_rate,
                self.config.max_clip_seconds,
                resampler_for(self.task.options),
            )
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
            todo = self.planner.distinct_by_length(group, key=str, length=lambda k: first[k][1])
            for keys_ in self.planner.batches(todo):
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
                self.encoder, self.use_gpu, self.n_actors, self.threads, self.console
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
                if unusable(arr) is not None:
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

    def _actor_failed(self, batch: _Batch, actor: Actor, exc: Exception) -> None:
        actor.failures += 1
        if actor.failures > MAX_RESTARTS:
            actor.alive = False
        batch.attempts += 1
        if batch.attempts > MAX_ATTEMPTS:
            self._give_up(batch, f"its actor died {batch.attempts} times ({cause(exc)})")
            return
        self.queue.appendleft(batch)  # redone; what was committed stays

    def _batch_failed(self, batch: _Batch, exc: Exception) -> None:
        reason = cause(exc)
        n = len(batch.keys)
        if n > 1 and (is_out_of_memory(getattr(exc, "cause", exc)) or "out of memory" in reason):
            half = self.planner.halve(n)
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
                f"encoder failed on the cluster on a batch with clips {ids}{more}: {reason}",
            )
        if n > 1:  # find the offending clips one by one
            self._split(batch, 1)
            return
        self._give_up(batch, reason)

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
        return cache.has_many(fingerprint, keys)
    return {key for key, arr in cache.get_many(fingerprint, keys).items() if unusable(arr) is None}
