"""Few-shot logistic-regression probes, as MTEB's (audio) classification tasks evaluate them.

A logistic regression (scikit-learn ``LogisticRegression(max_iter=100)``, lbfgs, L2, C = 1)
is trained on a small, label-balanced sample of the training embeddings and scored on the
evaluation embeddings. The sampling reproduces MTEB's exactly, so the same embeddings give
the same numbers:

**Undersampling** (:func:`undersample_per_label`). Walk the training samples in a shuffled
order and keep a sample while its label has fewer than ``samples_per_label`` (8) kept
samples. The order is a NumPy ``RandomState(seed)`` shuffle, and it accumulates: experiment e
shuffles the order left by experiment e − 1 with a *fresh* ``RandomState(seed)`` (so the
permutation is applied e + 1 times), as MTEB does. The kept samples enter the classifier in
that order.

**Cross-validation** (:func:`logreg_cross_validation_scores`, the tasks whose only split is
both train and test). scikit-learn ``KFold(n_splits=5, shuffle=True, random_state=seed)``
over all samples; fold f trains on the undersampled training part of fold f and predicts its
whole held-out part. One experiment per fold (MTEB's ``n_experiments`` plays no part here).
The undersampling order starts as the positions 0 … m−1 of fold 0's training part and is
carried over to the later folds by position.

**Train / test** (:func:`logreg_train_test_scores`). ``n_experiments`` (10) undersamplings of
the training split, each scored on the whole test split.

Each experiment is scored with :func:`~.prediction_report.single_label_report`
of the hard predictions (``accuracy``, macro / weighted ``f1``, ``precision``, ``recall``; for
two classes ``ap`` of the 0/1 predictions); the report is the mean over experiments of each
key (``ap`` over the experiments that define it, NaN if none), plus the per-experiment
reports. The main score is ``accuracy``.

**Multi-label** (:func:`logreg_multilabel_scores`, MTEB's multi-label task). One logistic
regression per label (label columns in sorted order of the labels that occur in the *test*
labels; training labels outside them are ignored). Each of ``n_experiments`` samplings
shuffles 0 … n_train−1 afresh with one NumPy ``default_rng(seed)`` generator that runs on
across the experiments, and keeps a sample while *any* of its labels has fewer than
``samples_per_label`` kept samples (a kept sample counts for all its labels; a sample without
labels is never kept). Scored with
:func:`~.prediction_report.multilabel_report` (subset ``accuracy``,
``lrap`` of the predicted probabilities, macro ``f1``, ``hamming``) and averaged over the
experiments. The main score is ``lrap``.

The classifier may stop before converging within ``max_iter`` iterations (it often does on
raw embeddings); that is part of the protocol, so the warning is silenced.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from audiobench.evaluators.mteb_protocol.prediction_report import (
    multilabel_report,
    single_label_report,
)
from audiobench.metrics.validation import validate_embeddings

__all__ = [
    "logreg_cross_validation_scores",
    "logreg_multilabel_scores",
    "logreg_train_test_scores",
    "undersample_per_label",
]


def _positive_int(value: object, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"{name} must be an integer ≥ {minimum}, got {value!r}")
    return int(value)


def _single_labels(labels: object, n: int, name: str) -> np.ndarray:
    if isinstance(labels, str | bytes):
        raise ValueError(f"{name} must be a sequence with one label per sample, not a string")
    values = labels.tolist() if isinstance(labels, np.ndarray) else list(labels)  # type: ignore[call-overload]
    if len(values) != n:
        raise ValueError(f"{name} has {len(values)} labels for {n} samples")
    if any(value is None or (isinstance(value, float) and value != value) for value in values):
        raise ValueError(f"{name} has missing labels (None or NaN); every sample needs one")
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must hold one scalar label per sample")
    return array


def undersample_per_label(
    labels: Sequence[Hashable] | np.ndarray,
    order: Sequence[int] | np.ndarray,
    samples_per_label: int,
) -> list[int]:
    """The positions in ``order`` (in that order) kept so that each label has at most
    ``samples_per_label`` of them: a position is kept while its label has fewer kept ones."""
    values = labels.tolist() if isinstance(labels, np.ndarray) else list(labels)
    counts: Counter[Hashable] = Counter()
    kept: list[int] = []
    for position in order.tolist() if isinstance(order, np.ndarray) else order:
        label = values[position]
        if counts[label] < samples_per_label:
            kept.append(int(position))
            counts[label] += 1
    return kept


def _fit_predict(
    X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, seed: int, max_iter: int
) -> np.ndarray:
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    if np.unique(y_train).shape[0] < 2:
        raise ValueError(
            "the undersampled training set has a single label; logistic regression needs two"
        )
    model = LogisticRegression(max_iter=max_iter, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=ConvergenceWarning)
        model.fit(X_train, y_train)
    return np.asarray(model.predict(X_test))


def _average(reports: list[dict[str, float | None]]) -> dict[str, object]:
    averaged: dict[str, object] = {}
    for key in reports[0]:
        values = [value for report in reports if (value := report[key]) is not None]
        averaged[key] = float(np.mean(values)) if values else float("nan")
    averaged["scores_per_experiment"] = reports
    return averaged


def logreg_cross_validation_scores(
    embeddings: object,
    labels: Sequence[Hashable] | np.ndarray,
    *,
    n_splits: int = 5,
    samples_per_label: int = 8,
    seed: int = 42,
    max_iter: int = 100,
) -> dict[str, object]:
    """K-fold few-shot logistic regression on one split (see the module docstring).

    Parameters
    ----------
    embeddings:
        ``[n, dim]`` finite array, one row per sample.
    labels:
        One label per sample (any hashable of one type; no missing labels).
    n_splits, samples_per_label, seed, max_iter:
        The protocol's settings; the defaults are MTEB's.

    Returns
    -------
    dict
        Mean over folds of ``accuracy``, ``f1``, ``f1_weighted``, ``precision``,
        ``precision_weighted``, ``recall``, ``recall_weighted``, ``ap``, ``ap_weighted``, and
        ``scores_per_experiment`` (one report per fold). Main score: ``accuracy``.
    """
    from sklearn.model_selection import KFold

    X, _ = validate_embeddings(embeddings)
    y = _single_labels(labels, X.shape[0], "labels")
    n_splits = _positive_int(n_splits, "n_splits", 2)
    samples_per_label = _positive_int(samples_per_label, "samples_per_label")
    max_iter = _positive_int(max_iter, "max_iter")
    if n_splits > X.shape[0]:
        raise ValueError(f"n_splits = {n_splits} exceeds the number of samples ({X.shape[0]})")
    folds = KFold(n_splits=n_splits, shuffle=True, random_state=seed)
    order: np.ndarray | None = None
    reports: list[dict[str, float | None]] = []
    for train, test in folds.split(np.arange(X.shape[0])):
        if order is None:
            order = np.arange(train.shape[0])
        np.random.RandomState(seed).shuffle(order)
        # KFold puts the larger held-out folds first, so later training parts are never
        # shorter than fold 0's and every carried-over position is valid.
        kept = undersample_per_label(y[train], order, samples_per_label)
        chosen = train[kept]
        predicted = _fit_predict(X[chosen], y[chosen], X[test], seed, max_iter)
        reports.append(single_label_report(y[test], predicted))
    return _average(reports)


def logreg_train_test_scores(
    train_embeddings: object,
    train_labels: Sequence[Hashable] | np.ndarray,
    test_embeddings: object,
    test_labels: Sequence[Hashable] | np.ndarray,
    *,
    samples_per_label: int = 8,
    n_experiments: int = 10,
    seed: int = 42,
    max_iter: int = 100,
) -> dict[str, object]:
    """Few-shot logistic regression trained on undersamplings of a training split and scored
    on the whole test split, ``n_experiments`` times (see the module docstring).

    Returns the same report as :func:`logreg_cross_validation_scores`, averaged over the
    experiments. Main score: ``accuracy``.
    """
    X_train, _ = validate_embeddings(train_embeddings)
    X_test, _ = validate_embeddings(test_embeddings)
    if X_train.shape[1] != X_test.shape[1]:
        raise ValueError(
            f"train and test embeddings differ in dimension: {X_train.shape[1]} vs "
            f"{X_test.shape[1]}"
        )
    y_train = _single_labels(train_labels, X_train.shape[0], "train_labels")
    y_test = _single_labels(test_labels, X_test.shape[0], "test_labels")
    samples_per_label = _positive_int(samples_per_label, "samples_per_label")
    n_experiments = _positive_int(n_experiments, "n_experiments")
    max_iter = _positive_int(max_iter, "max_iter")
    order = np.arange(X_train.shape[0])
    reports: list[dict[str, float | None]] = []
    for _ in range(n_experiments):
        np.random.RandomState(seed).shuffle(order)
        kept = undersample_per_label(y_train, order, samples_per_label)
        predicted = _fit_predict(X_train[kept], y_train[kept], X_test, seed, max_iter)
        reports.append(single_label_report(y_test, predicted))
    return _average(reports)


def _label_sets(labels: object, n: int, name: str) -> list[list[Hashable]]:
    if isinstance(labels, str | bytes):
        raise ValueError(f"{name} must be a sequence with one label list per sample")
    rows = list(labels)  # type: ignore[call-overload]
    if len(rows) != n:
        raise ValueError(f"{name} has {len(rows)} label lists for {n} samples")
    out: list[list[Hashable]] = []
    for i, row in enumerate(rows):
        if isinstance(row, str | bytes) or not hasattr(row, "__iter__"):
            raise ValueError(f"{name}[{i}] must be a list of labels, got {type(row).__name__}")
        out.append(list(row.tolist() if isinstance(row, np.ndarray) else row))
    return out


def logreg_multilabel_scores(
    train_embeddings: object,
    train_labels: Sequence[Sequence[Hashable]],
    test_embeddings: object,
    test_labels: Sequence[Sequence[Hashable]],
    *,
    samples_per_label: int = 8,
    n_experiments: int = 10,
    seed: int = 42,
    max_iter: int = 100,
) -> dict[str, object]:
    """Few-shot one-vs-rest logistic regression for multi-label data (see the module docstring).

    Parameters
    ----------
    train_labels, test_labels:
        One list of labels per sample.

    Returns
    -------
    dict
        Mean over experiments of ``accuracy``, ``lrap``, ``f1``, ``hamming``, and
        ``scores_per_experiment``. Main score: ``lrap``.

    Raises
    ------
    ValueError
        For malformed inputs, or when a sampled training set has a label column that is all
        positive or all negative (e.g. a test label that never occurs in training): a
        logistic regression cannot be fitted to it.
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    X_train, _ = validate_embeddings(train_embeddings)
    X_test, _ = validate_embeddings(test_embeddings)
    if X_train.shape[1] != X_test.shape[1]:
        raise ValueError(
            f"train and test embeddings differ in dimension: {X_train.shape[1]} vs "
            f"{X_test.shape[1]}"
        )
    train_sets = _label_sets(train_labels, X_train.shape[0], "train_labels")
    test_sets = _label_sets(test_labels, X_test.shape[0], "test_labels")
    samples_per_label = _positive_int(samples_per_label, "samples_per_label")
    n_experiments = _positive_int(n_experiments, "n_experiments")
    max_iter = _positive_int(max_iter, "max_iter")
    labels: set[Any] = {label for row in test_sets for label in row}  # str or int
    classes = sorted(labels)
    if not classes:
        raise ValueError("test_labels hold no label at all")
    column = {label: j for j, label in enumerate(classes)}

    def indicator(rows: list[list[Hashable]]) -> np.ndarray:
        matrix = np.zeros((len(rows), len(classes)), dtype=np.int64)
        for i, row in enumerate(rows):
            for label in row:
                if label in column:
                    matrix[i, column[label]] = 1
        return matrix

    y_test = indicator(test_sets)
    rng = np.random.default_rng(seed)
    reports: list[dict[str, float]] = []
    for _ in range(n_experiments):
        order = np.arange(X_train.shape[0])
        rng.shuffle(order)
        counts: Counter[Hashable] = Counter()
        kept: list[int] = []
        for i in order.tolist():
            if any(counts[label] < samples_per_label for label in train_sets[i]):
                kept.append(i)
                counts.update(train_sets[i])
        y_train = indicator([train_sets[i] for i in kept])
        constant = [classes[j] for j in range(len(classes)) if np.unique(y_train[:, j]).size < 2]
        if constant:
            raise ValueError(
                f"label(s) {constant[:5]!r} are all positive or all negative in a sampled "
                "training set; a logistic regression cannot be fitted to them"
            )
        predicted = np.empty((X_test.shape[0], len(classes)), dtype=np.int64)
        probability = np.empty((X_test.shape[0], len(classes)), dtype=np.float64)
        for j in range(len(classes)):
            model = LogisticRegression(max_iter=max_iter)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", category=ConvergenceWarning)
                model.fit(X_train[kept], y_train[:, j])
            predicted[:, j] = model.predict(X_test)
            probability[:, j] = model.predict_proba(X_test)[:, 1]
        reports.append(multilabel_report(y_test, predicted, probability))
    averaged: dict[str, object] = {
        key: float(np.mean([report[key] for report in reports])) for key in reports[0]
    }
    averaged["scores_per_experiment"] = reports
    return averaged
