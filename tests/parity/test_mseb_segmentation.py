"""Salient-term segmentation against the values MSEB's own evaluator gave on the same inputs.

Pinned from ``SegmentationEvaluator.compute_scores`` / ``compute_metrics``
(``mseb/evaluators/segmentation_evaluator.py``, MSEB commit ``a88af49``; jiwer 4.0.0,
scikit-learn 1.9.1), run outside this repository on :mod:`tests.parity.mseb_inputs`:
scored predictions as MSEB ``SoundEmbedding`` (float64 timestamps), unscored ones as its
JSON ``TextPrediction``, and the sentinels ``""`` and ``"NO_RESPONSE"``. The arithmetic is
the same (the same float comparisons against τ, the same greedy passes, scikit-learn's
average precision), so every key is compared exactly.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from audiobench.metrics.segmentation import TimedTerm, segmentation_scores
from tests.parity import mseb_inputs

MSEB_HANDMADE = {
    "TimestampsAndEmbeddingsHits": 6.0,
    "TimestampsHits": 6.0,
    "EmbeddingsHits": 11.0,
    "NumSegments": 14.0,
    "TimestampsAndEmbeddingsAccuracy": 0.42857142857142855,
    "TimestampsAccuracy": 0.42857142857142855,
    "EmbeddingsAccuracy": 0.7857142857142857,
    "NDCG": 0.375,
    "WordErrorRate": 0.6666666666666666,
    "InvalidResultRate": 0.125,
    "MissingResultRate": 0.125,
    "mAP": 0.35833333333333334,
}
#: The same predictions without scores: nothing enters mAP, which is then 0.
MSEB_UNSCORED = {**MSEB_HANDMADE, "mAP": 0.0}
MSEB_RANDOM = {
    "TimestampsAndEmbeddingsHits": 38.0,
    "TimestampsHits": 50.0,
    "EmbeddingsHits": 65.0,
    "NumSegments": 109.0,
    "TimestampsAndEmbeddingsAccuracy": 0.3486238532110092,
    "TimestampsAccuracy": 0.45871559633027525,
    "EmbeddingsAccuracy": 0.5963302752293578,
    "NDCG": 0.4308659840752845,
    "WordErrorRate": 0.5504587155963303,
    "InvalidResultRate": 0.0,
    "MissingResultRate": 0.075,
    "mAP": 0.4478994395925044,
}
MSEB_RANDOM_TAU0 = {
    "TimestampsAndEmbeddingsHits": 7.0,
    "TimestampsHits": 8.0,
    "EmbeddingsHits": 68.0,
    "NumSegments": 109.0,
    "TimestampsAndEmbeddingsAccuracy": 0.06422018348623854,
    "TimestampsAccuracy": 0.07339449541284404,
    "EmbeddingsAccuracy": 0.6238532110091743,
    "NDCG": 0.4308659840752845,
    "WordErrorRate": 0.5504587155963303,
    "InvalidResultRate": 0.0,
    "MissingResultRate": 0.075,
    "mAP": 0.0757327772534455,
}
#: Scored predictions, none a true positive: mAP 0.
MSEB_NO_TRUE_POSITIVE = {
    "TimestampsAndEmbeddingsHits": 0.0,
    "TimestampsHits": 1.0,
    "EmbeddingsHits": 1.0,
    "NumSegments": 2.0,
    "TimestampsAndEmbeddingsAccuracy": 0.0,
    "TimestampsAccuracy": 0.5,
    "EmbeddingsAccuracy": 0.5,
    "NDCG": 0.5,
    "WordErrorRate": 0.5,
    "InvalidResultRate": 0.0,
    "MissingResultRate": 0.0,
    "mAP": 0.0,
}


def _terms(segments: list[tuple[object, ...]]) -> list[TimedTerm]:
    return [
        TimedTerm(str(s[0]), float(s[1]), float(s[2]), float(s[3]) if len(s) == 4 else None)  # type: ignore[arg-type]
        for s in segments
    ]


def _scores(
    references: list[list[tuple[str, float, float]]], predictions: list[object], tau: float
) -> dict[str, float]:
    preds = [p if isinstance(p, str) else _terms(p) for p in predictions]  # type: ignore[arg-type]
    return segmentation_scores([_terms(r) for r in references], preds, tau=tau).to_dict()  # type: ignore[arg-type]


def _unscored(predictions: list[object]) -> list[object]:
    return [[s[:3] for s in p] if isinstance(p, list) else p for p in predictions]


HANDMADE = mseb_inputs.segmentation_handmade()
RANDOM = mseb_inputs.segmentation_random()


@pytest.mark.parametrize(
    ("references", "predictions", "tau", "expected"),
    [
        (*HANDMADE, 0.05, MSEB_HANDMADE),
        (HANDMADE[0], _unscored(HANDMADE[1]), 0.05, MSEB_UNSCORED),
        (*RANDOM, 0.05, MSEB_RANDOM),
        (*RANDOM, 0.0, MSEB_RANDOM_TAU0),
        (
            [[("a", 0.0, 1.0)], [("b", 1.0, 2.0)]],
            [[("x", 0.0, 1.0, 0.5)], [("b", 5.0, 6.0, 0.7)]],
            0.05,
            MSEB_NO_TRUE_POSITIVE,
        ),
    ],
    ids=["handmade", "no-scored-predictions", "random", "random-tau-0", "no-true-positive"],
)
def test_every_key_equals_mseb_exactly(
    references: list[list[tuple[str, float, float]]],
    predictions: list[object],
    tau: float,
    expected: dict[str, float],
) -> None:
    assert _scores(references, predictions, tau) == expected


def test_tolerance_boundary_follows_float_arithmetic_as_mseb() -> None:
    """0.25 → 0.3 differs by 0.04999999999999999 (a hit); 0.5 → 0.55 and 0.6 → 0.65 by
    0.050000000000000044 (misses), as in the handmade inputs MSEB scored above."""
    hit = segmentation_scores([[TimedTerm("a", 0.25, 0.6)]], [[TimedTerm("a", 0.3, 0.6)]])
    miss = segmentation_scores([[TimedTerm("a", 0.5, 1.0)]], [[TimedTerm("a", 0.55, 1.0)]])
    assert hit.timestamps_and_embeddings_hits == 1
    assert miss.timestamps_and_embeddings_hits == 0 and miss.embeddings_hits == 1


def test_a_corpus_without_reference_terms_is_refused() -> None:
    """MSEB reports only ``mAP`` = 0 there; the accuracies and NDCG are undefined, so we
    refuse (a deliberate difference, documented in the module)."""
    with pytest.raises(ValueError, match="no utterance has a reference term"):
        segmentation_scores([[], []], [[TimedTerm("x", 0.0, 1.0, 0.5)], ""])


#: MSEB's ``TextSegmenterEncoder`` (top 2 by IDF, the same table, ``NormalizingRetokenizer``)
#: over timed words that carry log-probability scores, then ``SegmentationEvaluator``: every
#: term's IDF is multiplied by exp(Σ word scores) of its utterance, which reorders the terms
#: of different utterances for mAP (u1: london 0.3, train 0.2; u2: sky 1, blue 0.5).
MSEB_CASCADE_WITH_WORD_SCORES = {
    "ndcg": 1.0,
    "timestamps_and_embeddings_hits": 2,
    "timestamps_hits": 3,
    "embeddings_hits": 2,
    "word_error_rate": 0.3333333333333333,
    "map": 0.41666666666666663,
}


def test_cascade_weighs_the_idf_by_the_word_scores_as_mseb(tmp_path: Path) -> None:
    from audiobench.runner import CachedEmbedder
    from tests.families.test_segmentation import TABLE, FixedTimings, clips_of, task_class

    words = {
        "u1": [
            ("the", 0.0, 0.4, -0.5),
            ("train", 0.5, 0.9, -1.0),
            ("to", 0.9, 1.0, -0.3),
            ("London", 1.02, 1.41, -0.502585092994046),
        ],
        "u2": [("blue", 0.2, 0.5, 0.0), ("sky.", 0.6, 0.9, 0.0)],
    }
    (tmp_path / "idf.csv").write_text(TABLE)
    task = task_class(idf_table=str(tmp_path / "idf.csv"), top_k=2)()
    embedder = CachedEmbedder(FixedTimings(words), None)  # type: ignore[arg-type]
    report = task.evaluate(embedder, clips_of(tmp_path)).scores["default"]
    assert {key: report[key] for key in MSEB_CASCADE_WITH_WORD_SCORES} == (
        MSEB_CASCADE_WITH_WORD_SCORES
    )
