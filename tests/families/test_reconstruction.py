"""Reconstruction: hand-computed scores with fake codecs, bad input, tasks, and CLI runs."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from audiobench import registry
from audiobench.audio import Clip, decode_clip
from audiobench.benchmark import get_benchmark
from audiobench.cli import app
from audiobench.encoder import Encoder, ModelMeta, OutputKind
from audiobench.families.reconstruction import SI_SDR_CAP_DB, ReconstructionTask
from audiobench.metrics import polynomial_mmd, reconstruction_embedding_scores
from audiobench.models.baselines import LogMelEncoder, log_mel_spectrogram
from audiobench.results import load_result, result_path
from audiobench.runner import CachedEmbedder
from audiobench.task import DatasetSource, TaskFamily, TaskMetadata
from audiobench.tasks.reconstruction import ESC50Reconstruction, MockReconstruction
from tests.hub_copy import write_hub_like
from tests.tiny_models import build

RATE = 16000


class FakeCodec(Encoder):
    """Waveform in, waveform out: the "latent" is the waveform itself, ``[T, 1]``."""

    meta = ModelMeta(
        name="fake-codec",
        revision="t1",
        sample_rate=RATE,
        output_kind=OutputKind.SEQUENCE,
        embedding_dim=1,
        can_decode=True,
        default_pooling="mean_time",
    )
    options = ()

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        return [np.asarray(w, dtype=np.float32)[:, None] for w in waveforms]

    def rebuild(self, wave: np.ndarray) -> np.ndarray:
        return wave

    def decode(self, outputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        return [self.rebuild(np.asarray(z)[:, 0]) for z in outputs]


class HalfGain(FakeCodec):
    def rebuild(self, wave: np.ndarray) -> np.ndarray:
        return 0.5 * wave


def hum(n: int) -> np.ndarray:
    return (0.05 * np.sin(2 * np.pi * 1234.0 * np.arange(n) / RATE)).astype(np.float32)


class Humming(FakeCodec):
    """Adds a fixed 1234 Hz tone: SI-SDR computable by hand."""

    def rebuild(self, wave: np.ndarray) -> np.ndarray:
        return wave + hum(len(wave))


class Short(FakeCodec):
    def rebuild(self, wave: np.ndarray) -> np.ndarray:
        return wave[:-100]


class Long(FakeCodec):
    def rebuild(self, wave: np.ndarray) -> np.ndarray:
        return np.concatenate([wave, np.ones(37, dtype=wave.dtype)])


class Broken(FakeCodec):
    def rebuild(self, wave: np.ndarray) -> np.ndarray:
        out = wave.copy()
        out[3] = np.nan
        return out


class Lossy(FakeCodec):
    """Drops the last clip of each batch."""

    def decode(self, outputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        return super().decode(outputs)[:-1]


class Unfinished(FakeCodec):
    def decode(self, outputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        return Encoder.decode(self, outputs)


class Quantiser(FakeCodec):
    """Integer codes [T, 2] for 160-sample frames (100 frames/s), 16 levels per codebook."""

    meta = FakeCodec.meta.model_copy(update={"name": "fake-quantiser", "output_kind": "tokens"})
    codebook_size: int | None = 16

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        out = []
        for w in waveforms:
            n = -(-len(w) // 160)
            frames = np.pad(w, (0, n * 160 - len(w))).reshape(n, 160)
            level = np.clip(((frames.mean(axis=1) + 0.01) * 800).astype(int), 0, 15)
            out.append(np.stack([level, 15 - level], axis=1).astype(np.int64))
        return out

    def decode(self, outputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        return [np.repeat(z[:, 0] / 800.0 - 0.01, 160).astype(np.float32) for z in outputs]


class UnsizedQuantiser(Quantiser):
    codebook_size = None


class NominalRate(FakeCodec):
    def bits_per_second(self) -> float:
        return 1500.0


class Stats(Encoder):
    """Reference model: [rms, peak, mean |x|] per clip."""

    meta = ModelMeta(
        name="test-reference", revision="r1", sample_rate=RATE, output_kind=OutputKind.VECTOR
    )

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        return [
            np.array([np.sqrt(np.mean(w**2)), np.abs(w).max(), np.abs(w).mean()], dtype=np.float64)
            for w in waveforms
        ]


@pytest.fixture(autouse=True)
def registered_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cheap ``Stats`` reference model, by its registry name."""
    monkeypatch.setitem(registry.models._loaded, Stats.meta.name, Stats)


