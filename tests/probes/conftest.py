"""Fixtures for the probe tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch
from threadpoolctl import threadpool_limits


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread() -> Iterator[None]:
    """Train the tiny test models on one thread (torch, BLAS and OpenMP).

    Their arrays are far too small to gain from a second thread, while on a loaded machine
    (or under pytest-xdist) spinning worker threads make each step many times slower.
    Module scope, so that it is in force before the module-scoped fitted probes are built.
    """
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(limits=1):
            yield
    finally:
        torch.set_num_threads(before)
