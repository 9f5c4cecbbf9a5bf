"""Shared assertions for the probe tests."""

from __future__ import annotations

import math

import numpy as np


def assert_chance(accuracy: float, n_test: int, n_classes: int) -> None:
    """Accuracy within 4 binomial standard deviations of 1 / n_classes.

    With the labels permuted over the whole set before splitting, the test labels are
    independent of everything the probe saw, so its number of hits is (at most as spread as)
    Binomial(n_test, 1 / n_classes) whatever it predicts.
    """
    p = 1.0 / n_classes
    tolerance = 4.0 * math.sqrt(p * (1 - p) / n_test)
    assert abs(accuracy - p) <= tolerance, (
        f"accuracy {accuracy:.3f} is not chance {p:.3f} ± {tolerance:.3f}"
    )


def hamming_accuracy(predicted: np.ndarray, truth: np.ndarray) -> float:
    """Fraction of (clip, class) decisions that are right."""
    return float(np.mean(predicted.astype(bool) == truth.astype(bool)))
