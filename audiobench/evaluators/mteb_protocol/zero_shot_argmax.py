"""Zero-shot classification by the most similar class text, as MTEB's zero-shot tasks score it.

Each sample i has a similarity s_ij to the text of every candidate class j (for audio–text
models the cosine between the audio and the class prompt embeddings); the prediction is
argmax_j s_ij, **ties going to the lowest class index**. The true labels are class indices
0 … C−1 into the candidate list, or strings looked up in ``classes`` (the candidate texts).

The report is :func:`~.prediction_report.single_label_report` of the
predictions (``accuracy``, macro / weighted ``f1``, ``precision`` and ``recall``), with ``ap``
and ``ap_weighted`` when the true labels hold exactly two classes: the average precision of
the similarities to class 1 with class 1 positive. The main score is ``accuracy``.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from audiobench.evaluators.mteb_protocol.prediction_report import single_label_report
from audiobench.metrics.validation import real_matrix

__all__ = ["zero_shot_argmax_scores"]


def zero_shot_argmax_scores(
    similarity: object,
    labels: Sequence[Hashable] | np.ndarray,
    *,
    classes: Sequence[Hashable] | None = None,
) -> dict[str, float | None]:
    """Scores of predicting each sample's most similar class (see the module docstring).

    Parameters
    ----------
    similarity:
        ``[n_samples, n_classes]`` finite scores (higher = more similar), n_classes ≥ 2.
    labels:
        The true class of each sample: an index into the columns, or (with ``classes``) the
        name of a column.
    classes:
        The name of each column, to look up non-integer labels.
    """
    matrix = real_matrix(similarity, "similarity")
    n, n_classes = matrix.shape
    if n_classes < 2:
        raise ValueError(f"need similarities to at least 2 classes, got {n_classes}")
    if isinstance(labels, str | bytes):
        raise ValueError("labels must be a sequence with one label per sample, not a string")
    values = labels.tolist() if isinstance(labels, np.ndarray) else list(labels)
    if len(values) != n:
        raise ValueError(f"labels has {len(values)} values for {n} samples")
    if classes is not None:
        names = list(classes)
        if len(names) != n_classes:
            raise ValueError(f"classes names {len(names)} columns, similarity has {n_classes}")
        index = {name: j for j, name in enumerate(names)}
        unknown = sorted({str(v) for v in values if v not in index})
        if unknown:
            raise ValueError(f"labels not among the classes: {unknown[:5]}")
        values = [index[v] for v in values]
    truth = np.asarray(values)
    if not np.issubdtype(truth.dtype, np.integer):
        raise ValueError("labels must be class indices (or pass classes to look names up)")
    if truth.min() < 0 or truth.max() >= n_classes:
        raise ValueError(f"label indices must lie in [0, {n_classes})")
    predicted = np.argmax(matrix, axis=1)
    return single_label_report(truth, predicted, binary_scores=matrix[:, 1])
