"""Token maps of a patch grid padded in time: which patches the paper protocol keeps."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from audiobench.audio import Clip, FileAudioRef
from audiobench.encoder import ModelMeta, OutputKind, PatchGrid
from audiobench.probes.paper import token_map
from audiobench.probes.tokens import token_maps as _token_maps

#: 3 frequency rows × 5 time columns; column c reads input frames [10c, 10c + 16) of a
#: 56-frame window; 100 frames per second, 25 ms each (AST's filterbank frames).
GRID = PatchGrid(
    rows=3,
    columns=5,
    column_stride=10,
    patch_frames=16,
    window_frames=56,
    frame_rate=100.0,
    frame_length=0.025,
)


def sequence(n_prefix: int = 2, grid: PatchGrid = GRID, dim: int = 2) -> np.ndarray:
    """Token ``i`` is ``[i, i, ...]``, so a map's first column lists the indices it kept."""
    n = n_prefix + grid.n_patches
    return np.repeat(np.arange(n, dtype=np.float32)[:, None], dim, axis=1)


def kept(frames: np.ndarray) -> list[int]:
    return [int(v) for v in frames[:, 0]]


def test_clip_covering_two_and_a_bit_columns_keeps_three_columns_of_every_row() -> None:
    """Tokens 0, 1: prefix. Patches, frequency-major: token 2 + row · 5 + column.

      row 0: 2  3  4  5  6
      row 1: 7  8  9 10 11
      row 2: 12 13 14 15 16

    A clip with 23 valid input frames covers 2.3 columns: columns 0, 1, 2 start at frames 0,
    10, 20 < 23 and are kept (column 2 reads frames 20..35, three of them audio); columns 3 and
    4 start at 30 and 40, past the audio, and read only padding.
    """
    frames = sequence()
    assert kept(token_map(frames, n_prefix=2, n_valid=23, grid=GRID)) == [
        *(2, 3, 4),
        *(7, 8, 9),
        *(12, 13, 14),
    ]
    # A column starting exactly at the valid count holds only padding.
    assert kept(token_map(frames, n_prefix=2, n_valid=20, grid=GRID)) == [2, 3, 7, 8, 12, 13]
    assert kept(token_map(frames, n_prefix=2, n_valid=21, grid=GRID)) == [
        *(2, 3, 4),
        *(7, 8, 9),
        *(12, 13, 14),
    ]
    assert kept(token_map(frames, n_prefix=2, n_valid=1, grid=GRID)) == [2, 7, 12]
    assert kept(token_map(frames, n_prefix=2, n_valid=40, grid=GRID)) == [
        *(2, 3, 4, 5),
        *(7, 8, 9, 10),
        *(12, 13, 14, 15),
    ]
    # From frame 41 on every column holds audio: all 15 patches, as the model gives them.
    for n_valid in (41, 56, None):
        full = token_map(frames, n_prefix=2, n_valid=n_valid, grid=GRID)
        assert kept(full) == list(range(2, 17)) and np.shares_memory(full, frames)
    # No prefix: the same columns, the indices shifted by two.
    bare = sequence(n_prefix=0)
    assert kept(token_map(bare, n_valid=23, grid=GRID)) == [0, 1, 2, 5, 6, 7, 10, 11, 12]


