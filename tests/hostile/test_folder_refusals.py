"""Issue 22, item 4: folder families refuse what they cannot score honestly."""

from __future__ import annotations

import csv
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf
from threadpoolctl import threadpool_limits
from typer.testing import CliRunner

import audiobench
from audiobench.cli import app
from audiobench.metrics.errors import InvalidEmbeddingsError
from audiobench.results import TaskResult
from audiobench.sources import DatasetError
from tests.conftest import write_tone

PITCH = {"low": 300.0, "mid": 1200.0, "high": 4000.0}
SIMILARITY = {"n_permutations": 10, "n_bootstrap": 5, "pca": [None]}


@pytest.fixture(autouse=True)
def one_openmp_thread() -> Iterator[None]:
    with threadpool_limits(1):
        yield


def _folder(root: Path, rows: Sequence[dict[str, Any]], header: Sequence[str]) -> Path:
    with (root / "labels.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(header), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return root


def _tones(root: Path, per_class: int = 3) -> list[dict[str, Any]]:
    """Tones of three pitches, ``per_class`` each: one row per clip (file, label, k)."""
    rows = []
    for label, base in PITCH.items():
        for k in range(per_class):
            rel = f"{label}{k}.wav"
            write_tone(root / rel, freq=base * (1 + 0.03 * k), seconds=0.3 + 0.02 * k)
            rows.append({"file": rel, "label": label, "k": k})
    return rows


def _run(spec: str, tmp_path: Path, **settings: Any) -> TaskResult:
    settings.setdefault("output_dir", tmp_path / "out")
    (result,) = audiobench.evaluate(
        spec,
        "log-mel",
        cache_dir=tmp_path / "cache",
        progress=False,
        count_flops=False,
        **settings,
    )
    return result


def test_retrieval_refuses_split_values_it_does_not_know(tmp_path: Path) -> None:
    # Read loosely, 'Query'/'Corpus' are not 'query'/'corpus': every clip queried the others.
    rows = _tones(tmp_path / "r")
    for row in rows:
        row["split"] = "Query" if row["k"] == 0 else "Corpus"
    root = _folder(tmp_path / "r", rows, ("file", "label", "split"))
    with pytest.raises(
        DatasetError,
        match=r"r/labels.csv: column 'split' holds split value\(s\) 'Corpus', 'Query' \(clips "
        r".*\); retrieval knows only 'query', 'corpus' \(case matters\); fix the 'split' "
        r"column, or pass --task-option split_column= to read no split column",
    ):
        _run(f"folder-retrieval:{root}", tmp_path)
    # The remedy works: no split column read, every clip queries the others.
    result = _run(f"folder-retrieval:{root}", tmp_path, task_options={"split_column": ""})
    assert result.details["folder"]["layout"] == "all"
    assert result.scores["default"]["n_queries"] == 9


def test_retrieval_with_a_query_split_but_no_corpus_is_refused(tmp_path: Path) -> None:
    rows = _tones(tmp_path / "r")
    for row in rows:
        row["split"] = "query"
    root = _folder(tmp_path / "r", rows, ("file", "label", "split"))
    with pytest.raises(DatasetError, match=r"holds only 'query'; retrieval needs 'corpus' clips"):
        _run(f"folder-retrieval:{root}", tmp_path)


def test_classification_refuses_a_split_column_that_is_all_train(tmp_path: Path) -> None:
    # Read loosely, an all-train split column is replaced by generated folds.
    rows = _tones(tmp_path / "c", per_class=4)
    for row in rows:
        row["split"] = "train"
    root = _folder(tmp_path / "c", rows, ("file", "label", "split"))
    with pytest.raises(
        DatasetError,
        match=r"c/labels.csv: column 'split' holds only 'train'; classification needs 'test' "
        r"clips as well, .*split_column= to read no split column \(then 5 generated folds",
    ):
        _run(f"folder-classification:{root}", tmp_path, task_options={"probes": "knn"})
    for row in rows:
        row["split"] = "Test" if row["k"] == 0 else "train"
    _folder(root, rows, ("file", "label", "split"))
    with pytest.raises(
        DatasetError,
        match=r"holds split value\(s\) 'Test' \(clips 'low0', 'mid0', 'high0'\); classification ",
    ):
        _run(f"folder-classification:{root}", tmp_path, task_options={"probes": "knn"})


def test_a_pair_of_a_file_with_itself_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "p"
    rows = []
    for p in range(4):
        a = write_tone(root / f"a{p}.wav", freq=300.0 * (1 + 0.01 * p))
        b = write_tone(root / f"b{p}.wav", freq=(300.0 if p % 2 else 3000.0) * (1 + 0.02 * p))
        rows += [
            {"file": a.name, "id": f"{p}a", "pair": f"p{p}", "label": p % 2},
            {"file": b.name, "id": f"{p}b", "pair": f"p{p}", "label": p % 2},
        ]
    # A file in two pairs is fine; a pair of one file with itself raised max_ap.
    rows += [
        {"file": "a0.wav", "id": "same-1", "pair": "self", "label": 1},
        {"file": "./a0.wav", "id": "same-2", "pair": "self", "label": 1},
    ]
    _folder(root, rows, ("file", "id", "pair", "label"))
    with pytest.raises(
        DatasetError,
        match=r"p/labels.csv: pair 'self' pairs clip 'same-1' with clip 'same-2', the same file "
        r"\(file .*p/a0.wav\); a file is always like itself",
    ):
        _run(f"folder-pair-classification:{root}", tmp_path)
    _folder(root, rows[:-2], ("file", "id", "pair", "label"))
    assert _run(f"folder-pair-classification:{root}", tmp_path).scores["default"]["n_pairs"] == 4


def test_pairs_from_labels_refuse_a_file_listed_twice(tmp_path: Path) -> None:
    rows = _tones(tmp_path / "p")
    rows.append({"file": "low0.wav", "label": "low", "id": "again"})
    root = _folder(tmp_path / "p", rows, ("file", "label", "id"))
    with pytest.raises(
        DatasetError, match=r"line 11: clip 'again' \('low0.wav'\) is the same file as clip 'low0'"
    ):
        _run(f"folder-pair-classification:{root}", tmp_path)


def test_clustering_refuses_every_clip_its_own_class(tmp_path: Path) -> None:
    # Read loosely, v_measure was 0.95 for a clustering of nine singletons.
    rows = _tones(tmp_path / "k")
    for row in rows:
        row["label"] = row["file"]
    root = _folder(tmp_path / "k", rows, ("file", "label"))
    with pytest.raises(
        DatasetError,
        match=r"k/labels.csv: every clip is its own class \(9 clips, 9 labels\); clustering",
    ):
        _run(f"folder-clustering:{root}", tmp_path)


def _similarity_folder(root: Path) -> Path:
    rows = _tones(root)
    return _folder(root, rows, ("file", "label"))


@pytest.mark.parametrize("odd", ["silent", "cancelled"])
def test_a_silent_or_cancelled_clip_shorter_than_the_longest_is_skipped(
    tmp_path: Path, odd: str
) -> None:
    root = _similarity_folder(tmp_path / "s")
    baseline = _run(f"folder:{root}", tmp_path, task_options=SIMILARITY, pooling="flatten")
    t = np.arange(3200) / 16000  # 0.2 s: shorter than every tone
    wave = (0.5 * np.sin(2 * np.pi * 500 * t)).astype(np.float32)
    data = np.zeros_like(wave) if odd == "silent" else np.stack([wave, -wave], axis=1)
    sf.write(root / "odd.wav", data, 16000, subtype="PCM_16")
    with (root / "labels.csv").open("a") as fh:
        fh.write("odd.wav,low\n")
    result = _run(
        f"folder:{root}",
        tmp_path,
        task_options=SIMILARITY,
        pooling="flatten",
        on_error="skip",
        output_dir=tmp_path / "out2",
    )
    assert [s.id for s in result.skipped] == ["odd"]
    reason = result.skipped[0].reason
    if odd == "silent":
        assert "unusable for scoring: constant embeddings (silent audio?)" in reason
    else:
        assert "2 channels cancel out when averaged to mono" in reason
    assert result.scores["default"]["counts"]["n_clips"] == 9
    assert result.main_score == baseline.main_score  # the other clips' score, unchanged
    if odd == "silent":
        with pytest.raises(InvalidEmbeddingsError, match=r"constant embeddings .*'odd'"):
            _run(f"folder:{root}", tmp_path, task_options=SIMILARITY, pooling="flatten")


def test_a_subset_that_does_not_exist_is_an_error(tmp_path: Path) -> None:
    rows = _tones(tmp_path / "s", per_class=4)
    for row in rows:
        row["subset"] = "birds" if row["k"] < 2 else "frogs"
    root = _folder(tmp_path / "s", rows, ("file", "label", "subset"))
    with pytest.raises(
        DatasetError, match=r"the data holds no subset 'bats'; its subsets: birds, frogs"
    ):
        _run(f"folder:{root}", tmp_path, task_options=SIMILARITY, subsets=("birds", "bats"))
    result = _run(f"folder:{root}", tmp_path, task_options=SIMILARITY, subsets=("frogs",))
    assert list(result.scores) == ["frogs"]


@pytest.mark.parametrize(
    ("family", "main"), [("classification", "accuracy"), ("retrieval", "ndcg_at_10")]
)
def test_mteb_protocol_on_a_folder_task_gives_the_reference_main_score(
    tmp_path: Path, family: str, main: str
) -> None:
    # Read loosely, the family's own main score ('linear:accuracy', 'mrr') was looked up in
    # the reference protocol's report: a null main score.
    rows = _tones(tmp_path / "m", per_class=6)
    for row in rows:
        row["split"] = "train" if row["k"] < 4 else "test"
    root = _folder(tmp_path / "m", rows, ("file", "label", "split"))
    options: dict[str, Any] = {"protocol": "mteb"}
    if family == "retrieval":
        options["split_column"] = ""  # every clip queries the others
    result = _run(f"folder-{family}:{root}", tmp_path, task_options=options)
    assert result.main_score_name == main
    assert result.details["protocol"]["name"] == "mteb"
    assert result.main_score is not None
    assert result.main_score == result.scores["default"][main]
    # A private table takes it, its main score checked under the protocol it ran.
    from audiobench.leaderboard.validate import validate_paths

    checked = validate_paths([tmp_path / "out"], allow_unpinned=True)
    assert checked.ok and len(checked.accepted) == 1, [p.line() for p in checked.problems]


def test_an_option_of_another_family_is_recorded_as_unused_by_a_folder_task(
    tmp_path: Path,
) -> None:
    rows = _tones(tmp_path / "g", per_class=4)
    root = _folder(tmp_path / "g", rows, ("file", "label"))
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        [
            "evaluate", "--task", f"folder:{root}", "--task", f"folder-clustering:{root}",
            "--model", "log-mel", "--output-dir", str(out), "--no-progress", "--no-flops",
            "--permutations", "10", "--bootstrap", "5", "--task-option", "pca=[null]",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "options not used by" in result.stderr and "n_bootstrap, n_permutations, pca" in (
        result.stderr
    )
    (clustering,) = out.glob("log-mel/v1/Folder-g-*-clustering.json")
    saved = audiobench.results.load_result(clustering)
    assert saved.details["unused_options"] == ["n_bootstrap", "n_permutations", "pca"]
    shutil.rmtree(out)
