"""Span QA (reasoning) against the values MSEB's own evaluator gave on the same inputs.

Pinned from ``ReasoningEvaluator.compute_predictions`` / ``compute_metrics``,
``compute_f1_score``, ``find_no_answer_threshold_by_gmm`` and ``_find_decision_boundary``
(``mseb/evaluators/reasoning_evaluator.py``, MSEB commit ``a88af49``; scikit-learn 1.9.1,
NumPy 2.4.6), run outside this repository on :mod:`tests.parity.mseb_inputs`. Span scores
are the float32 dot products MSEB computes (``np.dot(query, spans.T)``), and the mixture is
fitted in float32 as there, so the fitted threshold, the answers and every score are
compared exactly.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from audiobench.metrics.span_qa import (
    gaussian_decision_boundary,
    mseb_span_f1,
    no_answer_threshold,
    select_answers,
    span_qa_scores,
)
from tests.parity import mseb_inputs

MSEB_THRESHOLD = 8.667784690856934
#: The same scores as float64 give another threshold: the dtype matters, as in MSEB.
MSEB_THRESHOLD_FLOAT64 = 8.667788706994804
MSEB_FITTED = {
    "GmeanF1": 0.4227621843863004,
    "F1": 0.55,
    "F1_std": 0.48619840486049404,
    "InvalidResultRate": 0.0,
    "InvalidResultRate_std": 0.0,
    "MissingResultRate": 0.0,
    "MissingResultRate_std": 0.0,
}
#: Examples MSEB answered (all others "No Answer") with the fitted threshold.
MSEB_FITTED_ANSWERED = {
    10: "span 10 word2",
    14: "span 14 word1",
    19: "span 19 word1",
    39: "span 39 word0",
    43: "span 43 word0",
    44: "span 44 word2",
    53: "span 53 word1",
    57: "span 57 word0",
    58: "span 58 word1",
}
MSEB_GIVEN_05 = {
    "GmeanF1": 0.5550015444684105,
    "F1": 0.6444444444444444,
    "F1_std": 0.43829073162924487,
    "InvalidResultRate": 0.0,
    "InvalidResultRate_std": 0.0,
    "MissingResultRate": 0.0,
    "MissingResultRate_std": 0.0,
}
#: With threshold 0.5 MSEB answered "No Answer" exactly for these examples.
MSEB_GIVEN_05_NO_ANSWER = {3, 7, 20, 23, 37, 40, 54}
MSEB_F1 = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.6666666666666666, 0.5, 1.0, 0.0]
#: (weights, means, variances) → MSEB's boundary: linear (equal variances), isclose(A, 0),
#: the two quadratic roots, a negative discriminant (midpoint), and B = 0 too (NaN).
MSEB_BOUNDARIES = [
    (([0.5, 0.5], [0.0, 2.0], [1.0, 1.0]), 1.0),
    (([0.3, 0.7], [0.0, 2.0], [1.0, 1.0 + 1e-12]), 0.5763510698062246),
    (([0.5, 0.5], [0.0, 3.0], [1.0, 4.0]), 1.418344988105127),
    (([0.9, 0.1], [0.0, 0.1], [1.0, 0.01]), 0.05378165967571672),
    (([0.999, 0.001], [0.0, 0.5], [0.2, 0.05]), 0.25),
    (([0.5, 0.5], [1.0, 1.0], [1.0, 1.0]), math.nan),
]
#: Six identical best scores: the mixture still fits, and its boundary falls below them.
MSEB_IDENTICAL_SCORES_THRESHOLD = 0.24992893434446922


def _mseb_span_scores() -> tuple[list[np.ndarray], list[list[str]], list[str]]:
    queries, spans, texts, answers = mseb_inputs.reasoning_scores()
    scores = [np.dot(q, s.T) for q, s in zip(queries, spans, strict=True)]
    return scores, texts, answers


def test_fitted_threshold_answers_and_scores_equal_mseb() -> None:
    scores, texts, answers = _mseb_span_scores()
    chosen = select_answers(scores, texts)
    assert chosen.threshold == MSEB_THRESHOLD
    expected = ["No Answer"] * len(texts)
    for i, text in MSEB_FITTED_ANSWERED.items():
        expected[i] = text
    assert chosen.predictions == expected
    assert span_qa_scores(answers, chosen.predictions).to_dict() == MSEB_FITTED


def test_given_threshold_equals_mseb() -> None:
    scores, texts, answers = _mseb_span_scores()
    chosen = select_answers(scores, texts, threshold=0.5)
    no_answer = {i for i, p in enumerate(chosen.predictions) if p == "No Answer"}
    assert no_answer == MSEB_GIVEN_05_NO_ANSWER
    assert span_qa_scores(answers, chosen.predictions).to_dict() == MSEB_GIVEN_05


def test_mixture_follows_the_scores_dtype_as_mseb() -> None:
    scores, _, _ = _mseb_span_scores()
    best = [s[int(np.argmax(s))] for s in scores if s.size]
    assert no_answer_threshold(np.array(best)) == MSEB_THRESHOLD
    assert no_answer_threshold(np.array(best, dtype=np.float64)) == MSEB_THRESHOLD_FLOAT64


@pytest.mark.parametrize(("components", "expected"), MSEB_BOUNDARIES)
def test_decision_boundary_branches_equal_mseb(
    components: tuple[list[float], list[float], list[float]], expected: float
) -> None:
    got = gaussian_decision_boundary(*components)
    assert got == expected or (math.isnan(got) and math.isnan(expected))


def test_identical_scores_fit_as_in_mseb() -> None:
    assert no_answer_threshold(np.full(6, 0.5)) == MSEB_IDENTICAL_SCORES_THRESHOLD


def test_fewer_than_two_scored_examples_is_refused_with_the_remedy() -> None:
    """MSEB's mixture fit raises there (1 or 0 samples); we say how to go on instead."""
    with pytest.raises(ValueError, match="pass threshold="):
        select_answers([np.array([0.3], np.float32), np.zeros(0, np.float32)], [["a"], []])
    with pytest.raises(ValueError, match="at least 2"):
        no_answer_threshold([0.3])


