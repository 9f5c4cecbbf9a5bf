"""Encoding throughput of a Whisper-sized encoder: audiobench's runner against a naive loop.

Random weights with the real architecture (the compute is the same as the
released checkpoint), saved with ``save_pretrained`` and loaded through the
same code path as ``--model whisper-large-v3``. Both sides encode the same
clips (written as WAV files, 1–12 s, 16 kHz) and pool them the same way:

- **audiobench**: ``CachedEmbedder`` (no cache) — threaded decoding overlapped
  with compute, length-sorted batches, fp16 on CUDA (``--dtype`` to change),
  ``torch.inference_mode``;
- **naive**: one clip at a time in fp32 under ``torch.no_grad``, decoding each
  file just before encoding it — what a first script usually does.

Prints clips/s and real-time factor for the naive loop and for the runner in
each ``--dtypes`` setting, their ratio to the naive loop, and how close each
comes to the compute bound: the encoder's FLOPs per 30 s window (counted from
the architecture: every clip fills one window) over the device's measured
dense matrix rate (bf16/fp16 products on CUDA, float32 on the CPU).
``--profile`` splits one run into its stages (host feature extraction, copies
to the device, the forward pass, the copy back, the rest: decoding, pooling,
bookkeeping), each timed with a synchronisation around it. Sizes: ``large`` is
whisper-large-v3's encoder (32 layers, d=1280, 128 mels; use a GPU), ``small``
and ``tiny`` fit a CPU run.

    python benchmarks/encoder_throughput.py --size large --device cuda --clips 256 \
        --dtypes float16 bfloat16 --profile
    python benchmarks/encoder_throughput.py --size tiny --clips 32        # CPU
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf
import torch

from audiobench.audio import Clip, FileAudioRef, load_waveform
from audiobench.machine import cpu_description
from audiobench.models.whisper import WhisperEncoder
from audiobench.runner import CachedEmbedder

SIZES = {
    # d_model, layers, heads, mel bins
    "tiny": (384, 4, 6, 80),
    "small": (768, 12, 12, 80),
    "large": (1280, 32, 20, 128),
}


def save_random_whisper(size: str, path: Path) -> None:
    from transformers import WhisperConfig, WhisperFeatureExtractor, WhisperModel

    d_model, layers, heads, mels = SIZES[size]
    torch.manual_seed(0)
    config = WhisperConfig(
        num_mel_bins=mels,
        d_model=d_model,
        encoder_layers=layers,
        encoder_attention_heads=heads,
        encoder_ffn_dim=4 * d_model,
        decoder_layers=1,  # dropped on load; kept tiny to save disk
        decoder_attention_heads=heads,
        decoder_ffn_dim=4 * d_model,
    )
    WhisperModel(config).save_pretrained(path)
    WhisperFeatureExtractor(feature_size=mels).save_pretrained(path)


def write_clips(directory: Path, n: int, seed: int = 0) -> list[Clip]:
    rng = np.random.default_rng(seed)
    clips = []
    for i in range(n):
        seconds = rng.uniform(1.0, 12.0)
        wave = 0.1 * rng.standard_normal(int(seconds * 16000)).astype(np.float32)
        path = directory / f"clip{i:04d}.wav"
        sf.write(path, wave, 16000, subtype="PCM_16")
        clips.append(Clip(id=f"clip{i:04d}", audio=FileAudioRef(path)))
    return clips


def naive(weights: Path, clips: list[Clip], device: str) -> tuple[float, list[np.ndarray]]:
    from transformers import WhisperFeatureExtractor, WhisperModel

    fe = WhisperFeatureExtractor.from_pretrained(weights)
    model = WhisperModel.from_pretrained(weights).get_encoder().to(device).eval()
    out = []
    t0 = time.perf_counter()
    with torch.no_grad():
        for clip in clips:
            wave = load_waveform(clip.audio, 16000, clip_id=clip.id)
            features = fe(wave, sampling_rate=16000, return_tensors="pt").input_features
            z = model(features.to(device)).last_hidden_state[0].float().cpu().numpy()
            out.append(np.concatenate([z.mean(axis=0), z.mean(axis=1)]))
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - t0, out


def window_flops(size: str) -> float:
    """FLOPs of one encoder forward pass over a 30 s window (1500 positions after the two
    convolutions), counting a multiply-add as two: the convolutions, then per layer the four
    attention projections, the two feed-forward products and the two attention products."""
    d, layers, _, mels = SIZES[size]
    t = 1500
    convolutions = 2 * 3 * (mels * d * 2 * t + d * d * t)
    per_layer = 2 * (4 * t * d * d + 2 * t * d * 4 * d) + 2 * 2 * t * t * d
    return float(convolutions + layers * per_layer)


def matrix_rate(device: str, dtype: torch.dtype) -> float:
    """Measured dense matrix-product rate (FLOP/s) of ``device`` in ``dtype``: random
    operands (zeros run faster on some GPUs), warmed up, the best of several timings."""
    n = 8192 if device.startswith("cuda") else 1024
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    best = float("inf")
    for _ in range(6):
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(5):
            a @ b
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / 5)
    return 2.0 * n**3 / best


class StageTimes:
    """Wall time of the encoder's stages, each fenced by a device synchronisation."""

    def __init__(self, device: str) -> None:
        self.device = device
        self.seconds: dict[str, float] = {}

    def sync(self) -> None:
        if self.device.startswith("cuda"):
            torch.cuda.synchronize()

    def wrap(self, name: str, function: Any) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.sync()
            t0 = time.perf_counter()
            out = function(*args, **kwargs)
            self.sync()
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - t0
            return out

        return timed


