"""The :class:`Probe` interface shared by every probe, and hyper-parameter selection helpers.

A probe is a small supervised model trained on frozen embeddings. The surface follows
scikit-learn: ``fit`` returns the probe, ``predict_scores`` gives one column per class in the
order of ``classes_``, ``predict`` the decision. Two input levels:

- ``"vector"`` probes take one embedding per clip, ``X`` of shape ``[n, D]``;
- ``"token"`` probes take the unpooled frame sequence of each clip, a list of ``[T_i, D]``
  arrays (lengths may differ; padding and masking are internal).

``config()`` returns everything needed to reproduce the probe, as plain JSON types: its fixed
hyper-parameters, the (fixed) grid searched, how the value was chosen (validation split,
inner cross-validation or fixed) with the score of every grid point, and the chosen values.

Progress: ``fit(..., progress=callback)`` calls ``callback`` with a :class:`FitProgress` after
every unit of work (a grid point on an inner fold, the final fit, a training epoch), from the
thread that called ``fit``; ``str()`` of it is one line of text, so a callback that prints or
logs it gives a line per fit whether output goes to a terminal or a file.
"""

from __future__ import annotations

import math
import time
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Self

import numpy as np
from sklearn.metrics import accuracy_score, average_precision_score
from sklearn.model_selection import KFold, StratifiedKFold

from audiobench.probes.data import (
    as_sequences,
    as_vectors,
    encode_eval_labels,
    encode_train_labels,
    sequence_dim,
)
from audiobench.probes.splits import group_codes, group_folds

__all__ = [
    "FitProgress",
    "Inputs",
    "Probe",
    "ProbeLevel",
    "ProgressCallback",
    "ProgressCounter",
    "inner_cv_folds",
    "jsonable",
    "select_best",
    "selection_metric",
    "selection_score",
]

ProbeLevel = Literal["vector", "token"]

#: Validated probe inputs: ``[n, D]`` float32 vectors or a list of ``[T_i, D]`` sequences.
Inputs = np.ndarray | list[np.ndarray]


@dataclass(frozen=True)
class FitProgress:
    """One finished step of a probe's ``fit``: the ``done``-th of ``total``.

    ``step`` says what ran (``"C=0.01, inner fold 2/5"``, ``"final fit, C=0.1"``,
    ``"epoch 3/50"``); ``score`` is that step's selection score (``metric``) or training loss,
    when there is one; ``seconds`` the time since ``fit`` began.
    """

    probe: str
    done: int
    total: int
    step: str
    score: float | None
    metric: str | None
    seconds: float

    def __str__(self) -> str:
        text = f"{self.probe} {self.done}/{self.total}: {self.step}"
        if self.score is not None and self.metric is not None:
            text += f", {self.metric} {self.score:.4f}"
        return f"{text} ({self.seconds:.1f} s)"


#: What ``fit(..., progress=...)`` takes.
ProgressCallback = Callable[[FitProgress], None]


class ProgressCounter:
    """Numbers the steps of one ``fit`` call and hands each to its progress callback."""

    def __init__(
        self, probe: str, total: int, callback: ProgressCallback | None, metric: str | None
    ) -> None:
        self.probe = probe
        self.total = total
        self.callback = callback
        self.metric = metric
        self.done = 0
        self.start = time.perf_counter()

    def __call__(self, step: str, *, score: float | None = None, metric: str | None = None) -> None:
        self.done += 1
        if self.callback is None:
            return
        value = None if score is None or math.isnan(score) else float(score)
        self.callback(
            FitProgress(
                probe=self.probe,
                done=self.done,
                total=self.total,
                step=step,
                score=value,
                metric=metric or self.metric,
                seconds=time.perf_counter() - self.start,
            )
        )


