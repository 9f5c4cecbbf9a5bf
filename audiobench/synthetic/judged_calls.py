"""Generated calls for the reconstruction and perceptual-alignment mock tasks.

:func:`render_calls` writes the renditions of a few generated call types (no
individuals recorded); :func:`write_labelled_calls` labels each clip with its call
type, and :func:`write_judged_calls` adds one generated triplet and one generated
2AFC trial per clip in which the same call type is always judged closer. The same
arguments always give the same files, bit for bit.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from audiobench.synthetic.vocalisations import SubsetSpec, render_call, sample_call_types
from audiobench.synthetic.writer import write_labels

__all__ = ["render_calls", "write_judged_calls", "write_labelled_calls"]


def _spec(spec: SubsetSpec | Mapping[str, Any]) -> SubsetSpec:
    return spec if isinstance(spec, SubsetSpec) else SubsetSpec(**spec)


def render_calls(
    directory: Path, spec: SubsetSpec | Mapping[str, Any], *, seed: int, sample_rate: int
) -> list[tuple[str, str, int, int]]:
    """Write ``spec.n_classes × spec.clips_per_class`` generated calls as 16-bit WAV files.

    Returns ``(clip id, relative path, call type index, rendition index)`` per
    clip, call type by call type.
    """
    spec = _spec(spec)
    rng = np.random.default_rng(seed)
    calls = sample_call_types(spec, rng)
    individuals = [
        (
            float(2.0 ** (rng.uniform(-1.0, 1.0) / 12.0)),
            (float(rng.uniform(600, 4000)), float(rng.uniform(150, 600))),
        )
        for _ in range(spec.n_individuals)
    ]
    (directory / "calls").mkdir(parents=True, exist_ok=True)
    clips = []
    for c, call in enumerate(calls):
        for k in range(spec.clips_per_class):
            shift, formant = individuals[int(rng.integers(spec.n_individuals))]
            wave = render_call(
                call, rng, sample_rate, individual_shift=shift, individual_formant=formant
            )
            clip_id = f"{call.name}-{k:02d}"
            rel = f"calls/{clip_id}.wav"
            sf.write(directory / rel, wave, sample_rate, subtype="PCM_16")
            clips.append((clip_id, rel, c, k))
    return clips


def write_labelled_calls(
    directory: Path, *, seed: int, sample_rate: int, spec: SubsetSpec | Mapping[str, Any]
) -> None:
    """The calls of :func:`render_calls` with ``labels.csv`` (id, file, call type)."""
    clips = render_calls(directory, spec, seed=seed, sample_rate=sample_rate)
    rows = [
        {"id": clip_id, "file": rel, "label": clip_id.rsplit("-", 1)[0]}
        for clip_id, rel, _, _ in clips
    ]
    write_labels(directory, rows)


def write_judged_calls(
    directory: Path,
    *,
    seed: int,
    sample_rate: int,
    spec: SubsetSpec | Mapping[str, Any],
    trial_seed: int = 7,
) -> None:
    """The calls of :func:`render_calls` and one triplet and one 2AFC trial per clip.

    ``labels.csv`` holds, per clip, its triplet (``positive``: another rendition of
    its call type, ``negative``: a rendition of another type) and its 2AFC trial
    (``left``/``right`` in random order, ``decision`` names the same-type side).
    """
    spec = _spec(spec)
    clips = render_calls(directory, spec, seed=seed, sample_rate=sample_rate)
    n_types, per_type = spec.n_classes, spec.clips_per_class
    ids = [[""] * per_type for _ in range(n_types)]
    for clip_id, _, c, k in clips:
        ids[c][k] = clip_id
    rng = np.random.default_rng(trial_seed)
    rows = []
    for clip_id, rel, c, k in clips:
        other = (c + 1 + int(rng.integers(n_types - 1))) % n_types
        same_left = bool(rng.integers(2))
        same, different = ids[c][(k + 2) % per_type], ids[other][int(rng.integers(per_type))]
        rows.append(
            {
                "id": clip_id,
                "file": rel,
                "label": clip_id.rsplit("-", 1)[0],
                "positive": ids[c][(k + 1) % per_type],
                "negative": ids[other][k],
                "left": same if same_left else different,
                "right": different if same_left else same,
                "decision": "left" if same_left else "right",
            }
        )
    write_labels(directory, rows)
