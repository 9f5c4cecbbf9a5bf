"""Whisper transcription through transformers' ``generate``: transcripts and timed words.

:class:`WhisperGeneration` is what a :class:`~audiobench.models.whisper.WhisperEncoder` uses to
produce text outputs. Each clip's first window (30 s for real checkpoints) is turned into
log-mel features as for embeddings and decoded by ``generate`` with the encoder's
``language``, ``task``, ``max_new_tokens`` and ``num_beams`` options; clips come in the
runner's length-sorted batches.

**Word timings** come from transformers' cross-attention alignment
(``return_token_timestamps=True``): token i of the generated sequence spans
``[t[i-1], t[i]]`` seconds (as transformers' speech-recognition pipeline reads them). Text
tokens (special and timestamp tokens left out) are first joined into whole characters
(byte-level pieces that decode to a replacement character wait for the next token), then into
words: a unit starting with a space starts a word, so punctuation stays with its word; for
languages written without spaces (Chinese, Japanese, Thai, Lao, Burmese, Cantonese, as
Whisper's own splitter treats them) every character unit is a word. A word runs from its
first token's start to its last token's end. This needs ``alignment_heads`` in the checkpoint's
generation config (every OpenAI checkpoint has them); a checkpoint without them is refused
with that reason before any clip is transcribed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from audiobench.errors import UnsuitableModelError
from audiobench.outputs import (
    OutputType,
    SpeechInput,
    TextOutput,
    TimedTranscript,
    TimedWord,
    Transcript,
)

__all__ = ["WhisperGeneration"]

#: Decoder positions taken by the start tokens (start of transcript, language, task, no
#: timestamps) before the first generated token.
START_TOKENS = 4


class WhisperGeneration:
    """A Whisper checkpoint's generation model and tokenizer, loaded from ``encoder``'s source."""

    def __init__(self, encoder: Any, options: Any) -> None:
        import transformers

        from audiobench.models.whisper import window_samples

        self.name = encoder.meta.name
        self.encoder = encoder
        self.options = options
        self.model = encoder._load_model(transformers.WhisperForConditionalGeneration)
        self.tokenizer = encoder._from_pretrained(transformers.WhisperTokenizer, what="tokenizer")
        self.feature_extractor = encoder.feature_extractor
        self.window = window_samples(self.model.config, self.feature_extractor)
        self.rate = int(encoder.meta.sample_rate)

    # -- checks ---------------------------------------------------------------------------

    def check(self, output: OutputType) -> None:
        """Refuse what this checkpoint cannot do, naming the option or the missing piece."""
        config = self.model.generation_config
        if self.options.language is not None and not getattr(config, "lang_to_id", None):
            raise UnsuitableModelError(
                f"model {self.name!r}: its generation config has no language tokens "
                "(lang_to_id), so language= cannot be set; leave the option out"
            )
        if self.options.task is not None and not getattr(config, "task_to_id", None):
            raise UnsuitableModelError(
                f"model {self.name!r}: its generation config has no task tokens (task_to_id), "
                "so task= cannot be set; leave the option out"
            )
        if output is OutputType.WORD_TIMINGS and not getattr(config, "alignment_heads", None):
            raise UnsuitableModelError(
                f"model {self.name!r} cannot time words: its generation config has no "
                "alignment_heads (the cross-attention heads transformers aligns tokens with); "
                "use a checkpoint that has them (every openai/whisper-* checkpoint does)"
            )
        if output not in (OutputType.TRANSCRIPT, OutputType.WORD_TIMINGS):
            raise UnsuitableModelError(f"model {self.name!r} does not produce {output} outputs")

    # -- generation -----------------------------------------------------------------------

    def _generate_kwargs(self) -> dict[str, Any]:
        o = self.options
        limit = int(self.model.config.max_target_positions) - START_TOKENS
        kwargs: dict[str, Any] = {
            "max_new_tokens": min(o.max_new_tokens or limit, limit),
        }
        if o.language is not None:
            kwargs["language"] = o.language
        if o.task is not None:
            kwargs["task"] = o.task
        if o.num_beams is not None:
            kwargs["num_beams"] = o.num_beams
        return kwargs

    def produce(self, output: OutputType, inputs: Sequence[SpeechInput]) -> list[TextOutput]:
        from audiobench.models.loading import torch_dtype

        waves = []
        for item in inputs:
            if len(item.waveform) > self.window:
                self.encoder.note(
                    f"longer than the {self.window / self.rate:g} s window; only the start "
                    "was transcribed"
                )
            waves.append(item.waveform[: self.window])
        extracted = self.feature_extractor(
            waves,
            sampling_rate=self.rate,
            return_tensors="pt",
            padding="max_length",
            max_length=self.window,
            truncation=True,
            return_attention_mask=True,
        )
        features = extracted.input_features.to(
            self.encoder.device, torch_dtype(self.encoder.dtype or "float32")
        )
        kwargs = {
            **self._generate_kwargs(),
            "attention_mask": extracted.attention_mask.to(self.encoder.device),
        }
        if output is OutputType.TRANSCRIPT:
            tokens = self.model.generate(features, **kwargs)
            texts = self.tokenizer.batch_decode(tokens, skip_special_tokens=True)
            return [Transcript(text.strip()) for text in texts]
        generated = self.model.generate(features, return_token_timestamps=True, **kwargs)
        sequences = generated["sequences"].cpu().numpy()
        times = generated["token_timestamps"].cpu().float().numpy()
        return [
            self._timed_words(row, stamps) for row, stamps in zip(sequences, times, strict=True)
        ]

    def _timed_words(self, row: np.ndarray, stamps: np.ndarray) -> TimedTranscript:
        special = set(self.tokenizer.all_special_ids)
        # Timestamp tokens come after the no-timestamps token in every Whisper vocabulary.
        no_timestamps = getattr(self.model.generation_config, "no_timestamps_token_id", None)
        positions = [
            i
            for i, token in enumerate(row.tolist())
            if token not in special and (no_timestamps is None or token < no_timestamps)
        ]
        spaced = _language_name(self.options.language) not in UNSPACED_LANGUAGES
        words: list[tuple[str, int, int]] = []  # text, first position, last position
        pending: list[int] = []
        for position in positions:
            pending.append(position)
            unit = self.tokenizer.decode([int(row[p]) for p in pending])
            if REPLACEMENT in unit:
                continue  # part of a character: wait for the rest of its bytes
            if words and spaced and not unit.startswith(" "):
                text, first, _ = words[-1]
                words[-1] = (text + unit, first, position)
            else:
                words.append((unit, pending[0], position))
            pending = []
        timed = []
        for text, first, last in words:
            if not text.strip():
                continue
            start = float(stamps[first - 1]) if first > 0 else 0.0
            end = max(start, float(stamps[last]))
            timed.append(TimedWord(text.strip(), round(start, 2), round(end, 2)))
        return TimedTranscript(tuple(timed))


#: Languages Whisper's word splitter splits into characters rather than on spaces.
UNSPACED_LANGUAGES = frozenset({"chinese", "japanese", "thai", "lao", "myanmar", "cantonese"})
#: What a byte-level token that ends inside a character decodes to.
REPLACEMENT = "\ufffd"


def _language_name(language: str | None) -> str | None:
    """transformers' language name for a code (``ja`` → ``japanese``); None stays None."""
    if language is None:
        return None
    from transformers.models.whisper.tokenization_whisper import LANGUAGES

    return LANGUAGES.get(language.lower(), language.lower())
