"""MSEB's SVQ salient-term segmentation tasks: the catalogue, the reader, the scores."""

from __future__ import annotations

import io
import json
import warnings
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf

import audiobench
from audiobench import registry
from audiobench.families import SegmentationTask
from audiobench.registry import PluginWarning, Registry
from audiobench.sources import DatasetError
from audiobench.task import Task
from audiobench.tasks.segmentation import SVQ_SEGMENTATION_TASKS
from audiobench.tasks.svq import SVQ_LOCALES
from tests.families.test_classification import run_cli
from tests.families.test_segmentation import FixedTimings

# -- the catalogue ---------------------------------------------------------------------------


def test_every_locale_has_both_of_mseb_segmentation_tasks_under_its_name() -> None:
    names = [t.metadata.name for t in SVQ_SEGMENTATION_TASKS]
    assert len(names) == len(set(names)) == 52 == 2 * len(SVQ_LOCALES)
    for locale, (part, _) in SVQ_LOCALES.items():
        plain = registry.tasks.get(f"SVQ{part}SalientTermSegmentation")
        selection = registry.tasks.get(f"SVQ{part}SalientTermSegmentationSelectionTask")
        for cls in (plain, selection):
            assert issubclass(cls, SegmentationTask)
            assert cls.metadata.subsets == (locale,)
            assert cls.metadata.main_score == "ndcg"
            assert cls.metadata.dataset.path == "google/svq"
    assert "SVQArXGulfSalientTermSegmentationSelectionTask" in names
    assert registry.tasks.get("SVQEnUsSalientTermSegmentation").locale == "en_us"  # type: ignore[attr-defined]


def test_list_tasks_shows_the_svq_segmentation_tasks_and_the_mock() -> None:
    code, out, err = run_cli("list", "tasks", "--type", "segmentation", "--json")
    assert code == 0, err
    rows = {row["name"]: row for row in json.loads(out)}
    assert set(rows) >= {t.metadata.name for t in SVQ_SEGMENTATION_TASKS} | {"MockSegmentation"}
    assert rows["MockSegmentation"]["offline"]
    assert not rows["SVQSwSalientTermSegmentation"]["offline"]


@dataclass
class _CatalogueEntryPoint:
    """What the registry reads of an entry point, with its target given, not imported."""

    name: str
    target: Any
    dist: None = None

    @property
    def value(self) -> str:
        return f"tests:{self.name}"

    def load(self) -> Any:
        if isinstance(self.target, Exception):
            raise self.target
        return self.target


def test_a_catalogue_registers_each_class_and_a_broken_one_warns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    points = [
        _CatalogueEntryPoint("good", SVQ_SEGMENTATION_TASKS[:2]),
        _CatalogueEntryPoint("broken", ImportError("no such module")),
    ]

    def entry_points(*, group: str) -> list[_CatalogueEntryPoint]:
        return list(points) if group == "test.catalogues" else []

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    tasks: Registry[Task] = Registry("task", "test.tasks", Task, catalogue_group="test.catalogues")  # type: ignore[type-abstract]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        names = tasks.names()
    assert names == sorted(t.metadata.name for t in SVQ_SEGMENTATION_TASKS[:2])
    assert any("'broken'" in str(w.message) and w.category is PluginWarning for w in caught)
    assert tasks.get(names[0]) in SVQ_SEGMENTATION_TASKS


# -- the reader, on a copy in SVQ's layout ---------------------------------------------------


def _wav(k: int) -> bytes:
    buffer = io.BytesIO()
    t = np.arange(8000 + 800 * k) / 16000
    sf.write(buffer, 0.2 * np.sin(2 * np.pi * (220 + 40 * k) * t), 16000, format="WAV")
    return buffer.getvalue()


