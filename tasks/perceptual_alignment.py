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

import csv
from pathlib import Path

import numpy as np
import soundfile as sf

from audiobench.benchmark import Benchmark, ScoreColumn
from audiobench.families import PerceptualAlignmentTask
from audiobench.synthetic import SubsetSpec, render_call, sample_call_types
from audiobench.task import Columns, DatasetSource, TaskFamily, TaskMetadata

__all__ = ["AVIAN_PERCEPTION", "AvianPerception", "MockPerceptualAlignment", "render_calls"]

_MAIN = "cosine:triplet/all"


def render_calls(
    directory: Path, spec: SubsetSpec, *, seed: int, sample_rate: int
) -> list[tuple[str, str, int, int]]:
    """Write ``spec.n_classes × spec.clips_per_class`` generated calls as 16-bit WAV files.

    Returns ``(clip id, relative path, call type index, rendition index)`` per
    clip, call type by call type. Deterministic for a given seed.
    """
    rng = np.random.default_rng(seed)
    calls = sample_call_types(spec, rng)
    individuals = [
        (
            float(2.0 ** (rng.uniform(-1.0, 1.0) / 12.0)),
            (float(rng.uniform(600, 4000)), float(rng.uniform(150, 600))),
        )
        for _ in range(spec.n_individuals)
    ]
    (directory / "calls").mkdir(parents=True, exist_ok=True)
    clips = []
    for c, call in enumerate(calls):
        for k in range(spec.clips_per_class):
            shift, formant = individuals[int(rng.integers(spec.n_individuals))]
            wave = render_call(
                call, rng, sample_rate, individual_shift=shift, individual_formant=formant
            )
            clip_id = f"{call.name}-{k:02d}"
            rel = f"calls/{clip_id}.wav"
            sf.write(directory / rel, wave, sample_rate, subtype="PCM_16")
            clips.append((clip_id, rel, c, k))
    return clips


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
    trial_key = "original_name"
    # VocSim skips trials naming syllables the published audio lacks; so do we, counted.
    missing_members = "skip"


_MOCK_SPEC = SubsetSpec(
    "MOCK-PA", n_classes=6, clips_per_class=6, f0_range=(800.0, 5000.0), max_harmonics=3
)


class MockPerceptualAlignment(PerceptualAlignmentTask):
    metadata = TaskMetadata(
        name="MockPerceptualAlignment",
        family=TaskFamily.PERCEPTUAL_ALIGNMENT,
        description=(
            "Generated calls with generated judgments: one triplet and one 2AFC trial per clip, "
            "where the same call type is always judged closer. Runs offline."
        ),
        dataset=DatasetSource(kind="synthetic", path="audiobench.synthetic", revision="v1"),
        main_score=_MAIN,
        domains=("bioacoustics", "synthetic"),
        license="Apache-2.0",
    )
    # Its trials ride on labels.csv; it has no trial tables.
    triplet_file = None
    probe_file = None

    def generate_data(self, directory: Path) -> None:
        rate = self.metadata.sample_rate
        clips = render_calls(directory, _MOCK_SPEC, seed=20251211, sample_rate=rate)
        n_types, per_type = _MOCK_SPEC.n_classes, _MOCK_SPEC.clips_per_class
        ids = [[""] * per_type for _ in range(n_types)]
        for clip_id, _, c, k in clips:
            ids[c][k] = clip_id
        rng = np.random.default_rng(7)
        rows = []
        for clip_id, rel, c, k in clips:
            other = (c + 1 + int(rng.integers(n_types - 1))) % n_types
            same_left = bool(rng.integers(2))
            same, different = ids[c][(k + 2) % per_type], ids[other][int(rng.integers(per_type))]
            rows.append(
                {
                    "id": clip_id,
                    "file": rel,
                    "label": clip_id.rsplit("-", 1)[0],
                    "positive": ids[c][(k + 1) % per_type],
                    "negative": ids[other][k],
                    "left": same if same_left else different,
                    "right": different if same_left else same,
                    "decision": "left" if same_left else "right",
                }
            )
        with (directory / "labels.csv").open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)


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
