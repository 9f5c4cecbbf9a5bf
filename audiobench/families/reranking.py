"""Reranking: order each query's candidate list (evaluator: issue 5).

Data contract: query clips carry ``metadata["candidates"]`` (candidate ids or
texts) and ``metadata["positives"]``; text candidates need a text side.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from audiobench.task import Task, TaskFamily

__all__ = ["RerankingTask"]


class RerankingTask(Task):
    family: ClassVar[TaskFamily] = TaskFamily.RERANKING
    candidate_modality: ClassVar[Literal["audio", "text"]] = "text"
