"""The stability family (MSEB's): SpecAugment variants, hand-computed drifts, edge cases, CLI."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from audiobench.audio import ArrayAudioRef, Clip, FileAudioRef, load_waveform
from audiobench.encoder import OutputKind
from audiobench.families import StabilityTask
from audiobench.families.spec_augment import (
    SpecAugmentConfig,
    istft,
    spec_augment,
    stft,
    variant_seed,
)
from audiobench.results import load_result
from audiobench.runner import ProgressBar
from audiobench.task import Embedder, TaskFamily
from audiobench.tasks.stability import MockStability
from tests.conftest import write_tone
from tests.families.test_retrieval import FAST, meta, run_cli


class Stability(StabilityTask):
    metadata = meta("TestStability", TaskFamily.STABILITY, "Corpus_Mean_CED")


class Discrete(StabilityTask):
    options = StabilityTask.Options(representation="discrete", n_variants=2)
    metadata = meta("TestDiscreteStability", TaskFamily.STABILITY, "Corpus_Mean_UED")


class WaveEmbedder(Embedder):
    """Outputs computed from each clip's decoded waveform (and its id) by ``fn``."""

    def __init__(self, fn: Callable[[str, np.ndarray], Any], *, skip: Sequence[str] = ()) -> None:
        self.encoder = SimpleNamespace(meta=SimpleNamespace(name="wave"))  # type: ignore[assignment]
        self.durations: dict[str, float] = {}
        self.fn = fn
        self.skipped = set(skip)
        self.calls: list[tuple[list[str], bool]] = []

    def embed(
        self, clips: Sequence[Clip], description: str, *, pooled: bool = True
    ) -> tuple[list[Clip], list[Any]]:
        self.calls.append(([c.id for c in clips], pooled))
        kept = [c for c in clips if c.id not in self.skipped]
        return kept, [self.fn(c.id, load_waveform(c.audio, 16000, clip_id=c.id)) for c in kept]

    def with_encoder(self, encoder: Any, *, allow_duplicates: bool | None = None) -> Embedder:
        return self

    def track(self, description: str, total: int, unit: str) -> ProgressBar:
        return ProgressBar(total)


def utterances(tmp_path: Path, n: int = 2) -> list[Clip]:
    return [
        Clip(id=f"u{i}", audio=FileAudioRef(write_tone(tmp_path / f"u{i}.wav", freq=300 + 100 * i)))
        for i in range(n)
    ]


# -- the perturbation ----------------------------------------------------------------------------


def test_variant_seed_is_md5_of_id_and_index() -> None:
    expected = int(hashlib.md5(b"utt7_3").hexdigest(), 16) % 2**32
    assert variant_seed("utt7", 3) == expected
    assert variant_seed("utt7", 3) != variant_seed("utt7", 4)


