"""Encoding on a Ray cluster: the same embeddings and scores as a local run, faults, grids.

One local Ray instance (2 CPUs) serves the whole module. The test encoders
below are shipped to the actors by reference (``tests.test_ray``), which the
workers import from the repository root on their ``PYTHONPATH``.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

import audiobench
from audiobench.audio import ArrowAudioRef, Clip, FileAudioRef, decode_clip, waveform_hash
from audiobench.cli import _bare_ray, app
from audiobench.distributed import session as ray_session
from audiobench.distributed import stage as ray_stage
from audiobench.distributed import transport
from audiobench.encoder import Encoder, ModelMeta, OutputKind
from audiobench.results import load_result
from tests.conftest import folder_digest, write_tone

ray = pytest.importorskip("ray")

REPO = Path(__file__).resolve().parents[1]
FAST = {"n_permutations": 30, "n_bootstrap": 10, "distances": ["cosine"]}
QUIET = {"progress": False, "count_flops": False}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """A local Ray instance; its workers see an offline hub and this repository."""
    temp = tempfile.mkdtemp(prefix="abray-", dir="/tmp")  # sockets need a short path
    env = {
        "RAY_AUTH_MODE": "disabled",
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": os.path.join(temp, "hf-home"),
        "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p),
    }
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    ray.init(num_cpus=2, include_dashboard=False, _temp_dir=temp, logging_level="WARNING")
    try:
        yield ray
    finally:
        ray.shutdown()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(temp, ignore_errors=True)


class CountingEncoder(Encoder):
    """Waveform statistics; each batch it encodes leaves a file ``<pid>-<n clips>-<id>``.

    With ``die_on = N`` the N-th batch of an actor's life kills its process,
    once per ``log_dir`` (the marker file says it happened).
    """

    meta = ModelMeta(
        name="test-ray-counting",
        revision="t1",
        sample_rate=16000,
        output_kind=OutputKind.VECTOR,
        embedding_dim=4,
    )

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.log_dir: str | None = None
        self.die_on = 0
        self.n_batches = 0

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        self.n_batches += 1
        if self.log_dir is not None and self.n_batches == self.die_on:
            marker = Path(self.log_dir) / "died"
            if not marker.exists():
                marker.touch()
                os._exit(1)  # a crash mid-batch: nothing returned, nothing logged
        out = [
            np.array([w.mean(), w.std(), np.abs(w).max(), len(w) / 16000], dtype=np.float32)
            for w in waveforms
        ]
        if self.log_dir is not None:
            name = f"{os.getpid()}-{len(waveforms)}-{uuid.uuid4().hex[:8]}"
            (Path(self.log_dir) / name).touch()
        return out


def _encoder(log_dir: Path | None = None, die_on: int = 0) -> CountingEncoder:
    encoder = CountingEncoder()
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
        encoder.log_dir = str(log_dir)
    encoder.die_on = die_on
    return encoder


def _encoded_by(log_dir: Path) -> dict[int, int]:
    """Clips encoded per process id, from the encoder's log files."""
    counts: dict[int, int] = {}
    for entry in log_dir.iterdir():
        if entry.name != "died":
            pid, n, _ = entry.name.split("-")
            counts[int(pid)] = counts.get(int(pid), 0) + int(n)
    return counts


def _folder(
    root: Path, classes: Sequence[str] = ("low", "mid", "high"), per_class: int = 4
) -> Path:
    bases = {"low": 300.0, "mid": 1200.0, "high": 4000.0, "top": 6000.0}
    rng = np.random.default_rng(len(root.name))
    for label in classes:
        for k in range(per_class):
            write_tone(
                root / label / f"{label}{k}.wav",
                freq=bases[label] * (1 + 0.02 * rng.standard_normal()),
                seconds=0.2 + 0.03 * k,
            )
    return root


def _cache_rows(cache_dir: Path) -> dict[tuple[str, str], tuple[str, str, bytes]]:
    conn = sqlite3.connect(cache_dir / "embeddings.sqlite")
    try:
        rows = conn.execute("SELECT fingerprint, clip_hash, dtype, shape, data FROM embeddings")
        return {(fp, h): (dtype, shape, data) for fp, h, dtype, shape, data in rows}
    finally:
        conn.close()


def _same_embeddings(a: Path, b: Path) -> int:
    rows_a, rows_b = _cache_rows(a), _cache_rows(b)
    assert rows_a.keys() == rows_b.keys()
    for key, (dtype, shape, data) in rows_a.items():
        other = rows_b[key]
        assert (dtype, shape) == other[:2]
        x = np.frombuffer(data, dtype=np.dtype(dtype))
        y = np.frombuffer(other[2], dtype=np.dtype(dtype))
        np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-7)
    return len(rows_a)


