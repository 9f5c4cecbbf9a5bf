"""The zero-shot similarity family's optional filters (the paper's duration and class rules)."""

from __future__ import annotations

import numpy as np
import pytest

from audiobench.audio import Clip
from tasks.synthetic import SyntheticVocalisations


def _clips(labels: list[str]) -> list[Clip]:
    return [Clip(id=f"c{i}", audio=f"c{i}.wav", label=label) for i, label in enumerate(labels)]


def test_filters_drop_long_clips_then_small_classes() -> None:
    task = SyntheticVocalisations(max_duration_percentile=90.0, min_clips_per_class=3)
    clips = _clips(["a"] * 4 + ["b"] * 3 + ["c"] * 2)
    durations = {c.id: 1.0 for c in clips} | {"c6": 9.0}  # one of b's three is too long
    arrays = [np.full(2, i, dtype=np.float32) for i in range(len(clips))]
    kept, kept_arrays, filtered = task._filter(clips, arrays, durations)
    assert [c.id for c in kept] == ["c0", "c1", "c2", "c3"]
    assert [int(a[0]) for a in kept_arrays] == [0, 1, 2, 3]  # still aligned with their clips
    assert (filtered.n_long_clips, filtered.n_small_class_clips) == (1, 4)


def test_filters_of_an_empty_subset_keep_nothing() -> None:
    task = SyntheticVocalisations(max_duration_percentile=98.0, min_clips_per_class=6)
    kept, arrays, filtered = task._filter([], [], {})
    assert (kept, arrays) == ([], [])
    assert (filtered.n_long_clips, filtered.n_small_class_clips) == (0, 0)


def test_filters_refuse_misaligned_embeddings() -> None:
    task = SyntheticVocalisations(min_clips_per_class=1)
    with pytest.raises(RuntimeError, match="2 embeddings for 3 clips"):
        task._filter(_clips(["a", "a", "b"]), [np.zeros(2), np.zeros(2)], {})
