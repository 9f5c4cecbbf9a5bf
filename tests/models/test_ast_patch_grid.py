"""AST's declared patch grid against a tiny random-weight ASTModel: count, order, padding."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from audiobench.audio import Clip, FileAudioRef
from audiobench.encoder import PatchGrid
from audiobench.probes.paper import token_map
from audiobench.probes.tokens import token_maps as _token_maps
from tests import tiny_models
from tests.tiny_models import loaded

#: 32 mel bands × 64 frames, 16 × 16 patches every 8 bands and 12 frames (overlapping in
#: both directions): (32 − 16) // 8 + 1 = 3 rows of (64 − 16) // 12 + 1 = 5 columns.
GRID = PatchGrid(
    rows=3,
    columns=5,
    column_stride=12,
    patch_frames=16,
    window_frames=64,
    frame_rate=100.0,
    frame_length=0.025,
)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_models.ast(
        tmp_path_factory.mktemp("tiny-ast-grid"),
        hidden_size=16,
        num_hidden_layers=1,
        intermediate_size=32,
        num_mel_bins=32,
        max_length=64,
        patch_size=16,
        frequency_stride=8,
        time_stride=12,
    )


def noise(n_samples: int, seed: int = 0) -> np.ndarray:
    return (0.1 * np.random.default_rng(seed).standard_normal(n_samples)).astype(np.float32)


def token_index(row: int, column: int) -> int:
    """Where patch (row, column) sits in AST's output: frequency-major after 2 prefix tokens."""
    return 2 + row * GRID.columns + column


def test_the_encoder_declares_its_checkpoint_grid(checkpoint: Path) -> None:
    from audiobench import registry

    # Read from the checkpoint's config before any weights are loaded, and kept on loading.
    assert registry.models.create(f"hf:{checkpoint}").meta.patch_grid == GRID
    encoder = loaded(f"hf:{checkpoint}")
    assert encoder.meta.n_prefix_tokens == 2 and encoder.meta.patch_grid == GRID
    z = encoder.encode_audio([noise(4000)])[0]
    assert z.shape[0] == 2 + GRID.n_patches  # class and distillation tokens, then the patches
    # The registered model declares the AudioSet grid until its weights say otherwise.
    other = loaded("ast", weights=str(checkpoint))
    assert other.meta.patch_grid == GRID and type(other).meta.patch_grid != GRID
    assert type(other).meta.patch_grid == PatchGrid(
        rows=12,
        columns=101,
        column_stride=10,
        patch_frames=16,
        window_frames=1024,
        frame_rate=100.0,
        frame_length=0.025,
    )


