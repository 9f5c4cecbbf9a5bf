"""Transformers encoders on tiny random-weight checkpoints, loaded through the hub code path."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from audiobench import registry
from audiobench.audio import Clip, FileAudioRef, decode_clip
from audiobench.encoder import Modality, OutputKind
from audiobench.models.loading import ModelLoadError, resolve_dtype
from audiobench.probes.paper import valid_frames
from tests.conftest import write_tone
from tests.tiny_models import loaded

Tiny = Callable[[str], Path]

#: kind → (encoder class name, output kind, frames of a 0.5 s clip or None when fixed)
EXPECTED = {
    "whisper": ("WhisperEncoder", OutputKind.SEQUENCE),
    "wavlm": ("FrameEncoder", OutputKind.SEQUENCE),
    "wav2vec2": ("FrameEncoder", OutputKind.SEQUENCE),
    "hubert": ("FrameEncoder", OutputKind.SEQUENCE),
    "clap": ("ClapEncoder", OutputKind.VECTOR),
    "encodec": ("EncodecEncoder", OutputKind.SEQUENCE),
    "ast": ("ASTEncoder", OutputKind.SEQUENCE),
}


def noise(seconds: float, rate: int, seed: int = 0) -> np.ndarray:
    return (0.1 * np.random.default_rng(seed).standard_normal(int(seconds * rate))).astype(
        np.float32
    )


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_hf_loader_detects_architecture_shapes_determinism_and_batching(
    kind: str, tiny: Tiny
) -> None:
    encoder = loaded(f"hf:{tiny(kind)}")
    cls_name, output_kind = EXPECTED[kind]
    assert type(encoder).__name__ == cls_name
    assert encoder.meta.output_kind == output_kind
    rate = encoder.meta.sample_rate
    waves = [noise(d, rate, seed=i) for i, d in enumerate((0.4, 0.7, 0.9))]

    raw = encoder.encode_audio(waves)
    assert len(raw) == 3
    if output_kind == OutputKind.VECTOR:
        assert all(z.shape == (16,) for z in raw)
    else:
        assert all(z.ndim == 2 and z.shape[1] == encoder.meta.embedding_dim for z in raw)

    batched = encoder.embed(waves)
    one_by_one = [encoder.embed([w])[0] for w in waves]
    again = encoder.embed(waves)
    for a, b, c in zip(batched, one_by_one, again, strict=True):
        np.testing.assert_array_equal(a, c)  # determinism: same clips, same vectors
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)  # batching changes nothing
    assert encoder.parameter_count() and encoder.parameter_count() > 0


def test_frame_models_trim_padding_frames(tiny: Tiny) -> None:
    for kind in ("wavlm", "wav2vec2", "hubert"):
        encoder = loaded(f"hf:{tiny(kind)}")
        out = encoder.encode_audio([noise(0.5, 16000), noise(1.0, 16000)])
        # 25 ms receptive field, 20 ms stride: 0.5 s → 24 frames, 1 s → 49 frames.
        assert [z.shape[0] for z in out] == [24, 49], kind


def test_whisper_pads_to_window_and_pools_mean_time_feat(tiny: Tiny) -> None:
    encoder = loaded(f"hf:{tiny('whisper')}")
    assert encoder.pooling.name == "mean_time_feat"
    wave = noise(0.5, 16000)
    z = encoder.encode_audio([wave])[0]
    assert z.shape == (50, 32)  # the tiny model's whole window, like 1500 × d for large-v3
    pooled = encoder.embed([wave])[0]
    np.testing.assert_allclose(pooled, np.concatenate([z.mean(axis=0), z.mean(axis=1)]), atol=1e-6)

    masked = loaded(f"hf:{tiny('whisper')}", pooling="masked:mean_time")
    # 0.5 s = 8000 samples = 50 mel frames → 25 encoder frames hold audio.
    assert masked.n_valid_frames(8000) == 25
    np.testing.assert_allclose(masked.embed([wave])[0], z[:25].mean(axis=0), atol=1e-6)


def test_whisper_long_clip_policies(tiny: Tiny) -> None:
    wave = noise(2.5, 16000)
    truncate = loaded(f"hf:{tiny('whisper')}")
    z = truncate.encode_audio([wave])[0]
    assert z.shape[0] == 50
    np.testing.assert_allclose(z, truncate.encode_audio([wave[:16000]])[0], atol=1e-5)
    notes = truncate.pop_notes()
    assert notes == [
        "1 clip(s): longer than the 1 s window; only the start was encoded "
        "(model option long_clips=chunk encodes all of it)"
    ]

    chunk = loaded(f"hf:{tiny('whisper')}", long_clips="chunk")
    z = chunk.encode_audio([wave])[0]
    assert z.shape[0] == 150  # three windows, concatenated in time
    np.testing.assert_allclose(z[50:100], chunk.encode_audio([wave[16000:32000]])[0], atol=1e-5)
    assert chunk.n_valid_frames(len(wave)) == 100 + 25
    assert chunk.pop_notes() == []


def test_declared_token_facts_match_the_outputs(tiny: Tiny) -> None:
    """What token probes leave out: AST's two prefix tokens, Whisper's padding frames."""
    ast = loaded(f"hf:{tiny('ast')}")
    assert ast.meta.n_prefix_tokens == 2 and ast.meta.padded_frame_rate is None
    z = ast.encode_audio([noise(0.5, 16000)])[0]
    config = ast.model.config
    patches = ((config.num_mel_bins - config.patch_size) // config.frequency_stride + 1) * (
        (config.max_length - config.patch_size) // config.time_stride + 1
    )
    assert z.shape[0] == 2 + patches  # class and distillation tokens, then the patches
    np.testing.assert_allclose(ast.embed([noise(0.5, 16000)])[0], z[0], atol=1e-6)  # CLS

    for long_clips in ("truncate", "chunk"):
        whisper = loaded(f"hf:{tiny('whisper')}", long_clips=long_clips)
        rate = whisper.meta.padded_frame_rate
        assert rate == 50.0 and whisper.meta.n_prefix_tokens == 0
        for n_samples in (160, 8000, 11_683, 16_000, 40_000):
            frames = min(
                valid_frames(n_samples / 16000, rate), 50 if long_clips == "truncate" else 150
            )
            assert frames == whisper.n_valid_frames(n_samples), (long_clips, n_samples)


def test_layer_option_selects_hidden_states(tiny: Tiny) -> None:
    path = tiny("wavlm")
    wave = [noise(0.5, 16000)]
    last = loaded(f"hf:{path}").encode_audio(wave)[0]
    first = loaded(f"hf:{path}", layer=0).encode_audio(wave)[0]
    minus_one = loaded(f"hf:{path}", layer=-1).encode_audio(wave)[0]
    two = loaded(f"hf:{path}", layer=2).encode_audio(wave)[0]
    assert first.shape == last.shape and not np.allclose(first, last)
    np.testing.assert_array_equal(minus_one, two)  # 3 hidden states: -1 is the third
    with pytest.raises(ValueError, match=r"hidden states 0\.\.2 .* layer=7 is out of range"):
        loaded(f"hf:{path}", layer=7).encode_audio(wave)


def test_registered_name_loads_local_weights_through_the_same_path(tiny: Tiny) -> None:
    encoder = loaded("whisper-tiny", weights=str(tiny("whisper")))
    assert encoder.meta.name == "whisper-tiny" and encoder.source == str(tiny("whisper"))
    z = encoder.encode_audio([noise(0.3, 16000)])[0]
    assert z.shape == (50, 32)
    assert encoder.describe()["source"] == str(tiny("whisper"))


def test_missing_model_names_what_was_tried_and_how_to_fix_it(tmp_path: Path) -> None:
    encoder = registry.models.create("whisper-large-v3", revision="abc123")
    with pytest.raises(ModelLoadError) as info:
        encoder.load()
    message = str(info.value)
    assert "openai/whisper-large-v3" in message
    assert "revision 'abc123'" in message
    assert "offline mode on" in message and "HF_HOME=" in message
    assert "--weights DIR" in message and "--revision" in message

    with pytest.raises(ModelLoadError, match=r"local directory .*not found"):
        registry.models.create(f"hf:{tmp_path / 'nowhere'}")


def test_unknown_option_is_an_error_naming_the_accepted_ones(tiny: Tiny) -> None:
    with pytest.raises(ValueError, match=r"no option\(s\) \['layr'\].*'layer'.*'long_clips'"):
        registry.models.create("whisper-tiny", layr=3)
    with pytest.raises(ValueError, match=r"no option\(s\) \['layer'\]; it accepts none"):
        registry.models.create("log-mel", layer=3)


def test_resampled_inputs_match_native_rate(tiny: Tiny, tmp_path: Path) -> None:
    encoder = loaded(f"hf:{tiny('whisper')}")
    embeddings = {}
    for rate in (8000, 16000, 44100):
        path = write_tone(tmp_path / f"tone{rate}.wav", freq=500.0, seconds=0.5, sr=rate)
        clip = Clip(id=f"t{rate}", audio=FileAudioRef(path))
        wave = decode_clip(clip, 16000, encoder.meta.sample_rate)
        assert abs(len(wave) - 8000) <= 1
        embeddings[rate] = encoder.embed([wave])[0]
    for rate in (8000, 44100):
        a, b = embeddings[rate], embeddings[16000]
        cosine = float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
        assert cosine > 0.99, (rate, cosine)


def test_clap_text_tower_and_deterministic_crops(tiny: Tiny) -> None:
    encoder = loaded(f"hf:{tiny('clap')}")
    assert Modality.TEXT in encoder.meta.modalities
    text = encoder.encode_text(["a dog", "bird call", "a dog"])
    assert text.shape == (3, 16)
    np.testing.assert_array_equal(text[0], text[2])

    wave = noise(2.0, 48000)
    centred = encoder.encode_audio([wave])[0]
    np.testing.assert_allclose(
        centred, encoder.encode_audio([wave[24000:72000]])[0], rtol=1e-5, atol=1e-6
    )
    seeded = loaded(f"hf:{tiny('clap')}", crop="seeded", seed=3)
    np.testing.assert_array_equal(seeded.encode_audio([wave])[0], seeded.encode_audio([wave])[0])
    with pytest.raises(ValueError, match="crop must be"):
        registry.models.create(f"hf:{tiny('clap')}", crop="random")


def test_encodec_codes_latents_and_round_trip(tiny: Tiny) -> None:
    path = tiny("encodec")
    wave = noise(0.5, 24000)
    codes_encoder = loaded(f"hf:{path}", output="codes", bandwidth=3.0)
    assert codes_encoder.meta.output_kind == OutputKind.TOKENS
    codes = codes_encoder.encode_audio([wave])[0]
    # hop 8·5·4·2 = 320 samples: 12000 samples → 38 frames; 3 kbps at 75 Hz, 6 bits → 6 codebooks.
    assert codes.shape == (38, 6) and codes.dtype == np.int64
    assert codes.min() >= 0 and codes.max() < 64
    assert codes_encoder.bits_per_second() == pytest.approx(6 * 6 * 75)

    decoded = codes_encoder.decode([codes])[0]
    assert decoded.shape == (38 * 320,) and np.isfinite(decoded).all()
    np.testing.assert_array_equal(decoded, codes_encoder.decode([codes])[0])

    latents_encoder = loaded(f"hf:{path}")
    latents = latents_encoder.encode_audio([wave])[0]
    assert latents.shape == (38, 16)
    audio = latents_encoder.decode([latents])[0]
    assert audio.shape == (38 * 320,) and np.isfinite(audio).all()

    with pytest.raises(ValueError, match=r"bandwidth 5 kbps is not one of"):
        registry.models.create(f"hf:{path}", output="codes", bandwidth=5.0).load()


def test_dtype_resolution_and_bfloat16_on_cpu(tiny: Tiny) -> None:
    assert resolve_dtype(None, "cpu") == "float32"
    assert resolve_dtype(None, "cuda:0") == "float16"
    assert resolve_dtype("fp32", "cuda") == "float32"
    with pytest.raises(ValueError, match="unknown dtype"):
        resolve_dtype("int8", "cpu")
    path = tiny("hubert")
    wave = [noise(0.5, 16000)]
    full = loaded(f"hf:{path}").embed(wave)[0]
    half = loaded(f"hf:{path}", dtype="bf16").embed(wave)[0]
    assert half.dtype == np.float32
    cosine = float(full @ half / np.linalg.norm(full) / np.linalg.norm(half))
    assert cosine > 0.99


def test_encoders_are_loaded_by_their_user_and_carry_their_own_metadata(tiny: Tiny) -> None:
    from audiobench.models.encodec import EncodecEncoder

    path = tiny("encodec")
    encoder = registry.models.create(f"hf:{path}", output="codes")
    assert type(encoder) is EncodecEncoder  # an instance of the architecture, no class made
    assert encoder.meta.name == f"hf:{path}" and encoder.meta.output_kind == OutputKind.TOKENS
    assert EncodecEncoder.meta.name == "encodec-24khz"  # the declared default is untouched
    assert EncodecEncoder.meta.output_kind == OutputKind.SEQUENCE
    wave = [noise(0.2, 24000)]
    with pytest.raises(RuntimeError, match=r"model 'hf:.*' is not loaded; call load\(\) first"):
        encoder.encode_audio(wave)
    encoder.load()
    encoder.load()  # once: the second call does nothing
    assert encoder.encode_audio(wave)[0].dtype == np.int64


def test_option_text_is_coerced_and_fingerprints_the_same(tiny: Tiny) -> None:
    path = f"hf:{tiny('wavlm')}"
    as_text = registry.models.create(path, layer="1")
    assert as_text.params == {"layer": 1}
    assert as_text.fingerprint() == registry.models.create(path, layer=1).fingerprint()
    with pytest.raises(ValueError, match=r"layer must be a valid integer.*got 'one'"):
        registry.models.create(path, layer="one")
