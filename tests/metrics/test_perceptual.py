"""Triplet and 2AFC accuracy with the one-sided binomial test."""

from __future__ import annotations

import math

import numpy as np
import pytest

from audiobench.metrics import binomial_p_value, triplet_accuracy, two_afc_accuracy


def test_hand_computed_binomial_p_values() -> None:
    # P(X ≥ 8), X ~ Bin(10, ½) = (C(10,8) + C(10,9) + C(10,10)) / 2¹⁰ = (45 + 10 + 1) / 1024.
    assert binomial_p_value(8, 10) == pytest.approx(56 / 1024)
    assert binomial_p_value(10, 10) == pytest.approx(1 / 1024)
    assert binomial_p_value(0, 10) == pytest.approx(1.0)
    assert binomial_p_value(3, 5) == pytest.approx((10 + 5 + 1) / 32)
    # Another chance level: P(X ≥ 2), X ~ Bin(2, 0.25) = 1/16.
    assert binomial_p_value(2, 2, chance=0.25) == pytest.approx(1 / 16)


def test_binomial_matches_the_sum_of_terms() -> None:
    for n in (1, 7, 20, 61):
        for k in range(n + 1):
            expected = math.fsum(math.comb(n, i) for i in range(k, n + 1)) / 2**n
            assert binomial_p_value(k, n) == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_hand_computed_triplets() -> None:
    # d(a,p) 1 2 3 4 5 vs d(a,n) 2 2 1 5 6: right, tie, wrong, right, right.
    d_ap = [1.0, 2.0, 3.0, 4.0, 5.0]
    d_an = [2.0, 2.0, 1.0, 5.0, 6.0]
    # Ties count half: 3.5 / 5; the test uses ⌊3.5⌋ = 3: P(X ≥ 3 | 5) = 16/32.
    assert triplet_accuracy(d_ap, d_an) == {
        "accuracy": pytest.approx(0.7),
        "n": 5,
        "n_correct": 3.5,
        "n_ties": 1,
        "p_value": pytest.approx(0.5),
    }
    wrong = triplet_accuracy(d_ap, d_an, ties="wrong")
    assert (wrong["accuracy"], wrong["n_correct"], wrong["n_ties"]) == (0.6, 3.0, 1)
    assert wrong["p_value"] == pytest.approx(0.5)


def test_constant_embeddings_score_chance() -> None:
    distances = np.zeros(12)
    half = triplet_accuracy(distances, distances)
    assert half["accuracy"] == 0.5 and half["n_ties"] == 12
    assert half["p_value"] == pytest.approx(binomial_p_value(6, 12))
    assert triplet_accuracy(distances, distances, ties="wrong")["accuracy"] == 0.0


def test_triplets_match_a_loop() -> None:
    rng = np.random.default_rng(0)
    d_ap = np.round(rng.random(200) * 5)
    d_an = np.round(rng.random(200) * 5)
    correct = sum(1.0 if p < n else 0.5 if p == n else 0.0 for p, n in zip(d_ap, d_an, strict=True))
    result = triplet_accuracy(d_ap, d_an)
    assert result["n_correct"] == correct
    assert result["accuracy"] == pytest.approx(correct / 200)
    assert result["p_value"] == pytest.approx(binomial_p_value(math.floor(correct), 200))


def test_two_afc() -> None:
    human = ["A"] * 10
    model = ["A"] * 8 + ["B"] * 2
    assert two_afc_accuracy(model, human) == {
        "accuracy": pytest.approx(0.8),
        "n": 10,
        "n_correct": 8,
        "n_ties": 0,
        "p_value": pytest.approx(56 / 1024),
    }
    assert two_afc_accuracy(np.array([0, 1, 1]), [0, 1, 0])["n_correct"] == 2


def test_errors() -> None:
    with pytest.raises(ValueError, match="3 anchor-positive and 2 anchor-negative"):
        triplet_accuracy([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match=r"d_anchor_negative has NaN.*triplets: 1"):
        triplet_accuracy([1, 2], [1, np.nan])
    with pytest.raises(ValueError, match="empty"):
        triplet_accuracy([], [])
    with pytest.raises(ValueError, match="1-D"):
        triplet_accuracy(np.ones((2, 2)), np.ones((2, 2)))
    with pytest.raises(ValueError, match="ties"):
        triplet_accuracy([1], [2], ties="ignore")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="2 model choices and 3 human choices"):
        two_afc_accuracy([0, 1], [0, 1, 1])
    with pytest.raises(ValueError, match=r"missing.*trials 1"):
        two_afc_accuracy([0, None], [0, 1])
    with pytest.raises(ValueError, match="empty"):
        two_afc_accuracy([], [])
    with pytest.raises(ValueError, match=r"n_correct must lie in \[0, n = 3\]"):
        binomial_p_value(4, 3)
    with pytest.raises(ValueError, match="n must be at least 1"):
        binomial_p_value(0, 0)
    with pytest.raises(ValueError, match="integer"):
        binomial_p_value(2.5, 5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="chance"):
        binomial_p_value(1, 2, chance=1.0)
