"""Property-based tests (hypothesis): invariances the protocol's definitions imply."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audiobench.vocsim import cs, cscf, csr, gsr, gsr_details, pairwise_distances, precision_at_k
from audiobench.vocsim.distances import average_ranks

from . import reference

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def labelled_matrices(draw, min_n: int = 6, max_n: int = 18, ties: bool | None = None):
    """A distance matrix (random points, optionally rounded for ties) with ≥ 2 classes of ≥ 2."""
    n = draw(st.integers(min_n, max_n))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    points = rng.normal(size=(n, 3))
    D = np.sqrt(((points[:, None] - points[None]) ** 2).sum(-1))
    if ties if ties is not None else draw(st.booleans()):
        D = np.round(D)
    n_classes = draw(st.integers(2, max(2, n // 3)))
    labels = [i % n_classes for i in range(n)]  # every class has ≥ 2 clips
    rng.shuffle(labels)
    return D, labels


@SETTINGS
@given(case=labelled_matrices(), data=st.data())
def test_invariant_to_renaming_classes(case, data) -> None:
    D, labels = case
    names = data.draw(
        st.lists(
            st.text(min_size=1, max_size=3),
            min_size=len(set(labels)),
            max_size=len(set(labels)),
            unique=True,
        )
    )
    renamed = [names[label] for label in labels]
    assert precision_at_k(D, renamed, 1) == precision_at_k(D, labels, 1)
    assert gsr(D, renamed) == pytest.approx(gsr(D, labels), abs=1e-12)
    assert csr(D, renamed) == pytest.approx(csr(D, labels), abs=1e-12)
    assert cs(D, renamed) == pytest.approx(cs(D, labels), abs=1e-12)
    assert cscf(D, renamed) == cscf(D, labels)


@SETTINGS
@given(case=labelled_matrices(ties=False), data=st.data())
def test_invariant_to_reordering_clips(case, data) -> None:
    # Without tied distances the neighbour order does not depend on clip indices.
    D, labels = case
    order = np.array(data.draw(st.permutations(range(len(labels)))))
    shuffled_D = D[np.ix_(order, order)]
    shuffled = [labels[i] for i in order]
    for k in (1, 3):
        assert precision_at_k(shuffled_D, shuffled, k) == pytest.approx(
            precision_at_k(D, labels, k)
        )
    assert gsr(shuffled_D, shuffled) == pytest.approx(gsr(D, labels), abs=1e-12)
    assert csr(shuffled_D, shuffled) == pytest.approx(csr(D, labels), abs=1e-12)


@SETTINGS
@given(case=labelled_matrices(), scale=st.sampled_from([0.25, 0.5, 2.0, 8.0, 1024.0]))
def test_invariant_to_scaling_distances(case, scale: float) -> None:
    D, labels = case
    for k in (1, 2):
        assert precision_at_k(D * scale, labels, k) == precision_at_k(D, labels, k)
    # ε = 1e-9 in the denominator is the only scale-dependent term.
    assert gsr(D * scale, labels) == pytest.approx(gsr(D, labels), abs=1e-6)


@SETTINGS
@given(
    sizes=st.lists(st.integers(2, 6), min_size=2, max_size=5),
    dim=st.integers(2, 6),
    seed=st.integers(0, 2**32 - 1),
)
def test_separated_classes_have_perfect_precision(sizes: list[int], dim: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(len(sizes)), sizes)
    # Class centres 100 apart on one axis, clips within 1 of their centre.
    X = rng.uniform(-0.5, 0.5, size=(labels.shape[0], dim))
    X[:, 0] += 100.0 * labels
    D = pairwise_distances(X, "euclidean", dtype=np.float64)
    for k in range(1, min(sizes)):
        assert precision_at_k(D, labels, k) == 1.0
    assert gsr(D, labels) > 0.5
    assert cscf(D, labels) == 0.0


@SETTINGS
@given(
    values=st.lists(st.lists(st.integers(-3, 3), min_size=5, max_size=5), min_size=2, max_size=8)
)
def test_spearman_uses_average_ranks_with_ties(values: list[list[int]]) -> None:
    X = np.array(values, dtype=float)
    np.testing.assert_array_equal(
        average_ranks(torch.from_numpy(X)).numpy(), scipy.stats.rankdata(X, axis=1)
    )
    if np.all(X.max(axis=1) > X.min(axis=1)):  # constant rows are an error for spearman
        D = pairwise_distances(X, "spearman", dtype=np.float64)
        np.testing.assert_allclose(D, reference.distance_matrix(X, "spearman"), atol=1e-12)
        # Reversing the column order permutes every row's values identically: same ranks
        # structure, same correlations, so the distances (and their tie handling) agree.
        np.testing.assert_allclose(
            D, pairwise_distances(X[:, ::-1], "spearman", dtype=np.float64), atol=1e-12
        )


@settings(max_examples=15, deadline=None)
@given(case=labelled_matrices(min_n=8, max_n=16))
def test_brute_force_agreement_property(case) -> None:
    D, labels = case
    for k in (1, 3):
        assert precision_at_k(D, labels, k) == pytest.approx(reference.precision_at_k(D, labels, k))
    expected = reference.gsr(D, labels)
    result = gsr_details(D, labels)
    assert (result.n_evaluated, result.n_skipped) == expected[2:]
    if result.n_evaluated:
        assert result.value == pytest.approx(expected[0], abs=1e-9)
