"""MSEB's span QA (reasoning) metrics: per-example F1, GmeanF1, rates and the No Answer rule."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq
from scipy.stats import norm

from audiobench.metrics import (
    INVALID_ANSWER,
    NO_ANSWER,
    NO_RESPONSE,
    gaussian_decision_boundary,
    mseb_span_f1,
    no_answer_threshold,
    select_answers,
    span_qa_scores,
)


def _brute_f1(reference: str, prediction: str) -> float:
    """Token matching by repeated removal from a list (no Counter)."""
    if prediction == "":
        return 0.0
    if "No Answer" in (reference, prediction):
        return 1.0 if reference == prediction else 0.0
    remaining = reference.split()
    common = 0
    for token in prediction.split():
        if token in remaining:
            remaining.remove(token)
            common += 1
    if common == 0:
        return 0.0
    p = common / len(prediction.split())
    r = common / len(reference.split())
    return 2 * p * r / (p + r)


def _brute_gmean(refs: list[str], preds: list[str]) -> float:
    answerable = [_brute_f1(t, p) for t, p in zip(refs, preds, strict=True) if t != "No Answer"]
    unanswerable = [_brute_f1(t, p) for t, p in zip(refs, preds, strict=True) if t == "No Answer"]
    w = len(answerable) / len(refs)
    a = sum(answerable) / len(answerable) if answerable else 0.0
    u = sum(unanswerable) / len(unanswerable) if unanswerable else 0.0
    factors = []
    for base, exponent in ((a, w), (u, 1 - w)):
        if exponent == 0:
            factors.append(1.0)  # x^0 = 1, including 0^0
        elif base == 0:
            factors.append(0.0)
        else:
            factors.append(math.exp(exponent * math.log(base)))
    return factors[0] * factors[1]


def test_per_example_f1_by_hand() -> None:
    # 2 of 3 predicted tokens in the 4-token reference: P = 2/3, R = 1/2, F1 = 4/7.
    assert mseb_span_f1("the tall eiffel tower", "eiffel tower today") == pytest.approx(4 / 7)
    # No normalisation: case, punctuation and articles count (SQuAD F1 would give 1).
    assert mseb_span_f1("The Eiffel Tower.", "eiffel tower") == 0.0
    assert mseb_span_f1("a b", "the a b") == pytest.approx(0.8)  # SQuAD would drop "the"
    # Repeated tokens count with multiplicity: "a a" against "a": common 1, P = 1/2, R = 1.
    assert mseb_span_f1("a", "a a") == pytest.approx(2 / 3)


def test_per_example_f1_sentinels() -> None:
    assert mseb_span_f1(NO_ANSWER, NO_ANSWER) == 1.0  # "No Answer" on both sides
    assert mseb_span_f1(NO_ANSWER, "Paris") == 0.0
    assert mseb_span_f1("Paris", NO_ANSWER) == 0.0
    assert mseb_span_f1("Paris", INVALID_ANSWER) == 0.0  # empty prediction: invalid
    assert mseb_span_f1(NO_ANSWER, INVALID_ANSWER) == 0.0
    assert mseb_span_f1("Paris", NO_RESPONSE) == 0.0  # an ordinary wrong answer
    assert mseb_span_f1("", "x") == 0.0  # empty reference: nothing in common
    assert mseb_span_f1("x", "   ") == 0.0  # whitespace-only prediction is not the sentinel
    with pytest.raises(ValueError, match="prediction must be a string"):
        mseb_span_f1("a", None)  # type: ignore[arg-type]


def test_aggregates_by_hand() -> None:
    refs = ["a b c", "x y", NO_ANSWER, NO_ANSWER]
    preds = ["a b", INVALID_ANSWER, NO_ANSWER, NO_RESPONSE]
    scores = span_qa_scores(refs, preds)
    # Per example: 0.8 (P 1, R 2/3), 0 (invalid), 1 (No Answer both), 0 (NO_RESPONSE).
    assert scores.per_example_f1.tolist() == pytest.approx([0.8, 0.0, 1.0, 0.0])
    assert scores.f1 == pytest.approx(0.45)
    # Population std of 0.8, 0, 1, 0 around 0.45: (0.1225 + 0.2025 + 0.3025 + 0.2025) / 4.
    assert scores.f1_std == pytest.approx(math.sqrt(0.83 / 4))
    # F1_A = 0.4, F1_U = 0.5, w = 1/2: GmeanF1 = √0.4 · √0.5 = √0.2.
    assert scores.gmean_f1 == pytest.approx(math.sqrt(0.2))
    assert (scores.answerable_f1, scores.no_answer_f1) == pytest.approx((0.4, 0.5))
    assert scores.invalid_result_rate == 0.25
    assert scores.missing_result_rate == 0.25
    assert scores.invalid_result_rate_std == pytest.approx(math.sqrt(3 / 16))
    assert set(scores.to_dict()) >= {"GmeanF1", "F1", "InvalidResultRate", "MissingResultRate"}


def test_gmean_zero_to_the_zero_and_trivial_answers() -> None:
    # Only answerable examples: w = 1, F1_U = 0 and 0^0 = 1, so GmeanF1 = F1_A.
    scores = span_qa_scores(["a", "b"], ["a", "c"])
    assert scores.gmean_f1 == 0.5 == scores.answerable_f1
    # Only unanswerable examples: w = 0, F1_A = 0 and 0^0 = 1, so GmeanF1 = F1_U.
    assert span_qa_scores([NO_ANSWER] * 2, [NO_ANSWER, "a"]).gmean_f1 == 0.5
    # Always answering "No Answer" gives 0, whereas F1 is the share of unanswerable examples.
    always = span_qa_scores(["a", NO_ANSWER, NO_ANSWER], [NO_ANSWER] * 3)
    assert always.gmean_f1 == 0.0
    assert always.f1 == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    ("refs", "preds", "match"),
    [
        ([], [], "no examples"),
        (["a"], ["a", "b"], "1 references and 2 predictions"),
        ("a", ["a"], "not a string"),
        (["a"], [None], r"predictions\[0\]"),
    ],
)
def test_bad_input_is_a_clear_error(refs, preds, match) -> None:
    with pytest.raises(ValueError, match=match):
        span_qa_scores(refs, preds)


words = st.lists(st.sampled_from(["a", "b", "c", "A", "b."]), min_size=1, max_size=5).map(" ".join)
answers = st.one_of(words, st.sampled_from([NO_ANSWER, INVALID_ANSWER, NO_RESPONSE]))


@settings(max_examples=80, deadline=None)
@given(
    pairs=st.lists(st.tuples(st.one_of(words, st.just(NO_ANSWER)), answers), min_size=1, max_size=8)
)
def test_matches_brute_force(pairs) -> None:
    refs = [t for t, _ in pairs]
    preds = [p for _, p in pairs]
    scores = span_qa_scores(refs, preds)
    brute = [_brute_f1(t, p) for t, p in pairs]
    assert scores.per_example_f1.tolist() == pytest.approx(brute, abs=1e-12)
    assert scores.f1 == pytest.approx(sum(brute) / len(brute), abs=1e-12)
    assert scores.gmean_f1 == pytest.approx(_brute_gmean(refs, preds), abs=1e-12)
    assert scores.invalid_result_rate == sum(p == "" for p in preds) / len(preds)
    assert scores.missing_result_rate == sum(p == "NO_RESPONSE" for p in preds) / len(preds)


@settings(max_examples=60, deadline=None)
@given(a=words, b=words)
def test_f1_is_symmetric_bounded_and_one_only_for_equal_multisets(a, b) -> None:
    value = mseb_span_f1(a, b)
    assert value == pytest.approx(mseb_span_f1(b, a))
    assert 0.0 <= value <= 1.0
    assert (value == 1.0) == (sorted(a.split()) == sorted(b.split()))


# --- the No Answer threshold --------------------------------------------------------------


def _crossing(weights, means, variances, near: float) -> float:
    """The crossing of the two weighted densities closest to ``near``, found numerically."""

    def gap(x):
        first = weights[0] * norm.pdf(x, means[0], math.sqrt(variances[0]))
        return first - weights[1] * norm.pdf(x, means[1], math.sqrt(variances[1]))

    grid = np.linspace(near - 5, near + 5, 20001)
    values = gap(grid)
    signs = np.flatnonzero(np.diff(np.sign(values)) != 0)
    roots = [brentq(gap, grid[k], grid[k + 1]) for k in signs]
    return min(roots, key=lambda r: abs(r - near))


def test_boundary_equal_variances_is_linear() -> None:
    # Equal weights and variances: the midpoint of the means.
    assert gaussian_decision_boundary([0.5, 0.5], [0.0, 2.0], [1.0, 1.0]) == pytest.approx(1.0)
    # Unequal weights shift it: x = (μ1+μ2)/2 + σ² ln(π1/π2) / (μ2 − μ1) = 1 + ln(3)/2.
    value = gaussian_decision_boundary([0.75, 0.25], [0.0, 2.0], [1.0, 1.0])
    assert value == pytest.approx(1 + math.log(3) / 2)
    assert value == pytest.approx(_crossing([0.75, 0.25], [0.0, 2.0], [1.0, 1.0], 1.5))


def test_boundary_equal_means_and_variances_follows_msebs_division() -> None:
    # b = 0: −c/b is +inf when π1 > π2 (every best score answers "No Answer"), NaN when the
    # weights are equal too (no score is below NaN: every example answers).
    assert gaussian_decision_boundary([0.6, 0.4], [1.0, 1.0], [1.0, 1.0]) == math.inf
    assert math.isnan(gaussian_decision_boundary([0.5, 0.5], [1.0, 1.0], [1.0, 1.0]))


def test_boundary_negative_discriminant_falls_back_to_the_midpoint() -> None:
    # A wide, heavy component dominates everywhere, so the densities never cross:
    # a = 1/2 − 1/8 = 0.375, b = 0.2/4 + 0.1/1 = 0.15, c = 0.005 − 0.005 − ln(0.2·2 / 0.8) =
    # ln 2; b² − 4ac = 0.0225 − 1.5 ln 2 < 0 → the midpoint of −0.1 and 0.2.
    weights, means, variances = [0.2, 0.8], [-0.1, 0.2], [1.0, 4.0]
    assert gaussian_decision_boundary(weights, means, variances) == pytest.approx(0.05)
    grid = np.linspace(-30, 30, 60001)
    gap = weights[0] * norm.pdf(grid, -0.1, 1.0) - weights[1] * norm.pdf(grid, 0.2, 2.0)
    assert (gap < 0).all()  # indeed no crossing


def test_boundary_quadratic_picks_msebs_root() -> None:
    weights, means, variances = [0.4, 0.6], [0.0, 3.0], [1.0, 2.25]
    value = gaussian_decision_boundary(weights, means, variances)
    # By hand: a = 1/2 − 1/4.5, b = 3/2.25, c = −9/4.5 − ln(0.4·1.5 / 0.6) = −2.
    a, b, c = 0.5 - 1 / 4.5, 3 / 2.25, -2.0
    x1 = (-b + math.sqrt(b * b - 4 * a * c)) / (2 * a)
    x2 = (-b - math.sqrt(b * b - 4 * a * c)) / (2 * a)
    y1 = 0.4 * norm.pdf(x1, 0.0, 1.0)
    y2 = 0.6 * norm.pdf(x2, 3.0, 1.5)
    assert value == pytest.approx(x1 if y1 > y2 else x2)
    assert value == pytest.approx(_crossing(weights, means, variances, value), abs=1e-9)


@pytest.mark.parametrize(
    ("weights", "means", "variances", "match"),
    [
        ([1.0], [0.0, 1.0], [1.0, 1.0], "exactly 2"),
        ([0.5, 0.5], [0.0, math.nan], [1.0, 1.0], "finite"),
        ([0.5, 0.5], [0.0, 1.0], [0.0, 1.0], "> 0"),
    ],
)
def test_boundary_rejects_bad_parameters(weights, means, variances, match) -> None:
    with pytest.raises(ValueError, match=match):
        gaussian_decision_boundary(weights, means, variances)


def test_fitted_threshold_is_the_mixtures_bayes_boundary() -> None:
    from sklearn.mixture import GaussianMixture

    rng = np.random.default_rng(7)
    scores = np.concatenate([rng.normal(0.0, 1.0, 60), rng.normal(6.0, 1.5, 40)])
    threshold = no_answer_threshold(scores)
    mixture = GaussianMixture(n_components=2, random_state=42).fit(scores[:, None])
    weights = mixture.weights_.tolist()
    means = mixture.means_.ravel().tolist()
    variances = mixture.covariances_.ravel().tolist()
    assert threshold == pytest.approx(_crossing(weights, means, variances, 3.0), abs=1e-9)
    assert min(means) < threshold < max(means)
    # float32 scores are fitted in float32 (as MSEB's float32 dot products are).
    assert no_answer_threshold(scores.astype(np.float32)) == pytest.approx(threshold, rel=1e-4)


def test_threshold_needs_two_scores() -> None:
    with pytest.raises(ValueError, match="at least 2 scored examples"):
        no_answer_threshold([0.5])
    with pytest.raises(ValueError, match="NaN or infinite"):
        no_answer_threshold([0.5, math.inf])


def test_select_answers_by_hand() -> None:
    scores = [np.array([0.1, 0.9, 0.9]), np.array([0.2, 0.4]), np.array([]), np.array([0.5])]
    texts = [["a", "b", "c"], ["d", "e"], [], ["f"]]
    chosen = select_answers(scores, texts, threshold=0.5)
    # Ties: the first highest ("b"); 0.4 < 0.5 → No Answer; no candidates → No Answer;
    # a score equal to the threshold answers.
    assert chosen.predictions == ["b", NO_ANSWER, NO_ANSWER, "f"]
    assert chosen.best_index.tolist() == [1, 1, -1, 0]
    assert chosen.threshold == 0.5
    assert np.isnan(chosen.best_scores[2])


def test_select_answers_fits_the_threshold_on_scored_examples_only() -> None:
    rng = np.random.default_rng(3)
    low = rng.normal(0.0, 0.3, 20)
    high = rng.normal(5.0, 0.3, 20)
    scores = [np.array([s]) for s in np.concatenate([low, high])] + [np.array([])]
    texts = [[f"t{i}"] for i in range(40)] + [[]]
    chosen = select_answers(scores, texts)
    assert chosen.threshold == pytest.approx(no_answer_threshold(np.concatenate([low, high])))
    assert chosen.predictions[:20] == [NO_ANSWER] * 20
    assert chosen.predictions[20:40] == [f"t{i}" for i in range(20, 40)]
    assert chosen.predictions[40] == NO_ANSWER


def test_select_answers_no_scored_predictions() -> None:
    # No example has candidates: everything is "No Answer" and there is nothing to fit.
    chosen = select_answers([[], []], [[], []])
    assert chosen.predictions == [NO_ANSWER, NO_ANSWER]
    assert chosen.threshold is None
    with pytest.raises(ValueError, match="at least 2 examples with candidate spans"):
        select_answers([[0.3], []], [["a"], []])
    assert select_answers([[0.3], []], [["a"], []], threshold=0.0).predictions == ["a", NO_ANSWER]


@pytest.mark.parametrize(
    ("scores", "texts", "threshold", "match"),
    [
        ([[0.1]], [["a", "b"]], 0.0, "1 span scores and 2 span texts"),
        ([[0.1]], [], 0.0, "1 score lists and 0 text lists"),
        ([[math.nan]], [["a"]], 0.0, "NaN"),
        ([[0.1]], [["a"]], math.inf, "finite"),
        ([], [], None, "no examples"),
    ],
)
def test_select_answers_rejects_bad_input(scores, texts, threshold, match) -> None:
    with pytest.raises(ValueError, match=match):
        select_answers(scores, texts, threshold=threshold)
