from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
import torch
from scipy.spatial.distance import cdist

from audiobench.metrics import InvalidEmbeddingsError
from audiobench.vocsim import pairwise_distances
from audiobench.vocsim.distances import INT8_PAIR_MAX, _int8_pairs, _product_rows, average_ranks

from . import reference


def test_hand_computed_distances() -> None:
    X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [1.0, 1.0]])
    D = pairwise_distances(X, "cosine", dtype=np.float64)
    assert D[0, 1] == pytest.approx(0.5)  # orthogonal: (1 − 0) / 2
    assert D[0, 2] == pytest.approx(1.0)  # opposite: (1 − (−1)) / 2
    assert D[0, 3] == pytest.approx((1 - 1 / math.sqrt(2)) / 2)  # 45°: 0.1464466
    E = pairwise_distances(np.array([[0.0, 0.0], [3.0, 4.0]]), "euclidean", dtype=np.float64)
    assert E[0, 1] == pytest.approx(5.0)
    # Spearman: (1,2,3) vs (3,2,1) are perfectly anti-correlated -> 1.
    S = pairwise_distances(np.array([[1.0, 2, 3], [3.0, 2, 1]]), "spearman", dtype=np.float64)
    assert S[0, 1] == pytest.approx(1.0)
    # With a tie: ranks (1, 2.5, 2.5, 4) vs (1, 2, 3, 4): centred dot 4.5, norms √4.5 and √5,
    # ρ = 4.5 / √22.5 = 0.9486833, distance (1 − ρ) / 2 = 0.0256584.
    T = pairwise_distances(
        np.array([[1.0, 2, 2, 3], [10.0, 20, 30, 40]]), "spearman", dtype=np.float64
    )
    assert T[0, 1] == pytest.approx((1 - 4.5 / math.sqrt(22.5)) / 2)


@pytest.mark.parametrize("metric", ["cosine", "euclidean", "spearman"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matches_brute_force(metric: str, dtype: type, small_blocks: None) -> None:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(23, 7))
    X[:, 5] = np.round(X[:, 5])  # some ties inside rows (spearman)
    X[4] = X[9]  # duplicate clips
    D = pairwise_distances(X, metric, dtype=dtype)
    expected = reference.distance_matrix(X, metric)
    assert D.dtype == dtype
    np.testing.assert_allclose(D, expected, atol=1e-6 if dtype == np.float32 else 1e-7)
    assert np.array_equal(D, D.T)
    assert np.all(np.diag(D) == 0)


def test_matches_scipy_on_larger_input() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 40))
    np.testing.assert_allclose(
        pairwise_distances(X, "cosine", dtype=np.float64),
        np.clip(cdist(X, X, "cosine") / 2, 0, 1),
        atol=1e-12,
    )
    np.testing.assert_allclose(
        pairwise_distances(X, "euclidean", dtype=np.float64), cdist(X, X), atol=1e-9
    )
    ranks = scipy.stats.rankdata(X, axis=1)
    expected = np.clip(cdist(ranks, ranks, "correlation") / 2, 0, 1)
    np.fill_diagonal(expected, 0)
    np.testing.assert_allclose(
        pairwise_distances(X, "spearman", dtype=np.float64), expected, atol=1e-12
    )


def test_average_ranks_match_scipy_with_ties() -> None:
    rng = np.random.default_rng(1)
    X = rng.integers(0, 4, size=(50, 9)).astype(float)
    np.testing.assert_array_equal(
        average_ranks(torch.from_numpy(X)).numpy(), scipy.stats.rankdata(X, axis=1)
    )


def test_average_ranks_mix_rows_with_and_without_ties() -> None:
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 25))
    X[::3, :6] = 1.5  # every third row has a run of six equal values
    np.testing.assert_array_equal(
        average_ranks(torch.from_numpy(X)).numpy(), scipy.stats.rankdata(X, axis=1)
    )


def test_int8_digits_rebuild_integer_rows() -> None:
    values = torch.tensor(
        [[-INT8_PAIR_MAX, -32768 + 129, -129, -128, -1, 0, 127, 128, 255, 256, INT8_PAIR_MAX]],
        dtype=torch.float64,
    )
    high, low, high_low, low_high = _int8_pairs(values)
    assert high.dtype == low.dtype == torch.int8
    rebuilt = 256 * high.to(torch.int64) + low.to(torch.int64)
    assert torch.equal(rebuilt, values.to(torch.int64))
    assert torch.equal(high_low, torch.cat([high, low], 1))
    assert torch.equal(low_high, torch.cat([low, high], 1))


