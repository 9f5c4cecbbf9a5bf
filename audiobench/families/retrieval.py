"""Retrieval: queries against a corpus (evaluator: issue 5).

Data contract: query clips have ``split == "query"``; the corpus is audio
clips with ``split == "corpus"`` (query by example: relevant when labels
match) or texts (``Clip.text`` of the corpus clips) for audio-text retrieval;
explicit relevance can be given as ``metadata["relevant"]`` (a list of corpus
ids). Tasks whose documents are text need an encoder with a text side.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from audiobench.encoder import Encoder, Modality
from audiobench.task import Task, TaskFamily

__all__ = ["RetrievalTask"]


class RetrievalTask(Task):
    family: ClassVar[TaskFamily] = TaskFamily.RETRIEVAL
    query_modality: ClassVar[Literal["audio", "text"]] = "audio"
    document_modality: ClassVar[Literal["audio", "text"]] = "audio"

    @classmethod
    def check_encoder(cls, encoder: Encoder) -> None:
        if "text" in (cls.query_modality, cls.document_modality) and (
            Modality.TEXT not in encoder.meta.modalities
        ):
            raise ValueError(
                f"model {encoder.meta.name!r} has no text encoder; "
                f"{cls.__name__} needs one ({cls.query_modality} -> {cls.document_modality})"
            )
