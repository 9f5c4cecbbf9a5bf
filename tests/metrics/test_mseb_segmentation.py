"""MSEB's salient-term segmentation metrics: positional NDCG, greedy hits, mAP, WER, rates."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audiobench.metrics import (
    INVALID_ANSWER,
    NO_RESPONSE,
    TimedTerm,
    greedy_segment_hits,
    positional_ndcg,
    segment_average_precision,
    segmentation_scores,
)


def T(term: str, start: float, end: float, score: float | None = None) -> TimedTerm:
    return TimedTerm(term, start, end, score)


# --- brute-force references (written differently from the module) -----------------------


def _brute_hits(ref, pred, tau):
    """Greedy passes with explicit sets of remaining indices and ``next`` over generators."""
    free = list(range(len(pred)))
    open_refs = list(range(len(ref)))

    def on_time(r, p):
        return abs(r.start - p.start) <= tau and abs(r.end - p.end) <= tau

    def on_term(r, p):
        return r.term.lower() == p.term.lower()

    counts = []
    for rule in (lambda r, p: on_time(r, p) and on_term(r, p), on_time, on_term):
        count = 0
        for i in list(open_refs):
            j = next((j for j in free if rule(ref[i], pred[j])), None)
            if j is not None:
                free.remove(j)
                open_refs.remove(i)
                count += 1
        counts.append(count)
    return counts[0], counts[0] + counts[1], counts[0] + counts[2]


def _brute_ndcg(ref_terms, pred_terms):
    if not "".join(t.strip() for t in ref_terms):
        return 0.0
    gains = np.array([1.0 / math.log2(k + 2) for k in range(len(ref_terms))])
    hits = np.array(
        [
            k < len(pred_terms) and pred_terms[k].lower() == ref_terms[k].lower()
            for k in range(len(ref_terms))
        ]
    )
    return float(gains[hits].sum() / gains.sum())


def _brute_ap(refs, preds, tau):
    """Threshold-form AP from scratch: Σ over distinct scores of ΔRecall · Precision."""
    pool = []
    for u, pred in enumerate(preds):
        if isinstance(pred, str) or not pred or pred[0].score is None:
            continue
        pool.extend((u, k, p) for k, p in enumerate(pred))
    if not pool:
        return 0.0
    pool.sort(key=lambda x: (-x[2].score, x[0], x[1]))
    remaining = {u: list(range(len(r))) for u, r in enumerate(refs)}
    labels = []
    for u, _, p in pool:
        hit = next(
            (
                i
                for i in remaining[u]
                if abs(p.start - refs[u][i].start) <= tau
                and abs(p.end - refs[u][i].end) <= tau
                and p.term.lower() == refs[u][i].term.lower()
            ),
            None,
        )
        if hit is not None:
            remaining[u].remove(hit)
        labels.append(hit is not None)
    positives = sum(labels)
    if positives == 0:
        return 0.0
    ap, previous_recall = 0.0, 0.0
    for threshold in sorted({p.score for _, _, p in pool}, reverse=True):
        chosen = [lab for (_, _, p), lab in zip(pool, labels, strict=True) if p.score >= threshold]
        recall = sum(chosen) / positives
        ap += (recall - previous_recall) * (sum(chosen) / len(chosen))
        previous_recall = recall
    return ap


# --- hand-computed values ---------------------------------------------------------------


def test_positional_ndcg_by_hand() -> None:
    # Hits at positions 0 and 2 (the middle term is swapped): DCG = 1 + 1/log2(4) = 1.5;
    # IDCG = 1 + 1/log2(3) + 1/2.
    value = positional_ndcg(["Paris", "tower", "river"], ["paris", "river", "RIVER"])
    assert value == pytest.approx(1.5 / (1.5 + 1 / math.log2(3)))
    # A correct term at the wrong rank earns nothing; there is no time condition.
    assert positional_ndcg(["a", "b"], ["b", "a"]) == 0.0
    assert positional_ndcg(["a", "b"], ["a", "b", "c"]) == 1.0
    assert positional_ndcg(["a"], []) == 0.0  # empty prediction
    assert positional_ndcg([], ["a"]) == 0.0  # empty reference
    assert positional_ndcg([" "], [" "]) == 0.0  # blank reference text scores 0
    with pytest.raises(ValueError, match="sequence of strings"):
        positional_ndcg("ab", ["a"])


def test_greedy_passes_by_hand() -> None:
    ref = [T("alpha", 0.0, 1.0), T("beta", 2.0, 3.0), T("gamma", 4.0, 5.0)]
    pred = [
        T("beta", 0.0, 1.0),  # right time for alpha, wrong term
        T("ALPHA", 8.0, 9.0),  # alpha's term (any case), wrong time
        T("beta", 2.0, 3.0),  # beta exactly
        T("delta", 4.0, 5.0),  # gamma's time
    ]
    hits = greedy_segment_hits(ref, pred)
    # Pass 1: beta ↔ pred 2. Pass 2 (time): alpha ↔ pred 0, gamma ↔ pred 3. Pass 3 (term):
    # nothing left unmatched. So both = 1, time = 1 + 2, term = 1 + 0: pred 1 (ALPHA) is never
    # used because alpha was already taken on time in pass 2.
    assert (hits.timestamps_and_embeddings, hits.timestamps, hits.embeddings) == (1, 3, 1)


def test_greedy_matching_ties_take_the_first_prediction() -> None:
    # Both predictions match the first reference on time and term; the first one is taken,
    # leaving the second for the second reference only if it matches that one.
    ref = [T("x", 1.0, 2.0), T("x", 1.0, 2.0)]
    pred = [T("x", 1.0, 2.0), T("x", 1.0, 2.0)]
    assert greedy_segment_hits(ref, pred).timestamps_and_embeddings == 2
    # References are visited in order: the first reference takes the only prediction both
    # could use (on time), so the second gets nothing.
    ref = [T("a", 1.0, 2.0), T("b", 1.0, 2.0)]
    hits = greedy_segment_hits(ref, [T("b", 1.0, 2.0)])
    # Pass 1: a≠b, then b ↔ pred 0 on both; so 1, 1, 1.
    assert (hits.timestamps_and_embeddings, hits.timestamps, hits.embeddings) == (1, 1, 1)


def test_tolerance_boundary() -> None:
    ref = [T("a", 1.0, 2.0)]
    # Exactly representable differences: |Δ| = 0.25 = τ is a match, beyond it is not.
    assert greedy_segment_hits(ref, [T("a", 1.25, 1.75)], tau=0.25).timestamps == 1
    assert greedy_segment_hits(ref, [T("a", 1.25, 2.2500001)], tau=0.25).timestamps == 0
    # With MSEB's τ = 0.05: 1.0 vs 1.05 differs by 0.05000000000000004 in binary floating
    # point, just outside, as in MSEB; 0.25 vs 0.3 differs by 0.04999999999999999, inside.
    assert abs(1.0 - 1.05) > 0.05
    assert greedy_segment_hits(ref, [T("a", 1.05, 2.0)]).timestamps == 0
    assert greedy_segment_hits([T("a", 0.25, 1.0)], [T("a", 0.3, 1.0)]).timestamps == 1
    # τ = 0 demands equal times.
    assert greedy_segment_hits(ref, [T("a", 1.0, 2.0)], tau=0).timestamps == 1


def test_corpus_scores_by_hand() -> None:
    refs = [
        [T("Eiffel", 0.0, 0.5), T("tower", 0.6, 1.0)],
        [T("river", 1.0, 1.5)],
        [T("bridge", 2.0, 2.5)],
        [T("museum", 0.0, 1.0)],
    ]
    preds = [
        [T("eiffel", 0.02, 0.5, 0.9), T("Tower", 3.0, 4.0, 0.8)],
        [T("river", 1.0, 1.5, 0.7), T("sea", 5.0, 6.0, 0.95)],
        INVALID_ANSWER,
        NO_RESPONSE,
    ]
    scores = segmentation_scores(refs, preds)
    # Hits: utterance 0: Eiffel on both, tower on term only; utterance 1: river on both.
    assert scores.num_segments == 5
    assert scores.timestamps_and_embeddings_hits == 2
    assert scores.timestamps_hits == 2
    assert scores.embeddings_hits == 3
    assert scores.timestamps_and_embeddings_accuracy == pytest.approx(2 / 5)
    assert scores.embeddings_accuracy == pytest.approx(3 / 5)
    # NDCG: utterance 0 both positions right → 1; utterance 1 position 0 right → 1; the
    # invalid and missing answers have no terms → 0. Mean = 2 / 4.
    assert scores.ndcg == pytest.approx(0.5)
    # WER over joined terms: 0/2, "river" vs "river sea" 1 insertion / 1, 1/1 and 1/1
    # (deletions): (0 + 1 + 1 + 1) / (2 + 1 + 1 + 1) = 3 / 5.
    assert scores.word_error_rate == pytest.approx(3 / 5)
    # mAP over the 4 scored predictions sorted by score: sea (0.95, miss), eiffel (0.9,
    # hit), Tower (0.8, miss: wrong time), river (0.7, hit). Precision at the two hits:
    # 1/2 and 2/4; AP = (1/2)(1/2) + (1/2)(2/4) = 0.5.
    assert scores.mean_average_precision == pytest.approx(0.5)
    assert scores.n_scored_predictions == 4
    assert scores.invalid_result_rate == 0.25
    assert scores.missing_result_rate == 0.25
    assert scores.to_dict()["NDCG"] == scores.ndcg
    assert segment_average_precision(refs, preds) == pytest.approx(0.5)


def test_map_ignores_unscored_predictions_and_is_zero_without_hits() -> None:
    refs = [[T("a", 0.0, 1.0)]]
    assert segmentation_scores(refs, [[T("a", 0.0, 1.0)]]).mean_average_precision == 0.0
    assert segmentation_scores(refs, [[T("b", 0.0, 1.0, 0.5)]]).mean_average_precision == 0.0
    assert segmentation_scores(refs, [[]]).mean_average_precision == 0.0  # empty prediction


def test_map_ties_enter_together() -> None:
    refs = [[T("a", 0.0, 1.0)], [T("b", 0.0, 1.0)]]
    preds = [[T("x", 0.0, 1.0, 0.5)], [T("b", 0.0, 1.0, 0.5)]]
    # One threshold holds both: precision 1/2 at recall 1 → AP = 0.5 whatever the order.
    assert segment_average_precision(refs, preds) == pytest.approx(0.5)
    assert segment_average_precision(refs[::-1], preds[::-1]) == pytest.approx(0.5)


def test_map_reference_is_used_once_in_score_order() -> None:
    refs = [[T("a", 0.0, 1.0)]]
    preds = [[T("a", 0.0, 1.0, 0.2), T("a", 0.0, 1.0, 0.9)]]
    # The 0.9 prediction takes the reference; the 0.2 duplicate is a false positive: AP = 1.
    assert segment_average_precision(refs, preds) == 1.0


def test_empty_reference_utterance() -> None:
    refs = [[T("a", 0.0, 1.0)], []]
    scores = segmentation_scores(refs, [[T("a", 0.0, 1.0)], [T("b", 0.0, 1.0)]])
    assert scores.ndcg == 0.5  # the empty reference scores 0
    assert scores.word_error_rate == 1.0  # (0 + 1 inserted word) / (1 + 0)
    assert scores.timestamps_and_embeddings_accuracy == 1.0


def test_no_reference_terms_at_all_is_an_error() -> None:
    with pytest.raises(ValueError, match="no utterance has a reference term"):
        segmentation_scores([[], []], [[T("a", 0, 1)], []])


@pytest.mark.parametrize(
    ("refs", "preds", "tau", "match"),
    [
        ([[T("a", 0, 1)]], ["garbage"], 0.05, "'garbage'"),
        ([[T("a", 0, 1)]], [[T("a", 0, 1, 0.5), T("b", 0, 1)]], 0.05, "some terms"),
        ([[T("a", 0, 1)]], [[T("a", math.nan, 1)]], 0.05, r"predictions\[0\]\[0\].start"),
        ([[T("a", 0, 1, 0.3)]], [[]], 0.05, "takes no score"),
        ([[T("a", 0, 1)]], [[], []], 0.05, "1 references and 2 predictions"),
        ([[T("a", 0, 1)]], [[]], -0.1, "tau"),
        ([[("a", 0, 1)]], [[]], 0.05, "TimedTerm"),
        ([], [], 0.05, "no utterances"),
    ],
)
def test_bad_input_is_a_clear_error(refs, preds, tau, match) -> None:
    with pytest.raises(ValueError, match=match):
        segmentation_scores(refs, preds, tau=tau)


# --- against the brute force --------------------------------------------------------------

TERMS = ["a", "b", "A", "c"]


@st.composite
def corpora(draw):
    n = draw(st.integers(1, 5))
    times = st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0])  # exact binary fractions

    def term(scored: bool):
        return st.builds(
            TimedTerm,
            st.sampled_from(TERMS),
            times,
            times,
            st.sampled_from([0.1, 0.5, 0.9]) if scored else st.none(),
        )

    refs, preds = [], []
    for _ in range(n):
        refs.append(draw(st.lists(term(False), max_size=4)))
        kind = draw(st.sampled_from(["scored", "plain", INVALID_ANSWER, NO_RESPONSE]))
        if kind in (INVALID_ANSWER, NO_RESPONSE):
            preds.append(kind)
        else:
            preds.append(draw(st.lists(term(kind == "scored"), max_size=4)))
    if not any(refs):
        refs[0] = [TimedTerm("a", 0.0, 0.5)]
    return refs, preds


@settings(max_examples=80, deadline=None)
@given(case=corpora(), tau=st.sampled_from([0.0, 0.25, 0.3]))
def test_matches_brute_force(case, tau) -> None:
    refs, preds = case
    scores = segmentation_scores(refs, preds, tau=tau)
    both = time = term = 0
    ndcgs = []
    for ref, pred in zip(refs, preds, strict=True):
        terms = [] if isinstance(pred, str) else pred
        b, t, e = _brute_hits(ref, terms, tau) if ref and terms else (0, 0, 0)
        both, time, term = both + b, time + t, term + e
        ndcgs.append(_brute_ndcg([r.term for r in ref], [p.term for p in terms]))
    assert scores.timestamps_and_embeddings_hits == both
    assert scores.timestamps_hits == time
    assert scores.embeddings_hits == term
    assert scores.ndcg == pytest.approx(float(np.mean(ndcgs)), abs=1e-12)
    assert scores.mean_average_precision == pytest.approx(_brute_ap(refs, preds, tau), abs=1e-12)
    # Ordering properties every corpus satisfies.
    assert both <= min(time, term) <= max(time, term) <= scores.num_segments
    assert 0.0 <= scores.ndcg <= 1.0


@settings(max_examples=40, deadline=None)
@given(case=corpora())
def test_perfect_prediction_scores_one(case) -> None:
    refs, _ = case
    preds = [[TimedTerm(r.term, r.start, r.end, 1.0) for r in ref] for ref in refs]
    scores = segmentation_scores(refs, preds)
    assert scores.timestamps_and_embeddings_accuracy == 1.0
    assert scores.word_error_rate == 0.0
    assert scores.mean_average_precision == 1.0
    nonblank = [bool(ref) for ref in refs]
    assert scores.ndcg == pytest.approx(sum(nonblank) / len(refs))
