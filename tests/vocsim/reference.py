"""Brute-force reference implementations, written from the protocol text with plain loops.

Deliberately naive (O(N²) Python loops, exact ``math.fsum`` means) and independent of the
engine: no shared helpers, no vectorisation. Labels are Python values, ``None`` = unlabelled.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence

import numpy as np

EPS = 1e-9


def labelled(labels: Sequence[Hashable | None]) -> list[int]:
    return [i for i, label in enumerate(labels) if label is not None]


def kept_clips(labels: Sequence[Hashable | None], min_class_size: int) -> list[int]:
    counts = Counter(label for label in labels if label is not None)
    return [i for i in labelled(labels) if counts[labels[i]] >= min_class_size]


def precision_at_k(D: np.ndarray, labels: Sequence[Hashable | None], k: int) -> float:
    queries = labelled(labels)
    hits = 0
    for i in queries:
        # "its k nearest other clips (self excluded; ties broken by lower index)"
        candidates = sorted((float(D[i][j]), j) for j in queries if j != i)
        hits += sum(labels[j] == labels[i] for _, j in candidates[:k])
    return hits / (len(queries) * k)


def gsr(
    D: np.ndarray, labels: Sequence[Hashable | None], min_class_size: int = 2
) -> tuple[float, float, int, int]:
    """(gsr, gsr_raw, n_evaluated, n_skipped)."""
    clips = kept_clips(labels, min_class_size)
    scores = []
    skipped = 0
    for i in clips:
        intra = [float(D[i][j]) for j in clips if j != i and labels[j] == labels[i]]
        other = [float(D[i][k]) for k in clips if labels[k] != labels[i]]
        avg_id = math.fsum(intra) / len(intra)
        nid = min(other)
        denominator = nid + avg_id + EPS
        if not math.isfinite(denominator) or denominator <= EPS:
            skipped += 1
            continue
        scores.append((nid - avg_id) / denominator)
    raw = math.fsum(scores) / len(scores)
    return (raw + 1) / 2, raw, len(scores), skipped


def csr(D: np.ndarray, labels: Sequence[Hashable | None], min_class_size: int = 2) -> float:
    clips = kept_clips(labels, min_class_size)
    mid: dict[int, float] = {}
    nid: dict[int, float] = {}
    for i in clips:
        mid[i] = max(float(D[i][j]) for j in clips if j != i and labels[j] == labels[i])
        nid[i] = min(float(D[i][k]) for k in clips if labels[k] != labels[i])
    classes = sorted({labels[i] for i in clips}, key=repr)
    weighted, total = [], 0
    for c in classes:
        members = [i for i in clips if labels[i] == c]
        mean_nid = math.fsum(nid[i] for i in members) / len(members)
        mean_mid = math.fsum(mid[i] for i in members) / len(members)
        denominator = mean_nid + mean_mid + EPS
        sep = (mean_nid - mean_mid) / denominator if denominator > EPS else 0.0
        weighted.append(len(members) * sep)
        total += len(members)
    return (math.fsum(weighted) / total + 1) / 2


def _class_means(D, labels, min_class_size):
    clips = kept_clips(labels, min_class_size)
    classes = sorted({labels[i] for i in clips}, key=repr)
    members = {c: [i for i in clips if labels[i] == c] for c in classes}
    intra = {
        c: math.fsum(float(D[a][b]) for a in m for b in m if a != b) / (len(m) * (len(m) - 1))
        for c, m in members.items()
    }
    inter = {
        (c, e): math.fsum(float(D[a][b]) for a in members[c] for b in members[e])
        / (len(members[c]) * len(members[e]))
        for c in classes
        for e in classes
        if c != e
    }
    return intra, inter


def cs(D: np.ndarray, labels: Sequence[Hashable | None], min_class_size: int = 2) -> float:
    intra, inter = _class_means(D, labels, min_class_size)
    values = []
    for (c, _), between in inter.items():
        within = intra[c]
        if within <= 1e-9 and between <= 1e-9:
            values.append(0.5)
        elif within <= 1e-9:
            values.append(0.0)
        elif between <= 1e-9:
            values.append(1.0)
        else:
            values.append(1 / (1 + between / within))
    return math.fsum(values) / len(values)


def cscf(D: np.ndarray, labels: Sequence[Hashable | None], min_class_size: int = 2) -> float:
    intra, inter = _class_means(D, labels, min_class_size)
    return sum(between < intra[c] for (c, _), between in inter.items()) / len(inter)


def average_ranks(values: Sequence[float]) -> list[float]:
    """Ranks 1..d, ties get the mean of the positions they occupy."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    position = 0
    while position < len(order):
        end = position
        while end + 1 < len(order) and values[order[end + 1]] == values[order[position]]:
            end += 1
        for q in range(position, end + 1):
            ranks[order[q]] = (position + end) / 2 + 1
        position = end + 1
    return ranks


def distance(u: Sequence[float], v: Sequence[float], metric: str) -> float:
    if metric == "euclidean":
        return math.sqrt(math.fsum((a - b) ** 2 for a, b in zip(u, v, strict=True)))
    if metric == "spearman":
        u, v = average_ranks(u), average_ranks(v)
        mu, mv = math.fsum(u) / len(u), math.fsum(v) / len(v)
        u = [a - mu for a in u]
        v = [b - mv for b in v]
    dot = math.fsum(a * b for a, b in zip(u, v, strict=True))
    norm = math.sqrt(math.fsum(a * a for a in u)) * math.sqrt(math.fsum(b * b for b in v))
    return min(1.0, max(0.0, (1 - dot / norm) / 2))


def distance_matrix(X: np.ndarray, metric: str) -> np.ndarray:
    n = len(X)
    D = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j:
                D[i, j] = distance(list(X[i]), list(X[j]), metric)
    return D
