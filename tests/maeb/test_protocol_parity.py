"""The families under ``protocol="mteb"`` give MTEB's own numbers on the same embeddings.

The embeddings and the reference values are those of :mod:`tests.mteb_protocol.test_mteb_protocols`
(produced by MTEB 2.26.24's task classes and evaluators). There the metric functions are
checked directly; here the same data goes through each family as clips and embeddings (a fake
embedder hands out the vectors), so the family's own plumbing (which clips train and test,
label types, pair and query construction, document ids, float32 scores) is checked too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from audiobench.audio import Clip
from audiobench.families import (
    ClassificationTask,
    ClusteringTask,
    PairClassificationTask,
    RerankingTask,
    RetrievalTask,
    ZeroShotClassificationTask,
)
from audiobench.task import Task, TaskMetadata, TaskScores
from tests.families.test_retrieval import FakeEmbedder
from tests.mteb_protocol.mteb_parity_data import make_all
from tests.mteb_protocol.test_mteb_protocols import MTEB_VALUES, TOLERANCE

_META = {"description": "parity", "dataset": {"kind": "folder", "path": "."}}


def _task(base: type[Task], name: str, main: str, **options: Any) -> Task:
    cls = type(
        name,
        (base,),
        {
            "metadata": TaskMetadata(name=name, main_score=main, **_META),  # type: ignore[arg-type]
            "options": base.Options(protocol="mteb", **options),  # type: ignore[call-arg]
        },
    )
    return cls()


def _clip(clip_id: str, **fields: Any) -> Clip:
    from audiobench.audio import FileAudioRef

    return Clip(id=clip_id, audio=FileAudioRef(f"/nonexistent/{clip_id}.wav"), **fields)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def data() -> dict[str, Any]:
    return make_all()


@pytest.fixture(autouse=True)
def one_openmp_thread() -> Iterator[None]:
    with threadpool_limits(1):
        yield


def _check(scores: TaskScores, case: str) -> None:
    report = scores.scores["default"]
    expected = MTEB_VALUES[case]
    assert {k: report[k] for k in expected} == pytest.approx(expected, abs=TOLERANCE, rel=0)


def _evaluate(
    task: Task, clips: list[Clip], audio: Mapping[str, Any], text: Any = None
) -> TaskScores:
    return task.evaluate(FakeEmbedder(audio, text), clips)


@pytest.mark.parametrize("case", ["cls_cv", "cls_cv_str", "cls_cv_bin"])
def test_cross_validated_classification(case: str, data: dict[str, Any]) -> None:
    X, y = data[f"{case}_X"], data[f"{case}_y"]
    clips = [_clip(f"c{i}", label=str(v), split="train") for i, v in enumerate(y)]
    task = _task(ClassificationTask, "ParityCV", "accuracy")
    scores = _evaluate(task, clips, {c.id: X[i] for i, c in enumerate(clips)})
    _check(scores, case)
    assert scores.details["splits"]["default"]["method"] == "cross_validation"
    assert len(scores.scores["default"]["per_experiment"]) == 5


def test_train_test_classification(data: dict[str, Any]) -> None:
    clips, audio = [], {}
    for part in ("tr", "te"):
        split = "train" if part == "tr" else "test"
        for i, (x, y) in enumerate(
            zip(data[f"cls_tt_X{part}"], data[f"cls_tt_y{part}"], strict=True)
        ):
            clips.append(_clip(f"{part}{i}", label=str(y), split=split))
            audio[f"{part}{i}"] = x
    scores = _evaluate(_task(ClassificationTask, "ParityTT", "accuracy"), clips, audio)
    _check(scores, "cls_tt")
    assert scores.scores["default"]["n_samples"] == len(data["cls_tt_yte"])


def test_multilabel_classification(data: dict[str, Any]) -> None:
    clips, audio = [], {}
    for part in ("tr", "te"):
        split = "train" if part == "tr" else "test"
        for i, (x, y) in enumerate(zip(data[f"ml_X{part}"], data[f"ml_y{part}"], strict=True)):
            clips.append(_clip(f"{part}{i}", label=",".join(y), split=split))
            audio[f"{part}{i}"] = x
    task = _task(ClassificationTask, "ParityML", "lrap", multilabel=True)
    _check(_evaluate(task, clips, audio), "ml")


@pytest.mark.parametrize("case", ["clu3", "clu6"])
def test_clustering(case: str, data: dict[str, Any]) -> None:
    X, y = data[f"{case}_X"], data[f"{case}_y"]
    clips = [_clip(f"c{i}", label=str(v)) for i, v in enumerate(y)]
    task = _task(ClusteringTask, "ParityClu", "v_measure")
    scores = _evaluate(task, clips, {c.id: X[i] for i, c in enumerate(clips)})
    _check(scores, case)
    assert len(scores.scores["default"]["per_experiment"]) == 10


def test_pair_classification(data: dict[str, Any]) -> None:
    a, b, y = data["pair_a"], data["pair_b"], data["pair_y"]
    clips, audio = [], {}
    for i in range(len(y)):
        for side, vectors in (("a", a), ("b", b)):
            clips.append(_clip(f"p{i}-{side}", label=str(int(y[i])), metadata={"pair": f"p{i}"}))
            audio[f"p{i}-{side}"] = vectors[i]
    scores = _evaluate(_task(PairClassificationTask, "ParityPair", "max_ap"), clips, audio)
    _check(scores, "pair")
    assert not any(k.endswith("_threshold") for k in scores.scores["default"])


def test_text_to_audio_retrieval(data: dict[str, Any]) -> None:
    doc_ids, rel = data["ret_doc_ids"], data["ret_rel"]
    docs = [_clip(d, split="corpus") for d in doc_ids]
    queries = [
        _clip(
            f"query:{q}",
            split="query",
            text=q,
            metadata={"relevant": [doc_ids[j] for j in np.flatnonzero(rel[i])]},
        )
        for i, q in enumerate(data["ret_q_ids"])
    ]
    audio = {d: data["ret_d"][j] for j, d in enumerate(doc_ids)}
    text = {q: data["ret_q"][i] for i, q in enumerate(data["ret_q_ids"])}
    task = _task(RetrievalTask, "ParityT2A", "hit_rate_at_5", query_modality="text")
    _check(_evaluate(task, [*docs, *queries], audio, text), "ret")


def test_audio_to_audio_retrieval_over_all_clips(data: dict[str, Any]) -> None:
    X, artist = data["a2a_X"], data["a2a_art"]
    clips = [_clip(f"corpus-{i}", label=str(a)) for i, a in enumerate(artist)]
    task = _task(RetrievalTask, "ParityA2A", "ndcg_at_10", layout="all")
    scores = _evaluate(task, clips, {c.id: X[i] for i, c in enumerate(clips)})
    _check(scores, "a2a")
    assert scores.scores["default"]["hit_rate_at_1"] == 1.0  # each clip finds itself first


def test_reranking(data: dict[str, Any]) -> None:
    rel, cands = data["rr_rel"], data["rr_cands"]
    docs = [_clip(f"doc{j}", split="corpus") for j in range(rel.shape[1])]
    queries = [
        _clip(
            f"q{i}",
            split="query",
            metadata={
                "candidates": [f"doc{j}" for j in cands[i]],
                "positives": [f"doc{j}" for j in np.flatnonzero(rel[i])],
            },
        )
        for i in range(rel.shape[0])
    ]
    audio = {f"doc{j}": v for j, v in enumerate(data["rr_d"])}
    audio.update({f"q{i}": v for i, v in enumerate(data["rr_q"])})
    task = _task(RerankingTask, "ParityRR", "map_at_1000", candidate_modality="audio")
    _check(_evaluate(task, [*queries, *docs], audio), "rr")


@pytest.mark.parametrize("case", ["zs", "zsb"])
def test_zero_shot(case: str, data: dict[str, Any]) -> None:
    text, X, y = data[f"{case}_text"], data[f"{case}_audio"], data[f"{case}_y"]
    classes = tuple(f"class {k}" for k in range(text.shape[0]))
    clips = [_clip(f"c{i}", label=classes[v]) for i, v in enumerate(y)]
    task = _task(
        ZeroShotClassificationTask,
        "ParityZS",
        "accuracy",
        classes=classes,
        prompt_template="{label}",
    )
    prompts = {c: text[k] for k, c in enumerate(classes)}
    _check(_evaluate(task, clips, {c.id: X[i] for i, c in enumerate(clips)}, prompts), case)
