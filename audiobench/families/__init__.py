"""One abstract class per task family; a concrete task subclasses one and adds metadata."""

from audiobench.families.classification import ClassificationTask
from audiobench.families.clustering import ClusteringTask
from audiobench.families.perceptual_alignment import PerceptualAlignmentTask
from audiobench.families.reconstruction import ReconstructionTask
from audiobench.families.reranking import RerankingTask
from audiobench.families.retrieval import RetrievalTask
from audiobench.families.zero_shot_classification import ZeroShotClassificationTask
from audiobench.families.zero_shot_similarity import ZeroShotSimilarityTask

__all__ = [
    "ClassificationTask",
    "ClusteringTask",
    "PerceptualAlignmentTask",
    "ReconstructionTask",
    "RerankingTask",
    "RetrievalTask",
    "ZeroShotClassificationTask",
    "ZeroShotSimilarityTask",
]
