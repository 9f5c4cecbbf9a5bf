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

Prints clips/s and real-time factor for both and their ratio. Sizes: ``large``
is whisper-large-v3's encoder (32 layers, d=1280, 128 mels; use a GPU),
``small`` and ``tiny`` fit a CPU run.

    python benchmarks/encoder_throughput.py --size large --device cuda --clips 256
    python benchmarks/encoder_throughput.py --size tiny --clips 32        # CPU
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf
import torch

from audiobench.audio import Clip, FileAudioRef, load_waveform
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


def ours(
    weights: Path, clips: list[Clip], device: str, dtype: str | None, batch_size: int
) -> tuple[float, list[np.ndarray]]:
    encoder = WhisperEncoder(weights=str(weights), device=device, dtype=dtype)
    encoder.load()
    embedder = CachedEmbedder(encoder, None, batch_size=batch_size, workers=4)
    embedder.embed(clips[: min(len(clips), batch_size)], "warm-up")  # kernels, allocator
    t0 = time.perf_counter()
    _, vectors = embedder.embed(clips, "timed")
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - t0, vectors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="tiny")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dtype", default=None, help="audiobench side: default fp16 on CUDA")
    parser.add_argument("--clips", type=int, default=32)
    parser.add_argument("--naive-clips", type=int, default=None, help="default: --clips")
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        weights = root / "weights"
        save_random_whisper(args.size, weights)
        clips = write_clips(root, args.clips)
        audio_s = sum(sf.info(str(c.audio.path)).duration for c in clips)  # type: ignore[attr-defined]
        n_naive = args.naive_clips or args.clips
        t_naive, v_naive = naive(weights, clips[:n_naive], args.device)
        t_ours, v_ours = ours(weights, clips, args.device, args.dtype, args.batch_size)
        naive_rate = n_naive / t_naive
        our_rate = len(clips) / t_ours
        # Same numbers up to precision: cosine between the two sides' vectors.
        cosines = [
            float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
            for a, b in zip(v_naive, v_ours[:n_naive], strict=True)
        ]
        d_model, layers, _, _ = SIZES[args.size]
        print(f"Whisper-{args.size} encoder ({layers} layers, d={d_model}), device {args.device}")
        print(f"  clips: {len(clips)} ({audio_s:.0f} s of audio), batch size {args.batch_size}")
        print(f"  naive loop (fp32, one clip at a time): {naive_rate:8.2f} clips/s")
        print(
            f"  audiobench runner ({args.dtype or 'auto dtype'}):      {our_rate:8.2f} clips/s"
            f"  ({audio_s / t_ours:.1f}x real time)"
        )
        print(f"  speed-up: {our_rate / naive_rate:.2f}x")
        print(f"  agreement: min cosine naive vs audiobench = {min(cosines):.5f}")
        if args.device.startswith("cuda"):
            print(f"  peak GPU memory: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
