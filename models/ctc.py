"""CTC speech recognisers (wav2vec 2.0, HuBERT, WavLM ``…ForCTC`` checkpoints) as transcribers.

An ``hf:`` checkpoint whose config lists a ``…ForCTC`` architecture is a frame encoder like
any other speech model (its base model's frames, mean-pooled by default) that also produces
transcripts (:class:`~audiobench.outputs.Transcript`): greedy CTC decoding, the arg-max
token per frame collapsed and stripped of blanks by the checkpoint's own tokenizer. Clips
are batched as for embeddings: padded with an attention mask where the model takes one,
otherwise grouped by equal length, so a transcript does not depend on its batch. Word
timings are not produced (a task that needs them refuses the model before any work).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from audiobench.models.hf import FrameEncoder, encode_grouped
from audiobench.outputs import OutputType, SpeechInput, TextOutput, Transcript

__all__ = ["CTCEncoder", "is_ctc"]


def is_ctc(config: Any) -> bool:
    """Whether a transformers config names a CTC head among its architectures."""
    return any(str(a).endswith("ForCTC") for a in getattr(config, "architectures", None) or [])


class CTCEncoder(FrameEncoder):
    """A frame encoder whose checkpoint carries a CTC head: it also transcribes."""

    produces = frozenset({OutputType.EMBEDDING, OutputType.TRANSCRIPT})

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._ctc: Any = None
        self._tokenizer: Any = None

    def _recogniser(self) -> tuple[Any, Any]:
        """The CTC model and tokenizer, loaded on first use; the base model then serves the
        embeddings too (the same weights, one copy)."""
        import transformers

        self.require_loaded()
        if self._ctc is None:
            self._ctc = self._load_model(transformers.AutoModelForCTC)
            self._tokenizer = self._from_pretrained(transformers.AutoTokenizer, what="tokenizer")
            self.model = self._ctc.base_model
        return self._ctc, self._tokenizer

    def check_output(self, output: OutputType) -> None:
        super().check_output(output)
        if output is OutputType.TRANSCRIPT:
            self._recogniser()

    def produce(self, output: OutputType, inputs: Sequence[SpeechInput]) -> list[TextOutput]:
        model, tokenizer = self._recogniser()
        waves = [self._at_least_one_frame(item.waveform) for item in inputs]

        def decode(batch: list[np.ndarray]) -> list[str]:
            features = self.feature_extractor(
                batch,
                sampling_rate=self.meta.sample_rate,
                return_tensors="pt",
                padding=True,
                return_attention_mask=self._use_mask,
            )
            logits = model(**self._to_device(features)).logits
            ids = logits.argmax(dim=-1).cpu().numpy()
            texts = []
            for wave, row in zip(batch, ids, strict=True):
                n = self.n_frames(len(wave)) if self._pad_safe else None
                ids_of_clip = row[: n or len(row)].tolist()
                texts.append(tokenizer.decode(ids_of_clip, skip_special_tokens=True))
            return texts

        texts = encode_grouped(waves, decode, pad_safe=self._pad_safe)  # type: ignore[arg-type]
        return [Transcript(str(text).strip()) for text in texts]

    def parameter_count(self) -> int | None:
        if self._ctc is not None:
            return int(sum(p.numel() for p in self._ctc.parameters()))
        return super().parameter_count()
