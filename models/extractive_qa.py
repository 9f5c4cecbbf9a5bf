"""An encoder that answers a spoken question in text: transcribe it, then read the answer off
the context with an extractive question-answering model.

``--model extractive-qa`` is a cascade for reasoning (span QA) tasks, MSEB's encoders that
predict the answer text (``TextPrediction``) rather than embeddings:

1. the question clip is transcribed by the ``transcriber`` option, any registered model that
   produces transcripts (default ``transcript-truth``, the dataset's own transcript: MSEB's
   text-input headroom; ``whisper-small``, ``hf:<speech-to-text checkpoint>``...);
2. a ``transformers`` extractive QA model (``AutoModelForQuestionAnswering``; the ``reader``
   option, a hub id or local directory, ``hf:`` prefix allowed; default
   ``deepset/roberta-base-squad2`` at its hub tag ``v1.0``, trained on SQuAD 2.0, which has
   unanswerable questions) reads the clip's ``context`` (the passage) in windows of
   ``max_length`` tokens overlapping by ``stride``; the answer is the context span
   ``start..end`` (at most ``max_answer_tokens`` tokens) of highest start + end logit over
   all windows, or ``"No Answer"`` when the null score (the first token's start + end logits,
   lowest over the windows) beats it — SQuAD 2.0's usual decision with a null threshold of 0.

Its outputs are :class:`~audiobench.outputs.Answer` texts, cached like transcripts under the
encoder's fingerprint, the clip's waveform, its transcript and its context; MSEB counts an
answer's size as its UTF-8 bytes. A clip without a context is an error naming it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field

from audiobench.encoder import Encoder, EncoderOptions, ModelMeta, OutputKind
from audiobench.errors import DataError, OptionError
from audiobench.metrics.mseb_conventions import NO_ANSWER
from audiobench.models.digest import weights_digest
from audiobench.models.loading import from_pretrained, local_directory
from audiobench.outputs import (
    Answer,
    OutputType,
    SpeechInput,
    TextOutput,
    Transcript,
    require_output,
)

__all__ = ["DEFAULT_READER", "DEFAULT_READER_REVISION", "ExtractiveQA", "best_span"]

#: The default reader: RoBERTa-base fine-tuned on SQuAD 2.0 (answerable and unanswerable).
DEFAULT_READER = "deepset/roberta-base-squad2"
#: Its hub tag, so that a run reads the same weights.
DEFAULT_READER_REVISION = "v1.0"


def best_span(
    start: np.ndarray, end: np.ndarray, allowed: np.ndarray, max_tokens: int
) -> tuple[float, int, int] | None:
    """The highest ``start[i] + end[j]`` over allowed tokens with ``i <= j < i + max_tokens``,
    as ``(score, i, j)`` (the first in row-major order on ties); None when no token is allowed.
    """
    idx = np.flatnonzero(allowed)
    if idx.size == 0:
        return None
    s, e = start[idx].astype(np.float64), end[idx].astype(np.float64)
    scores = s[:, None] + e[None, :]
    gap = idx[None, :] - idx[:, None]  # token distance j - i
    scores[(gap < 0) | (gap >= max_tokens)] = -np.inf
    flat = int(np.argmax(scores))
    i, j = divmod(flat, idx.size)
    return float(scores[i, j]), int(idx[i]), int(idx[j])


class ExtractiveQA(Encoder):
    """Transcriber → extractive QA reader over the clip's context (module docstring)."""

    meta = ModelMeta(
        name="extractive-qa",
        revision="v1",
        sample_rate=16000,
        output_kind=OutputKind.TEXT,
        license="Apache-2.0",
        description=(
            "Answers a spoken question in text: a transcriber (default transcript-truth) then "
            f"an extractive QA reader (default {DEFAULT_READER}@{DEFAULT_READER_REVISION}) "
            "over the question's context; 'No Answer' when the null score wins."
        ),
    )
    compute_dtypes = ("float32",)
    produces = frozenset({OutputType.ANSWER})
    # The transcript-truth transcriber reads the dataset's transcript; the reader the context.
    reads_transcript = True
    reads_context = True

    class Options(EncoderOptions):
        transcriber: str = Field(
            "transcript-truth",
            min_length=1,
            description="Registered model that transcribes the question (produces transcripts).",
        )
        reader: str = Field(
            DEFAULT_READER,
            min_length=1,
            description="Extractive QA checkpoint (AutoModelForQuestionAnswering): hub id or "
            "local directory, 'hf:' prefix allowed.",
        )
        reader_revision: str = Field(
            DEFAULT_READER_REVISION,
            min_length=1,
            description="Hub revision of the reader (ignored for a local directory).",
        )
        max_length: int = Field(384, ge=16, description="Tokens per window (question+context).")
        stride: int = Field(128, ge=0, description="Tokens shared by consecutive windows.")
        max_answer_tokens: int = Field(30, ge=1, description="Longest answer, in tokens.")

    options: Options

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        from audiobench import registry

        o = self.options
        if o.stride >= o.max_length:
            raise OptionError(
                f"model {self.meta.name!r}: stride ({o.stride}) must be below max_length "
                f"({o.max_length})"
            )
        self.transcriber: Encoder = registry.models.create(o.transcriber, device=self.device)
        require_output(
            self.transcriber,
            OutputType.TRANSCRIPT,
            f"{self.meta.name} transcribes the question with its transcriber option",
        )
        self.reader_source = o.reader.removeprefix("hf:")
        self.reader_dir: Path | None = local_directory(
            self.reader_source, f"reader {self.reader_source!r}"
        )
        self._reader_digest: str | None = None
        self._model: Any = None
        self._tokenizer: Any = None

    def describe(self) -> dict[str, Any]:
        reader: dict[str, Any] = {"source": self.reader_source}
        if self.reader_dir is None:
            reader["revision"] = self.options.reader_revision
        else:  # local weights: by content
            if self._reader_digest is None:
                self._reader_digest = weights_digest(self.reader_dir)
            reader["weights_digest"] = self._reader_digest
        return {**super().describe(), "transcriber": self.transcriber.describe(), "reader": reader}

    def _load(self) -> None:
        import transformers

        self.transcriber.load()
        revision = self.options.reader_revision
        self._tokenizer = from_pretrained(
            transformers.AutoTokenizer, self.reader_source, revision=revision, what="tokenizer"
        )
        if not getattr(self._tokenizer, "is_fast", False):
            raise OptionError(
                f"reader {self.reader_source!r}: its tokenizer has no fast version, which "
                "extractive QA needs to map answer tokens back to the context text"
            )
        self._model = from_pretrained(
            transformers.AutoModelForQuestionAnswering,
            self.reader_source,
            revision=revision,
            what="question-answering model",
        )
        self._model.to(self.device).eval()

    def check_output(self, output: OutputType) -> None:
        super().check_output(output)
        self.transcriber.check_output(OutputType.TRANSCRIPT)

    def parameter_count(self) -> int | None:
        asr = self.transcriber.parameter_count()
        if self._model is None or asr is None:
            return None
        return asr + int(sum(p.numel() for p in self._model.parameters()))

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        raise NotImplementedError(f"model {self.meta.name!r} answers in text, not embeddings")

    def produce(self, output: OutputType, inputs: Sequence[SpeechInput]) -> list[TextOutput]:
        if output is not OutputType.ANSWER:
            raise NotImplementedError(f"model {self.meta.name!r} produces answers only")
        self.require_loaded()
        missing = [item.clip_id for item in inputs if not item.context]
        if missing:
            raise DataError(
                f"model {self.meta.name!r} reads the answer off each question's context, and "
                f"clip(s) {', '.join(map(repr, missing[:5]))} have none (metadata 'context')"
            )
        transcripts = self.transcriber.produce(OutputType.TRANSCRIPT, inputs)
        questions = [t.text if isinstance(t, Transcript) else "" for t in transcripts]
        contexts = [item.context or "" for item in inputs]
        return [Answer(text) for text in self.answer(questions, contexts)]

    def answer(self, questions: Sequence[str], contexts: Sequence[str]) -> list[str]:
        """The reader's answer to each question over its context, or ``"No Answer"``."""
        import torch

        self.require_loaded()
        o = self.options
        encoded = self._tokenizer(
            [q.strip() for q in questions],
            list(contexts),
            truncation="only_second",
            max_length=o.max_length,
            stride=o.stride,
            return_overflowing_tokens=True,
            return_offsets_mapping=True,
            padding=True,
            return_tensors="pt",
        )
        owners = encoded["overflow_to_sample_mapping"].tolist()
        offsets = encoded["offset_mapping"].tolist()
        inputs = {
            k: v.to(self.device)
            for k, v in encoded.items()
            if k in ("input_ids", "attention_mask", "token_type_ids")
        }
        with torch.no_grad():
            out = self._model(**inputs)
        starts = out.start_logits.float().cpu().numpy()
        ends = out.end_logits.float().cpu().numpy()
        best: list[tuple[float, int, int] | None] = [None] * len(questions)
        null: list[float] = [np.inf] * len(questions)
        for w, owner in enumerate(owners):
            in_context = np.array([sid == 1 for sid in encoded.sequence_ids(w)])
            null[owner] = min(null[owner], float(starts[w, 0]) + float(ends[w, 0]))
            found = best_span(starts[w], ends[w], in_context, o.max_answer_tokens)
            if found is None:
                continue
            score, i, j = found
            current = best[owner]
            if current is None or score > current[0]:
                best[owner] = (score, offsets[w][i][0], offsets[w][j][1])
        answers = []
        for k, found in enumerate(best):
            if found is None or null[k] > found[0]:
                answers.append(NO_ANSWER)
            else:
                # An answer of only blanks is MSEB's invalid answer "": counted, not hidden.
                answers.append(contexts[k][found[1] : found[2]].strip())
        return answers
