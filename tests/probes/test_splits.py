"""Train/validation/test splits: given labels, predefined folds, grouped splits, checks."""

from __future__ import annotations

import numpy as np
import pytest

from audiobench.probes import (
    GroupLeakError,
    MissingClassError,
    Split,
    check_split,
    fold_splits,
    grouped_folds,
    grouped_split,
    groups_in_several_parts,
    split_from_labels,
)


def test_split_from_labels() -> None:
    column = ["train", "test", "validation", "train", "test", "extra", "train"]
    with pytest.raises(ValueError, match="unexpected split values 'extra'"):
        split_from_labels(column)
    split = split_from_labels(column, ignore={"extra"})
    np.testing.assert_array_equal(split.train, [0, 3, 6])
    np.testing.assert_array_equal(split.test, [1, 4])
    np.testing.assert_array_equal(split.validation, [2])  # type: ignore[arg-type]
    assert split.to_dict() == {"name": "test", "n_train": 3, "n_validation": 1, "n_test": 2}
    no_validation = split_from_labels(["train", "test", "train"])
    assert no_validation.validation is None
    with pytest.raises(ValueError, match="no clip is in the 'test' split"):
        split_from_labels(["train", "train"])


def test_split_from_labels_checks_classes() -> None:
    with pytest.raises(MissingClassError, match="class 'owl' in the test part of split 'test'"):
        split_from_labels(["train", "train", "test"], labels=["cat", "dog", "owl"])


def test_leave_one_fold_out_like_esc50() -> None:
    rng = np.random.default_rng(0)
    folds = np.repeat([1, 2, 3, 4, 5], 8)
    labels = np.tile(["dog", "rain", "crow", "bell"], 10)
    order = rng.permutation(40)
    folds, labels = folds[order], labels[order]
    splits = fold_splits(folds, labels=labels)
    assert [s.name for s in splits] == ["fold-1", "fold-2", "fold-3", "fold-4", "fold-5"]
    covered = np.concatenate([s.test for s in splits])
    np.testing.assert_array_equal(np.sort(covered), np.arange(40))
    for fold, split in zip([1, 2, 3, 4, 5], splits, strict=True):
        np.testing.assert_array_equal(split.test, np.flatnonzero(folds == fold))
        np.testing.assert_array_equal(split.train, np.flatnonzero(folds != fold))
        assert split.validation is None
    with pytest.raises(ValueError, match="at least 2 folds"):
        fold_splits([1, 1, 1])


def test_fold_missing_class_names_class_and_fold() -> None:
    folds = [1, 1, 2, 2, 3, 3]
    labels = ["a", "b", "a", "b", "a", "rare"]
    with pytest.raises(MissingClassError) as error:
        fold_splits(folds, labels=labels)
    message = str(error.value)
    assert "'rare'" in message and "'fold-3'" in message and "test part" in message
    assert error.value.classes == ("rare",) and error.value.split == "fold-3"


def speakers(n_groups: int = 12, per_group: int = 6) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    groups = np.repeat([f"spk{i:02d}" for i in range(n_groups)], per_group)
    labels = rng.choice(["yes", "no", "up"], size=groups.size)
    # Every speaker says every word at least once.
    labels[::per_group], labels[1::per_group], labels[2::per_group] = "yes", "no", "up"
    return labels, groups


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_grouped_split_never_leaks(seed: int) -> None:
    labels, groups = speakers()
    split = grouped_split(labels, groups, test_size=0.25, validation_size=0.25, seed=seed)
    assert split.validation is not None
    parts = [set(groups[p]) for p in (split.train, split.validation, split.test)]
    assert not (parts[0] & parts[1]) and not (parts[0] & parts[2]) and not (parts[1] & parts[2])
    assert len(parts[2]) == 3 and len(parts[1]) == 3
    everything = np.concatenate([split.train, split.validation, split.test])
    np.testing.assert_array_equal(np.sort(everything), np.arange(labels.size))
    again = grouped_split(labels, groups, test_size=0.25, validation_size=0.25, seed=seed)
    np.testing.assert_array_equal(again.test, split.test)


def test_grouped_folds_cover_every_clip_once() -> None:
    labels, groups = speakers()
    splits = grouped_folds(labels, groups, n_splits=4, seed=0)
    tests = np.concatenate([s.test for s in splits])
    np.testing.assert_array_equal(np.sort(tests), np.arange(labels.size))
    for split in splits:
        assert not set(groups[split.train]) & set(groups[split.test])


def test_grouped_split_multilabel() -> None:
    _, groups = speakers()
    Y = np.zeros((groups.size, 2), dtype=int)
    Y[::2, 0] = 1
    Y[1::2, 1] = 1
    split = grouped_split(Y, groups, test_size=0.25, multilabel=True, seed=4)
    assert not set(groups[split.train]) & set(groups[split.test])


def test_grouped_split_needs_enough_groups() -> None:
    with pytest.raises(ValueError, match="needs at least 5 groups, got 2"):
        grouped_split(["a", "b", "a", "b"], ["x", "x", "y", "y"], test_size=0.2)


def test_check_split_names_leaking_group() -> None:
    split = Split(name="test", train=np.array([0, 1, 2]), test=np.array([3, 4]))
    groups = ["ann", "bob", "cy", "cy", "dee"]
    with pytest.raises(GroupLeakError, match="group 'cy' of split 'test'") as error:
        check_split(split, groups=groups)
    assert error.value.groups == ("cy",)
    check_split(split, groups=["ann", "bob", "cy", "dan", "dee"])


def test_check_split_structure() -> None:
    overlapping = Split(name="bad", train=np.array([0, 1]), test=np.array([1, 2]))
    with pytest.raises(ValueError, match="clip 1 is in both its train and test parts"):
        check_split(overlapping)
    out_of_range = Split(name="far", train=np.array([0, 1]), test=np.array([9]))
    with pytest.raises(ValueError, match="refers to clip 9; there are 3 labels"):
        check_split(out_of_range, labels=["a", "b", "c"])


def test_check_split_multilabel_names_columns() -> None:
    Y = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    split = Split(name="test", train=np.array([0, 1]), test=np.array([2]))
    with pytest.raises(MissingClassError, match="class 'siren' in the test part"):
        check_split(split, Y, multilabel=True, class_names=["dog", "cat", "siren"])


def test_groups_in_several_parts_counts_shared_groups() -> None:
    split = split_from_labels(["train", "test", "validation", "train", "test"])
    # Speaker "a" in train and test, "b" in validation only, "c" in train and test.
    assert groups_in_several_parts(split, ["a", "a", "b", "c", "c"]) == 2
    assert groups_in_several_parts(split, ["a", "b", None, "c", "d"]) == 0
    assert groups_in_several_parts(split, [None] * 5) is None
