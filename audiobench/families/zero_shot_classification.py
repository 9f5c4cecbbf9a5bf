"""Zero-shot classification with an audio-text model (evaluator: issue 5).

Data contract: clips carry ``label``; class names become text prompts through
``prompt_template`` and are embedded by the encoder's text side.
"""

from __future__ import annotations

from typing import ClassVar

from audiobench.encoder import Encoder, Modality
from audiobench.task import Task, TaskFamily

__all__ = ["ZeroShotClassificationTask"]


class ZeroShotClassificationTask(Task):
    family: ClassVar[TaskFamily] = TaskFamily.ZERO_SHOT_CLASSIFICATION
    prompt_template: ClassVar[str] = "This is a sound of {label}."

    @classmethod
    def check_encoder(cls, encoder: Encoder) -> None:
        if Modality.TEXT not in encoder.meta.modalities:
            raise ValueError(
                f"model {encoder.meta.name!r} has no text encoder; zero-shot "
                "classification needs an audio-text model such as CLAP"
            )
