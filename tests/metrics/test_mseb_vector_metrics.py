"""MSEB's retrieval, reranking, classification and clustering metrics: hand-computed values,
brute-force equivalents and bad input (MSEB's own values: ``tests/parity``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from audiobench.metrics.mseb_classification import (
    label_dot_scores,
    mseb_multiclass_scores,
    mseb_multilabel_scores,
)
from audiobench.metrics.mseb_clustering import mseb_v_measure
from audiobench.metrics.mseb_conventions import INVALID_ANSWER, NO_RESPONSE
from audiobench.metrics.mseb_reranking import mseb_reranking_scores
from audiobench.metrics.mseb_retrieval import (
    dot_product_top_k,
    mseb_retrieval_scores,
    single_reference_ndcg,
)
from audiobench.metrics.transcription import whisper_normalizer

# --- retrieval -------------------------------------------------------------------------------


def test_retrieval_hand_computed() -> None:
    """Four queries: reference at rank 2, at rank 11 (beyond the top 10), an invalid answer,
    and a reference of two documents (hit at rank 1; NDCG 0 as MSEB compares strings)."""
    ranked = [f"d{i}" for i in range(12)]
    answers = [ranked, ranked, INVALID_ANSWER, ranked]
    references = [{"d1"}, {"d10"}, {"d0"}, {"d0", "d5"}]
    s = mseb_retrieval_scores(answers, references)
    assert s["mrr"] == pytest.approx((0.5 + 0 + 0 + 1) / 4)
    assert s["em"] == 0.25
    assert s["recall_at_10"] == s["recall_at_inf"] == 0.5
    assert s["ndcg_at_10"] == pytest.approx((1 / math.log2(3)) / 4)
    assert s["invalid_result_rate"] == 0.25 and s["no_result_rate"] == 0.0
    mrr = np.array([0.5, 0, 0, 1])
    assert s["mrr_std"] == pytest.approx(mrr.std())  # the population std


def test_retrieval_no_response_and_unknown_sentinel() -> None:
    s = mseb_retrieval_scores([NO_RESPONSE, ["a"]], [{"a"}, {"a"}])
    assert s["no_result_rate"] == 0.5 and s["mrr"] == 0.5 and s["em"] == 0.5
    with pytest.raises(ValueError, match="'oops'"):
        mseb_retrieval_scores(["oops"], [{"a"}])
    with pytest.raises(ValueError, match="2 answers and 1 references"):
        mseb_retrieval_scores([["a"], ["a"]], [{"a"}])
    with pytest.raises(ValueError, match="no queries"):
        mseb_retrieval_scores([], [])


def test_single_reference_ndcg() -> None:
    assert single_reference_ndcg(["a", "b", "c"], {"c"}) == pytest.approx(0.5)
    assert single_reference_ndcg(["a"] * 10 + ["c"], {"c"}) == 0.0  # beyond 10
    assert single_reference_ndcg(["c"], {"c", "d"}) == 0.0  # several: MSEB's string compare


def test_dot_product_top_k_is_the_brute_force_ranking() -> None:
    rng = np.random.default_rng(0)
    queries, docs = rng.standard_normal((7, 5)), rng.standard_normal((23, 5))
    ranked = dot_product_top_k(queries, docs)
    scores = queries.astype(np.float32) @ docs.astype(np.float32).T
    for q in range(7):
        best = sorted(range(23), key=lambda d: (-scores[q, d], d))[:10]
        assert ranked[q].tolist() == best
    # The raw dot product, not cosine: a long document outranks a well-aligned short one.
    assert dot_product_top_k([[1.0, 0.0]], [[0.1, 0.0], [5.0, 5.0]], k=1).tolist() == [[1]]


def test_dot_product_top_k_ties_and_small_indexes() -> None:
    ranked = dot_product_top_k([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0], [1.0, 5.0]])
    assert ranked.tolist() == [[0, 2, 1]]  # 1, 0, 1: the tie to the earlier document
    with pytest.raises(ValueError, match="width"):
        dot_product_top_k([[1.0]], [[1.0, 2.0]])
    with pytest.raises(ValueError, match="no documents"):
        dot_product_top_k([[1.0]], np.zeros((0, 1)))


def test_retrieval_mrr_brute_force() -> None:
    """MRR@10 from the full ranking of every document equals the metric on the top 10."""
    rng = np.random.default_rng(1)
    queries, docs = rng.standard_normal((30, 4)), rng.standard_normal((40, 4))
    references = [{int(rng.integers(40))} for _ in range(30)]
    top = dot_product_top_k(queries, docs)
    s = mseb_retrieval_scores([list(r) for r in top], references)
    full = np.argsort(-(queries.astype(np.float32) @ docs.astype(np.float32).T), axis=1)
    rr = []
    for q, ref in enumerate(references):
        rank = int(np.flatnonzero(full[q] == next(iter(ref)))[0]) + 1
        rr.append(1 / rank if rank <= 10 else 0.0)
    assert s["mrr"] == pytest.approx(float(np.mean(rr)))


# --- reranking -------------------------------------------------------------------------------


def test_reranking_hand_computed() -> None:
    """Query 1 ranks the truth first, then a wrong text, then the truth with '!' (no word
    error once normalised, but not the exact reference string); query 2 has no response."""
    basic = whisper_normalizer("ja_jp")
    answers = [[("a b", 0.9), ("a c", 0.5), ("A b!", 0.1)], NO_RESPONSE]
    references = [["a b"], ["x y z"]]
    s = mseb_reranking_scores(answers, references, normalize=basic)
    ap = (1 / 1 + 2 / 3) / 2  # relevant at ranks 1 and 3
    assert s["map"] == pytest.approx(ap / 2)
    assert s["ndcg"] == pytest.approx(0.5)  # query 1: 1 (only "a b" is in texts), query 2: 0
    assert s["mrr"] == pytest.approx(0.5)
    assert s["wer"] == pytest.approx((0 + 3) / (2 + 3))  # corpus level
    assert s["candidate_error_rate"] == 0.5
    assert s["no_result_rate"] == 0.5 and s["invalid_result_rate"] == 0.0


def test_reranking_mrr_is_exact_string_and_cut_at_10() -> None:
    listed = [(f"w{i}", 1 - i / 100) for i in range(12)] + [("ref", 0.0)]
    s = mseb_reranking_scores([listed], [["ref"]])
    assert s["mrr"] == 0.0 and s["wer"] == 1.0 and s["candidate_error_rate"] == 1.0
    # Without a normaliser, case counts: "Ref" is a word error and not the reference.
    s = mseb_reranking_scores([[("Ref", 1.0), ("ref", 0.5)]], [["ref"]])
    assert s["mrr"] == 0.5 and s["map"] == 0.5


def test_reranking_average_precision_brute_force() -> None:
    """MAP with distinct scores: the mean precision at each relevant candidate's rank."""
    rng = np.random.default_rng(2)
    answers, references, expected = [], [], []
    for _ in range(20):
        n = int(rng.integers(2, 9))
        texts = [f"t{int(rng.integers(3))}" for _ in range(n)]
        scores = sorted(rng.random(n).tolist(), reverse=True)
        answers.append(list(zip(texts, scores, strict=True)))
        references.append(["t0"])
        hits = [i for i, t in enumerate(texts) if t == "t0"]
        precisions = [(k + 1) / (rank + 1) for k, rank in enumerate(hits)]
        expected.append(float(np.mean(precisions)) if hits else 0.0)
    s = mseb_reranking_scores(answers, references)
    assert s["map"] == pytest.approx(float(np.mean(expected)))


