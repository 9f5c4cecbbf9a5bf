"""MSEB's SVQ tasks of the embedding families (clustering, gender, reranking, retrieval) read
their locale from a copy of SVQ's layout written here with generated audio, and run offline
under MSEB's protocol, their default."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import audiobench
from audiobench import registry
from audiobench.leaderboard.validate import validate_file
from audiobench.sources import DatasetError
from tests.families.test_retrieval import tiny_clap  # noqa: F401  (a fixture)
from tests.mseb_catalogue.test_mseb_catalogue import _wav

#: utt_id, locale, environment, gender, age, speaker
UTTERANCES = [
    ("b1", "fi_fi", "clean", "female", 30, "s1"),
    ("b2", "fi_fi", "media_noise", "male", 40, "s2"),
    ("b3", "fi_fi", "clean", "male", 40, "s2"),
    ("b4", "fi_fi", "traffic_noise", "non_binary", 30, "s3"),
    ("b5", "en_us", "clean", "female", 20, "s4"),
    ("b6", "fi_fi", "clean", "female", 30, "s1"),
]


def _write(root: Path, name: str, rows: list[dict[str, Any]]) -> None:
    lines = (json.dumps(r, ensure_ascii=False) for r in rows)
    (root / name).write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_svq(root: Path) -> Path:
    """SVQ's layout: index with speaker fields, one parquet shard, the task and index files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    (root / "audio").mkdir(parents=True)
    waves = [_wav(k) for k in range(len(UTTERANCES))]
    pq.write_table(pa.table({"waveform": waves}), root / "audio" / "s_0.parquet")
    index, query, salient, passage, document = [], [], [], [], []
    for row, (utt, locale, environment, gender, age, speaker) in enumerate(UTTERANCES):
        where = {"utt_id": utt, "locale": locale}
        index.append(
            where
            | {"index": f"audio/s_0:{row}", "environment": environment, "text": f"kysymys {utt}"}
            | {"speaker_gender": gender, "speaker_age": age, "speaker_id": speaker}
        )
        query.append(where | {"candidates": [f"kysymys {utt}", "toinen", "kolmas"]})
        salient.append(
            where | {"candidate_salient_terms": ["a", "b", "c"], "topk_salient_terms": ["b"]}
        )
        passage.append(where | {"passage_id": f"p{row % 2}"})
        document.append(where | {"page_title": "Suomi" if row % 2 else "Ruotsi"})
    _write(root, "utt_index.jsonl", index)
    _write(root, "query_reranking.jsonl", query)
    _write(root, "salient_term.jsonl", salient)
    _write(root, "passage_retrieval_cross_lang.jsonl", passage)
    _write(
        root,
        "passage_retrieval_cross_lang_index.jsonl",
        [
            {"id": "p0", "title": "A", "context": "first"},
            {"id": "p1", "title": "B", "context": "x"},
        ],
    )
    _write(root, "document_retrieval_in_lang.jsonl", document)
    _write(
        root,
        "document_retrieval_in_lang_small_index.jsonl",
        [{"title": "Suomi", "text": "maa"}, {"title": "Ruotsi", "text": "toinen maa"}],
    )
    return root


def _load(name: str, root: Path) -> list[Any]:
    return registry.tasks.get(name)(dataset_path=root).load_data()


def test_clustering_carries_msebs_three_targets(tmp_path: Path) -> None:
    clips = _load("SVQFiFiClustering", write_svq(tmp_path / "svq"))
    assert [c.id for c in clips] == ["b1", "b2", "b3", "b4", "b6"]
    assert [c.label for c in clips] == ["female", "male", "male", "non_binary", "female"]
    assert clips[1].metadata == {
        "speaker_gender": "male",
        "speaker_age": "40",
        "speaker_id": "s2",
        "environment": "media_noise",
    }


def test_gender_keeps_female_and_male_capitalised(tmp_path: Path) -> None:
    clips = _load("SVQFiFiSpeakerGenderClassification", write_svq(tmp_path / "svq"))
    assert [(c.id, c.label) for c in clips] == [
        ("b1", "Female"),
        ("b2", "Male"),
        ("b3", "Male"),
        ("b6", "Female"),
    ]


