"""The pair classification family: hand-made pairs, bad input, drawn pairs, the mock, the CLI."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from audiobench import registry
from audiobench.audio import Clip, FileAudioRef
from audiobench.cli import app
from audiobench.families import PairClassificationTask
from audiobench.families.pair_classification import _unrank_pairs, parse_pair_label
from audiobench.metrics.pair_classification import pair_classification_scores
from audiobench.results import load_result
from audiobench.task import TaskFamily, TaskMetadata
from tests.families.test_retrieval import FakeEmbedder

_META = {"description": "pairs", "dataset": {"kind": "folder", "path": "."}}


def _task(main: str = "max_ap", **options: Any) -> PairClassificationTask:
    cls = type(
        "Pairs",
        (PairClassificationTask,),
        {
            "metadata": TaskMetadata(name="Pairs", main_score=main, **_META),  # type: ignore[arg-type]
            "options": PairClassificationTask.Options(**options),
        },
    )
    return cls()


def _clip(clip_id: str, label: str, pair: str | None = None, subset: str | None = None) -> Clip:
    metadata = {"pair": pair} if pair is not None else {}
    return Clip(
        id=clip_id,
        audio=FileAudioRef(Path(f"/x/{clip_id}.wav")),
        label=label,
        subset=subset,
        metadata=metadata,
    )


def _pairs(
    vectors: list[tuple[list[float], list[float], int]], subset: str | None = None
) -> tuple[list[Clip], dict[str, list[float]]]:
    clips, audio = [], {}
    for i, (a, b, y) in enumerate(vectors):
        for side, v in (("a", a), ("b", b)):
            clips.append(_clip(f"{subset or ''}p{i}{side}", str(y), f"p{i}", subset))
            audio[f"{subset or ''}p{i}{side}"] = v
    return clips, audio


SEPARABLE = [
    ([1.0, 0.0], [0.9, 0.1], 1),
    ([0.0, 1.0], [0.1, 0.9], 1),
    ([1.0, 0.0], [0.0, 1.0], 0),
    ([0.7, 0.7], [-0.7, 0.7], 0),
]


def test_separable_pairs_score_one_and_match_the_metric_function() -> None:
    clips, audio = _pairs(SEPARABLE)
    scores = _task().evaluate(FakeEmbedder(audio), clips)
    report = scores.scores["default"]
    assert scores.main_score == 1.0 and report["cosine"]["ap"] == 1.0
    assert report["n_pairs"] == 4 and report["n_positive"] == 2 and report["n_clips"] == 8
    a = np.array([p[0] for p in SEPARABLE])
    b = np.array([p[1] for p in SEPARABLE])
    direct = pair_classification_scores(a, b, np.array([p[2] for p in SEPARABLE]))
    for name in ("cosine", "dot", "euclidean", "manhattan"):
        for metric in ("accuracy", "f1", "precision", "recall", "ap"):
            assert report[name][metric] == pytest.approx(direct[f"{name}_{metric}"])
    assert report["max_ap"] == pytest.approx(direct["max_ap"])
    assert PairClassificationTask.score_problems(scores.scores) == []
    assert scores.details["pair_counts"]["default"] == {"layout": "given", "n_pairs_total": 4}


def test_main_score_may_name_one_similarity() -> None:
    clips, audio = _pairs(SEPARABLE)
    scores = _task("euclidean:ap").evaluate(FakeEmbedder(audio), clips)
    assert scores.main_score == scores.scores["default"]["euclidean"]["ap"]
    with pytest.raises(ValueError, match="max_<metric>"):
        _task("cosine:threshold")
    with pytest.raises(ValueError, match="reference's keys"):
        _task("cosine:ap", protocol="mteb")


def test_mteb_protocol_reports_the_reference_keys() -> None:
    clips, audio = _pairs(SEPARABLE)
    task = _task(protocol="mteb")
    scores = task.evaluate(FakeEmbedder(audio), clips)
    report = scores.scores["default"]
    assert report["max_ap"] == 1.0 and report["similarity_ap"] == report["cosine_ap"]
    assert report["n_samples"] == 4 and not any(k.endswith("threshold") for k in report)
    assert type(task).score_problems(scores.scores) == []
    assert scores.details["protocol"]["name"] == "mteb"


def test_pair_labels_in_words() -> None:
    assert [parse_pair_label(v) for v in ("1", "Same", " true ", "yes")] == [1, 1, 1, 1]
    assert [parse_pair_label(v) for v in ("0", "different", "FALSE", "no")] == [0, 0, 0, 0]
    assert parse_pair_label("maybe") is None and parse_pair_label(None) is None


@pytest.mark.parametrize(
    ("clips", "message"),
    [
        ([_clip("a", "1", "p0"), _clip("b", "1", "p0"), _clip("c", "1", "p0")], "exactly two"),
        ([_clip("a", "1", "p0"), _clip("b", "0", "p0")], "different labels"),
        ([_clip("a", "maybe", "p0"), _clip("b", "maybe", "p0")], "must be 1/0"),
        ([_clip("a", "1"), _clip("b", "1")], "no pair id"),
    ],
)
def test_bad_pairs_are_named(clips: list[Clip], message: str) -> None:
    audio = {c.id: [1.0, 0.0] for c in clips}
    with pytest.raises(ValueError, match=message):
        _task().evaluate(FakeEmbedder(audio), clips)


def test_one_kind_of_pair_only_is_an_error() -> None:
    clips, audio = _pairs([([1.0, 0.0], [1.0, 0.1], 1), ([0.0, 1.0], [0.1, 1.0], 1)])
    with pytest.raises(ValueError, match="both classes are needed"):
        _task().evaluate(FakeEmbedder(audio), clips)


def test_pairs_losing_a_clip_are_left_out_and_counted() -> None:
    clips, audio = _pairs([*SEPARABLE, ([1.0, 0.0], [0.0, 1.0], 0)])
    scores = _task().evaluate(FakeEmbedder(audio, skip=["p4b"]), clips)
    assert scores.scores["default"]["n_pairs"] == 4
    assert scores.scores["default"]["n_pairs_unembedded"] == 1


def test_pairs_from_labels_every_two_clips() -> None:
    clips = [_clip(f"c{i}", label) for i, label in enumerate("aabbc")]
    audio = {
        c.id: ([1.0, 0.0] if c.label == "a" else [0.0, 1.0] if c.label == "b" else [1.0, 1.0])
        for c in clips
    }
    task = _task(pairs="from_labels")
    pairs, labels = task.pairs_of(clips, "here")
    assert pairs == list(combinations(range(5), 2))
    assert sum(labels) == 2  # (0, 1) and (2, 3)
    scores = task.evaluate(FakeEmbedder(audio), clips)
    assert scores.scores["default"]["n_pairs"] == 10 and scores.main_score == 1.0


def test_drawn_pairs_are_distinct_seeded_and_in_range() -> None:
    clips = [_clip(f"c{i}", str(i % 3)) for i in range(40)]
    task = _task(pairs="from_labels", max_pairs=50, seed=3)
    pairs, _ = task.pairs_of(clips, "here")
    assert len(pairs) == len(set(pairs)) == 50
    assert all(0 <= a < b < 40 for a, b in pairs)
    assert task.pairs_of(clips, "here") == (pairs, task.pairs_of(clips, "here")[1])
    assert _task(pairs="from_labels", max_pairs=50, seed=4).pairs_of(clips, "here")[0] != pairs


def test_unranking_matches_the_upper_triangle() -> None:
    n = 7
    first, second = np.triu_indices(n, k=1)
    a, b = _unrank_pairs(np.arange(n * (n - 1) // 2), n)
    assert a.tolist() == first.tolist() and b.tolist() == second.tolist()


def test_subsets_are_averaged() -> None:
    one, audio = _pairs(SEPARABLE, subset="s1")
    two, more = _pairs(
        [*SEPARABLE[:2], ([1.0, 0.0], [0.9, 0.2], 0), ([0.0, 1.0], [1.0, 0.0], 0)], subset="s2"
    )
    scores = _task().evaluate(FakeEmbedder({**audio, **more}), [*one, *two])
    mean = scores.aggregates["mean"]
    assert mean["subsets"] == ["s1", "s2"] and mean["n_subsets"] == 2
    expected = (scores.scores["s1"]["max_ap"] + scores.scores["s2"]["max_ap"]) / 2
    assert mean["max_ap"] == pytest.approx(expected) == scores.main_score
    assert "accuracy_threshold" not in mean["cosine"]
    assert PairClassificationTask.score_problems(scores.aggregates) == []


def test_mock_task_is_registered_and_runs_offline(tmp_path: Path) -> None:
    cls = registry.tasks.get("MockPairClassification")
    assert cls.metadata.family == TaskFamily.PAIR_CLASSIFICATION and cls.metadata.offline
    result = CliRunner().invoke(
        app,
        [
            "evaluate", "--task", "MockPairClassification", "--model", "log-mel",
            "--output-dir", str(tmp_path), "--no-progress",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    saved = load_result(tmp_path / "log-mel" / "v1" / "MockPairClassification.json")
    report = saved.scores["default"]
    assert report["n_pairs"] == 60 and report["n_positive"] == 30
    assert saved.main_score is not None and saved.main_score > 0.6  # chance is 0.5
    assert cls.score_problems(saved.scores) == []


def test_list_tasks_shows_the_family() -> None:
    result = CliRunner().invoke(app, ["list", "tasks", "--json", "--type", "pair_classification"])
    assert result.exit_code == 0, result.output
    assert "MockPairClassification" in result.output and "CREMADPairClassification" in result.output
