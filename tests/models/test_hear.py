"""The hear: adapter, against a small HEAR-style module written by the test."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from audiobench import registry
from audiobench.audio import Clip, FileAudioRef
from audiobench.encoder import OutputKind
from audiobench.runner import CachedEmbedder
from tests.conftest import write_tone
from tests.tiny_models import loaded

MODULE = textwrap.dedent(
    '''
    """A HEAR 2021 module: 20 ms frames, a fixed random projection of |rfft|."""
    import torch

    HOP = 441  # 10 ms at 44.1 kHz
    calls = []


    class Model(torch.nn.Module):
        sample_rate = 44100
        scene_embedding_size = 8
        timestamp_embedding_size = 8

        def __init__(self):
            super().__init__()
            generator = torch.Generator().manual_seed(0)
            self.proj = torch.nn.Parameter(torch.randn(2 * HOP // 2 + 1, 8, generator=generator))


    def load_model(model_file_path=""):
        calls.append(("load", model_file_path))
        return Model()


    def get_timestamp_embeddings(audio, model):
        calls.append(("timestamp", tuple(audio.shape)))
        frames = audio.unfold(1, 2 * HOP, HOP)
        emb = torch.fft.rfft(frames).abs() @ model.proj
        times = torch.arange(emb.shape[1]) * HOP / model.sample_rate * 1000.0
        return emb, times.expand(audio.shape[0], -1)


    def get_scene_embeddings(audio, model):
        calls.append(("scene", tuple(audio.shape)))
        emb, _ = get_timestamp_embeddings(audio, model)
        return emb.mean(dim=1)
    '''
)


@pytest.fixture
def hear_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    name = f"hear_tiny_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def test_hear_scene_embeddings_resampled_to_the_module_rate(
    hear_module: str, tmp_path: Path
) -> None:
    encoder = registry.models.create(f"hear:{hear_module}", weights="weights.bin")
    assert encoder.meta.sample_rate == 44100
    assert encoder.meta.output_kind == OutputKind.VECTOR and encoder.meta.embedding_dim == 8
    module = encoder.module  # type: ignore[attr-defined]
    assert module.calls[0] == ("load", "weights.bin")

    clips = [
        Clip(id=f"c{i}", audio=FileAudioRef(write_tone(tmp_path / f"{i}.wav", freq=f, sr=16000)))
        for i, f in enumerate((300.0, 300.0, 2000.0))
    ]
    clips.append(
        Clip(id="long", audio=FileAudioRef(write_tone(tmp_path / "l.wav", seconds=0.8, sr=8000)))
    )
    kept, vectors = CachedEmbedder(encoder, None, allow_duplicates=True).embed(clips, "hear")
    assert [c.id for c in kept] == ["c0", "c1", "c2", "long"]
    assert all(v.shape == (8,) for v in vectors)
    np.testing.assert_allclose(vectors[0], vectors[1], rtol=1e-5)  # same tone, same vector
    assert not np.allclose(vectors[0], vectors[2])
    # The API takes one tensor per call: equal lengths together, at 44.1 kHz (the two
    # identical clips are encoded once).
    shapes = [shape for kind, shape in module.calls if kind == "scene"]
    assert sorted(shapes) == [(1, 35280), (2, 22050)]


def test_hear_timestamp_mode_gives_frame_sequences(hear_module: str) -> None:
    encoder = loaded(f"hear:{hear_module}", mode="timestamp")
    assert encoder.meta.output_kind == OutputKind.SEQUENCE
    assert encoder.pooling.name == "mean_time"
    wave = np.random.default_rng(0).standard_normal(44100).astype(np.float32)
    z = encoder.encode_audio([wave])[0]
    assert z.shape == (99, 8)
    np.testing.assert_allclose(encoder.embed([wave])[0], z.mean(axis=0), rtol=1e-6)


def test_hear_errors_name_the_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="cannot import the module 'no_such_hear_module'"):
        registry.models.create("hear:no_such_hear_module")
    (tmp_path / "half_hear.py").write_text("def load_model(path=''):\n    return None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match=r"does not follow the HEAR API; missing \['get_scene"):
        registry.models.create("hear:half_hear")
