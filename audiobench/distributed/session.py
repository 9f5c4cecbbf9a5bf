"""The connection to a Ray cluster for a run (or a grid of runs), and its encoder pool.

Ray is imported only here, and only when ``--ray`` is used. An address that
nothing answers at fails within :data:`CONNECT_TIMEOUT_S` seconds, in one line
naming it (Ray itself retries for minutes).
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rich.console import Console

from audiobench.distributed.pool import EncoderPool
from audiobench.encoder import Encoder

if TYPE_CHECKING:
    from audiobench.evaluation import RunConfig

__all__ = [
    "CONNECT_TIMEOUT_S",
    "DEFAULT_ADDRESS",
    "INSTALL_HINT",
    "RayConnectionError",
    "RaySession",
    "active_session",
    "import_ray",
    "session_scope",
]

#: ``ray`` value meaning: ``RAY_ADDRESS`` if set, else the cluster started on this
#: machine with ``ray start``, else a new local instance (``--ray`` without an address).
DEFAULT_ADDRESS = "default"
INSTALL_HINT = "pip install 'audiobench[ray]'"
#: Seconds to wait for a cluster's address to answer before giving up.
CONNECT_TIMEOUT_S = 10.0


class RayConnectionError(ConnectionError):
    """Nothing answers at the Ray address given."""


def import_ray() -> Any:
    """The ``ray`` module, or an error that says how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise ImportError(f"--ray needs Ray, which is not installed: {INSTALL_HINT}") from exc
    return ray


def _host_port(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of a cluster address (``head:6379``, ``ray://head:10001``), else None.

    ``auto`` and ``local`` name no port; Ray resolves them itself.
    """
    rest = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = rest.rstrip("/").rpartition(":")
    if not sep or not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def check_reachable(address: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Raise :class:`RayConnectionError` if nothing accepts a connection at ``address``."""
    target = _host_port(address)
    if target is None:
        return
    try:
        socket.create_connection(target, timeout=timeout).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        if isinstance(exc, TimeoutError):
            reason = f"no answer in {timeout:g} s"
        raise RayConnectionError(
            f"--ray {address}: no Ray cluster answers at {target[0]}:{target[1]} ({reason}); "
            f"start one there (ray start --head --port {target[1]}) or pass --ray without an "
            "address to start a local one"
        ) from None


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
                address = self.address or os.environ.get("RAY_ADDRESS")
                if address:
                    check_reachable(address)
                ray.init(address=self.address, logging_level=logging.WARNING)
                self.owns = True
            self._ray = ray
        return self._ray

    def resources(self) -> dict[str, float]:
        return {k: float(v) for k, v in self.ray.cluster_resources().items()}

    def n_nodes(self) -> int:
        return sum(1 for node in self.ray.nodes() if node.get("Alive", node.get("alive")))

    def largest_node_cpus(self) -> int:
        """CPUs of the cluster's largest live node (what one actor can hold)."""
        return max(
            (
                int(node.get("Resources", {}).get("CPU", 0))
                for node in self.ray.nodes()
                if node.get("Alive", node.get("alive"))
            ),
            default=0,
        )

    def plan(self, config: RunConfig, console: Console, threads: int) -> tuple[bool, int, int]:
        """(GPU actors?, how many, threads each) for ``config`` on this cluster.

        An actor encodes with ``threads`` threads, the driver's choice, so that
        torch splits its reductions as a local run does and the embeddings are
        those of a local run. A CPU actor holds as many CPUs (at most a node's);
        by default the actors take half the cluster's CPUs, the rest decodes.
        """
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
            return True, n, threads
        if gpus >= 1:
            console.print(
                f"  ray: the cluster has {gpus} GPU(s); pass --device cuda to encode on them"
            )
        node_cpus = self.largest_node_cpus()
        if node_cpus and threads > node_cpus:
            console.print(
                f"  ray: {threads} encoder thread(s) chosen here, the largest node has "
                f"{node_cpus} CPU(s): the actors use {node_cpus} (torch models may then differ "
                "from a local run in the last bits; --threads sets the count)"
            )
            threads = node_cpus
        n = config.ray_actors or max(1, cpus // 2 // threads)
        if n * threads > max(threads, cpus):
            console.print(
                f"  ray: {n} actors of {threads} thread(s) asked for, the cluster has {cpus} CPU(s)"
            )
            n = max(1, cpus // threads)
        return False, n, threads

    def pool_for(
        self, encoder: Encoder, use_gpu: bool, n_actors: int, threads: int, console: Console
    ) -> EncoderPool:
        key = (encoder.fingerprint(), use_gpu, n_actors, threads)
        if self.pool is not None and self.pool.key == key and self.pool.live:
            return self.pool
        self.drop_pool()  # another model's actors hold the resources
        self.pool = EncoderPool(
            self.ray, encoder, use_gpu=use_gpu, n_actors=n_actors, threads=threads, console=console
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
def session_scope(config: RunConfig, console: Console | None = None) -> Iterator[RaySession | None]:
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


def active_session() -> RaySession | None:
    """The session of the outermost :func:`session_scope` now open, if any."""
    return _SESSION
