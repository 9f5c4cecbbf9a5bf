"""Retrieval, reranking, classification and clustering against MSEB's own evaluators.

The values below are what MSEB's evaluator code gave (``mseb/evaluators/retrieval_evaluator.py``,
``reranking_evaluator.py``, ``classification_evaluator.py``, ``clustering_evaluator.py``, MSEB
commit ``a88af49``; scikit-learn 1.9.1, NumPy 2.4.6, openai-whisper 20250625 normalisers),
run outside this repository on :mod:`tests.parity.mseb_vector_inputs` (the script:
``scratch-h19/run_mseb_vectors.py`` of the session that pinned them). The inputs are float32,
as MSEB's encoders emit them, so the dot products, the rankings and every score are compared
**exactly**; MSEB's clustering passes no ``random_state``, so the run that pinned it was given
the seed audiobench uses.

Key by key, MSEB's name → audiobench's: retrieval MRR → mrr, EM → em, RecallAt10 →
recall_at_10, RecallAtInf → recall_at_inf, NDCG@10 → ndcg_at_10, InvalidResultRate →
invalid_result_rate, NoResultRate → no_result_rate; reranking MAP → map, NDCG → ndcg, MRR →
mrr, WER → wer, CER → candidate_error_rate; classification Accuracy → accuracy, Top-5 Accuracy
→ top_5_accuracy, Balanced Accuracy → balanced_accuracy, Weighted Precision / Recall /
F1-Score → weighted_precision / weighted_recall / weighted_f1, MissingResultRate →
missing_result_rate, mAP → map, Micro F1 → micro_f1, Macro F1 → macro_f1, Hamming Loss →
hamming_loss, Subset Accuracy → subset_accuracy; clustering VMeasure → v_measure (each
``<name>_std`` likewise).
"""

from __future__ import annotations

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
from audiobench.metrics.mseb_retrieval import dot_product_top_k, mseb_retrieval_scores
from audiobench.metrics.transcription import whisper_normalizer
from tests.parity import mseb_vector_inputs as gen

