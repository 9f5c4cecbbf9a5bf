"""One typed training recipe for the neural probes, and probe names registered once."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from audiobench.probes import (
    PROBE_NAMES,
    PROBES,
    TOKEN_PROBES,
    VECTOR_PROBES,
    AttentiveProbe,
    MLPProbe,
    ProtoBinProbe,
    TrainingRecipe,
    make_probe,
    probe_class,
    probe_level,
)

from .data import blobs, event_sequences

# ---------------------------------------------------------------------------- registry


def test_each_class_states_the_name_and_level_it_is_registered_with() -> None:
    assert tuple(PROBES) == PROBE_NAMES == (*VECTOR_PROBES, *TOKEN_PROBES)
    for name in PROBE_NAMES:
        assert probe_class(name) is PROBES[name]
        assert PROBES[name].name == name and PROBES[name].level == probe_level(name)
    with pytest.raises(ValueError, match="unknown probe 'svm'; known probes: knn, linear"):
        probe_level("svm")


def test_the_classification_family_reads_the_registry() -> None:
    from audiobench.families import classification

    assert classification.PROBE_NAMES is PROBE_NAMES
    with pytest.raises(ValueError, match="unknown probe 'svm'"):
        classification.ClassificationTask.Options(probes=("svm",))


def test_probe_names_read_without_torch_or_scikit_learn() -> None:
    code = (
        "import json, sys\n"
        "from audiobench.probes import PROBE_NAMES, TOKEN_PROBES, probe_level\n"
        "assert [probe_level(n) for n in TOKEN_PROBES] == ['token', 'token']\n"
        "print(json.dumps(sorted(m for m in ('torch', 'sklearn', 'scipy') if m in sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out.strip().splitlines()[-1]) == []


# ---------------------------------------------------------------------------- recipe


def test_each_neural_probe_keeps_its_defaults_in_one_recipe() -> None:
    """The defaults the probes had as keyword arguments, now each class's recipe."""
    shared = {"early_stopping": True, "standardise": True, "holdout": 0.2, "search": None}
    assert MLPProbe().recipe == TrainingRecipe(
        epochs=50, batch_size=64, lr=(1e-3,), weight_decay=(1e-2,), patience=10, **shared
    )
    assert AttentiveProbe().recipe == TrainingRecipe(
        epochs=30, batch_size=32, lr=(1e-3,), weight_decay=(1e-2,), patience=8, **shared
    )
    assert ProtoBinProbe().recipe == TrainingRecipe(
        epochs=30, batch_size=32, lr=(3e-2,), weight_decay=(1e-4,), patience=8, **shared
    )
    assert MLPProbe().recipe.multilabel_loss == "binary_cross_entropy"


def test_a_recipe_and_keyword_overrides_train_the_same_model() -> None:
    X, y = blobs(np.random.default_rng(2), 80, 3)
    recipe = MLPProbe.default_recipe.with_overrides("MLPProbe", {"epochs": 4, "lr": 3e-3})
    assert recipe.lr == (3e-3,) and recipe.epochs == 4
    by_recipe = MLPProbe(recipe=recipe, seed=1).fit(X[:60], y[:60])
    by_keywords = MLPProbe(epochs=4, lr=3e-3, seed=1).fit(X[:60], y[:60])
    np.testing.assert_array_equal(
        by_recipe.predict_scores(X[60:]), by_keywords.predict_scores(X[60:])
    )
    assert by_recipe.config() == by_keywords.config()
    # A recipe plus overrides: the overrides win, the rest comes from the recipe.
    both = MLPProbe(recipe=recipe, batch_size=16)
    assert both.recipe.batch_size == 16 and both.recipe.epochs == 4
    # Grids keep their order; the config reports a one-point grid as its value.
    sequences, labels = event_sequences(np.random.default_rng(0), 12, 2, dim=4)
    fitted = ProtoBinProbe(lr=[3e-2, 1e-3], epochs=1).fit(sequences, labels)
    assert fitted.recipe.lr == (3e-2, 1e-3)
    assert fitted.config()["grid"]["lr"] == [3e-2, 1e-3]
    assert fitted.config()["params"]["weight_decay"] == 1e-4


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"epoch": 3}, r"MLPProbe has no parameter 'epoch'; its training recipe's fields are "),
        ({"epochs": 0}, "greater than or equal to 1"),
        ({"epochs": 2.5}, "epochs"),
        ({"lr": -1.0}, r"need lr > 0 and weight_decay >= 0"),
        ({"weight_decay": (1e-4, -1.0)}, r"need lr > 0 and weight_decay >= 0"),
        ({"lr": ()}, "non-empty sequence"),
        ({"holdout": 1.0}, "holdout"),
        ({"multilabel_loss": "focal"}, "multilabel_loss"),
    ],
)
def test_bad_recipe_values_are_named(overrides: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_probe("mlp", **overrides)


def test_recipe_is_read_from_task_options_json() -> None:
    """probe_params arrive as JSON: lists for grids, a dict for the search."""
    pytest.importorskip("optuna")
    probe = make_probe(
        "attentive",
        lr=[1e-4, 1e-3],
        search={"lr": [1e-4, 7e-3], "weight_decay": [1e-5, 5e-4], "trials": 4},
    )
    assert probe.recipe.lr == (1e-4, 1e-3)
    assert probe.recipe.search is not None and probe.recipe.search.trials == 4
