"""The transcription family, typed text outputs, their cache, the oracle and Whisper's ASR path."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import audiobench
from audiobench.audio import Clip, FileAudioRef
from audiobench.cache import EmbeddingCache
from audiobench.encoder import Encoder, ModelMeta, OutputKind
from audiobench.errors import DataError, UnsuitableModelError
from audiobench.families import TranscriptionTask
from audiobench.leaderboard.validate import validate_file
from audiobench.outputs import (
    OutputType,
    ScoredChoices,
    SpeechInput,
    TextOutput,
    TimedTranscript,
    TimedWord,
    Transcript,
    from_array,
    mseb_encoding_size_bytes,
    to_array,
)
from audiobench.runner import CachedEmbedder
from audiobench.sources import DatasetError
from audiobench.task import DatasetSource, TaskFamily, TaskMetadata
from tests.conftest import write_tone
from tests.families.test_classification import run_cli
from tests.tiny_models import build, loaded

# -- typed outputs ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "kind", "size"),
    [
        (Transcript("héllo wörld"), OutputType.TRANSCRIPT, 8),
        (Transcript(""), OutputType.TRANSCRIPT, 8),
        (
            TimedTranscript((TimedWord("a", 0.0, 0.5, 0.9), TimedWord("b", 0.5, 1.25))),
            OutputType.WORD_TIMINGS,
            16,
        ),
        (TimedTranscript(()), OutputType.WORD_TIMINGS, 0),
        (ScoredChoices(("x", "y", "z"), (1.0, -2.0, 0.5)), OutputType.SCORED_CHOICES, 24),
    ],
)
def test_text_outputs_round_trip_and_count_as_mseb_counts_strings(
    output: TextOutput, kind: OutputType, size: int
) -> None:
    array = to_array(output)
    assert array.dtype == np.uint8 and array.ndim == 1
    assert from_array(array, kind) == output
    # MSEB: a NumPy object array of strings counts 8 bytes per string, whatever the text.
    assert mseb_encoding_size_bytes(output) == size
    others = [k for k in (OutputType.TRANSCRIPT, OutputType.WORD_TIMINGS) if k is not kind]
    for other in others:
        with pytest.raises(ValueError, match="not a serialised"):
            from_array(array, other)


def test_damaged_or_foreign_arrays_are_not_text_outputs() -> None:
    for array in (
        np.frombuffer(b"\xff\xfe garbage", dtype=np.uint8),
        np.frombuffer(b'{"type": "transcript"}', dtype=np.uint8),  # no text
        np.zeros(3, dtype=np.float32),
    ):
        with pytest.raises(ValueError):
            from_array(array, OutputType.TRANSCRIPT)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (("w", 1.0, 0.5), "ends"),
        (("w", -0.1, 0.5), "finite and ≥ 0"),
        (("w", float("nan"), 0.5), "finite"),
        (("w", True, 0.5), "number"),
        (("w", 0.0, 0.5, float("inf")), "score"),
    ],
)
def test_timed_words_refuse_impossible_times(args: tuple[object, ...], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        TimedWord(*args)  # type: ignore[arg-type]


def test_scored_choices_need_one_finite_score_per_choice() -> None:
    with pytest.raises(ValueError, match="2 choices but 1 scores"):
        ScoredChoices(("a", "b"), (1.0,))
    with pytest.raises(ValueError, match="finite"):
        ScoredChoices(("a",), (float("nan"),))


# -- a transcriber for tests: fixed hypotheses by clip id ------------------------------------


class FixedTranscriber(Encoder):
    """Answers each clip with the hypothesis given for its id; counts the clips it saw."""

    meta = ModelMeta(
        name="fixed-transcriber", revision="v1", sample_rate=16000, output_kind=OutputKind.TEXT
    )
    produces = frozenset({OutputType.TRANSCRIPT})

    def __init__(self, hypotheses: dict[str, str], *, fail_after: int | None = None) -> None:
        super().__init__()
        self.hypotheses = hypotheses
        self.seen: list[str] = []
        self.fail_after = fail_after

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        raise NotImplementedError

    def produce(self, output: OutputType, inputs: Sequence[SpeechInput]) -> list[TextOutput]:
        if self.fail_after is not None and len(self.seen) >= self.fail_after:
            raise KeyboardInterrupt  # a run killed mid-way
        self.seen += [item.clip_id for item in inputs]
        return [Transcript(self.hypotheses[item.clip_id]) for item in inputs]


#: References, the wrong transcriber's hypotheses and recording environments.
CASES = {
    "u1": ("the cat sat on the mat", "the cat sat on mat", "clean"),  # 1 deletion
    "u2": ("hello world", "hello there world", "clean"),  # 1 insertion
    "u3": ("good morning", "good morning", "media_noise"),  # correct
}


def clips_of(tmp_path: Path, cases: dict[str, tuple[str, str, str]] = CASES) -> list[Clip]:
    clips = []
    for k, (clip_id, (reference, _, environment)) in enumerate(cases.items()):
        path = write_tone(tmp_path / f"{clip_id}.wav", freq=300.0 + 50 * k, seconds=0.3 + 0.1 * k)
        clips.append(
            Clip(
                id=clip_id,
                audio=FileAudioRef(path),
                text=reference,
                metadata={"environment": environment},
            )
        )
    return clips


def task_class(**options: object) -> type[TranscriptionTask]:
    meta = TaskMetadata(
        name="TestTranscription",
        family=TaskFamily.TRANSCRIPTION,
        description="test task",
        dataset=DatasetSource(kind="synthetic", path="tests"),
        main_score="wer",
        higher_is_better=False,
    )
    return type(
        "TestTranscription",
        (TranscriptionTask,),
        {"metadata": meta, "options": TranscriptionTask.Options(**options)},  # type: ignore[arg-type]
    )


def test_wrong_transcriber_scores_the_hand_computed_wer_ser_and_cer(tmp_path: Path) -> None:
    task = task_class(normalizer="none")()
    encoder = FixedTranscriber({k: v[1] for k, v in CASES.items()})
    embedder = CachedEmbedder(encoder, None)
    scores = task.evaluate(embedder, clips_of(tmp_path))
    report = scores.scores["default"]
    # Word errors 1 + 1 + 0 over 6 + 2 + 2 reference words.
    assert report["wer"] == pytest.approx(2 / 10)
    assert report["ser"] == pytest.approx(2 / 3)
    # Characters: "the " deleted (4), "there " inserted (6), over 22 + 11 + 12.
    assert report["character_error_rate"] == pytest.approx(10 / 45)
    assert (report["utterance_count"], report["word_count"]) == (3, 10)
    assert report["no_result_rate"] == 0.0
    # MSEB's weighted std of e_i/n_i with weights n_i around the corpus WER 0.2.
    ratios, weights = np.array([1 / 6, 1 / 2, 0.0]), np.array([6, 2, 2])
    std = np.sqrt((weights * (ratios - 0.2) ** 2).sum() / weights.sum())
    assert report["wer_std"] == pytest.approx(std)
    envs = report["environments"]
    assert envs["clean"]["wer"] == pytest.approx(2 / 8)
    assert envs["media_noise"]["wer"] == 0.0
    assert envs["media_noise"]["utterance_count"] == 1
    assert scores.main_score == pytest.approx(0.2)
    assert scores.details["evaluator"] == {"name": "mseb", "version": "1"}


def test_no_response_is_scored_as_mseb_scores_it(tmp_path: Path) -> None:
    task = task_class(normalizer="none", environment_key=None)()
    hypotheses = {"u1": "NO_RESPONSE", "u2": "hello world", "u3": "good morning"}
    scores = task.evaluate(CachedEmbedder(FixedTranscriber(hypotheses), None), clips_of(tmp_path))
    report = scores.scores["default"]
    assert report["wer"] == pytest.approx(6 / 10)  # every word of u1 deleted
    assert report["no_result_rate"] == pytest.approx(1 / 3)
    assert report["environments"] is None


def test_whisper_normaliser_follows_the_locale(tmp_path: Path) -> None:
    cases = {"u1": ("Hello, World!", "hello world", "clean")}
    hypotheses = {"u1": "hello world"}
    raw = task_class(normalizer="none")().evaluate(
        CachedEmbedder(FixedTranscriber(hypotheses), None), clips_of(tmp_path, cases)
    )
    assert raw.main_score == 1.0  # "Hello," and "World!" are other words as given
    basic = task_class(locale="sw")().evaluate(
        CachedEmbedder(FixedTranscriber(hypotheses), None), clips_of(tmp_path, cases)
    )
    assert basic.main_score == 0.0


def test_english_locale_uses_the_spelling_table(tmp_path: Path) -> None:
    table = tmp_path / "normalizer.json"
    table.write_text(json.dumps({"colour": "color"}))
    cases = {"u1": ("the colour of the sky", "the color of the sky", "clean")}
    hypotheses = {"u1": cases["u1"][1]}
    with_table = task_class(locale="en_us", spelling_table=str(table))().evaluate(
        CachedEmbedder(FixedTranscriber(hypotheses), None), clips_of(tmp_path, cases)
    )
    assert with_table.main_score == 0.0
    without = task_class(locale="en_us", spelling_table="none")().evaluate(
        CachedEmbedder(FixedTranscriber(hypotheses), None), clips_of(tmp_path, cases)
    )
    assert without.main_score == pytest.approx(1 / 5)


def test_english_without_a_reachable_spelling_table_says_how_to_fix_it(tmp_path: Path) -> None:
    task = task_class(locale="en_us", spelling_table=str(tmp_path / "no-such-tokenizer"))()
    with pytest.raises(Exception, match="spelling_table"):
        task.evaluate(CachedEmbedder(FixedTranscriber({"u1": "x"}), None), clips_of(tmp_path))


def test_a_clip_without_a_reference_transcript_is_named(tmp_path: Path) -> None:
    clips = clips_of(tmp_path)
    clips[1] = Clip(id="u2", audio=clips[1].audio, text=None)
    task = task_class(normalizer="none")()
    with pytest.raises(DataError, match="u2"):
        task.evaluate(CachedEmbedder(FixedTranscriber({}), None), clips)


def test_no_locale_for_the_whisper_normaliser_is_an_option_error(tmp_path: Path) -> None:
    task = task_class()()
    with pytest.raises(Exception, match="locale="):
        task.evaluate(CachedEmbedder(FixedTranscriber({}), None), clips_of(tmp_path))


# -- caching and resuming ----------------------------------------------------------------------


def test_transcripts_are_cached_and_a_killed_run_resumes(tmp_path: Path) -> None:
    hypotheses = {k: v[1] for k, v in CASES.items()}
    clips = clips_of(tmp_path)
    cache = EmbeddingCache(tmp_path / "cache")
    killed = FixedTranscriber(hypotheses, fail_after=1)
    with pytest.raises(KeyboardInterrupt):
        CachedEmbedder(killed, cache, batch_size=1).outputs(clips, "t", OutputType.TRANSCRIPT)
    assert len(killed.seen) == 1  # one batch done and committed before the kill
    again = FixedTranscriber(hypotheses)
    embedder = CachedEmbedder(again, cache, batch_size=1)
    kept, outputs = embedder.outputs(clips, "t", OutputType.TRANSCRIPT)
    assert sorted(again.seen) == sorted(set(CASES) - set(killed.seen))
    assert [c.id for c in kept] == list(CASES)
    assert [o for o in outputs] == [Transcript(v[1]) for v in CASES.values()]
    assert embedder.stats.n_cached == 1 and embedder.stats.n_encoded == 2
    assert embedder.stats.encoding_sizes == [8, 8, 8]
    third = FixedTranscriber(hypotheses)
    CachedEmbedder(third, cache).outputs(clips, "t", OutputType.TRANSCRIPT)
    assert third.seen == []
    # Text outputs live apart from the same encoder's embeddings.
    assert again.fingerprint(output=OutputType.TRANSCRIPT) != again.fingerprint()
    cache.close()


def test_a_damaged_cached_transcript_is_produced_again(tmp_path: Path) -> None:
    hypotheses = {k: v[1] for k, v in CASES.items()}
    clips = clips_of(tmp_path)
    cache = EmbeddingCache(tmp_path / "cache")
    first = CachedEmbedder(FixedTranscriber(hypotheses), cache)
    first.outputs(clips, "t", OutputType.TRANSCRIPT)
    fingerprint = first._output_fingerprints[OutputType.TRANSCRIPT]
    keys = list(cache.get_many(fingerprint, _keys(first, clips)))
    cache.put_many(fingerprint, [(keys[0], np.frombuffer(b"not json", dtype=np.uint8))])
    encoder = FixedTranscriber(hypotheses)
    embedder = CachedEmbedder(encoder, cache)
    _, outputs = embedder.outputs(clips, "t", OutputType.TRANSCRIPT)
    assert len(encoder.seen) == 1
    assert outputs == [Transcript(v[1]) for v in CASES.values()]
    assert any("encoded again" in e for e in embedder.stats.events)
    cache.close()


def _keys(embedder: CachedEmbedder, clips: list[Clip]) -> list[str]:
    return [embedder._decode(c).key or "" for c in clips]


def test_the_oracle_caches_by_transcript_as_well_as_audio(tmp_path: Path) -> None:
    clips = clips_of(tmp_path)
    cache = EmbeddingCache(tmp_path / "cache")
    oracle = audiobench.registry.models.create("transcript-truth")
    _, first = CachedEmbedder(oracle, cache).outputs(clips, "t", OutputType.TRANSCRIPT)
    assert first == [Transcript(v[0]) for v in CASES.values()]
    relabelled = [Clip(id=c.id, audio=c.audio, text=f"{c.text} again") for c in clips]
    embedder = CachedEmbedder(oracle, cache)
    _, second = embedder.outputs(relabelled, "t", OutputType.TRANSCRIPT)
    assert second == [Transcript(f"{v[0]} again") for v in CASES.values()]
    assert embedder.stats.n_cached == 0
    cache.close()


# -- the contract: a mismatch is refused before any work ---------------------------------------


def test_an_embedding_model_on_a_transcription_task_is_refused_first(tmp_path: Path) -> None:
    with pytest.raises(UnsuitableModelError, match="does not produce transcript"):
        audiobench.evaluate("MockTranscription", "mfcc", output_dir=tmp_path, progress=False)
    assert not (tmp_path / "mfcc").exists()


def test_a_transcriber_on_an_embedding_task_is_refused_first(tmp_path: Path) -> None:
    with pytest.raises(UnsuitableModelError, match="does not produce embedding"):
        audiobench.evaluate(
            "MockClustering", "transcript-truth", output_dir=tmp_path, progress=False
        )


# -- the family end to end: mock task, oracle, result file --------------------------------------


def test_mock_task_with_the_oracle_scores_zero_offline(tmp_path: Path) -> None:
    (result,) = audiobench.evaluate(
        "MockTranscription", "transcript-truth", output_dir=tmp_path, progress=False
    )
    assert result.main_score == 0.0
    assert set(result.scores) == {"en_us", "sw"}
    for report in result.scores.values():
        assert set(report["environments"]) == {"clean", "traffic_noise"}
        assert report["utterance_count"] == 6 and report["word_count"] > 0
    assert result.aggregates["mean"]["wer"] == 0.0
    assert result.efficiency.mean_encoding_size_bytes == 8.0
    assert result.efficiency.flops_per_example is None  # nothing to count
    path = tmp_path / "transcript-truth" / "v1" / "MockTranscription.json"
    parsed, problems = validate_file(path)
    assert parsed is not None and problems == []


def test_list_tasks_shows_the_real_and_the_mock_transcription_task() -> None:
    code, out, err = run_cli("list", "tasks", "--type", "transcription", "--json")
    assert code == 0, err
    rows = {r["name"]: r for r in json.loads(out)}
    assert set(rows) >= {"SVQEnUsSpeechTranscription", "MockTranscription"}
    assert (
        rows["MockTranscription"]["offline"] and not rows["SVQEnUsSpeechTranscription"]["offline"]
    )


def test_list_models_says_what_each_model_produces() -> None:
    code, out, err = run_cli("list", "models", "--json")
    assert code == 0, err
    rows = {r["name"]: r for r in json.loads(out)}
    assert rows["transcript-truth"]["outputs"] == ["transcript", "word_timings"]
    assert rows["whisper-tiny"]["outputs"] == ["embedding", "transcript", "word_timings"]
    assert rows["mfcc"]["outputs"] == ["embedding"]


# -- Whisper as a transcriber -------------------------------------------------------------------


def _waves(n: int = 3) -> list[SpeechInput]:
    rng = np.random.default_rng(0)
    return [
        SpeechInput(f"c{i}", (0.1 * rng.standard_normal(6000 + 4000 * i)).astype(np.float32))
        for i in range(n)
    ]


def test_whisper_transcribes_and_times_words(tmp_path: Path) -> None:
    encoder = loaded(f"hf:{build('whisper-aligned', tmp_path)}")
    assert "language" not in encoder.params  # unset options leave the fingerprint alone
    encoder.check_output(OutputType.WORD_TIMINGS)
    texts = encoder.produce(OutputType.TRANSCRIPT, _waves())
    timed = encoder.produce(OutputType.WORD_TIMINGS, _waves())
    assert all(isinstance(t, Transcript) for t in texts)
    for text, words in zip(texts, timed, strict=True):
        assert isinstance(words, TimedTranscript) and isinstance(text, Transcript)
        assert words.text.split() == text.text.split()
        ends = [w.end for w in words.words]
        assert all(0 <= w.start <= w.end <= 1.0 + 1e-6 for w in words.words)  # a 1 s window
        assert ends == sorted(ends)


def test_whisper_without_alignment_heads_cannot_time_words(tmp_path: Path) -> None:
    encoder = loaded(f"hf:{build('whisper', tmp_path)}")
    encoder.check_output(OutputType.TRANSCRIPT)
    with pytest.raises(UnsuitableModelError, match="alignment_heads"):
        encoder.check_output(OutputType.WORD_TIMINGS)


def test_whisper_language_needs_language_tokens(tmp_path: Path) -> None:
    encoder = loaded(f"hf:{build('whisper', tmp_path)}", language="en")
    assert encoder.params["language"] == "en"
    with pytest.raises(UnsuitableModelError, match="lang_to_id"):
        encoder.check_output(OutputType.TRANSCRIPT)


def test_whisper_on_the_mock_task_end_to_end_and_from_cache(tmp_path: Path) -> None:
    model = f"hf:{build('whisper', tmp_path / 'models')}"
    (first,) = audiobench.evaluate(
        "MockTranscription", model, output_dir=tmp_path / "a", progress=False
    )
    assert first.main_score is not None and first.main_score >= 0
    assert first.cache.n_encoded == 12
    assert first.efficiency.mean_encoding_size_bytes == 8.0
    (second,) = audiobench.evaluate(
        "MockTranscription", model, output_dir=tmp_path / "b", progress=False
    )
    assert second.cache.n_cached == 12 and second.cache.n_encoded == 0
    assert second.scores == first.scores


def test_hf_ctc_checkpoints_are_detected_and_transcribe(tmp_path: Path) -> None:
    from audiobench.models.ctc import CTCEncoder

    encoder = loaded(f"hf:{build('wav2vec2-ctc', tmp_path)}")
    assert isinstance(encoder, CTCEncoder)
    before = encoder.embed([w.waveform for w in _waves()])
    encoder.check_output(OutputType.TRANSCRIPT)
    texts = encoder.produce(OutputType.TRANSCRIPT, _waves())
    assert all(isinstance(t, Transcript) and set(t.text) <= set("abcdefghijk ") for t in texts)
    # Batch-independent, and the embeddings are those of the same weights.
    alone = [encoder.produce(OutputType.TRANSCRIPT, [w])[0] for w in _waves()]
    assert alone == texts
    after = encoder.embed([w.waveform for w in _waves()])
    for a, b in zip(before, after, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    with pytest.raises(UnsuitableModelError, match="does not produce word_timings"):
        encoder.check_output(OutputType.WORD_TIMINGS)


def test_a_plain_speech_encoder_does_not_transcribe(tmp_path: Path) -> None:
    encoder = loaded(f"hf:{build('wavlm', tmp_path)}")
    assert OutputType.TRANSCRIPT not in encoder.produces


# -- MSEB's SVQ task, from a local copy in SVQ's layout -----------------------------------------


def write_svq_copy(root: Path, records: list[dict[str, str]]) -> None:
    """SVQ's files: utt_index.jsonl, speech_transcription.jsonl, audio/<shard>.parquet."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    (root / "audio").mkdir(parents=True)
    waves = []
    for k, _ in enumerate(records):
        buffer = io.BytesIO()
        t = np.arange(4000 + 800 * k) / 16000
        sf.write(buffer, (0.2 * np.sin(2 * np.pi * (200 + 40 * k) * t)), 16000, format="WAV")
        waves.append(buffer.getvalue())
    pq.write_table(pa.table({"waveform": waves}), root / "audio" / "s0.parquet")
    index = [{"utt_id": r["utt_id"], "index": f"audio/s0:{k}"} for k, r in enumerate(records)]
    (root / "utt_index.jsonl").write_text("".join(json.dumps(r) + "\n" for r in index))
    (root / "speech_transcription.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def test_svq_task_reads_a_local_copy_and_scores_per_environment(tmp_path: Path) -> None:
    records = [
        {"utt_id": "a", "locale": "en_us", "environment": "clean", "text": "What colour?"},
        {"utt_id": "b", "locale": "en_us", "environment": "traffic_noise", "text": "Go home"},
        {"utt_id": "c", "locale": "ja_jp", "environment": "clean", "text": "こんにちは"},
    ]
    write_svq_copy(tmp_path / "svq", records)
    table = tmp_path / "normalizer.json"
    table.write_text(json.dumps({"colour": "color"}))
    encoder = FixedTranscriber({"a": "what color", "b": "go"})
    (result,) = audiobench.evaluate(
        "SVQEnUsSpeechTranscription",
        encoder,
        output_dir=tmp_path / "out",
        dataset=tmp_path / "svq",
        task_options={"spelling_table": str(table)},
        progress=False,
    )
    report = result.scores["en_us"]
    assert report["utterance_count"] == 2  # the ja_jp utterance is another locale's
    assert result.main_score == pytest.approx(1 / 4)  # "home" deleted; colour = color
    assert report["environments"]["clean"]["wer"] == 0.0
    assert report["environments"]["traffic_noise"]["wer"] == pytest.approx(1 / 2)
    assert result.run is not None and not result.run.dataset.pinned


def test_svq_task_offline_without_a_copy_says_to_pass_one(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="--dataset DIR"):
        audiobench.evaluate(
            "SVQEnUsSpeechTranscription",
            "transcript-truth",
            output_dir=tmp_path,
            progress=False,
        )