@pytest.mark.parametrize("n_samples", [400, 559, 560, 3999, 4000, 4079, 10_480, 10_640, 20_000])
def test_declared_valid_frames_are_the_extractor_frames(checkpoint: Path, n_samples: int) -> None:
    """The extractor pads its filterbank with zeros, normalised to one constant: the frames
    before that padding are the frames the grid counts for a clip of that duration."""
    encoder = loaded(f"hf:{checkpoint}")
    extractor = encoder.feature_extractor  # type: ignore[attr-defined]
    x = extractor([noise(n_samples)], sampling_rate=16000, return_tensors="np")["input_values"][0]
    assert x.shape == (64, 32)
    pad = extractor.normalize(np.zeros(32, dtype=np.float32))
    real = [not np.allclose(row, pad) for row in x]
    n_real = sum(real)
    assert real == [True] * n_real + [False] * (64 - n_real)  # audio first, then padding
    assert GRID.valid_frames(n_samples / 16000) == n_real == min(64, 1 + (n_samples - 400) // 160)


def test_grid_order_and_padding_columns_by_perturbing_the_input(checkpoint: Path) -> None:
    """The patch embeddings (hidden state 0: nothing mixes tokens yet) show which input frames
    and bands each token reads: changing only padding frames changes exactly the tokens of the
    columns that reach into the padding, and changing only the lowest bands exactly row 0."""
    encoder = loaded(f"hf:{checkpoint}", layer=0)
    model = encoder.model  # type: ignore[attr-defined]
    extractor = encoder.feature_extractor  # type: ignore[attr-defined]
    n_samples = 4000  # 23 frames: 2.3 columns of stride 12, i.e. columns 0 and 1 start in them
    n_valid = GRID.valid_frames(n_samples / 16000)
    assert n_valid == 23 and GRID.valid_columns(n_valid) == 2
    x = extractor([noise(n_samples)], sampling_rate=16000, return_tensors="pt")["input_values"]
    with torch.no_grad():
        z = model(input_values=x, output_hidden_states=True).hidden_states[0][0].numpy()
        padded = x.clone()
        padded[:, n_valid:, :] += torch.randn(1, 64 - n_valid, 32)
        z_padded = model(input_values=padded, output_hidden_states=True).hidden_states[0][0]
        low = x.clone()
        low[:, :, :8] += 1.0  # bands 0..7: row 0 alone reads them (row 1 starts at band 8)
        z_low = model(input_values=low, output_hidden_states=True).hidden_states[0][0].numpy()
    # The encoder returns these same tokens.
    np.testing.assert_allclose(encoder.encode_audio([noise(n_samples)])[0], z, atol=1e-5)

    changed = {i for i in range(z.shape[0]) if not np.allclose(z[i], z_padded.numpy()[i])}
    # Column c reads frames [12c, 12c + 16): every column but 0 reaches past frame 23.
    reaching = {token_index(r, c) for r in range(3) for c in range(5) if 12 * c + 16 > n_valid}
    assert changed == reaching
    assert {i for i in range(z.shape[0]) if not np.allclose(z[i], z_low[i])} == {
        token_index(0, c) for c in range(5)
    }

    # The token map keeps columns 0 and 1 of every row, in order; column 0 reads only audio,
    # so its tokens stay, and the left-out columns 2..4 read nothing but the padding.
    kept = token_map(z, n_prefix=2, n_valid=n_valid, grid=GRID)
    expected = [token_index(r, c) for r in range(3) for c in range(2)]
    np.testing.assert_array_equal(kept, z[expected])
    kept_padded = token_map(z_padded.numpy(), n_prefix=2, n_valid=n_valid, grid=GRID)
    np.testing.assert_array_equal(kept_padded[0::2], kept[0::2])  # column 0 of rows 0, 1, 2
    # Another clip of the same length: the left-out tokens are the same, the kept ones are not.
    other = extractor([noise(n_samples, seed=1)], sampling_rate=16000, return_tensors="pt")
    with torch.no_grad():
        z_other = model(**other, output_hidden_states=True).hidden_states[0][0].numpy()
    left_out = [token_index(r, c) for r in range(3) for c in range(2, 5)]
    np.testing.assert_array_equal(z_other[left_out], z[left_out])
    assert not np.allclose(z_other[expected], z[expected])


def test_family_token_maps_of_real_ast_outputs(checkpoint: Path) -> None:
    encoder = loaded(f"hf:{checkpoint}")
    lengths = {"short": 4000, "one-frame": 100, "full": 16_000}
    outputs = encoder.encode_audio([noise(n) for n in lengths.values()])
    clips = [Clip(id=k, audio=FileAudioRef(Path(f"/nowhere/{k}.wav"))) for k in lengths]
    embedder = SimpleNamespace(
        encoder=encoder, durations={k: n / 16000 for k, n in lengths.items()}
    )
    maps, info = _token_maps(clips, outputs, embedder, "T")  # type: ignore[arg-type]
    # 23 frames: 2 columns; one frame (a 100-sample clip is padded to one): 1; 64 frames: 5.
    assert [m.shape for m in maps] == [(3 * 2, 16), (3 * 1, 16), (3 * 5, 16)]
    assert info is not None and info["n_tokens"] == 3 * (2 + 1 + 5)
    assert info["n_left_out"] == 3 * 17 - 3 * (2 + 1 + 5)
    assert info["patch_grid"] == GRID.model_dump()