MSEB_RETRIEVAL_RANKED = {
    "q00": ["d29", "d07", "d25", "d20", "d18", "d17", "d04", "d06", "d08", "d10"],
    "q01": ["d26", "d16", "d02", "d13", "d19", "d08", "d01", "d12", "d14", "d10"],
    "q02": ["d05", "d24", "d23", "d16", "d03", "d25", "d01", "d27", "d09", "d18"],
    "q03": ["d16", "d12", "d05", "d19", "d00", "d14", "d26", "d28", "d13", "d01"],
    "q04": ["d03", "d02", "d27", "d21", "d12", "d15", "d28", "d05", "d00", "d11"],
    "q05": ["d25", "d29", "d07", "d17", "d18", "d05", "d08", "d21", "d06", "d20"],
    "q06": ["d12", "d02", "d16", "d27", "d00", "d15", "d14", "d20", "d03", "d06"],
    "q07": ["d29", "d07", "d06", "d22", "d04", "d25", "d11", "d17", "d15", "d20"],
    "q08": ["d29", "d07", "d08", "d25", "d18", "d04", "d20", "d17", "d10", "d14"],
    "q09": ["d04", "d25", "d18", "d29", "d20", "d06", "d17", "d14", "d07", "d13"],
    "q10": ["d26", "d23", "d08", "d09", "d21", "d01", "d24", "d18", "d13", "d10"],
    "q11": ["d04", "d18", "d25", "d20", "d29", "d14", "d13", "d24", "d09", "d06"],
    "q12": ["d19", "d08", "d26", "d28", "d16", "d14", "d02", "d12", "d10", "d13"],
    "q13": ["d29", "d07", "d25", "d20", "d06", "d08", "d17", "d14", "d10", "d18"],
    "q14": ["d29", "d07", "d25", "d20", "d06", "d08", "d21", "d15", "d28", "d04"],
    "q15": ["d12", "d00", "d06", "d15", "d27", "d24", "d11", "d16", "d09", "d20"],
    "q16": ["d15", "d02", "d20", "d04", "d27", "d12", "d09", "d23", "d18", "d01"],
    "q17": ["d21", "d08", "d28", "d03", "d26", "d25", "d07", "d22", "d05", "d11"],
    "q18": ["d29", "d07", "d25", "d20", "d18", "d17", "d04", "d06", "d08", "d10"],
    "q19": ["d06", "d20", "d08", "d07", "d29", "d04", "d19", "d09", "d15", "d14"],
    "q20": ["d11", "d15", "d06", "d02", "d24", "d03", "d12", "d21", "d25", "d27"],
    "q21": ["d16", "d05", "d12", "d14", "d19", "d28", "d17", "d00", "d03", "d27"],
    "q22": ["d02", "d15", "d08", "d21", "d20", "d27", "d03", "d28", "d26", "d04"],
    "q23": ["d28", "d12", "d02", "d19", "d16", "d03", "d05", "d26", "d27", "d00"],
}
MSEB_RETRIEVAL = {
    "MRR": 0.40739087301587307,
    "MRR_std": 0.4397444021961861,
    "EM": 0.3333333333333333,
    "EM_std": 0.4714045207910317,
    "RecallAt10": 0.625,
    "RecallAt10_std": 0.4841229182759271,
    "RecallAtInf": 0.625,
    "RecallAtInf_std": 0.4841229182759271,
    "InvalidResultRate": 0.041666666666666664,
    "InvalidResultRate_std": 0.19982631347136331,
    "NoResultRate": 0.041666666666666664,
    "NoResultRate_std": 0.19982631347136331,
    "NDCG@10": 0.44295182740957717,
    "NDCG@10_std": 0.43582242175592434,
}
MSEB_RETRIEVAL_CLEAN = {
    "MRR": 0.611111111111111,
    "MRR_std": 0.41573970964154905,
    "EM": 0.5,
    "EM_std": 0.5,
    "RecallAt10": 0.8333333333333334,
    "RecallAt10_std": 0.37267799624996495,
    "RecallAtInf": 0.8333333333333334,
    "RecallAtInf_std": 0.37267799624996495,
    "InvalidResultRate": 0.0,
    "InvalidResultRate_std": 0.0,
    "NoResultRate": 0.0,
    "NoResultRate_std": 0.0,
    "NDCG@10": 0.6051549589285763,
    "NDCG@10_std": 0.44736212178477575,
}
MSEB_RETRIEVAL_MEDIA_NOISE = {
    "MRR": 0.11666666666666665,
    "MRR_std": 0.18633899812498245,
    "EM": 0.0,
    "EM_std": 0.0,
    "RecallAt10": 0.3333333333333333,
    "RecallAt10_std": 0.4714045207910317,
    "RecallAtInf": 0.3333333333333333,
    "RecallAtInf_std": 0.4714045207910317,
    "InvalidResultRate": 0.0,
    "InvalidResultRate_std": 0.0,
    "NoResultRate": 0.0,
    "NoResultRate_std": 0.0,
    "NDCG@10": 0.16963042680099985,
    "NDCG@10_std": 0.25002685130029845,
}
MSEB_RETRIEVAL_TRAFFIC_NOISE = {
    "MRR": 0.6666666666666666,
    "MRR_std": 0.4714045207910317,
    "EM": 0.6666666666666666,
    "EM_std": 0.4714045207910317,
    "RecallAt10": 0.6666666666666666,
    "RecallAt10_std": 0.4714045207910317,
    "RecallAtInf": 0.6666666666666666,
    "RecallAtInf_std": 0.4714045207910317,
    "InvalidResultRate": 0.16666666666666666,
    "InvalidResultRate_std": 0.372677996249965,
    "NoResultRate": 0.0,
    "NoResultRate_std": 0.0,
    "NDCG@10": 0.6666666666666666,
    "NDCG@10_std": 0.4714045207910317,
}
MSEB_RETRIEVAL_BACKGROUND_SPEECH = {
    "MRR": 0.2351190476190476,
    "MRR_std": 0.34755228077007455,
    "EM": 0.16666666666666666,
    "EM_std": 0.372677996249965,
    "RecallAt10": 0.6666666666666666,
    "RecallAt10_std": 0.4714045207910317,
    "RecallAtInf": 0.6666666666666666,
    "RecallAtInf_std": 0.4714045207910317,
    "InvalidResultRate": 0.0,
    "InvalidResultRate_std": 0.0,
    "NoResultRate": 0.16666666666666666,
    "NoResultRate_std": 0.372677996249965,
    "NDCG@10": 0.3303552572420659,
    "NDCG@10_std": 0.33339984372692505,
}
MSEB_RERANKING_RANKED = {
    "q00": [
        "an off",
        "call what play for",
        "the seven news time",
        "news is",
        "lights mom turn set weather",
    ],
    "q01": ["Play play it!", "play play it", "an news mom"],
    "q02": [
        "weather seven lights news",
        "lights paris",
        "the set",
        "weather weather mom alarm for",
        "turn weather time seven",
        "set time the mom turn",
    ],
    "q03": [
        "what turn",
        "is today mom mom turn",
        "turn set for time",
        "an in",
        "time news today set",
        "for weather call",
    ],
    "q04": ["what call", "play mom play mom alarm"],
    "q05": [
        "the call",
        "what for seven today seven",
        "paris weather in",
        "what lights lights weather",
    ],
    "q06": ["set mom time time", "today call what play", "call the is", "today today it"],
    "q07": ["かけて七時アラーム今日", "東京東京東京七時かけて", "今日東京", "音楽アラーム電話"],
    "q08": ["音楽電話電話かけて", "七時今日東京かけて", "音楽電話電話かけて!", "今日七時七時"],
    "q09": [
        "天気音楽今日",
        "今日かけてかけて音楽",
        "電話今日音楽",
        "天気天気音楽天気かけて",
        "七時今日",
    ],
    "q10": [
        "今日電話七時今日",
        "音楽東京かけて東京今日",
        "七時アラーム今日電話天気",
        "天気今日音楽電話",
        "今日東京七時音楽東京",
    ],
    "q11": ["東京七時", "電話かけて今日今日", "東京天気東京今日音楽"],
    "q12": [
        "天気電話",
        "電話今日アラームアラーム",
        "七時今日",
        "今日かけて",
        "音楽電話今日",
        "天気音楽七時",
        "アラーム音楽アラーム",
    ],
    "q13": ["天気東京電話かけてかけて", "電話東京", "今日天気"],
}
MSEB_RERANKING = {
    "MAP": 0.47023809523809523,
    "MAP_std": 0.3459045291849437,
    "NDCG": 0.8076123997416236,
    "NDCG_std": 0.37441939195135426,
    "WER": 0.7333333333333333,
    "WER_std": 0.41096093353126517,
    "CER": 0.7142857142857143,
    "CER_std": 0.45175395145262565,
    "MRR": 0.44642857142857134,
    "MRR_std": 0.33125414471372683,
    "InvalidResultRate": 0.07142857142857142,
    "InvalidResultRate_std": 0.25753937681885636,
    "NoResultRate": 0.07142857142857142,
    "NoResultRate_std": 0.2575393768188564,
}
MSEB_RERANKING_CLEAN = {
    "MAP": 0.5208333333333333,
    "MAP_std": 0.409839907768875,
    "NDCG": 0.75,
    "NDCG_std": 0.4330127018922193,
    "WER": 0.5,
    "WER_std": 0.5,
    "CER": 0.5,
    "CER_std": 0.5,
    "MRR": 0.5625,
    "MRR_std": 0.44633927678392815,
    "InvalidResultRate": 0.25,
    "InvalidResultRate_std": 0.4330127018922193,
    "NoResultRate": 0.0,
    "NoResultRate_std": 0.0,
}
MSEB_RERANKING_MEDIA_NOISE = {
    "MAP": 0.5625,
    "MAP_std": 0.44633927678392815,
    "NDCG": 0.75,
    "NDCG_std": 0.4330127018922193,
    "WER": 0.5555555555555556,
    "WER_std": 0.4969039949999533,
    "CER": 0.5,
    "CER_std": 0.5,
    "MRR": 0.4375,
    "MRR_std": 0.369754986443726,
    "InvalidResultRate": 0.0,
    "InvalidResultRate_std": 0.0,
    "NoResultRate": 0.25,
    "NoResultRate_std": 0.4330127018922193,
}
MSEB_RERANKING_TRAFFIC_NOISE = {
    "MAP": 0.3611111111111111,
    "MAP_std": 0.10393492741038726,
    "NDCG": 0.7688578654609097,
    "NDCG_std": 0.32688434150104806,
    "WER": 0.9,
    "WER_std": 0.09999999999999998,
    "CER": 1.0,
    "CER_std": 0.0,
    "MRR": 0.3611111111111111,
    "MRR_std": 0.10393492741038726,
    "InvalidResultRate": 0.0,
    "InvalidResultRate_std": 0.0,
    "NoResultRate": 0.0,
    "NoResultRate_std": 0.0,
}
MSEB_RERANKING_BACKGROUND_SPEECH = {
    "MAP": 0.38888888888888884,
    "MAP_std": 0.15713484026367724,
    "NDCG": 1.0,
    "NDCG_std": 0.0,
    "WER": 1.0,
    "WER_std": 0.0,
    "CER": 1.0,
    "CER_std": 0.0,
    "MRR": 0.38888888888888884,
    "MRR_std": 0.15713484026367724,
    "InvalidResultRate": 0.0,
    "InvalidResultRate_std": 0.0,
    "NoResultRate": 0.0,
    "NoResultRate_std": 0.0,
}
MSEB_CLASSIFICATION = {
    "Accuracy": 0.6,
    "Top-5 Accuracy": 0.925,
    "Balanced Accuracy": 0.586574074074074,
    "Weighted Precision": 0.6935714285714286,
    "Weighted Recall": 0.6,
    "Weighted F1-Score": 0.6055946684894054,
    "InvalidResultRate": 0.0,
    "MissingResultRate": 0.0,
}
MSEB_CLASSIFICATION_CLEAN = {
    "Accuracy": 0.7,
    "Top-5 Accuracy": 0.9,
    "Balanced Accuracy": 0.625,
    "Weighted Precision": 0.7,
    "Weighted Recall": 0.7,
    "Weighted F1-Score": 0.7,
    "InvalidResultRate": 0.0,
    "MissingResultRate": 0.0,
}
MSEB_CLASSIFICATION_MEDIA_NOISE = {
    "Accuracy": 0.6,
    "Top-5 Accuracy": 0.8,
    "Balanced Accuracy": 0.5333333333333333,
    "Weighted Precision": 0.65,
    "Weighted Recall": 0.6,
    "Weighted F1-Score": 0.6066666666666667,
    "InvalidResultRate": 0.0,
    "MissingResultRate": 0.0,
}
MSEB_CLASSIFICATION_TRAFFIC_NOISE = {
    "Accuracy": 0.8,
    "Top-5 Accuracy": 1.0,
    "Balanced Accuracy": 0.6666666666666666,
    "Weighted Precision": 0.7333333333333333,
    "Weighted Recall": 0.8,
    "Weighted F1-Score": 0.75,
    "InvalidResultRate": 0.0,
    "MissingResultRate": 0.0,
}
MSEB_CLASSIFICATION_BACKGROUND_SPEECH = {
    "Accuracy": 0.3,
    "Top-5 Accuracy": 1.0,
    "Balanced Accuracy": 0.35,
    "Weighted Precision": 0.32,
    "Weighted Recall": 0.3,
    "Weighted F1-Score": 0.26666666666666666,
    "InvalidResultRate": 0.0,
    "MissingResultRate": 0.0,
}
MSEB_MULTILABEL = {
    "mAP": 0.2749757601625585,
    "Micro F1": 0.328125,
    "Macro F1": 0.27811730752907227,
    "Hamming Loss": 0.35833333333333334,
    "Subset Accuracy": 0.1,
}
MSEB_CLUSTERING = {"VMeasure": 0.5592080613831151}
MSEB_CLUSTERING_SPEAKER_GENDER = {"VMeasure": 0.0005562933904946297}

