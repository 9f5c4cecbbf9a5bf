"""Encoding on a Ray cluster (``evaluate --ray``): warm the embedding cache, then score locally.

Before a task is scored, :func:`warm_cache` fills the driver's embedding cache
with the embeddings the task is about to ask for (:mod:`.stage`): clips are
decoded on CPU tasks (:mod:`.transport`), the cache's misses are cut into the
runner's own batches (:class:`~audiobench.batching.BatchPlanner`) and encoded
by a pool of encoder actors (:mod:`.pool`): one per GPU of the cluster with
``--device cuda`` (in the dtype a local run uses), else ``ray_actors`` CPU
actors, each with the encoder thread count of the driver. The connection and
the pool live for a run or a grid of runs (:mod:`.session`).

Then the ordinary local pass runs (:class:`~audiobench.runner.CachedEmbedder`)
and finds every embedding in the cache: the scores are those of a local run.
Frame-level outputs are prefilled too for the families that ask for them
(token-level classification probes, reconstruction).

Ray is imported only in :mod:`.session`, and only when ``--ray`` is used.
"""

from __future__ import annotations

from audiobench.distributed.session import (
    DEFAULT_ADDRESS,
    INSTALL_HINT,
    RayConnectionError,
    RaySession,
    import_ray,
    session_scope,
)
from audiobench.distributed.stage import needed_passes, warm_cache

__all__ = [
    "DEFAULT_ADDRESS",
    "INSTALL_HINT",
    "RayConnectionError",
    "RaySession",
    "import_ray",
    "needed_passes",
    "session_scope",
    "warm_cache",
]
