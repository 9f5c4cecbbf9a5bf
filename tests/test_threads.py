"""Encoder threads, chosen on purpose; embeddings that do not depend on thread counts; a
warning when encoding slows down; a Ray address where nothing answers fails fast."""

from __future__ import annotations

import socket
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
import torch
from threadpoolctl import threadpool_info, threadpool_limits
from typer.testing import CliRunner

from audiobench import torch_runtime
from audiobench.cli import app
from audiobench.distributed import RayConnectionError
from audiobench.distributed.session import check_reachable
from audiobench.models.baselines import RandomProjectionEncoder
from audiobench.results import load_result
from audiobench.runner import RATE_BATCHES, CachedEmbedder, SlowEncodingWarning
from audiobench.sources import load_folder_clips
from tests.conftest import write_tone
from tests.encoders import StatsEncoder


def _numpy_blas_threads() -> list[int]:
    """Threads of the BLAS libraries outside torch, as threadpoolctl reports them."""
    torch_dir = str(Path(torch.__file__).parent)
    return [
        info["num_threads"]
        for info in threadpool_info()
        if info["user_api"] == "blas" and not str(info["filepath"]).startswith(torch_dir)
    ]


class ThreadRecorder(StatsEncoder):
    """Records torch's and numpy's BLAS thread counts inside every call."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.seen: list[tuple[int, list[int]]] = []

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        self.seen.append((torch.get_num_threads(), _numpy_blas_threads()))
        return super().encode_audio(waveforms)


class SleepyEncoder(StatsEncoder):
    """Sleeps ``delays[i]`` seconds in its i-th call (the last delay afterwards)."""

    def __init__(self, delays: Sequence[float], **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.delays = list(delays)

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        time.sleep(self.delays[min(len(self.calls), len(self.delays) - 1)])
        return super().encode_audio(waveforms)


def test_default_threads_leave_the_decoding_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    from audiobench.metrics import runtime

    monkeypatch.setattr(runtime, "available_cores", lambda: 8)
    assert torch_runtime.default_threads(2) == 6
    monkeypatch.setattr(runtime, "available_cores", lambda: 2)
    assert torch_runtime.default_threads(2) == 1  # at least one
    assert torch_runtime.default_threads(0) == 2


def test_encoding_runs_with_the_chosen_threads_and_single_threaded_numpy_blas(
    labelled_folder: Path,
) -> None:
    clips = load_folder_clips(labelled_folder)
    before = torch.get_num_threads()
    encoder = ThreadRecorder()
    embedder = CachedEmbedder(encoder, None, batch_size=4, threads=1)
    with threadpool_limits(limits=2, user_api="blas"):
        embedder.embed(clips, "threads")
        outside = _numpy_blas_threads()
    assert encoder.seen and all(torch_threads == 1 for torch_threads, _ in encoder.seen)
    # numpy's BLAS gives other last bits at other thread counts: one thread while encoding.
    assert all(blas == [1] * len(blas) for _, blas in encoder.seen)
    assert torch.get_num_threads() == before  # restored
    assert outside == [2] * len(outside)  # and the caller's BLAS setting too
    with pytest.raises(ValueError, match="threads must be at least 1"):
        CachedEmbedder(StatsEncoder(), None, threads=0)


def test_embeddings_do_not_depend_on_the_callers_blas_threads(tmp_path: Path) -> None:
    folder = tmp_path / "clips"
    for k in range(6):
        write_tone(folder / "tones" / f"t{k}.wav", freq=220.0 * (k + 1), seconds=2.5 + 0.3 * k)
    clips = load_folder_clips(folder)
    results = []
    for limit in (1, 2):
        encoder = RandomProjectionEncoder()
        encoder.load()
        with threadpool_limits(limits=limit, user_api="blas"):
            _, arrays = CachedEmbedder(encoder, None, batch_size=3, threads=2).embed(clips, "x")
        results.append(arrays)
    for a, b in zip(*results, strict=True):
        assert np.array_equal(a, b)


def test_threads_option_is_recorded_in_the_result(tmp_path: Path) -> None:
    out = tmp_path / "results"
    args = ["evaluate", "--task", "SyntheticVocalisations", "--model", "log-mel"]
    args += ["--threads", "1", "--output-dir", str(out), "--cache-dir", str(tmp_path / "c")]
    args += ["--permutations", "20", "--bootstrap", "0", "--no-progress"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.stderr
    saved = load_result(out / "log-mel" / "v1" / "SyntheticVocalisations.json")
    assert saved.environment.threads == 1
    bad = CliRunner().invoke(app, [*args[:4], "--threads", "0"])
    assert bad.exit_code == 2


def test_a_slowdown_is_warned_once_and_a_steady_encoder_is_not(labelled_folder: Path) -> None:
    clips = load_folder_clips(labelled_folder)  # 12 clips: 6 batches of 2
    slow = SleepyEncoder([0.0] * RATE_BATCHES + [0.2])
    embedder = CachedEmbedder(slow, None, batch_size=2)
    with pytest.warns(SlowEncodingWarning, match="set them with --threads") as caught:
        embedder.embed(clips, "slow")
    assert len([w for w in caught if w.category is SlowEncodingWarning]) == 1
    assert any("encoding slowed" in event for event in embedder.stats.events)

    steady = SleepyEncoder([0.02])
    with warnings.catch_warnings():
        warnings.simplefilter("error", SlowEncodingWarning)
        CachedEmbedder(steady, None, batch_size=2).embed(clips, "steady")


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_ray_address_where_nothing_answers_fails_fast() -> None:
    port = _closed_port()
    started = time.perf_counter()
    with pytest.raises(RayConnectionError) as raised:
        check_reachable(f"127.0.0.1:{port}")
    assert time.perf_counter() - started < 15
    message = str(raised.value)
    assert f"--ray 127.0.0.1:{port}: no Ray cluster answers at 127.0.0.1:{port}" in message
    assert f"ray start --head --port {port}" in message
    with pytest.raises(RayConnectionError):
        check_reachable(f"ray://127.0.0.1:{port}")


def test_the_cli_says_so_in_one_line(tmp_path: Path) -> None:
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        pytest.skip("a Ray instance is already running in this process")
    port = _closed_port()
    args = ["evaluate", "--task", "SyntheticVocalisations", "--model", "log-mel"]
    args += ["--ray", f"127.0.0.1:{port}", "--output-dir", str(tmp_path / "r")]
    args += ["--cache-dir", str(tmp_path / "c"), "--no-progress"]
    started = time.perf_counter()
    result = CliRunner().invoke(app, args)
    assert time.perf_counter() - started < 60
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "no Ray cluster answers" in errors[0], result.stderr