def test_f1_edge_cases_equal_mseb() -> None:
    pairs = mseb_inputs.reasoning_f1_pairs()
    assert [mseb_span_f1(ref, pred) for ref, pred in pairs] == MSEB_F1


def test_no_answer_on_both_sides_and_zero_to_the_zero() -> None:
    """Only "No Answer" references, all answered so: F1_A = 0 with weight 0, 0^0 = 1."""
    both = span_qa_scores(["No Answer"] * 2, ["No Answer"] * 2).to_dict()
    assert both["GmeanF1"] == 1.0 and both["F1"] == 1.0 and both["F1_std"] == 0.0
    always = span_qa_scores(["x y", "No Answer"], ["No Answer"] * 2).to_dict()
    assert (always["GmeanF1"], always["F1"], always["F1_std"]) == (0.0, 0.5, 0.5)


def test_ties_take_the_first_span_and_a_score_at_the_threshold_answers() -> None:
    """MSEB: np.argmax (first of the best) and ``score < threshold`` → "No Answer"."""
    queries = np.array([[1.0, 0.0], [0.0, 2.0]], np.float32)
    spans = [
        np.array([[1.0, 0.0], [1.0, 0.0]], np.float32),
        np.array([[0.0, 0.25], [0.0, 0.1]], np.float32),
    ]
    scores = [np.dot(q, s.T) for q, s in zip(queries, spans, strict=True)]
    chosen = select_answers(scores, [["first", "second"], ["equal", "below"]], threshold=0.5)
    assert chosen.predictions == ["first", "equal"]  # MSEB's predictions
    result = span_qa_scores(["first", "No Answer"], chosen.predictions).to_dict()
    assert (result["GmeanF1"], result["F1"], result["F1_std"]) == (0.0, 0.5, 0.5)


def test_the_mseb_evaluator_scores_the_pinned_inputs_as_mseb() -> None:
    """The whole protocol=mseb evaluator (embedding, dtype, span scoring, fitting, scoring)
    on the same float32 embeddings: MSEB's threshold and scores, exactly."""
    from audiobench.families import ReasoningTask
    from audiobench.task import TaskFamily
    from tests.families.test_retrieval import FakeEmbedder, clip, meta

    class Reasoning(ReasoningTask):
        metadata = meta("ParityReasoning", TaskFamily.REASONING, "GmeanF1")

    queries, spans, texts, answers = mseb_inputs.reasoning_scores()
    clips = [clip(f"q{i}", spans=list(texts[i]), answer=answers[i]) for i in range(len(queries))]
    span_vectors = {t: s[j] for s, ts in zip(spans, texts, strict=True) for j, t in enumerate(ts)}
    embedder = FakeEmbedder({f"q{i}": q for i, q in enumerate(queries)}, span_vectors)
    report = Reasoning().evaluate(embedder, clips).scores["default"]  # type: ignore[arg-type]
    assert report["no_answer_threshold"] == MSEB_THRESHOLD and report["threshold_fitted"]
    assert {key: report[key] for key in MSEB_FITTED} == MSEB_FITTED
    assert report["n_predicted_no_answer"] == len(queries) - len(MSEB_FITTED_ANSWERED)