#: MSEB's metric names → audiobench's.
NAMES = {
    "MRR": "mrr",
    "EM": "em",
    "RecallAt10": "recall_at_10",
    "RecallAtInf": "recall_at_inf",
    "NDCG@10": "ndcg_at_10",
    "InvalidResultRate": "invalid_result_rate",
    "NoResultRate": "no_result_rate",
    "MAP": "map",
    "NDCG": "ndcg",
    "WER": "wer",
    "CER": "candidate_error_rate",
    "Accuracy": "accuracy",
    "Top-5 Accuracy": "top_5_accuracy",
    "Balanced Accuracy": "balanced_accuracy",
    "Weighted Precision": "weighted_precision",
    "Weighted Recall": "weighted_recall",
    "Weighted F1-Score": "weighted_f1",
    "MissingResultRate": "missing_result_rate",
    "mAP": "map",
    "Micro F1": "micro_f1",
    "Macro F1": "macro_f1",
    "Hamming Loss": "hamming_loss",
    "Subset Accuracy": "subset_accuracy",
    "VMeasure": "v_measure",
}


def _ours(mseb: dict[str, float]) -> dict[str, float]:
    """MSEB's pinned scores under audiobench's names (``<name>_std`` likewise)."""
    out = {}
    for name, value in mseb.items():
        base, std = (name[:-4], "_std") if name.endswith("_std") else (name, "")
        out[NAMES[base] + std] = value
    return out


