"""Cascade encoders: speech recognition, then a text embedding of the transcript.

``--model cascade:<asr>+<text model>`` composes two registered models into a
cascade baseline (MSEB's ``*_whisper_or_*`` encoders): the ASR model transcribes each clip,
and the text model (any model with a text side: ``paraphrase-multilingual-mpnet``,
``text:<id or dir>``, ``clap``) embeds the transcript; documents, candidates, spans and labels
go straight to the text model. Queries and documents then live in the text model's space, so
spoken queries can be retrieved against text documents. The ASR part is

- a Whisper name such as ``whisper-large-v3`` or ``hf:<dir or id>`` of a Whisper checkpoint
  (greedy decoding of the first 30 s, :class:`WhisperTranscriber`);
- any other registered model that produces transcripts (``hf:`` CTC checkpoints), through its
  own ``produce``;
- ``transcript-truth``, the oracle (MSEB's ``*_transcript_truth_or_*`` encoders, the
  text-input headroom): each clip's own transcript from the dataset. Its embeddings are
  cached under the transcript as well as the waveform, like the oracle's transcripts.

Transcripts are kept per clip (``last_transcripts``) for inspection.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field

from audiobench.encoder import Encoder, EncoderOptions, Modality, ModelMeta, OutputKind
from audiobench.errors import OptionError
from audiobench.models.digest import weights_digest
from audiobench.models.loading import from_pretrained, resolve_dtype, torch_dtype
from audiobench.models.whisper import WhisperEncoder, window_samples
from audiobench.outputs import OutputType, SpeechInput, Transcript

__all__ = [
    "CascadeEncoder",
    "OracleCascadeEncoder",
    "TranscriptProducer",
    "WhisperTranscriber",
    "cascade_encoder",
]


class WhisperTranscriber:
    """Greedy Whisper transcription of 16 kHz clips (the first 30 s of each)."""

    sample_rate = 16000

    def __init__(
        self,
        source: str,
        *,
        revision: str | None = None,
        device: str = "cpu",
        dtype: str | None = None,
        language: str | None = None,
        max_new_tokens: int = 128,
    ) -> None:
        self.source = source
        self.revision = revision
        self.device = device
        self.dtype = resolve_dtype(dtype, device)
        self.language = language
        self.max_new_tokens = max_new_tokens
        self._model: Any = None
        self._weights_digest: str | None = None

    def describe(self) -> dict[str, Any]:
        description = {
            "source": self.source,
            "revision": self.revision,
            "language": self.language,
            "max_new_tokens": self.max_new_tokens,
            "dtype": self.dtype,
        }
        if Path(self.source).expanduser().is_dir():  # local weights: by content
            if self._weights_digest is None:
                self._weights_digest = weights_digest(self.source)
            description["weights_digest"] = self._weights_digest
        return description

    def load(self) -> None:
        """Load the model, once (later calls do nothing)."""
        if self._model is None:
            self._load()

    def _load(self) -> None:
        import transformers

        kwargs = {"revision": self.revision}
        self.feature_extractor = from_pretrained(
            transformers.WhisperFeatureExtractor, self.source, what="feature extractor", **kwargs
        )
        self.tokenizer = from_pretrained(
            transformers.AutoTokenizer, self.source, what="tokenizer", **kwargs
        )
        model = from_pretrained(
            transformers.WhisperForConditionalGeneration,
            self.source,
            what="model",
            dtype=torch_dtype(self.dtype),
            **kwargs,
        )
        self._model = model.to(self.device).eval()
        self.window = window_samples(model.config, self.feature_extractor)

    def transcribe(self, waveforms: Sequence[np.ndarray]) -> list[str]:
        import torch

        if self._model is None:
            raise RuntimeError(f"ASR model {self.source!r} is not loaded; call load() first")
        features = self.feature_extractor(
            [w[: self.window] for w in waveforms],
            sampling_rate=self.sample_rate,
            return_tensors="pt",
            padding="max_length",
            max_length=self.window,
        ).input_features.to(self.device, torch_dtype(self.dtype))
        # Whisper's decoder holds max_target_positions tokens, start tokens included.
        limit = int(self._model.config.max_target_positions) - 4
        generate_kwargs: dict[str, Any] = {"max_new_tokens": min(self.max_new_tokens, limit)}
        if self.language:
            generate_kwargs["language"] = self.language
        with torch.inference_mode():
            tokens = self._model.generate(features, **generate_kwargs)
        return [t.strip() for t in self.tokenizer.batch_decode(tokens, skip_special_tokens=True)]


class TranscriptProducer:
    """A registered model that produces transcripts, as a cascade's first stage (a CTC
    checkpoint, or the transcript-truth oracle, which reads each clip's own transcript)."""

    def __init__(self, encoder: Encoder) -> None:
        self.encoder = encoder
        self.sample_rate = encoder.meta.sample_rate
        self._model = encoder  # counted by CascadeEncoder.parameter_count

    def describe(self) -> dict[str, Any]:
        return self.encoder.describe()

    def load(self) -> None:
        if not self.encoder.loaded:
            self.encoder.load()
        self.encoder.check_output(OutputType.TRANSCRIPT)

    def transcribe_inputs(self, inputs: Sequence[SpeechInput]) -> list[str]:
        outputs = self.encoder.produce(OutputType.TRANSCRIPT, inputs)
        texts = []
        for item, output in zip(inputs, outputs, strict=True):
            if not isinstance(output, Transcript):
                raise RuntimeError(
                    f"model {self.encoder.meta.name!r} returned {type(output).__name__} for "
                    f"clip {item.clip_id!r}, not a transcript"
                )
            texts.append(output.text.strip())
        return texts

    def transcribe(self, waveforms: Sequence[np.ndarray]) -> list[str]:
        return self.transcribe_inputs(
            [SpeechInput(f"clip {i}", wave) for i, wave in enumerate(waveforms)]
        )


