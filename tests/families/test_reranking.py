"""The reranking family: hand-computed cases, WER/CER, bad input, Clotho, CLI."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np
import pytest

from audiobench import registry
from audiobench.benchmark import get_benchmark
from audiobench.families import RerankingTask
from audiobench.results import load_result
from audiobench.synthetic.candidates import caption_candidates
from audiobench.task import TaskFamily
from tests.families.test_retrieval import (
    FAST,
    FakeEmbedder,
    _tone,
    clip,
    meta,
    run_cli,
    tiny_clap,  # noqa: F401 - a session fixture used below
)
from tests.hub_copy import write_hub_like


class TextRerank(RerankingTask):
    options = RerankingTask.Options(candidate_modality="text")
    metadata = meta("TestTextRerank", TaskFamily.RERANKING, "map")


class AudioRerank(RerankingTask):
    options = RerankingTask.Options(candidate_modality="audio")
    metadata = meta("TestAudioRerank", TaskFamily.RERANKING, "map")


TEXTS = {
    "a dog barks": [1.0, 0.0],
    "a cat meows": [0.6, 0.8],
    "the dog barks": [0.0, 1.0],
    "rain falls": [0.0, 1.0],
    "wind blows": [1.0, 0.0],
}


def text_queries() -> list:
    return [
        # q1 ranks "a dog barks" (1), "a cat meows" (0.6), "the dog barks" (0): positive at 3.
        clip(
            "q1",
            split="query",
            candidates="a dog barks|a cat meows|the dog barks",
            positives="the dog barks",
        ),
        # q2 ranks "rain falls" (1) first: its positive.
        clip("q2", candidates=["wind blows", "rain falls"], positives=["rain falls"]),
        clip("other"),  # neither split "query" nor candidates: not a query
    ]


def test_text_candidates_hand_computed() -> None:
    fake = FakeEmbedder({"q1": [1.0, 0.0], "q2": [0.0, 1.0], "other": [1, 1]}, TEXTS)
    result = TextRerank().evaluate(fake, text_queries())
    report = result.scores["default"]
    assert report["map"] == pytest.approx((1 / 3 + 1) / 2)
    assert report["mrr"] == pytest.approx((1 / 3 + 1) / 2)
    assert report["ndcg"] == pytest.approx((1 / np.log2(4) + 1) / 2)
    assert report["n_queries"] == 2 and report["n_candidates"] == 5
    # Top candidates "a dog barks" (vs "the dog barks": 1 word, 3 characters) and "rain falls".
    assert report["wer"] == pytest.approx((1 + 0) / (3 + 2))
    assert report["char_error_rate"] == pytest.approx((3 + 0) / (13 + 10))
    # MSEB's candidate error rate: q1's top candidate has a word error, q2's has none.
    assert report["candidate_error_rate"] == pytest.approx(1 / 2)
    assert "cer" not in report
    assert result.main_score == report["map"]
    assert result.details["text_normalization"]["reference"] == "closest positive"
    assert TextRerank.score_problems(result.scores) == []


def test_audio_candidates_by_clip_id() -> None:
    clips = [
        clip("q", split="query", candidates="c1|c2|c3", positives="c3|c1"),
        clip("c1"),
        clip("c2"),
        clip("c3"),
    ]
    vectors = {"q": [1.0, 0.0], "c1": [0.5, 0.5], "c2": [1.0, 0.1], "c3": [0.0, 1.0]}
    report = AudioRerank().evaluate(FakeEmbedder(vectors), clips).scores["default"]
    # Order c2, c1, c3: relevant at ranks 2 and 3.
    assert report["map"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert report["mrr"] == pytest.approx(1 / 2)
    assert "wer" not in report
    # A candidate the runner skipped is dropped from the list and counted.
    skipped = AudioRerank().evaluate(FakeEmbedder(vectors, skip=["c2"]), clips)
    assert skipped.scores["default"]["n_candidates_unembedded"] == 1
    assert skipped.scores["default"]["map"] == pytest.approx(1.0)


def test_empty_lists_and_missing_positives() -> None:
    clips = [
        *text_queries(),
        clip("q3", split="query"),  # no candidates at all
        clip("q4", candidates="a cat meows", positives="the dog barks"),
    ]
    fake = FakeEmbedder({"q1": [1, 0], "q2": [0, 1], "q3": [1, 0], "q4": [1, 0]}, TEXTS)
    with pytest.raises(ValueError, match=r"1 with an empty candidate list \('q3'\)") as err:
        TextRerank().evaluate(fake, clips)
    assert "1 without a relevant candidate ('q4')" in str(err.value)
    assert "on_missing='skip'" in str(err.value)
    result = TextRerank(on_missing="skip").evaluate(fake, clips)
    report = result.scores["default"]
    assert report["n_skipped_empty"] == 1 and report["n_skipped_no_relevant"] == 1
    assert report["n_queries"] == 2 and report["map"] == pytest.approx((1 / 3 + 1) / 2)
    assert report["wer"] == pytest.approx(1 / 5)  # skipped queries stay out of WER too
    skipped = result.details["skipped_queries"]["default"]
    assert skipped["empty_ids"] == ["q3"] and skipped["no_relevant_ids"] == ["q4"]
    with pytest.raises(ValueError, match="no query has a non-empty candidate list"):
        TextRerank(on_missing="skip").evaluate(fake, clips[2:])


def test_bad_input_is_named() -> None:
    fake = FakeEmbedder({"q": [1, 0]})
    with pytest.raises(ValueError, match=r"'q' lists candidate\(s\) 'ghost'"):
        AudioRerank().evaluate(fake, [clip("q", candidates="ghost", positives="ghost")])
    with pytest.raises(ValueError, match="no query clips"):
        AudioRerank().evaluate(fake, [clip("q")])
    with pytest.raises(ValueError, match=r"metadata\['candidates'\]"):
        AudioRerank().evaluate(fake, [clip("q", candidates=3)])
    log_mel = registry.models.create("log-mel")
    AudioRerank.check_encoder(log_mel)
    with pytest.raises(ValueError, match="'log-mel' has no text encoder"):
        TextRerank.check_encoder(log_mel)


def test_score_problems() -> None:
    counts = dict.fromkeys(
        (
            "n_queries",
            "n_skipped",
            "n_skipped_empty",
            "n_skipped_no_relevant",
            "n_candidates",
            "n_queries_unembedded",
            "n_candidates_unembedded",
        ),
        0,
    )
    # Consistent with its counts: one query with two candidates, all three error rates.
    counts.update(n_queries=1, n_candidates=2)
    good = {
        "default": {
            "map": 1.0,
            "mrr": 1.0,
            "ndcg": 0.5,
            "ndcg@5": 0.2,
            "wer": 1.7,
            "candidate_error_rate": 1.0,
            "char_error_rate": 0.9,
            **counts,
        }
    }
    assert TextRerank.score_problems(good) == []
    bad = {"default": {**good["default"], "wer": -0.1, "map": 2, "acc": 0.5}}
    problems = TextRerank.score_problems(bad)
    assert any(
        p.startswith("default.wer: Input should be greater than or equal to 0") for p in problems
    )
    assert any(
        p.startswith("default.map: Input should be less than or equal to 1, not 2")
        for p in problems
    )
    assert any(p.startswith("default.acc: unknown metric") for p in problems)
    assert len(problems) == 3


def test_caption_candidates_picks_hard_negatives() -> None:
    texts = [
        ["a dog barks", "dog barking"],
        ["a dog barks loudly"],
        ["rain on a roof"],
        ["a dog growls"],
        ["a DOG  barks"],  # the same text as a positive of item 0
    ]
    labels = [None, None, None, "x", None]
    lists = caption_candidates(texts, labels, n_negatives=2, seed=0)
    candidates, positives = lists[0]
    assert positives == ["a dog barks", "dog barking"]
    # Items 4 (only a repeat of a positive) and 1 / 3 are the most alike: 4 adds nothing.
    expected = ["a dog barks", "dog barking", "a dog barks loudly", "a dog growls"]
    assert sorted(candidates) == sorted(expected)
    assert lists == caption_candidates(texts, labels, n_negatives=2, seed=0)  # deterministic
    # Items with the same label are never negatives.
    same = caption_candidates(
        [["dog barks"], ["dog barks loud"], ["rain"]], ["k", "k", None], n_negatives=1, seed=0
    )
    assert sorted(same[0][0]) == ["dog barks", "rain"]


def test_every_declared_task_instantiates() -> None:
    names = {"ClothoReranking": False, "MockReranking": True, "MockAudioReranking": True}
    tasks = registry.tasks.load_all()
    for name, offline in names.items():
        task = tasks[name]()
        assert task.metadata.family == TaskFamily.RERANKING and task.metadata.main_score == "map"
        assert task.metadata.offline is offline
    assert get_benchmark("AudioReranking").tasks == ("ClothoReranking",)


def test_clotho_reranking_on_a_hub_like_copy(tmp_path: Path) -> None:
    rows = [
        {"audio": (_tone(300.0 * (i + 1)), 44100), "text": text}
        for i, text in enumerate(
            [
                "A dog barks. A dog is barking.",
                "A dog growls. Someone whistles.",
                "Rain falls on a roof. Water drips.",
                "Cars pass by. Traffic noise.",
                "Birds sing in the morning. Birds chirp.",
                "A door creaks open. A door slams.",
            ]
        )
    ]
    root = write_hub_like(tmp_path / "clotho", rows, split="test")
    task = registry.tasks.load_all()["ClothoReranking"](dataset_path=root)
    clips = task.load_data()
    first = clips[0].metadata
    assert first["positives"] == ["A dog barks", "A dog is barking"]
    assert "A dog growls" in first["candidates"]  # the most alike clip is a hard negative
    assert len(first["candidates"]) == 2 + 2 * 4
    audio = {c.id: [1.0, float(i)] for i, c in enumerate(clips)}
    fake = FakeEmbedder(audio, lambda t: [1.0, float(len(t))])
    result = task.evaluate(fake, clips)
    report = result.scores["default"]
    assert report["n_queries"] == 6 and report["n_candidates"] == 60
    assert 0 <= report["map"] <= 1 and report["wer"] >= 0
    assert type(task).score_problems(result.scores) == []


def test_mock_audio_reranking_runs_with_log_mel(tmp_path: Path) -> None:
    code, out = run_cli(
        "evaluate", "--task", "MockAudioReranking", "--model", "log-mel",
        "--output-dir", str(tmp_path), *FAST,
    )  # fmt: skip
    assert code == 0, out
    result = load_result(tmp_path / "log-mel" / "v1" / "MockAudioReranking.json")
    report = result.scores["default"]
    assert report["n_queries"] == 24 and report["n_candidates"] == 24 * 8
    assert result.main_score is not None and result.main_score > 0.6  # chance mAP is ~0.45


def test_mock_reranking_needs_a_text_encoder(tmp_path: Path) -> None:
    code, out = run_cli(
        "evaluate", "--task", "MockReranking", "--model", "log-mel",
        "--output-dir", str(tmp_path), *FAST,
    )  # fmt: skip
    assert code == 1 and "no text encoder" in out


def test_mock_reranking_runs_with_the_tiny_clap(tmp_path: Path, tiny_clap: Path) -> None:  # noqa: F811
    code, out = run_cli(
        "evaluate", "--task", "MockReranking", "--model", f"hf:{tiny_clap}",
        "--output-dir", str(tmp_path), *FAST,
    )  # fmt: skip
    assert code == 0, out
    (path,) = tmp_path.glob("*/*/MockReranking.json")
    report = load_result(path).scores["default"]
    assert report["n_queries"] == 24 and report["n_candidates"] == 24 * 6
    assert report["wer"] >= 0 and report["char_error_rate"] >= 0
    # The generated labels.csv carries the candidates "|"-joined.
    data = Path(os.environ["AUDIOBENCH_DATA"]) / "generated" / "MockReranking-v1"
    with (data / "labels.csv").open() as fh:
        row = next(csv.DictReader(fh))
    assert row["positives"] in row["candidates"].split("|")
