"""MTEB's abstention scores (``nauc_*``): how well a query's score confidence predicts its metric.

For each query, three **confidences** are read from the scores of its retrieved documents:
``max`` (the best score), ``std`` (their population standard deviation) and ``diff1`` (best
minus second best; 0 with one document). A query with no retrieved document has 0 for all.

The **abstention curve** of confidences c and per-query metric values m, at abstention rates
a ∈ {0, 0.1, …, 0.9}: sort the queries by increasing c (stably), drop the first
``min(round(a·n), n − 1)`` (Python's rounding, halves to even) and average m over the rest.
The **oracle curve** is the same with m as its own confidence, the **flat** area
``oracle(0) · (0.9 − 0)``. With A the trapezoid area under a curve over the rates,

    nAUC = (A(curve) − flat) / (A(oracle) − flat)

and undefined (None here, NaN in MTEB's files) when A(oracle) = flat (every query has the same
metric value, for instance). Keys are ``nauc_{metric}_at_{k}_{confidence}`` for the metrics
ndcg, map, recall, precision and mrr: with MTEB's seven cut-offs, 105 keys.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

__all__ = [
    "ABSTENTION_RATES",
    "CONFIDENCES",
    "abstention_curve",
    "confidence_scores",
    "nauc",
    "nauc_scores",
]

#: MTEB's abstention rates 0, 0.1, ..., 0.9 (as ``linspace(0, 1, 11)[:-1]`` gives them).
ABSTENTION_RATES: np.ndarray = np.linspace(0, 1, 11)[:-1]

#: The confidence functions, in MTEB's key order.
CONFIDENCES: tuple[str, ...] = ("max", "std", "diff1")


def confidence_scores(scores: Sequence[float] | np.ndarray) -> dict[str, float]:
    """``max``, ``std`` and ``diff1`` of one query's retrieved scores (all 0 when none)."""
    values = np.asarray(scores, dtype=np.float64)
    if values.size == 0:
        return {"max": 0.0, "std": 0.0, "diff1": 0.0}
    best = np.sort(values)[::-1]
    diff1 = float(best[0] - best[1]) if values.size > 1 else 0.0
    return {"max": float(best[0]), "std": float(np.std(values)), "diff1": diff1}


def abstention_curve(
    confidence: np.ndarray, metric: np.ndarray, rates: np.ndarray = ABSTENTION_RATES
) -> np.ndarray:
    """Mean ``metric`` over the queries kept at each abstention rate (least confident out)."""
    order = np.argsort(np.asarray(confidence, dtype=np.float64), kind="stable")
    metric = np.asarray(metric, dtype=np.float64)
    n = order.shape[0]
    return np.array([metric[order[min(round(float(r) * n), n - 1) :]].mean() for r in rates])


def _trapezoid(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.sum(np.diff(x) * (y[1:] + y[:-1]) / 2.0))


def nauc(
    confidence: np.ndarray, metric: np.ndarray, rates: np.ndarray = ABSTENTION_RATES
) -> float | None:
    """Normalised area under the abstention curve (None when the oracle is flat)."""
    if len(confidence) != len(metric) or len(metric) == 0:
        raise ValueError(
            f"need one confidence per metric value, and at least one query; got "
            f"{len(confidence)} and {len(metric)}"
        )
    curve = abstention_curve(confidence, metric, rates)
    oracle = abstention_curve(metric, metric, rates)
    area, oracle_area = _trapezoid(rates, curve), _trapezoid(rates, oracle)
    flat = float(oracle[0] * (rates[-1] - rates[0]))
    if oracle_area == flat:
        return None
    return (area - flat) / (oracle_area - flat)


def nauc_scores(
    per_query: Mapping[str, np.ndarray], retrieved: Sequence[np.ndarray]
) -> dict[str, float | None]:
    """``nauc_{metric}_{confidence}`` for each per-query metric (``ndcg_at_10``, ...) given
    each query's retrieved scores (same query order)."""
    confidences = [confidence_scores(s) for s in retrieved]
    by_function = {f: np.array([c[f] for c in confidences]) for f in CONFIDENCES}
    out: dict[str, float | None] = {}
    for name, values in per_query.items():
        if len(values) != len(retrieved):
            raise ValueError(f"{name}: {len(values)} values for {len(retrieved)} queries")
        for function, conf in by_function.items():
            out[f"nauc_{name}_{function}"] = nauc(conf, np.asarray(values, dtype=np.float64))
    return out
