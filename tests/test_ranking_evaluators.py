"""Retrieval, reranking and zero-shot classification scored by protocol evaluators.

The families declare what a task holds; the evaluators of ``audiobench/evaluators/`` score
it. A third protocol reads a family's inputs with its own conventions without editing the
family, and a protocol under which a task's main score does not exist is refused up front.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

import audiobench.families
from audiobench import registry
from audiobench import reports as _reports
from audiobench.cli import app
from audiobench.errors import OptionError
from audiobench.evaluators import Evaluator, evaluator_for, protocols_for, register
from audiobench.evaluators import registry as evaluator_registry
from audiobench.families import RerankingTask, RetrievalTask, ZeroShotClassificationTask
from audiobench.reports import Count, Report, Summary, Unit
from audiobench.task import Embedder, Subset, Task, TaskFamily, TaskMetadata
from tests.families.test_retrieval import FakeEmbedder, clip

FAMILIES = (TaskFamily.RETRIEVAL, TaskFamily.RERANKING, TaskFamily.ZERO_SHOT_CLASSIFICATION)
SOURCES = {
    family: Path(audiobench.families.__file__).parent / f"{family}.py" for family in FAMILIES
}


@pytest.mark.parametrize("family", FAMILIES)
def test_the_family_module_holds_no_protocol_branch(family: TaskFamily) -> None:
    source = SOURCES[family].read_text()
    assert re.search(r"protocol\s*[!=]=", source) is None
    assert "mteb_protocol" not in source


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_is_scored_by_both_built_in_protocols(family: TaskFamily) -> None:
    assert protocols_for(family) == ("audiobench", "mseb", "mteb")
    ours, mteb = evaluator_for(family, "audiobench"), evaluator_for(family, "mteb")
    assert ours.__module__ == f"audiobench.evaluators.{family}"
    assert mteb.__module__ == "audiobench.evaluators.mteb"
    assert ours.Report is not mteb.Report


# ---------------------------------------------------------------------------- a third protocol


class TopHitReport(Report):
    top_hit: Unit
    n_queries: Count


class TopHitSummary(Summary):
    top_hit: Unit


class TopHitEvaluator(Evaluator):
    """A third protocol: the share of queries whose best document is relevant, with a query's
    own clip relevant to it (layout ``all``) and texts kept as written."""

    family = TaskFamily.RETRIEVAL
    protocol = "tophit"
    Report = TopHitReport
    Summary = TopHitSummary

    @classmethod
    def check_main_score(cls, task: type[Task], path: tuple[str, ...]) -> None:
        task.require_main_score(path, ("top_hit",))

    @classmethod
    def evaluate_subset(cls, task: Task, embedder: Embedder, subset: Subset) -> _reports.Report:
        assert isinstance(task, RetrievalTask)
        inputs = task.retrieval_inputs(embedder, subset, strip_texts=False, leave_one_out=False)
        best = np.argmax(inputs.query_matrix @ inputs.document_matrix.T, axis=1)
        hits = [int(b) in rel for b, rel in zip(best, inputs.relevance, strict=True)]
        return TopHitReport(top_hit=sum(hits) / len(hits), n_queries=len(hits))


@pytest.fixture
def tophit_protocol(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    evaluator_registry._load()
    monkeypatch.setattr(evaluator_registry, "_REGISTRY", dict(evaluator_registry._REGISTRY))
    register(TopHitEvaluator)
    yield


def _meta(name: str, main: str) -> TaskMetadata:
    return TaskMetadata(
        name=name, description="test", dataset={"kind": "folder", "path": "."}, main_score=main
    )  # type: ignore[arg-type]


def test_a_third_protocol_reads_the_familys_inputs_with_its_own_conventions(
    tophit_protocol: None,
) -> None:
    class AllToAll(RetrievalTask):
        metadata = _meta("TopHitAll", "top_hit")
        options = RetrievalTask.Options(layout="all", protocol="tophit")

    # Every clip is its own best match: relevant under this protocol's convention only.
    clips = [clip(f"c{i}", label="a" if i < 2 else "b") for i in range(4)]
    vectors = {c.id: np.eye(4)[i] for i, c in enumerate(clips)}
    result = AllToAll().evaluate(FakeEmbedder(vectors), clips)
    assert result.scores["default"] == {"top_hit": 1.0, "n_queries": 4}
    assert result.details["evaluator"] == {"name": "tophit", "version": "1"}

    # audiobench's protocol leaves the own clip out: the other clips tie (orthogonal), the
    # lower index first, so every query's best is c0 (c1 for c0): right for c0, c1 only.
    class LeaveOneOut(RetrievalTask):
        metadata = _meta("LeaveOneOut", "hit@1")
        options = RetrievalTask.Options(layout="all")

    scores = LeaveOneOut().evaluate(FakeEmbedder(vectors), clips)
    assert scores.scores["default"]["hit@1"] == 0.5


# ---------------------------------------------------------------------------- main scores


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stderr


def test_protocol_mteb_on_an_audiobench_task_is_refused_before_any_audio(
    tmp_path: Path,
) -> None:
    code, err = _cli(
        "evaluate", "--task", "MockRetrieval", "--model", "log-mel", "-O", "protocol=mteb",
        "--output-dir", str(tmp_path / "out"), "--no-progress", "--no-flops",
    )  # fmt: skip
    assert code == 1
    assert err.startswith(
        "error: task MockRetrieval: the options given leave its main score 'mrr' unreported "
        "under protocol 'mteb' (task MockRetrieval: under protocol 'mteb' the main score 'mrr' "
        "must be one of the reference's keys (ndcg_at_1, "
    )
    assert err.rstrip().endswith("it is reported under protocol 'audiobench', 'mseb'")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("task", "protocol", "main"),
    [
        ("MockRetrieval", "mteb", "mrr"),
        ("MockReranking", "mteb", "map"),
        ("MockAudioReranking", "mteb", "map"),
        ("MockTextAudioRetrieval", "mteb", "mrr"),
        ("JamAltArtistA2ARetrieval", "audiobench", "ndcg_at_10"),
        ("GTZANAudioReranking", "audiobench", "map_at_1000"),
        ("ClothoT2ARetrieval", "audiobench", "hit_rate_at_5"),
    ],
)
def test_a_protocol_without_the_tasks_main_score_is_refused(
    task: str, protocol: str, main: str
) -> None:
    cls = registry.tasks.get(task)
    with pytest.raises(OptionError, match=rf"main score '{main}' unreported under protocol"):
        cls(protocol=protocol)


@pytest.mark.parametrize(
    ("task", "protocol"),
    [("MockZeroShotClassification", "mteb"), ("RavdessZeroshot", "audiobench")],
)
def test_a_protocol_that_reports_the_main_score_runs(task: str, protocol: str) -> None:
    """Zero-shot accuracy is a key of both protocols: the task takes either."""
    assert registry.tasks.get(task)(protocol=protocol).options.protocol == protocol


def test_options_that_drop_the_main_score_cut_off_are_refused() -> None:
    class Hit5(RetrievalTask):
        metadata = _meta("Hit5", "hit@5")

    with pytest.raises(OptionError, match=r"main score 'hit@5' unreported under protocol"):
        Hit5(ks=(1, 10))
    assert Hit5(ks=(5,)).options.ks == (5,)


def test_reranking_and_zero_shot_record_their_evaluator() -> None:
    reranks = {
        protocol: type(
            f"Rerank_{protocol}",
            (RerankingTask,),
            {
                "metadata": _meta(f"Rerank_{protocol}", main),
                "options": RerankingTask.Options(candidate_modality="audio", protocol=protocol),
            },
        )
        for protocol, main in (("audiobench", "map"), ("mteb", "map_at_1000"))
    }

    class ZeroShot(ZeroShotClassificationTask):
        metadata = _meta("ZeroShotRecorded", "accuracy")

    rng = np.random.default_rng(0)
    docs = [clip(f"d{j}") for j in range(3)]
    queries = [clip("q", split="query", candidates=["d0", "d1", "d2"], positives=["d1"])]
    vectors: dict[str, Any] = {c.id: rng.standard_normal(4) for c in [*docs, *queries]}
    for protocol in ("audiobench", "mteb"):
        scores = reranks[protocol]().evaluate(FakeEmbedder(vectors), [*docs, *queries])
        assert scores.main_score is not None
        assert scores.details["evaluator"] == {"name": protocol, "version": "1"}
    labelled = [clip(f"z{i}", label=("dog", "cat")[i % 2]) for i in range(4)]
    prompts = {"This is a sound of dog.": [1.0, 0.0], "This is a sound of cat.": [0.0, 1.0]}
    audio = {c.id: [1.0, 0.1] if c.label == "dog" else [0.1, 1.0] for c in labelled}
    for protocol in ("audiobench", "mteb"):
        task = ZeroShot(protocol=protocol)
        scores = task.evaluate(FakeEmbedder(audio, prompts), labelled)
        assert scores.main_score == 1.0
        assert scores.details["evaluator"] == {"name": protocol, "version": "1"}
        prompts_recorded = scores.details.get("prompts") or scores.details["protocol"]["prompts"]
        assert prompts_recorded == {
            "cat": "This is a sound of cat.",
            "dog": "This is a sound of dog.",
        }