def _retrieval_answers() -> tuple[list[object], list[set[str]], list[str]]:
    r = gen.retrieval()
    ranked = dot_product_top_k(r["queries"], r["documents"])
    ids = r["document_ids"]
    answers: list[object] = [[ids[j] for j in row] for row in ranked]
    for i in r["invalid"]:
        answers[i] = INVALID_ANSWER
    for i in r["missing"]:
        answers[i] = NO_RESPONSE
    return answers, [set(x) for x in r["references"]], r["environments"]


def test_retrieval_rankings_are_mseb_s() -> None:
    r = gen.retrieval()
    ranked = dot_product_top_k(r["queries"], r["documents"])
    ours = {f"q{i:02d}": [r["document_ids"][j] for j in row] for i, row in enumerate(ranked)}
    assert ours == MSEB_RETRIEVAL_RANKED


@pytest.mark.parametrize("environment", [None, *gen.ENVIRONMENTS])
def test_retrieval_scores_are_mseb_s(environment: str | None) -> None:
    answers, references, environments = _retrieval_answers()
    idx = [i for i, e in enumerate(environments) if environment in (None, e)]
    ours = mseb_retrieval_scores([answers[i] for i in idx], [references[i] for i in idx])
    pinned = globals()["MSEB_RETRIEVAL" + (f"_{environment.upper()}" if environment else "")]
    assert ours == _ours(pinned)


