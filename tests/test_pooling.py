from __future__ import annotations

import numpy as np
import pytest

from audiobench.pooling import (
    CollateTooLargeError,
    Pooling,
    check_collate_size,
    collate,
    collate_budget,
)

# Z is 3 frames x 2 features:
#   [[1, 2],
#    [3, 4],
#    [5, 9]]
Z = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 9.0]])


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("mean_time", [3.0, 5.0]),
        ("mean_feat", [1.5, 3.5, 7.0]),
        ("first_time", [1.0, 2.0]),
        ("first_feat", [1.0, 3.0, 5.0]),
        ("max_time", [5.0, 9.0]),
        ("mean_time_feat", [3.0, 5.0, 1.5, 3.5, 7.0]),
        ("first_time_feat", [1.0, 2.0, 1.0, 3.0, 5.0]),
        ("mean_time+first_time", [3.0, 5.0, 1.0, 2.0]),
    ],
)
def test_pooling_hand_computed(spec: str, expected: list[float]) -> None:
    np.testing.assert_allclose(Pooling.parse(spec)(Z), expected)


def test_masked_pooling_uses_only_valid_frames() -> None:
    pooled = Pooling.parse("masked:mean_time_feat")(Z, n_valid=2)
    np.testing.assert_allclose(pooled, [2.0, 3.0, 1.5, 3.5])
    # Unmasked pooling includes padding frames, as the protocol's default.
    np.testing.assert_allclose(Pooling.parse("mean_time")(Z, n_valid=2), [3.0, 5.0])


def test_names_round_trip() -> None:
    assert Pooling.parse("mean_time+mean_feat").name == "mean_time_feat"
    assert Pooling.parse("masked:mean_time").name == "masked:mean_time"
    assert Pooling.parse(" flatten ").name == "flatten"


@pytest.mark.parametrize(
    "spec", ["bogus", "mean_feat+mean_time", "mean_feat+first_feat", "masked:flatten"]
)
def test_invalid_specs(spec: str) -> None:
    with pytest.raises(ValueError, match="pooling"):
        Pooling.parse(spec)


def test_none_rejects_sequences_and_flatten_keeps_them() -> None:
    with pytest.raises(ValueError, match="one vector per clip"):
        Pooling.parse("none")(Z)
    assert Pooling.parse("flatten")(Z) is Z
    with pytest.raises(ValueError, match="empty sequence"):
        Pooling.parse("mean_time")(np.zeros((0, 4)))


def test_collate_pads_vectors_at_the_end() -> None:
    out = collate([np.array([1.0, 2.0]), np.array([3.0]), np.array([4.0, 5.0, 6.0])])
    np.testing.assert_array_equal(out, [[1, 2, 0], [3, 0, 0], [4, 5, 6]])


def test_collate_flattens_feature_major_after_padding_time() -> None:
    a = np.array([[1.0, 10.0], [2.0, 20.0]])  # T=2, D=2
    b = np.array([[3.0, 30.0]])  # T=1
    out = collate([a, b])
    # feature 0 over T_max=2 frames, then feature 1 (band-major)
    np.testing.assert_array_equal(out, [[1, 2, 10, 20], [3, 0, 30, 0]])


def test_collate_rejects_mixed_inputs() -> None:
    with pytest.raises(ValueError):
        collate([np.zeros(3), np.zeros((2, 2))])
    with pytest.raises(ValueError, match="feature sizes"):
        collate([np.zeros((2, 2)), np.zeros((2, 3))])
    with pytest.raises(ValueError):
        collate([])


def test_collate_budget_counts_padded_elements_exactly() -> None:
    # 3 clips padded to the longest (4 frames) of 2 features: 3 * 4 * 2 = 24 values.
    arrays = [np.ones((1, 2)), np.ones((4, 2)), np.ones((2, 2))]
    assert collate(arrays, max_elements=24).shape == (3, 8)
    with pytest.raises(CollateTooLargeError, match=r"clip 'b' \(4×2; median length 2\)"):
        collate(arrays, ids=["a", "b", "c"], max_elements=23)
    # Vectors of different lengths are padded too: 2 * 5 = 10 values.
    with pytest.raises(CollateTooLargeError, match=r"embedding #1 \(5; .* needs 10 values"):
        collate([np.ones(2), np.ones(5)], max_elements=9)


def test_check_collate_size_names_the_longest_and_default_budget_is_positive() -> None:
    check_collate_size([np.ones((3, 2))] * 2, ["a", "b"], max_elements=12)
    with pytest.raises(CollateTooLargeError, match="over the budget of 11"):
        check_collate_size([np.ones((3, 2))] * 2, ["a", "b"], max_elements=11)
    assert collate_budget() > 0
