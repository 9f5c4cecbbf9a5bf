"""zero_shot_similarity: the grid, its report, counts and input errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from audiobench.metrics import InsufficientClassesError, InvalidEmbeddingsError
from audiobench.vocsim import (
    cs,
    cscf,
    csr,
    gsr_details,
    pairwise_distances,
    pca_reduce,
    precision_at_k,
    silhouette,
    zero_shot_similarity,
)
from tests.metrics.data import clustered_embeddings

METRIC_KEYS = {
    "value",
    "raw",
    "baseline_mean",
    "baseline_ci",
    "lift",
    "p_value",
    "margin",
    "n_evaluated",
    "n_skipped",
}


def _data(seed: int = 0):
    rng = np.random.default_rng(seed)
    X, y = clustered_embeddings(rng, [8, 7, 6, 9, 5, 2, 1], dim=12, spread=0.8)
    labels: list[object] = [f"word{v}" for v in y]
    labels[3] = None  # an unlabelled clip
    labels[20] = float("nan")  # NaN also means unlabelled
    return X, labels


def _assert_plain_json(value: object) -> None:
    if isinstance(value, dict):
        assert all(isinstance(key, str) for key in value)
        for item in value.values():
            _assert_plain_json(item)
    elif isinstance(value, list):
        for item in value:
            _assert_plain_json(item)
    else:
        assert value is None or type(value) in (str, int, float, bool), type(value)
        if isinstance(value, float):
            assert np.isfinite(value)


def test_report_shape_and_values_match_the_metric_functions() -> None:
    X, labels = _data()
    report = zero_shot_similarity(
        X,
        labels,
        pca=(None, 4),
        ks=(1, 3),
        metrics=("precision", "gsr", "csr", "cs", "cscf", "silhouette"),
        n_permutations=50,
        n_bootstrap=40,
    )
    result = report.to_dict()
    _assert_plain_json(result)
    assert json.loads(json.dumps(result)) == result
    assert list(result["configs"]) == [
        "raw/cosine",
        "raw/euclidean",
        "raw/spearman",
        "pca4/cosine",
        "pca4/euclidean",
        "pca4/spearman",
    ]
    assert result["counts"] == {
        "n_clips": 38,
        "n_labelled": 36,
        "n_unlabelled": 2,
        "n_classes": 7,
        "n_evaluated_classes": 6,
        "n_excluded_classes": 1,
        "n_excluded_clips": 1,
        "n_evaluated": 35,
    }
    assert result["config_info"]["pca4/cosine"] == {
        "pca_components": 4,
        "dim": 4,
        "distance": "cosine",
    }
    labelled = [i for i, label in enumerate(labels) if isinstance(label, str)]
    kept_labels = [labels[i] for i in labelled]
    for name, scores in result["configs"].items():
        assert list(scores) == ["p@1", "p@3", "gsr", "csr", "cs", "cscf", "silhouette"]
        for entry in scores.values():
            assert set(entry) == METRIC_KEYS
        pca_setting, distance = name.split("/")
        features = X if pca_setting == "raw" else pca_reduce(X, 4)
        D = pairwise_distances(features[labelled], distance)
        assert scores["p@1"]["value"] == precision_at_k(D, kept_labels, 1)
        assert scores["p@3"]["value"] == precision_at_k(D, kept_labels, 3)
        expected = gsr_details(D, kept_labels)
        assert scores["gsr"]["value"] == pytest.approx(expected.value, abs=1e-12)
        assert scores["gsr"]["raw"] == pytest.approx(expected.raw, abs=1e-12)
        # (Spearman on 4 PCA dimensions has few distinct distances, so some clips may have
        # AvgID = NID = 0 and be skipped.)
        assert scores["gsr"]["n_evaluated"] == expected.n_evaluated
        assert scores["gsr"]["n_skipped"] == expected.n_skipped
        assert expected.n_evaluated + expected.n_skipped == 35
        assert scores["p@1"]["n_evaluated"] == 36
        assert scores["csr"]["value"] == pytest.approx(csr(D, kept_labels), abs=1e-12)
        assert scores["cs"]["value"] == pytest.approx(cs(D, kept_labels), abs=1e-12)
        assert scores["cscf"]["value"] == pytest.approx(cscf(D, kept_labels), abs=1e-12)
        assert scores["silhouette"]["value"] == pytest.approx(silhouette(D, kept_labels), abs=1e-12)
        for metric in ("p@1", "p@3", "gsr"):
            entry = scores[metric]
            low, high = entry["baseline_ci"]
            assert low <= entry["baseline_mean"] <= high
            assert entry["lift"] == pytest.approx(entry["value"] - entry["baseline_mean"])
            assert 1 / 51 <= entry["p_value"] <= 1
            assert entry["margin"] > 0
        for metric in ("csr", "cs", "cscf", "silhouette"):
            assert scores[metric]["baseline_mean"] is None and scores[metric]["margin"] is None
    assert report.score("raw/cosine", "gsr") == result["configs"]["raw/cosine"]["gsr"]["value"]


@pytest.mark.parametrize("metrics", [("gsr",), ("precision",), ("csr", "cscf")])
def test_metric_subsets(metrics: tuple[str, ...]) -> None:
    X, labels = _data()
    report = zero_shot_similarity(
        X, labels, metrics=metrics, distances=("cosine",), pca=(None,), n_permutations=20
    )
    expected = {"gsr": ["gsr"], "precision": ["p@1", "p@5"], "csr": ["csr"], "cscf": ["cscf"]}
    assert list(report.configs["raw/cosine"]) == [m for g in metrics for m in expected[g]]


def test_thread_setting_is_restored() -> None:
    X, labels = _data()
    before = torch.get_num_threads()
    zero_shot_similarity(X, labels, distances=("cosine",), pca=(None,), n_permutations=40)
    assert torch.get_num_threads() == before


def test_progress_hook_reaches_its_total() -> None:
    X, labels = _data()
    calls: list[tuple[str, int, int]] = []
    zero_shot_similarity(
        X,
        labels,
        distances=("cosine", "spearman"),
        pca=(None, 3),
        n_permutations=20,
        n_bootstrap=10,
        progress=lambda description, advance, total: calls.append((description, advance, total)),
    )
    totals = {total for _, _, total in calls}
    assert len(totals) == 1
    assert sum(advance for _, advance, _ in calls) == totals.pop()
    assert any("pca3/spearman" in description for description, _, _ in calls)


def test_zero_permutations_and_bootstraps_report_none() -> None:
    X, labels = _data()
    report = zero_shot_similarity(
        X, labels, distances=("euclidean",), pca=(None,), n_permutations=0, n_bootstrap=0
    )
    entry = report.to_dict()["configs"]["raw/euclidean"]["gsr"]
    assert entry["value"] is not None
    assert (
        entry["baseline_mean"]
        is entry["baseline_ci"]
        is entry["p_value"]
        is entry["margin"]
        is None
    )


def test_pca_larger_than_the_data_keeps_min_n_dim() -> None:
    X, labels = _data()
    report = zero_shot_similarity(X, labels, distances=("cosine",), pca=(100,), n_permutations=5)
    assert report.configurations[0].dim == 12
    assert report.configurations[0].name == "pca100/cosine"


def test_bad_embeddings_name_the_clips() -> None:
    X, labels = _data()
    ids = [f"clip-{i:02d}" for i in range(len(labels))]
    X[5, 0] = np.nan
    with pytest.raises(InvalidEmbeddingsError, match="clip-05"):
        zero_shot_similarity(X, labels, ids=ids)
    X[5, 0] = 0.0
    X[7] = 0.0
    with pytest.raises(InvalidEmbeddingsError, match=r"zero vectors.*clip-07"):
        zero_shot_similarity(X, labels, ids=ids, distances=("cosine",))
    X[7] = 3.0
    with pytest.raises(InvalidEmbeddingsError, match=r"constant vectors.*clip-07"):
        zero_shot_similarity(X, labels, ids=ids, distances=("spearman",), pca=(None,))
    # Without ids the error uses the clip's index in the input (not among labelled clips).
    with pytest.raises(InvalidEmbeddingsError, match=r"indices: 7\)"):
        zero_shot_similarity(X, labels, distances=("spearman",), pca=(None,))


def test_vectors_degenerate_only_after_pca_are_reported_as_such() -> None:
    # Integer rows in ± pairs around c, plus c itself (clip 4): the mean is exactly c, so
    # clip 4 is a zero vector once centred by PCA, although it is fine for raw cosine.
    rng = np.random.default_rng(2)
    c = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    offsets = rng.integers(-3, 4, size=(9, 5)).astype(float)
    X = np.concatenate(
        [c + offsets[:4], c[None], c - offsets[:4], c + offsets[4:], c - offsets[4:]]
    )
    labels = [i % 4 for i in range(len(X))]
    zero_shot_similarity(X, labels, distances=("cosine",), pca=(None,), n_permutations=2)
    with pytest.raises(InvalidEmbeddingsError, match=r"after PCA to 3 components.*indices: 4"):
        zero_shot_similarity(X, labels, distances=("cosine",), pca=(3,), n_permutations=2)


def test_class_errors_and_exclusions() -> None:
    X, _ = _data()
    with pytest.raises(InsufficientClassesError):
        zero_shot_similarity(X, ["same"] * len(X))
    # Only one class has 9 clips: below min_class_size everything else is excluded.
    _, labels = _data()
    with pytest.raises(InsufficientClassesError):
        zero_shot_similarity(X, labels, min_class_size=9)
    report = zero_shot_similarity(
        X, labels, min_class_size=7, pca=(None,), distances=("cosine",), n_permutations=10
    )
    counts = report.to_dict()["counts"]
    assert counts["n_excluded_classes"] == 4
    assert counts["n_excluded_clips"] == 6 + 5 + 2 + 1 - 1  # one clip of class 2 unlabelled
    assert report.configs["raw/cosine"]["gsr"].n_evaluated == counts["n_evaluated"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"distances": ("cosine", "cosine")}, "duplicates"),
        ({"distances": ("l1",)}, "unknown distance"),
        ({"pca": (0,)}, "pca settings"),
        ({"ks": (0,)}, "positive"),
        ({"ks": (100,)}, "P@100"),
        ({"metrics": ("precision", "recall")}, "unknown metrics"),
        ({"n_permutations": -1}, "n_permutations"),
        ({"ids": ["a"]}, "ids"),
    ],
)
def test_argument_errors(kwargs: dict, message: str) -> None:
    X, labels = _data()
    with pytest.raises(ValueError, match=message):
        zero_shot_similarity(X, labels, **kwargs)


def test_purity_is_optional() -> None:
    X, labels = _data()
    try:
        import umap  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match=r"audiobench\[umap\]"):
            zero_shot_similarity(X, labels, metrics=("purity",), pca=(None,), distances=("cosine",))
    else:  # pragma: no cover - only where the extra is installed
        report = zero_shot_similarity(
            X, labels, metrics=("purity",), pca=(None,), distances=("cosine",)
        )
        assert 0 <= report.score("raw/cosine", "purity") <= 1
