from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from audiobench.vocsim import clustering_purity
from audiobench.vocsim.purity import weighted_purity
from tests.metrics.data import LINE_D, LINE_LABELS


def test_weighted_purity_ignores_noise() -> None:
    # Cluster 0 holds classes [a, a, b] (majority 2), cluster 1 [b, b] (2); two noise points.
    clusters = np.array([0, 0, 0, 1, 1, -1, -1])
    codes = np.array([0, 0, 1, 1, 1, 0, 1])
    purity, noise = weighted_purity(clusters, codes)
    assert purity == pytest.approx(4 / 5)
    assert noise == pytest.approx(2 / 7)
    assert np.isnan(weighted_purity(np.array([-1, -1]), np.array([0, 1]))[0])


@pytest.mark.skipif(importlib.util.find_spec("umap") is not None, reason="umap-learn installed")
def test_missing_umap_names_the_extra() -> None:
    with pytest.raises(ImportError, match=r"pip install 'audiobench\[umap\]'"):
        clustering_purity(LINE_D, LINE_LABELS)
