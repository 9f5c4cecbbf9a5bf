"""The probing paper's hyper-parameter search and ranges (appendix D.4, Table 10)."""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np
import pytest

from audiobench.probes import ProtoBinProbe, make_probe
from audiobench.probes.paper import PAPER_GRIDS, PAPER_PROTOTYPES, PAPER_RANGES, paper_params
from audiobench.probes.search import EpochReport, PaperSearch, require_optuna, run_search
from audiobench.probes.splits import fold_splits, with_validation_folds

from .data import event_sequences


def test_ranges_are_the_papers_and_the_grid_lies_inside() -> None:
    assert PAPER_RANGES == {
        "attentive": {"lr": (1e-4, 7e-3), "weight_decay": (1e-5, 5e-4)},
        "protobin": {"lr": (2e-3, 8e-2), "weight_decay": (1e-5, 5e-4)},
    }
    for name, grid in PAPER_GRIDS.items():
        for key, values in grid.items():
            low, high = PAPER_RANGES[name][key]
            assert all(low <= v <= high for v in values), (name, key, values)
    assert PAPER_PROTOTYPES == 20
    assert paper_params("protobin", multilabel=False)["prototypes_per_class"] == 20
    searched = paper_params("attentive", multilabel=True, search="paper", trials=7)
    assert searched["search"] == PaperSearch(lr=(1e-4, 7e-3), weight_decay=(1e-5, 5e-4), trials=7)
    assert searched["search"].n_startup == 3
    assert PaperSearch(lr=(1e-4, 1e-3), weight_decay=(1e-5, 1e-4)).n_startup == 25  # of 50
    with pytest.raises(ValueError, match="search must be 'grid' or 'paper'"):
        paper_params("attentive", multilabel=False, search="random")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="0 < low <= high"):
        PaperSearch(lr=(1e-3, 1e-4), weight_decay=(1e-5, 1e-4))
    with pytest.raises(ValueError, match="startup_trials"):
        PaperSearch(lr=(1e-4, 1e-3), weight_decay=(1e-5, 1e-4), trials=4, startup_trials=5)


# ---------------------------------------------------------------------------- the search


def bumpy_trainer(
    calls: list[tuple[float, float, int, bool]],
) -> Any:
    """A stand-in for training: the score peaks at lr = 3e-3 and rises over 10 epochs; each
    seed shifts it a little. The "model" is the configuration and seed it was trained with."""

    def train(
        lr: float, wd: float, seed: int, report: EpochReport | None
    ) -> tuple[float, int, tuple[float, float, int]]:
        calls.append((lr, wd, seed, report is not None))
        quality = 1.0 - abs(math.log10(lr) - math.log10(3e-3)) / 2
        for epoch in range(1, 11):
            if report is not None:
                report(epoch, quality * epoch / 10)
        return quality + 0.02 * math.sin(7 * seed + 1000 * lr), 10, (lr, wd, seed)

    return train


def test_search_trials_prunes_re_evaluates_and_chooses_the_best_mean() -> None:
    pytest.importorskip("optuna")
    spec = PaperSearch(lr=(1e-4, 1e-1), weight_decay=(1e-5, 5e-4), trials=16, top_k=3, seeds=3)
    calls: list[tuple[float, float, int, bool]] = []
    outcome = run_search(spec, bumpy_trainer(calls), seed=4)
    record = outcome.record
    assert record["n_trials"] == 16 and len(record["trials"]) == 16
    assert "Sobol" in record["sampler"] and "for 8 trial(s), then TPE" in record["sampler"]
    for trial in record["trials"]:
        assert 1e-4 <= trial["lr"] <= 1e-1 and 1e-5 <= trial["weight_decay"] <= 5e-4
    # Successive halving stopped some trials early, on the per-epoch score.
    pruned = [t for t in record["trials"] if t["state"] == "pruned"]
    assert record["n_pruned"] == len(pruned) > 0
    assert all(t["epochs_run"] < 10 and t["score"] is None for t in pruned)
    # The three best finished trials, each again with seeds 5 and 6 (seed 4 is the trial).
    finished = sorted(
        (t for t in record["trials"] if t["state"] == "complete"), key=lambda t: -t["score"]
    )
    assert [r["trial"] for r in record["re_evaluated"]] == [t["number"] for t in finished[:3]]
    for row in record["re_evaluated"]:
        assert len(row["scores"]) == 3 and row["mean"] == pytest.approx(np.mean(row["scores"]))
        assert (row["lr"], row["weight_decay"], 5, False) in calls
        assert (row["lr"], row["weight_decay"], 6, False) in calls
    best = max(record["re_evaluated"], key=lambda row: row["mean"])
    assert (outcome.lr, outcome.weight_decay) == (best["lr"], best["weight_decay"])
    assert outcome.trained == (best["lr"], best["weight_decay"], 4)  # the trial's own model
    assert record["seeds"] == [4, 5, 6]
    # TPE found the peak's neighbourhood.
    assert abs(math.log10(outcome.lr) - math.log10(3e-3)) < 0.5
    # Seeded: the same search again gives the same record.
    assert run_search(spec, bumpy_trainer([]), seed=4).record == record


