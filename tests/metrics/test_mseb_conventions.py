"""MSEB's shared conventions: the weighted mean and std, word splitting, sentinels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audiobench.metrics import (
    INVALID_ANSWER,
    NO_ANSWER,
    NO_RESPONSE,
    split_words,
    weighted_mean_and_std,
)


def test_sentinels_are_msebs_strings() -> None:
    assert (INVALID_ANSWER, NO_RESPONSE, NO_ANSWER) == ("", "NO_RESPONSE", "No Answer")


def test_weighted_mean_and_std_by_hand() -> None:
    # Word errors 2, 0, 3 over 4, 1, 5 reference words: mean = 5/10 = 0.5.
    # Ratios 0.5, 0, 0.6; std² = (4·0² + 1·0.5² + 5·0.1²) / 10 = (0.25 + 0.05) / 10 = 0.03.
    mean, std = weighted_mean_and_std([2, 0, 3], [4, 1, 5])
    assert mean == pytest.approx(0.5)
    assert std == pytest.approx(math.sqrt(0.03))


def test_unit_weights_give_mean_and_population_std() -> None:
    mean, std = weighted_mean_and_std([1.0, 0.0, 0.0, 1.0])
    assert mean == 0.5
    assert std == 0.5  # population std: every value is 0.5 from the mean


def test_zero_weight_observation_adds_to_mean_not_to_std() -> None:
    # An utterance with an empty reference: 2 insertions, weight 0.
    # mean = (1 + 2) / 2 = 1.5; ratios 0.5 (weight 2) and 2 (weight 0): std = |0.5 − 1.5| = 1.
    mean, std = weighted_mean_and_std([1.0, 2.0], [2.0, 0.0])
    assert mean == 1.5
    assert std == pytest.approx(1.0)


def _brute_weighted(values: list[float], weights: list[float]) -> tuple[float, float]:
    total_weight = 0.0
    total_value = 0.0
    for v, w in zip(values, weights, strict=True):
        total_weight += w
        total_value += v
    mean = total_value / total_weight
    acc = 0.0
    for v, w in zip(values, weights, strict=True):
        ratio = v if w == 0 else v / w
        acc += w * (ratio - mean) ** 2
    return mean, math.sqrt(acc / total_weight)


@settings(max_examples=50, deadline=None)
@given(
    pairs=st.lists(
        st.tuples(st.integers(0, 30), st.integers(0, 20)), min_size=1, max_size=30
    ).filter(lambda p: sum(w for _, w in p) > 0)
)
def test_weighted_mean_and_std_matches_brute_force(pairs: list[tuple[int, int]]) -> None:
    values = [float(v) for v, _ in pairs]
    weights = [float(w) for _, w in pairs]
    mean, std = weighted_mean_and_std(values, weights)
    expected_mean, expected_std = _brute_weighted(values, weights)
    assert mean == pytest.approx(expected_mean, rel=1e-12)
    assert std == pytest.approx(expected_std, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize(
    ("values", "weights", "match"),
    [
        ([], None, "no values"),
        ([1.0], [0.0], "sum to 0"),
        ([1.0, 2.0], [1.0], "2 values and 1 weights"),
        ([1.0], [-1.0], "≥ 0"),
        ([math.nan], None, "finite"),
        ([[1.0]], None, "1-D"),
    ],
)
def test_weighted_mean_rejects_bad_input(values, weights, match) -> None:
    with pytest.raises(ValueError, match=match):
        weighted_mean_and_std(values, weights)


def test_split_words_follows_the_space_rule() -> None:
    assert split_words("  the  cat sat ") == ["the", "cat", "sat"]
    assert split_words("") == []
    assert split_words("   ") == []
    # A lone tab does not separate words; a run of whitespace does (becomes one space).
    assert split_words("a\tb") == ["a\tb"]
    assert split_words("a\t\tb") == ["a", "b"]
    assert split_words("a \nb") == ["a", "b"]
    with pytest.raises(ValueError, match="string"):
        split_words(3)  # type: ignore[arg-type]


@settings(max_examples=50, deadline=None)
@given(words=st.lists(st.text(alphabet="abc", min_size=1, max_size=4), max_size=8))
def test_split_words_agrees_with_str_split_on_space_separated_text(words: list[str]) -> None:
    text = "  ".join(words)
    assert split_words(text) == text.split() == words
    assert np.array(split_words(" ".join(words))).tolist() == words
