"""Reconstruction: how well does a codec give the audio back?

``ESC50Reconstruction`` encodes and decodes the 2,000 five-second clips of
ESC-50 (environmental sounds; the ``ashraq/esc50`` hub copy at the revision
MTEB pins) and scores the reconstructions with FAD and KAD between CLAP
embeddings of originals and reconstructions (as MSEB defines them), per-clip
CLAP embedding MSE, the polynomial-kernel ``kid_poly``, SI-SDR and log-mel
distance. Its canonical rate is 24 kHz (EnCodec's), so a
24 kHz codec is not handed audio band-limited to 8 kHz.

``MockReconstruction`` runs offline: twelve short generated calls at
16 kHz, reference embeddings from the log-mel baseline (its frames for FAD,
KAD and embedding MSE, their mean over time for ``kid_poly``).

Main score: FAD, lower is better.
"""

from __future__ import annotations

from audiobench.benchmark import Benchmark, ScoreColumn
from audiobench.families import ReconstructionTask
from audiobench.task import Columns, Synthetic, TaskFamily, TaskMetadata
from audiobench.tasks.esc50 import ESC50_CITATION, ESC50_LICENSE, ESC50_REFERENCE, ESC50_SOURCE

__all__ = ["RECONSTRUCTION", "ESC50Reconstruction", "MockReconstruction"]


class ESC50Reconstruction(ReconstructionTask):
    metadata = TaskMetadata(
        name="ESC50Reconstruction",
        family=TaskFamily.RECONSTRUCTION,
        description=(
            "ESC-50 environmental sounds through the codec and back: FAD (main, lower is "
            "better) and KAD between CLAP embeddings of originals and reconstructions, "
            "embedding MSE, SI-SDR, log-mel distance, and the code stream's bits per second."
        ),
        dataset=ESC50_SOURCE,
        columns=Columns(audio="audio", label="category", id="filename", required=("audio",)),
        splits=("train",),
        main_score="fad",
        higher_is_better=False,
        domains=("environmental",),
        license=ESC50_LICENSE,
        citation=ESC50_CITATION,
        reference=ESC50_REFERENCE,
        sample_rate=24000,
    )
    # CLAP gives one vector per clip: its default pooling ("none") keeps it.
    options = ReconstructionTask.Options(reference_model="clap", reference_pooling=None)


_MOCK_SPEC = {
    "name": "MOCK-REC",
    "n_classes": 4,
    "clips_per_class": 3,
    "f0_range": (300.0, 3000.0),
    "max_harmonics": 4,
}


class MockReconstruction(ReconstructionTask):
    metadata = TaskMetadata(
        name="MockReconstruction",
        family=TaskFamily.RECONSTRUCTION,
        description=(
            "Twelve short generated calls at 16 kHz through the codec and back; FAD, KAD and "
            "embedding MSE on log-mel frames, SI-SDR, log-mel distance. Runs offline."
        ),
        dataset=Synthetic(
            generator="audiobench.synthetic.judged_calls:write_labelled_calls",
            seed=20251212,
            params={"spec": _MOCK_SPEC},
        ),
        main_score="fad",
        higher_is_better=False,
        domains=("bioacoustics", "synthetic"),
        license="Apache-2.0",
    )


RECONSTRUCTION = Benchmark(
    name="Reconstruction",
    description="Codec reconstruction of ESC-50: Fréchet Audio Distance between CLAP embeddings "
    "of originals and reconstructions (lower is better).",
    tasks=("ESC50Reconstruction",),
    columns=(
        ScoreColumn(
            name="FAD",
            task="ESC50Reconstruction",
            score="fad",
            aggregate=None,
            higher_is_better=False,
            percent=False,
        ),
    ),
    rank_by=("FAD",),
)
