"""Classification and pair classification as evaluated tasks: each protocol an evaluator.

A protocol added in one throwaway module scores the classification family without editing
it, selected with ``-O protocol=...``; the built-in protocols record their evaluator and
decide the embedding passes and the report models.
"""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from audiobench import registry
from audiobench.encoder import OutputKind
from audiobench.evaluators import evaluator_for, protocols_for
from audiobench.evaluators import registry as evaluator_registry
from audiobench.evaluators.classification import MulticlassReport, MultilabelReport
from audiobench.evaluators.mteb_protocol.subset_scores import MtebReport
from audiobench.evaluators.pair_classification import PairClassificationReport
from audiobench.results import load_result
from audiobench.task import TaskFamily
from tests.families.test_classification import (
    ALL_PROBES,
    FakeEmbedder,
    run_cli,
    separable,
    task_class,
)
from tests.families.test_pair_classification import SEPARABLE
from tests.families.test_pair_classification import _pairs as pairs
from tests.families.test_pair_classification import _task as pair_task
from tests.families.test_retrieval import FakeEmbedder as PairEmbedder

#: A whole protocol in one module: what always answering the most frequent label scores.
MAJORITY_MODULE = """
from typing import Any

from audiobench import reports as _reports
from audiobench.evaluators import Evaluator, register
from audiobench.reports import Count, Report, Summary, Unit
from audiobench.task import Embedder, Subset, Task, TaskFamily


class MajorityReport(Report):
    majority_share: Unit
    n_samples: Count


class MajoritySummary(Summary):
    majority_share: Unit


@register
class MajorityEvaluator(Evaluator):
    family = TaskFamily.CLASSIFICATION
    protocol = "majority"
    version = "3"
    Report = MajorityReport
    Summary = MajoritySummary

    @classmethod
    def evaluate_subset(cls, task: Task, embedder: Embedder, subset: Subset) -> _reports.Report:
        kept, _ = embedder.embed_matrix(subset.clips, subset.label)
        labels = [c.label for c in kept]
        share = max(labels.count(label) for label in set(labels)) / len(labels)
        return MajorityReport(majority_share=share, n_samples=len(labels))

    @classmethod
    def describe(cls, task: Task) -> dict[str, Any]:
        return {"majority": "share of the most frequent label"}
"""


@pytest.fixture
def majority_protocol(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``majority_protocol.py`` written and imported (registering it) for one test only."""
    evaluator_registry._load()
    monkeypatch.setattr(evaluator_registry, "_REGISTRY", dict(evaluator_registry._REGISTRY))
    (tmp_path / "majority_protocol.py").write_text(textwrap.dedent(MAJORITY_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("majority_protocol")
    yield
    sys.modules.pop("majority_protocol", None)


def test_a_third_classification_protocol_in_one_module_runs_from_the_cli(
    majority_protocol: None, tmp_path: Path
) -> None:
    assert protocols_for(TaskFamily.CLASSIFICATION) == ("audiobench", "majority", "mseb", "mteb")
    out = tmp_path / "results"
    code, _, err = run_cli(
        "evaluate",
        "--task",
        "MockClassification",
        "--model",
        "log-mel",
        "--output-dir",
        str(out),
        "--no-progress",
        "-O",
        "protocol=majority",
    )
    assert code == 0, err
    path = out / "log-mel" / "v1" / "MockClassification.json"
    result = load_result(path)
    # 48 clips of 4 balanced classes: always answering one label is right a quarter of the time.
    assert result.scores == {"default": {"majority_share": 0.25, "n_samples": 48}}
    assert result.details["evaluator"] == {"name": "majority", "version": "3"}
    assert result.details["majority"] == "share of the most frequent label"
    assert result.run is not None and result.run.task_options["protocol"] == "majority"
    task = registry.tasks.create("MockClassification", protocol="majority")
    assert task.Report.__name__ == "MajorityReport"
    # The file's scores are the new protocol's report, read back as written.
    written = result.scores["default"]
    assert task.Report.model_validate(written).to_json() == written


def test_an_unknown_classification_protocol_lists_the_available_ones() -> None:
    with pytest.raises(ValueError, match=r"no evaluator for protocol 'nope'; available: audio"):
        registry.tasks.create("MockClassification", protocol="nope")


@pytest.mark.parametrize("protocol", ["audiobench", "mteb"])
def test_each_classification_protocol_records_its_evaluator(protocol: str) -> None:
    clips, vectors, frames = separable(n_classes=3, per_class=12)
    main = "linear:accuracy" if protocol == "audiobench" else "accuracy"
    Task = task_class("TestRecorded", main, folds=("1", "2", "3"), protocol=protocol)
    task = Task()
    result = task.evaluate(FakeEmbedder(vectors, frames), clips)
    assert result.details["evaluator"] == {"name": protocol, "version": "1"}
    evaluator = evaluator_for(TaskFamily.CLASSIFICATION, protocol)
    assert type(task).Report is evaluator.report_model(task)
    assert Task.Report is (MulticlassReport if protocol == "audiobench" else MtebReport)
    assert Task.score_problems(result.scores) == []


def test_the_multilabel_report_follows_the_labels_under_audiobench_only() -> None:
    Multi = task_class("TestMultiModels", main_score="linear:map", multilabel=True)
    assert Multi.Report is MultilabelReport and Multi().Report is MultilabelReport
    # Under mteb the main score must be one of the reference's keys (else the run is refused).
    MultiMteb = task_class("TestMultiMteb", main_score="lrap", multilabel=True, protocol="mteb")
    assert MultiMteb(protocol="mteb").Report is MtebReport


def test_the_protocol_decides_the_embedding_passes() -> None:
    Task = task_class("TestPasses", probes=ALL_PROBES)
    sequence = SimpleNamespace(meta=SimpleNamespace(name="s", output_kind=OutputKind.SEQUENCE))
    vector = SimpleNamespace(meta=SimpleNamespace(name="v", output_kind=OutputKind.VECTOR))
    assert Task().embedding_passes(sequence) == (True, False)  # token probes read frames
    assert Task().embedding_passes(vector) == (True,)  # token probes skipped
    Mteb = task_class("TestMtebPasses", main_score="accuracy", probes=ALL_PROBES, protocol="mteb")
    assert Mteb(protocol="mteb").embedding_passes(sequence) == (True,)  # pooled only
    tokens_only = task_class("TestTokenPasses", main_score="attentive:accuracy", probes=())
    assert tokens_only().embedding_passes(sequence) == (False,)


@pytest.mark.parametrize("protocol", ["audiobench", "mteb"])
def test_each_pair_protocol_records_its_evaluator_and_scores_the_same_pairs(
    protocol: str,
) -> None:
    clips, audio = pairs(SEPARABLE)
    task = pair_task(protocol=protocol)
    result = task.evaluate(PairEmbedder(audio), clips)
    assert result.details["evaluator"] == {"name": protocol, "version": "1"}
    assert result.details["pair_counts"]["default"] == {"layout": "given", "n_pairs_total": 4}
    facts = result.details if protocol == "audiobench" else result.details["protocol"]
    assert facts["pairs"] == "given"  # the task's layout, recorded under either protocol
    report = result.scores["default"]
    assert type(task).Report is (
        PairClassificationReport if protocol == "audiobench" else MtebReport
    )
    assert result.main_score == report["max_ap"] == 1.0
    assert report["n_pairs" if protocol == "audiobench" else "n_samples"] == 4
