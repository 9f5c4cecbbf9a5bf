"""Numbers users can trust: encoders identified by content, deterministic, failing clearly."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

import audiobench
from audiobench import registry
from audiobench.cache import EmbeddingCache
from audiobench.cli import app
from audiobench.encoder import DeviceError, check_device
from audiobench.models import digest
from audiobench.runner import CachedEmbedder
from audiobench.sources import load_folder_clips
from tests.encoders import StatsEncoder
from tests.hostile.files import tone_folder
from tests.tiny_models import build, encodec, loaded, rewrite_weights

Tiny = Callable[[str], Path]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Tiny:
    root = tmp_path_factory.mktemp("tiny-hostile")
    return lambda kind: build(kind, root)


def noise(n_samples: int, seed: int) -> np.ndarray:
    return (0.1 * np.random.default_rng(seed).standard_normal(n_samples)).astype(np.float32)


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


# -- 1. local weights are identified by their content ---------------------------------------


def test_weights_rewritten_in_place_are_encoded_again(tiny: Tiny, tmp_path: Path) -> None:
    weights = tmp_path / "my-wavlm"
    shutil.copytree(tiny("wavlm"), weights)
    clips = load_folder_clips(tone_folder(tmp_path / "clips", n=4))

    def embed(name: str, **options: str) -> tuple[CachedEmbedder, list[np.ndarray]]:
        with EmbeddingCache(tmp_path / "cache") as cache:
            embedder = CachedEmbedder(registry.models.create(name, **options), cache)
            _, arrays = embedder.embed(clips, "")
        return embedder, arrays

    first, before = embed(f"hf:{weights}")
    assert (first.stats.n_encoded, first.stats.n_cached) == (4, 0)
    again, same = embed(f"hf:{weights}")
    assert (again.stats.n_encoded, again.stats.n_cached) == (0, 4)  # unchanged: cached
    for a, b in zip(before, same, strict=True):
        np.testing.assert_array_equal(a, b)

    size = (weights / "model.safetensors").stat().st_size
    rewrite_weights(weights, seed=1)  # in place: same path, same size, other numbers
    assert (weights / "model.safetensors").stat().st_size == size
    after_embedder, after = embed(f"hf:{weights}")
    assert (after_embedder.stats.n_encoded, after_embedder.stats.n_cached) == (4, 0)
    assert after_embedder.encoder.fingerprint() != first.encoder.fingerprint()
    for old, new in zip(before, after, strict=True):
        assert not np.allclose(old, new)

    # --weights DIR of a registered model is identified the same way.
    registered, _ = embed("wavlm-large", weights=str(weights))
    rewrite_weights(weights, seed=2)
    rewritten, _ = embed("wavlm-large", weights=str(weights))
    assert (rewritten.stats.n_encoded, rewritten.stats.n_cached) == (4, 0)
    described = rewritten.encoder.describe()
    assert described["source"] == str(weights)
    assert described["weights_digest"] != registered.encoder.describe()["weights_digest"]


def test_an_unchanged_directory_is_not_hashed_again(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    weights = tmp_path / "w"
    shutil.copytree(tiny("hubert"), weights)
    hashed: list[str] = []
    real = digest.file_sha256
    monkeypatch.setattr(digest, "file_sha256", lambda p: hashed.append(p.name) or real(p))

    first = registry.models.create(f"hf:{weights}").describe()["weights_digest"]
    assert sorted(hashed) == ["config.json", "model.safetensors", "preprocessor_config.json"]
    assert digest.index_path().is_file()
    hashed.clear()
    assert registry.models.create(f"hf:{weights}").describe()["weights_digest"] == first
    assert hashed == []  # one stat per file, no reading
    (weights / "README.md").write_text("notes")  # documentation is not part of the weights
    assert registry.models.create(f"hf:{weights}").describe()["weights_digest"] == first
    rewrite_weights(weights, seed=3)
    changed = registry.models.create(f"hf:{weights}").describe()["weights_digest"]
    assert changed != first and changed.startswith("sha256:")
    assert sorted(hashed) == ["config.json", "model.safetensors"]  # what save_pretrained rewrote


def test_hub_ids_keep_their_fingerprints() -> None:
    # Values of the code before local weights were digested: hub caches stay valid.
    expected = {
        "wavlm-large": ("a76dc058ebc1a511c7bb538cf6af8fc7", "8227c013c75d4fd100358043cb8ddf7b"),
        "encodec-24khz": ("6df5a7b0d2d68446929d392db4b46e7e", "a374115d1bd7283dbaf2177218e05eab"),
        "whisper-tiny": ("aee99c0d6c0a56168a234152e52fe254", "2ffd995e643f0843a6e8262671d7eee0"),
        "log-mel": ("40c92295b507aca0b107bd542cd7700c", "a5450d8c214cb826233ac28f68444810"),
    }
    for name, (pooled, unpooled) in expected.items():
        encoder = registry.models.create(name)
        assert "weights_digest" not in encoder.describe()
        assert (encoder.fingerprint(), encoder.fingerprint(pooled=False)) == (pooled, unpooled)
    codes = registry.models.create("encodec-24khz", output="codes")
    assert codes.fingerprint() == "a9d5bf662f1b4e30fbd4e669dfc0e940"
    other_hub_id = registry.models.create("wavlm-large", weights="org/other")
    assert other_hub_id.fingerprint() == "9342692117ddd890f366a2007155ace4"


# -- 2. one-line errors for user mistakes -----------------------------------------------------


def _no_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


def test_cuda_without_cuda_stops_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_cuda(monkeypatch)
    root = tone_folder(tmp_path / "clips")
    out = tmp_path / "results"
    args = ["evaluate", "--task", f"folder:{root}", "--model", "log-mel", "--device", "cuda"]
    result = CliRunner().invoke(app, [*args, "--output-dir", str(out), "--no-progress"])
    assert result.exit_code == 1
    [line] = result.stderr.splitlines()  # nothing ran: the error is all there is
    assert line.startswith(
        "error: device 'cuda' requested, but CUDA is not available on this machine: "
    )
    assert line.endswith("; use --device cpu")
    assert not out.exists()

    with pytest.raises(DeviceError, match=r"^device 'cuda:1' requested, but CUDA is not"):
        audiobench.evaluate(f"folder:{root}", "random-projection", device="cuda:1", output_dir=out)
    assert not out.exists()


def test_device_check(monkeypatch: pytest.MonkeyPatch) -> None:
    check_device("cpu")
    with pytest.raises(DeviceError, match=r"^unknown device 'gpu'; use cpu, cuda, cuda:N"):
        check_device("gpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    check_device("cuda:0")
    with pytest.raises(
        DeviceError,
        match=r"^device 'cuda:2' requested, but this machine has 1 CUDA device\(s\) "
        r"\(cuda:0 to cuda:0\)$",
    ):
        check_device("cuda:2")
    _no_cuda(monkeypatch)
    with pytest.raises(DeviceError, match="CUDA is not available"):
        registry.models.create("log-mel", device="cuda").load()  # the API user's way in


@pytest.mark.parametrize(
    "weights", ["/no/such/weights", "./no-such-weights", "~/no-such-wts", "a/b/c"]
)
def test_a_bad_weights_path_is_a_missing_directory(weights: str, tmp_path: Path) -> None:
    root = tone_folder(tmp_path / "clips")
    args = ["evaluate", "--task", f"folder:{root}", "--model", "wavlm-large"]
    result = CliRunner().invoke(
        app, [*args, "--weights", weights, "--output-dir", str(tmp_path / "r"), "--no-progress"]
    )
    assert result.exit_code == 1
    resolved = Path(weights).expanduser().resolve()
    assert error_lines(result.stderr) == [
        f"error: weights {weights!r}: local directory {resolved} not found (this is a path, "
        "so it is not looked up on the hub)"
    ]
    assert "hub id" not in result.stderr and "HF_HOME" not in result.stderr


def test_weights_that_are_a_file_or_hf_path_missing(tmp_path: Path) -> None:
    file = tmp_path / "model.safetensors"
    file.write_bytes(b"x")
    with pytest.raises(OSError, match=r"^weights '.*model.safetensors': .* is a file, not a dir"):
        registry.models.create("whisper-tiny", weights=str(file))
    missing = tmp_path / "gone"
    with pytest.raises(
        OSError, match=rf"^model 'hf:{missing}': local directory {missing} not found \(this is"
    ):
        registry.models.create(f"hf:{missing}")


class _Exploding(StatsEncoder):
    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        raise RuntimeError("kernel exploded on this input\n  second line of the framework's error")


def test_an_encoder_failure_is_one_line_naming_the_clips(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(registry.models._resolvers, "exploding", lambda _, **kw: _Exploding(**kw))
    root = tone_folder(tmp_path / "clips", n=3)
    args = ["evaluate", "--task", f"folder:{root}", "--model", "exploding:x", "--no-flops"]
    result = CliRunner().invoke(app, [*args, "--output-dir", str(tmp_path / "r"), "--no-progress"])
    assert result.exit_code == 1
    assert error_lines(result.stderr) == [
        f"error: clip 'c0' (file {(root / 'c0.wav').resolve()}): encoder failed on a batch "
        "with clips 'c0', 'c1', 'c2': RuntimeError: kernel exploded on this input [...]"
    ]
    assert "second line" not in result.stderr

    skipped = CliRunner().invoke(
        app, [*args, "--output-dir", str(tmp_path / "s"), "--no-progress", "--on-error", "skip"]
    )
    assert skipped.exit_code == 1  # nothing left to score, but every clip was named
    assert "second line" not in skipped.stderr


# -- 3. a clip's embedding does not depend on its batch ---------------------------------------

FAMILIES = ["whisper", "wavlm", "wav2vec2", "hubert", "clap", "encodec", "ast"]
DSP = ["log-mel", "mfcc", "random-projection"]


@pytest.mark.parametrize("family", FAMILIES + DSP)
def test_batched_and_one_by_one_agree_with_a_too_short_clip(family: str, tiny: Tiny) -> None:
    encoder = loaded(family if family in DSP else f"hf:{tiny(family)}")
    rate = encoder.meta.sample_rate
    # 100 samples: under one frame of every family (25 ms windows, EnCodec's 320-sample hop).
    waves = [noise(rate // 2, 0), noise(100, 1), noise(rate * 4 // 5, 2), noise(rate, 3)]
    for method in (encoder.encode_audio, encoder.embed):
        batched = method(waves)
        alone = [method([w])[0] for w in waves]
        for i, (a, b) in enumerate(zip(batched, alone, strict=True)):
            assert a.shape == b.shape, (method.__name__, i)
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5, err_msg=f"{method} clip {i}")


@pytest.mark.parametrize("family", ["wavlm", "wav2vec2", "hubert", "ast"])
def test_a_too_short_clip_is_zero_padded_to_one_frame(family: str, tiny: Tiny) -> None:
    encoder = loaded(f"hf:{tiny(family)}")
    short = noise(100, 1)
    padded = np.concatenate([short, np.zeros(300, np.float32)])  # 400 samples: 25 ms
    z = encoder.encode_audio([short, noise(16000, 2)])[0]
    np.testing.assert_allclose(z, encoder.encode_audio([padded])[0], rtol=1e-5, atol=1e-6)
    if family != "ast":
        assert z.shape == (1, 32)
    notes = encoder.pop_notes()
    assert any(
        n.startswith("1 clip(s): shorter than") and "400 samples (25 ms); zero-padded" in n
        for n in notes
    ), notes


# -- 4. EnCodec's default bandwidth follows the checkpoint -----------------------------------


def test_encodec_default_bandwidth_adapts_to_the_checkpoint(tmp_path: Path) -> None:
    path = encodec(tmp_path / "encodec-no-6", bandwidths=(1.5, 3.0, 12.0))
    clips = load_folder_clips(tone_folder(tmp_path / "clips", n=3))
    for name, options in ((f"hf:{path}", {}), ("encodec-24khz", {"weights": str(path)})):
        encoder = registry.models.create(name, output="codes", **options)
        assert encoder.params == {"output": "codes", "bandwidth": 3.0}
        assert encoder.pop_notes() == [
            "the checkpoint has no 6 kbps bandwidth; using 3 kbps, the closest of "
            "[1.5, 3.0, 12.0] (recorded in params)"
        ]
        embedder = CachedEmbedder(encoder, None)
        _, codes = embedder.embed(clips, "", pooled=False)
        assert embedder.stats.n_encoded == 3 and embedder.stats.skipped == []
        assert all(c.shape[1] == 6 for c in codes)  # 3 kbps at 75 Hz, 6-bit codebooks: 6
    latents = loaded(f"hf:{path}")
    assert latents.params == {"output": "latents", "bandwidth": 3.0}
    assert latents.encode_audio([noise(2400, 0)])[0].shape == (8, 16)
    with pytest.raises(ValueError, match=r"bandwidth 6 kbps is not one of the model's \[1.5, 3"):
        registry.models.create(f"hf:{path}", output="codes", bandwidth=6.0)
    with pytest.raises(ValueError, match=r"bandwidth 6 kbps is not one of"):
        registry.models.create("encodec-24khz", weights=str(path), bandwidth="6")


def test_encodec_bandwidth_is_settled_at_load_when_unknown_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from audiobench.models.encodec import EncodecEncoder, default_bandwidth

    assert default_bandwidth([1.5, 3.0, 6.0, 12.0]) == 6.0
    assert default_bandwidth([1.5, 3.0, 9.0]) == 3.0  # a tie goes to the lower
    assert default_bandwidth([12.0, 24.0]) == 12.0
    path = encodec(tmp_path / "encodec-high", bandwidths=(12.0, 24.0))
    # As for a hub id: the configuration is known only once loaded.
    monkeypatch.setattr(EncodecEncoder, "_declared_bandwidths", lambda self: None)
    encoder = registry.models.create("encodec-24khz", weights=str(path), output="codes")
    assert encoder.bandwidth == 6.0
    encoder.load()
    assert encoder.bandwidth == 12.0 and encoder.params["bandwidth"] == 12.0
    # 12 kbps at 75 Hz with 6-bit codebooks: 26 codebooks.
    assert encoder.encode_audio([noise(2400, 0)])[0].shape == (8, 26)
    asked = registry.models.create("encodec-24khz", weights=str(path), bandwidth=6)
    with pytest.raises(ValueError, match=r"bandwidth 6 kbps is not one of the model's \[12.0"):
        asked.load()