@pytest.fixture(scope="module")
def clips() -> list[Clip]:
    """Four generated calls, one per call type (the mock's twelve make slow tests)."""
    return MockReconstruction().load_data()[::3]


@pytest.fixture(scope="session")
def tiny_encodec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build("encodec", tmp_path_factory.mktemp("tiny-recon"))


def run(codec: Encoder, clips: list[Clip], **options: Any) -> Any:
    """Evaluate ``codec``; the reference model is the cheap ``Stats`` unless one is given."""
    defaults = {"reference_model": Stats.meta.name, "reference_pooling": None}
    task = MockReconstruction(options={**defaults, **options})
    return task.evaluate(CachedEmbedder(codec, None, canonical_rate=RATE), clips)


def originals(clips: list[Clip]) -> list[np.ndarray]:
    return [decode_clip(c, RATE, RATE).astype(np.float64) for c in clips]


def test_identity_codec_is_perfect_and_si_sdr_is_capped(clips: list[Clip]) -> None:
    out = run(FakeCodec(), clips, reference_model="log-mel", reference_pooling="mean_time")
    group = out.scores["default"]
    assert group["n_clips"] == len(clips) == 4
    assert group["fad"] == pytest.approx(0.0, abs=1e-6) and out.main_score == group["fad"]
    assert group["embedding_mse"]["max"] == 0.0
    assert group["log_mel_distance"]["max"] == 0.0
    # An exact reconstruction has SI-SDR +inf: reported at the cap, and counted.
    assert group["si_sdr"]["mean"] == group["si_sdr"]["min"] == SI_SDR_CAP_DB
    assert group["si_sdr"]["n_capped"] == 4
    assert group["bits_per_second"] is None
    assert "continuous latents" in out.details["bitrate"]["default"]["reason"]
    assert out.details["reference_model"] == {
        "name": "log-mel",
        "revision": "v1",
        "pooling": "mean_time",
        "sample_rate": 16000,
        "embedding_dim": 128,
    }
    assert group["length_matching"]["n_trimmed"] == 0
    assert MockReconstruction.score_problems(out.scores) == []


def test_half_gain_hand_computed(clips: list[Clip]) -> None:
    """Y = X / 2 in a linear reference space: FAD = (‖μ‖² + Tr Σ) / 4, MSE = mean(x²) / 4.

    MSEB's FAD adds ε = 1e-6 to both covariance diagonals inside the matrix square root; with
    Σ's eigenvalues λ the square-root term is Σ √((λ + ε)(λ/4 + ε)) (λ/2 at ε = 0).
    """
    out = run(HalfGain(), clips)
    group = out.scores["default"]
    X = np.array([Stats().encode_audio([w])[0] for w in originals(clips)])
    mu, cov = X.mean(axis=0), np.cov(X, rowvar=False)
    lam = np.linalg.eigvalsh(cov)
    eps = 1e-6
    with_eps = 0.25 * mu @ mu + 1.25 * lam.sum() - 2 * np.sqrt((lam + eps) * (lam / 4 + eps)).sum()
    assert group["fad"] == pytest.approx(with_eps, rel=1e-6)
    assert group["fad"] == pytest.approx(0.25 * (mu @ mu + np.trace(cov)), rel=1e-3)
    assert group["embedding_mse"]["mean"] == pytest.approx(0.25 * np.mean(X**2), rel=1e-6)
    # Scale-invariant: a gain change alone is a perfect SI-SDR.
    assert group["si_sdr"]["n_capped"] == 4
    # Halving the amplitude lowers every log-mel bin by 20·log10(2) dB, clip maxima included.
    assert group["log_mel_distance"]["mean"] == pytest.approx(20 * math.log10(2), abs=1e-3)
    assert group["log_mel_distance"]["std"] == pytest.approx(0.0, abs=1e-3)
    # kid_poly by brute force: unbiased MMD² with k(x, y) = (x·y / d + 1)³.
    Y = 0.5 * X
    k = lambda A, B: (A @ B.T / 3 + 1) ** 3  # noqa: E731
    m = len(X)
    off = lambda K: (K.sum() - np.trace(K)) / (m * (m - 1))  # noqa: E731
    expected = off(k(X, X)) + off(k(Y, Y)) - 2 * k(X, Y).mean()
    assert group["kid_poly"] == pytest.approx(expected, rel=1e-6)
    assert out.details["reference_model"]["name"] == "test-reference"


