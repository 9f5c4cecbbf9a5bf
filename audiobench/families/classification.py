"""Classification by probes trained on frozen embeddings (evaluator: issue 5).

Data contract: clips carry ``label`` (multi-label: labels joined by
``label_separator``) and ``split`` (``train``/``validation``/``test``), or a
``fold`` in ``metadata`` for cross-validated datasets; ``group`` (speaker or
individual) marks clips that must not straddle train and test. Token-level
probes consume unpooled frame sequences, requested with ``frame_level``.
"""

from __future__ import annotations

from typing import ClassVar

from audiobench.task import Task, TaskFamily

__all__ = ["ClassificationTask"]


class ClassificationTask(Task):
    family: ClassVar[TaskFamily] = TaskFamily.CLASSIFICATION
    multilabel: ClassVar[bool] = False
    label_separator: ClassVar[str] = ","
    folds: ClassVar[tuple[str, ...]] = ()
    grouped: ClassVar[bool] = False
    frame_level: ClassVar[bool] = False
