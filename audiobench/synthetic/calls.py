"""Generated calls by known individuals, for the classification and clustering mock tasks.

The call types and their renditions come from :mod:`audiobench.synthetic.vocalisations`;
here every clip also records which individual produced it, so that tasks can keep an
individual on one side of every split (folds by individual), and pairs of calls can be
mixed into multi-label clips. The same arguments always give the same files, bit for bit.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from audiobench.synthetic.vocalisations import SubsetSpec, render_call, sample_call_types
from audiobench.synthetic.writer import write_labels

__all__ = ["write_call_mixtures", "write_individual_calls"]

#: An individual: pitch offset (a factor) and vocal-tract resonance (centre, bandwidth in Hz).
Individual = tuple[float, tuple[float, float]]


def _spec(spec: SubsetSpec | Mapping[str, Any]) -> SubsetSpec:
    """A task declares plain data (so that declaring imports no numerics); build the spec."""
    return spec if isinstance(spec, SubsetSpec) else SubsetSpec(**spec)


def _individuals(n: int, rng: np.random.Generator) -> list[Individual]:
    """Each individual's pitch offset and vocal-tract resonance (centre, bandwidth)."""
    return [
        (
            float(2.0 ** (rng.uniform(-1.0, 1.0) / 12.0)),
            (float(rng.uniform(600, 4000)), float(rng.uniform(150, 600))),
        )
        for _ in range(n)
    ]


def write_individual_calls(
    directory: Path,
    *,
    seed: int,
    sample_rate: int = 16000,
    spec: SubsetSpec | Mapping[str, Any],
    renditions: int,
    n_folds: int = 0,
) -> int:
    """Every individual renders every call type ``renditions`` times; returns the clip count.

    ``spec`` gives the number of call types and individuals and the pitch range
    (its ``clips_per_class`` is unused: ``renditions`` sets the count). ``labels.csv`` has
    columns ``file``, ``label``, ``speaker`` (the individual) and, with ``n_folds > 0``,
    ``fold`` (``1 .. n_folds``): individual ``i`` is in fold ``i % n_folds + 1``, so no
    individual straddles two folds and every fold holds every class.
    """
    spec = _spec(spec)
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng([seed, 0])
    calls = sample_call_types(spec, rng)
    individuals = _individuals(spec.n_individuals, rng)
    rows: list[dict[str, str]] = []
    for who, (shift, formant) in enumerate(individuals):
        for call in calls:
            for k in range(renditions):
                wave = render_call(
                    call, rng, sample_rate, individual_shift=shift, individual_formant=formant
                )
                rel = f"{call.name}/ind{who}-{k:02d}.wav"
                (directory / call.name).mkdir(exist_ok=True)
                sf.write(directory / rel, wave, sample_rate, subtype="PCM_16")
                row = {"file": rel, "label": call.name, "speaker": f"ind{who}"}
                if n_folds:
                    row["fold"] = str(who % n_folds + 1)
                rows.append(row)
    write_labels(directory, rows)
    return len(rows)


def write_call_mixtures(
    directory: Path,
    *,
    seed: int,
    sample_rate: int = 16000,
    spec: SubsetSpec | Mapping[str, Any],
    renditions: int,
    splits: Sequence[str],
) -> int:
    """Multi-label clips: every single call type and every pair, mixed; returns the count.

    Each combination is rendered ``renditions`` times (each call by a random individual, at
    a random offset); the last ``len(splits) - 1`` renditions go one to each later split
    (validation, test), the others to ``splits[0]``, so every class occurs in every split.
    ``labels.csv``: ``file``, ``label`` (call types joined by ``,``), ``split``.
    """
    spec = _spec(spec)
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng([seed, 1])
    calls = sample_call_types(spec, rng)
    individuals = _individuals(spec.n_individuals, rng)
    combos = [(c,) for c in calls] + list(itertools.combinations(calls, 2))
    rows: list[dict[str, str]] = []
    (directory / "clips").mkdir(exist_ok=True)
    for index, combo in enumerate(combos):
        for k in range(renditions):
            parts = []
            for call in combo:
                shift, formant = individuals[int(rng.integers(len(individuals)))]
                parts.append(
                    render_call(
                        call, rng, sample_rate, individual_shift=shift, individual_formant=formant
                    )
                )
            wave = np.zeros(max(p.size for p in parts), dtype=np.float32)
            for part in parts:
                offset = int(rng.integers(0, wave.size - part.size + 1))
                wave[offset : offset + part.size] += part
            wave *= 0.9 / max(float(np.abs(wave).max()), 1e-9)
            rel = f"clips/mix{index:02d}-{k:02d}.wav"
            sf.write(directory / rel, wave, sample_rate, subtype="PCM_16")
            # The last len(splits) - 1 renditions go one to each later split, the rest to the
            # first (training) split.
            later = k - (renditions - len(splits))
            split = splits[later] if later > 0 else splits[0]
            label = ",".join(call.name for call in combo)
            rows.append({"file": rel, "label": label, "split": split})
    write_labels(directory, rows)
    return len(rows)
