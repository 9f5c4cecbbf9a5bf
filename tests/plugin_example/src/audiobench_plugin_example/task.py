"""A zero-shot similarity task over generated chirps, declared as a plugin would."""

from __future__ import annotations

from pathlib import Path

from audiobench.families import ZeroShotSimilarityTask
from audiobench.synthetic import SubsetSpec, write_dataset
from audiobench.task import DatasetSource, TaskFamily, TaskMetadata

_SPEC = SubsetSpec(
    "CHIRPS", n_classes=5, clips_per_class=6, f0_range=(800.0, 3000.0), max_harmonics=2
)


class ExampleChirps(ZeroShotSimilarityTask):
    metadata = TaskMetadata(
        name="ExampleChirps",
        family=TaskFamily.ZERO_SHOT_SIMILARITY,
        description="Plugin example: 5 generated chirp types, 6 renditions each.",
        dataset=DatasetSource(kind="synthetic", path="audiobench_plugin_example", revision="v1"),
        columns={"subset": "subset"},
        subsets=("CHIRPS",),
        main_score="raw/cosine:p@1",
        domains=("synthetic",),
        license="Apache-2.0",
    )

    def generate_data(self, directory: Path) -> None:
        write_dataset(directory, [_SPEC], seed=7, sample_rate=self.metadata.sample_rate)