def instrument(encoder: WhisperEncoder, times: StageTimes) -> None:
    """Time the feature extractor, the copies to the device, the forward pass and the copy
    back of ``encoder`` (the stages a profile of the runner shows)."""
    import audiobench.models.whisper as whisper_module

    encoder.feature_extractor = times.wrap("features (host)", encoder.feature_extractor)
    encoder._to_device = times.wrap("copy to device", encoder._to_device)  # type: ignore[method-assign]
    encoder.model.forward = times.wrap("forward", encoder.model.forward)
    whisper_module.to_numpy = times.wrap("copy back", whisper_module.to_numpy)  # type: ignore[attr-defined]


def ours(
    weights: Path,
    clips: list[Clip],
    device: str,
    dtype: str | None,
    batch_size: int,
    times: StageTimes | None = None,
) -> tuple[float, list[np.ndarray]]:
    encoder = WhisperEncoder(weights=str(weights), device=device, dtype=dtype)
    encoder.load()
    embedder = CachedEmbedder(encoder, None, batch_size=batch_size, workers=4)
    embedder.embed(clips[: min(len(clips), batch_size)], "warm-up")  # kernels, allocator
    if times is not None:
        instrument(encoder, times)
    t0 = time.perf_counter()
    _, vectors = embedder.embed(clips, "timed")
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - t0
    del encoder, embedder
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
    return elapsed, vectors


def describe_device(device: str) -> str:
    if device.startswith("cuda"):
        props = torch.cuda.get_device_properties(device)
        memory = props.total_memory / 2**30
        return f"{props.name} ({props.multi_processor_count} SMs, {memory:.0f} GiB)"
    return cpu_description()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="tiny")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument(
        "--dtypes",
        nargs="+",
        default=None,
        help="runner dtypes to measure (default: the encoder's own, fp16 on CUDA)",
    )
    parser.add_argument("--clips", type=int, default=32)
    parser.add_argument("--naive-clips", type=int, default=None, help="default: --clips")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--profile", action="store_true", help="time the runner's stages")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        weights = root / "weights"
        save_random_whisper(args.size, weights)
        clips = write_clips(root, args.clips)
        audio_s = sum(sf.info(str(c.audio.path)).duration for c in clips)  # type: ignore[attr-defined]
        n_naive = args.naive_clips or args.clips
        t_naive, v_naive = naive(weights, clips[:n_naive], args.device)
        naive_rate = n_naive / t_naive
        cuda = args.device.startswith("cuda")
        peak_dtype = torch.bfloat16 if cuda else torch.float32
        peak = matrix_rate(args.device, peak_dtype)
        bound = peak / window_flops(args.size)
        d_model, layers, _, _ = SIZES[args.size]
        print(f"Whisper-{args.size} encoder ({layers} layers, d={d_model}), device {args.device}")
        print(f"  device: {describe_device(args.device)}")
        print(
            f"  clips: {len(clips)} ({audio_s:.0f} s of audio, each one 30 s window), "
            f"batch size {args.batch_size}"
        )
        print(
            f"  bound: {window_flops(args.size) / 1e12:.2f} TFLOP per window; measured "
            f"{str(peak_dtype).removeprefix('torch.')} matrix rate {peak / 1e12:.3g} TFLOP/s "
            f"-> {bound:.0f} windows/s"
        )
        print(
            f"  naive loop (fp32, one clip at a time): {naive_rate:8.2f} clips/s"
            f"  ({naive_rate / bound:.1%} of the bound)"
        )
        for dtype in args.dtypes or [None]:
            times = StageTimes(args.device) if args.profile else None
            t_ours, v_ours = ours(weights, clips, args.device, dtype, args.batch_size, times)
            our_rate = len(clips) / t_ours
            # Same numbers up to precision: cosine between the two sides' vectors.
            cosines = [
                float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
                for a, b in zip(v_naive, v_ours[:n_naive], strict=True)
            ]
            print(
                f"  audiobench runner ({dtype or 'auto dtype'}): {our_rate:8.2f} clips/s"
                f"  ({audio_s / t_ours:.1f}x real time, {our_rate / naive_rate:.2f}x naive, "
                f"{our_rate / bound:.1%} of the bound, min cosine vs naive {min(cosines):.5f})"
            )
            if times is not None:
                rest = t_ours - sum(times.seconds.values())
                stages = {**times.seconds, "rest (decode, pool, bookkeeping)": rest}
                for name, seconds in stages.items():
                    print(f"      {name:<34}{seconds:8.2f} s  {seconds / t_ours:6.1%}")
        if cuda:
            print(f"  peak GPU memory: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
