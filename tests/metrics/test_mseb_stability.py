"""MSEB's stability metrics: CED, DTW, the matrix-2-norm "L2", UED and their aggregates."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audiobench.metrics import (
    continuous_edit_distance,
    continuous_stability,
    discrete_stability,
    dynamic_time_warping_distance,
    padded_spectral_distance,
    unit_edit_distance,
)


def _brute_ced(a: np.ndarray, b: np.ndarray, ins: float = 2.0, dele: float = 2.0) -> float:
    """Row-by-row loops with direct Euclidean norms (not the expanded form)."""

    def scaled(z: np.ndarray) -> np.ndarray:
        norms = [float(np.sqrt(sum(x * x for x in row))) for row in z]
        biggest = max(norms) if np.any(z) else 1.0
        return z / (biggest + 1e-9)

    a, b = scaled(a.astype(np.float64)), scaled(b.astype(np.float64))
    n, m = len(a), len(b)
    table = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        table[i][0] = i * dele
    for j in range(1, m + 1):
        table[0][j] = j * ins
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            table[i][j] = min(
                table[i - 1][j] + dele,
                table[i][j - 1] + ins,
                table[i - 1][j - 1] + float(np.linalg.norm(a[i - 1] - b[j - 1])),
            )
    return table[n][m]


def _brute_dtw(a: np.ndarray, b: np.ndarray) -> float:
    n, m = len(a), len(b)
    table = [[math.inf] * (m + 1) for _ in range(n + 1)]
    table[0][0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            cost = float(np.linalg.norm(a[i - 1].astype(np.float64) - b[j - 1]))
            table[i][j] = cost + min(table[i - 1][j], table[i][j - 1], table[i - 1][j - 1])
    return table[n][m]


def _brute_spectral(a: np.ndarray, b: np.ndarray) -> float:
    """√(largest eigenvalue of DᵀD) of the zero-padded difference D."""
    frames = max(len(a), len(b))
    d = np.zeros((frames, a.shape[1]))
    d[: len(a)] += a
    d[: len(b)] -= b
    return float(np.sqrt(max(np.linalg.eigvalsh(d.T @ d).max(), 0.0)))


def _brute_words_edit(a: list[str], b: list[str]) -> int:
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i]
        for j, y in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


# --- hand-computed values ---------------------------------------------------------------


def test_ced_by_hand() -> None:
    # Unit vectors (largest norm 1, scaled by 1/(1 + 1e-9)); identical sequences cost 0.
    a = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert continuous_edit_distance(a, a) == pytest.approx(0.0, abs=1e-12)
    # One extra frame in the hypothesis: one insertion at cost 2 (after scaling, the
    # hypothesis' largest norm is still 1).
    b = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    assert continuous_edit_distance(a, b) == pytest.approx(2.0, abs=1e-8)
    # Opposite unit vectors: substitution costs the diameter 2 (= a deletion + insertion 4).
    assert continuous_edit_distance(a[:1], -a[:1]) == pytest.approx(2.0, abs=1e-8)
    # Scaling: [3, 0] and [6, 0] are both the unit vector after scaling → 0.
    assert continuous_edit_distance([[3.0, 0.0]], [[6.0, 0.0]]) == pytest.approx(0, abs=1e-8)
    # Without scaling the substitution costs |3 − 6| = 3, cheaper than 2 + 2.
    raw = continuous_edit_distance([[3.0, 0.0]], [[6.0, 0.0]], unit_sphere_scaling=False)
    assert raw == pytest.approx(3.0)
    # Empty hypothesis: delete every reference frame; all-zero frames are scaled by 1.
    assert continuous_edit_distance(np.zeros((3, 2)), np.zeros((0, 2))) == 6.0


def test_dtw_by_hand() -> None:
    a = np.array([[0.0], [1.0], [2.0]])
    b = np.array([[0.0], [0.0], [1.0], [2.0]])
    # The repeated 0 aligns to 0 at no cost: total 0.
    assert dynamic_time_warping_distance(a, b) == 0.0
    # [0] against [1, 3]: |0−1| + |0−3| = 4.
    assert dynamic_time_warping_distance([[0.0]], [[1.0], [3.0]]) == 4.0
    assert dynamic_time_warping_distance(np.zeros((0, 1)), np.zeros((0, 1))) == 0.0
    assert dynamic_time_warping_distance([[1.0]], np.zeros((0, 1))) == math.inf


def test_l2_is_the_matrix_two_norm_not_frobenius() -> None:
    a = np.array([[1.0, 0.0], [0.0, 1.0]])
    b = np.zeros((2, 2))
    # The difference is the identity: largest singular value 1, Frobenius norm √2.
    assert padded_spectral_distance(a, b) == pytest.approx(1.0)
    assert np.linalg.norm(a - b) == pytest.approx(math.sqrt(2))
    # Zero-padding: [[3, 4]] against nothing extra vs 2 frames of zeros → ‖(3, 4)‖ = 5.
    assert padded_spectral_distance([[3.0, 4.0]], np.zeros((2, 2))) == pytest.approx(5.0)


def test_ued_by_hand() -> None:
    assert unit_edit_distance("a b c", "a c d e") == 3  # delete b, insert d and e
    assert unit_edit_distance([1, 2, 3], ["1", "2", "3"]) == 0  # compared as text
    assert unit_edit_distance(np.array([5, 6]), np.array([6])) == 1
    assert unit_edit_distance([], [1, 2]) == 2  # empty reference: the hypothesis length
    assert unit_edit_distance(["a b"], ["a"]) == 1  # a token with a space is two words
    with pytest.raises(ValueError, match="1-D"):
        unit_edit_distance(np.zeros((2, 2)), [1])


def test_discrete_aggregates_by_hand() -> None:
    refs = ["a b c d", [1, 2], []]
    variants = [["a b c d", "a b", "x b c d"], [[1, 2, 3]], [[1]]]
    scores = discrete_stability(refs, variants)
    ued = scores.metrics["UED"]
    # Utterance 0: drifts 0, 2/4, 1/4; utterance 1: 1/2; utterance 2 has an empty
    # reference and is left out. Corpus: (0 + 2 + 1 + 1) / (4 + 4 + 4 + 2) = 4/14.
    assert ued.corpus_mean == pytest.approx(4 / 14)
    # Mean of means: (0.25 + 0.5) / 2; instability: (std(0, .5, .25) + 0) / 2.
    assert ued.mean_local == pytest.approx(0.375)
    assert ued.instability == pytest.approx(np.std([0, 0.5, 0.25]) / 2)
    assert (ued.n_pairs, ued.n_utterances) == (4, 2)
    assert scores.main_metric == "UED"
    assert scores.main_score == ued.corpus_mean
    assert scores.to_dict()["Corpus_Mean_UED"] == ued.corpus_mean


def test_continuous_aggregates_by_hand() -> None:
    ref = np.array([[1.0, 0.0], [0.0, 1.0]])
    same = ref.copy()
    longer = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    scores = continuous_stability([ref], [[same, longer]])
    ced = scores.metrics["CED"]
    # CED: 0 and 2 (one insertion); normalised by c·L = 2·2: drifts 0 and 0.5.
    assert ced.corpus_mean == pytest.approx(2 / 8, abs=1e-8)
    assert ced.mean_local == pytest.approx(0.25, abs=1e-8)
    assert ced.instability == pytest.approx(0.25, abs=1e-8)
    # L2 of the padded difference with `longer`: only the 3rd row (0, −1) → 1; c·L = 2.
    assert scores.metrics["L2"].corpus_mean == pytest.approx(1 / 4)
    # DTW: the extra (0, 1) aligns to (0, 1) at no cost.
    assert scores.metrics["DTW"].corpus_mean == 0.0
    assert scores.main_metric == "CED"
    assert set(scores.to_dict()) == {
        f"{kind}_{m}" for m in ("CED", "DTW", "L2") for kind in ("Corpus_Mean", "Mean_Local_IS")
    } | {f"Mean_Local_IS_{m}_std" for m in ("CED", "DTW", "L2")}


def test_ragged_variant_counts_and_utterances_without_variants() -> None:
    # MSEB stacks the drift lists and needs equal counts; here each utterance has its own.
    scores = discrete_stability(["a", "a b", "c"], [["a", "b"], ["a b"], []])
    ued = scores.metrics["UED"]
    assert ued.mean_local == pytest.approx((0.5 + 0.0) / 2)
    assert ued.n_utterances == 2


def test_no_usable_pair_is_an_error() -> None:
    with pytest.raises(ValueError, match="non-empty reference"):
        discrete_stability([[], "a"], [["a"], []])
    with pytest.raises(ValueError, match="non-empty reference"):
        continuous_stability([np.zeros((0, 2))], [[np.ones((1, 2))]])


@pytest.mark.parametrize(
    ("refs", "variants", "match"),
    [
        ([np.ones((2, 3))], [[np.ones((2, 4))]], "utterance 0, variant 0: .*dimensions"),
        ([np.ones(3)], [[np.ones(3)]], "2-D"),
        ([np.array([[np.nan]])], [[np.ones((1, 1))]], "NaN"),
        ([np.ones((1, 1))], [], "1 references and 0 variant lists"),
        ([], [], "no utterances"),
        ([np.ones((1, 1))], [np.ones((1, 1))], "variants"),
    ],
)
def test_continuous_rejects_bad_input(refs, variants, match) -> None:
    with pytest.raises(ValueError, match=match):
        continuous_stability(refs, variants)


# --- against the brute force --------------------------------------------------------------


@st.composite
def sequence_pairs(draw):
    dim = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(draw(st.integers(1, 7)), dim))
    b = rng.normal(size=(draw(st.integers(0, 7)), dim))
    if draw(st.booleans()):
        b = np.round(b)  # ties and exact zeros
    return a, b


@settings(max_examples=60, deadline=None)
@given(pair=sequence_pairs())
def test_distances_match_brute_force(pair) -> None:
    a, b = pair
    assert continuous_edit_distance(a, b) == pytest.approx(_brute_ced(a, b), rel=1e-7, abs=1e-7)
    assert dynamic_time_warping_distance(a, b) == pytest.approx(_brute_dtw(a, b), rel=1e-7)
    assert padded_spectral_distance(a, b) == pytest.approx(_brute_spectral(a, b), rel=1e-7)
    # Properties: self-distance 0, symmetric L2, CED bounded by delete-all + insert-all.
    assert continuous_edit_distance(a, a) == pytest.approx(0.0, abs=1e-6)
    assert dynamic_time_warping_distance(a, a) == pytest.approx(0.0, abs=1e-6)
    assert padded_spectral_distance(a, b) == pytest.approx(padded_spectral_distance(b, a))
    assert continuous_edit_distance(a, b) <= 2.0 * (len(a) + len(b)) + 1e-9
    if len(a) == len(b):
        assert padded_spectral_distance(a, b) <= np.linalg.norm(a - b) + 1e-9


def test_float32_outputs_are_computed_in_float32_like_mseb() -> None:
    rng = np.random.default_rng(1)
    a = rng.normal(size=(6, 5)).astype(np.float32)
    b = rng.normal(size=(4, 5)).astype(np.float32)
    # Close to the float64 value, but not computed in float64.
    value32 = continuous_edit_distance(a, b)
    value64 = continuous_edit_distance(a.astype(np.float64), b.astype(np.float64))
    assert value32 == pytest.approx(value64, rel=1e-5)
    assert padded_spectral_distance(a, b) == pytest.approx(_brute_spectral(a, b), rel=1e-5)


@settings(max_examples=60, deadline=None)
@given(
    corpus=st.lists(
        st.tuples(
            st.lists(st.integers(0, 3), max_size=5),
            st.lists(st.lists(st.integers(0, 3), max_size=5), max_size=3),
        ),
        min_size=1,
        max_size=5,
    ).filter(lambda c: any(ref and variants for ref, variants in c))
)
def test_discrete_aggregates_match_brute_force(corpus) -> None:
    refs = [ref for ref, _ in corpus]
    variants = [v for _, v in corpus]
    ued = discrete_stability(refs, variants).metrics["UED"]
    distance = length = 0
    means, stds = [], []
    for ref, outputs in corpus:
        if not ref or not outputs:
            continue
        words = [str(t) for t in ref]
        drifts = []
        for out in outputs:
            edits = _brute_words_edit(words, [str(t) for t in out])
            distance += edits
            length += len(words)
            drifts.append(edits / len(words))
        mean = sum(drifts) / len(drifts)
        means.append(mean)
        stds.append(math.sqrt(sum((d - mean) ** 2 for d in drifts) / len(drifts)))
    assert ued.corpus_mean == pytest.approx(distance / length)
    assert ued.mean_local == pytest.approx(sum(means) / len(means))
    assert ued.instability == pytest.approx(sum(stds) / len(stds))


@settings(max_examples=40, deadline=None)
@given(pair=sequence_pairs())
def test_diagonal_programmes_are_bit_identical_to_row_loops(pair) -> None:
    """The anti-diagonal evaluation adds and compares exactly what a row-by-row loop does."""
    from audiobench.metrics.stability import _edit_cost, _frame_distances, _warping_cost

    a, b = pair
    costs = _frame_distances(a, b)
    n, m = costs.shape
    edit = np.zeros((n + 1, m + 1))
    warp = np.full((n + 1, m + 1), np.inf)
    warp[0, 0] = 0.0
    for i in range(1, n + 1):
        edit[i, 0] = edit[i - 1, 0] + 2.0
    for j in range(1, m + 1):
        edit[0, j] = edit[0, j - 1] + 2.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            edit[i, j] = min(
                edit[i - 1, j] + 2.0, edit[i, j - 1] + 2.0, edit[i - 1, j - 1] + costs[i - 1, j - 1]
            )
            warp[i, j] = costs[i - 1, j - 1] + min(
                warp[i - 1, j], warp[i, j - 1], warp[i - 1, j - 1]
            )
    assert _edit_cost(costs, 2.0, 2.0) == edit[n, m]
    assert _warping_cost(costs) == warp[n, m]
