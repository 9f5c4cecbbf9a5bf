"""Cosine score matrices computed the way MTEB's default similarity computes them.

``cosine_score_matrix(a, b)[i, j] = ⟨a_i / ‖a_i‖, b_j / ‖b_j‖⟩``, in **float32** with torch
(inputs are cast to float32, each row divided by max(‖row‖₂, 1e-12), then one matrix
product), which is what MTEB scores retrieval, reranking and zero-shot classification with
for an encoder without its own similarity function. Ranking metrics only see the order of
the scores, and exact ties (duplicate clips, duplicate texts) are broken by a rule, so
computing the scores with the same arithmetic is what makes the metrics match MTEB's to the
last digit; float64 scores can order near-ties (within ~1e-7) differently. The last bit of a
float32 product can still depend on the device and math library (MTEB itself moves the
product to a GPU when there is one).

A zero vector is scored 0 against everything (its row stays zero after the clamped
normalisation), as in MTEB.
"""

from __future__ import annotations

import numpy as np
import torch

from audiobench.metrics.validation import real_matrix

__all__ = ["cosine_score_matrix"]


def cosine_score_matrix(a: object, b: object) -> np.ndarray:
    """float32 cosine similarities ``[len(a), len(b)]`` of the rows of ``a`` and ``b``.

    Raises
    ------
    ValueError
        Unless ``a`` and ``b`` are finite non-empty 2-D arrays with the same number of columns.
    """
    left = real_matrix(a, "a")
    right = real_matrix(b, "b")
    if left.shape[1] != right.shape[1]:
        raise ValueError(
            f"a and b must have the same dimension, got {left.shape[1]} and {right.shape[1]}"
        )
    x = torch.nn.functional.normalize(torch.as_tensor(left, dtype=torch.float32), p=2, dim=1)
    y = torch.nn.functional.normalize(torch.as_tensor(right, dtype=torch.float32), p=2, dim=1)
    return (x @ y.T).numpy()
