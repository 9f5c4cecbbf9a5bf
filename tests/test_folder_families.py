"""Folder tasks in every audio-only family (``folder-<family>:PATH``), offline."""

from __future__ import annotations

import csv
import shutil
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
        out / "log-mel" / "v1" / f"Folder-calls-{folder_digest(root)}-classification.json"
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


# --------------------------------------------- issue 23, item 3: the columns a family reads


def _two_labellings(root: Path) -> Path:
    """Tones of three pitches by two speakers; ``label`` holds the speaker, ``pitch`` the
    pitch class."""
    return _folder(
        root,
        speakers=2,
        extra={"label": lambda s, label, k: f"spk{s}", "pitch": lambda s, label, k: label},
        header=("file", "label", "pitch"),
    )


FAMILY_OPTIONS: dict[str, dict[str, Any]] = {
    "similarity": {"n_permutations": 10, "n_bootstrap": 5, "pca": [None]},
    "classification": {"probes": "knn", "generated_folds": 3},
    "multilabel": {"probes": "knn", "generated_folds": 3},
    "clustering": {},
    "retrieval": {},
    "pair-classification": {},
}


@pytest.mark.parametrize("family", list(FAMILY_OPTIONS))
def test_label_column_scores_another_column_as_rewriting_the_table_would(
    tmp_path: Path, family: str
) -> None:
    root = _two_labellings(tmp_path / "calls")
    # The old way: a copy of the folder whose labels.csv holds the pitch as its label.
    rewritten = tmp_path / "rewritten"
    shutil.copytree(root, rewritten)
    with (root / "labels.csv").open(newline="") as fh:
        rows = [{"file": r["file"], "label": r["pitch"]} for r in csv.DictReader(fh)]
    with (rewritten / "labels.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=["file", "label"])
        writer.writeheader()
        writer.writerows(rows)
    options = FAMILY_OPTIONS[family]
    result = _run(f"folder-{family}:{root}", tmp_path, **options, label_column="pitch")
    expected = _run(f"folder-{family}:{rewritten}", tmp_path, **options)
    assert result.run is not None and result.run.task_options["label_column"] == "pitch"
    assert result.details["folder"]["read"]["label"] == "pitch"
    assert result.main_score is not None
    assert result.main_score == expected.main_score
    assert result.scores == expected.scores
    speakers = _run(f"folder-{family}:{root}", tmp_path, **options)  # the label column
    assert speakers.details["folder"]["read"]["label"] == "label"
    assert speakers.scores != result.scores


def test_another_label_column_is_another_result_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Speakers instead of words is another question of the same clips: both results stay."""
    root = _two_labellings(tmp_path / "calls")
    pitch = _run(f"folder-clustering:{root}", tmp_path, label_column="pitch")
    assert pitch.task.name.startswith("Folder-calls+pitch-")
    assert pitch.task.name.endswith("-clustering")
    capsys.readouterr()
    usual = _run(f"folder-clustering:{root}", tmp_path)
    assert usual.task.name == pitch.task.name.replace("+pitch", "")
    assert "replacing" not in capsys.readouterr().err
    files = sorted(p.name for p in (tmp_path / "out").rglob("Folder-calls*.json"))
    assert files == sorted([f"{usual.task.name}.json", f"{pitch.task.name}.json"])
    _run(f"folder-clustering:{root}", tmp_path, label_column="pitch")
    assert "reusing existing result" in capsys.readouterr().err
    # Naming the usual column is the usual question.
    _run(f"folder-clustering:{root}", tmp_path, label_column="label")
    assert "differs in task option label_column" in capsys.readouterr().err


def test_label_column_from_the_cli_names_the_speaker_without_grouping_by_it(
    tmp_path: Path,
) -> None:
    root = _folder(tmp_path / "calls", speakers=3, renditions=2)
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        [
            "evaluate", "--task", f"folder-classification:{root}", "--model", "log-mel",
            "--output-dir", str(out), "--pooling", "mean_time", "--no-progress", "--no-flops",
            "-O", "label_column=speaker", "-O", "probes=knn",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    (path,) = out.glob("log-mel/v1/Folder-calls+speaker-*-classification.json")
    saved = load_result(path)
    assert saved.run is not None and saved.run.task_options["label_column"] == "speaker"
    # The speaker is the class here: the clips are not grouped by it.
    assert saved.details["folder"]["read"] == {"file": "file", "label": "speaker"}
    assert saved.details["folder"]["grouped"] is False
    assert saved.details["splits"]["default"]["method"] == "generated_folds"


def test_every_family_takes_an_option_for_each_column_it_reads() -> None:
    from audiobench.tasks.folder import COLUMN_ROLES, folder_options

    for family in registry.FOLDER_FAMILIES:
        fields = {f for f in folder_options(family).model_fields if f.endswith("_column")}
        assert fields == {f"{role}_column" for role in COLUMN_ROLES[family]}
    assert set(COLUMN_ROLES["classification"]) >= {"label", "split", "group", "fold"}
    assert set(COLUMN_ROLES["retrieval"]) >= {"label", "split", "relevant"}
    assert set(COLUMN_ROLES["pair-classification"]) >= {"label", "pair"}


def test_fold_split_and_pair_columns_of_other_names(tmp_path: Path) -> None:
    root = _folder(
        tmp_path / "named",
        speakers=3,
        extra={
            "session": lambda s, label, k: str(s + 1),
            "part": lambda s, label, k: "query" if k == 0 else "corpus",
            "who": lambda s, label, k: f"spk{s}",
        },
        header=("file", "label", "session", "part", "who"),
    )
    folds = _run(f"folder-classification:{root}", tmp_path, fold_column="session", probes="knn")
    assert set(folds.details["splits"]["default"]["splits"]) == {"fold-1", "fold-2", "fold-3"}
    grouped = _run(
        f"folder-classification:{root}",
        tmp_path,
        group_column="who",
        probes="knn",
        generated_folds=3,
    )
    assert grouped.details["folder"]["grouped_by"] == "who"
    assert grouped.details["splits"]["default"]["method"] == "grouped_folds"
    retrieval = _run(f"folder-retrieval:{root}", tmp_path, split_column="part")
    assert retrieval.details["folder"]["layout"] == "split"
    assert retrieval.scores["default"]["n_queries"] == 9  # the k == 0 renditions
    pairs = tmp_path / "pairs"
    rows = []
    for p in range(6):
        a = write_tone(pairs / f"a{p}.wav", freq=300.0 * (1 + 0.01 * p))
        b = write_tone(pairs / f"b{p}.wav", freq=(300.0 if p % 2 else 3000.0) * (1 + 0.02 * p))
        rows += [{"file": a.name, "match": f"m{p}", "same": p % 2}]
        rows += [{"file": b.name, "match": f"m{p}", "same": p % 2}]
    with (pairs / "labels.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=["file", "match", "same"])
        writer.writeheader()
        writer.writerows(rows)
    given = _run(
        f"folder-pair-classification:{pairs}",
        tmp_path,
        pair_column="match",
        label_column="same",
        pairs="given",
    )
    assert given.details["folder"]["read"] == {"file": "file", "label": "same", "pair": "match"}
    assert given.scores["default"]["n_pairs"] == 6 and given.main_score == pytest.approx(1.0)


def test_a_column_option_naming_no_column_is_an_error(tmp_path: Path) -> None:
    root = _two_labellings(tmp_path / "calls")
    with pytest.raises(
        ValueError,
        match=r"calls/labels.csv: no column 'speaker' \(asked for as the label column\); "
        r"columns: \['file', 'label', 'pitch'\]",
    ):
        _run(f"folder-clustering:{root}", tmp_path, label_column="speaker")
    # A column clustering does not read: recorded as unused, like any option of another family.
    unused = _run(f"folder-clustering:{root}", tmp_path, fold_column="pitch")
    assert unused.details["unused_options"] == ["fold_column"]
