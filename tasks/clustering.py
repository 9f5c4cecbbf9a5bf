"""Clustering tasks: k-means on frozen embeddings, scored against the labels.

``ESC50Clustering`` clusters all 2,000 ESC-50 clips into 50 clusters (MTEB's
ESC50Clustering data); ``MockClustering`` does the same on generated calls, offline.
"""

from __future__ import annotations

from audiobench.benchmark import Benchmark, ScoreColumn
from audiobench.families import ClusteringTask
from audiobench.task import Columns, Synthetic, TaskFamily, TaskMetadata
from audiobench.tasks.esc50 import ESC50_CITATION, ESC50_LICENSE, ESC50_REFERENCE, ESC50_SOURCE

__all__ = ["CLUSTERING", "ESC50Clustering", "MockClustering"]


class ESC50Clustering(ClusteringTask):
    metadata = TaskMetadata(
        name="ESC50Clustering",
        family=TaskFamily.CLUSTERING,
        description=(
            "ESC-50's 2,000 environmental recordings clustered with MiniBatchKMeans into 50 "
            "clusters (one per class), 5 seeds. Main score: V-measure, mean over seeds."
        ),
        dataset=ESC50_SOURCE,
        columns=Columns(audio="audio", label="category"),
        splits=("train",),
        main_score="v_measure",
        domains=("environmental",),
        license=ESC50_LICENSE,
        citation=ESC50_CITATION,
        reference=ESC50_REFERENCE,
    )


_MOCK_CALLS = {
    "name": "CLU",
    "n_classes": 5,
    "clips_per_class": 0,  # unused: the generator sets the count
    "f0_range": (300.0, 5000.0),
    "max_harmonics": 4,
    "n_individuals": 4,
}


class MockClustering(ClusteringTask):
    metadata = TaskMetadata(
        name="MockClustering",
        family=TaskFamily.CLUSTERING,
        description=(
            "Generated calls: 5 call types by 4 individuals, 2 renditions each, clustered "
            "into 5 clusters; main score V-measure over 5 seeds. Runs offline."
        ),
        dataset=Synthetic(
            generator="audiobench.synthetic.calls:write_individual_calls",
            seed=20260107,
            params={"spec": _MOCK_CALLS, "renditions": 2},
        ),
        columns=Columns(group="speaker"),
        main_score="v_measure",
        domains=("synthetic",),
        license="Apache-2.0",
    )


CLUSTERING = Benchmark(
    name="Clustering",
    description=(
        "k-means clustering of frozen embeddings (k = number of classes): ESC-50, "
        "V-measure averaged over 5 seeds."
    ),
    tasks=("ESC50Clustering",),
    columns=(
        ScoreColumn(
            name="ESC-50 V-measure", task="ESC50Clustering", score="v_measure", aggregate=None
        ),
    ),
    rank_by=("ESC-50 V-measure",),
)
