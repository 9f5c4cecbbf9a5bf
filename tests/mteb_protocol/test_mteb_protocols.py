"""The MTEB-comparable protocols give MTEB's own numbers on the same embeddings.

Every constant below was produced by **MTEB 2.26.24** (scikit-learn 1.9.1, NumPy 2.4.6,
torch 2.13.0 CPU, pytrec-eval-terrier 0.5.11): its task classes and evaluators were run on
the embeddings of :func:`tests.mteb_protocol.mteb_parity_data.make_all` through an encoder that
looks each input's embedding up (no model, no hub data), e.g. ``BeijingOpera`` for
cross-validated classification, ``CommonLanguageAgeDetection`` for train/test,
``FSD2019Kaggle`` (curated) for multi-label, ``VehicleSoundClustering`` and
``CREMA_DClustering`` for clustering, ``CREMADPairClassification``, ``MACST2ARetrieval``,
``JamAltArtistA2ARetrieval``, ``GTZANAudioReranking`` and ``RavdessZeroshot``; the graded
case went through MTEB's ``calculate_retrieval_scores`` and the tied pair scores through its
pair-classification threshold search. The audiobench side matched every reported key to
≤ 1.2e-16 (float summation order); the tolerance here leaves room for that only.

Retrieval, reranking and zero-shot scores are computed with :func:`cosine_score_matrix`
(float32, as MTEB's default similarity); retrieval values are MTEB's 5-decimal roundings.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from audiobench.evaluators.mteb_protocol.cosine_scores import cosine_score_matrix
from audiobench.evaluators.mteb_protocol.kmeans_bootstrap import bootstrapped_kmeans_scores
from audiobench.evaluators.mteb_protocol.logistic_regression import (
    logreg_cross_validation_scores,
    logreg_multilabel_scores,
    logreg_train_test_scores,
)
from audiobench.evaluators.mteb_protocol.trec_retrieval import trec_retrieval_scores
from audiobench.evaluators.mteb_protocol.zero_shot_argmax import zero_shot_argmax_scores
from audiobench.metrics.pair_classification import (
    pair_classification_metrics,
    pair_classification_scores,
)
from tests.mteb_protocol.mteb_parity_data import make_all

TOLERANCE = 1e-12

MTEB_VALUES: dict[str, dict[str, float]] = {
    "cls_cv": {
        "accuracy": 0.8376666666666667,
        "f1": 0.815449579025094,
        "f1_weighted": 0.838899412817033,
        "precision": 0.8186093073593075,
        "precision_weighted": 0.8625604256854256,
        "recall": 0.8483333333333334,
        "recall_weighted": 0.8376666666666667,
    },
    "cls_cv_str": {
        "accuracy": 0.5578947368421052,
        "f1": 0.4970458553791888,
        "f1_weighted": 0.5625898078529658,
        "precision": 0.5285648148148148,
        "recall": 0.5402314814814815,
    },
    "cls_cv_bin": {
        "accuracy": 0.6255813953488373,
        "f1": 0.6226573560659094,
        "precision": 0.6401462364268596,
        "recall": 0.6446333859875386,
        "ap": 0.6190448874959725,
    },
    "cls_tt": {
        "accuracy": 0.8924999999999998,
        "f1": 0.8796910079159019,
        "f1_weighted": 0.8909931368119313,
        "precision": 0.8878037107371475,
        "recall": 0.8816478864272982,
    },
    "ml": {
        "accuracy": 0.24857142857142853,
        "lrap": 0.8432301587301589,
        "f1": 0.68162789156305,
        "hamming": 0.5660714285714286,
    },
    "clu3": {
        "v_measure": 0.9413242530485432,
        "v_measure_std": 0.0057950328000641186,
        "ami": 0.9413177266827828,
    },
    "clu6": {
        "v_measure": 0.59446584031124,
        "v_measure_std": 0.06347838064374943,
        "ami": 0.5942881982074982,
    },
    "pair": {
        "cosine_accuracy": 0.8066666666666666,
        "cosine_f1": 0.8328611898016997,
        "cosine_ap": 0.8815656250198446,
        "dot_ap": 0.9272128644181715,
        "euclidean_ap": 0.4462930897534735,
        "manhattan_ap": 0.44245422071580853,
        "manhattan_f1": 0.7041036717062633,
        "max_accuracy": 0.8466666666666667,
        "max_f1": 0.8562874251497007,
        "max_precision": 0.8411764705882353,
        "max_recall": 0.9939024390243902,
        "max_ap": 0.9272128644181715,
    },
    "pair_ties": {
        "accuracy": 0.625,
        "f1": 0.6973684210526315,
        "precision": 0.5353535353535354,
        "recall": 1.0,
        "ap": 0.6039660509965343,
    },
    "ret": {
        "hit_rate_at_5": 0.8,
        "ndcg_at_10": 0.5875,
        "map_at_1000": 0.5247,
        "recall_at_3": 0.57,
        "precision_at_5": 0.176,
        "mrr_at_10": 0.5754444444444444,
        "ndcg_at_20": 0.62062,
        "map_at_100": 0.5247,
    },
    "a2a": {
        "ndcg_at_10": 0.63376,
        "map_at_1000": 0.55728,
        "recall_at_20": 0.57373,
        "precision_at_10": 0.55917,
        "hit_rate_at_1": 1.0,
    },
    "rr": {
        "map_at_1000": 0.77207,
        "ndcg_at_10": 0.85386,
        "mrr_at_10": 0.861111111111111,
        "recall_at_5": 0.875,
        "precision_at_3": 0.625,
        "hit_rate_at_3": 0.91667,
    },
    "zs": {
        "accuracy": 0.64375,
        "f1": 0.6405294501723073,
        "f1_weighted": 0.6470069211676355,
        "precision": 0.6469619272234026,
        "recall": 0.6424104115110223,
    },
    "zsb": {
        "accuracy": 0.7666666666666667,
        "f1": 0.7580335424401485,
        "ap": 0.6914405327902027,
    },
    "graded": {
        "ndcg_at_1": 0.31111,
        "ndcg_at_10": 0.32811,
        "map_at_20": 0.267,
        "precision_at_5": 0.45333,
        "recall_at_10": 0.22991,
        "mrr_at_3": 0.7,
    },
}


@pytest.fixture(scope="module")
def data() -> dict[str, Any]:
    return make_all()


@pytest.fixture(autouse=True)
def one_openmp_thread() -> Iterator[None]:
    """k-means on a busy shared machine: OpenMP's spinning threads make it 10x slower."""
    with threadpool_limits(1):
        yield


