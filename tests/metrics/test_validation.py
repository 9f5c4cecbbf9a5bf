"""Input checks shared by the families: non-finite embeddings named by clip id."""

from __future__ import annotations

import numpy as np
import pytest

from audiobench.metrics.errors import InvalidEmbeddingsError
from audiobench.metrics.validation import check_finite


def test_check_finite_names_the_clips_of_bad_rows() -> None:
    matrix = np.ones((4, 3))
    matrix[1, 2] = np.nan
    matrix[3, 0] = np.inf
    with pytest.raises(InvalidEmbeddingsError, match=r"task T: embeddings contain NaN") as info:
        check_finite(matrix, ["a", "b", "c", "d"], "task T: embeddings")
    assert info.value.clip_ids == ("b", "d")
    check_finite(np.ones((2, 3)), ["a", "b"], "embeddings")  # finite: no error


def test_check_finite_takes_one_array_per_clip() -> None:
    frames = [np.ones((5, 2)), np.full((3, 2), -np.inf)]
    with pytest.raises(InvalidEmbeddingsError, match=r"frame sequences contain NaN") as info:
        check_finite(frames, ["x", "y"], "frame sequences")
    assert info.value.clip_ids == ("y",)
    check_finite([], [], "embeddings")