def jsonable(value: Any) -> Any:
    """Convert numpy scalars/arrays and tuples, recursively, to plain JSON types."""
    if isinstance(value, Mapping):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, np.ndarray):
        return [jsonable(item) for item in value.tolist()]
    if isinstance(value, list | tuple):
        return [jsonable(item) for item in value]
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def subset(inputs: Inputs, indices: np.ndarray) -> Inputs:
    """Rows ``indices`` of validated inputs (vectors or sequences)."""
    if isinstance(inputs, np.ndarray):
        return np.asarray(inputs[indices])
    return [inputs[int(i)] for i in indices]


class Probe(ABC):
    """A classifier trained on frozen embeddings.

    Parameters
    ----------
    multilabel:
        ``False``: ``y`` holds one label per clip. ``True``: ``y`` is a binary indicator
        matrix ``[n, C]``; scores are independent per-class probabilities and ``predict``
        returns the indicator matrix of scores ``>= 0.5``.
    seed:
        Seeds every random choice (inner folds, initialisation, shuffling, dropout), so
        the same inputs and seed give identical scores.
    """

    #: Registry name (``make_probe``).
    name: ClassVar[str]
    #: ``"vector"`` (one embedding per clip) or ``"token"`` (a frame sequence per clip).
    level: ClassVar[ProbeLevel]
    #: Multi-label decision threshold on ``predict_scores``.
    threshold: ClassVar[float] = 0.5
    #: The constructor takes ``device`` (a torch device for the heavy arithmetic).
    accepts_device: ClassVar[bool] = False

    def __init__(self, *, multilabel: bool = False, seed: int = 0) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
            raise ValueError(f"seed must be an integer, got {seed!r}")
        self.multilabel: bool = bool(multilabel)
        self.seed: int = int(seed)
        self._classes: np.ndarray | None = None
        self._n_features: int | None = None
        self._sizes: dict[str, int] = {}
        self._progress: ProgressCallback | None = None
        #: During ``fit``: the training clips' group codes, or None (see ``fit``).
        self.fit_groups: np.ndarray | None = None

    # ------------------------------------------------------------------ public surface

    @property
    def classes_(self) -> np.ndarray:
        """Training classes, in the order of the columns of ``predict_scores``."""
        if self._classes is None:
            raise RuntimeError(f"{type(self).__name__} is not fitted yet: call fit() first")
        return self._classes

    @property
    def n_features_in_(self) -> int:
        """Feature size D seen in ``fit``."""
        self.classes_  # noqa: B018 - raises when not fitted
        assert self._n_features is not None
        return self._n_features

    def fit(
        self,
        X: object,
        y: object,
        *,
        X_val: object | None = None,
        y_val: object | None = None,
        groups: Sequence[Hashable] | np.ndarray | None = None,
        progress: ProgressCallback | None = None,
    ) -> Self:
        """Train on ``(X, y)``; ``(X_val, y_val)``, when given, chooses hyper-parameters.

        ``groups``, one per training clip (speaker, individual): every split made inside the
        fit to choose hyper-parameters (inner cross-validation folds, a held-out part of the
        training clips) keeps each group on one side, as the evaluation's own grouped splits
        do; otherwise a probe tuned on clips of the same speakers it is scored on would prefer
        what recognises those speakers. ``None``: clips are split one by one.

        ``progress``, when given, is called with a :class:`FitProgress` after every step
        (see the module docstring).

        Raises
        ------
        ValueError
            Mismatched lengths or feature sizes, malformed labels, empty sequences, only one
            of ``X_val``/``y_val``.
        InvalidEmbeddingsError
            NaN or infinite inputs (names the rows).
        InsufficientClassesError
            Fewer than two training classes.
        MissingClassError
            A validation class absent from the training labels.
        """
        inputs = self._validate(X, "X")
        classes, targets = encode_train_labels(y, len(inputs), multilabel=self.multilabel, what="y")
        validation: tuple[Inputs, np.ndarray] | None = None
        if (X_val is None) != (y_val is None):
            raise ValueError("pass both X_val and y_val, or neither")
        if X_val is not None:
            val_inputs = self._validate(X_val, "X_val")
            if sequence_dim(val_inputs) != sequence_dim(inputs):
                raise ValueError(
                    f"X_val has {sequence_dim(val_inputs)} features, X has {sequence_dim(inputs)}"
                )
            val_targets = encode_eval_labels(
                y_val,
                len(val_inputs),
                classes,
                multilabel=self.multilabel,
                split="validation",
                what="y_val",
            )
            validation = (val_inputs, val_targets)
        self._classes = None
        self._progress = progress
        self.fit_groups = None if groups is None else group_codes(groups, len(inputs), "X")
        try:
            self._fit(inputs, targets, len(classes), validation)
        finally:
            self._progress = None
            self.fit_groups = None
        self._classes = classes
        self._n_features = sequence_dim(inputs)
        self._sizes = {
            "n_train": len(inputs),
            "n_validation": 0 if validation is None else len(validation[0]),
        }
        return self

    def predict_scores(self, X: object) -> np.ndarray:
        """Scores ``[n, C]`` (probabilities or vote fractions), columns in ``classes_`` order."""
        return self._predict_scores(self._check_predict_inputs(X))

    def predict(self, X: object) -> np.ndarray:
        """Predicted labels ``[n]`` (multi-class) or indicator matrix ``[n, C]`` (multi-label)."""
        inputs = self._check_predict_inputs(X)
        if self.multilabel:
            return (self._predict_scores(inputs) >= self.threshold).astype(np.int64)
        return np.asarray(self.classes_[self._predict_codes(inputs)])

    def score(self, X: object, y: object, *, split: str = "test") -> float:
        """Accuracy (multi-class) or subset accuracy (multi-label) on ``(X, y)``.

        Raises :class:`MissingClassError` naming ``split`` when ``y`` holds a class absent
        from training.
        """
        inputs = self._check_predict_inputs(X)
        targets = encode_eval_labels(
            y, len(inputs), self.classes_, multilabel=self.multilabel, split=split
        )
        if self.multilabel:
            predicted = self._predict_scores(inputs) >= self.threshold
            return float(accuracy_score(targets.astype(bool), predicted))  # subset accuracy
        return float(accuracy_score(targets, self._predict_codes(inputs)))

    def config(self) -> dict[str, Any]:
        """Hyper-parameters, grid, selection and chosen values, as plain JSON types."""
        fitted = self._classes is not None
        record: dict[str, Any] = {
            "probe": self.name,
            "level": self.level,
            "multilabel": self.multilabel,
            "seed": self.seed,
            **self._config(),
        }
        if fitted:
            record["n_classes"] = len(self.classes_)
            record["n_features"] = self._n_features
            record.update(self._sizes)
        json_record: dict[str, Any] = jsonable(record)
        return json_record

    # ------------------------------------------------------------------ subclass hooks

    @abstractmethod
    def _fit(
        self,
        inputs: Inputs,
        targets: np.ndarray,
        n_classes: int,
        validation: tuple[Inputs, np.ndarray] | None,
    ) -> None:
        """Train on validated inputs and encoded targets (codes or indicator matrix)."""

    @abstractmethod
    def _predict_scores(self, inputs: Inputs) -> np.ndarray:
        """Scores ``[n, C]`` for validated inputs."""

    def _predict_codes(self, inputs: Inputs) -> np.ndarray:
        """Multi-class decision as class codes; ties go to the lower code."""
        return np.asarray(np.argmax(self._predict_scores(inputs), axis=1))

    @abstractmethod
    def _config(self) -> dict[str, Any]:
        """``params``, ``grid``, ``selection`` and ``chosen`` (the last two ``None`` unfitted)."""

    # ------------------------------------------------------------------ helpers

    def _progress_counter(self, total: int) -> ProgressCounter:
        """A counter of ``total`` steps reporting to this ``fit`` call's callback."""
        return ProgressCounter(self.name, total, self._progress, selection_metric(self.multilabel))

    def _validate(self, X: object, what: str) -> Inputs:
        if self.level == "vector":
            return as_vectors(X, what=what)
        return as_sequences(X, what=what)

    def _check_predict_inputs(self, X: object) -> Inputs:
        n_features = self.n_features_in_
        inputs = self._validate(X, "X")
        if sequence_dim(inputs) != n_features:
            raise ValueError(
                f"X has {sequence_dim(inputs)} features, the probe was fitted on {n_features}"
            )
        return inputs