def _ours(case: str, d: dict[str, Any]) -> dict[str, Any]:
    if case.startswith("cls_cv"):
        return logreg_cross_validation_scores(d[f"{case}_X"], d[f"{case}_y"])
    if case == "cls_tt":
        return logreg_train_test_scores(
            d["cls_tt_Xtr"], d["cls_tt_ytr"], d["cls_tt_Xte"], d["cls_tt_yte"]
        )
    if case == "ml":
        return logreg_multilabel_scores(d["ml_Xtr"], d["ml_ytr"], d["ml_Xte"], d["ml_yte"])
    if case.startswith("clu"):
        return bootstrapped_kmeans_scores(d[f"{case}_X"], d[f"{case}_y"])
    if case == "pair":
        return pair_classification_scores(d["pair_a"], d["pair_b"], d["pair_y"])
    if case == "pair_ties":
        return pair_classification_metrics(d["pair_ties_s"], d["pair_ties_y"])
    if case == "ret":
        scores = cosine_score_matrix(d["ret_q"], d["ret_d"])
        return trec_retrieval_scores(scores, d["ret_rel"], corpus_ids=d["ret_doc_ids"])
    if case == "a2a":
        X, artist = d["a2a_X"], d["a2a_art"]
        relevance = (artist[:, None] == artist[None, :]).astype(np.int64)
        ids = [f"corpus-{i}" for i in range(X.shape[0])]
        return trec_retrieval_scores(cosine_score_matrix(X, X), relevance, corpus_ids=ids)
    if case == "rr":
        ids = [f"doc{j}" for j in range(d["rr_rel"].shape[1])]
        return trec_retrieval_scores(
            cosine_score_matrix(d["rr_q"], d["rr_d"]),
            d["rr_rel"],
            candidates=d["rr_cands"],
            corpus_ids=ids,
        )
    if case in ("zs", "zsb"):
        similarity = cosine_score_matrix(d[f"{case}_audio"], d[f"{case}_text"])
        return zero_shot_argmax_scores(similarity, d[f"{case}_y"])
    if case == "graded":
        return trec_retrieval_scores(
            d["graded_s"], d["graded_g"], corpus_ids=d["graded_ids"], k_values=[1, 3, 5, 10, 20]
        )
    raise AssertionError(case)


@pytest.mark.parametrize("case", sorted(MTEB_VALUES))
def test_same_numbers_as_mteb(case: str, data: dict[str, Any]) -> None:
    ours = _ours(case, data)
    expected = MTEB_VALUES[case]
    assert {key: ours[key] for key in expected} == pytest.approx(expected, abs=TOLERANCE, rel=0)


def test_per_fold_and_per_repetition_values(data: dict[str, Any]) -> None:
    """The spread MTEB reports comes from the same folds and bootstrap draws."""
    cv = logreg_cross_validation_scores(data["cls_cv_X"], data["cls_cv_y"])
    assert len(cv["scores_per_experiment"]) == 5
    assert np.mean([fold["accuracy"] for fold in cv["scores_per_experiment"]]) == pytest.approx(
        MTEB_VALUES["cls_cv"]["accuracy"], abs=TOLERANCE
    )
    tt = logreg_train_test_scores(
        data["cls_tt_Xtr"], data["cls_tt_ytr"], data["cls_tt_Xte"], data["cls_tt_yte"]
    )
    assert len(tt["scores_per_experiment"]) == 10
    clusters = bootstrapped_kmeans_scores(data["clu3_X"], data["clu3_y"])
    assert len(clusters["v_measures"]) == 10
    assert np.std(clusters["v_measures"]) == pytest.approx(clusters["v_measure_std"])
