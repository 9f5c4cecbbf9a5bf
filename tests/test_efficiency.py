"""Efficiency figures: FLOP counting, compression ratio, out-of-memory batch halving."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
import torch

import audiobench
from audiobench.audio import Clip, FileAudioRef
from audiobench.efficiency import (
    count_flops,
    count_flops_per_second,
    pcm_compression_ratio,
    recurrent_flops,
    waveform_compression_ratio,
)
from audiobench.encoder import Encoder, ModelMeta, OutputKind
from audiobench.models.baselines import LogMelEncoder
from audiobench.runner import BatchSizeWarning, CachedEmbedder, is_out_of_memory
from tests.conftest import write_tone
from tests.encoders import StatsEncoder


class LinearFrames(Encoder):
    """Non-overlapping 10 ms frames through one Linear layer: FLOPs are known by hand."""

    meta = ModelMeta(name="test-linear-frames", sample_rate=16000, output_kind=OutputKind.SEQUENCE)

    def _load(self) -> None:
        self.layer = torch.nn.Linear(160, 8)

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        out = []
        for w in waveforms:
            frames = torch.as_tensor(w[: len(w) // 160 * 160]).reshape(-1, 160)
            out.append(self.layer(frames).detach().numpy())
        return out


def test_flops_per_second_matches_hand_count() -> None:
    # 1 s = 100 frames; a Linear(160 → 8) costs 2·160·8 FLOPs per frame (multiply + add).
    flops = count_flops_per_second(LinearFrames(), seconds=2.0)
    assert flops == pytest.approx(100 * 2 * 160 * 8)


def test_flops_of_dsp_baseline_are_not_reported_as_zero() -> None:
    assert count_flops_per_second(LogMelEncoder(), seconds=1.0) is None


def test_flops_per_example_is_one_forward_pass() -> None:
    # 0.5 s = 50 frames of 2·160·8 FLOPs.
    assert count_flops(LinearFrames(), seconds=0.5) == pytest.approx(50 * 2 * 160 * 8)
    assert count_flops(LogMelEncoder(), seconds=0.5) is None


class LstmFrames(LinearFrames):
    """10 ms frames through an LSTM, then the Linear layer: the counter sees only the Linear."""

    meta = ModelMeta(name="test-lstm-frames", sample_rate=16000, output_kind=OutputKind.SEQUENCE)

    def _load(self) -> None:
        super()._load()
        self.lstm = torch.nn.LSTM(160, 160, batch_first=True)

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        out = []
        for w in waveforms:
            frames = torch.as_tensor(w[: len(w) // 160 * 160]).reshape(1, -1, 160)
            hidden, _ = self.lstm(frames)
            out.append(self.layer(hidden[0]).detach().numpy())
        return out


def test_recurrent_layers_are_counted_by_formula_not_left_out() -> None:
    # The counter alone sees the Linear layer only (50 · 2·160·8); the LSTM's gates add
    # 50 steps · 2 · 4 gates · 160 hidden · (160 input + 160 hidden).
    linear = 50 * 2 * 160 * 8
    lstm = 50 * 2 * 4 * 160 * (160 + 160)
    assert count_flops(LstmFrames(), seconds=0.5) == pytest.approx(linear + lstm)
    # The hook is removed afterwards: a plain encoder counts as before.
    assert count_flops(LinearFrames(), seconds=0.5) == pytest.approx(linear)


def test_recurrent_flops_by_hand() -> None:
    x = torch.zeros(2, 7, 10)  # batch 2, 7 steps, 10 features (batch_first)
    gru = torch.nn.GRU(10, 6, num_layers=2, bidirectional=True, batch_first=True)
    # Layer 0 reads 10 features, layer 1 the 2·6 of both directions; 3 gates; 2 directions.
    per_step = 2 * 3 * 6 * ((10 + 6) + (12 + 6))
    assert recurrent_flops(gru, (x,)) == 2 * 7 * 2 * per_step
    cell = torch.nn.RNNCell(10, 6)
    assert recurrent_flops(cell, (torch.zeros(3, 10),)) == 3 * 2 * 1 * 6 * 16
    # What the formula does not cover is unknown, never a guess.
    projected = torch.nn.LSTM(10, 6, proj_size=3)
    assert recurrent_flops(projected, (x,)) is None
    packed = torch.nn.utils.rnn.pack_padded_sequence(x, [7, 5], batch_first=True)
    assert recurrent_flops(gru, (packed,)) is None


class ProjectedLstmFrames(LstmFrames):
    def _load(self) -> None:
        self.layer = torch.nn.Linear(80, 8)
        self.lstm = torch.nn.LSTM(160, 160, batch_first=True, proj_size=80)


def test_flops_of_an_uncountable_recurrent_layer_are_unknown() -> None:
    # Not the Linear layer's count alone, which would be a wrong number: unknown.
    assert count_flops(ProjectedLstmFrames(), seconds=0.5) is None
    assert count_flops_per_second(ProjectedLstmFrames(), seconds=1.0) is None


def test_pcm_compression_ratio_against_16_bit_pcm() -> None:
    # A 512-float32 vector per 2 s clip: 1024 B/s; 16 kHz 16-bit PCM is 32000 B/s.
    assert pcm_compression_ratio(1024.0, 16000) == pytest.approx(31.25)
    with pytest.raises(ValueError):
        pcm_compression_ratio(0.0, 16000)


def test_waveform_compression_ratio_is_msebs_direction() -> None:
    # A 512-float32 vector (2048 B) of a 2 s clip at 16 kHz (32000 float32 samples, 128000 B).
    assert waveform_compression_ratio(2048, 32000) == pytest.approx(0.016)
    # An embedding as large as the waveform: 1; larger: above 1.
    assert waveform_compression_ratio(400, 100) == 1.0
    with pytest.raises(ValueError):
        waveform_compression_ratio(2048, 0)


class OutOfMemoryAbove(StatsEncoder):
    """Fails like a GPU does when a batch holds more than ``limit`` clips."""

    limit = 2

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        if len(waveforms) > self.limit:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return super().encode_audio(waveforms)


def _clips(tmp_path: Path, n: int) -> list[Clip]:
    return [
        Clip(
            id=f"c{i}",
            audio=FileAudioRef(write_tone(tmp_path / f"{i}.wav", freq=200.0 + 50 * i)),
        )
        for i in range(n)
    ]


def test_out_of_memory_halves_the_batch_and_says_so(tmp_path: Path) -> None:
    clips = _clips(tmp_path, 7)
    reference = CachedEmbedder(StatsEncoder(), None, batch_size=1).embed(clips, "ref")[1]
    encoder = OutOfMemoryAbove()
    embedder = CachedEmbedder(encoder, None, batch_size=8)
    with pytest.warns(BatchSizeWarning, match="out of memory on a batch of 7 clips"):
        kept, vectors = embedder.embed(clips, "oom")
    assert [c.id for c in kept] == [c.id for c in clips]
    for a, b in zip(vectors, reference, strict=True):
        np.testing.assert_array_equal(a, b)
    assert embedder.batch_size == 2
    assert embedder.stats.events[0].startswith("out of memory on a batch of 7 clips")
    assert max(encoder.calls) == 2  # after halving, no batch above the limit is tried again


def test_is_out_of_memory() -> None:
    assert is_out_of_memory(torch.cuda.OutOfMemoryError("x"))
    assert is_out_of_memory(RuntimeError("MPS backend out of memory"))
    assert not is_out_of_memory(RuntimeError("shape mismatch"))


def test_every_result_records_efficiency(tmp_path: Path, labelled_folder: Path) -> None:
    [result] = audiobench.evaluate(
        f"folder:{labelled_folder}",
        LinearFrames(pooling="mean_time"),
        output_dir=tmp_path / "out",
        progress=False,
        task_options={"n_permutations": 10, "n_bootstrap": 10},
    )
    eff = result.efficiency
    seconds = sum(0.3 + 0.05 * k for k in range(4)) * 3
    assert eff.embedding_size == 8
    assert eff.bytes_per_second == pytest.approx(12 * 8 * 4 / seconds)
    assert eff.pcm_compression_ratio == pytest.approx(32000 / eff.bytes_per_second)
    # MSEB's ratio, clip by clip: 32 embedding bytes over 4 bytes per sample at 16 kHz.
    per_clip = [32 / (4 * 16000 * (0.3 + 0.05 * k)) for k in range(4)]
    assert eff.compression_ratio == pytest.approx(sum(per_clip) / 4)
    assert eff.flops_per_second == pytest.approx(100 * 2 * 160 * 8)
    # One forward pass on the median clip (0.375 s, counted at 0.38 s: 38 frames).
    assert eff.flops_per_example == pytest.approx(38 * 2 * 160 * 8)
    assert eff.n_parameters is None  # the test encoder declares none
    assert eff.clips_per_s and eff.clips_per_s > 0 and eff.audio_seconds_per_s
    assert eff.peak_memory_mb and eff.peak_memory_mb > 0
    assert eff.batch_size == 16


class NotingEncoder(StatsEncoder):
    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        for w in waveforms:
            if len(w) > 0.4 * 16000:
                self.note("longer than 0.4 s; cut")
        return super().encode_audio(waveforms)


def test_encoder_notes_are_printed_and_recorded(tmp_path: Path, labelled_folder: Path) -> None:
    from io import StringIO

    from rich.console import Console

    buffer = StringIO()
    [result] = audiobench.evaluate(
        f"folder:{labelled_folder}",
        NotingEncoder(),
        output_dir=tmp_path / "out",
        progress=False,
        count_flops=False,
        task_options={"n_permutations": 10, "n_bootstrap": 10},
        console=Console(file=buffer, width=200),
    )
    # Clips of 0.45 s (one per class) exceed 0.4 s: three of them.
    assert result.details["run_notes"] == ["3 clip(s): longer than 0.4 s; cut"]
    assert "warning: test-stats: 3 clip(s): longer than 0.4 s; cut" in buffer.getvalue()


def test_peak_rss_is_a_peak_with_or_without_resource(monkeypatch: pytest.MonkeyPatch) -> None:
    import psutil

    from audiobench import efficiency

    block = np.ones(64 * 2**20 // 8)  # 64 MiB, touched
    held = psutil.Process().memory_info().rss
    peak = efficiency.peak_rss_bytes()
    assert peak >= held
    del block
    assert efficiency.peak_rss_bytes() >= peak  # freeing memory does not lower a peak
    # Where the OS keeps no peak (no resource module, no peak_wset), the largest RSS sampled
    # so far stands in: still never below what an earlier call reported.
    monkeypatch.setattr(efficiency, "resource", None)
    assert efficiency.peak_rss_bytes() >= peak
    assert efficiency.peak_memory_mb("cpu")["peak_memory_mb"] >= peak / 2**20


def test_efficiency_imports_without_the_unix_resource_module(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib
    import sys

    from audiobench import efficiency

    monkeypatch.setitem(sys.modules, "resource", None)  # as on Windows: import fails
    try:
        reloaded = importlib.reload(efficiency)
        assert reloaded.resource is None
        assert reloaded.peak_rss_bytes() > 0
    finally:
        monkeypatch.undo()
        importlib.reload(efficiency)
