"""Hyper-parameters chosen without leaking groups: inner folds and holdouts keep each group
(speaker, individual) on one side, as the evaluation's own grouped splits do."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from audiobench.probes import KNNProbe, LinearProbe, MLPProbe, ProtoBinProbe, base
from audiobench.probes import knn as knn_module
from audiobench.probes import linear as linear_module
from audiobench.probes import neural as neural_module
from audiobench.probes.base import inner_cv_folds
from audiobench.probes.neural import holdout_split
from audiobench.probes.splits import group_codes

from .data import event_sequences


def planted_speakers(
    seed: int, n_speakers: int = 8, per_class: int = 8, dim: int = 16
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two classes whose signal is mostly speaker-specific.

    Every clip is its speaker's offset (scale 4), plus an offset peculiar to its speaker *and*
    class (scale 3), plus a weak class shift shared by all speakers (±1 on feature 0), plus
    noise (0.3). Within a speaker the class is obvious (the peculiar offsets are far apart);
    across speakers only the weak shared shift carries over. A selection whose inner folds put
    a speaker on both sides rewards what recognises the speaker's class offsets (a 1-NN rule,
    a weakly regularised model) and scores it near 1.0; on new speakers those choices are no
    better than chance.
    """
    rng = np.random.default_rng(seed)
    X, y, groups = [], [], []
    for speaker in range(n_speakers):
        offset = rng.normal(scale=4.0, size=dim)
        for label in (0, 1):
            peculiar = rng.normal(scale=3.0, size=dim)
            for _ in range(per_class):
                clip = offset + peculiar + rng.normal(scale=0.3, size=dim)
                clip[0] += 2 * label - 1
                X.append(clip)
                y.append(label)
                groups.append(f"speaker-{speaker}")
    return np.asarray(X, dtype=np.float32), np.asarray(y), np.asarray(groups)


Folds = list[tuple[np.ndarray, np.ndarray]]


