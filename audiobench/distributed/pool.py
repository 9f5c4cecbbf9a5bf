"""The encoder actors: one model load each, kept for every task of a run.

Encoder actors are restarted by Ray (``max_restarts``) and a call cut short
by a dying actor is retried (``max_task_retries``); the stage resubmits a
batch whose actor died for good to another one. Dispatch is the stage's own
(:meth:`~audiobench.distributed.stage.Stage._dispatch`) rather than
``ray.util.ActorPool``: the stage must put a batch back at the front of the
queue when its actor dies or when it is split after running out of memory,
mark an actor dead after too many failures, and count each actor's work and
restarts, none of which ``ActorPool`` exposes.
"""

from __future__ import annotations

import os
import socket
import time
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from rich.console import Console
from rich.markup import escape

from audiobench.batching import free_accelerator_memory, is_out_of_memory
from audiobench.encoder import Encoder
from audiobench.torch_runtime import encoder_threads, inference_mode

__all__ = ["MAX_RESTARTS", "MAX_TASK_RETRIES", "Actor", "EncoderPool", "EncoderWorker", "cause"]

#: Ray-level fault tolerance of the encoder actors.
MAX_RESTARTS = 4
MAX_TASK_RETRIES = 2


class EncoderWorker:
    """The body of an encoder actor: one model load, then batches until the run ends.

    ``encoder`` is the driver's (unloaded) encoder; on a GPU actor its device
    becomes the GPU Ray assigned (``cuda``), its dtype stays the one a local run
    on that device uses. ``threads`` is the driver's encoder thread count, so
    that torch splits its reductions as a local run does.
    """

    def __init__(self, encoder: Encoder, device: str | None, threads: int) -> None:
        if device is not None:
            encoder.device = device
        self.encoder = encoder
        self.threads = threads
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
            with inference_mode(), encoder_threads(self.threads):
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


@dataclass
class Actor:
    """One encoder actor as the stage sees it: where it runs, its lives, its load."""

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
        self,
        ray: Any,
        encoder: Encoder,
        *,
        use_gpu: bool,
        n_actors: int,
        threads: int,
        console: Console,
    ) -> None:
        self.ray = ray
        self.key = (encoder.fingerprint(), use_gpu, n_actors, threads)
        self.use_gpu = use_gpu
        self.name = encoder.meta.name
        device = None
        if use_gpu and encoder.device.startswith("cuda") and encoder.device != "cuda":
            device = "cuda"  # Ray makes the GPU it assigns the actor's only visible one
        remote = ray.remote(EncoderWorker).options(
            # A CPU actor holds the cores its threads use; a GPU actor needs one to feed it.
            num_cpus=1 if use_gpu else threads,
            num_gpus=1 if use_gpu else 0,
            max_restarts=MAX_RESTARTS,
            max_task_retries=MAX_TASK_RETRIES,
        )
        template = _portable(encoder)
        what = f"{n_actors} {'GPU' if use_gpu else 'CPU'} encoder actor(s)"
        console.print(f"  ray: starting {what} for {escape(self.name)} (one model load each)")
        self.actors = [Actor(i, remote.remote(template, device, threads)) for i in range(n_actors)]
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
                        f"{cause(exc)} (every node needs audiobench and the model's "
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
    def live(self) -> list[Actor]:
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


def cause(exc: BaseException) -> str:
    """The worker's own error message, without Ray's traceback banner."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        return f"{type(cause).__name__}: {cause}"
    text = str(exc).strip().splitlines()
    return text[-1] if text else type(exc).__name__
