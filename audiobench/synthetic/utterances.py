"""Generated "utterances": speech-like audio with a known transcript and word times.

Each word of a small vocabulary has its own voice: a harmonic stack on a fundamental set by
the word, shaped by two formant-like resonances and a rise-and-fall envelope. An utterance is
3–6 words separated by short pauses, and every clip records its transcript and each word's
start and end in seconds (``word_times``, ``word start end;...``). Half the clips of each
subset are ``clean`` and half carry ``traffic_noise`` (low-passed noise at 10 dB SNR), as
SVQ's ``environment`` column does. Each clip's reference salient terms (``salient_terms``,
JSON ``[[term, start, end], ...]``) are its three words of highest IDF over its subset's
transcripts, with their times (MSEB's cascade rule, so the cascade on true word times finds
them all). The audio is not intelligible speech: real recognisers
transcribe it as noise, which is what the plumbing tests need (the transcript-truth oracle
scores 0, a wrong transcriber a known error rate).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import soundfile as sf

from audiobench.metrics.salient_terms import idf_table, top_terms
from audiobench.synthetic.writer import write_labels

__all__ = ["VOCABULARY", "write_utterances"]

#: The words utterances are made of, per subset (locale).
VOCABULARY = {
    "en_us": ("what", "time", "is", "the", "train", "to", "london", "colour", "of", "sky"),
    "sw": ("habari", "ya", "leo", "saa", "ngapi", "mvua", "kesho", "nyumba", "gari", "mji"),
}


def _word_wave(word: str, seconds: float, rng: np.random.Generator, rate: int) -> np.ndarray:
    n = int(seconds * rate)
    t = np.arange(n) / rate
    key = sum(ord(ch) for ch in word)
    f0 = 90.0 + (key % 17) * 9.0
    formants = (400.0 + (key % 7) * 90.0, 1200.0 + (key % 11) * 110.0)
    wave = np.zeros(n)
    for h in range(1, 30):
        freq = f0 * h
        if freq > rate / 2 - 200:
            break
        gain = sum(np.exp(-(((freq - f) / 160.0) ** 2)) for f in formants) + 0.02
        wave += gain * np.sin(2 * np.pi * freq * t + rng.uniform(0, 2 * np.pi))
    envelope = np.sin(np.pi * np.linspace(0.0, 1.0, n)) ** 0.6
    wave *= envelope
    peak = float(np.abs(wave).max()) + 1e-9
    return np.asarray(wave / peak)


def _traffic(n: int, rng: np.random.Generator) -> np.ndarray:
    noise = rng.standard_normal(n)
    kernel = np.ones(40) / 40.0  # crude low-pass: a rumble
    return np.convolve(noise, kernel, mode="same")


def write_utterances(
    directory: Path,
    *,
    seed: int,
    sample_rate: int = 16000,
    per_subset: int = 6,
    subsets: Sequence[str] = ("en_us", "sw"),
) -> None:
    """Write ``per_subset`` utterances per subset (locale) and ``labels.csv``.

    Columns: ``file``, ``id``, ``subset``, ``text`` (the transcript), ``environment``
    (``clean`` or ``traffic_noise``), ``word_times`` and ``salient_terms``.
    """
    directory.mkdir(parents=True, exist_ok=True)
    rows = []
    for s, subset in enumerate(subsets):
        words_of = VOCABULARY.get(subset)
        if words_of is None:
            raise ValueError(f"no vocabulary for subset {subset!r}; known: {sorted(VOCABULARY)}")
        rng = np.random.default_rng([seed, s])
        for k in range(per_subset):
            count = int(rng.integers(3, 7))
            words = [str(w) for w in rng.choice(words_of, size=count)]
            parts, times, cursor = [np.zeros(int(0.15 * sample_rate))], [], 0.15
            for word in words:
                seconds = float(rng.uniform(0.25, 0.45))
                parts.append(_word_wave(word, seconds, rng, sample_rate))
                times.append(f"{word} {cursor:.3f} {cursor + seconds:.3f}")
                cursor += seconds
                pause = float(rng.uniform(0.05, 0.15))
                parts.append(np.zeros(int(pause * sample_rate)))
                cursor += pause
            wave = 0.3 * np.concatenate(parts)
            environment = ("clean", "traffic_noise")[k % 2]
            if environment == "traffic_noise":
                noise = _traffic(len(wave), rng)
                power = np.mean(wave**2) / (np.mean(noise**2) * 10.0)  # 10 dB SNR
                wave = wave + np.sqrt(power) * noise
            clip_id = f"{subset}-{k:02d}"
            sf.write(directory / f"{clip_id}.wav", wave.astype(np.float32), sample_rate)
            rows.append(
                {
                    "file": f"{clip_id}.wav",
                    "id": clip_id,
                    "subset": subset,
                    "text": " ".join(words),
                    "environment": environment,
                    "word_times": ";".join(times),
                }
            )
    for subset in subsets:
        members = [row for row in rows if row["subset"] == subset]
        table = idf_table(row["text"] for row in members)
        for row in members:
            timed = [item.split() for item in row["word_times"].split(";")]
            chosen = top_terms([w for w, _, _ in timed], table, 3)
            row["salient_terms"] = json.dumps(
                [[term, float(timed[i][1]), float(timed[i][2])] for term, _, i in chosen]
            )
    write_labels(directory, rows)