def spy(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[Folds]:
    """Record every result of ``module.name`` (a fold or holdout builder)."""
    calls: list[Folds] = []
    real: Callable[..., Any] = getattr(module, name)

    def recorded(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        calls.append([result] if isinstance(result, tuple) else list(result))
        return result

    monkeypatch.setattr(module, name, recorded)
    return calls


def assert_no_group_on_both_sides(folds: Folds, groups: np.ndarray) -> None:
    for train, held in folds:
        assert len(train) and len(held)
        shared = set(groups[train]) & set(groups[held])
        assert not shared, f"groups on both sides of an inner split: {sorted(shared)}"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_planted_speaker_signal_changes_the_knn_and_linear_choice(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    X, y, groups = planted_speakers(seed)
    knn_folds = spy(monkeypatch, knn_module, "inner_cv_folds")
    linear_folds = spy(monkeypatch, linear_module, "inner_cv_folds")

    leaky_knn, knn = KNNProbe().fit(X, y), KNNProbe().fit(X, y, groups=groups)
    leaky_linear = LinearProbe().fit(X, y)
    linear = LinearProbe().fit(X, y, groups=groups)

    # Speakers on both sides: the inner folds look perfect and pick the speaker-recognising
    # choices, the most local k and a weak regularisation.
    for leaky in (leaky_knn, leaky_linear):
        config = leaky.config()
        assert max(row["score"] for row in config["selection"]["scores"]) >= 0.95
    assert leaky_knn.config()["chosen"]["k"] <= 5
    assert leaky_linear.config()["chosen"]["C"] >= 1.0
    # Speakers kept apart: the inner score is an honest estimate for a new speaker, and the
    # choice moves to the smoothest k and the strongest regularisation.
    for grouped in (knn, linear):
        config = grouped.config()
        assert max(row["score"] for row in config["selection"]["scores"]) <= 0.8
        assert config["selection"]["method"] == "inner_cv"
    assert knn.config()["chosen"]["k"] == 20
    assert linear.config()["chosen"]["C"] <= 1e-2

    # Each probe's grouped fit used group folds: no speaker on both sides, every clip
    # held out exactly once.
    for calls in (knn_folds, linear_folds):
        ungrouped, grouped = calls
        assert any(set(groups[tr]) & set(groups[te]) for tr, te in ungrouped)
        assert_no_group_on_both_sides(grouped, groups)
        held = np.sort(np.concatenate([te for _, te in grouped]))
        np.testing.assert_array_equal(held, np.arange(len(y)))


def test_inner_folds_with_groups_are_group_folds_stratified_and_seeded() -> None:
    rng = np.random.default_rng(4)
    groups = np.repeat([f"g{i}" for i in range(10)], 6)
    targets = rng.integers(0, 3, size=60)
    codes = group_codes(groups, 60)
    folds = inner_cv_folds(targets, n_splits=5, seed=7, groups=codes)
    assert len(folds) == 5
    assert_no_group_on_both_sides(folds, groups)
    again = inner_cv_folds(targets, n_splits=5, seed=7, groups=codes)
    for (a, b), (c, d) in zip(folds, again, strict=True):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)
    # Fewer groups than folds: one fold per group.
    three = inner_cv_folds(targets[:18], n_splits=5, seed=0, groups=codes[:18])
    assert len(three) == 3
    assert_no_group_on_both_sides(three, groups[:18])
    # Multi-label targets: group folds by group only.
    indicator = rng.integers(0, 2, size=(60, 4))
    assert_no_group_on_both_sides(
        inner_cv_folds(indicator, n_splits=4, seed=0, groups=codes), groups
    )
    with pytest.raises(ValueError, match=r"at least 2 groups .* got 1; .* or fix the value"):
        inner_cv_folds(targets[:6], n_splits=5, seed=0, groups=codes[:6])


def test_holdout_with_groups_holds_out_whole_groups() -> None:
    targets = np.repeat(np.arange(4), 10)
    groups = np.array([f"s{i % 10}" for i in range(40)])
    train, held = holdout_split(targets, 0.2, seed=1, groups=groups)
    assert_no_group_on_both_sides([(train, held)], groups)
    assert len(np.unique(groups[held])) == 2  # a fifth of the 10 groups
    assert sorted([*train, *held]) == list(range(40))
    # Without groups: the seeded stratified holdout, unchanged.
    _, plain_held = holdout_split(targets, 0.2, seed=1)
    assert np.bincount(targets[plain_held]).tolist() == [2, 2, 2, 2]
    with pytest.raises(ValueError, match=r"at least 2 groups .* got 1"):
        holdout_split(targets, 0.2, seed=1, groups=["one"] * 40)


def test_neural_grid_holdout_follows_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    X, y, groups = planted_speakers(0)
    calls = spy(monkeypatch, neural_module, "holdout_split")
    probe = MLPProbe(lr=(1e-3, 1e-2), epochs=3, early_stopping=False)
    probe.fit(X, y, groups=groups)
    selection = probe.config()["selection"]
    assert selection["method"] == "holdout" and selection["grouped"] is True
    ((holdout,),) = calls
    assert_no_group_on_both_sides([holdout], groups)
    assert probe.fit_groups is None  # only during fit


def test_token_probe_holdout_follows_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    sequences, y = event_sequences(np.random.default_rng(1), 60, 3, dim=8, lengths=(6, 10))
    groups = np.array([f"bird-{i % 6}" for i in range(60)])
    calls = spy(monkeypatch, neural_module, "holdout_split")
    ProtoBinProbe(lr=(3e-3, 3e-2), epochs=2, early_stopping=False).fit(sequences, y, groups=groups)
    ((holdout,),) = calls
    assert_no_group_on_both_sides([holdout], groups)


def test_groups_must_match_the_training_clips() -> None:
    X, y, groups = planted_speakers(0)
    with pytest.raises(ValueError, match="got 10 groups for 128 X"):
        KNNProbe().fit(X, y, groups=groups[:10])
    with pytest.raises(ValueError, match="group is missing"):
        KNNProbe().fit(X, y, groups=[None, *groups[1:]])
    # A validation split chooses without inner folds: groups change nothing there.
    with_val = KNNProbe().fit(X[:96], y[:96], X_val=X[96:], y_val=y[96:], groups=groups[:96])
    without = KNNProbe().fit(X[:96], y[:96], X_val=X[96:], y_val=y[96:])
    assert with_val.config()["selection"] == without.config()["selection"]


def test_ungrouped_inner_folds_are_unchanged() -> None:
    """No groups: the same stratified folds as before groups existed."""
    from sklearn.model_selection import StratifiedKFold

    targets = np.repeat(np.arange(3), 7)
    expected = StratifiedKFold(n_splits=5, shuffle=True, random_state=3).split(
        np.zeros(21), targets
    )
    for (a, b), (c, d) in zip(
        base.inner_cv_folds(targets, n_splits=5, seed=3), expected, strict=True
    ):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)


def test_grouped_task_tunes_its_probes_for_new_speakers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the classification family: a grouped task hands each training part's groups
    to the probes, whose inner folds then keep every speaker on one side. (On six training
    speakers the choice itself is noisy; the inner estimates are honest.)"""
    from tests.families.test_classification import FakeEmbedder, make_clip, task_class

    X, y, groups = planted_speakers(0)
    clips = [
        make_clip(f"c{i:03d}", f"class-{label}", group=str(group))
        for i, (label, group) in enumerate(zip(y, groups, strict=True))
    ]
    vectors = {clip.id: row for clip, row in zip(clips, X, strict=True)}
    seen: list[tuple[np.ndarray, Folds]] = []
    real = linear_module.inner_cv_folds

    def recorded(targets: np.ndarray, **kwargs: Any) -> Folds:
        folds = real(targets, **kwargs)
        seen.append((kwargs["groups"], folds))
        return folds

    monkeypatch.setattr(linear_module, "inner_cv_folds", recorded)
    task = task_class(
        "TestGroupedTuning", probes=("linear", "knn"), grouped=True, generated_folds=4
    )
    result = task().evaluate(FakeEmbedder(vectors), clips)
    configs = result.details["probes"]["default"]
    assert len(seen) == 4  # one linear fit per outer group fold
    for codes, folds in seen:
        assert codes is not None
        assert_no_group_on_both_sides(folds, codes)
    # Every inner estimate is one for new speakers (the leaky folds score >= 0.95 on this
    # data, test_planted_speaker_signal_changes_the_knn_and_linear_choice).
    for probe in ("linear", "knn"):
        for split, config in configs[probe].items():
            assert config["selection"]["method"] == "inner_cv"
            assert max(row["score"] for row in config["selection"]["scores"]) < 0.9, split
