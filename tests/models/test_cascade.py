"""cascade:<asr>+<text model>: Whisper transcripts embedded by a text tower."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from audiobench import registry
from audiobench.encoder import Modality
from tests.tiny_models import loaded


class FixedTranscriber:
    """Transcribes clip i of every batch as a fixed sentence."""

    sample_rate = 16000

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = list(texts)

    def transcribe(self, waveforms: Sequence[np.ndarray]) -> list[str]:
        return self.texts[: len(waveforms)]

    def describe(self) -> dict[str, str]:
        return {"source": "fixed"}


def test_cascade_composes_registered_models(tiny: Callable[[str], Path]) -> None:
    whisper, clap = tiny("whisper"), tiny("clap")
    encoder = loaded(f"cascade:hf:{whisper}+hf:{clap}")
    assert Modality.TEXT in encoder.meta.modalities
    assert encoder.meta.sample_rate == 16000 and encoder.meta.embedding_dim == 16
    rng = np.random.default_rng(0)
    waves = [(0.1 * rng.standard_normal(n)).astype(np.float32) for n in (8000, 12000)]
    vectors = encoder.embed(waves)
    assert [v.shape for v in vectors] == [(16,), (16,)]
    transcripts = encoder.last_transcripts  # type: ignore[attr-defined]
    assert len(transcripts) == 2 and all(isinstance(t, str) for t in transcripts)
    # The audio side is exactly the text side applied to the transcripts.
    np.testing.assert_allclose(
        np.stack(vectors), encoder.encode_text(transcripts), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_array_equal(np.stack(vectors), np.stack(encoder.embed(waves)))
    assert encoder.parameter_count() and encoder.parameter_count() > 0


def test_cascade_audio_embedding_is_the_text_embedding_of_the_transcript(
    tiny: Callable[[str], Path],
) -> None:
    encoder = loaded(f"cascade:hf:{tiny('whisper')}+hf:{tiny('clap')}")
    encoder.transcriber = FixedTranscriber(["a dog", "bird call"])  # type: ignore[attr-defined]
    audio = np.stack(encoder.encode_audio([np.zeros(800, np.float32)] * 2))
    np.testing.assert_allclose(audio, encoder.encode_text(["a dog", "bird call"]), rtol=1e-6)


def test_cascade_errors(tiny: Callable[[str], Path]) -> None:
    with pytest.raises(ValueError, match=r"expected cascade:<asr model>\+<text model>"):
        registry.models.create("cascade:whisper-tiny")
    with pytest.raises(ValueError, match="'log-mel' has no text encoder"):
        registry.models.create(f"cascade:hf:{tiny('whisper')}+log-mel")
    with pytest.raises(ValueError, match="is not a Whisper model"):
        registry.models.create(f"cascade:log-mel+hf:{tiny('clap')}")