def test_probe_runs_the_search_with_a_tiny_budget_and_records_it() -> None:
    pytest.importorskip("optuna")
    sequences, y = event_sequences(
        np.random.default_rng(3), 90, 3, dim=8, event_frames=1, lengths=(6, 12)
    )
    params = paper_params("protobin", multilabel=False, search="paper", trials=3)
    params["search"] = params["search"].model_copy(update={"top_k": 2, "seeds": 2})
    params |= {"epochs": 3, "batch_size": 32}
    probe = make_probe("protobin", **params, seed=1).fit(sequences[:70], y[:70])
    config = probe.config()
    selection = config["selection"]
    assert selection["method"] == "paper_search" and selection["validation"] == "holdout"
    assert selection["n_trials"] == 3 and selection["seeds"] == [1, 2]
    assert config["grid"]["search"] == "paper" and config["grid"]["lr"] == [2e-3, 8e-2]
    assert "lr" not in config["params"] and config["params"]["search"]["trials"] == 3
    chosen = config["chosen"]
    assert 2e-3 <= chosen["lr"] <= 8e-2 and 1e-5 <= chosen["weight_decay"] <= 5e-4
    assert (chosen["lr"], chosen["weight_decay"]) in {
        (row["lr"], row["weight_decay"]) for row in selection["re_evaluated"]
    }
    assert selection["training"]["epochs_run"] == 3  # refitted on every training clip
    # Another seed reuses the choice without searching again.
    fixed = probe.fixed_choice()
    assert fixed == {"lr": chosen["lr"], "weight_decay": chosen["weight_decay"], "search": None}
    again = make_probe("protobin", **(params | fixed), seed=2).fit(sequences[:70], y[:70])
    assert again.config()["grid"] == {} and again.chosen_ == probe.chosen_
    # Seeded end to end.
    same = make_probe("protobin", **params, seed=1).fit(sequences[:70], y[:70])
    np.testing.assert_array_equal(
        same.predict_scores(sequences[70:]), probe.predict_scores(sequences[70:])
    )


def test_search_with_a_validation_split_keeps_the_chosen_trial_model() -> None:
    pytest.importorskip("optuna")
    sequences, y = event_sequences(
        np.random.default_rng(5), 60, 2, dim=6, event_frames=1, lengths=(5, 9)
    )
    search = PaperSearch(lr=(3e-3, 3e-2), weight_decay=(1e-5, 1e-4), trials=2, top_k=1, seeds=1)
    kwargs: dict[str, Any] = {"epochs": 2, "early_stopping": False}
    probe = ProtoBinProbe(search=search, **kwargs)
    probe.fit(sequences[:40], y[:40], X_val=sequences[40:50], y_val=y[40:50])
    assert probe.config()["selection"]["validation"] == "validation"
    alone = ProtoBinProbe(**kwargs, **probe.fixed_choice()).fit(sequences[:40], y[:40])
    np.testing.assert_array_equal(
        probe.predict_scores(sequences[50:]), alone.predict_scores(sequences[50:])
    )


def test_missing_optuna_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "optuna", None)  # makes `import optuna` raise ImportError
    with pytest.raises(ImportError, match=r"pip install 'audiobench\[search\]'"):
        require_optuna()
    params = paper_params("attentive", multilabel=False, search="paper", trials=2)
    with pytest.raises(ImportError, match=r"token_search='paper'.*audiobench\[search\]"):
        make_probe("attentive", **params)
    make_probe("attentive", **paper_params("attentive", multilabel=False))  # the grid needs none


# ---------------------------------------------------------------------------- the family


def test_validation_folds_are_designated_a_priori() -> None:
    folds = np.repeat([1, 2, 3, 4], 5)
    splits = with_validation_folds(fold_splits(folds))
    for i, split in enumerate(splits):
        test_fold, val_fold = i + 1, (i + 1) % 4 + 1
        assert split.name == f"fold-{test_fold}"
        np.testing.assert_array_equal(split.test, np.flatnonzero(folds == test_fold))
        assert split.validation is not None
        np.testing.assert_array_equal(split.validation, np.flatnonzero(folds == val_fold))
        kept = np.flatnonzero((folds != test_fold) & (folds != val_fold))
        np.testing.assert_array_equal(split.train, kept)
    with pytest.raises(ValueError, match="at least 3 folds, got 2"):
        with_validation_folds(fold_splits([1, 1, 2, 2]))


def test_family_paper_search_records_trials_and_reuses_the_choice_across_seeds() -> None:
    pytest.importorskip("optuna")
    from audiobench.families import ClassificationTask
    from tests.families.test_classification import FakeEmbedder, separable, task_class

    with pytest.raises(ValueError, match="add -O token_recipe=paper"):
        ClassificationTask.Options(token_search="paper")
    clips, vectors, frames = separable(n_classes=3, per_class=8)
    task = task_class(
        "TestPaperSearch",
        probes=("protobin",),
        folds=("1", "2", "3"),
        token_protocol="paper",
        token_search="paper",
        token_trials=2,
        token_seeds=2,
        probe_params={"protobin": {"epochs": 2}},
    )
    result = task().evaluate(FakeEmbedder(vectors, frames), clips)
    assert result.details["protocol"]["token_search"] == "paper"
    assert result.details["protocol"]["token_trials"] == 2
    configs = result.details["probes"]["default"]["protobin"]["fold-1"]
    first, second = configs["0"], configs["1"]
    assert first["selection"]["method"] == "paper_search"
    # A cross-validated task: fold 2 (the next one) validates, fold 3 trains, fold 1 tests.
    assert first["selection"]["validation"] == "validation"
    sizes = result.details["splits"]["default"]["splits"]
    assert first["n_validation"] == sizes["fold-2"]["n_test"]
    assert first["n_train"] == sizes["fold-1"]["n_train"] - sizes["fold-2"]["n_test"]
    assert first["selection"]["n_trials"] == 2 and len(first["selection"]["trials"]) == 2
    assert first["params"]["search"]["lr"] == [2e-3, 8e-2]
    # The second seed trains and tests with the first seed's choice.
    assert second["grid"] == {} and "search" not in second["params"]
    assert second["params"]["lr"] == first["chosen"]["lr"]
    assert second["params"]["weight_decay"] == first["chosen"]["weight_decay"]
    assert result.scores["default"]["protobin"]["n_seeds"] == 2
