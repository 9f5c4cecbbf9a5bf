"""The retrieval family: hand-computed cases, bad input, faiss, real task definitions, CLI."""

from __future__ import annotations

import dataclasses
import json
import math
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from audiobench import registry
from audiobench.audio import Clip, FileAudioRef
from audiobench.benchmark import get_benchmark
from audiobench.cli import app
from audiobench.encoder import Modality
from audiobench.families import RetrievalTask
from audiobench.families.ranking_inputs import parse_list
from audiobench.results import load_result
from audiobench.runner import ProgressBar
from audiobench.task import Embedder, TaskFamily, TaskMetadata
from tests.hub_copy import write_hub_like
from tests.tiny_models import build

# -- helpers shared with the reranking and zero-shot classification tests ---------------------


class FakeEmbedder(Embedder):
    """Fixed vectors per clip id and per text; ``skip`` ids behave like skipped clips."""

    def __init__(
        self,
        audio: Mapping[str, Sequence[float]],
        text: Mapping[str, Sequence[float]] | Callable[[str], Sequence[float]] | None = None,
        *,
        skip: Sequence[str] = (),
    ) -> None:
        modalities = (Modality.AUDIO,) if text is None else (Modality.AUDIO, Modality.TEXT)
        self.encoder = SimpleNamespace(
            meta=SimpleNamespace(name="fake", modalities=modalities), produces={"embedding"}
        )
        self.durations: dict[str, float] = {}
        self.audio = audio
        self.text = text
        self.skip = set(skip)
        self.text_calls: list[list[str]] = []

    def embed(
        self, clips: Sequence[Clip], description: str, *, pooled: bool = True
    ) -> tuple[list[Clip], list[Any]]:
        kept = [c for c in clips if c.id not in self.skip]
        return kept, [np.asarray(self.audio[c.id], dtype=np.float32) for c in kept]

    def embed_text(self, texts: Sequence[str], description: str) -> np.ndarray:
        if self.text is None:
            raise NotImplementedError("model 'fake' has no text encoder")
        self.text_calls.append(list(texts))
        lookup = self.text if callable(self.text) else self.text.__getitem__
        return np.array([lookup(t) for t in texts], dtype=np.float32)

    def track(self, description: str, total: int, unit: str) -> ProgressBar:
        return ProgressBar(total)


def hashed_vector(text: str, dim: int = 8) -> list[float]:
    """A fixed pseudo-random vector per text."""
    return np.random.default_rng(zlib.crc32(text.encode())).standard_normal(dim).tolist()


def clip(
    clip_id: str,
    *,
    label: str | None = None,
    split: str | None = None,
    text: str | None = None,
    subset: str | None = None,
    **metadata: Any,
) -> Clip:
    return Clip(
        id=clip_id,
        audio=FileAudioRef(Path(f"{clip_id}.wav")),  # never read: the fake embeds by id
        label=label,
        split=split,
        text=text,
        subset=subset,
        metadata=metadata,
    )


def meta(name: str, family: TaskFamily, main: str, subsets: tuple[str, ...] = ()) -> TaskMetadata:
    return TaskMetadata(
        name=name,
        family=family,
        description="test task",
        dataset={"kind": "folder", "path": "unused"},
        main_score=main,
        subsets=subsets,
    )


def run_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout + result.stderr


