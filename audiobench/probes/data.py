"""Checks and conversions for probe inputs: clip vectors, frame sequences and labels.

Every check raises an error that names the offending rows (by index) or classes, so a user can
find them in their data: nothing is silently dropped or reordered, and labels never drift out
of line with embeddings.

Labels come in two forms:

- multi-class: one label per clip (any sortable hashable: strings, ints); ``classes_`` is the
  sorted set of training labels and probes work on integer codes ``0 .. C-1`` internally;
- multi-label: a binary indicator matrix ``[n, C]`` (bool or 0/1 numbers); ``classes_`` is
  ``0 .. C-1``, the column indices.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from audiobench.metrics.labels import is_missing_label
from audiobench.metrics.validation import describe_clips, invalid_clips_error
from audiobench.probes.errors import InsufficientClassesError, MissingClassError

__all__ = [
    "as_sequences",
    "as_vectors",
    "encode_eval_labels",
    "encode_train_labels",
    "sequence_dim",
]


def _to_numpy(values: object) -> np.ndarray:
    if isinstance(values, torch.Tensor):
        return values.detach().cpu().numpy()
    return np.asarray(values)


def _check_real(array: np.ndarray, what: str) -> None:
    if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise ValueError(f"{what} must hold real numbers, got dtype {array.dtype}")


def as_vectors(X: object, *, what: str = "X") -> np.ndarray:
    """Return clip embeddings as a C-contiguous float32 array ``[n, D]``.

    Raises
    ------
    ValueError
        If X is not a 2-D real array with at least one row and one column.
    InvalidEmbeddingsError
        If some rows hold NaN or infinite values (names them by row index).
    """
    if isinstance(X, list | tuple) and X and np.ndim(X[0]) == 2:
        raise ValueError(
            f"{what} is a list of frame sequences; this probe takes one vector per clip "
            "(use a token-level probe, or pool the frames first)"
        )
    array = _to_numpy(X)
    if array.ndim != 2:
        raise ValueError(f"{what} must be a 2-D array (clips × features), got shape {array.shape}")
    if array.shape[0] < 1 or array.shape[1] < 1:
        raise ValueError(f"{what} needs at least 1 clip and 1 feature, got shape {array.shape}")
    _check_real(array, what)
    array = np.ascontiguousarray(array, dtype=np.float32)
    bad = np.flatnonzero(~np.isfinite(array).all(axis=1))
    if bad.size:
        raise invalid_clips_error(f"{what} contains NaN or infinite values", bad, None)
    return array


def as_sequences(X: object, *, what: str = "X") -> list[np.ndarray]:
    """Return frame sequences as a list of C-contiguous float32 arrays ``[T_i, D]``.

    Accepts a list or tuple of 2-D arrays (lengths may differ) or one 3-D array
    ``[n, T, D]`` (all sequences the same length).

    Raises
    ------
    ValueError
        If there are no sequences, a sequence is not 2-D, is empty (zero frames), or the
        sequences disagree on the feature size (names the sequences by index).
    InvalidEmbeddingsError
        If some sequences hold NaN or infinite values (names them by index).
    """
    if isinstance(X, np.ndarray | torch.Tensor):
        array = _to_numpy(X)
        if array.ndim != 3:
            raise ValueError(
                f"{what} must be a list of [frames, features] arrays or one 3-D array "
                f"[sequences, frames, features], got an array of shape {array.shape}"
            )
        items: Sequence[object] = list(array)
    elif isinstance(X, list | tuple):
        items = X
    else:
        raise ValueError(
            f"{what} must be a list of [frames, features] arrays, got {type(X).__name__}"
        )
    if not items:
        raise ValueError(f"{what} holds no sequences")
    sequences: list[np.ndarray] = []
    for index, item in enumerate(items):
        array = _to_numpy(item)
        if array.ndim != 2:
            raise ValueError(
                f"{what}[{index}] must be a 2-D array [frames, features], got shape {array.shape}"
            )
        _check_real(array, f"{what}[{index}]")
        sequences.append(np.ascontiguousarray(array, dtype=np.float32))
    empty = [i for i, seq in enumerate(sequences) if seq.shape[0] == 0]
    if empty:
        raise ValueError(
            f"{what} has {len(empty)} empty sequence(s) with no frames "
            f"(indices: {describe_clips(empty)})"
        )
    dims = {seq.shape[1] for seq in sequences}
    if len(dims) > 1 or 0 in dims:
        first = sequences[0].shape[1]
        odd = [i for i, seq in enumerate(sequences) if seq.shape[1] != first]
        raise ValueError(
            f"{what}: every frame must have the same number of features (> 0); sequence 0 has "
            f"{first}, these differ: {describe_clips(odd) or '0'}"
        )
    bad = [i for i, seq in enumerate(sequences) if not np.isfinite(seq).all()]
    if bad:
        raise invalid_clips_error(f"{what} contains NaN or infinite values", bad, None)
    return sequences


def sequence_dim(inputs: np.ndarray | list[np.ndarray]) -> int:
    """Feature size of validated vectors or sequences."""
    if isinstance(inputs, np.ndarray):
        return int(inputs.shape[1])
    return int(inputs[0].shape[1])


def _as_label_array(y: object, n: int, what: str) -> np.ndarray:
    labels = _to_numpy(y) if isinstance(y, np.ndarray | torch.Tensor) else None
    if labels is None:
        if isinstance(y, str | bytes):
            raise ValueError(f"{what} must be a sequence with one label per clip, not a string")
        values = list(y)  # type: ignore[call-overload]
        labels = np.empty(len(values), dtype=object)
        labels[:] = values
        # Keep a uniform numeric or string dtype when there is one (sorting is then exact).
        try:
            converted = np.asarray(values)
        except ValueError:
            converted = labels
        if converted.ndim == 1 and converted.dtype != object:
            labels = converted
    if labels.ndim != 1:
        raise ValueError(
            f"{what} must be 1-D (one label per clip), got shape {labels.shape}; "
            "for several labels per clip pass a binary indicator matrix with multilabel=True"
        )
    if labels.shape[0] != n:
        raise ValueError(f"got {labels.shape[0]} labels in {what} for {n} clips")
    missing = [i for i, value in enumerate(labels.tolist()) if is_missing_label(value)]
    if missing:
        raise ValueError(
            f"{what} has {len(missing)} missing label(s) (None or NaN) at indices "
            f"{describe_clips(missing)}; drop those clips (and their embeddings) first"
        )
    return labels


def _as_indicator(y: object, n: int, what: str, n_classes: int | None) -> np.ndarray:
    matrix = _to_numpy(y)
    if matrix.ndim != 2:
        raise ValueError(
            f"{what} must be a binary indicator matrix [clips, classes] when multilabel=True, "
            f"got shape {matrix.shape}"
        )
    if matrix.shape[0] != n:
        raise ValueError(f"got {matrix.shape[0]} label rows in {what} for {n} clips")
    if n_classes is not None and matrix.shape[1] != n_classes:
        raise ValueError(
            f"{what} has {matrix.shape[1]} label columns, the training labels had {n_classes}"
        )
    if matrix.dtype != bool:
        _check_real(matrix, what)
        bad = np.flatnonzero(~np.isin(matrix, (0, 1)).all(axis=1))
        if bad.size:
            raise ValueError(
                f"{what} must hold only 0 and 1; rows {describe_clips(bad.tolist())} do not"
            )
    return np.ascontiguousarray(matrix, dtype=np.float32)


def encode_train_labels(
    y: object, n: int, *, multilabel: bool, what: str = "y"
) -> tuple[np.ndarray, np.ndarray]:
    """Encode training labels: returns ``(classes, targets)``.

    ``targets`` is ``int64 [n]`` class codes (multi-class) or a ``float32 [n, C]`` indicator
    matrix (multi-label).

    Raises
    ------
    InsufficientClassesError
        Multi-class labels with fewer than two distinct classes, or a multi-label matrix with
        no columns.
    MissingClassError
        A multi-label column with no positive training clip (the class is absent from training).
    """
    if multilabel:
        targets = _as_indicator(y, n, what, None)
        n_classes = int(targets.shape[1])
        if n_classes < 1:
            raise InsufficientClassesError(f"{what} has no label columns")
        absent = np.flatnonzero(targets.sum(axis=0) == 0).tolist()
        if absent:
            raise MissingClassError(
                f"{len(absent)} class(es) have no positive clip in the training data "
                f"(columns: {describe_clips(absent)}); a probe cannot learn them",
                absent,
                "train",
            )
        return np.arange(n_classes), targets
    labels = _as_label_array(y, n, what)
    try:
        classes, codes = np.unique(labels, return_inverse=True)
    except TypeError as error:
        raise ValueError(f"{what} mixes label types that cannot be ordered: {error}") from None
    if classes.shape[0] < 2:
        raise InsufficientClassesError(
            f"the training labels hold {classes.shape[0]} class "
            f"({describe_clips(classes.tolist())}); a probe needs at least 2"
        )
    return classes, codes.astype(np.int64).reshape(-1)


def encode_eval_labels(
    y: object, n: int, classes: np.ndarray, *, multilabel: bool, split: str, what: str = "y"
) -> np.ndarray:
    """Encode labels of an evaluation split against the training ``classes``.

    Raises
    ------
    MissingClassError
        If a label (multi-class) is not among the training classes; names the classes and
        the split.
    """
    if multilabel:
        return _as_indicator(y, n, what, int(classes.shape[0]))
    labels = _as_label_array(y, n, what)
    known = set(classes.tolist())
    unseen = sorted({value for value in labels.tolist() if value not in known}, key=str)
    if unseen:
        raise MissingClassError(
            f"{len(unseen)} class(es) in the {split!r} split never appear in the training data: "
            f"{describe_clips(unseen)}",
            unseen,
            split,
        )
    codes = np.searchsorted(classes, labels)
    return codes.astype(np.int64)