def test_ray_run_matches_local_embeddings_and_scores(cluster: Any, tmp_path: Path) -> None:
    # Token-level probes need frame outputs too: both passes are prefilled on the cluster.
    options = {"probes": ["knn", "protobin"]}
    [local] = audiobench.evaluate(
        "MockClassification",
        "log-mel",
        output_dir=tmp_path / "local",
        cache_dir=tmp_path / "local-cache",
        task_options=options,
        **QUIET,
    )
    [remote] = audiobench.evaluate(
        "MockClassification",
        "log-mel",
        output_dir=tmp_path / "ray",
        cache_dir=tmp_path / "ray-cache",
        task_options=options,
        ray="default",
        **QUIET,
    )
    n_clips = local.cache.n_clips // 2  # counted once per pass
    info = remote.environment.ray
    assert info is not None and info.workers == 1 and info.gpus == 0
    assert info.n_dispatched == n_clips and info.n_encoded == n_clips
    # The local pass found everything in the cache; vectors and frames alike.
    assert remote.cache.n_encoded == 0 and remote.cache.n_cached == local.cache.n_clips
    assert _same_embeddings(tmp_path / "local-cache", tmp_path / "ray-cache") == 2 * n_clips
    assert remote.scores == local.scores and remote.main_score == local.main_score
    # Where it ran is not part of the run: a local run reuses the Ray result as is.
    assert remote.run == local.run and local.environment.ray is None
    [again] = audiobench.evaluate(
        "MockClassification",
        "log-mel",
        output_dir=tmp_path / "ray",
        cache_dir=tmp_path / "ray-cache",
        task_options=options,
        **QUIET,
    )
    assert again.date == remote.date and again.environment.ray == info


def test_ray_and_local_give_the_same_bits_for_a_blas_model(cluster: Any, tmp_path: Path) -> None:
    """random-projection multiplies in numpy's float32 BLAS, whose last bits depend on its thread
    count: a Ray actor (one CPU) and a local run (more threads) once gave GSR 0.4594054 and
    0.4594116. Every encode now runs numpy's BLAS on one thread, wherever it runs."""
    options = {"n_permutations": 20, "n_bootstrap": 0}
    runs = []
    for where, ray in (("local", None), ("ray", "default")):
        [result] = audiobench.evaluate(
            "SyntheticVocalisations",
            "random-projection",
            output_dir=tmp_path / where,
            cache_dir=tmp_path / f"{where}-cache",
            task_options=options,
            ray=ray,
            **QUIET,
        )
        runs.append(result)
    local, remote = runs
    assert remote.environment.ray is not None and remote.environment.ray.n_encoded == 160
    assert remote.scores == local.scores and remote.main_score == local.main_score


def test_clips_in_the_cache_are_never_dispatched(cluster: Any, tmp_path: Path) -> None:
    full = _folder(tmp_path / "calls")
    part = tmp_path / "part"
    for label in ("low", "mid"):  # the same audio, so the same cache keys
        shutil.copytree(full / label, part / label)
    settings = dict(cache_dir=tmp_path / "cache", task_options=FAST, **QUIET)
    audiobench.evaluate(f"folder:{part}", _encoder(), output_dir=tmp_path / "r", **settings)

    log = tmp_path / "log"
    [result] = audiobench.evaluate(
        f"folder:{full}", _encoder(log), output_dir=tmp_path / "r", ray="default", **settings
    )
    info = result.environment.ray
    assert info is not None and info.n_dispatched == 4 and info.n_encoded == 4
    encoded = _encoded_by(log)
    assert os.getpid() not in encoded and sum(encoded.values()) == 4  # the "high" clips only
    assert result.cache.n_encoded == 0

    # Everything cached: nothing is dispatched, no actor is needed.
    [rerun] = audiobench.evaluate(
        f"folder:{full}",
        _encoder(log),
        output_dir=tmp_path / "r",
        ray="default",
        overwrite=True,
        **settings,
    )
    assert rerun.environment.ray is not None and rerun.environment.ray.n_dispatched == 0
    assert sum(_encoded_by(log).values()) == 4
    assert rerun.scores == result.scores


def test_actor_killed_mid_run_is_restarted_and_nothing_is_recomputed(
    cluster: Any, tmp_path: Path
) -> None:
    calls = _folder(tmp_path / "calls", per_class=6)
    settings = dict(task_options=FAST, batch_size=2, **QUIET)
    [local] = audiobench.evaluate(
        f"folder:{calls}",
        _encoder(),
        output_dir=tmp_path / "local",
        cache_dir=tmp_path / "local-cache",
        **settings,
    )
    log = tmp_path / "log"
    [remote] = audiobench.evaluate(
        f"folder:{calls}",
        _encoder(log, die_on=3),  # the actor's third batch kills it, once
        output_dir=tmp_path / "ray",
        cache_dir=tmp_path / "ray-cache",
        ray="default",
        ray_actors=1,
        **settings,
    )
    assert (log / "died").exists()
    encoded = _encoded_by(log)
    assert len(encoded) == 2  # two lives of the one actor
    # The lost batch is redone. Ray delivers a call's reply at least once, so the
    # batch finished just before the crash may be redone too when the crash cut
    # its reply off; nothing the driver had received is encoded again.
    redone = sum(encoded.values()) - 18
    assert redone in (0, 2), encoded
    info = remote.environment.ray
    assert info is not None and info.restarts == 1 and info.n_encoded == 18
    assert _same_embeddings(tmp_path / "local-cache", tmp_path / "ray-cache") == 18
    assert remote.scores == local.scores


