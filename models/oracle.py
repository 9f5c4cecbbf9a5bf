"""The transcript-truth oracle: each clip's own transcript from the dataset, as if recognised.

MSEB's "text input" headroom: a cascade fed the reference transcript instead of an ASR
model's shows what the stages after recognition can reach. ``--model transcript-truth``
produces :class:`~audiobench.outputs.Transcript` outputs only (no embeddings, no weights, no
FLOPs); on a transcription task it scores a word error rate of 0 by construction. Where
the data gives each word's times (clip metadata ``word_times``, ``"word start end;..."``)
it also produces timed transcripts from them. A clip without what is asked is an error
naming it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from audiobench.encoder import Encoder, ModelMeta, OutputKind
from audiobench.errors import DataError
from audiobench.outputs import (
    WORD_TIMES_KEY,
    OutputType,
    SpeechInput,
    TextOutput,
    Transcript,
    parse_word_times,
)

__all__ = ["TranscriptTruth"]


class TranscriptTruth(Encoder):
    """Returns the dataset's transcript of each clip (``Clip.text``)."""

    meta = ModelMeta(
        name="transcript-truth",
        revision="v1",
        sample_rate=16000,
        output_kind=OutputKind.TEXT,
        n_parameters=0,
        license="Apache-2.0",
        description=(
            "Oracle transcriber: each clip's own transcript from the dataset (MSEB's "
            "transcript_truth, the text-input headroom of cascades); and its word times where "
            "the data has them."
        ),
    )
    produces = frozenset({OutputType.TRANSCRIPT, OutputType.WORD_TIMINGS})
    reads_transcript = True

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        raise NotImplementedError(f"model {self.meta.name!r} produces transcripts, not embeddings")

    def produce(self, output: OutputType, inputs: Sequence[SpeechInput]) -> list[TextOutput]:
        if output is OutputType.WORD_TIMINGS:
            return [self._timed(item) for item in inputs]
        if output is not OutputType.TRANSCRIPT:
            raise NotImplementedError(f"model {self.meta.name!r} produces transcripts only")
        missing = [item.clip_id for item in inputs if item.transcript is None]
        if missing:
            raise DataError(
                f"model {self.meta.name!r} returns each clip's transcript, and clip(s) "
                f"{', '.join(map(repr, missing[:5]))} have none (the task's text column)"
            )
        return [Transcript(item.transcript or "") for item in inputs]

    def _timed(self, item: SpeechInput) -> TextOutput:
        if item.word_times is None:
            raise DataError(
                f"model {self.meta.name!r} returns each clip's own word times, and clip "
                f"{item.clip_id!r} has none (metadata column {WORD_TIMES_KEY!r}, "
                "'word start end;...')"
            )
        try:
            return parse_word_times(item.word_times, f"clip {item.clip_id!r}")
        except ValueError as exc:
            raise DataError(str(exc)) from None
