"""Train / validation / test index splits for probes, and the checks they must pass.

Three ways a classification dataset defines its evaluation:

- explicit split labels per clip (``train`` / ``validation`` / ``test``): :func:`split_from_labels`;
- predefined cross-validation folds (ESC-50's 5 folds): :func:`fold_splits`, one split per
  fold, leave-one-fold-out;
- grouped splits, when clips of one speaker or individual must not straddle train and test:
  :func:`grouped_split` (one seeded split) and :func:`grouped_folds` (K seeded folds), both
  stratified by class as far as the groups allow.

:func:`check_split` verifies a split: indices in range and disjoint, every class of the
validation and test parts present in training (:class:`MissingClassError` names the class and
the split), no group on two sides (:class:`GroupLeakError` names the group). The builders run
it whenever they are given labels or groups, so a split that reaches a probe is sound.
:func:`groups_in_several_parts` counts the groups a split given by the data shares between
its parts (allowed there, and worth knowing).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Collection, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.model_selection import GroupKFold, StratifiedGroupKFold

from audiobench.errors import DataError
from audiobench.metrics.naming import describe_clips
from audiobench.probes.errors import GroupLeakError, MissingClassError

__all__ = [
    "Split",
    "check_split",
    "fold_splits",
    "group_codes",
    "group_folds",
    "grouped_folds",
    "grouped_split",
    "groups_in_several_parts",
    "split_from_labels",
    "with_validation_folds",
]


def _indices(values: object, what: str) -> np.ndarray:
    array = np.asarray(values)
    if array.size == 0:
        return np.zeros(0, dtype=np.int64)
    if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(
            f"{what} indices must be a 1-D integer array, got {array.dtype} {array.shape}"
        )
    return array.astype(np.int64)


@dataclass(frozen=True)
class Split:
    """Index sets of one evaluation split (positions in the task's clip list).

    Attributes
    ----------
    name:
        Identifies the split in errors and results (``"test"``, ``"fold-3"``, ...).
    train, test:
        Sorted ``int64`` positions.
    validation:
        Sorted ``int64`` positions, or ``None`` (probes then choose by inner CV).
    """

    name: str
    train: np.ndarray
    test: np.ndarray
    validation: np.ndarray | None = field(default=None)

    def __post_init__(self) -> None:
        object.__setattr__(self, "train", np.sort(_indices(self.train, "train")))
        object.__setattr__(self, "test", np.sort(_indices(self.test, "test")))
        if self.validation is not None:
            object.__setattr__(self, "validation", np.sort(_indices(self.validation, "validation")))

    def parts(self) -> dict[str, np.ndarray]:
        """``{"train": ..., "validation": ..., "test": ...}`` (validation only when present)."""
        parts = {"train": self.train}
        if self.validation is not None:
            parts["validation"] = self.validation
        parts["test"] = self.test
        return parts

    def to_dict(self) -> dict[str, Any]:
        """Name and sizes, for result files."""
        return {
            "name": self.name,
            "n_train": int(self.train.size),
            "n_validation": 0 if self.validation is None else int(self.validation.size),
            "n_test": int(self.test.size),
        }


# ---------------------------------------------------------------------- checks


def _class_sets(
    labels: object, multilabel: bool, class_names: Sequence[Hashable] | None
) -> tuple[int, list[set[Hashable]]]:
    """Number of clips and, per clip, the set of its classes."""
    if multilabel:
        matrix = np.asarray(labels)
        if matrix.ndim != 2:
            raise ValueError(
                f"multi-label labels must be a [clips, classes] matrix, got {matrix.shape}"
            )
        names = list(range(matrix.shape[1])) if class_names is None else list(class_names)
        if len(names) != matrix.shape[1]:
            raise ValueError(f"got {len(names)} class names for {matrix.shape[1]} label columns")
        return matrix.shape[0], [{names[j] for j in np.flatnonzero(row)} for row in matrix]
    values = labels.tolist() if isinstance(labels, np.ndarray) else list(labels)  # type: ignore[call-overload]
    return len(values), [{value} for value in values]


def _as_list(values: object, what: str) -> list[Hashable]:
    items: list[Hashable] = (
        values.tolist() if isinstance(values, np.ndarray) else list(values)  # type: ignore[call-overload]
    )
    missing = [
        i for i, v in enumerate(items) if v is None or (isinstance(v, float) and math.isnan(v))
    ]
    if missing:
        raise ValueError(f"{what} is missing (None or NaN) for clips {describe_clips(missing)}")
    return items


def check_split(
    split: Split,
    labels: object | None = None,
    groups: Sequence[Hashable] | np.ndarray | None = None,
    *,
    multilabel: bool = False,
    class_names: Sequence[Hashable] | None = None,
) -> None:
    """Check that ``split`` is usable for training and evaluating a probe.

    Parameters
    ----------
    split:
        The split to check.
    labels:
        One label per clip, or (``multilabel=True``) a binary indicator matrix; when given,
        every class of the validation and test parts must occur in the training part.
    groups:
        One group per clip (speaker, individual); when given, no group may occur in two parts.
    class_names:
        Multi-label only: a name per label column, used in messages.

    Raises
    ------
    ValueError
        Empty training or test part, indices out of range or in two parts.
    MissingClassError
        A validation or test class absent from training (names the class and the split).
    GroupLeakError
        A group in two parts (names the group and the split).
    """
    parts = split.parts()
    if split.train.size == 0 or split.test.size == 0:
        raise ValueError(f"split {split.name!r} has an empty train or test part")
    seen: dict[int, str] = {}
    for part, indices in parts.items():
        if indices.size and indices.min() < 0:
            raise ValueError(f"split {split.name!r}: negative index in its {part} part")
        repeated = np.flatnonzero(np.diff(indices) == 0)
        if repeated.size:
            raise ValueError(
                f"split {split.name!r}: clip {int(indices[repeated[0]])} listed twice in its "
                f"{part} part"
            )
        for index in indices.tolist():
            if index in seen:
                raise ValueError(
                    f"split {split.name!r}: clip {index} is in both its {seen[index]} and "
                    f"{part} parts"
                )
            seen[index] = part
    largest = max(seen)
    if labels is not None:
        n, class_sets = _class_sets(labels, multilabel, class_names)
        if largest >= n:
            raise ValueError(f"split {split.name!r} refers to clip {largest}; there are {n} labels")
        trained: set[Hashable] = set().union(*(class_sets[i] for i in split.train.tolist()))
        for part in ("validation", "test"):
            if part not in parts:
                continue
            present: set[Hashable] = set().union(*(class_sets[i] for i in parts[part].tolist()))
            missing = sorted(present - trained, key=str)
            if missing:
                noun = "class" if len(missing) == 1 else "classes"
                raise MissingClassError(
                    f"{noun} {describe_clips(missing)} in the {part} part of split {split.name!r} "
                    f"never appear in its training part",
                    missing,
                    split.name,
                )
    if groups is not None:
        group_list = _as_list(groups, "group")
        if largest >= len(group_list):
            raise ValueError(
                f"split {split.name!r} refers to clip {largest}; there are {len(group_list)} groups"
            )
        owner: dict[Hashable, str] = {}
        leaks: list[Hashable] = []
        pair = ""
        for part, indices in parts.items():
            part_groups = {group_list[i] for i in indices.tolist()}
            for group in sorted(part_groups, key=str):
                if group in owner and owner[group] != part:
                    if not leaks:
                        pair = f"{owner[group]} and {part}"
                    leaks.append(group)
                else:
                    owner[group] = part
        if leaks:
            noun = "group" if len(leaks) == 1 else "groups"
            verb = "appears" if len(leaks) == 1 else "appear"
            raise GroupLeakError(
                f"{noun} {describe_clips(leaks)} of split {split.name!r} {verb} in more than one "
                f"part (first in its {pair} parts)",
                leaks,
                split.name,
            )


# ---------------------------------------------------------------------- builders


def split_from_labels(
    split_labels: Sequence[str] | np.ndarray,
    *,
    train: str = "train",
    test: str = "test",
    validation: str | None = "validation",
    ignore: Collection[str] = (),
    labels: object | None = None,
    groups: Sequence[Hashable] | np.ndarray | None = None,
    multilabel: bool = False,
    name: str | None = None,
) -> Split:
    """One split from a per-clip split column.

    Clips labelled ``train``, ``validation`` and ``test`` go to those parts; values listed in
    ``ignore`` are left out on purpose; any other value is an error (nothing is dropped
    silently). ``validation`` is ``None`` when no clip carries it. With ``labels`` or
    ``groups`` the split is checked (:func:`check_split`).
    """
    values = _as_list(split_labels, "split")
    known = {train, test} | ({validation} if validation is not None else set())
    unknown = sorted({str(v) for v in values} - known - set(ignore))
    if unknown:
        raise ValueError(
            f"unexpected split values {describe_clips(unknown)}; expected {sorted(known)} "
            f"(pass ignore=... to leave clips out on purpose)"
        )
    array = np.asarray([str(v) for v in values])
    val_idx = np.flatnonzero(array == validation) if validation is not None else np.zeros(0)
    result = Split(
        name=name or test,
        train=np.flatnonzero(array == train),
        test=np.flatnonzero(array == test),
        validation=val_idx.astype(np.int64) if val_idx.size else None,
    )
    if result.train.size == 0:
        raise ValueError(f"no clip is in the {train!r} split")
    if result.test.size == 0:
        raise ValueError(f"no clip is in the {test!r} split")
    if labels is not None or groups is not None:
        check_split(result, labels, groups, multilabel=multilabel)
    return result


def fold_splits(
    folds: Sequence[Hashable] | np.ndarray,
    *,
    labels: object | None = None,
    groups: Sequence[Hashable] | np.ndarray | None = None,
    multilabel: bool = False,
) -> list[Split]:
    """Leave-one-fold-out splits from a per-clip fold id (ESC-50: folds 1–5).

    One split per fold, in sorted fold order, named ``"fold-<id>"``: that fold is the test
    part, all others the training part (no validation part: probes use inner CV). With
    ``labels`` or ``groups`` every split is checked.
    """
    values = _as_list(folds, "fold")
    distinct = sorted(set(values), key=lambda v: (str(type(v)), v))
    if len(distinct) < 2:
        raise ValueError(f"need at least 2 folds, got {len(distinct)}: {describe_clips(distinct)}")
    position = {fold: i for i, fold in enumerate(distinct)}
    codes = np.asarray([position[v] for v in values])
    splits = [
        Split(
            name=f"fold-{fold}",
            train=np.flatnonzero(codes != i),
            test=np.flatnonzero(codes == i),
        )
        for i, fold in enumerate(distinct)
    ]
    if labels is not None or groups is not None:
        for split in splits:
            check_split(split, labels, groups, multilabel=multilabel)
    return splits


def with_validation_folds(splits: Sequence[Split]) -> list[Split]:
    """Leave-one-fold-out ``splits`` (:func:`fold_splits`) with a validation fold designated a
    priori: for the split testing fold ``i``, the next fold in order (cyclically) validates
    and the remaining folds train. Names and test parts stay; the splits need 3 folds or more.

    The probing paper's selection for cross-validated datasets: hyper-parameters chosen on one
    designated fold rather than on a random part of the training folds.
    """
    if len(splits) < 3:
        raise ValueError(
            f"a validation fold beside the test fold needs at least 3 folds, got {len(splits)}"
        )
    designated = []
    for i, split in enumerate(splits):
        validation = splits[(i + 1) % len(splits)].test
        train = np.setdiff1d(split.train, validation, assume_unique=True)
        designated.append(
            Split(name=split.name, train=train, test=split.test, validation=validation)
        )
    return designated


def groups_in_several_parts(split: Split, groups: Sequence[Hashable | None]) -> int | None:
    """How many groups have clips in more than one part of ``split`` (``groups``: one per
    clip, None for a clip without one); None when no clip has a group."""
    parts_of: dict[Hashable, set[str]] = {}
    for part, indices in split.parts().items():
        for i in indices.tolist():
            if groups[i] is not None:
                parts_of.setdefault(groups[i], set()).add(part)
    return sum(len(parts) > 1 for parts in parts_of.values()) if parts_of else None


def group_folds(
    labels: object,
    codes: np.ndarray,
    n_splits: int,
    seed: int,
    multilabel: bool,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Seeded group K-fold ``(train, test)`` positions, stratified by class for multi-class
    labels as far as the groups allow (multi-label: by group only). The one group K-fold of the
    package: outer splits (:func:`grouped_folds`, :func:`grouped_split`) and the probes' inner
    selection (:func:`audiobench.probes.base.inner_cv_folds`, the neural probes' holdout).
    """
    n_groups = int(np.unique(codes).size)
    if n_groups < n_splits:  # the data's groups (speakers, individuals) are too few
        raise DataError(
            f"a grouped split into {n_splits} folds needs at least {n_splits} groups, "
            f"got {n_groups}"
        )
    X = np.zeros((codes.size, 1))
    if multilabel:
        splitter = GroupKFold(n_splits=n_splits, shuffle=True, random_state=seed)
        folds = splitter.split(X, groups=codes)
    else:
        label_list = _as_list(labels, "label")
        label_codes = np.unique(np.asarray([str(v) for v in label_list]), return_inverse=True)[1]
        stratified = StratifiedGroupKFold(n_splits=n_splits, shuffle=True, random_state=seed)
        with warnings.catch_warnings():
            # A class with fewer groups than folds cannot sit in every fold: allowed.
            warnings.simplefilter("ignore", UserWarning)
            folds = list(stratified.split(X, label_codes, groups=codes))
    return [(train.astype(np.int64), test.astype(np.int64)) for train, test in folds]


def group_codes(groups: Sequence[Hashable] | np.ndarray, n: int, what: str = "clips") -> np.ndarray:
    """One integer code per clip for ``groups`` (in order of first appearance), checked: one
    group per clip of ``what``, none missing."""
    group_list = _as_list(groups, "group")
    if len(group_list) != n:
        raise ValueError(f"got {len(group_list)} groups for {n} {what}")
    position: dict[Hashable, int] = {}
    return np.asarray([position.setdefault(g, len(position)) for g in group_list], dtype=np.int64)


def _n_clips(labels: object, multilabel: bool) -> int:
    return int(np.asarray(labels).shape[0]) if multilabel else len(_as_list(labels, "label"))


def grouped_split(
    labels: object,
    groups: Sequence[Hashable] | np.ndarray,
    *,
    test_size: float = 0.2,
    validation_size: float = 0.0,
    seed: int = 0,
    multilabel: bool = False,
    name: str = "test",
) -> Split:
    """One seeded split in which no group straddles two parts.

    The test part is one fold of a ``round(1 / test_size)``-fold stratified group K-fold;
    with ``validation_size > 0`` the validation part is carved out of the rest the same way
    (so about that fraction of all clips). Stratification by class is as good as the groups
    allow; multi-label data is split by group only. The result is checked
    (:func:`check_split`): a class that ends up only outside training is an error.
    """
    if not 0 < test_size < 1 or not 0 <= validation_size < 1 - test_size:
        raise ValueError(
            f"need 0 < test_size < 1 and 0 <= validation_size < 1 - test_size, "
            f"got {test_size}, {validation_size}"
        )
    n = _n_clips(labels, multilabel)
    codes = group_codes(groups, n)
    train, test = group_folds(labels, codes, max(2, round(1 / test_size)), seed, multilabel)[0]
    validation = None
    if validation_size > 0:
        rest_labels = (
            np.asarray(labels)[train]
            if multilabel
            else [_as_list(labels, "label")[i] for i in train]
        )
        k = max(2, round((1 - test_size) / validation_size))
        inner_train, inner_val = group_folds(rest_labels, codes[train], k, seed + 1, multilabel)[0]
        train, validation = train[inner_train], train[inner_val]
    split = Split(name=name, train=train, test=test, validation=validation)
    check_split(split, labels, groups, multilabel=multilabel)
    return split


def grouped_folds(
    labels: object,
    groups: Sequence[Hashable] | np.ndarray,
    *,
    n_splits: int = 5,
    seed: int = 0,
    multilabel: bool = False,
) -> list[Split]:
    """``n_splits`` seeded group folds (``"group-fold-<i>"``): each test part is one fold.

    Stratified by class as far as the groups allow (multi-label: by group only); every split
    is checked (:func:`check_split`).
    """
    if n_splits < 2:
        raise ValueError(f"n_splits must be at least 2, got {n_splits}")
    n = _n_clips(labels, multilabel)
    codes = group_codes(groups, n)
    splits = [
        Split(name=f"group-fold-{i}", train=train, test=test)
        for i, (train, test) in enumerate(group_folds(labels, codes, n_splits, seed, multilabel))
    ]
    for split in splits:
        check_split(split, labels, groups, multilabel=multilabel)
    return splits
