"""The reasoning family (MSEB's span QA): hand-computed answers, thresholds, edge cases, CLI."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from audiobench.encoder import Modality, OutputKind
from audiobench.errors import DataError, OptionError
from audiobench.families import ReasoningTask
from audiobench.metrics.errors import InvalidEmbeddingsError
from audiobench.metrics.span_qa import no_answer_threshold
from audiobench.outputs import OutputType
from audiobench.results import load_result
from audiobench.sources import DatasetError
from audiobench.task import TaskFamily
from audiobench.tasks.reasoning import MockSpanReasoning, SVQEnUsSpanInLangReasoning
from audiobench.tasks.stability import SVQEnUsContinuousStability
from tests.families.test_retrieval import (
    FAST,
    FakeEmbedder,
    clip,
    meta,
    run_cli,
    tiny_clap,  # noqa: F401 - a session fixture used below
)

NA = "No Answer"


class Reasoning(ReasoningTask):
    metadata = meta("TestReasoning", TaskFamily.REASONING, "GmeanF1")


class Given(Reasoning):
    options = ReasoningTask.Options(no_answer_threshold=0.5)


#: Span texts as unit axes: a question's dot product with a span is its coordinate.
SPANS = {"Paris": [1.0, 0.0, 0.0], "Lyon": [0.0, 1.0, 0.0], "the Alps": [0.0, 0.0, 1.0]}
ALL = "Paris|Lyon|the Alps"


def question(clip_id: str, answer: str, spans: str = ALL) -> object:
    return clip(clip_id, spans=spans, answer=answer, context="Paris and Lyon face the Alps.")


def test_the_right_span_wins_and_scores_f1_one() -> None:
    clips = [question("q1", "Paris"), question("q2", "the Alps"), question("q3", NA)]
    audio = {"q1": [0.9, 0.2, 0.1], "q2": [0.1, 0.3, 0.8], "q3": [0.2, 0.3, 0.1]}
    result = Given().evaluate(FakeEmbedder(audio, SPANS), clips)
    report = result.scores["default"]
    # q1 → Paris (0.9), q2 → the Alps (0.8), q3's best (0.3) < 0.5 → No Answer: all right.
    assert report["F1"] == 1.0 and report["GmeanF1"] == 1.0 and result.main_score == 1.0
    assert report["n_answerable"] == 2 and report["n_no_answer"] == 1
    assert report["n_predicted_no_answer"] == 1
    assert report["no_answer_threshold"] == 0.5 and report["threshold_fitted"] is False
    assert report["InvalidResultRate"] == 0.0 and report["MissingResultRate"] == 0.0
    assert Reasoning.score_problems(result.scores) == []
    assert result.details["evaluator"] == {"name": "mseb", "version": "1"}


def test_threshold_rule_and_partial_f1_by_hand() -> None:
    clips = [
        question("q1", "Paris"),  # best Paris 0.5 = threshold: answers (not below)
        question("q2", "the Alps"),  # best Lyon 0.7: wrong span, F1 0
        question("q3", "the Alps"),  # best 0.4 < 0.5: No Answer, F1 0
        question("q4", "Alps"),  # answers "the Alps": P = 1/2, R = 1, F1 = 2/3
    ]
    audio = {
        "q1": [0.5, 0.1, 0.0],
        "q2": [0.0, 0.7, 0.6],
        "q3": [0.4, 0.0, 0.1],
        "q4": [0.0, 0.0, 0.9],
    }
    report = Given().evaluate(FakeEmbedder(audio, SPANS), clips).scores["default"]
    assert report["F1"] == pytest.approx((1 + 0 + 0 + 2 / 3) / 4)
    # No unanswerable example: w = 1 and GmeanF1 = F1_A (0^0 = 1 for the empty group).
    assert report["GmeanF1"] == pytest.approx(report["F1"])
    assert report["no_answer_F1"] == 0.0 and report["n_answer_not_in_spans"] == 1
    assert report["n_predicted_no_answer"] == 1


def test_raw_dot_product_not_cosine() -> None:
    # q1: cosine prefers Paris (0.995 vs 0.196); the dot product the long Lyon (2.0 vs 1.02).
    spans = {"Paris": [1.0, 0.1], "Lyon": [0.0, 10.0]}
    clips = [question("q1", "Lyon", "Paris|Lyon"), question("q2", "Lyon", "Paris|Lyon")]
    audio = {"q1": [1.0, 0.2], "q2": [1.0, 0.3]}
    task = Reasoning(no_answer_threshold=-100.0)
    assert task.evaluate(FakeEmbedder(audio, spans), clips).scores["default"]["F1"] == 1.0


def test_always_no_answer_gives_gmean_zero_and_f1_the_unanswerable_share() -> None:
    clips = [question("a1", "Paris"), question("u1", NA), question("u2", NA)]
    audio = {c: [0.1, 0.1, 0.1] for c in ("a1", "u1", "u2")}
    report = (
        Reasoning(no_answer_threshold=5.0)
        .evaluate(FakeEmbedder(audio, SPANS), clips)
        .scores["default"]
    )
    assert report["GmeanF1"] == 0.0 and report["F1"] == pytest.approx(2 / 3)
    assert report["n_predicted_no_answer"] == 3


def test_no_answerable_example_all_answered_no_answer() -> None:
    clips = [question("u1", NA), question("u2", NA)]
    audio = {"u1": [0.1, 0.0, 0.0], "u2": [0.0, 0.2, 0.0]}
    report = Given().evaluate(FakeEmbedder(audio, SPANS), clips).scores["default"]
    # w = 0: GmeanF1 = F1_A^0 · F1_U^1 = 1 (0^0 = 1), though F1_A is 0 (empty group).
    assert report["GmeanF1"] == 1.0 and report["answerable_F1"] == 0.0
    assert report["n_answerable"] == 0


def test_example_without_spans_answers_no_answer() -> None:
    clips = [question("u1", NA, spans=""), question("a1", "Lyon")]
    audio = {"u1": [1.0, 1.0, 1.0], "a1": [0.0, 0.9, 0.0]}
    report = Given().evaluate(FakeEmbedder(audio, SPANS), clips).scores["default"]
    assert report["n_without_spans"] == 1 and report["GmeanF1"] == 1.0


def test_fitted_threshold_is_the_mixture_boundary_of_the_best_scores() -> None:
    rng = np.random.default_rng(0)
    clips, audio = [], {}
    for i in range(12):
        answerable = i % 2 == 0
        clips.append(question(f"q{i}", "Paris" if answerable else NA))
        level = 0.9 if answerable else 0.2
        audio[f"q{i}"] = [level + 0.02 * rng.standard_normal(), 0.05, 0.05]
    result = Reasoning().evaluate(FakeEmbedder(audio, SPANS), clips)
    report = result.scores["default"]
    best = np.array([audio[f"q{i}"][0] for i in range(12)], dtype=np.float32)
    assert report["threshold_fitted"] is True
    assert report["no_answer_threshold"] == no_answer_threshold(best)
    assert 0.2 < report["no_answer_threshold"] < 0.9 and report["GmeanF1"] == 1.0
    assert "fitted per subset" in result.details["threshold"]


def test_fitting_from_one_example_names_the_option() -> None:
    with pytest.raises(OptionError, match="no_answer_threshold"):
        Reasoning().evaluate(FakeEmbedder({"q1": [1.0, 0, 0]}, SPANS), [question("q1", "Paris")])


def test_bad_examples_are_named() -> None:
    fake = FakeEmbedder({"q1": [1.0, 0, 0]}, SPANS)
    with pytest.raises(DataError, match=r"'q1'.*spans"):
        Given().evaluate(fake, [clip("q1", answer="Paris")])
    with pytest.raises(DataError, match=r"'q1'.*answer"):
        Given().evaluate(fake, [clip("q1", spans=ALL)])
    with pytest.raises(InvalidEmbeddingsError, match=r"NaN.*'q1'") as caught:
        Given().evaluate(FakeEmbedder({"q1": [np.nan, 0, 0]}, SPANS), [question("q1", "Paris")])
    assert caught.value.clip_ids == ("q1",)  # named, so that --on-error skip can leave it out


def test_skipped_clips_are_counted() -> None:
    clips = [question("q1", "Paris"), question("q2", NA)]
    fake = FakeEmbedder({"q1": [1.0, 0, 0], "q2": [0, 0, 0]}, SPANS, skip=["q2"])
    report = Given().evaluate(fake, clips).scores["default"]
    assert report["n_unembedded"] == 1 and report["n_examples"] == 1


def test_encoders_without_a_text_tower_or_with_codes_are_refused() -> None:
    def encoder(kind: OutputKind, *modalities: Modality) -> object:
        return SimpleNamespace(
            meta=SimpleNamespace(name="m", output_kind=kind, modalities=modalities),
            produces=frozenset({OutputType.EMBEDDING}),
        )

    with pytest.raises(ValueError, match="no text encoder"):
        Reasoning.check_encoder(encoder(OutputKind.VECTOR, Modality.AUDIO))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"returns codes .* or answers in text"):
        Reasoning.check_encoder(
            encoder(OutputKind.TOKENS, Modality.AUDIO, Modality.TEXT)  # type: ignore[arg-type]
        )
    Reasoning.check_encoder(encoder(OutputKind.VECTOR, Modality.AUDIO, Modality.TEXT))  # type: ignore[arg-type]


def test_a_tampered_report_is_refused() -> None:
    clips = [question("q1", "Paris"), question("q2", NA)]
    audio = {"q1": [0.9, 0, 0], "q2": [0.1, 0, 0]}
    scores = Given().evaluate(FakeEmbedder(audio, SPANS), clips).scores
    scores["default"]["GmeanF1"] = 0.5
    assert any("GmeanF1" in p for p in Reasoning.score_problems(scores))
    scores["default"]["GmeanF1"], scores["default"]["n_no_answer"] = 1.0, 5
    assert any("n_examples" in p for p in Reasoning.score_problems(scores))


def test_unknown_main_score_is_refused() -> None:
    with pytest.raises(ValueError, match="main score 'accuracy'"):

        class _Bad(ReasoningTask):
            metadata = meta("TestBadReasoning", TaskFamily.REASONING, "accuracy")


def test_mock_data_is_generated_with_contexts_spans_and_answers() -> None:
    clips = MockSpanReasoning().load_data()
    assert len(clips) == 24
    answers = [c.metadata["answer"] for c in clips]
    assert answers.count(NA) == 12
    for c in clips:
        spans = c.metadata["spans"].split("|")
        assert len(spans) == 5 and all(s in c.metadata["context"] for s in spans)
        assert c.metadata["answer"] == NA or c.metadata["answer"] in spans
        assert c.text and c.metadata["title"]


def test_mock_needs_a_text_encoder(tmp_path: Path) -> None:
    code, out = run_cli(
        "evaluate", "--task", "MockSpanReasoning", "--model", "log-mel",
        "--output-dir", str(tmp_path), *FAST,
    )  # fmt: skip
    assert code == 1 and "no text encoder" in out and "span QA" in out


def test_mock_runs_with_the_tiny_clap_and_validates(tmp_path: Path, tiny_clap: Path) -> None:  # noqa: F811
    code, out = run_cli(
        "evaluate", "--task", "MockSpanReasoning", "--model", f"hf:{tiny_clap}",
        "--output-dir", str(tmp_path), *FAST,
    )  # fmt: skip
    assert code == 0, out
    (path,) = tmp_path.glob("*/*/MockSpanReasoning.json")
    result = load_result(path)
    report = result.scores["default"]
    assert report["n_examples"] == 24 and report["n_no_answer"] == 12
    assert result.main_score == report["GmeanF1"] and 0.0 <= result.main_score <= 1.0
    code, out = run_cli("results", "validate", str(path))
    assert code == 0 and "1 result file(s) valid" in out, out


# -- SVQ, read in its own layout ----------------------------------------------------------------


def write_svq(root: Path) -> Path:
    """A tiny copy of SVQ's layout: index, one parquet shard of WAV bytes, a task file."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq
    import soundfile as sf

    (root / "audio").mkdir(parents=True)
    rows = [
        ("u1", "en_us", "clean"),
        ("u2", "en_us", "media_noise"),
        ("u3", "fi_fi", "clean"),
        ("u4", "en_us", "clean"),
    ]
    waves = []
    for i in range(len(rows)):
        buffer = io.BytesIO()
        t = np.arange(8000) / 16000
        sf.write(buffer, 0.3 * np.sin(2 * np.pi * (200 + 50 * i) * t), 16000, format="WAV")
        waves.append({"bytes": buffer.getvalue(), "path": None})
    pq.write_table(pa.table({"waveform": waves}), root / "audio" / "shard_0.parquet")
    with (root / "utt_index.jsonl").open("w") as fh:
        for i, (utt, locale, environment) in enumerate(rows):
            line = {"utt_id": utt, "index": f"audio/shard_0:{i}", "locale": locale}
            fh.write(json.dumps(line | {"environment": environment, "text": f"q {utt}"}) + "\n")
    with (root / "span_reasoning_in_lang.jsonl").open("w") as fh:
        for utt, locale, span in (
            ("u1", "en_us", "Paris"),
            ("u2", "en_us", NA),
            ("u3", "fi_fi", NA),
        ):
            fh.write(
                json.dumps(
                    {
                        "utt_id": utt,
                        "locale": locale,
                        "span": span,
                        "spans": ["Paris", "Lyon"],
                        "passage_text": "Paris, not Lyon.",
                        "page_title": "France",
                    }
                )
                + "\n"
            )
    return root


