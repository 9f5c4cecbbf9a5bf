"""Perceptual alignment: VocSim's avian-perception set, and an offline mock.

``AvianPerception`` scores embeddings against zebra finch judgments of song
syllable similarity (Zandberg et al. 2024), as VocSim's application
benchmark does: triplet accuracy (main score, cosine distance) and the AXB
probes as two-alternative forced choice, each with a one-sided binomial
test against chance.

Data: the syllables are the hub dataset
``anonymous-submission000/vocsim-applications-avian-perception`` (one split,
``train``, 887 clips; columns ``index``, ``audio`` at 16 kHz, ``subset``,
``speaker``, ``label``, ``original_name``; also published as
``vocsim/avian-perception-benchmark``). The judgments are not columns of
that dataset: VocSim ships them as ``data/avian_perception/triplets.csv``
(``Anchor, Positive, Negative, Margin_Type, ...``) and ``probes.csv``
(``left, right, sound_id, decision, ...``) in its code repository, naming
syllables by ``original_name``. The task looks for the two tables in the hub
repository at the pinned revision, and otherwise in a local copy: put them
beside the downloaded parquet files and run with ``--dataset <that folder>``.
The hub commit could not be resolved from an offline machine, so the
revision is ``"main"`` until a maintainer pins it.

``MockPerceptualAlignment`` runs offline: generated calls (six call types,
six renditions each) whose ``labels.csv`` carries one triplet per clip
(positive: another rendition of the same call type; negative: a rendition of
another type) and one 2AFC trial (the same-type alternative is the one
"listeners" chose).
"""

from __future__ import annotations

from audiobench.benchmark import Benchmark, ScoreColumn
from audiobench.families import PerceptualAlignmentTask
from audiobench.task import Columns, DatasetSource, Synthetic, TaskFamily, TaskMetadata

__all__ = ["AVIAN_PERCEPTION", "AvianPerception", "MockPerceptualAlignment"]

_MAIN = "cosine:triplet/all"


class AvianPerception(PerceptualAlignmentTask):
    metadata = TaskMetadata(
        name="AvianPerception",
        family=TaskFamily.PERCEPTUAL_ALIGNMENT,
        description=(
            "Zebra finch perceptual judgments of song syllables (VocSim applications): do "
            "embedding distances agree with the birds? Triplet accuracy (cosine) with a "
            "binomial test against 50 %; AXB probes as 2AFC. Trial tables: see the module."
        ),
        dataset=DatasetSource(
            kind="huggingface",
            path="anonymous-submission000/vocsim-applications-avian-perception",
            revision="main",
        ),
        columns=Columns(
            audio="audio",
            label="label",
            group="speaker",
            extra=("original_name",),
            required=("audio",),
        ),
        splits=("train",),
        main_score=_MAIN,
        domains=("bioacoustics", "perception"),
        license="CC-BY-4.0",
        citation=(
            "Zandberg L, Morfi V, George JM, Clayton DF, Stowell D, Lachlan RF (2024). Bird song "
            "comparison using deep learning trained from avian perceptual judgments. PLOS "
            "Computational Biology 20(8): e1012329. VocSim: arXiv:2512.10120."
        ),
        reference="https://doi.org/10.1371/journal.pcbi.1012329",
    )
    options = PerceptualAlignmentTask.Options(
        trial_key="original_name",
        # VocSim skips trials naming syllables the published audio lacks; so do we, counted.
        missing_members="skip",
    )


_MOCK_SPEC = {
    "name": "MOCK-PA",
    "n_classes": 6,
    "clips_per_class": 6,
    "f0_range": (800.0, 5000.0),
    "max_harmonics": 3,
}


class MockPerceptualAlignment(PerceptualAlignmentTask):
    metadata = TaskMetadata(
        name="MockPerceptualAlignment",
        family=TaskFamily.PERCEPTUAL_ALIGNMENT,
        description=(
            "Generated calls with generated judgments: one triplet and one 2AFC trial per clip, "
            "where the same call type is always judged closer. Runs offline."
        ),
        dataset=Synthetic(
            generator="audiobench.synthetic.judged_calls:write_judged_calls",
            seed=20251211,
            params={"spec": _MOCK_SPEC},
        ),
        main_score=_MAIN,
        domains=("bioacoustics", "synthetic"),
        license="Apache-2.0",
    )
    # Its trials ride on labels.csv; it has no trial tables.
    options = PerceptualAlignmentTask.Options(triplet_file=None, probe_file=None)


AVIAN_PERCEPTION = Benchmark(
    name="AvianPerception",
    description="Agreement with zebra finch perceptual judgments: triplet accuracy under "
    "cosine distance (chance 50 %).",
    tasks=("AvianPerception",),
    columns=(
        ScoreColumn(
            name="triplet accuracy",
            task="AvianPerception",
            score=_MAIN,
            aggregate=None,
            higher_is_better=True,
        ),
    ),
    rank_by=("triplet accuracy",),
)
