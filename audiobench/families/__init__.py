"""One abstract class per task family; a concrete task subclasses one and adds metadata."""

from audiobench.families.classification import ClassificationTask
from audiobench.families.clustering import ClusteringTask
from audiobench.families.pair_classification import PairClassificationTask
from audiobench.families.perceptual_alignment import PerceptualAlignmentTask
from audiobench.families.reasoning import ReasoningTask
from audiobench.families.reconstruction import ReconstructionTask
from audiobench.families.reranking import RerankingTask
from audiobench.families.retrieval import RetrievalTask
from audiobench.families.segmentation import SegmentationTask
from audiobench.families.stability import StabilityTask
from audiobench.families.transcription import TranscriptionTask
from audiobench.families.zero_shot_classification import ZeroShotClassificationTask
from audiobench.families.zero_shot_similarity import ZeroShotSimilarityTask
from audiobench.task import Task, TaskFamily

FAMILIES: dict[TaskFamily, type[Task]] = {
    cls.family: cls
    for cls in (
        ClassificationTask,
        ClusteringTask,
        PairClassificationTask,
        PerceptualAlignmentTask,
        ReasoningTask,
        ReconstructionTask,
        RerankingTask,
        RetrievalTask,
        SegmentationTask,
        StabilityTask,
        TranscriptionTask,
        ZeroShotClassificationTask,
        ZeroShotSimilarityTask,
    )
}


def family_task(family: str) -> type[Task]:
    """The base class of ``family`` (a :class:`TaskFamily` value); LookupError if unknown."""
    try:
        return FAMILIES[TaskFamily(family)]
    except ValueError:
        raise LookupError(f"unknown task family {family!r}") from None


__all__ = [
    "FAMILIES",
    "ClassificationTask",
    "ClusteringTask",
    "PairClassificationTask",
    "PerceptualAlignmentTask",
    "ReasoningTask",
    "ReconstructionTask",
    "RerankingTask",
    "RetrievalTask",
    "SegmentationTask",
    "StabilityTask",
    "TranscriptionTask",
    "ZeroShotClassificationTask",
    "ZeroShotSimilarityTask",
    "family_task",
]