@pytest.mark.parametrize("kernel", ["int8", "float64"])
@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_wide_integer_rows_take_an_exact_product(
    metric: str, kernel: str, small_blocks: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Integer rows whose products exceed float32's exact range go through int8 digits or a
    float64 product (whichever is measured faster; here forced); the distances are the
    exactly rounded ones of the exact integer products either way."""
    monkeypatch.setenv("AUDIOBENCH_SCORING_KERNEL", kernel)
    rng = np.random.default_rng(8)
    X = rng.integers(-INT8_PAIR_MAX, INT8_PAIR_MAX + 1, (37, 300)).astype(np.float64)
    X[3] = X[11]  # a duplicate
    squared = torch.from_numpy((X * X).sum(axis=1))
    rows = _product_rows(torch.from_numpy(X), "angle", squared)
    assert (rows.digits is not None) == (kernel == "int8")
    D = pairwise_distances(X, metric, dtype=np.float64)
    exact = [[sum(int(a) * int(b) for a, b in zip(u, v, strict=True)) for v in X] for u in X]
    gram = np.array(exact, dtype=object)
    norms = np.diagonal(gram)
    if metric == "euclidean":
        expected = np.sqrt((norms[:, None] + norms[None, :] - 2 * gram).astype(np.float64))
    else:
        rho = np.sign(gram.astype(np.float64)) * np.sqrt(
            (gram * gram).astype(np.float64) / (norms[:, None] * norms[None, :]).astype(np.float64)
        )
        expected = np.clip((1.0 - rho) / 2, 0.0, 1.0)
    np.fill_diagonal(expected, 0.0)
    np.testing.assert_allclose(D, expected, rtol=1e-15, atol=1e-15)
    if metric == "euclidean":  # one rounding of the exact distance
        assert np.array_equal(pairwise_distances(X, metric), expected.astype(np.float32))


def test_wide_spearman_rows_match_scipy(small_blocks: None) -> None:
    rng = np.random.default_rng(9)
    X = rng.normal(size=(25, 700))
    X[:, :40] = np.round(X[:, :40])  # ties
    ranks = scipy.stats.rankdata(X, axis=1)
    expected = np.clip(cdist(ranks, ranks, "correlation") / 2, 0, 1)
    np.fill_diagonal(expected, 0)
    np.testing.assert_allclose(
        pairwise_distances(X, "spearman", dtype=np.float64), expected, atol=1e-14
    )


def test_spearman_is_rank_based() -> None:
    rng = np.random.default_rng(2)
    X = rng.normal(size=(12, 6))
    # A strictly increasing transform of every value leaves all ranks, hence D, unchanged.
    np.testing.assert_allclose(
        pairwise_distances(X, "spearman", dtype=np.float64),
        pairwise_distances(np.exp(3 * X), "spearman", dtype=np.float64),
        atol=1e-12,
    )


@pytest.mark.parametrize("metric", ["cosine", "euclidean", "spearman"])
def test_non_finite_rows_are_named(metric: str) -> None:
    X = np.ones((5, 3)) + np.arange(15).reshape(5, 3) ** 2
    X[1, 2] = np.nan
    X[3, 0] = np.inf
    with pytest.raises(InvalidEmbeddingsError, match=r"'b'.*'d'") as caught:
        pairwise_distances(X, metric, ids=["a", "b", "c", "d", "e"])
    assert caught.value.clip_ids == ("b", "d")
    with pytest.raises(ValueError, match=r"indices: 1, 3"):
        pairwise_distances(X, metric)


def test_zero_vector_under_cosine_is_named() -> None:
    X = np.eye(4)
    X[2] = 0.0
    with pytest.raises(InvalidEmbeddingsError, match=r"zero vectors.*'c2'") as caught:
        pairwise_distances(X, "cosine", ids=[f"c{i}" for i in range(4)])
    assert caught.value.clip_ids == ("c2",)
    pairwise_distances(X, "euclidean")  # fine for euclidean


def test_constant_vector_under_spearman_is_named() -> None:
    X = np.arange(12.0).reshape(4, 3)
    X[0] = 7.0
    with pytest.raises(InvalidEmbeddingsError, match=r"constant vectors.*'x'"):
        pairwise_distances(X, "spearman", ids=["x", "y", "z", "w"])
    pairwise_distances(X, "cosine")  # a constant non-zero vector is fine for cosine


def test_long_lists_of_bad_clips_are_summarised() -> None:
    X = np.full((30, 2), np.nan)
    X[0] = 1.0
    with pytest.raises(InvalidEmbeddingsError, match=r"29 clips .* and 19 more") as caught:
        pairwise_distances(X, "cosine")
    assert len(caught.value.clip_ids) == 29


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="unknown distance"):
        pairwise_distances(np.eye(3), "manhattan")
    with pytest.raises(ValueError, match="2-D"):
        pairwise_distances(np.ones(3), "cosine")
    with pytest.raises(ValueError, match="ids"):
        pairwise_distances(np.eye(3), "cosine", ids=["a"])
    with pytest.raises(ValueError, match="dtype"):
        pairwise_distances(np.eye(3), "cosine", dtype=np.int32)


# -- exact ties: mathematically equal distances must be bit-identical (the lower-index rule)


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_equal_distances_of_integer_rows_are_bit_identical(metric: str) -> None:
    """Every coordinate permutation of b lies at the same cosine and euclidean distance
    from the all-ones anchor, whatever the order of the products' roundings."""
    rng = np.random.default_rng(5)
    anchor = np.ones(300)
    b = rng.integers(0, 1000, 300).astype(np.float64)
    shuffled = [rng.permutation(b) for _ in range(30)]
    D = pairwise_distances(np.stack([anchor, b, *shuffled]), metric)
    assert len(set(D[0, 1:].tolist())) == 1
    assert len(set(D[1:, 0].tolist())) == 1


def test_equal_spearman_distances_are_bit_identical() -> None:
    """Swapping any two adjacent coordinates of the anchor's order changes Σ(rank differences)²
    by the same 2, so every such neighbour is at the same Spearman distance."""
    d = 200
    anchor = np.arange(d, dtype=np.float64)
    swapped = []
    for i in range(0, d - 1, 7):
        x = anchor.copy()
        x[i], x[i + 1] = x[i + 1], x[i]
        swapped.append(3.5 * x + 11.0)  # another scale and offset: the same ranks
    D = pairwise_distances(np.stack([anchor, *swapped]), "spearman")
    assert len(set(D[0, 1:].tolist())) == 1


def test_integer_euclidean_distances_are_correctly_rounded() -> None:
    rng = np.random.default_rng(6)
    X = rng.integers(-50_000, 50_000, (40, 64)).astype(np.float64)
    D = pairwise_distances(X, "euclidean")
    exact_squares = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)  # exact integers
    assert np.array_equal(D, np.sqrt(exact_squares).astype(np.float32))
