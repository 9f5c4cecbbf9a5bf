"""The clustering family: k-means over seeds, scores, bad input, real tasks, CLI."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import audiobench
from audiobench import registry
from audiobench.audio import Clip
from audiobench.benchmark import get_benchmark
from audiobench.families import ClusteringTask
from audiobench.leaderboard.validate import validate_file
from audiobench.metrics import cluster_scores
from audiobench.results import load_result
from audiobench.task import DatasetSource, TaskFamily, TaskMetadata
from tests.families.test_classification import FREQS, FakeEmbedder, _tone, make_clip, run_cli
from tests.hub_copy import write_hub_like


def task_class(
    name: str, main_score: str = "v_measure", subsets: tuple[str, ...] = (), **options: object
) -> type[ClusteringTask]:
    meta = TaskMetadata(
        name=name,
        family=TaskFamily.CLUSTERING,
        description="test task",
        dataset=DatasetSource(kind="synthetic", path="tests"),
        main_score=main_score,
        subsets=subsets,
    )
    return type(
        name, (ClusteringTask,), {"metadata": meta, "options": ClusteringTask.Options(**options)}
    )


def blobs(
    n_classes: int = 3, per_class: int = 10, *, shuffle: bool = False, seed: int = 0
) -> tuple[list[Clip], dict[str, np.ndarray]]:
    """Tight, far-apart clusters, one per class (labels permuted with ``shuffle``)."""
    rng = np.random.default_rng(seed)
    centres = 20.0 * np.eye(n_classes, 6)
    labels = [f"c{c}" for c in range(n_classes) for _ in range(per_class)]
    shown = list(rng.permutation(labels)) if shuffle else labels
    clips, vectors = [], {}
    for i, (true, label) in enumerate(zip(labels, shown, strict=True)):
        clips.append(make_clip(f"b{i:03d}", label))
        vectors[f"b{i:03d}"] = centres[int(true[1:])] + 0.1 * rng.standard_normal(6)
    return clips, vectors


Plain = task_class("TestClusters", seeds=(0, 1, 2))


def test_separable_clusters_score_one_on_every_metric() -> None:
    clips, vectors = blobs()
    result = Plain().evaluate(FakeEmbedder(vectors), clips)
    entry = result.scores["default"]
    for metric in ("v_measure", "nmi", "ari", "purity"):
        assert entry[metric] == pytest.approx(1.0)
        assert entry["std"][metric] == pytest.approx(0.0, abs=1e-12)
        assert entry["per_seed"][metric] == pytest.approx([1.0, 1.0, 1.0])
    assert entry["n_clusters"] == 3 and entry["n_samples"] == 30
    assert result.main_score == entry["v_measure"]
    assert result.details["seeds"] == [0, 1, 2]
    assert result.details["algorithm"] == "MiniBatchKMeans"
    assert Plain.score_problems(result.scores) == []


def test_shuffled_labels_score_near_zero() -> None:
    clips, vectors = blobs(per_class=30, shuffle=True)
    entry = Plain().evaluate(FakeEmbedder(vectors), clips).scores["default"]
    assert entry["v_measure"] < 0.15 and abs(entry["ari"]) < 0.1


def test_scores_are_those_of_cluster_scores_over_the_seeds() -> None:
    """The family adds nothing to the metric engine's numbers: same mean, spread, per seed."""
    rng = np.random.default_rng(5)
    clips = [make_clip(f"r{i}", f"c{i % 4}") for i in range(40)]
    vectors = {c.id: rng.standard_normal(5) for c in clips}
    task = task_class("TestNoisy", main_score="ari", seeds=(3, 4, 5, 6))
    result = task().evaluate(FakeEmbedder(vectors), clips)
    expected = cluster_scores(
        np.stack([vectors[c.id] for c in clips]), [c.label for c in clips], seeds=(3, 4, 5, 6)
    )
    entry = result.scores["default"]
    for metric, value in expected.mean.items():
        assert entry[metric] == pytest.approx(value)
        assert entry["std"][metric] == pytest.approx(expected.std[metric])
        assert entry["per_seed"][metric] == pytest.approx(list(expected.per_seed[metric]))
        assert np.mean(entry["per_seed"][metric]) == pytest.approx(entry[metric])
    assert result.main_score == pytest.approx(expected.mean["ari"])


def test_seeds_can_be_chosen_per_run() -> None:
    clips, vectors = blobs(per_class=4)
    result = Plain(seeds=[7]).evaluate(FakeEmbedder(vectors), clips)
    assert result.scores["default"]["per_seed"]["nmi"] == [pytest.approx(1.0)]
    assert result.details["seeds"] == [7]
    with pytest.raises(ValueError, match="invalid option seeds: Tuple should have at least 1 item"):
        Plain(seeds=[])


def test_subsets_are_clustered_apart_and_averaged() -> None:
    clips, vectors = blobs(n_classes=2, per_class=8)
    clips = [replace(c, subset="A" if i % 2 else "B") for i, c in enumerate(clips)]
    task = task_class("TestClusterSubsets", subsets=("A", "B"), seeds=(0, 1))
    result = task().evaluate(FakeEmbedder(vectors), clips)
    assert list(result.scores) == ["A", "B"]
    assert result.scores["A"]["n_samples"] == result.scores["B"]["n_samples"] == 8
    mean = result.aggregates["mean"]
    assert mean["subsets"] == ["A", "B"]
    assert mean["v_measure"] == pytest.approx(
        np.mean([result.scores[s]["v_measure"] for s in ("A", "B")])
    )
    assert result.main_score == mean["v_measure"]
    assert task.score_problems(result.scores) == []
    assert task.score_problems(result.aggregates) == []


