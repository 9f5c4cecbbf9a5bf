"""Clustering of frozen embeddings, scored against the labels.

A clustering task holds labelled clips, split into subsets. How it is scored belongs to the
evaluator its ``protocol`` option selects (:mod:`audiobench.evaluators`):

- ``"audiobench"`` (:mod:`audiobench.evaluators.clustering`): seeded ``MiniBatchKMeans`` with
  k = the number of distinct labels, V-measure, NMI, ARI and purity, their spread over seeds.
  ``main_score`` names one metric (``"v_measure"``, as MTEB); with several subsets it is
  their unweighted mean (``aggregates["mean"]``).
- ``"mteb"`` (:mod:`audiobench.evaluators.mteb`): as MTEB scores MAEB's clustering tasks
  (bootstrapped k-means, ``v_measure`` and ``ami``).

Data contract: every clip carries one ``label``; an unlabelled clip is an error.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from audiobench.evaluators.clustering import ClusteringReport, ClusteringSummary
from audiobench.evaluators.evaluator import EvaluatedOptions, EvaluatedTask
from audiobench.task import TaskFamily

__all__ = ["ClusteringReport", "ClusteringSummary", "ClusteringTask"]


class ClusteringTask(EvaluatedTask):
    """Base class of clustering tasks; subclasses declare metadata (and other seeds)."""

    family: ClassVar[TaskFamily] = TaskFamily.CLUSTERING

    class Options(EvaluatedOptions):
        seeds: tuple[int, ...] = Field(
            (0, 1, 2, 3, 4), min_length=1, description="random_state of each k-means run."
        )
        batch_size: int = Field(1024, ge=1, description="MiniBatchKMeans batch size.")
        n_init: int = Field(1, ge=1, description="k-means++ initialisations per run.")

    options = Options()
