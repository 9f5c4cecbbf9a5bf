"""The evaluator layer: a protocol added in one module scores a family without editing it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from audiobench import reports as _reports
from audiobench.evaluators import Evaluator, evaluator_for, protocols_for, register
from audiobench.evaluators import registry as evaluator_registry
from audiobench.families import ClusteringTask
from audiobench.reports import Count, Report, Summary, Unit
from audiobench.task import Embedder, Subset, Task, TaskFamily
from tests.families.test_classification import FakeEmbedder, run_cli
from tests.families.test_clustering import blobs, task_class


class ToyReport(Report):
    largest_class_share: Unit
    n_samples: Count


class ToySummary(Summary):
    largest_class_share: Unit


class ToyEvaluator(Evaluator):
    """A third protocol: the share of the most frequent label (what always-guess-one scores)."""

    family = TaskFamily.CLUSTERING
    protocol = "toy"
    version = "7"
    Report = ToyReport
    Summary = ToySummary

    @classmethod
    def check_main_score(cls, task: type[Task], path: tuple[str, ...]) -> None:
        task.require_main_score(path, ("largest_class_share",))

    @classmethod
    def evaluate_subset(cls, task: Task, embedder: Embedder, subset: Subset) -> _reports.Report:
        kept, _ = embedder.embed_matrix(subset.clips, subset.label)
        labels = [c.label for c in kept]
        share = max(labels.count(label) for label in set(labels)) / len(labels)
        return ToyReport(largest_class_share=share, n_samples=len(labels))

    @classmethod
    def describe(cls, task: Task) -> dict[str, Any]:
        return {"toy": "largest class share"}


@pytest.fixture
def toy_protocol(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    evaluator_registry._load()
    monkeypatch.setattr(evaluator_registry, "_REGISTRY", dict(evaluator_registry._REGISTRY))
    register(ToyEvaluator)
    yield


def test_a_third_protocol_scores_a_mock_task_without_editing_the_family(
    toy_protocol: None,
) -> None:
    assert protocols_for(TaskFamily.CLUSTERING) == ("audiobench", "mseb", "mteb", "toy")
    Toy = task_class("ToyClusters", main_score="largest_class_share", protocol="toy")
    clips, vectors = blobs(n_classes=3, per_class=4)
    clips = clips[:10]  # 4 + 4 + 2: the largest class holds 4 of 10
    result = Toy().evaluate(FakeEmbedder(vectors), clips)
    assert result.scores["default"] == {"largest_class_share": 0.4, "n_samples": 10}
    assert result.main_score == 0.4
    assert result.details["toy"] == "largest class share"
    assert result.details["evaluator"] == {"name": "toy", "version": "7"}
    assert Toy.Report is ToyReport and Toy.score_problems(result.scores) == []


def test_an_unknown_protocol_is_refused_naming_the_task_and_the_available_ones() -> None:
    Plain = task_class("PlainClusters")
    with pytest.raises(
        ValueError,
        match=r"task PlainClusters: invalid option protocol: .*"
        r"no evaluator for protocol 'nope'; available: audiobench, mseb, mteb",
    ):
        Plain(protocol="nope")
    with pytest.raises(ValueError, match="already scored by"):
        register(type("Again", (ToyEvaluator,), {"protocol": "mteb"}))


def test_each_protocol_records_its_evaluator() -> None:
    clips, vectors = blobs()
    for protocol in ("audiobench", "mteb"):
        task = task_class("RecordedClusters", protocol=protocol)()
        result = task.evaluate(FakeEmbedder(vectors), clips)
        assert result.details["evaluator"] == {"name": protocol, "version": "1"}
        assert evaluator_for(TaskFamily.CLUSTERING, protocol).Report is type(task).Report
    assert ClusteringTask.Report.__name__ == "ClusteringReport"


def test_list_tasks_json_shows_each_tasks_protocols() -> None:
    code, out, err = run_cli("list", "tasks", "--json")
    assert code == 0, err
    rows = {r["name"]: r for r in json.loads(out)}
    assert rows["MockClustering"]["protocols"] == ["audiobench", "mseb", "mteb"]
    assert all(r["protocols"] for r in rows.values())
