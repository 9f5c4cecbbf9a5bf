"""Throughput of the Ray embedding stage (``evaluate --ray``) with 1 and 2 encoder actors.

Generated clips (WAV files, 1–12 s) form a folder task; the stage encodes all
of them into an empty cache, as a first ``evaluate --ray`` run would. The
model is a Whisper encoder with random weights saved locally (the compute of
the released checkpoint, no download): ``tiny`` on CPU actors, or with
``--device cuda`` ``large`` (whisper-large-v3's encoder: 32 layers, d=1280)
on one GPU actor per GPU. Each setting starts its actors and warms them up on
a few clips first, so the figures are steady-state clips/s, not model loading.

Prints, per setting, clips/s of the whole stage (decoding tasks, transport,
encoding, cache commits) and the ratio to one actor; the local runner on the
same clips is the reference.

    python benchmarks/ray_throughput.py                          # CPU: 1 and 2 actors
    python benchmarks/ray_throughput.py --device cuda --size large --clips 512
    python benchmarks/ray_throughput.py --address ray://head:10001 --actors 1 2 4 8
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import torch
from rich.console import Console

sys.path.insert(0, str(Path(__file__).resolve().parent))

from encoder_throughput import SIZES, save_random_whisper, write_clips

from audiobench import distributed, registry
from audiobench.cache import EmbeddingCache
from audiobench.evaluation import RunConfig
from audiobench.machine import cpu_description
from audiobench.models.whisper import WhisperEncoder
from audiobench.runner import CachedEmbedder


def stage_rate(
    task: object, clips: list, encoder: WhisperEncoder, config: RunConfig, cache_dir: Path
) -> tuple[float, int]:
    """clips/s of one cold stage (empty cache) with the actors already started."""
    console = Console(stderr=True, soft_wrap=True)
    warm_up = clips[: (config.ray_actors or 1) * config.batch_size]  # a batch per actor
    with EmbeddingCache(cache_dir / "warm-up") as cache:  # starts the actors, loads the model
        distributed.warm_cache(task, encoder, cache, warm_up, config, console)  # type: ignore[arg-type]
    with EmbeddingCache(cache_dir / "timed") as cache:
        info = distributed.warm_cache(task, encoder, cache, clips, config, console)  # type: ignore[arg-type]
    assert info is not None and info.n_encoded == len(clips), info
    return info.n_encoded / info.wall_s, info.workers


def local_rate(encoder: WhisperEncoder, clips: list, batch_size: int, threads: int) -> float:
    encoder.load()
    embedder = CachedEmbedder(encoder, None, batch_size=batch_size, threads=threads)
    embedder.embed(clips[:4], "warm-up")
    t0 = time.perf_counter()
    embedder.embed(clips, "timed")
    if encoder.device.startswith("cuda"):
        torch.cuda.synchronize()
    return len(clips) / (time.perf_counter() - t0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", choices=sorted(SIZES), default=None, help="tiny / large")
    parser.add_argument("--device", default="cpu", help="cpu (CPU actors) or cuda (GPU actors)")
    parser.add_argument("--clips", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--actors", type=int, nargs="+", default=None, help="default: 1 2")
    parser.add_argument("--address", default=None, help="join this cluster (default: local)")
    parser.add_argument("--no-local", action="store_true", help="skip the local reference")
    parser.add_argument(
        "--threads", type=int, default=1, help="encoder threads per actor and locally (default 1)"
    )
    args = parser.parse_args()
    gpu = args.device.startswith("cuda")
    if gpu and not torch.cuda.is_available() and args.address is None:
        parser.error("--device cuda: this machine has no CUDA device")
    size = args.size or ("large" if gpu else "tiny")

    import ray

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    with tempfile.TemporaryDirectory(prefix="abbench-", dir="/tmp") as tmp:
        root = Path(tmp)
        if args.address:
            ray.init(address=args.address, logging_level="WARNING")
        else:
            ray.init(include_dashboard=False, _temp_dir=str(root / "ray"), logging_level="WARNING")
        resources = ray.cluster_resources()
        weights = root / "weights"
        save_random_whisper(size, weights)
        (root / "clips").mkdir()
        write_clips(root / "clips", args.clips)
        task = registry.tasks.create("folder:" + str(root / "clips"))
        clips = task.load_data()
        encoder = WhisperEncoder(weights=str(weights), device=args.device)
        d_model, layers, _, _ = SIZES[size]
        print(
            f"Whisper-{size} encoder ({layers} layers, d={d_model}, random weights), "
            f"{len(clips)} clips of 1-12 s, batch size {args.batch_size}, {encoder.dtype}"
        )
        print(f"  driver CPU: {cpu_description()}")
        print(
            f"  cluster: {int(resources.get('CPU', 0))} CPU(s), "
            f"{int(resources.get('GPU', 0))} GPU(s), {len(ray.nodes())} node(s)"
        )
        settings = args.actors or ([int(resources.get("GPU", 1))] if gpu else [1, 2])
        rates: dict[int, float] = {}
        with distributed.session_scope(RunConfig(ray=distributed.DEFAULT_ADDRESS)):
            for n in settings:
                config = RunConfig(
                    ray=distributed.DEFAULT_ADDRESS,
                    ray_actors=n,
                    device=args.device,
                    batch_size=args.batch_size,
                    threads=args.threads,
                    progress=False,
                )
                rate, workers = stage_rate(task, clips, encoder, config, root / f"cache-{n}")
                rates[workers] = rate
        base = rates[min(rates)]
        for workers, rate in rates.items():
            kind = "GPU" if gpu else "CPU"
            print(
                f"  ray, {workers} {kind} actor(s): {rate:8.2f} clips/s"
                f"  ({rate / base:.2f}x {min(rates)} actor)"
            )
        if not args.no_local:
            local = local_rate(encoder, clips, args.batch_size, args.threads)
            print(f"  local runner ({args.threads} torch thread(s)): {local:8.2f} clips/s")
        ray.shutdown()


if __name__ == "__main__":
    main()
