"""SyntheticVocalisations: the offline default, a small VocSim-style task on generated calls."""

from __future__ import annotations

from pathlib import Path

from audiobench.families import ZeroShotSimilarityTask
from audiobench.synthetic import SubsetSpec, write_dataset
from audiobench.task import DatasetSource, TaskFamily, TaskMetadata

__all__ = ["SyntheticVocalisations"]

_SUBSETS = (
    SubsetSpec(
        "SYN-A", n_classes=8, clips_per_class=10, f0_range=(1500.0, 6000.0), max_harmonics=3
    ),
    SubsetSpec("SYN-B", n_classes=8, clips_per_class=10, f0_range=(150.0, 600.0), max_harmonics=8),
)


class SyntheticVocalisations(ZeroShotSimilarityTask):
    metadata = TaskMetadata(
        name="SyntheticVocalisations",
        family=TaskFamily.ZERO_SHOT_SIMILARITY,
        description=(
            "Generated vocalisation-like calls (8 call types per subset, 10 renditions each, "
            "varying in pitch, tempo, loudness, noise and individual); are renditions of the "
            "same call type nearest neighbours? Runs offline."
        ),
        dataset=DatasetSource(kind="synthetic", path="audiobench.synthetic", revision="v1"),
        columns={"subset": "subset", "group": "speaker"},
        subsets=tuple(s.name for s in _SUBSETS),
        main_score="pca100/spearman:gsr",
        domains=("bioacoustics", "synthetic"),
        license="Apache-2.0",
    )

    def generate_data(self, directory: Path) -> None:
        write_dataset(directory, _SUBSETS, seed=20251210, sample_rate=self.metadata.sample_rate)
