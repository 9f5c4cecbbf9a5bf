"""Whisper encoders: the 1500 × d encoder sequence of a 30 s window.

Whisper was trained on log-mel inputs padded to exactly 30 s, and its encoder
refuses any other length, so every clip is padded to the window as in
training. Default pooling is VocSim's ``mean_time_feat`` over all 1500 frames
(padding included, the paper's EWMTF); ``masked:mean_time_feat`` averages
only the frames that hold audio.

Clips longer than the window follow ``long_clips``:

- ``"truncate"`` (default): the first 30 s are encoded; the run ends with a
  warning counting such clips.
- ``"chunk"``: the clip is cut into consecutive 30 s windows, each encoded,
  and the frame sequences concatenated in time (padding only in the last
  window), so pooling covers the whole clip.

**Transcription.** Every Whisper model (registered sizes and ``hf:`` Whisper checkpoints) is
also a transcriber: it produces transcripts and transcripts with word timings
(:mod:`audiobench.outputs`) through transformers' ``generate``
(:mod:`audiobench.models.whisper_asr`), on the first 30 s of each clip, in the runner's
length-sorted batches. Options ``language``
(e.g. ``en``; None: detected), ``task`` (``transcribe`` or ``translate``), ``max_new_tokens``
and ``num_beams`` (None: greedy) apply to transcription only; left at None they leave the
embedding fingerprint as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import Field

from audiobench.encoder import ModelMeta, OutputKind
from audiobench.models.hf import HFEncoder, ceil_div, to_numpy
from audiobench.outputs import OutputType, SpeechInput, TextOutput

__all__ = [
    "WhisperBase",
    "WhisperEncoder",
    "WhisperLargeV3Turbo",
    "WhisperMedium",
    "WhisperSmall",
    "WhisperTiny",
    "window_samples",
]

LongClips = Literal["truncate", "chunk"]


def _meta(name: str, source: str, dim: int, n_parameters: int) -> ModelMeta:
    return ModelMeta(
        name=name,
        source=source,
        revision="main",
        sample_rate=16000,
        output_kind=OutputKind.SEQUENCE,
        embedding_dim=dim,
        n_parameters=n_parameters,
        license="MIT",
        default_pooling="mean_time_feat",
        # 2 mel frames (hop 160 at 16 kHz) per output frame: 50 per second; frames past the
        # clip's end are padding of the 30 s window (n_valid_frames computes the same count).
        padded_frame_rate=50.0,
        description=(
            f"Whisper encoder ({source}): input padded to the 30 s window, output the "
            f"1500 × {dim} frame sequence; options layer=, long_clips=truncate|chunk."
        ),
        reference="https://arxiv.org/abs/2212.04356",
    )


def window_samples(config: Any, feature_extractor: Any) -> int:
    """Samples in the window the encoder accepts: 2 mel frames per output position."""
    return int(config.max_source_positions) * 2 * int(feature_extractor.hop_length)


class WhisperEncoder(HFEncoder):
    """Encoder half of Whisper (the decoder is dropped after loading)."""

    meta = _meta("whisper-large-v3", "openai/whisper-large-v3", 1280, 637_000_000)

    class Options(HFEncoder.Options):
        long_clips: LongClips = Field(
            default="truncate",
            description="Clips longer than the 30 s window: 'truncate' encodes the first 30 s "
            "(counted in the run's warnings), 'chunk' every consecutive window, concatenated.",
        )
        language: str | None = Field(
            default=None,
            description="Transcription: the speech's language for Whisper ('en', 'english', "
            "'ja'...); None: detected per clip.",
        )
        task: Literal["transcribe", "translate"] | None = Field(
            default=None,
            description="Transcription: 'transcribe' (None: the checkpoint's default) or "
            "'translate' (into English).",
        )
        max_new_tokens: int | None = Field(
            default=None,
            ge=1,
            description="Transcription: at most this many generated tokens per clip; None: "
            "as many as the decoder holds.",
        )
        num_beams: int | None = Field(
            default=None, ge=1, description="Transcription: beam width; None: greedy decoding."
        )

    options: Options
    produces = frozenset({OutputType.EMBEDDING, OutputType.TRANSCRIPT, OutputType.WORD_TIMINGS})

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.long_clips: LongClips = self.options.long_clips
        self._asr: Any = None

    def _load(self) -> None:
        import transformers

        self.feature_extractor = self._from_pretrained(
            transformers.WhisperFeatureExtractor, what="feature extractor"
        )
        full = self._load_model(transformers.WhisperModel)
        self.model = full.get_encoder()
        del full.decoder  # half the parameters, never used
        self.hop = int(self.feature_extractor.hop_length)
        self.window = window_samples(self.model.config, self.feature_extractor)

    def _windows(self, wave: np.ndarray) -> list[np.ndarray]:
        if len(wave) <= self.window:
            return [wave]
        if self.long_clips == "truncate":
            self.note(
                f"longer than the {self.window / self.meta.sample_rate:g} s window; "
                "only the start was encoded (model option long_clips=chunk encodes all of it)"
            )
            return [wave[: self.window]]
        return [wave[i : i + self.window] for i in range(0, len(wave), self.window)]

    def n_valid_frames(self, n_samples: int) -> int | None:
        self.require_loaded()
        frames_per_window = self.window // (2 * self.hop)
        if self.long_clips == "truncate":
            n_samples = min(n_samples, self.window)
        full, rest = divmod(n_samples, self.window)
        if full and not rest:
            return full * frames_per_window
        last = max(1, ceil_div(ceil_div(rest, self.hop), 2))
        return full * frames_per_window + min(last, frames_per_window)

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        self.require_loaded()
        windows: list[np.ndarray] = []
        owners: list[int] = []
        for i, wave in enumerate(waveforms):
            for w in self._windows(wave):
                windows.append(w)
                owners.append(i)
        features = self.feature_extractor(
            windows,
            sampling_rate=self.meta.sample_rate,
            return_tensors="pt",
            padding="max_length",
            max_length=self.window,
            truncation=True,
            # The log-mel spectrogram on the encoder's device: on the host it took as long as
            # the forward pass of Whisper-large on an H100 (transformers' torch STFT either way).
            device=str(self.device),
        )
        inputs = self._to_device({"input_features": features["input_features"]})
        outputs = self.model(**inputs, output_hidden_states=self.layer is not None)
        hidden = to_numpy(self._hidden(outputs))
        per_clip: list[list[np.ndarray]] = [[] for _ in waveforms]
        for owner, z in zip(owners, hidden, strict=True):
            per_clip[owner].append(z)
        return [np.concatenate(parts, axis=0) for parts in per_clip]

    # -- transcription ------------------------------------------------------------------

    def _transcriber(self) -> Any:
        """The generation model, loaded on first use; its encoder then serves embeddings too
        (the same weights), so a run that both embeds and transcribes holds one copy."""
        from audiobench.models.whisper_asr import WhisperGeneration

        self.require_loaded()
        if self._asr is None:
            self._asr = WhisperGeneration(self, self.options)
            self.model = self._asr.model.get_encoder()
        return self._asr

    def check_output(self, output: OutputType) -> None:
        super().check_output(output)
        if output is not OutputType.EMBEDDING:
            self._transcriber().check(output)

    def produce(self, output: OutputType, inputs: Sequence[SpeechInput]) -> list[TextOutput]:
        return self._transcriber().produce(output, inputs)

    def parameter_count(self) -> int | None:
        if self._asr is not None:
            return int(sum(p.numel() for p in self._asr.model.parameters()))
        return super().parameter_count()


class WhisperLargeV3Turbo(WhisperEncoder):
    meta = _meta("whisper-large-v3-turbo", "openai/whisper-large-v3-turbo", 1280, 637_000_000)


class WhisperMedium(WhisperEncoder):
    meta = _meta("whisper-medium", "openai/whisper-medium", 1024, 307_000_000)


class WhisperSmall(WhisperEncoder):
    meta = _meta("whisper-small", "openai/whisper-small", 768, 88_000_000)


class WhisperBase(WhisperEncoder):
    meta = _meta("whisper-base", "openai/whisper-base", 512, 20_600_000)


class WhisperTiny(WhisperEncoder):
    meta = _meta("whisper-tiny", "openai/whisper-tiny", 384, 8_200_000)
