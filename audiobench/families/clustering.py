"""Clustering of frozen embeddings against their labels (evaluator: issue 5).

Data contract: clips carry ``label``; the number of clusters is the number of
distinct labels; scores are averaged over several seeds.
"""

from __future__ import annotations

from typing import ClassVar

from audiobench.task import Task, TaskFamily

__all__ = ["ClusteringTask"]


class ClusteringTask(Task):
    family: ClassVar[TaskFamily] = TaskFamily.CLUSTERING
    seeds: ClassVar[tuple[int, ...]] = (0, 1, 2, 3, 4)