def test_reranking_puts_msebs_reference_first(tmp_path: Path) -> None:
    root = write_svq(tmp_path / "svq")
    (query, *_) = _load("SVQFiFiQueryReranking", root)
    assert query.subset == "fi_fi" and query.metadata["positives"][0] == "kysymys b1"
    assert query.metadata["candidates"] == ["kysymys b1", "toinen", "kolmas"]
    (salient, *_) = _load("SVQFiFiSalientTermReranking", root)
    assert salient.metadata["positives"] == ["b"]
    assert salient.metadata["candidates"] == ["a", "b", "c"]


def test_retrieval_reads_the_queries_and_svqs_index(tmp_path: Path) -> None:
    root = write_svq(tmp_path / "svq")
    clips = _load("SVQFiFiPassageCrossLangRetrieval", root)
    queries = [c for c in clips if c.split == "query"]
    corpus = {c.id: c.text for c in clips if c.split == "corpus"}
    assert [(q.id, q.metadata["relevant"]) for q in queries][:2] == [("b1", ["p0"]), ("b2", ["p1"])]
    assert corpus == {"p0": "first", "p1": "x"}
    clips = _load("SVQFiFiDocumentInLangRetrievalSmallIndex", root)
    assert {c.id: c.text for c in clips if c.split == "corpus"} == {
        "Suomi": "maa",
        "Ruotsi": "toinen maa",
    }


def test_a_reference_missing_from_a_row_is_named_with_its_line(tmp_path: Path) -> None:
    root = write_svq(tmp_path / "svq")
    _write(root, "passage_retrieval_cross_lang.jsonl", [{"utt_id": "b1", "locale": "fi_fi"}])
    with pytest.raises(DatasetError, match=r"line 1: needs 'passage_id'"):
        _load("SVQFiFiPassageCrossLangRetrieval", root)


def test_the_default_protocol_is_msebs() -> None:
    for name in (
        "SVQFiFiClustering",
        "SVQFiFiSpeakerGenderClassification",
        "SVQFiFiQueryReranking",
        "SVQFiFiPassageCrossLangRetrieval",
    ):
        assert registry.tasks.get(name).options.protocol == "mseb"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("task", "main"),
    [
        ("SVQFiFiSpeakerGenderClassification", "accuracy"),
        ("SVQFiFiQueryReranking", "map"),
        ("SVQFiFiSalientTermReranking", "ndcg"),
        ("SVQFiFiPassageCrossLangRetrieval", "mrr"),
        ("SVQFiFiDocumentInLangRetrievalSmallIndex", "mrr"),
    ],
)
def test_each_kind_runs_offline_under_msebs_protocol(
    tmp_path: Path,
    tiny_clap: Path,  # noqa: F811
    task: str,
    main: str,
) -> None:
    root = write_svq(tmp_path / "svq")
    (result,) = audiobench.evaluate(
        task, f"hf:{tiny_clap}", output_dir=tmp_path / "out", dataset=root, progress=False
    )
    assert result.main_score is not None and 0.0 <= result.main_score <= 1.0
    (report,) = result.scores.values()
    assert report[main] == result.main_score
    assert report["environments"]  # MSEB's noise lines
    (path,) = (tmp_path / "out").glob(f"*/*/{task}.json")
    parsed, problems = validate_file(path, allow_unpinned=True)
    assert parsed is not None and problems == []


def test_clustering_runs_offline_and_scores_the_mean_of_three_targets(tmp_path: Path) -> None:
    root = write_svq(tmp_path / "svq")
    (result,) = audiobench.evaluate(
        "SVQFiFiClustering", "log-mel", output_dir=tmp_path / "out", dataset=root, progress=False
    )
    (report,) = result.scores.values()
    targets = report["targets"]
    assert set(targets) == {"speaker_gender", "speaker_age", "speaker_id"}
    assert result.main_score == pytest.approx(sum(targets.values()) / 3)