def test_interrupt_stops_the_cluster_and_keeps_committed_batches(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _folder(tmp_path / "calls")
    finished = ray_stage.Stage._finished
    seen: list[int] = []

    def interrupted(self: Any, ref: Any) -> None:
        finished(self, ref)
        seen.append(1)
        if len(seen) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(ray_stage.Stage, "_finished", interrupted)
    settings = dict(
        cache_dir=tmp_path / "cache",
        output_dir=tmp_path / "r",
        task_options=FAST,
        batch_size=3,
        ray="default",
        **QUIET,
    )
    with pytest.raises(KeyboardInterrupt):
        audiobench.evaluate(f"folder:{calls}", _encoder(), **settings)
    assert ray_session.active_session() is None  # the session closed, its actors killed
    assert len(_cache_rows(tmp_path / "cache")) == 6  # two committed batches of 3
    assert not (tmp_path / "r").exists()

    monkeypatch.setattr(ray_stage.Stage, "_finished", finished)
    [result] = audiobench.evaluate(f"folder:{calls}", _encoder(), **settings)
    assert result.environment.ray is not None and result.environment.ray.n_dispatched == 6


def test_grid_of_tasks_and_models_on_ray(cluster: Any, tmp_path: Path) -> None:
    first, second = _folder(tmp_path / "first"), _folder(tmp_path / "second", ("mid", "top"))
    broken = _folder(tmp_path / "broken", ("low", "high"))
    (broken / "high" / "high1.wav").write_bytes(b"not audio")
    out = tmp_path / "results"
    args = ["evaluate", "--task", f"folder:{first}", "--task", f"folder:{second}"]
    args += ["--model", "log-mel", "--model", "mfcc", "--ray", "--output-dir", str(out)]
    args += ["--no-progress", "--no-flops", "--permutations", "30", "--bootstrap", "10"]
    args += ["--cache-dir", str(tmp_path / "cache")]

    # A broken task fails with each model; every other pair runs and is written.
    result = CliRunner().invoke(app, [*args, "--task", f"folder:{broken}"])
    assert result.exit_code == 1, result.stderr
    failures = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(failures) == 3, result.stderr
    for model in ("log-mel", "mfcc"):
        assert f"error: folder:{broken} with {model}: clip 'high/high1'" in result.stderr
    assert "2 of 6 runs failed" in result.stderr
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.json"))
    assert written == [
        f"{model}/v1/Folder-{task}-{folder_digest(tmp_path / task)}.json"
        for model in ("log-mel", "mfcc")
        for task in ("first", "second")
    ]
    for path in out.rglob("*.json"):
        ran = load_result(path).environment.ray
        assert ran is not None and ran.n_encoded > 0

    # A rerun does only what is missing: here, nothing.
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.stderr
    assert result.stderr.count("reusing existing result") == 4
    assert "ray:" not in result.stderr


def test_bare_ray_flag_means_the_default_cluster() -> None:
    assert _bare_ray(["evaluate", "--ray", "--model", "x"]) == [
        "evaluate",
        "--ray=default",
        "--model",
        "x",
    ]
    assert _bare_ray(["evaluate", "-m", "x", "--ray"])[-1] == "--ray=default"
    assert _bare_ray(["evaluate", "--ray", "head:6379"])[1:] == ["--ray", "head:6379"]


def test_audio_reaches_workers_as_bytes_or_paths(tmp_path: Path) -> None:
    """What the workers decode is the waveform the local runner decodes, either way."""
    import datasets

    path = write_tone(tmp_path / "a.wav", freq=500.0, sr=22050)
    table = datasets.Dataset.from_dict({"audio": [{"bytes": path.read_bytes(), "path": None}]})
    refs = [FileAudioRef(path), ArrowAudioRef(table, 0, "audio", "hub[train]")]
    for ref in refs:
        expected = decode_clip(Clip(id="a", audio=ref), 16000, 24000)
        for mode in ("bytes", "paths"):
            meta, wave = transport.decode_part(
                [("a", transport.payload(ref, mode))], 16000, 24000, 600.0
            )
            assert meta == [(waveform_hash(expected, 24000), len(expected))]
            np.testing.assert_array_equal(wave, expected)
    shipped = transport.payload(refs[0], "bytes")
    assert isinstance(shipped, transport.BytesAudioRef) and "a.wav" in shipped.location
    # Unreadable on the driver: left to the local pass, which reports it.
    assert transport.payload(FileAudioRef(tmp_path / "missing.wav"), "bytes") is None
    assert transport.decode_part([("m", None)], 16000, 16000, 600.0) == ([None], None)


def test_missing_ray_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r"pip install 'audiobench\[ray\]'"):
        audiobench.evaluate(
            "SyntheticVocalisations", "log-mel", output_dir=tmp_path, ray="default", **QUIET
        )
