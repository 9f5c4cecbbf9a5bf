"""SyntheticVocalisations: the offline default, a small VocSim-style task on generated calls."""

from __future__ import annotations

from audiobench.families import ZeroShotSimilarityTask
from audiobench.task import Synthetic, TaskMetadata

__all__ = ["SyntheticVocalisations"]

_SUBSETS = (
    {"name": "SYN-A", "n_classes": 8, "clips_per_class": 10, "f0_range": (1500.0, 6000.0),
     "max_harmonics": 3},
    {"name": "SYN-B", "n_classes": 8, "clips_per_class": 10, "f0_range": (150.0, 600.0),
     "max_harmonics": 8},
)  # fmt: skip


class SyntheticVocalisations(ZeroShotSimilarityTask):
    metadata = TaskMetadata(
        name="SyntheticVocalisations",
        description=(
            "Generated vocalisation-like calls (8 call types per subset, 10 renditions each, "
            "varying in pitch, tempo, loudness, noise and individual); are renditions of the "
            "same call type nearest neighbours? Runs offline."
        ),
        dataset=Synthetic(
            generator="audiobench.synthetic.vocalisations:write_dataset",
            seed=20251210,
            params={"subsets": _SUBSETS},
        ),
        columns={"subset": "subset", "group": "speaker"},
        subsets=tuple(s["name"] for s in _SUBSETS),
        main_score="pca100/spearman:gsr",
        domains=("bioacoustics", "synthetic"),
        license="Apache-2.0",
    )
