"""Folder tasks in every audio-only family (``folder-<family>:PATH``), offline."""

from __future__ import annotations

import csv
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from threadpoolctl import threadpool_limits
from typer.testing import CliRunner

from audiobench import evaluate, registry
from audiobench.cli import app
from audiobench.results import TaskResult, load_result
from tests.conftest import folder_digest, write_tone

PITCH = {"low": 300.0, "mid": 1200.0, "high": 4000.0}


@pytest.fixture(autouse=True)
def one_openmp_thread() -> Iterator[None]:
    with threadpool_limits(1):
        yield


def _folder(
    root: Path,
    *,
    speakers: int = 6,
    renditions: int = 2,
    extra: dict[str, Any] | None = None,
    header: Sequence[str] = ("file", "label", "speaker"),
) -> Path:
    """Tones of three classes, ``renditions`` per speaker and class, and a labels.csv."""
    rng = np.random.default_rng(1)
    rows = []
    for s in range(speakers):
        for label, base in PITCH.items():
            for k in range(renditions):
                rel = f"spk{s}/{label}{k}.wav"
                freq = base * (1 + 0.03 * s) * (1 + 0.01 * rng.standard_normal())
                write_tone(root / rel, freq=freq, seconds=0.3 + 0.02 * k)
                row = {"file": rel, "label": label, "speaker": f"spk{s}", "group": f"spk{s}"}
                for key, make in (extra or {}).items():
                    row[key] = make(s, label, k)
                rows.append(row)
    with (root / "labels.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(header), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return root


def _run(spec: str, tmp_path: Path, **options: Any) -> TaskResult:
    (result,) = evaluate(
        spec,
        "log-mel",
        output_dir=tmp_path / "out",
        cache_dir=tmp_path / "cache",
        pooling="mean_time",
        progress=False,
        count_flops=False,
        task_options=options,
    )
    return result


def test_resolvers_cover_every_folder_family() -> None:
    from audiobench.tasks.folder import FOLDER_FAMILIES

    prefixes = {p for p in registry.tasks._resolvers if p.startswith("folder-")}
    assert prefixes == {f"folder-{f}" for f in FOLDER_FAMILIES}
    with pytest.raises(ValueError, match="unknown folder task family"):
        from audiobench.tasks.folder import folder_task

        folder_task(".", family="regression")


def test_folder_classification_groups_splits_by_speaker(tmp_path: Path) -> None:
    """The acceptance run: a folder classification with a speaker column, offline, CLI."""
    root = _folder(tmp_path / "calls")
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        [
            "evaluate", "--task", f"folder-classification:{root}", "--model", "log-mel",
            "--output-dir", str(out), "--pooling", "mean_time", "--no-progress",
            "--task-option", 'probe_params={"linear": {"n_splits": 3}}',
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    saved = load_result(
        out / "log-mel" / "v1" / f"Folder-calls-classification-{folder_digest(root)}.json"
    )
    assert saved.task.family == "classification"
    assert saved.details["folder"]["grouped_by"] == "speaker"
    assert saved.details["folder"]["grouped"] is True
    assert saved.details["protocol"]["grouped"] is True
    assert saved.details["splits"]["default"]["method"] == "grouped_folds"
    assert saved.main_score is not None and saved.main_score > 0.9  # three distinct pitches


def test_grouping_can_be_turned_off_and_folds_are_honoured(tmp_path: Path) -> None:
    root = _folder(
        tmp_path / "folds",
        extra={"fold": lambda s, label, k: str(s % 3 + 1)},
        header=("file", "label", "speaker", "fold"),
    )
    result = _run(f"folder-classification:{root}", tmp_path, probes="knn")
    assert result.details["splits"]["default"]["method"] == "folds"
    assert set(result.details["splits"]["default"]["splits"]) == {"fold-1", "fold-2", "fold-3"}
    ungrouped = _run(f"folder-classification:{root}", tmp_path, grouped="false", probes="knn")
    assert ungrouped.details["folder"]["grouped"] is False


def test_given_splits_leaking_a_speaker_are_refused_when_grouped(tmp_path: Path) -> None:
    root = _folder(
        tmp_path / "leak",
        extra={"split": lambda s, label, k: "test" if k == 1 else "train"},
        header=("file", "label", "speaker", "split"),
    )
    with pytest.raises(ValueError, match="spk"):
        _run(f"folder-classification:{root}", tmp_path, probes="knn")
    result = _run(f"folder-classification:{root}", tmp_path, probes="knn", grouped="false")
    assert result.details["splits"]["default"]["method"] == "given"
    assert result.details["splits"]["default"]["groups_in_several_parts"] == 6


def test_folder_clustering_retrieval_and_pairs(tmp_path: Path) -> None:
    root = _folder(tmp_path / "fam", speakers=3, header=("file", "label", "group"))
    clustering = _run(f"folder-clustering:{root}", tmp_path)
    assert clustering.task.family == "clustering" and clustering.main_score == pytest.approx(1.0)
    retrieval = _run(f"folder-retrieval:{root}", tmp_path)
    assert retrieval.details["folder"]["layout"] == "all"
    assert retrieval.scores["default"]["n_queries"] == 18 and retrieval.main_score == 1.0
    pairs = _run(f"folder-pair-classification:{root}", tmp_path)
    assert pairs.details["folder"]["pairs"] == "from_labels"
    assert pairs.scores["default"]["n_pairs"] == 18 * 17 // 2
    assert pairs.main_score == pytest.approx(1.0)


def test_folder_pairs_from_a_pair_column(tmp_path: Path) -> None:
    root = tmp_path / "pairs"
    rows = []
    for p in range(8):
        same = p % 2 == 0
        a = write_tone(root / f"a{p}.wav", freq=300.0 * (1 + 0.01 * p))
        b = write_tone(root / f"b{p}.wav", freq=(300.0 if same else 3000.0) * (1 + 0.02 * p))
        for side, path in (("a", a), ("b", b)):
            rows.append(
                {"file": path.name, "id": f"{p}{side}", "pair": f"p{p}", "label": int(same)}
            )
    # files reused in another pair (a pair of one file with itself is refused: see
    # tests/hostile/test_folder_refusals.py)
    rows.append({"file": "a0.wav", "id": "again-a", "pair": "p8", "label": 0})
    rows.append({"file": "b1.wav", "id": "again-b", "pair": "p8", "label": 0})
    with (root / "labels.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=["file", "id", "pair", "label"])
        writer.writeheader()
        writer.writerows(rows)
    result = _run(f"folder-pair-classification:{root}", tmp_path)
    assert result.details["folder"]["pairs"] == "given"
    assert result.scores["default"]["n_pairs"] == 9 and result.main_score == pytest.approx(1.0)


def test_folder_multilabel(tmp_path: Path) -> None:
    root = _folder(
        tmp_path / "ml",
        extra={"tags": lambda s, label, k: label if k == 0 else f"{label}|loud"},
        header=("file", "tags", "speaker"),
    )
    # the labels live in "tags": rename the column to "label"
    text = (root / "labels.csv").read_text().replace("file,tags,speaker", "file,label,speaker")
    (root / "labels.csv").write_text(text)
    result = _run(f"folder-multilabel:{root}", tmp_path, probes="knn")
    assert result.main_score_name == "linear:map"
    assert "loud" not in {s for s in result.details["folder"]["columns"]}
    assert result.details["protocol"]["multilabel"] is True