@pytest.fixture(scope="session")
def tiny_clap(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny random-weight CLAP, built once per test session (and worker)."""
    root = tmp_path_factory.getbasetemp() / "families-tiny-models"
    root.mkdir(exist_ok=True)
    return build("clap", root)


FAST = ("--no-progress", "--no-flops")


# -- tasks used by the unit tests -------------------------------------------------------------


class A2A(RetrievalTask):
    metadata = meta("TestA2A", TaskFamily.RETRIEVAL, "mrr")


class A2T(RetrievalTask):
    options = RetrievalTask.Options(
        query_modality="audio", document_modality="text", layout="paired", text_separator="."
    )
    metadata = meta("TestA2T", TaskFamily.RETRIEVAL, "mrr")


class T2A(A2T):
    options = RetrievalTask.Options(
        query_modality="text", document_modality="audio", layout="paired", text_separator="."
    )


class Subsets(RetrievalTask):
    metadata = meta("TestSubsets", TaskFamily.RETRIEVAL, "mrr", subsets=("s1", "s2"))


# q1 (A) ranks d2 (cos 1), d1 (0.6), d3 (0): relevant d1, d3 at ranks 2 and 3.
# q2 (B) ranks d3 (1), d1 (0.8), d2 (0): relevant d2 at rank 3.
VECTORS = {
    "q1": [1.0, 0.0],
    "q2": [0.0, 1.0],
    "d1": [0.6, 0.8],
    "d2": [1.0, 0.0],
    "d3": [0.0, 1.0],
}


def a2a_clips(**q1_metadata: Any) -> list[Clip]:
    return [
        clip("q1", label="A", split="query", **q1_metadata),
        clip("q2", label="B", split="query"),
        clip("d1", label="A", split="corpus"),
        clip("d2", label="B", split="corpus"),
        clip("d3", label="A", split="corpus"),
    ]


def ndcg(ranks: Sequence[int], n_relevant: int) -> float:
    dcg = sum(1 / math.log2(r + 1) for r in ranks)
    return dcg / sum(1 / math.log2(r + 1) for r in range(1, n_relevant + 1))


def test_query_by_example_hand_computed() -> None:
    result = A2A().evaluate(FakeEmbedder(VECTORS), a2a_clips())
    report = result.scores["default"]
    assert report["mrr"] == pytest.approx((1 / 2 + 1 / 3) / 2)
    assert report["map"] == pytest.approx(((1 / 2 + 2 / 3) / 2 + 1 / 3) / 2)
    assert report["ndcg@10"] == pytest.approx((ndcg([2, 3], 2) + ndcg([3], 1)) / 2)
    assert report["hit@1"] == 0.0 and report["hit@5"] == 1.0
    assert report["recall@1"] == 0.0 and report["recall@5"] == 1.0
    assert report["n_queries"] == 2 and report["n_documents"] == 3
    assert report["n_skipped"] == 0 and report["n_clips_unused"] == 0
    assert result.main_score == report["mrr"]
    assert result.aggregates == {}
    assert result.details["index"] == "exact" and result.details["ks"] == [1, 5, 10]
    assert A2A.score_problems(result.scores) == []


def test_explicit_relevance_overrides_labels() -> None:
    # q1's relevant set is d2 and d3 (ranks 1 and 3), whatever the labels say.
    result = A2A().evaluate(FakeEmbedder(VECTORS), a2a_clips(relevant="d2|d3"))
    report = result.scores["default"]
    assert report["mrr"] == pytest.approx((1 + 1 / 3) / 2)
    assert report["map"] == pytest.approx(((1 + 2 / 3) / 2 + 1 / 3) / 2)


def test_parse_list_encodings() -> None:
    assert parse_list("a| b ||c", field="relevant", clip_id="q") == ["a", "b", "c"]
    assert parse_list(["a", 3], field="relevant", clip_id="q") == ["a", "3"]
    assert parse_list("", field="relevant", clip_id="q") == []
    with pytest.raises(ValueError, match=r"clip 'q'.*relevant"):
        parse_list({"a": 1}, field="relevant", clip_id="q")


def test_audio_to_text_and_text_to_audio_with_several_captions() -> None:
    clips = [clip("c1", text="cap one. cap two."), clip("c2", text=" cap three ")]
    audio = {"c1": [1.0, 0.0], "c2": [0.0, 1.0]}
    text = {"cap one": [0.0, 1.0], "cap two": [1.0, 0.1], "cap three": [0.1, 1.0]}
    fake = FakeEmbedder(audio, text)
    a2t = A2T().evaluate(fake, clips).scores["default"]
    # c1 ranks cap two (rank 1), cap three, cap one (rank 3); c2 ranks cap one, cap three (2).
    assert a2t["mrr"] == pytest.approx((1 + 1 / 2) / 2)
    assert a2t["map"] == pytest.approx(((1 + 2 / 3) / 2 + 1 / 2) / 2)
    assert a2t["n_queries"] == 2 and a2t["n_documents"] == 3
    assert sorted(fake.text_calls[0]) == ["cap one", "cap three", "cap two"]  # each text once
    t2a = T2A().evaluate(fake, clips).scores["default"]
    # cap one → c2 first (c1 at 2); cap two → c1 first; cap three → c2 first.
    assert t2a["mrr"] == pytest.approx((1 / 2 + 1 + 1) / 3)
    assert t2a["n_queries"] == 3 and t2a["n_documents"] == 2


def test_query_without_relevant_document_raises_or_is_counted() -> None:
    clips = [*a2a_clips(), clip("q3", label="C", split="query")]
    vectors = {**VECTORS, "q3": [1.0, 1.0]}
    with pytest.raises(ValueError, match=r"1 of 3 queries have no relevant.*'q3'.*on_missing"):
        A2A().evaluate(FakeEmbedder(vectors), clips)
    result = A2A(on_missing="skip").evaluate(FakeEmbedder(vectors), clips)
    report = result.scores["default"]
    assert report["n_skipped"] == 1 and report["n_queries"] == 2
    assert report["mrr"] == pytest.approx((1 / 2 + 1 / 3) / 2)  # q3 left out, not counted as 0
    skipped = result.details["skipped_queries"]["default"]
    assert skipped["n_no_relevant"] == 1 and skipped["no_relevant_ids"] == ["q3"]
    only = [clip("q", label="C", split="query"), clip("d1", label="A", split="corpus")]
    with pytest.raises(ValueError, match="1 of 1 queries have no relevant"):
        A2A(on_missing="skip").evaluate(FakeEmbedder({"q": [1, 0], "d1": [0, 1]}), only)


def test_bad_input_is_named() -> None:
    fake = FakeEmbedder(VECTORS)
    with pytest.raises(ValueError, match=r"'q1' lists relevant document.*'nope'"):
        A2A().evaluate(fake, a2a_clips(relevant="d1|nope"))
    with pytest.raises(ValueError, match=r"needs query clips.*found 0 and 3"):
        A2A().evaluate(fake, [c for c in a2a_clips() if c.split == "corpus"])
    no_text = [clip("c1", text="x"), clip("c2")]
    with pytest.raises(ValueError, match="document clip 'c2' has no text"):
        A2T().evaluate(FakeEmbedder({"c1": [1, 0], "c2": [0, 1]}, {"x": [1, 0]}), no_text)
    zero = {**VECTORS, "d2": [0.0, 0.0]}
    with pytest.raises(ValueError, match=r"zero vectors.*'d2'"):
        A2A().evaluate(FakeEmbedder(zero), a2a_clips())
    wide = {"c1": [1.0, 0.0, 0.0]}
    with pytest.raises(ValueError, match="dimension 3 but text embeddings 2"):
        A2T().evaluate(FakeEmbedder(wide, {"x": [1.0, 0.0]}), [clip("c1", text="x")])
    with pytest.raises(ValueError, match="invalid option index"):
        A2A(index="annoy")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="depth 5 is below"):
        A2A(index="faiss", depth=5)
    with pytest.raises(ValueError, match="no clips"):
        A2A().evaluate(fake, [])


def test_text_tasks_refuse_an_audio_only_model() -> None:
    log_mel = registry.models.create("log-mel")
    A2A.check_encoder(log_mel)  # audio only: fine
    for task in (A2T, T2A):
        with pytest.raises(ValueError, match="'log-mel' has no text encoder"):
            task.check_encoder(log_mel)


def test_skipped_clips_are_counted() -> None:
    result = A2A().evaluate(FakeEmbedder(VECTORS, skip=["d3", "q2"]), a2a_clips())
    report = result.scores["default"]
    assert report["n_documents_unembedded"] == 1 and report["n_queries_unembedded"] == 1
    assert report["n_queries"] == 1 and report["n_documents"] == 2
    assert report["mrr"] == pytest.approx(1 / 2)  # q1 ranks d2, d1
    assert result.details["skipped_queries"]["default"]["n_unembedded"] == 1


def test_subsets_are_scored_apart_and_averaged() -> None:
    clips = [
        *[dataclasses.replace(c, subset="s1") for c in a2a_clips()],
        clip("x", label="A", split="query", subset="s2"),
        clip("y", label="A", split="corpus", subset="s2"),
    ]
    result = Subsets().evaluate(FakeEmbedder({**VECTORS, "x": [1, 0], "y": [1, 1]}), clips)
    assert list(result.scores) == ["s1", "s2"]
    mean = result.aggregates["mean"]
    assert mean["mrr"] == pytest.approx(((1 / 2 + 1 / 3) / 2 + 1) / 2)
    assert mean["n_subsets"] == 2 and mean["subsets"] == ["s1", "s2"]
    assert "n_queries" not in mean
    assert result.main_score == mean["mrr"]
    assert Subsets.score_problems(result.scores) == []
    assert Subsets.score_problems(result.aggregates) == []


def test_faiss_matches_exact_search() -> None:
    rng = np.random.default_rng(0)
    n_q, n_d = 12, 60
    clips = [clip(f"q{i}", label=str(i % 4), split="query") for i in range(n_q)]
    clips += [clip(f"d{i}", label=str(i % 4), split="corpus") for i in range(n_d)]
    vectors = {c.id: rng.standard_normal(6).tolist() for c in clips}
    exact = A2A().evaluate(FakeEmbedder(vectors), clips).scores["default"]
    full = A2A(index="faiss", depth=n_d).evaluate(FakeEmbedder(vectors), clips).scores["default"]
    assert full == pytest.approx(exact)
    shallow = A2A(index="faiss", depth=10).evaluate(FakeEmbedder(vectors), clips)
    report = shallow.scores["default"]
    # Cutoff metrics only look at the top 10; MRR and mAP become MRR@10 and mAP@10.
    for name in ("hit@1", "hit@5", "hit@10", "recall@10", "ndcg@10"):
        assert report[name] == pytest.approx(exact[name])
    assert report["map"] <= exact["map"] and report["mrr"] <= exact["mrr"]
    assert shallow.details["depth"] == 10


def test_score_problems() -> None:
    counts = {
        "n_queries": 3,
        "n_skipped": 0,
        "n_documents": 4,
        "n_queries_unembedded": 0,
        "n_documents_unembedded": 0,
    }
    # Consistent with its counts: recall at k ≥ n_documents is 1 (every document ranked).
    good = {"default": {"mrr": 0.5, "map": 0.4, "hit@3": 1.0, "recall@20": 1.0, **counts}}
    assert A2A.score_problems(good) == []
    bad = {
        "default": {**good["default"], "mrr": 1.5, "p@1": 0.3, "n_queries": -1, "map": None},
        "other": {"mrr": 0.1},
    }
    problems = A2A.score_problems(bad)
    assert any(
        p.startswith("default.mrr: Input should be less than or equal to 1, not 1.5")
        for p in problems
    )
    assert any(p.startswith("default.p@1: unknown metric") for p in problems)
    assert any(
        p.startswith("default.n_queries: Input should be greater than or equal to 0")
        for p in problems
    )
    assert any(p.startswith("other: unknown subset") for p in problems)
    assert not any("default.map" in p for p in problems)  # null is allowed
    assert len(problems) == 4
    mean = {"mrr": 0.2, "map": None, "n_subsets": 2, "subsets": ["default"]}
    assert A2A.score_problems({"mean": mean}) == []


# -- the registered tasks ---------------------------------------------------------------------


def test_every_declared_task_instantiates() -> None:
    names = {
        "ESC50Retrieval": False,
        "ClothoA2TRetrieval": False,
        "ClothoTextToAudioRetrieval": False,
        "MockRetrieval": True,
        "MockAudioTextRetrieval": True,
        "MockTextAudioRetrieval": True,
    }
    found = {n: c for n, c in registry.tasks.load_all().items() if n in names}
    assert set(found) == set(names)
    for name, cls in found.items():
        task = cls()
        assert task.metadata.family == TaskFamily.RETRIEVAL and task.metadata.main_score == "mrr"
        assert task.metadata.offline is names[name]
        if not names[name]:
            assert task.metadata.dataset.kind == "huggingface" and task.metadata.revision
    bench = get_benchmark("AudioRetrieval")
    assert set(bench.tasks) == {n for n, offline in names.items() if not offline}
    assert all(c.aggregate is None for c in bench.columns)


def _tone(freq: float, seconds: float = 0.5, sr: int = 44100) -> np.ndarray:
    t = np.arange(int(seconds * sr)) / sr
    return (0.3 * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def test_esc50_retrieval_on_a_hub_like_copy(tmp_path: Path) -> None:
    rows = [
        {
            "filename": f"{fold}-{k}-A-{target}.wav",
            "fold": fold,
            "target": target,
            "category": category,
            "audio": (_tone(freq * (1 + 0.01 * fold)), 44100),
        }
        for fold in range(1, 6)
        for k, (target, category, freq) in enumerate(
            [(0, "dog", 300.0), (10, "rain", 1200.0), (40, "helicopter", 4000.0)]
        )
    ]
    root = write_hub_like(tmp_path / "esc50", rows)
    from audiobench import evaluate

    (result,) = evaluate(
        "ESC50Retrieval",
        "log-mel",
        dataset=root,
        output_dir=tmp_path / "out",
        progress=False,
        count_flops=False,
        cache_dir=tmp_path / "cache",
    )
    report = result.scores["default"]
    assert report["n_queries"] == 3 and report["n_documents"] == 12  # fold 5 vs folds 1-4
    assert result.main_score == pytest.approx(1.0)  # tones of one class are nearest
    assert registry.tasks.load_all()["ESC50Retrieval"].score_problems(result.scores) == []


def test_clotho_tasks_read_a_hub_like_copy(tmp_path: Path) -> None:
    rows = [
        {"audio": (_tone(300.0), 44100), "text": "A dog barks. A dog is barking loudly."},
        {"audio": (_tone(900.0), 44100), "text": "Rain falls on a roof.Water drips."},
    ]
    root = write_hub_like(tmp_path / "clotho", rows, split="test")
    tasks = registry.tasks.load_all()
    clips = tasks["ClothoA2TRetrieval"](dataset_path=root).load_data()
    assert [c.id for c in clips] == ["test:0", "test:1"]
    audio = {"test:0": [1.0, 0.0], "test:1": [0.0, 1.0]}
    fake = FakeEmbedder(audio, lambda t: [1.0, 0.0] if "dog" in t else [0.0, 1.0])
    a2t = tasks["ClothoA2TRetrieval"](dataset_path=root).evaluate(fake, clips)
    assert a2t.scores["default"]["n_documents"] == 4 and a2t.main_score == 1.0
    assert sorted(t for call in fake.text_calls for t in call) == sorted(
        ["A dog barks", "A dog is barking loudly", "Rain falls on a roof", "Water drips"]
    )
    t2a = tasks["ClothoTextToAudioRetrieval"](dataset_path=root).evaluate(fake, clips)
    assert t2a.scores["default"]["n_queries"] == 4 and t2a.main_score == 1.0


# -- the offline mocks from the command line -------------------------------------------------


def test_mock_retrieval_runs_with_log_mel(tmp_path: Path) -> None:
    code, out = run_cli(
        "evaluate", "--task", "MockRetrieval", "--model", "log-mel", "--output-dir", str(tmp_path),
        *FAST,
    )  # fmt: skip
    assert code == 0, out
    result = load_result(tmp_path / "log-mel" / "v1" / "MockRetrieval.json")
    report = result.scores["default"]
    assert report["n_queries"] == 16 and report["n_documents"] == 32
    assert result.main_score is not None and result.main_score > 0.5  # chance MRR is ~0.3
    assert result.task.family == "retrieval"


def test_text_mocks_need_a_text_encoder(tmp_path: Path) -> None:
    code, out = run_cli(
        "evaluate", "--task", "MockAudioTextRetrieval", "--model", "log-mel",
        "--output-dir", str(tmp_path), *FAST,
    )  # fmt: skip
    assert code == 1 and "no text encoder" in out
    assert not (tmp_path / "log-mel").exists()


def test_text_mocks_run_with_the_tiny_clap(tmp_path: Path, tiny_clap: Path) -> None:
    model = f"hf:{tiny_clap}"
    for name, n_queries in (("MockAudioTextRetrieval", 24), ("MockTextAudioRetrieval", 24)):
        code, out = run_cli(
            "evaluate", "--task", name, "--model", model, "--output-dir", str(tmp_path), *FAST
        )
        assert code == 0, out
        (path,) = tmp_path.glob(f"*/*/{name}.json")
        result = load_result(path)
        assert result.scores["default"]["n_queries"] == n_queries
        assert 0.0 <= result.main_score <= 1.0  # type: ignore[operator]
        assert json.loads(path.read_text())["details"]["layout"] == "paired"