def write_svq_salient_terms(root: Path, rows: list[dict[str, Any]]) -> Path:
    """SVQ's files for the salient-term tasks: utt_index.jsonl, salient_term.jsonl and one
    audio shard, ``audio/s0.parquet`` (WAV bytes)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    (root / "audio").mkdir(parents=True)
    pq.write_table(
        pa.table({"waveform": [_wav(k) for k in range(len(rows))]}), root / "audio" / "s0.parquet"
    )
    index = [
        {
            "utt_id": r["utt_id"],
            "index": f"audio/s0:{k}",
            "locale": r["locale"],
            "environment": r.get("environment", ""),
            "text": r["text"],
        }
        for k, r in enumerate(rows)
    ]
    (root / "utt_index.jsonl").write_text("".join(json.dumps(r) + "\n" for r in index))
    (root / "salient_term.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


ROWS: list[dict[str, Any]] = [
    {
        "utt_id": "u1",
        "locale": "en_us",
        "environment": "clean",
        "text": "the train to London",
        "topk_salient_terms": ["london", "train"],
        "topk_salient_terms_timestamps": [[1.0, 1.4], [0.5, 0.9]],
        "candidate_salient_terms": ["london", "train", "the"],
        "candidate_salient_terms_timestamps": [[1.0, 1.4], [0.5, 0.9], [0.0, 0.4]],
    },
    {
        "utt_id": "u2",
        "locale": "en_us",
        "environment": "traffic_noise",
        "text": "blue sky",
        "topk_salient_terms": ["sky"],
        "topk_salient_terms_timestamps": [[0.2, 0.5]],
        "candidate_salient_terms": ["sky"],
        "candidate_salient_terms_timestamps": [[0.2, 0.5]],
    },
    {  # mismatched lists: MSEB leaves it out
        "utt_id": "u3",
        "locale": "en_us",
        "environment": "clean",
        "text": "a b",
        "topk_salient_terms": ["a", "b"],
        "topk_salient_terms_timestamps": [[0.0, 0.1]],
    },
    {  # another locale's
        "utt_id": "s1",
        "locale": "sw",
        "environment": "clean",
        "text": "habari",
        "topk_salient_terms": ["habari"],
        "topk_salient_terms_timestamps": [[0.0, 0.3]],
    },
]
WORDS = {
    "u1": [("the", 0.0, 0.4), ("train", 0.5, 0.9), ("to", 0.9, 1.0), ("London", 1.02, 1.41)],
    "u2": [("blue", 0.2, 0.5), ("sky.", 0.6, 0.9)],
}
TABLE = "token,idf\nlondon,3\ntrain,2\nsky,1\nblue,0.5\nthe,0.1\n"


def test_svq_task_reads_its_locale_and_scores_overall_and_per_environment(
    tmp_path: Path,
) -> None:
    copy = write_svq_salient_terms(tmp_path / "svq", ROWS)
    (tmp_path / "idf.csv").write_text(TABLE)
    said: list[str] = []
    task = registry.tasks.create("SVQEnUsSalientTermSegmentation", dataset_path=copy)
    clips = task.read_clips(said.append, missing_ok=False)
    assert [c.id for c in clips] == ["u1", "u2"]  # u3 left out, s1 is sw's
    assert any("left out 1 utterance" in line and "'u3'" in line for line in said)
    assert json.loads(clips[0].metadata["salient_terms"]) == [
        ["london", 1.0, 1.4],
        ["train", 0.5, 0.9],
    ]
    assert "candidate_salient_terms" not in clips[0].metadata

    (result,) = audiobench.evaluate(
        "SVQEnUsSalientTermSegmentation",
        FixedTimings(WORDS),
        output_dir=tmp_path / "out",
        dataset=copy,
        task_options={"idf_table": str(tmp_path / "idf.csv"), "top_k": 2},
        progress=False,
    )
    report = result.scores["en_us"]
    # As in test_segmentation's hand computation: u1 both terms hit, u2 "sky" ranked first
    # at the wrong time, "blue" at the reference's time.
    assert result.main_score == 1.0
    assert report["num_segments"] == 3
    assert report["timestamps_and_embeddings_hits"] == 2
    assert report["embeddings_accuracy"] == pytest.approx(2 / 3)
    clean, traffic = report["environments"]["clean"], report["environments"]["traffic_noise"]
    assert set(report["environments"]) == {"clean", "traffic_noise"}
    assert clean["num_segments"] == 2 and clean["timestamps_and_embeddings_accuracy"] == 1.0
    assert traffic["num_segments"] == 1
    assert traffic["timestamps_and_embeddings_hits"] == 0
    assert traffic["timestamps_hits"] == 1  # "blue" at the reference's time
    assert traffic["word_error_rate"] == pytest.approx(1.0)  # "sky blue" for "sky"
    assert result.run is not None and not result.run.dataset.pinned


def test_the_selection_task_carries_mseb_candidate_terms(tmp_path: Path) -> None:
    copy = write_svq_salient_terms(tmp_path / "svq", ROWS)
    task = registry.tasks.create("SVQEnUsSalientTermSegmentationSelectionTask", dataset_path=copy)
    clips = task.read_clips(lambda _: None, missing_ok=False)
    assert json.loads(clips[0].metadata["candidate_salient_terms"])[2] == ["the", 0.0, 0.4]
    assert json.loads(clips[1].metadata["salient_terms"]) == [["sky", 0.2, 0.5]]


def test_a_term_time_that_is_not_a_pair_is_named_with_its_line(tmp_path: Path) -> None:
    rows = [dict(ROWS[0], topk_salient_terms_timestamps=[[1.0], [0.5, 0.9]])]
    copy = write_svq_salient_terms(tmp_path / "svq", rows)
    task = registry.tasks.create("SVQEnUsSalientTermSegmentation", dataset_path=copy)
    with pytest.raises(DatasetError, match=r"salient_term\.jsonl line 1: .*'london' at \[1\.0\]"):
        task.read_clips(lambda _: None, missing_ok=False)


def test_a_locale_without_scorable_utterances_is_an_error(tmp_path: Path) -> None:
    copy = write_svq_salient_terms(tmp_path / "svq", ROWS)
    task = registry.tasks.create("SVQJaJpSalientTermSegmentation", dataset_path=copy)
    with pytest.raises(DatasetError, match="no scorable utterance of locale ja_jp"):
        task.read_clips(lambda _: None, missing_ok=False)


def test_without_a_copy_offline_it_says_to_pass_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(DatasetError, match="--dataset DIR"):
        audiobench.evaluate(
            "SVQSwSalientTermSegmentation",
            FixedTimings({}),
            output_dir=tmp_path,
            progress=False,
        )


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        ({"utt_id": "zz", "locale": "en_us"}, r"line 5: utterance 'zz' is not in utt_index\.jsonl"),
        ({"utt_id": "u1", "locale": "en_us"}, r"line 5: utterance 'u1' is listed twice"),
    ],
)
def test_rows_naming_an_unknown_or_repeated_utterance_are_refused(
    tmp_path: Path, extra: dict[str, str], match: str
) -> None:
    copy = write_svq_salient_terms(tmp_path / "svq", ROWS)
    with (copy / "salient_term.jsonl").open("a") as fh:
        fh.write(json.dumps(extra) + "\n")
    task = registry.tasks.create("SVQEnUsSalientTermSegmentation", dataset_path=copy)
    with pytest.raises(DatasetError, match=match):
        task.read_clips(lambda _: None, missing_ok=False)