class CascadeEncoder(Encoder):
    """ASR → text embedding, as one audio–text encoder (built by :func:`cascade_encoder`)."""

    compute_dtypes = ("float32", "float16", "bfloat16")

    meta = ModelMeta(
        name="cascade",
        sample_rate=16000,
        output_kind=OutputKind.VECTOR,
        modalities=(Modality.AUDIO, Modality.TEXT),
        description="Template for cascade:<asr>+<text model> encoders.",
    )

    class Options(EncoderOptions):
        # Recorded in the transcriber's description, part of describe().
        unrecorded = frozenset({"language"})

        language: str | None = Field(
            default=None, description="Language of the speech for Whisper; None: detected."
        )

    options: Options

    def __init__(
        self, *, transcriber: Any, text_encoder: Encoder, asr: str, text_model: str, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        # The two models named by cascade:<asr>+<text model> identify the outputs.
        self.params = {"asr": asr, "text_model": text_model, **self.params}
        self.transcriber = transcriber
        self.text_encoder = text_encoder
        self.last_transcripts: list[str] = []

    def _load(self) -> None:
        self.transcriber.load()
        self.text_encoder.load()

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "asr_model": self.transcriber.describe(),
            "text_model_description": self.text_encoder.describe(),
        }

    def parameter_count(self) -> int | None:
        counts = [getattr(self.transcriber, "_model", None), self.text_encoder]
        total = 0
        for part in counts:
            if isinstance(part, Encoder):
                n = part.parameter_count()
            elif part is not None:
                n = sum(p.numel() for p in part.parameters())
            else:
                n = None
            if n is None:
                return None
            total += int(n)
        return total

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        self.require_loaded()
        return self._embed_transcripts(self.transcriber.transcribe(waveforms))

    def _embed_transcripts(self, transcripts: list[str]) -> list[np.ndarray]:
        self.last_transcripts = transcripts
        empty = sum(1 for t in transcripts if not t)
        if empty:
            self.note("transcribed to empty text; embedded as the empty string", empty)
        return list(self.encode_text(transcripts))

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        self.require_loaded()
        return np.asarray(self.text_encoder.encode_text(texts), dtype=np.float32)


