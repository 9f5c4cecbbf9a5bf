"""Seeded embeddings on which audiobench's MTEB-comparable protocols were checked against MTEB.

Pure NumPy on purpose: the same module was imported by a script that ran MTEB's own task
classes and evaluators on these embeddings (through an encoder that looks the embeddings
up), and :mod:`tests.mteb_protocol.test_mteb_protocols` pins the numbers MTEB produced. Changing
anything here changes the data and invalidates those pinned values.

Each case imitates the layout of one MAEB task type (class counts and sizes are small).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def blobs(
    rng: np.random.Generator, n: int, dim: int, n_classes: int, spread: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """float32 Gaussian blobs around random class means, and integer labels."""
    y = rng.integers(0, n_classes, size=n)
    means = rng.normal(size=(n_classes, dim)) * spread
    X = means[y] + rng.normal(size=(n, dim))
    return X.astype(np.float32), y


def make_all() -> dict[str, Any]:
    """Every case's arrays and labels, by key (see the comments)."""
    d: dict[str, Any] = {}
    rng = np.random.default_rng(20260101)
    # --- classification, cross-validation (BeijingOpera-like), n not divisible by 5
    X, y = blobs(rng, 123, 16, 4, spread=0.8)
    d["cls_cv_X"], d["cls_cv_y"] = X, y
    # string labels, 50 classes-ish small version (BirdCLEF-like): 9 classes, 97 samples
    X, y = blobs(rng, 97, 12, 9, spread=0.7)
    d["cls_cv_str_X"], d["cls_cv_str_y"] = X, np.array([f"sp{v:02d}" for v in y])
    # binary (IEMOCAPGender-like, ap defined)
    X, y = blobs(rng, 211, 10, 2, spread=0.5)
    d["cls_cv_bin_X"], d["cls_cv_bin_y"] = X, y
    # --- classification train/test (CommonLanguageAgeDetection-like), string labels
    Xall, yall = blobs(rng, 230, 16, 7, spread=0.8)
    names = np.array(
        ["teens", "twenties", "thirties", "fourties", "fifties", "sixties", "seventies"]
    )
    d["cls_tt_Xtr"], d["cls_tt_ytr"] = Xall[:150], names[yall[:150]]
    d["cls_tt_Xte"], d["cls_tt_yte"] = Xall[150:], names[yall[150:]]
    # --- multilabel (FSD2019Kaggle-like): 6 labels, 1-3 per sample
    n_tr, n_te, L, dim = 220, 70, 6, 12
    protos = rng.normal(size=(L, dim))

    def ml(n: int) -> tuple[np.ndarray, list[list[int]]]:
        Xs, Ys = [], []
        for _ in range(n):
            k = rng.integers(1, 4)
            labs = sorted(rng.choice(L, size=k, replace=False).tolist())
            Xs.append(protos[labs].sum(0) * 0.7 + rng.normal(size=dim))
            Ys.append(labs)
        return np.asarray(Xs, dtype=np.float32), Ys

    Xtr, Ytr = ml(n_tr)
    Xte, Yte = ml(n_te)
    label_names = [f"snd_{c}" for c in "abcdef"]
    d["ml_Xtr"], d["ml_Xte"] = Xtr, Xte
    d["ml_ytr"] = [[label_names[i] for i in row] for row in Ytr]
    d["ml_yte"] = [[label_names[i] for i in row] for row in Yte]
    # --- clustering (VehicleSoundClustering-like, 3 classes) and 6 classes
    X, y = blobs(rng, 300, 8, 3, spread=1.5)
    d["clu3_X"], d["clu3_y"] = X, y
    X, y = blobs(rng, 150, 10, 6, spread=1.0)
    d["clu6_X"], d["clu6_y"] = X, np.array([f"emo{v}" for v in y])
    # --- pair classification: 300 pairs, some exact duplicates (tied scores)
    n_pairs, dim = 300, 16
    a = rng.normal(size=(n_pairs, dim))
    same = rng.integers(0, 2, size=n_pairs)
    b = np.where(
        same[:, None] == 1,
        a + rng.normal(size=(n_pairs, dim)) * 1.5,
        rng.normal(size=(n_pairs, dim)),
    )
    dup = rng.choice(n_pairs, size=30, replace=False)
    a[dup[15:]] = a[dup[:15]]
    b[dup[15:]] = b[dup[:15]]
    same[dup[15:]] = 1 - same[dup[:15]]  # tied pairs with opposite labels
    d["pair_a"], d["pair_b"], d["pair_y"] = a.astype(np.float32), b.astype(np.float32), same
    # --- retrieval t2a: 50 text queries, 80 audio docs, duplicates among docs (ties)
    n_q, n_d, dim = 50, 80, 16
    docs = rng.normal(size=(n_d, dim))
    docs[60:70] = docs[0:10]  # exact duplicates -> tied scores
    rel = np.zeros((n_q, n_d), dtype=np.int64)
    qs = np.empty((n_q, dim))
    for q in range(n_q):
        targets = rng.choice(n_d, size=rng.integers(1, 3), replace=False)
        rel[q, targets] = 1
        qs[q] = docs[targets].mean(0) + rng.normal(size=dim) * 1.3
    d["ret_q"], d["ret_d"], d["ret_rel"] = qs.astype(np.float32), docs.astype(np.float32), rel
    d["ret_doc_ids"] = [f"doc-{rng.integers(0, 10**6):06d}-{j}" for j in range(n_d)]
    d["ret_q_ids"] = [f"q{j}" for j in range(n_q)]
    # --- a2a artist retrieval (JamAlt-like): 120 clips, 8 artists, query set = corpus set
    n, dim = 120, 12
    X, art = blobs(rng, n, dim, 8, spread=0.9)
    d["a2a_X"], d["a2a_art"] = X, art
    # --- reranking (GTZANAudioReranking-like): 24 queries, 150 docs, 13 candidates (3 pos)
    n_q, n_d, dim = 24, 150, 12
    genres_d = rng.integers(0, 10, size=n_d)
    means = rng.normal(size=(10, dim))
    docs = means[genres_d] + rng.normal(size=(n_d, dim)) * 1.2
    genres_q = rng.integers(0, 10, size=n_q)
    qs = means[genres_q] + rng.normal(size=(n_q, dim)) * 1.2
    cands = []
    rel = np.zeros((n_q, n_d), dtype=np.int64)
    for q in range(n_q):
        pos = rng.choice(np.flatnonzero(genres_d == genres_q[q]), size=3, replace=False)
        neg = rng.choice(np.flatnonzero(genres_d != genres_q[q]), size=10, replace=False)
        c = rng.permutation(np.concatenate([pos, neg]))
        cands.append(c.tolist())
        rel[q, pos] = 1
    d["rr_q"], d["rr_d"], d["rr_rel"], d["rr_cands"] = (
        qs.astype(np.float32),
        docs.astype(np.float32),
        rel,
        cands,
    )
    # --- zero-shot (Ravdess-like): 8 classes, 160 samples; binary variant
    dim = 16
    text = rng.normal(size=(8, dim))
    yz = rng.integers(0, 8, size=160)
    audio = text[yz] * 0.4 + rng.normal(size=(160, dim))
    d["zs_text"], d["zs_audio"], d["zs_y"] = text.astype(np.float32), audio.astype(np.float32), yz
    text2 = rng.normal(size=(2, dim))
    yb = rng.integers(0, 2, size=90)
    audio2 = text2[yb] * 0.3 + rng.normal(size=(90, dim))
    d["zsb_text"], d["zsb_audio"], d["zsb_y"] = (
        text2.astype(np.float32),
        audio2.astype(np.float32),
        yb,
    )
    # --- graded qrels direct check against pytrec_eval
    n_q, n_d = 30, 40
    s = rng.normal(size=(n_q, n_d)).round(1)  # rounded -> many ties
    g = rng.choice([0, 0, 0, 1, 2, 3], size=(n_q, n_d))
    g[np.arange(n_q), rng.integers(0, n_d, size=n_q)] = 2  # every query has a relevant doc
    d["graded_s"], d["graded_g"] = s, g
    d["graded_ids"] = [f"d{rng.integers(0, 999):03d}_{j}" for j in range(n_d)]
    # --- pair scores with many ties (rounded), scored by MTEB's threshold search directly
    d["pair_ties_s"] = rng.normal(size=200).round(1)
    d["pair_ties_y"] = (rng.random(200) < 0.4 + 0.2 * (d["pair_ties_s"] > 0)).astype(np.int64)
    return d
