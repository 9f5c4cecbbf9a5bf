"""VocSim: zero-shot content identity over 19 single-source audio corpora.

``VocSimGSR`` evaluates every subset and is led by GSR, ``VocSimP1`` by P@1,
both at the paper's headline configuration (PCA 100, Spearman distance);
``VocSim-<subset>`` evaluates one subset. The blind subsets are not on the
hub: they are evaluated only from a local copy (``--dataset``), and only
their averages are written.
"""

from __future__ import annotations

from audiobench.benchmark import Benchmark, ScoreColumn
from audiobench.families import ZeroShotSimilarityTask
from audiobench.task import Columns, DatasetSource, TaskMetadata

__all__ = ["BLIND_SUBSETS", "PUBLIC_SUBSETS", "VOCSIM", "VocSimGSR", "VocSimP1"]

PUBLIC_SUBSETS = (
    "BC", "BS1", "BS2", "BS3", "BS4", "BS5", "OC1", "ES1", "HP",
    "HW1", "HW2", "HU1", "HU2", "HS1", "HS2",
)  # fmt: skip
BLIND_SUBSETS = ("HU3", "HU4", "HW3", "HW4")

# The hub commit cannot be resolved from an offline machine; "main" until a
# maintainer pins the commit. --dataset-revision overrides it per run.
_SOURCE = DatasetSource(kind="huggingface", path="anonymous-submission000/vocsim", revision="main")
_COLUMNS = Columns(
    audio="audio",
    label="label",
    subset="subset",
    group="speaker",
    required=("audio", "label", "subset"),
)
_CITATION = (
    "VocSim: A Training-free Benchmark for Zero-shot Content Identity in Single-source "
    "Audio. arXiv:2512.10120."
)
_HEADLINE = "pca100/spearman"


def _metadata(
    name: str, description: str, main_metric: str, subsets: tuple[str, ...], blind: tuple[str, ...]
) -> TaskMetadata:
    return TaskMetadata(
        name=name,
        description=description,
        dataset=_SOURCE,
        columns=_COLUMNS,
        subsets=subsets,
        blind_subsets=blind,
        main_score=f"{_HEADLINE}:{main_metric}",
        domains=("speech", "bioacoustics", "environmental"),
        license="CC-BY-4.0",
        citation=_CITATION,
        reference="https://arxiv.org/abs/2512.10120",
        visibility="blind" if blind and set(subsets) <= set(blind) else "public",
    )


class VocSimGSR(ZeroShotSimilarityTask):
    metadata = _metadata(
        "VocSimGSR",
        "VocSim, all 19 subsets: do frozen embeddings place different recordings of the same "
        "sound event together? Main score: GSR averaged over the public subsets.",
        "gsr",
        PUBLIC_SUBSETS + BLIND_SUBSETS,
        BLIND_SUBSETS,
    )


class VocSimP1(ZeroShotSimilarityTask):
    metadata = _metadata(
        "VocSimP1",
        "VocSim, all 19 subsets, led by Precision@1 averaged over the public subsets.",
        "p@1",
        PUBLIC_SUBSETS + BLIND_SUBSETS,
        BLIND_SUBSETS,
    )


def _subset_task(subset: str) -> type[ZeroShotSimilarityTask]:
    blind = (subset,) if subset in BLIND_SUBSETS else ()
    meta = _metadata(
        f"VocSim-{subset}",
        f"VocSim subset {subset} alone{' (blind: local copy only)' if blind else ''}.",
        "gsr",
        (subset,),
        blind,
    )
    return type(
        f"VocSim_{subset}", (ZeroShotSimilarityTask,), {"metadata": meta, "__module__": __name__}
    )


for _subset in PUBLIC_SUBSETS + BLIND_SUBSETS:
    globals()[f"VocSim_{_subset}"] = _subset_task(_subset)


def _column(label: str, metric: str, aggregate: str) -> ScoreColumn:
    return ScoreColumn(
        name=f"{aggregate} {label}",
        task="VocSimGSR",
        score=f"{_HEADLINE}:{metric}",
        aggregate=aggregate,
    )


VOCSIM = Benchmark(
    name="VocSim",
    description="VocSim zero-shot similarity: public and blind macro-averages reported apart; "
    "ranked by the blind subsets where they were evaluated.",
    tasks=("VocSimGSR",),
    columns=tuple(
        _column(label, metric, aggregate)
        for aggregate in ("blind", "public")
        for label, metric in (("P@1", "p@1"), ("P@5", "p@5"), ("GSR", "gsr"))
    ),
    rank_by=("blind GSR", "public GSR"),
)
