"""protocol=mteb reads and scores retrieval and reranking data as MTEB does.

Each test writes a hub-layout copy with the case in question (graded judgements, a query whose
judgements are all 0, relevant documents missing from the corpus, a reranking query without a
ranked list, rows sharing an id) and checks the scores against values computed by hand.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from audiobench import registry
from tests.families.test_retrieval import FakeEmbedder
from tests.maeb.hub_layout import audio, tone, write_hub_dataset

L3 = math.log2(3)


def _root(tmp_path: Path, name: str) -> Path:
    # datasets caches a local copy by folder name: a name no other test uses.
    return tmp_path / f"{name}-{hashlib.sha1(str(tmp_path).encode()).hexdigest()[:12]}"


def _task(name: str, root: Path, **kw: Any) -> Any:
    return registry.tasks.get(name)(dataset_path=root, **kw)


def test_retrieval_scores_every_judged_query_with_graded_gains(tmp_path: Path) -> None:
    corpus = [{"id": f"d{j}", "audio": audio(200.0 * (j + 1), j)} for j in range(4)]
    queries = [{"id": f"q{i}", "text": f"t{i}"} for i in range(4)]
    qrels = [
        {"query-id": "q0", "corpus-id": "d0", "score": 2},  # graded: gain 2
        {"query-id": "q0", "corpus-id": "d1", "score": 1},
        {"query-id": "q1", "corpus-id": "d1", "score": 0},  # judged, nothing relevant
        {"query-id": "q2", "corpus-id": "gone", "score": 1},  # relevant, not in the corpus
        {"query-id": "q3", "corpus-id": "d3", "score": 1},
        {"query-id": "q3", "corpus-id": "gone", "score": 1},
    ]
    root = write_hub_dataset(
        _root(tmp_path, "graded"),
        {"corpus": {"test": corpus}, "queries": {"test": queries}, "default": {"test": qrels}},
    )
    task = _task("AudioCapsT2ARetrieval", root)
    clips = task.load_data()
    assert next(c for c in clips if c.id == "query:q0").metadata["judgements"] == {
        "d0": 2,
        "d1": 1,
    }
    eye = np.eye(4)
    fake = FakeEmbedder(
        {f"d{j}": eye[j] for j in range(4)},
        {"t0": [0.5, 1, 0, 0], "t1": eye[1], "t2": eye[2], "t3": eye[3]},
    )
    report = task.evaluate(fake, clips).scores["default"]
    assert report["n_samples"] == 4  # q1 and q2 score 0 but count
    # q0 ranks d1 (gain 1) before d0 (gain 2); q3 finds d3 but has 2 relevant documents.
    q0 = (1 + 2 / L3) / (2 + 1 / L3)
    q3 = 1 / (1 + 1 / L3)
    assert report["ndcg_at_10"] == round((q0 + q3) / 4, 5)
    assert report["ndcg_at_1"] == round((0.5 + 1) / 4, 5)
    assert report["recall_at_1"] == round((0.5 + 0.5) / 4, 5)
    assert report["hit_rate_at_1"] == 0.5 and report["mrr_at_1"] == 0.5
    assert report["map_at_1000"] == round((1 + 0.5) / 4, 5)
    nauc = [k for k in report if k.startswith("nauc_")]
    assert len(nauc) == 105 and "nauc_precision_at_1000_diff1" in nauc


def test_reranking_scores_a_query_without_a_ranked_list_and_keeps_the_last_repeated_row(
    tmp_path: Path,
) -> None:
    corpus = [
        {"id": "d0", "audio": audio(200.0, 0)},
        {"id": "d1", "audio": audio(300.0, 1)},
        {"id": "d1", "audio": audio(700.0, 2)},  # the same id again: MTEB uses this row
        {"id": "d2", "audio": audio(500.0, 3)},
    ]
    queries = [{"id": f"q{i}", "audio": audio(900.0 + i, 10 + i)} for i in range(2)]
    qrels = [
        {"query-id": "q0", "corpus-id": "d1", "score": 1},
        {"query-id": "q1", "corpus-id": "d0", "score": 1},
    ]
    top = [{"query-id": "q0", "corpus-ids": ["d0", "d1", "d2"]}]  # q1 has no ranked list
    root = write_hub_dataset(
        _root(tmp_path, "rerank"),
        {
            "corpus": {"test": corpus},
            "queries": {"test": queries},
            "default": {"test": qrels},
            "top_ranked": {"test": top},
        },
    )
    task = _task("GTZANAudioReranking", root)
    clips = task.load_data()
    d1 = [c for c in clips if c.id.startswith("d1")]
    assert len(d1) == 1
    np.testing.assert_allclose(d1[0].audio.read()[0][:, 0], tone(700.0, seed=2), atol=1e-3)
    assert next(c for c in clips if c.id == "query:q1").metadata["candidates"] == []
    vectors = {"d0": [1, 0, 0], "d1": [0, 1, 0], "d2": [0, 0, 1]}
    fake = FakeEmbedder({**vectors, "query:q0": [0.2, 1, 0.1], "query:q1": [1, 0, 0]})
    scores = task.evaluate(fake, clips)
    report = scores.scores["default"]
    assert report["n_samples"] == 2
    assert report["hit_rate_at_1"] == 0.5 and report["map_at_1000"] == 0.5
    assert scores.details["queries"]["default"]["n_without_results"] == 1


def test_fleurs_rows_sharing_a_sentence_id_are_one_query_and_one_document(
    tmp_path: Path,
) -> None:
    rows = [
        {"id": 1, "audio": audio(200.0, 0), "transcription": "a"},
        {"id": 1, "audio": audio(300.0, 1), "transcription": "a"},  # another speaker
        {"id": 2, "audio": audio(400.0, 2), "transcription": "b"},
    ]
    root = write_hub_dataset(_root(tmp_path, "fleurs"), {"af_za": {"test": rows}})
    task = _task("FleursT2ARetrieval", root, subsets=("af_za",))
    clips = task.load_data()
    assert [c.id for c in clips] == ["af_za/1", "af_za/1#2", "af_za/2"]
    assert [c.metadata.get("source_id") for c in clips] == ["af_za/1", "af_za/1", None]
    fake = FakeEmbedder(
        {"af_za/1": [1, 0], "af_za/1#2": [0, 1], "af_za/2": [0.6, 0.8]},
        {"a": [1, 0], "b": [0, 1]},
    )
    report = task.evaluate(fake, clips).scores["af_za"]
    # MTEB's heaps keep, for sentence 1, the score of its first recording (1.0) for "a" and of
    # its second (1.0) for "b": "a" finds sentence 1 first, "b" finds sentence 1 before 2.
    assert report["n_samples"] == 2 and report["n_documents"] == 2
    assert report["hit_rate_at_1"] == 0.5
    assert report["mrr_at_10"] == pytest.approx(0.75)
