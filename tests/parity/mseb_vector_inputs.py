"""Generated inputs of the MSEB parity tests for retrieval, reranking, classification, clustering.

Every function builds plain NumPy / Python data from a fixed seed; the values MSEB's own
evaluator code gave on exactly these inputs (run once, outside this repository, against MSEB
commit ``a88af49``) are pinned in ``tests/parity/test_mseb_vector_families.py``. Vectors are
float32, as MSEB's encoders emit them; scores are continuous, so no two candidates tie.
"""

from __future__ import annotations

from typing import Any

import numpy as np

DIM = 8

#: English words without British spellings (the English normaliser's spelling table then
#: plays no part), and a few Japanese ones (the basic normaliser).
_EN = (
    "play", "the", "news", "weather", "in", "paris", "today", "set", "an", "alarm", "for",
    "seven", "call", "mom", "what", "time", "is", "it", "turn", "off", "lights",
)  # fmt: skip
_JA = ("天気", "東京", "今日", "音楽", "かけて", "電話", "アラーム", "七時")
#: Recording environments of SVQ, one per query in turn.
ENVIRONMENTS = ("clean", "media_noise", "traffic_noise", "background_speech")


def _vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.standard_normal((n, DIM)).astype(np.float32)


def retrieval() -> dict[str, Any]:
    """24 queries against 30 documents ``d00``…``d29`` (sorted ids = index order): queries 0-19
    have one reference document (query 5's is not indexed), 20-21 have two (a list, as MSEB's
    image→speech references), 22 gets an invalid and 23 no prediction."""
    rng = np.random.default_rng(7)
    documents = _vectors(rng, 30)
    references: list[list[str]] = []
    queries = np.empty((24, DIM), dtype=np.float32)
    for q in range(24):
        target = int(rng.integers(30))
        # Near its reference at varying distances: ranks 1 to beyond 10.
        queries[q] = documents[target] + rng.standard_normal(DIM).astype(np.float32) * (q % 6)
        references.append([f"d{target:02d}"])
    references[5] = ["d99"]
    references[20] = ["d03", "d17"]
    references[21] = [references[21][0], "d29"]
    return {
        "documents": documents,
        "document_ids": [f"d{i:02d}" for i in range(30)],
        "queries": queries,
        "references": references,
        "invalid": [22],
        "missing": [23],
        "environments": [ENVIRONMENTS[q % 4] for q in range(24)],
    }


def _sentence(rng: np.random.Generator, words: tuple[str, ...], sep: str) -> str:
    return sep.join(rng.choice(words, size=int(rng.integers(2, 6))).tolist())


def reranking() -> dict[str, Any]:
    """14 queries, each with 3-7 candidate texts whose first is the truth (query reranking:
    ``texts`` = the candidates) or, for queries 10-11, salient-term style references that are
    not all candidates; near-duplicates of the truth (case and punctuation, which the
    normaliser forgives), a query with two candidates (MSEB's NDCG refuses one), an invalid
    (12) and a missing (13) prediction; queries 0-6 English (``en_us``), 7-13 Japanese
    (``ja_jp``)."""
    rng = np.random.default_rng(11)
    queries = []
    for q in range(14):
        english = q < 7
        words, sep = (_EN, " ") if english else (_JA, "")
        truth = _sentence(rng, words, sep)
        n = 2 if q == 4 else int(rng.integers(3, 8))
        candidates = [truth]
        while len(candidates) < n:
            candidates.append(_sentence(rng, words, sep))
        if q in (1, 8):  # the truth again, only in case and punctuation (normalised away)
            candidates[-1] = truth.capitalize() + "!"
        texts = list(candidates)
        if q in (10, 11):  # salient terms: the references are a subset, in another order
            texts = [candidates[2], candidates[0], "not a candidate"]
        vectors = _vectors(rng, n)
        query = vectors[int(rng.integers(n))] + rng.standard_normal(DIM).astype(np.float32)
        queries.append(
            {
                "id": f"q{q:02d}",
                "language": "en_us" if english else "ja_jp",
                "query": query.astype(np.float32),
                "candidates": candidates,
                "candidate_vectors": vectors,
                "texts": texts,
                "environment": ENVIRONMENTS[q % 4],
            }
        )
    return {"queries": queries, "invalid": [12], "missing": [13]}


def classification() -> dict[str, Any]:
    """Single-label: 40 clips, 7 classes (class 6 never the truth); multi-label: 40 clips, 6
    classes, scores around MSEB's 0.5 threshold, a reference label outside the class list."""
    rng = np.random.default_rng(5)
    labels = _vectors(rng, 7)
    targets = rng.integers(0, 6, size=40)
    clips = (labels[targets] * 0.6 + rng.standard_normal((40, DIM))).astype(np.float32)
    ml_labels = (_vectors(rng, 6) * 0.35).astype(np.float32)
    ml_clips = (rng.standard_normal((40, DIM)) * 0.9).astype(np.float32)
    ml_truth: list[list[str]] = []
    for _ in range(40):
        chosen = sorted(set(rng.integers(0, 6, size=int(rng.integers(1, 4))).tolist()))
        names = [f"sound_{j}" for j in chosen if j != 5]  # class 5: no positive at all
        ml_truth.append(names or ["sound_0"])
    ml_truth[3] = [*ml_truth[3], "not_in_the_list"]
    return {
        "class_labels": [f"intent_{j}" for j in range(7)],
        "label_vectors": labels,
        "clips": clips,
        "targets": [f"intent_{t}" for t in targets],
        "ml_class_labels": [f"sound_{j}" for j in range(6)],
        "ml_label_vectors": ml_labels,
        "ml_clips": ml_clips,
        "ml_truth": ml_truth,
        "environments": [ENVIRONMENTS[i % 4] for i in range(40)],
    }


def clustering() -> dict[str, Any]:
    """60 clips around 4 centres (labels), and a seed for MiniBatchKMeans."""
    rng = np.random.default_rng(3)
    centres = _vectors(rng, 4) * 0.8
    labels = rng.integers(0, 4, size=60)
    embeddings = (centres[labels] + rng.standard_normal((60, DIM))).astype(np.float32)
    genders = rng.choice(["female", "male"], size=60).tolist()
    return {
        "embeddings": embeddings,
        "labels": [f"class_{j}" for j in labels],
        "speaker_gender": genders,
        "seed": 0,
    }