def _reranking_answers() -> tuple[list[object], list[list[str]], list[dict[str, object]]]:
    rr = gen.reranking()
    answers: list[object] = []
    for q in rr["queries"]:
        scores = np.dot(q["query"], q["candidate_vectors"].T)
        order = np.argsort(-scores, kind="stable")
        answers.append([(q["candidates"][i], float(scores[i])) for i in order])
    for i in rr["invalid"]:
        answers[i] = INVALID_ANSWER
    for i in rr["missing"]:
        answers[i] = NO_RESPONSE
    return answers, [q["texts"] for q in rr["queries"]], rr["queries"]


def test_reranking_rankings_are_mseb_s() -> None:
    answers, _, queries = _reranking_answers()
    ours = {
        q["id"]: [t for t, _ in a]
        for q, a in zip(queries, answers, strict=True)
        if a not in (INVALID_ANSWER, NO_RESPONSE)
    }
    mseb = dict(MSEB_RERANKING_RANKED)
    for i in (12, 13):  # replaced by the sentinels after ranking
        mseb.pop(f"q{i:02d}")
    assert ours == mseb


def _normalizers(queries: list[dict[str, object]]) -> list[object]:
    # No British spelling in the inputs: the spelling table plays no part ({}).
    return [whisper_normalizer(str(q["language"]), english_spelling_mapping={}) for q in queries]


@pytest.mark.parametrize("environment", [None, *gen.ENVIRONMENTS])
def test_reranking_scores_are_mseb_s(environment: str | None) -> None:
    answers, texts, queries = _reranking_answers()
    normalizers = _normalizers(queries)
    idx = [i for i, q in enumerate(queries) if environment in (None, q["environment"])]
    ours = mseb_reranking_scores(
        [answers[i] for i in idx],  # type: ignore[misc]
        [texts[i] for i in idx],
        normalize=[normalizers[i] for i in idx],  # type: ignore[misc]
    )
    pinned = globals()["MSEB_RERANKING" + (f"_{environment.upper()}" if environment else "")]
    assert ours == _ours(pinned)