def test_si_sdr_and_log_mel_distance_brute_force(clips: list[Clip]) -> None:
    out = run(Humming(), clips)
    expected_sdr, expected_mel = [], []
    for s in originals(clips):
        est = s + hum(len(s))
        s0, e0 = s - s.mean(), est - est.mean()
        target = (e0 @ s0) / (s0 @ s0) * s0
        expected_sdr.append(10 * np.log10((target @ target) / ((e0 - target) @ (e0 - target))))
        ref = log_mel_spectrogram(s, RATE).astype(np.float64)
        rec = log_mel_spectrogram(est, RATE).astype(np.float64)
        expected_mel.append(np.abs(ref - rec).mean())
    group = out.scores["default"]
    assert group["si_sdr"]["mean"] == pytest.approx(np.mean(expected_sdr), rel=1e-6)
    assert group["si_sdr"]["median"] == pytest.approx(np.median(expected_sdr), rel=1e-6)
    assert group["si_sdr"]["n_capped"] == 0
    assert group["log_mel_distance"]["mean"] == pytest.approx(np.mean(expected_mel), rel=1e-4)
    assert group["fad"] > 0


def test_lengths_are_matched_and_counted(clips: list[Clip]) -> None:
    short = run(Short(), clips).scores["default"]
    assert short["length_matching"]["n_padded"] == 4
    assert short["length_matching"]["max_padded_samples"] == 100
    assert short["si_sdr"]["n_capped"] == 0  # the missing tail counts as error
    long = run(Long(), clips).scores["default"]
    assert long["length_matching"]["n_trimmed"] == 4
    assert long["si_sdr"]["n_capped"] == 4  # the extra samples are cut away