def test_reranking_one_candidate_and_bad_input() -> None:
    # MSEB's scikit-learn NDCG refuses one candidate; its gain is the defined value.
    assert mseb_reranking_scores([[("a", 1.0)]], [["a"]])["ndcg"] == 1.0
    with pytest.raises(ValueError, match="non-empty list"):
        mseb_reranking_scores([[("a", 1.0)]], [[]])
    with pytest.raises(ValueError, match="ranks no candidate"):
        mseb_reranking_scores([[]], [["a"]])
    with pytest.raises(ValueError, match="WER is undefined"):
        mseb_reranking_scores([[("a", 1.0)]], [["!"]], normalize=whisper_normalizer("ja_jp"))
    with pytest.raises(ValueError, match="2 normalisers for 1 queries"):
        mseb_reranking_scores([[("a", 1.0)]], [["a"]], normalize=[str.lower, str.lower])


# --- classification --------------------------------------------------------------------------


def test_label_dot_scores_are_the_plain_dot_products() -> None:
    x = np.array([[1.0, 2.0], [0.5, -1.0]], dtype=np.float32)
    w = np.array([[3.0, 0.0], [1.0, 1.0], [0.0, -2.0]], dtype=np.float32)
    scores = label_dot_scores(x, w)
    assert scores.dtype == np.float32
    assert scores.tolist() == (x @ w.T).tolist()


