"""Sentence embedding models, and MSEB's cascade and oracle baselines built on them.

A tiny random-weight BERT is saved by the test and loaded with transformers from its directory
(``text:<dir>``); the pinned default is only constructed (no download).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from audiobench import registry
from audiobench.errors import OptionError
from audiobench.outputs import SpeechInput
from audiobench.results import load_result
from tests.families.test_retrieval import FAST, run_cli
from tests.tiny_models import build, loaded


def _tiny_text_model(path: Path) -> Path:
    """A 2-layer, 16-d random BERT whose vocabulary spells any lowercase word by letters."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    path.mkdir(parents=True, exist_ok=True)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *letters, *(f"##{c}" for c in letters)]
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    BertTokenizer(str(path / "vocab.txt")).save_pretrained(path)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=128,
    )
    BertModel(config).save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def text_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tiny_text_model(tmp_path_factory.mktemp("tiny-text") / "bert")


@pytest.fixture(scope="module")
def whisper_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build("whisper", tmp_path_factory.mktemp("tiny-whisper"))


def _reference_embedding(directory: Path, text: str) -> np.ndarray:
    """Mean of the last hidden states of ``text`` alone (no padding), computed directly."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(directory)
    model = AutoModel.from_pretrained(directory).eval()
    with torch.no_grad():
        hidden = model(**tokenizer([text], return_tensors="pt")).last_hidden_state[0]
    return hidden.numpy().astype(np.float64).mean(axis=0)


def test_mean_pooling_equals_a_direct_computation_and_ignores_padding(text_dir: Path) -> None:
    texts = ["a dog", "the bird call of the morning", "x"]
    raw = loaded(f"text:{text_dir}", normalize=False)
    assert raw.meta.embedding_dim == 16 and raw.revision == "main"
    vectors = raw.encode_text(texts)
    assert vectors.shape == (3, 16) and vectors.dtype == np.float32
    for text, vector in zip(texts, vectors, strict=True):
        # each text padded in the batch gives its own unpadded mean
        np.testing.assert_allclose(vector, _reference_embedding(text_dir, text), atol=1e-5)
    unit = loaded(f"text:{text_dir}").encode_text(texts)
    np.testing.assert_allclose(np.linalg.norm(unit, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(
        unit, vectors / np.linalg.norm(vectors, axis=1, keepdims=True), rtol=1e-5
    )
    prefixed = loaded(f"text:{text_dir}", prefix="query: ").encode_text(["a dog"])
    assert not np.allclose(prefixed[0], unit[0])


def test_the_default_text_model_is_pinned_and_text_only() -> None:
    model = registry.models.create("paraphrase-multilingual-mpnet")  # constructs, loads nothing
    assert model.source == "sentence-transformers/paraphrase-multilingual-mpnet-base-v2"
    assert model.revision == "79f2382ceacceacdf38563d7c5d16b9ff8d725d6"
    assert model.meta.embedding_dim == 768 and model.produces == frozenset()
    with pytest.raises(NotImplementedError, match=r"cascade:<asr model>\+paraphrase"):
        model.encode_audio([np.zeros(10, np.float32)])


def test_a_text_model_is_refused_by_an_audio_task_before_any_work(
    text_dir: Path, tmp_path: Path
) -> None:
    code, out = run_cli(
        "evaluate", "--task", "MockClustering", "--model", f"text:{text_dir}",
        "--output-dir", str(tmp_path), *FAST,
    )  # fmt: skip
    assert code == 1 and "does not produce embedding outputs" in out, out


def test_whisper_cascade_embeds_its_transcripts_with_the_text_model(
    whisper_dir: Path, text_dir: Path
) -> None:
    encoder = loaded(f"cascade:hf:{whisper_dir}+text:{text_dir}")
    rng = np.random.default_rng(0)
    waves = [(0.1 * rng.standard_normal(n)).astype(np.float32) for n in (8000, 12000)]
    vectors = np.stack(encoder.embed(waves))
    assert vectors.shape == (2, 16)
    transcripts = encoder.last_transcripts  # type: ignore[attr-defined]
    np.testing.assert_allclose(vectors, encoder.encode_text(transcripts), rtol=1e-5, atol=1e-6)


def test_oracle_cascade_embeds_each_clips_own_transcript(text_dir: Path) -> None:
    encoder = loaded(f"cascade:transcript-truth+text:{text_dir}")
    assert encoder.reads_transcript and encoder.meta.embedding_dim == 16
    silence = np.zeros(1600, np.float32)
    inputs = [SpeechInput("a", silence, "the river"), SpeechInput("b", silence, "a candle")]
    vectors = np.stack(encoder.encode_speech(inputs))
    np.testing.assert_allclose(vectors, encoder.encode_text(["the river", "a candle"]), rtol=1e-6)
    assert encoder.parameter_count() == loaded(f"text:{text_dir}").parameter_count()
    with pytest.raises(NotImplementedError, match="transcript from the dataset"):
        encoder.encode_audio([silence])


def test_cascade_parts_are_checked_by_name(text_dir: Path) -> None:
    with pytest.raises(OptionError, match="produces no transcripts"):
        registry.models.create(f"cascade:log-mel+text:{text_dir}")
    with pytest.raises(OptionError, match="language= applies to Whisper only"):
        registry.models.create(f"cascade:transcript-truth+text:{text_dir}", language="en")
    with pytest.raises(OptionError, match="has no text encoder"):
        registry.models.create("cascade:transcript-truth+log-mel")


def test_oracle_cascade_runs_mock_reasoning_offline_and_resumes_from_the_cache(
    text_dir: Path, tmp_path: Path
) -> None:
    """MSEB's ``transcript_truth_or_<text model>`` on span QA: questions by their transcript,
    spans by their text, one text model; the second run is served from the cache."""
    model = f"cascade:transcript-truth+text:{text_dir}"
    args = ("evaluate", "--task", "MockSpanReasoning", "--model", model, *FAST)
    code, out = run_cli(*args, "--output-dir", str(tmp_path / "first"))
    assert code == 0, out
    (path,) = (tmp_path / "first").glob("*/*/MockSpanReasoning.json")
    first = load_result(path)
    assert first.cache.n_encoded == 24 and first.cache.n_cached == 0
    assert first.scores["default"]["n_examples"] == 24
    code, out = run_cli(*args, "--output-dir", str(tmp_path / "second"))
    assert code == 0, out
    (again,) = (tmp_path / "second").glob("*/*/MockSpanReasoning.json")
    second = load_result(again)
    assert second.cache.n_encoded == 0 and second.cache.n_cached == 24
    assert second.scores == first.scores
    code, out = run_cli("results", "validate", str(path))
    assert code == 0, out


def test_oracle_cascade_embeddings_are_cached_under_the_transcript(
    text_dir: Path, tmp_path: Path
) -> None:
    """The same audio under two transcripts gives two entries; a changed transcript misses."""
    import soundfile as sf

    from audiobench.audio import Clip, FileAudioRef
    from audiobench.cache import EmbeddingCache
    from audiobench.runner import CachedEmbedder

    wav = tmp_path / "same.wav"
    sf.write(wav, np.zeros(1600, np.float32), 16000)

    def clips(*texts: str) -> list[Clip]:
        return [Clip(id=f"c{i}", audio=FileAudioRef(wav), text=t) for i, t in enumerate(texts)]

    encoder = loaded(f"cascade:transcript-truth+text:{text_dir}")
    cache = EmbeddingCache(tmp_path / "cache")
    runner = CachedEmbedder(encoder, cache, allow_duplicates=True)
    _, vectors = runner.embed(clips("the river", "a candle"), "test")
    np.testing.assert_allclose(
        np.stack(vectors), encoder.encode_text(["the river", "a candle"]), rtol=1e-6
    )
    assert runner.stats.n_encoded == 2
    again = CachedEmbedder(encoder, cache, allow_duplicates=True)
    _, cached = again.embed(clips("the river", "an orchard"), "test")
    assert again.stats.n_cached == 1 and again.stats.n_encoded == 1
    np.testing.assert_array_equal(cached[0], vectors[0])
    np.testing.assert_allclose(cached[1], encoder.encode_text(["an orchard"])[0], rtol=1e-6)


@pytest.mark.parametrize(
    "task", ["MockAudioTextRetrieval", "MockReranking", "MockZeroShotClassification"]
)
def test_whisper_cascade_runs_mock_text_tasks_offline(
    task: str, whisper_dir: Path, text_dir: Path, tmp_path: Path
) -> None:
    """MSEB's ``whisper_or_<text model>``: spoken side through Whisper, text side direct."""
    code, out = run_cli(
        "evaluate", "--task", task, "--model", f"cascade:hf:{whisper_dir}+text:{text_dir}",
        "--output-dir", str(tmp_path), *FAST,
    )  # fmt: skip
    assert code == 0, out
    (path,) = tmp_path.glob(f"*/*/{task}.json")
    assert load_result(path).main_score is not None


def test_oracle_cascade_on_clips_without_transcripts_names_them(
    text_dir: Path, tmp_path: Path
) -> None:
    code, out = run_cli(
        "evaluate", "--task", "MockClustering",
        "--model", f"cascade:transcript-truth+text:{text_dir}",
        "--output-dir", str(tmp_path), *FAST,
    )  # fmt: skip
    assert code == 1 and "have none (the task's text column)" in out, out