@pytest.mark.parametrize("environment", [None, *gen.ENVIRONMENTS])
def test_single_label_classification_is_mseb_s(environment: str | None) -> None:
    c = gen.classification()
    scores = label_dot_scores(c["clips"], c["label_vectors"])
    targets = np.array([c["class_labels"].index(t) for t in c["targets"]])
    idx = [i for i, e in enumerate(c["environments"]) if environment in (None, e)]
    ours = mseb_multiclass_scores(scores[idx], targets[idx])
    pinned = globals()["MSEB_CLASSIFICATION" + (f"_{environment.upper()}" if environment else "")]
    assert ours == _ours(pinned)


def test_multi_label_classification_is_mseb_s() -> None:
    c = gen.classification()
    scores = label_dot_scores(c["ml_clips"], c["ml_label_vectors"])
    column = {name: j for j, name in enumerate(c["ml_class_labels"])}
    truth = np.zeros(scores.shape, dtype=int)
    for i, names in enumerate(c["ml_truth"]):
        truth[i, [column[n] for n in names if n in column]] = 1  # others left out, as MSEB
    assert mseb_multilabel_scores(scores, truth) == _ours(MSEB_MULTILABEL)


@pytest.mark.parametrize(
    ("labels", "pinned"),
    [("labels", MSEB_CLUSTERING), ("speaker_gender", MSEB_CLUSTERING_SPEAKER_GENDER)],
)
def test_clustering_is_mseb_s_with_the_same_seed(labels: str, pinned: dict[str, float]) -> None:
    k = gen.clustering()
    assert {"v_measure": mseb_v_measure(k["embeddings"], k[labels], k["seed"])} == _ours(pinned)


# --- the same inputs through the evaluators (clips, an embedder, the noise slices) -----------


def test_zero_shot_evaluator_gives_mseb_s_scores_and_slices() -> None:
    from audiobench.families.zero_shot_classification import ZeroShotClassificationTask
    from audiobench.task import TaskFamily
    from tests.families.test_retrieval import FakeEmbedder, clip, meta

    c = gen.classification()

    class Intents(ZeroShotClassificationTask):
        options = ZeroShotClassificationTask.Options(
            protocol="mseb", classes=tuple(c["class_labels"])
        )
        metadata = meta("ParityIntents", TaskFamily.ZERO_SHOT_CLASSIFICATION, "accuracy")

    vectors = dict(zip(c["class_labels"], c["label_vectors"].tolist(), strict=True))
    audio = {f"c{i:02d}": v for i, v in enumerate(c["clips"].tolist())}
    clips = [
        clip(f"c{i:02d}", label=t, environment=e)
        for i, (t, e) in enumerate(zip(c["targets"], c["environments"], strict=True))
    ]
    embedder = FakeEmbedder(audio, lambda text: vectors.get(text, [1.0] * gen.DIM))
    report = Intents().evaluate(embedder, clips).scores["default"]
    counts = {"n_samples", "n_classes", "n_unembedded", "mean_encoding_size_bytes"}
    assert {k: v for k, v in report.items() if k not in counts | {"environments"}} == _ours(
        MSEB_CLASSIFICATION
    )
    for environment, scores in report["environments"].items():
        pinned = globals()[f"MSEB_CLASSIFICATION_{environment.upper()}"]
        assert {k: v for k, v in scores.items() if k != "n_samples"} == _ours(pinned)


def test_clustering_evaluator_gives_mseb_s_v_measure() -> None:
    from audiobench.families.clustering import ClusteringTask
    from audiobench.task import TaskFamily
    from tests.families.test_retrieval import FakeEmbedder, clip, meta

    k = gen.clustering()

    class Speakers(ClusteringTask):
        options = ClusteringTask.Options(protocol="mseb", seeds=(k["seed"],))
        metadata = meta("ParitySpeakers", TaskFamily.CLUSTERING, "v_measure")

    audio = {f"s{i:02d}": v for i, v in enumerate(k["embeddings"].tolist())}
    clips = [
        clip(f"s{i:02d}", label=label, speaker_gender=gender)
        for i, (label, gender) in enumerate(zip(k["labels"], k["speaker_gender"], strict=True))
    ]
    report = Speakers().evaluate(FakeEmbedder(audio), clips).scores["default"]
    assert report["v_measure"] == MSEB_CLUSTERING["VMeasure"]
    assert report["targets"] == {"speaker_gender": MSEB_CLUSTERING_SPEAKER_GENDER["VMeasure"]}