def test_bad_input_is_a_clear_error() -> None:
    clips, vectors = blobs(per_class=3)
    clips[4] = replace(clips[4], label=None)
    with pytest.raises(ValueError, match="have no label: 'b004'"):
        Plain().evaluate(FakeEmbedder(vectors), clips)
    one_class = [make_clip(f"o{i}", "same") for i in range(5)]
    with pytest.raises(ValueError, match="TestClusters: clustering needs at least 2"):
        Plain().evaluate(
            FakeEmbedder({c.id: np.ones(3) * i for i, c in enumerate(one_class)}), one_class
        )
    clips, vectors = blobs(per_class=3)
    vectors["b002"] = np.full(6, np.inf)
    with pytest.raises(ValueError, match="TestClusters"):
        Plain().evaluate(FakeEmbedder(vectors), clips)
    with pytest.raises(ValueError, match="'accuracy' is not one of"):
        task_class("TestBadMain", main_score="accuracy")


def test_score_problems_reject_bad_results() -> None:
    clips, vectors = blobs(per_class=4)
    scores = Plain().evaluate(FakeEmbedder(vectors), clips).scores
    bad = json.loads(json.dumps(scores))
    bad["default"]["ari"] = -1.5
    bad["default"]["purity"] = 1.2
    bad["default"]["std"]["nmi"] = 0.8
    bad["default"]["per_seed"]["v_measure"][1] = 2.0
    bad["default"]["silhouette"] = 0.3
    bad["default"]["n_clusters"] = 2.5
    bad["other"] = {"v_measure": 0.5}
    problems = Plain.score_problems(bad)
    expected = [
        "default.ari: Input should be greater than or equal to -1, not -1.5",
        "default.purity: Input should be less than or equal to 1, not 1.2",
        "default.std.nmi: Input should be less than or equal to 0.5, not 0.8",
        "default.per_seed.v_measure[1]: Input should be less than or equal to 1, not 2.0",
        "default.silhouette: unknown field",
        "default.n_clusters: Input should be a valid integer",
        "other: unknown subset",
    ]
    for start in expected:
        assert any(p.startswith(start) for p in problems), (start, problems)
    assert len(problems) == len(expected)
    # ARI may be negative; V-measure may not.
    fine = json.loads(json.dumps(scores))
    fine["default"].update(ari=-0.2, v_measure=0.0)
    # The means and spreads must stay those of the seeds' values (a report is consistent).
    n_seeds = len(fine["default"]["per_seed"]["ari"])
    fine["default"]["per_seed"].update(ari=[-0.2] * n_seeds, v_measure=[0.0] * n_seeds)
    fine["default"]["std"].update(ari=0.0, v_measure=0.0)
    assert Plain.score_problems(fine) == []


# ---------------------------------------------------------------------------- real tasks


@pytest.mark.parametrize("name", ["ESC50Clustering", "MockClustering"])
def test_declared_tasks_instantiate(name: str) -> None:
    task = registry.tasks.create(name)
    assert task.metadata.family == TaskFamily.CLUSTERING
    assert task.metadata.main_score == "v_measure"
    assert task.metadata.offline == (name == "MockClustering")


def test_clustering_benchmark_reads_the_main_score(tmp_path: Path) -> None:
    rows = [
        {"filename": f"{k}.wav", "fold": 1 + k % 5, "category": label, "audio": _tone(freq, k)}
        for label, freq in FREQS.items()
        for k in range(6)
    ]
    root = write_hub_like(tmp_path / "esc50", rows)
    task = registry.tasks.create("ESC50Clustering", dataset_path=root)
    [result] = audiobench.evaluate(
        [task],
        "log-mel",
        output_dir=tmp_path / "out",
        use_cache=False,
        progress=False,
        count_flops=False,
    )
    assert result.scores["default"]["n_clusters"] == 3
    assert result.main_score == result.scores["default"]["v_measure"] > 0.5
    bench = get_benchmark("Clustering")
    assert bench.tasks == ("ESC50Clustering",)
    [row] = bench.table([result])
    assert row["ESC-50 V-measure"] == result.main_score


def test_list_tasks_shows_real_and_offline_clustering_tasks() -> None:
    code, out, err = run_cli("list", "tasks", "--type", "clustering", "--json")
    assert code == 0, err
    rows = {r["name"]: r["offline"] for r in json.loads(out)}
    assert rows["ESC50Clustering"] is False and rows["MockClustering"] is True


def test_mock_clustering_runs_from_the_cli_with_log_mel(tmp_path: Path) -> None:
    out = tmp_path / "results"
    args = ["evaluate", "--task", "MockClustering", "--model", "log-mel"]
    code, _, err = run_cli(*args, "--output-dir", str(out), "--no-progress")
    assert code == 0, err
    path = out / "log-mel" / "v1" / "MockClustering.json"
    result = load_result(path)
    entry = result.scores["default"]
    assert entry["n_clusters"] == 5 and entry["n_samples"] == 40
    assert len(entry["per_seed"]["v_measure"]) == 5
    assert result.main_score == entry["v_measure"] > 0.2
    _, problems = validate_file(path)
    assert problems == []