def test_valid_frames_count_whole_filterbank_frames() -> None:
    """``1 + floor((s − 0.025) · 100)`` frames, at least 1, at most the window's 56: at 16 kHz
    ``1 + (n − 400) // 160`` for a clip of ``n ≥ 400`` samples."""
    assert GRID.valid_frames(3920 / 16000) == 23  # 400 + 22 · 160 samples: 23 frames
    assert GRID.valid_frames(3919 / 16000) == 22  # one sample short of the 23rd
    assert GRID.valid_frames(4079 / 16000) == 23
    assert GRID.valid_frames(0.245) == 23  # 0.245 - 0.025 is a hair below 0.22 in floating point
    assert GRID.valid_frames(400 / 16000) == 1
    assert GRID.valid_frames(0.01) == 1  # shorter than a frame: the encoder pads it to one
    assert GRID.valid_frames(0.0) == 1
    assert GRID.valid_frames(0.575) == 56  # fills the window
    assert GRID.valid_frames(10.0) == 56  # over it: cut to it
    for n_samples in range(400, 10_000, 37):
        assert GRID.valid_frames(n_samples / 16000) == min(56, 1 + (n_samples - 400) // 160)
    assert [GRID.valid_columns(n) for n in (1, 10, 11, 20, 21, 40, 41, 56)] == [
        *(1, 1, 2, 2, 3, 4, 5, 5)
    ]
    with pytest.raises(ValueError, match="seconds >= 0"):
        GRID.valid_frames(-1.0)


def test_grid_token_map_refuses_outputs_that_do_not_fill_the_grid() -> None:
    frames = sequence()
    with pytest.raises(ValueError, match=r"14 token\(s\) after the 2 prefix .* 3 × 5 = 15"):
        token_map(frames[:-1], n_prefix=2, n_valid=23, grid=GRID)
    with pytest.raises(ValueError, match=r"16 token\(s\) after the 2 prefix .* 3 × 5 = 15"):
        token_map(np.concatenate([frames, frames[:1]]), n_prefix=2, grid=GRID)
    with pytest.raises(ValueError, match="no more than the 2 prefix"):
        token_map(frames[:2], n_prefix=2, grid=GRID)


def test_grid_declarations_are_checked() -> None:
    with pytest.raises(ValidationError, match="read 57 frames, more than the window's 56"):
        PatchGrid(**{**GRID.model_dump(), "patch_frames": 17})
    with pytest.raises(ValidationError, match=r"padded_frame_rate .* or patch_grid"):
        ModelMeta(
            name="both",
            sample_rate=16000,
            output_kind=OutputKind.SEQUENCE,
            padded_frame_rate=50.0,
            patch_grid=GRID,
        )
    meta = ModelMeta(
        name="grid", sample_rate=16000, output_kind=OutputKind.SEQUENCE, patch_grid=GRID
    )
    assert meta.patch_grid == GRID and meta.padded_frame_rate is None


# ---------------------------------------------------------------------------- the family's cut


def embedder(durations: dict[str, float], **meta: Any) -> Any:
    return SimpleNamespace(
        encoder=SimpleNamespace(meta=SimpleNamespace(name="gridded", **meta)),
        durations=durations,
    )


def clip(clip_id: str) -> Clip:
    return Clip(id=clip_id, audio=FileAudioRef(Path(f"/nowhere/{clip_id}.wav")))


def test_token_maps_leave_out_the_padding_columns_and_count_them() -> None:
    clips = [clip("short"), clip("long"), clip("tiny")]
    # 23 frames (3 columns), the whole window (5 columns), 1 frame (1 column).
    durations = {"short": 3920 / 16000, "long": 12.0, "tiny": 0.005}
    frames = [sequence(), sequence(), sequence()]
    maps, info = _token_maps(
        clips, frames, embedder(durations, n_prefix_tokens=2, patch_grid=GRID), "T"
    )
    assert [kept(m) for m in maps] == [
        [2, 3, 4, 7, 8, 9, 12, 13, 14],
        list(range(2, 17)),
        [2, 7, 12],
    ]
    assert info == {
        "n_prefix_tokens": 2,
        "padded_frame_rate": None,
        "n_tokens": 9 + 15 + 3,
        "n_left_out": 3 * 17 - (9 + 15 + 3),
        "patch_grid": GRID.model_dump(),
    }


def test_token_map_errors_name_the_clip() -> None:
    meta = {"n_prefix_tokens": 2, "patch_grid": GRID}
    durations = {"a": 0.3, "b": 0.3}
    with pytest.raises(ValueError, match=r"T: clip 'b': the output has 13 token\(s\) after"):
        _token_maps(
            [clip("a"), clip("b")], [sequence(), sequence()[2:]], embedder(durations, **meta), "T"
        )
    with pytest.raises(ValueError, match=r"T: clip 'a': need seconds >= 0"):
        _token_maps([clip("a")], [sequence()], embedder({"a": -1.0}, **meta), "T")
    with pytest.raises(ValueError, match=r"no decoded duration .* 'c'"):
        _token_maps([clip("c")], [sequence()], embedder(durations, **meta), "T")