def test_stft_matches_a_frame_by_frame_loop_and_inverts() -> None:
    x = np.random.default_rng(0).standard_normal(3000)
    n_fft, hop = 256, 64
    spectrum = stft(x, n_fft, hop)
    padded = np.pad(x, n_fft // 2)
    window = np.hanning(n_fft + 1)[:-1]  # the periodic Hann window
    for t in (0, 5, spectrum.shape[1] - 1):
        frame = padded[t * hop : t * hop + n_fft] * window
        np.testing.assert_allclose(spectrum[:, t], np.fft.rfft(frame), atol=1e-9)
    assert spectrum.shape == (n_fft // 2 + 1, 1 + len(x) // hop)
    np.testing.assert_allclose(istft(spectrum, hop, len(x)), x, atol=1e-9)


def test_no_mask_gives_the_signal_back() -> None:
    x = np.random.default_rng(1).standard_normal(16000).astype(np.float32) * 0.1
    config = SpecAugmentConfig(max_freq_mask_proportion=0.0, max_time_mask_proportion=0.0)
    out = spec_augment(x, config, np.random.default_rng(0))
    assert out.dtype == np.float32 and out.shape == x.shape
    np.testing.assert_allclose(out, x, atol=1e-6)


def test_masks_follow_the_draw_order() -> None:
    """An independent loop draws the masks in MSEB's order; the variant equals the masked STFT."""
    x = np.random.default_rng(2).standard_normal(20000).astype(np.float32) * 0.1
    config = SpecAugmentConfig(n_fft=512, hop_length=128, max_freq_mask_width=5)
    spectrum = stft(x, 512, 128)
    n_bins, n_frames = spectrum.shape
    rng = np.random.default_rng(99)
    keep = np.ones(spectrum.shape)
    share_f, share_t = rng.uniform(0, 0.15), rng.uniform(0, 0.20)
    for size, total, widest, axis in (
        (n_bins, int(n_bins * share_f), 5, 0),
        (n_frames, int(n_frames * share_t), 100, 1),
    ):
        done = 0
        while done < total:
            width = rng.integers(1, min(widest, total - done) + 1)
            start = rng.integers(0, size - width + 1)
            if axis == 0:
                keep[start : start + width] = 0
            else:
                keep[:, start : start + width] = 0
            done += width
    expected = istft(spectrum * keep, 128, x.size)
    out = spec_augment(x, config, np.random.default_rng(99))
    assert (keep == 0).any()
    np.testing.assert_allclose(out, expected, atol=1e-6)
    assert not np.allclose(out, x, atol=1e-3)


def test_variants_are_deterministic_and_named(tmp_path: Path) -> None:
    (clip,) = utterances(tmp_path, 1)
    first, again = Stability().variants(clip), Stability().variants(clip)
    assert [v.id for v in first] == [f"u0_aug_{i}" for i in range(5)]
    for a, b in zip(first, again, strict=True):
        assert isinstance(a.audio, ArrayAudioRef) and a.audio.sample_rate == 16000
        np.testing.assert_array_equal(a.audio.samples, b.audio.samples)
    assert not np.array_equal(first[0].audio.samples, first[1].audio.samples)
    assert len(Stability(n_variants=2).variants(clip)) == 2


# -- scoring -------------------------------------------------------------------------------------


def test_a_perturbation_invariant_encoder_is_perfectly_stable(tmp_path: Path) -> None:
    # The output depends on the clip's length only, which SpecAugment keeps.
    fake = WaveEmbedder(lambda _id, w: np.full((3, 2), len(w) / 16000.0, dtype=np.float32))
    result = Stability().evaluate(fake, utterances(tmp_path))
    report = result.scores["default"]
    for name in ("CED", "DTW", "L2"):
        assert report[f"Corpus_Mean_{name}"] == 0.0 and report[f"Mean_Local_IS_{name}"] == 0.0
    assert report["n_utterances"] == 2 and report["n_pairs"] == 10
    assert result.main_score == 0.0
    assert fake.calls[0] == (["u0", "u1"], False)  # frames, not pooled vectors
    assert len(fake.calls[1][0]) == 10  # the variants, in one call
    assert Stability.score_problems(result.scores) == []


def test_drifts_by_hand(tmp_path: Path) -> None:
    # Clean [[1, 0]], every variant [[0, 1]]: CED substitutes at √2 (< 2 + 2 for delete and
    # insert), normalised by 2·1; DTW √2; L2 the 2-norm of [[-1, 1]] = √2.
    fake = WaveEmbedder(lambda i, _w: np.array([[0.0, 1.0]] if "_aug_" in i else [[1.0, 0.0]]))
    report = Stability().evaluate(fake, utterances(tmp_path)).scores["default"]
    assert report["Corpus_Mean_CED"] == pytest.approx(np.sqrt(2) / 2)
    assert report["Corpus_Mean_DTW"] == pytest.approx(np.sqrt(2))
    assert report["Corpus_Mean_L2"] == pytest.approx(np.sqrt(2))
    assert report["Mean_Local_IS_CED_std"] == 0.0  # every variant drifts the same


def test_l2_is_the_matrix_two_norm_not_frobenius(tmp_path: Path) -> None:
    # Clean I₂, variants all zero: the difference I₂ has 2-norm 1 (Frobenius √2); L_ref = 2.
    fake = WaveEmbedder(lambda i, _w: np.zeros((2, 2)) if "_aug_" in i else np.eye(2))
    report = Stability(n_variants=1).evaluate(fake, utterances(tmp_path, 1)).scores["default"]
    assert report["Corpus_Mean_L2"] == pytest.approx(0.5)


def test_pooled_outputs_are_one_frame(tmp_path: Path) -> None:
    fake = WaveEmbedder(lambda i, _w: np.array([0.0, 2.0] if "_aug_" in i else [1.0, 0.0]))
    report = Stability(outputs="pooled").evaluate(fake, utterances(tmp_path)).scores["default"]
    assert fake.calls[0][1] is True
    assert report["Corpus_Mean_L2"] == pytest.approx(np.sqrt(5))


def test_discrete_codes_by_hand(tmp_path: Path) -> None:
    # Clean codes 1 2 3, variants 1 2 4: one substitution in three units.
    fake = WaveEmbedder(lambda i, _w: np.array([1, 2, 4] if "_aug_" in i else [1, 2, 3]))
    result = Discrete().evaluate(fake, utterances(tmp_path))
    report = result.scores["default"]
    assert report["Corpus_Mean_UED"] == pytest.approx(1 / 3)
    assert "Corpus_Mean_CED" not in report and result.main_score == pytest.approx(1 / 3)
    # [T, Q] codes: a frame's Q codes are one unit.
    frames = WaveEmbedder(lambda i, _w: np.array([[1, 2], [3, 5 if "_aug_" in i else 4]]))
    assert Discrete().evaluate(frames, utterances(tmp_path)).main_score == pytest.approx(0.5)


def test_unembedded_clips_and_variants_are_counted(tmp_path: Path) -> None:
    fake = WaveEmbedder(lambda _i, _w: np.ones((1, 2)), skip=["u1", "u0_aug_4"])
    report = Stability().evaluate(fake, utterances(tmp_path)).scores["default"]
    assert report["n_unembedded"] == 1 and report["n_variants_unembedded"] == 1
    assert report["n_utterances"] == 1 and report["n_pairs"] == 4


def test_the_wrong_kind_of_encoder_is_refused() -> None:
    def encoder(kind: OutputKind) -> Any:
        return SimpleNamespace(meta=SimpleNamespace(name="m", output_kind=kind))

    with pytest.raises(ValueError, match="returns codes"):
        Stability.check_encoder(encoder(OutputKind.TOKENS))
    with pytest.raises(ValueError, match="returns vectors"):
        Discrete.check_encoder(encoder(OutputKind.SEQUENCE))
    Stability.check_encoder(encoder(OutputKind.SEQUENCE))
    assert Stability().embedding_passes(encoder(OutputKind.SEQUENCE)) == (False,)
    assert Stability(outputs="pooled").embedding_passes(encoder(OutputKind.VECTOR)) == (True,)
    Discrete.check_encoder(encoder(OutputKind.TOKENS))


def test_options_and_main_scores_are_checked() -> None:
    with pytest.raises(ValueError, match="hop_length"):
        Stability(n_fft=256, hop_length=512)
    # the refusal every evaluated family makes when the options leave its main score unreported
    with pytest.raises(ValueError, match="leave its main score 'Corpus_Mean_CED' unreported"):
        Stability(representation="discrete")
    with pytest.raises(ValueError, match="main score 'Corpus_Mean_UED'"):

        class _Bad(StabilityTask):
            metadata = meta("TestBadStability", TaskFamily.STABILITY, "Corpus_Mean_UED")


def test_a_report_holds_one_representation(tmp_path: Path) -> None:
    fake = WaveEmbedder(lambda _i, _w: np.ones((1, 2)))
    scores = Stability().evaluate(fake, utterances(tmp_path)).scores
    scores["default"] |= {"Corpus_Mean_UED": 0.0, "Mean_Local_IS_UED": 0.0}
    assert any("not both" in p for p in Stability.score_problems(scores))


def test_mock_runs_with_log_mel_and_validates(tmp_path: Path) -> None:
    code, out = run_cli(
        "evaluate", "--task", "MockStability", "--model", "log-mel",
        "--output-dir", str(tmp_path), *FAST,
    )  # fmt: skip
    assert code == 0, out
    (path,) = tmp_path.glob("*/*/MockStability.json")
    result = load_result(path)
    report = result.scores["default"]
    assert report["n_utterances"] == 8 and report["n_pairs"] == 40
    assert 0.0 < result.main_score == report["Corpus_Mean_CED"] < 1.0
    assert result.details["evaluator"]["name"] == "mseb"
    assert not MockStability.metadata.higher_is_better
    code, out = run_cli("results", "validate", str(path))
    assert code == 0 and "1 result file(s) valid" in out, out