def test_bits_per_second(clips: list[Clip]) -> None:
    coded = run(Quantiser(), clips)
    # 2 codebooks × log2(16) bits × frames per second; frames are ceil(n / 160).
    seconds = sum(len(w) for w in originals(clips)) / RATE
    frames = sum(-(-len(w) // 160) for w in originals(clips))
    assert coded.scores["default"]["bits_per_second"] == pytest.approx(2 * 4 * frames / seconds)
    assert coded.details["bitrate"]["default"]["codebook_size_from"] == "encoder.codebook_size"
    unsized = run(UnsizedQuantiser(), clips)
    assert "lower bound" in unsized.details["bitrate"]["default"]["codebook_size_from"]
    assert (
        unsized.scores["default"]["bits_per_second"] <= coded.scores["default"]["bits_per_second"]
    )
    nominal = run(NominalRate(), clips)
    assert nominal.scores["default"]["bits_per_second"] is None
    assert nominal.details["bitrate"]["default"]["nominal_bits_per_second"] == 1500.0


def test_bad_input_errors(clips: list[Clip]) -> None:
    with pytest.raises(ValueError, match=r"cannot decode embeddings back to audio"):
        run(registry.models.create("log-mel"), clips)
    with pytest.raises(ValueError, match=r"decoded non-finite samples for clip 'MOCK-REC-c00-00'"):
        run(Broken(), clips)
    with pytest.raises(RuntimeError, match=r"decoded 3 waveforms for 4 clips"):
        run(Lossy(), clips)
    with pytest.raises(ValueError, match=r"declares can_decode but cannot decode"):
        run(Unfinished(), clips)
    with pytest.raises(ValueError, match=r"at least 2"):
        run(FakeCodec(), clips[:1])


def test_score_problems() -> None:
    good = {
        "fad": 1.0,
        "kad": 0.01,
        "kid_poly": -0.01,  # unbiased and not clamped: may be negative
        "embedding_mse": {
            "mean": 1,
            "std": 0,
            "median": 1,
            "min": 1,
            "max": 1,
            "n_evaluated": 2,
            "n_skipped": 0,
        },
        "si_sdr": {"mean": 5, "std": 1, "median": 5, "min": 4, "max": 6, "n_capped": 0},
        "log_mel_distance": {"mean": 1, "std": 0, "median": 1, "min": 1, "max": 1},
        "bits_per_second": None,
        "length_matching": {"n_trimmed": 2, "n_padded": 0, "max_padded_samples": 0},
        "kad_bandwidth": 3.0,
        "n_frames_reference": 40,
        "n_frames_reconstructed": 40,
        "n_clips": 2,
    }
    task = MockReconstruction
    assert task.score_problems({"default": good}) == []
    assert task.score_problems({}) == []  # the (empty) aggregates
    bad = {
        **good,
        "fad": -1.0,
        "si_sdr": {**good["si_sdr"], "max": 200.0, "n_capped": -1},
        "bits_per_second": "fast",
    }
    problems = task.score_problems({"default": bad})
    for where in (
        "default.fad: Input should be greater than or equal to 0",
        "default.si_sdr.max: Input should be less than or equal to 100",
        "default.si_sdr.n_capped: Input should be greater than or equal to 0",
        "default.bits_per_second: Input should be a valid number",
    ):
        assert sum(p.startswith(where) for p in problems) == 1, (where, problems)
    assert len(problems) == 4
    assert task.score_problems({"default": {**good, "extra": 1}, "public": {}}) == [
        "default.extra: unknown field",
        "public: unknown subset; the task declares default",
    ]


def test_declared_tasks_and_benchmark() -> None:
    for cls in (ESC50Reconstruction, MockReconstruction):
        task = registry.tasks.create(cls.metadata.name)
        assert isinstance(task, cls) and task.metadata.family == TaskFamily.RECONSTRUCTION
        assert task.metadata.main_score == "fad"
    assert (
        ESC50Reconstruction.metadata.dataset.revision == "e3e2a63ffff66b9a9735524551e3818e96af03ee"
    )
    assert not ESC50Reconstruction.metadata.offline and MockReconstruction.metadata.offline
    bench = get_benchmark("Reconstruction")
    assert bench.tasks == ("ESC50Reconstruction",)
    assert [(c.aggregate, c.higher_is_better, c.percent) for c in bench.columns] == [
        (None, False, False)
    ]


def test_esc50_on_a_hub_like_copy(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    rows = [
        {
            "filename": f"1-{i}-A-0.wav",
            "fold": 1,
            "target": i % 2,
            "category": ["dog", "rain"][i % 2],
            "audio": ((0.1 * rng.standard_normal(22050)).astype(np.float32), 44100),
        }
        for i in range(4)
    ]
    root = write_hub_like(tmp_path / "esc50", rows)
    task = ESC50Reconstruction(
        dataset_path=root, options={"reference_model": "log-mel", "reference_pooling": "mean_time"}
    )
    loaded = task.load_data()
    assert [c.id for c in loaded] == [r["filename"] for r in rows]
    codec = HalfGain()
    out = task.evaluate(CachedEmbedder(codec, None, canonical_rate=24000), loaded)
    # The canonical rate is 24 kHz; the fake codec runs at 16 kHz and is compared there.
    assert out.details["compare_rate"] == RATE and out.scores["default"]["n_clips"] == 4
    assert out.scores["default"]["log_mel_distance"]["mean"] == pytest.approx(
        20 * math.log10(2), abs=1e-3
    )


def cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def test_cli_runs_with_tiny_encodec_and_refuses_log_mel(tiny_encodec: Path, tmp_path: Path) -> None:
    listed = cli("list", "tasks", "--type", "reconstruction", "--json")
    assert listed.exit_code == 0
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert {"ESC50Reconstruction", "MockReconstruction"} <= set(rows)
    assert rows["MockReconstruction"]["offline"] and not rows["ESC50Reconstruction"]["offline"]

    model = f"hf:{tiny_encodec}"
    common = ["--output-dir", str(tmp_path), "--no-progress", "--no-flops"]
    done = cli("evaluate", "--task", "MockReconstruction", "--model", model, "-o", "output=codes",
               "-o", "bandwidth=3", *common)  # fmt: skip
    assert done.exit_code == 0, done.stderr
    result = load_result(result_path(tmp_path, model, "main", "MockReconstruction"))
    group = result.scores["default"]
    assert result.main_score == group["fad"] and result.main_score_name == "fad"
    # 3 kbps at 75 frames/s with 64-entry codebooks: 6 codebooks × 6 bits × 75 Hz.
    assert group["bits_per_second"] == 2700.0
    assert group["length_matching"]["n_trimmed"] == 12  # EnCodec pads to whole frames
    assert MockReconstruction.score_problems(result.scores) == []

    refused = cli("evaluate", "--task", "MockReconstruction", "--model", "log-mel", *common)
    assert refused.exit_code == 1
    assert "model 'log-mel' cannot decode" in refused.stderr


def test_hand_made_task_metadata_validates() -> None:
    # A third party's reconstruction task: metadata plus a reference model.
    class Mine(ReconstructionTask):
        metadata = TaskMetadata(
            name="MyCodecSet",
            family=TaskFamily.RECONSTRUCTION,
            description="d",
            dataset=DatasetSource(kind="folder", path="/nowhere"),
            main_score="fad",
        )
        options = ReconstructionTask.Options(reference_model="mfcc")

    task = Mine()
    assert task.options.reference_model == "mfcc" and task.unused_options == []


def test_fad_and_kad_are_msebs_over_frame_bags(clips: list[Clip]) -> None:
    """fad, kad and embedding_mse: reconstruction_embedding_scores on the unpooled log-mel
    frames of originals and reconstructions; kid_poly: the per-clip polynomial MMD apart."""
    out = run(HalfGain(), clips, reference_model="log-mel", reference_pooling="mean_time")
    group = out.scores["default"]
    mel = LogMelEncoder()
    refs = mel.encode_audio([w.astype(np.float32) for w in originals(clips)])
    recs = mel.encode_audio([(0.5 * w).astype(np.float32) for w in originals(clips)])
    expected = reconstruction_embedding_scores(refs, recs)
    assert group["fad"] == pytest.approx(expected["fad"], rel=1e-9)
    assert group["kad"] == pytest.approx(expected["kad"], rel=1e-9)
    assert group["embedding_mse"]["mean"] == pytest.approx(expected["embedding_mse"], rel=1e-9)
    assert group["kad_bandwidth"] == pytest.approx(expected["kad_bandwidth"], rel=1e-9)
    assert group["n_frames_reference"] == expected["n_frames_reference"] > len(clips)
    assert group["n_frames_reconstructed"] == expected["n_frames_reconstructed"]
    assert out.main_score == group["fad"] > 0
    # The old per-clip figure: polynomial MMD between mean-over-time vectors, under its own name.
    pooled = lambda frames: np.stack([z.mean(axis=0) for z in frames])  # noqa: E731
    kid = polynomial_mmd(pooled(refs), pooled(recs))
    assert group["kid_poly"] == pytest.approx(kid, rel=1e-9)
    assert group["kid_poly"] != pytest.approx(group["kad"])


class Marked(FakeCodec):
    """Exact reconstructions, except a loud first sample in the first clip of each batch."""

    def decode(self, outputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        waves = super().decode(outputs)
        waves[0] = waves[0].copy()
        waves[0][0] = 7.0
        return waves


class Picky(Stats):
    """A reference model that fails (NaN) on audio louder than 5."""

    meta = Stats.meta.model_copy(update={"name": "picky-reference"})

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        out = super().encode_audio(waveforms)
        return [
            z * np.nan if np.abs(w).max() > 5 else z for z, w in zip(out, waveforms, strict=True)
        ]


def test_reference_failures_are_skipped_from_both_sets(
    clips: list[Clip], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reference model goes through the run's embedder: a reconstruction it cannot embed
    is recorded as skipped (under the original's id) and leaves every score of the subset."""
    monkeypatch.setitem(registry.models._loaded, Picky.meta.name, Picky)
    task = MockReconstruction(
        options={"reference_model": "picky-reference", "reference_pooling": None}
    )
    embedder = CachedEmbedder(Marked(), None, canonical_rate=RATE, on_error="skip")
    group = task.evaluate(embedder, clips).scores["default"]
    assert group["n_clips"] == 3
    # The three exact reconstructions are left; the marked one is in no score.
    assert group["si_sdr"]["n_capped"] == 3 and group["si_sdr"]["min"] == SI_SDR_CAP_DB
    assert group["embedding_mse"]["max"] == 0.0 and group["fad"] == pytest.approx(0, abs=1e-6)
    [skipped] = embedder.stats.skipped
    assert skipped.id == clips[0].id and "NaN" in skipped.reason
    assert skipped.location.startswith("fake-codec reconstruction of file ")
    assert skipped.location.endswith("(in memory)")
    # Under the default policy the same failure stops the run, naming the clip.
    with pytest.raises(RuntimeError, match=rf"clip '{clips[0].id}'.*NaN"):
        task.evaluate(CachedEmbedder(Marked(), None, canonical_rate=RATE), clips)


def test_options_are_checked() -> None:
    with pytest.raises(ValueError, match=r"MockReconstruction: invalid option reference_pooling"):
        MockReconstruction(reference_pooling="mean_tiem")
    with pytest.raises(ValueError, match=r"invalid option chunk_size"):
        MockReconstruction(chunk_size=0)
    assert ESC50Reconstruction().options.reference_model == "clap"
    assert ESC50Reconstruction().options.reference_pooling is None
