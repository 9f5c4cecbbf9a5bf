"""Perceptual alignment: do embedding distances agree with listeners? (evaluator: issue 5)

Data contract: triplets (anchor, positive, negative) given by clip ids in
``metadata["triplet"]`` of the anchor clips, scored by triplet accuracy with
a one-sided binomial test against 50 %.
"""

from __future__ import annotations

from typing import ClassVar

from audiobench.task import Task, TaskFamily

__all__ = ["PerceptualAlignmentTask"]


class PerceptualAlignmentTask(Task):
    family: ClassVar[TaskFamily] = TaskFamily.PERCEPTUAL_ALIGNMENT
