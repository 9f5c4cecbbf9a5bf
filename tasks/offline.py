"""The ``Offline`` benchmark: one generated task per family that runs with any audio model.

Nothing to download: every task generates its audio on first use, so
``audiobench evaluate --benchmark Offline --model log-mel`` runs anywhere. It
is not shown on the public leaderboard, which is for real data. Text and
codec families are left out (log-mel has neither side); their mock tasks run
on their own with CLAP and EnCodec.
"""

from __future__ import annotations

from audiobench.benchmark import MEAN, Benchmark, ScoreColumn

__all__ = ["OFFLINE"]

_TASKS = (
    ("Similarity GSR", "SyntheticVocalisations"),
    ("Classif. acc", "MockClassification"),
    ("Clustering V", "MockClustering"),
    ("Retrieval MRR", "MockRetrieval"),
    ("Reranking mAP", "MockAudioReranking"),
    ("Triplet acc", "MockPerceptualAlignment"),
    ("Pair AP", "MockPairClassification"),
)

OFFLINE = Benchmark(
    name="Offline",
    description=(
        "Generated data, one task per audio-only family (zero-shot similarity, classification, "
        "clustering, retrieval, reranking, perceptual alignment, pair classification); ranked "
        "by the mean of the main scores. For trying audiobench and plugins without a network, "
        "not for papers."
    ),
    tasks=tuple(task for _, task in _TASKS),
    columns=tuple(
        ScoreColumn(name=name, task=task, score="main", aggregate=None) for name, task in _TASKS
    ),
    mean_of=tuple(name for name, _ in _TASKS),
    rank_by=(MEAN, "Similarity GSR"),
    on_leaderboard=False,
)