# ---------------------------------------------------------------------- hyper-parameter choice


def selection_metric(multilabel: bool) -> str:
    """Name of the score maximised when choosing hyper-parameters."""
    return "micro_average_precision" if multilabel else "accuracy"


def selection_score(
    targets: np.ndarray, scores: np.ndarray, predicted_codes: np.ndarray | None = None
) -> float:
    """Accuracy of ``predicted_codes`` (multi-class: ``targets`` 1-D), or micro-averaged
    average precision of ``scores`` (multi-label: ``targets`` an indicator matrix).

    Micro-AP ranks every (clip, class) pair together: it uses the scores rather than a
    threshold, and stays defined when a class has no positive in a small validation fold.
    NaN when the fold has no positive at all.
    """
    if targets.ndim == 1:
        codes = np.argmax(scores, axis=1) if predicted_codes is None else predicted_codes
        return float(accuracy_score(targets, codes))
    if not targets.any():
        return math.nan
    return float(average_precision_score(targets, scores, average="micro"))


def inner_cv_folds(
    targets: np.ndarray,
    *,
    n_splits: int,
    seed: int,
    groups: np.ndarray | None = None,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Seeded inner cross-validation folds over the training set.

    Multi-class: stratified K-fold, with K lowered to the smallest class size (at least 2)
    so every class can appear on both sides. Multi-label: shuffled K-fold.

    With ``groups`` (one code per clip, :func:`group_codes`): group K-fold, no group on both
    sides of any fold, stratified by class as far as the groups allow (multi-label: by group
    only), with K lowered to the number of groups; ``ValueError`` with fewer than 2 groups.
    """
    n = int(targets.shape[0])
    if n < 2:
        raise ValueError("inner cross-validation needs at least 2 training clips")
    if groups is not None:
        n_groups = int(np.unique(groups).size)
        if n_groups < 2:
            raise ValueError(
                "choosing hyper-parameters without a validation split needs training clips "
                f"from at least 2 groups (inner folds keep each group on one side), got "
                f"{n_groups}; give the data a validation split, or fix the value "
                "(probe_params, e.g. {'linear': {'C': 1.0}}, {'knn': {'k': 5}})"
            )
        return group_folds(targets, groups, min(n_splits, n_groups), seed, targets.ndim == 2)
    if targets.ndim == 1:
        smallest = int(np.bincount(targets).min(initial=n))
        k = max(2, min(n_splits, smallest))
        splitter: KFold | StratifiedKFold = StratifiedKFold(
            n_splits=k, shuffle=True, random_state=seed
        )
    else:
        k = max(2, min(n_splits, n))
        splitter = KFold(n_splits=k, shuffle=True, random_state=seed)
    with warnings.catch_warnings():
        # StratifiedKFold warns when a class has fewer members than K (allowed: K >= 2).
        warnings.simplefilter("ignore", UserWarning)
        return [
            (train.astype(np.int64), test.astype(np.int64))
            for train, test in splitter.split(np.zeros(n), targets if targets.ndim == 1 else None)
        ]


def select_best(
    values: Sequence[Any], scores: Sequence[float], *, prefer: Literal["first", "last"]
) -> Any:
    """The grid value with the highest score (NaN scores lose); ties go to the ``prefer`` end.

    Grids list values from most to least regularised or the reverse, so ``prefer`` states
    which side wins a tie (documented by each probe).
    """
    order = range(len(values)) if prefer == "first" else range(len(values) - 1, -1, -1)
    best_index: int | None = None
    best_score = -math.inf
    for index in order:
        score = scores[index]
        if not math.isnan(score) and score > best_score:
            best_index, best_score = index, score
    if best_index is None:
        return values[0 if prefer == "first" else -1]
    return values[best_index]
