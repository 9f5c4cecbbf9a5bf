"""Reasoning with encoders that answer in text: MSEB's TextPrediction path, and the
``extractive-qa`` cascade (transcriber → extractive QA reader over the context)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import audiobench
from audiobench import registry
from audiobench.audio import Clip, FileAudioRef
from audiobench.cache import EmbeddingCache
from audiobench.encoder import Encoder, ModelMeta, OutputKind
from audiobench.errors import DataError, UnsuitableModelError
from audiobench.families import ReasoningTask
from audiobench.metrics.mseb_conventions import NO_ANSWER
from audiobench.models.extractive_qa import ExtractiveQA, best_span
from audiobench.outputs import Answer, OutputType, SpeechInput, TextOutput, mseb_encoding_size_bytes
from audiobench.runner import CachedEmbedder
from audiobench.task import DatasetSource, TaskMetadata
from audiobench.tasks.reasoning import MockSpanReasoning
from tests.conftest import write_tone
from tests.tiny_models import _roberta_tokenizer

# -- the span decision -------------------------------------------------------------------------


def test_best_span_by_hand() -> None:
    start = np.array([5.0, 1.0, 3.0, 0.0])
    end = np.array([9.0, 0.0, 1.0, 4.0])
    allowed = np.array([False, True, True, True])  # token 0 is the question / CLS
    # Pairs i <= j among 1..3: (1,1)=1 (1,2)=2 (1,3)=5 (2,2)=4 (2,3)=7 (3,3)=4.
    assert best_span(start, end, allowed, max_tokens=30) == (7.0, 2, 3)
    # At most one token: the diagonal only, (2,2)=4 first of the ties with (3,3).
    assert best_span(start, end, allowed, max_tokens=1) == (4.0, 2, 2)
    assert best_span(start, end, np.zeros(4, bool), max_tokens=3) is None


def test_best_span_matches_a_brute_force_search() -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):
        n = int(rng.integers(1, 12))
        start, end = rng.normal(size=n), rng.normal(size=n)
        allowed = rng.random(n) < 0.7
        width = int(rng.integers(1, 6))
        expected = None
        for i in range(n):
            for j in range(i, min(n, i + width)):
                if allowed[i] and allowed[j]:
                    score = start[i] + end[j]
                    if expected is None or score > expected[0]:
                        expected = (score, i, j)
        got = best_span(start, end, allowed, width)
        if expected is None:
            assert got is None
        else:
            assert got is not None
            assert got[1:] == expected[1:] and math.isclose(got[0], expected[0])


# -- MSEB's scores of text answers ------------------------------------------------------------


class FixedAnswers(Encoder):
    """Answers each clip with the text given for its id; counts what it was asked."""

    meta = ModelMeta(
        name="fixed-answers", revision="v1", sample_rate=16000, output_kind=OutputKind.TEXT
    )
    produces = frozenset({OutputType.ANSWER})
    reads_context = True

    def __init__(self, answers: dict[str, str]) -> None:
        super().__init__()
        self.answers = answers
        self.asked: list[tuple[str, str | None]] = []

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        raise NotImplementedError

    def produce(self, output: OutputType, inputs: Sequence[SpeechInput]) -> list[TextOutput]:
        self.asked += [(item.clip_id, item.context) for item in inputs]
        return [Answer(self.answers[item.clip_id]) for item in inputs]


class Reasoning(ReasoningTask):
    metadata = TaskMetadata(
        name="TestTextReasoning",
        description="test task",
        dataset=DatasetSource(kind="synthetic", path="tests"),
        main_score="GmeanF1",
    )


CASES = {  # id: (reference, the model's answer)
    "a1": ("red car", "red car"),
    "a2": ("red car", "the red"),
    "u1": (NO_ANSWER, NO_ANSWER),
    "u2": (NO_ANSWER, "blue"),
}


def clips_of(tmp_path: Path) -> list[Clip]:
    return [
        Clip(
            id=clip_id,
            audio=FileAudioRef(write_tone(tmp_path / f"{clip_id}.wav", freq=300.0 + 70 * k)),
            text="which car",
            metadata={
                "spans": "red car|blue",
                "answer": reference,
                "context": f"passage {clip_id}: a red car and a blue one",
            },
        )
        for k, (clip_id, (reference, _)) in enumerate(CASES.items())
    ]


def test_text_answers_are_scored_as_given_with_hand_computed_values(tmp_path: Path) -> None:
    encoder = FixedAnswers({k: answer for k, (_, answer) in CASES.items()})
    clips = clips_of(tmp_path)
    cache = EmbeddingCache(tmp_path / "cache")
    report = Reasoning().evaluate(CachedEmbedder(encoder, cache), clips).scores["default"]
    # F1: 1, ("the red" vs "red car": 1 common word, P = R = 1/2) 0.5, 1, 0.
    assert report["answerable_F1"] == pytest.approx(0.75)
    assert report["no_answer_F1"] == pytest.approx(0.5)
    assert report["F1"] == pytest.approx(0.625)
    assert report["GmeanF1"] == pytest.approx(math.sqrt(0.75 * 0.5))
    assert report["text_answers"] is True and report["no_answer_threshold"] is None
    assert report["n_predicted_no_answer"] == 1
    # The encoder read each clip's context; a second run reads the answers from the cache.
    assert dict(encoder.asked) == {c.id: c.metadata["context"] for c in clips}
    encoder.asked.clear()
    again = Reasoning().evaluate(CachedEmbedder(encoder, cache), clips).scores["default"]
    assert encoder.asked == [] and again == report
    # Another context is another question: answered again.
    clips[0].metadata["context"] = "another passage"
    Reasoning().evaluate(CachedEmbedder(encoder, cache), clips)
    assert encoder.asked == [("a1", "another passage")]
    cache.close()


def test_answers_count_as_mseb_counts_a_text_prediction() -> None:
    assert mseb_encoding_size_bytes(Answer("No Answer")) == 9
    assert mseb_encoding_size_bytes(Answer("Zürich")) == 7  # UTF-8 bytes


def test_an_answering_model_is_refused_where_answers_are_not_scored(tmp_path: Path) -> None:
    with pytest.raises(UnsuitableModelError, match="does not produce transcript"):
        audiobench.evaluate(
            "MockTranscription", FixedAnswers({}), output_dir=tmp_path, progress=False
        )


# -- extractive-qa, with a tiny random-weight reader ---------------------------------------------


def tiny_reader(root: Path) -> Path:
    """A random-weight RoBERTa extractive QA checkpoint, saved as the hub serves one."""
    import torch
    from transformers import RobertaConfig, RobertaForQuestionAnswering, RobertaTokenizer

    path = root / "roberta-qa"
    path.mkdir(parents=True)
    _roberta_tokenizer(path)
    vocab = len(RobertaTokenizer.from_pretrained(path))
    torch.manual_seed(0)
    config = RobertaConfig(
        vocab_size=vocab,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=520,
        pad_token_id=1,
    )
    RobertaForQuestionAnswering(config).save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_reader(tmp_path_factory.mktemp("qa"))


def test_extractive_qa_answers_with_spans_of_the_context_or_no_answer(reader: Path) -> None:
    encoder = registry.models.create("extractive-qa", reader=f"hf:{reader}")
    encoder.load()
    assert isinstance(encoder, ExtractiveQA)
    contexts = ["the dog and the bird call", "a tone of noise " * 60]  # the second: windows
    answers = encoder.answer(["what call", "the sound"], contexts)
    for answer, context in zip(answers, contexts, strict=True):
        assert answer == NO_ANSWER or answer in context
    assert encoder.parameter_count() == sum(p.numel() for p in encoder._model.parameters())
    assert encoder.describe()["reader"]["weights_digest"].startswith("sha256:")


def test_extractive_qa_on_the_mock_end_to_end_and_from_cache(tmp_path: Path, reader: Path) -> None:
    def run(out: str) -> audiobench.TaskResult:
        encoder = registry.models.create("extractive-qa", reader=str(reader))
        (result,) = audiobench.evaluate(
            "MockSpanReasoning",
            encoder,
            output_dir=tmp_path / out,
            cache_dir=tmp_path / "cache",
            progress=False,
        )
        return result

    first = run("a")
    report = first.scores["default"]
    assert report["text_answers"] is True and report["n_examples"] == 24
    assert first.main_score == report["GmeanF1"] and 0.0 <= first.main_score <= 1.0
    clips = MockSpanReasoning().load_data()
    assert len(clips) == 24

    calls: list[int] = []
    original = ExtractiveQA.answer

    def counted(self: ExtractiveQA, questions: Sequence[str], contexts: Sequence[str]) -> list[str]:
        calls.append(len(questions))
        return original(self, questions, contexts)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ExtractiveQA, "answer", counted)
        second = run("b")
    assert calls == [] and second.scores == first.scores


def test_extractive_qa_without_a_context_names_the_clip(tmp_path: Path, reader: Path) -> None:
    clips = clips_of(tmp_path)
    del clips[2].metadata["context"]
    encoder = registry.models.create("extractive-qa", reader=str(reader))
    with pytest.raises(DataError, match="'u1'"):
        Reasoning().evaluate(CachedEmbedder(encoder, None), clips)


def test_extractive_qa_needs_a_transcriber(tmp_path: Path) -> None:
    with pytest.raises(UnsuitableModelError, match="log-mel"):
        registry.models.create("extractive-qa", transcriber="log-mel", reader=str(tmp_path))