def test_svq_tasks_read_svq_layout(tmp_path: Path) -> None:
    from audiobench.audio import load_waveform

    root = write_svq(tmp_path / "svq")
    clips = SVQEnUsSpanInLangReasoning(dataset_path=root).load_data()
    assert [c.id for c in clips] == ["u1", "u2"]  # en_us rows of the task file, in order
    assert clips[0].metadata["spans"] == ["Paris", "Lyon"] and clips[1].metadata["answer"] == NA
    assert clips[0].metadata["context"] == "Paris, not Lyon." and clips[0].text == "q u1"
    assert clips[1].metadata["environment"] == "media_noise"
    wave = load_waveform(clips[1].audio, 16000, clip_id="u2")
    assert wave.shape == (8000,) and abs(wave).max() > 0.29
    stable = SVQEnUsContinuousStability(dataset_path=root).load_data()
    assert [c.id for c in stable] == ["u1", "u4"]  # clean en_us utterances of the index
    assert SVQEnUsSpanInLangReasoning.metadata.revision == "main"  # unpinned, as MSEB reads it


def test_svq_bad_copies_are_named(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"utt_index\.jsonl"):
        SVQEnUsSpanInLangReasoning(dataset_path=tmp_path).load_data()
    root = write_svq(tmp_path / "svq")
    with (root / "span_reasoning_in_lang.jsonl").open("a") as fh:
        fh.write(json.dumps({"utt_id": "u9", "locale": "en_us", "span": NA, "spans": []}) + "\n")
    with pytest.raises(DatasetError, match="line 4: utterance 'u9' is not in the index"):
        SVQEnUsSpanInLangReasoning(dataset_path=root).load_data()