def test_multiclass_hand_computed() -> None:
    scores = np.array([[0.9, 0.1, 0.0], [0.2, 0.8, 0.0], [0.5, 0.5, 0.1], [0.0, 0.3, 0.6]])
    s = mseb_multiclass_scores(scores, np.array([0, 0, 1, 2]))
    # Predictions 0, 1, 0 (the tie to the earlier class), 2.
    assert s["accuracy"] == 0.5
    assert s["balanced_accuracy"] == pytest.approx((0.5 + 0 + 1) / 3)
    assert s["top_5_accuracy"] == 1.0  # k = min(5, 3 classes)
    # Weighted by support (2, 1, 1): precision of classes 0, 1, 2 = 1/2, 0, 1.
    assert s["weighted_precision"] == pytest.approx((2 * 0.5 + 0 + 1) / 4)
    assert s["weighted_recall"] == s["accuracy"]
    assert s["invalid_result_rate"] == s["missing_result_rate"] == 0.0


def test_multiclass_top5_brute_force() -> None:
    rng = np.random.default_rng(4)
    scores, targets = rng.standard_normal((50, 9)), rng.integers(0, 9, size=50)
    s = mseb_multiclass_scores(scores, targets)
    top5 = [t in np.argsort(-row)[:5] for row, t in zip(scores, targets, strict=True)]
    assert s["top_5_accuracy"] == pytest.approx(float(np.mean(top5)))
    assert s["accuracy"] == pytest.approx(float(np.mean(scores.argmax(axis=1) == targets)))


def test_multilabel_threshold_on_raw_scores() -> None:
    scores = np.array([[0.5, 0.49], [0.7, 0.9]])
    truth = np.array([[1, 0], [1, 1]])
    s = mseb_multilabel_scores(scores, truth)
    assert s["subset_accuracy"] == 1.0 and s["hamming_loss"] == 0.0  # 0.5 counts as positive
    assert s["micro_f1"] == s["macro_f1"] == 1.0
    # A class without a positive gives AP 0 (scikit-learn), halving the macro mAP here.
    s = mseb_multilabel_scores(scores, np.array([[1, 0], [1, 0]]))
    assert s["map"] == 0.5


def test_classification_bad_input() -> None:
    with pytest.raises(ValueError, match="class indices in"):
        mseb_multiclass_scores(np.zeros((1, 2)), np.array([2]))
    with pytest.raises(ValueError, match="0/1"):
        mseb_multilabel_scores(np.zeros((1, 2)), np.array([[2, 0]]))
    with pytest.raises(ValueError, match="width"):
        label_dot_scores(np.zeros((1, 2)), np.zeros((2, 3)))


# --- clustering ------------------------------------------------------------------------------


def test_v_measure_separated_clusters_and_bad_input() -> None:
    rng = np.random.default_rng(6)
    centres = np.array([[10.0, 0.0], [-10.0, 0.0], [0.0, 10.0]])
    labels = [str(i % 3) for i in range(60)]
    x = centres[[int(lab) for lab in labels]] + rng.standard_normal((60, 2)) * 0.1
    assert mseb_v_measure(x, labels, seed=0) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="60 embeddings and 2 labels"):
        mseb_v_measure(x, ["a", "b"], seed=0)