class OracleCascadeEncoder(CascadeEncoder):
    """A cascade whose first stage is the transcript-truth oracle: each clip's own transcript
    from the dataset, embedded by the text model (MSEB's text-input headroom)."""

    reads_transcript = True

    def encode_speech(self, inputs: Sequence[SpeechInput]) -> list[np.ndarray]:
        self.require_loaded()
        return self._embed_transcripts(self.transcriber.transcribe_inputs(inputs))

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        raise NotImplementedError(
            f"model {self.meta.name!r} embeds each clip's transcript from the dataset, which "
            "the waveform alone does not carry; it runs under the local runner (not --ray)"
        )


#: ``create(name, **kwargs)``: an encoder by registry name (``registry.models.create``).
CreateModel = Callable[..., Encoder]


def _asr_stage(spec: str, create: CreateModel, **kwargs: Any) -> Any:
    """The cascade's first stage for the ASR model ``spec`` (module docstring)."""
    if spec.startswith("hf:"):
        # A Whisper checkpoint by path or id, as before (its config is read at load time).
        return WhisperTranscriber(spec.removeprefix("hf:"), **kwargs)
    asr = create(spec)  # cheap: constructing an encoder loads nothing
    if isinstance(asr, WhisperEncoder) and asr.source is not None:
        return WhisperTranscriber(asr.source, **kwargs)
    if OutputType.TRANSCRIPT not in asr.produces:
        raise OptionError(
            f"cascade: ASR model {spec!r} is not a Whisper model or another speech recogniser "
            "(it produces no transcripts); name one such as whisper-large-v3 or transcript-truth"
        )
    if kwargs.get("language") is not None:
        raise OptionError(f"cascade: language= applies to Whisper only, not to {spec!r}")
    if asr.reads_transcript:
        return TranscriptProducer(asr)  # the oracle: no weights, no device
    options = {k: kwargs[k] for k in ("device", "dtype", "revision") if kwargs.get(k) is not None}
    return TranscriptProducer(create(spec, **options))


def cascade_encoder(argument: str, create: CreateModel, /, **kwargs: Any) -> CascadeEncoder:
    """``cascade:<asr>+<text model>``, e.g. ``cascade:whisper-large-v3+clap``.

    ``create`` builds the two parts by name; the registry passes its own
    ``models.create``, so this module does not import the registry.
    """
    asr, sep, text = argument.rpartition("+")
    if not sep or not asr or not text:
        raise OptionError(
            f"cascade:{argument}: expected cascade:<asr model>+<text model>, "
            "e.g. cascade:whisper-large-v3+clap"
        )
    common = {k: kwargs.pop(k) for k in ("device", "dtype", "pooling") if k in kwargs}
    revision = kwargs.pop("revision", None)  # the ASR model's
    kwargs.pop("trust_remote_code", None)  # both parts are built by their registered names
    options = CascadeEncoder.parse_options(kwargs, name=f"cascade:{argument}")
    assert isinstance(options, CascadeEncoder.Options)
    device = common.get("device", "cpu")
    dtype = common.get("dtype")
    text_encoder = create(text, device=device, dtype=dtype)
    if Modality.TEXT not in text_encoder.meta.modalities:
        raise OptionError(f"cascade:{argument}: {text!r} has no text encoder")
    transcriber = _asr_stage(
        asr, create, revision=revision, device=device, dtype=dtype, language=options.language
    )
    oracle = isinstance(transcriber, TranscriptProducer) and transcriber.encoder.reads_transcript
    meta = CascadeEncoder.meta.model_copy(
        update={
            "name": f"cascade:{argument}",
            "source": argument,
            "revision": text_encoder.revision or "main",
            "sample_rate": transcriber.sample_rate,
            "embedding_dim": text_encoder.meta.embedding_dim,
            "description": f"{asr} transcripts embedded by {text}'s text side.",
        }
    )
    return (OracleCascadeEncoder if oracle else CascadeEncoder)(
        meta=meta,
        transcriber=transcriber,
        text_encoder=text_encoder,
        asr=asr,
        text_model=text,
        **common,
        **options.model_dump(),
    )
