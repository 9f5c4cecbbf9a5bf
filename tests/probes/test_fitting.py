"""The probe fit loop of probes/fitting.py, without a task: every probe, split and seed."""

from __future__ import annotations

import numpy as np
import pytest

from audiobench.probes.fitting import FitLines, FitSettings, fit_probes, n_fits, probe_entry
from audiobench.probes.splits import fold_splits
from audiobench.runner import ProgressBar


def test_every_probe_is_fitted_on_every_split_and_averaged_into_its_entry() -> None:
    rng = np.random.default_rng(0)
    y = ["a", "b"] * 12
    X = np.array([[4.0 if label == "a" else -4.0, 0.0] for label in y])
    X += 0.1 * rng.standard_normal(X.shape)
    splits = fold_splits([i % 3 + 1 for i in range(len(y))])
    levels = {"linear": "vector", "knn": "vector"}
    settings = FitSettings(multilabel=False, seed=0)
    bar = ProgressBar(n_fits(levels, len(splits), settings))
    results, configs = fit_probes(
        levels, {"vector": X}, y, splits, settings, where="T", lines=FitLines(None, "T"), bar=bar
    )
    assert bar.completed == 6  # two probes on three splits, one seed each
    for name in levels:
        assert list(results[name]) == ["fold-1", "fold-2", "fold-3"]
        assert all(list(by_seed) == [0] for by_seed in results[name].values())
        assert configs[name]["fold-1"]["seed"] == 0
        entry = probe_entry(results[name], n_classes=2)
        assert entry["accuracy"] == 1.0 and entry["std"]["accuracy"] == 0.0
        assert entry["n_samples"] == 24 and entry["n_splits"] == 3 and "per_seed" not in entry


def test_token_probes_count_one_fit_per_seed() -> None:
    levels = {"linear": "vector", "attentive": "token"}
    assert n_fits(levels, 3, FitSettings(multilabel=False, seed=0, token_seeds=5)) == 3 * (1 + 5)


def test_an_entry_averages_splits_per_seed_then_seeds() -> None:
    def report(accuracy: float) -> dict[str, float | int]:
        return {"accuracy": accuracy, "n_samples": 2, "n_classes": 2}

    runs = {
        "fold-1": {0: report(0.5), 1: report(1.0)},
        "fold-2": {0: report(1.0), 1: report(0.0)},
    }
    entry = probe_entry(runs, n_classes=2)
    # Per split over seeds: 0.75 and 0.5; per seed over splits: 0.75 and 0.5.
    assert entry["per_split"]["fold-1"]["accuracy"] == 0.75
    assert entry["per_split"]["fold-2"]["accuracy"] == 0.5
    assert entry["per_seed"] == {"0": {"accuracy": 0.75}, "1": {"accuracy": 0.5}}
    assert entry["accuracy"] == 0.625
    assert entry["std"]["accuracy"] == pytest.approx(0.125)
    assert entry["seed_std"]["accuracy"] == pytest.approx(0.125)
    assert entry["n_seeds"] == 2 and entry["n_samples"] == 4 and entry["n_classes"] == 2
