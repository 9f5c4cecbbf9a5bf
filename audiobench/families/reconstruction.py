"""Reconstruction: encode, decode, and compare with the original (evaluator: issue 5).

Data contract: plain clips; the encoder must declare ``can_decode``; a
declared reference embedding model scores original against reconstruction.
"""

from __future__ import annotations

from typing import ClassVar

from audiobench.encoder import Encoder
from audiobench.task import Task, TaskFamily

__all__ = ["ReconstructionTask"]


class ReconstructionTask(Task):
    family: ClassVar[TaskFamily] = TaskFamily.RECONSTRUCTION
    reference_model: ClassVar[str] = "log-mel"

    @classmethod
    def check_encoder(cls, encoder: Encoder) -> None:
        if not encoder.meta.can_decode:
            raise ValueError(
                f"model {encoder.meta.name!r} cannot decode embeddings back to audio; "
                "reconstruction tasks need a codec such as encodec-24khz"
            )
