"""Issue 22, items 1 and 2: a result file edited by hand never validates nor reaches the board.

Validation recomputes what it can from the file itself: every aggregate is the family's
summary of the file's own subset reports, counts agree with each other, derived values
follow their parts, and the data identity (provenance) is one the task can have.
"""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from audiobench.leaderboard.build import build_leaderboard
from audiobench.leaderboard.validate import validate_file
from tests.leaderboard.conftest import BUILT_AT, hand_made_result

SYNTH = "log-mel/v1/SyntheticVocalisations.json"
VOCSIM = "log-mel/v1/VocSimGSR.json"
MAIN = ("aggregates", "public", "configs", "pca100/spearman", "gsr")


def _load(real_results: Path, rel: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((real_results / rel).read_text())
    return data


def _write(root: Path, data: dict[str, Any], rel: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


def _at(data: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        data = data[key]
    return data


def _put(data: dict[str, Any], keys: tuple[str, ...], value: Any) -> None:
    _at(data, keys[:-1])[keys[-1]] = value


def _lines(path: Path, *, allow_unpinned: bool = True) -> list[str]:
    result, problems = validate_file(path, allow_unpinned=allow_unpinned)
    assert (result is None) == bool(problems)
    return [p.line() for p in problems]


def _fresh_result(task: str, tmp_path: Path) -> dict[str, Any]:
    """A real run's result of ``task`` with log-mel (valid, on pinned data), as JSON."""
    import audiobench

    (result,) = audiobench.evaluate(
        task,
        "log-mel",
        output_dir=tmp_path / "res",
        cache_dir=tmp_path / "cache",
        progress=False,
        count_flops=False,
    )
    path = result.path(tmp_path / "res")
    assert _lines(path, allow_unpinned=False) == []
    data: dict[str, Any] = json.loads(path.read_text())
    return data


# ---------------------------------------------------------------------------- item 1: aggregates


def test_an_edited_aggregate_and_main_score_are_rejected_and_kept_off_the_board(
    real_results: Path, tmp_path: Path
) -> None:
    data = _load(real_results, SYNTH)
    true = _at(data, MAIN)
    assert data["main_score"] == true  # the headline is the aggregate's GSR
    _put(data, MAIN, 0.99)
    data["main_score"] = 0.99  # consistent with the edited aggregate: only recomputing finds it
    path = _write(tmp_path / "results", data, SYNTH)
    assert _lines(path) == [
        f"{path}: aggregates.public.configs.pca100/spearman.gsr: 0.99 is not what the "
        f"subsets' scores give ({true!r})"
    ]
    build = build_leaderboard(
        tmp_path / "results", tmp_path / "site", generated=BUILT_AT, allow_unpinned=True
    )
    assert build.board.n_results == 0
    assert any("pca100/spearman.gsr: 0.99" in line for line in build.board.rejected)


@pytest.mark.parametrize(
    ("rel", "keys"),
    [
        (SYNTH, ("aggregates", "public", "configs", "pca100/spearman", "p@1")),
        (SYNTH, ("aggregates", "public", "configs", "pca100/spearman", "gsr_baseline")),
        (VOCSIM, ("aggregates", "public", "configs", "pca100/spearman", "p@1")),
        ("log-mel/v1/ExampleChirps.json", ("aggregates", "public", "configs", "raw/cosine", "gsr")),
    ],
    ids=["p@1", "baseline", "vocsim-p@1", "single-subset-aggregate"],
)
def test_every_aggregate_number_is_recomputed(
    real_results: Path, tmp_path: Path, rel: str, keys: tuple[str, ...]
) -> None:
    data = _load(real_results, rel)
    true = _at(data, keys)
    forged = round(min(1.0, true + 0.1), 6)
    _put(data, keys, forged)
    path = _write(tmp_path, data, rel)
    assert _lines(path) == [
        f"{path}: {'.'.join(keys)}: {forged!r} is not what the subsets' scores give ({true!r})"
    ]


def test_a_subset_edited_away_from_its_aggregate_is_rejected(
    real_results: Path, tmp_path: Path
) -> None:
    data = _load(real_results, SYNTH)
    entry = data["scores"]["SYN-A"]["configs"]["pca100/spearman"]["p@1"]
    entry["value"] = min(1.0, entry["value"] + 0.1)
    entry["lift"] = entry["value"] - entry["baseline_mean"]  # the entry stays self-consistent
    other = data["scores"]["SYN-B"]["configs"]["pca100/spearman"]["p@1"]["value"]
    expected = (entry["value"] + other) / 2
    written = data["aggregates"]["public"]["configs"]["pca100/spearman"]["p@1"]
    path = _write(tmp_path, data, SYNTH)
    (line,) = _lines(path)
    assert line.startswith(
        f"{path}: aggregates.public.configs.pca100/spearman.p@1: {written!r} is not what the "
        "subsets' scores give ("
    )
    assert abs(float(line.rsplit("(", 1)[1].rstrip(")")) - expected) < 1e-12


def test_an_edited_subset_value_must_follow_from_its_entry(
    real_results: Path, tmp_path: Path
) -> None:
    data = _load(real_results, SYNTH)
    entry = data["scores"]["SYN-A"]["configs"]["pca100/spearman"]["gsr"]
    entry["value"] = 0.99  # GSR is (raw + 1) / 2: the raw mean separation gives it away
    entry["lift"] = 0.99 - entry["baseline_mean"]
    path = _write(tmp_path, data, SYNTH)
    assert _lines(path) == [
        f"{path}: scores.SYN-A: configs.pca100/spearman.gsr.value: 0.99 does not follow from "
        f"the entry's other numbers ({(entry['raw'] + 1.0) / 2.0!r})"
    ]


def test_a_forged_subset_its_aggregate_and_headline_together_are_rejected(
    real_results: Path, tmp_path: Path
) -> None:
    """Every number edited in step (subset, lift, aggregate, main score): P@k is still a
    share of whole neighbours, and a p-value a share of whole permutations."""
    rel = "log-mel/v1/ExampleChirps.json"
    data = _load(real_results, rel)
    entry = data["scores"]["CHIRPS"]["configs"]["raw/cosine"]["p@1"]
    n = entry["n_evaluated"]
    entry["value"] = 0.99
    entry["lift"] = 0.99 - entry["baseline_mean"]
    data["aggregates"]["public"]["configs"]["raw/cosine"]["p@1"] = data["main_score"] = 0.99
    path = _write(tmp_path / "p1", data, rel)
    assert _lines(path) == [
        f"{path}: scores.CHIRPS: configs.raw/cosine.p@1.value: 0.99 does not follow from the "
        f"entry's other numbers ({round(0.99 * n) / n!r})"
    ]
    data = _load(real_results, rel)
    entry = data["scores"]["CHIRPS"]["configs"]["raw/cosine"]["p@1"]
    entry["p_value"] = 0.001  # below 1 / (1 + permutations): more than the run could show
    n_null = data["scores"]["CHIRPS"]["settings"]["n_permutations"]
    path = _write(tmp_path / "p", data, rel)
    assert _lines(path) == [
        f"{path}: scores.CHIRPS: configs.raw/cosine.p@1.p_value: 0.001 does not follow from "
        f"the entry's other numbers ({1 / (n_null + 1)!r})"
    ]


def test_precision_written_is_respected_but_not_below_four_decimals(
    real_results: Path, tmp_path: Path
) -> None:
    keys = ("aggregates", "public", "configs", "pca100/spearman", "p@5")
    data = _load(real_results, SYNTH)
    true = _at(data, keys)
    _put(data, keys, round(true, 4))
    assert not _lines(_write(tmp_path / "a", data, SYNTH))
    _put(data, keys, round(true, 2))
    path = _write(tmp_path / "b", data, SYNTH)
    assert _lines(path) == [
        f"{path}: {'.'.join(keys)}: {round(true, 2)!r} is not what the subsets' scores give "
        f"({true!r})"
    ]


def test_aggregate_subsets_missing_and_added_numbers(real_results: Path, tmp_path: Path) -> None:
    data = _load(real_results, SYNTH)
    group = data["aggregates"]["public"]
    gone = group["configs"]["pca100/spearman"].pop("p@5")
    group["configs"]["pca100/spearman"]["p@10"] = 0.5
    path = _write(tmp_path, data, SYNTH)
    assert _lines(path) == [
        f"{path}: aggregates.public.configs.pca100/spearman.p@5: missing; the subsets' scores "
        f"give {gone!r}",
        f"{path}: aggregates.public.configs.pca100/spearman.p@10: not in the summary of the "
        "subsets' "
        "scores",
    ]
    data = _load(real_results, SYNTH)
    data["aggregates"]["public"].update(subsets=["SYN-A", "SYN-A"])
    path = _write(tmp_path / "dup", data, SYNTH)
    assert _lines(path) == [
        f"{path}: aggregates.public.subsets: ['SYN-A', 'SYN-A'] are not the subsets the file has "
        "scores of (['SYN-A', 'SYN-B'])"
    ]


@pytest.mark.parametrize(
    ("task", "metric"), [("MInDS14", "accuracy"), ("JamAltArtistA2ARetrieval", "ndcg_at_10")]
)
def test_other_families_aggregates_under_the_reference_protocol(
    tmp_path: Path, task: str, metric: str
) -> None:
    """Two subsets of a MAEB task (classification, retrieval) scored under MTEB's protocol."""
    from audiobench import registry

    first, second = registry.tasks.get(task).metadata.subsets[:2]
    result = hand_made_result(task, "model-a", 0.5)
    scores = {first: {"n_samples": 16, metric: 0.6}, second: {"n_samples": 16, metric: 0.4}}
    aggregate = {"subsets": [first, second], "n_subsets": 2, metric: 0.5}
    run = result.run.model_copy(update={"subsets": None})  # type: ignore[union-attr]
    task_info = result.task.model_copy(update={"subsets": [first, second]})
    good = result.model_copy(
        update={"scores": scores, "aggregates": {"mean": aggregate}, "run": run, "task": task_info}
    )
    path = good.save(tmp_path / "good")
    assert _lines(path, allow_unpinned=False) == []
    data = json.loads(path.read_text())
    data["aggregates"]["mean"][metric] = data["main_score"] = 0.9
    forged = _write(tmp_path / "forged", data, f"model-a/v1/{task}.json")
    assert _lines(forged, allow_unpinned=False) == [
        f"{forged}: aggregates.mean.{metric}: 0.9 is not what the subsets' scores give (0.5)"
    ]


def test_a_reference_protocol_mean_must_be_that_of_its_experiments(tmp_path: Path) -> None:
    """MTEB's clustering repeats k-means: v_measure is the experiments' mean, _std their spread."""
    runs = [0.4, 0.5, 0.6]
    report = {
        "n_samples": 16,
        "v_measure": float(np.mean(runs)),
        "v_measure_std": float(np.std(runs)),
        "per_experiment": [{"v_measure": v} for v in runs],
    }
    result = hand_made_result("CREMA_DClustering", "model-a", report["v_measure"], report=report)
    path = result.save(tmp_path / "good")
    assert _lines(path, allow_unpinned=False) == []
    data = json.loads(path.read_text())
    data["scores"]["default"]["v_measure"] = data["main_score"] = 0.9
    forged = _write(tmp_path / "forged", data, "model-a/v1/CREMA_DClustering.json")
    assert _lines(forged) == [
        f"{forged}: scores.default: v_measure: 0.9 is not what per_experiment gives "
        f"({float(np.mean(runs))!r})"
    ]


# ---------------------------------------------------------------------------- item 1: counts


@pytest.mark.parametrize(
    ("keys", "value", "message"),
    [
        (
            ("scores", "SYN-A", "counts", "n_clips"),
            5,
            "scores.SYN-A.counts: n_labelled (80) + n_unlabelled (0) is not n_clips (5)",
        ),
        (
            ("scores", "SYN-A", "counts", "n_evaluated"),
            80000,
            "scores.SYN-A.counts: n_evaluated (80000) + n_excluded_clips (0) is not n_labelled "
            "(80)",
        ),
        (
            ("scores", "SYN-B", "counts", "n_evaluated_classes"),
            9,
            "scores.SYN-B.counts: n_evaluated_classes (9) + n_excluded_classes (0) is not "
            "n_classes (8)",
        ),
        (
            ("scores", "SYN-A", "configs", "pca100/spearman", "gsr", "n_evaluated"),
            80000,
            "scores.SYN-A: configs.pca100/spearman.gsr: n_evaluated + n_skipped (80000) exceed the "
            "subset's n_clips (80)",
        ),
        (
            ("cache", "n_encoded"),
            80000,
            "cache: n_cached (0) + n_encoded (80000) exceed n_clips (160)",
        ),
        (
            ("model", "n_parameters"),
            -1,
            "model.n_parameters: Input should be greater than or equal to 0 (got -1)",
        ),
        (
            ("model", "n_parameters"),
            94_000_000,
            "(file): model.n_parameters (94000000) is not efficiency.n_parameters (0)",
        ),
        (
            ("model", "embedding_dim"),
            -128,
            "model.embedding_dim: Input should be greater than or equal to 0 (got -128)",
        ),
    ],
    ids=[
        "n_clips",
        "n_evaluated",
        "classes",
        "metric-count",
        "cache",
        "n_parameters",
        "n_parameters-twice",
        "embedding_dim",
    ],
)
def test_counts_agree_with_each_other(
    real_results: Path, tmp_path: Path, keys: tuple[str, ...], value: int, message: str
) -> None:
    data = _load(real_results, SYNTH)
    _put(data, keys, value)
    path = _write(tmp_path, data, SYNTH)
    assert _lines(path) == [f"{path}: {message}"]


def test_clustering_means_must_be_those_of_the_seeds(tmp_path: Path) -> None:
    """A single-subset clustering result has no aggregate: its means over seeds are checked."""
    source = Path(__file__).parents[1] / "trust" / "v1_results" / "log-mel" / "v1"
    data = json.loads((source / "MockClustering.json").read_text())
    seeds = data["scores"]["default"]["per_seed"]["v_measure"]
    data["scores"]["default"]["v_measure"] = data["main_score"] = 0.99
    path = _write(tmp_path, data, "log-mel/v1/MockClustering.json")
    assert _lines(path) == [
        f"{path}: scores.default: v_measure: 0.99 is not what per_seed.v_measure gives "
        f"({statistics.fmean(seeds)!r})"
    ]


def test_a_probes_mean_must_be_that_of_its_splits(tmp_path: Path) -> None:
    """Classification: the headline probe's mean is the mean of its splits' values."""
    source = Path(__file__).parents[1] / "trust" / "v1_results" / "log-mel" / "v1"
    data = json.loads((source / "MockClassification.json").read_text())
    entry = data["scores"]["default"]["linear"]
    by_split = [split["accuracy"] for split in entry["per_split"].values()]
    entry["accuracy"] = data["main_score"] = 0.99
    path = _write(tmp_path, data, "log-mel/v1/MockClassification.json")
    assert _lines(path) == [
        f"{path}: scores.default.linear: accuracy: 0.99 is not what the splits and seeds give "
        f"({float(np.mean(by_split))!r})"
    ]
    data = json.loads((source / "MockClassification.json").read_text())
    data["scores"]["default"]["linear"]["n_samples"] += 1000
    path = _write(tmp_path / "n", data, "log-mel/v1/MockClassification.json")
    (line,) = _lines(path)
    assert line.startswith(f"{path}: scores.default.linear: n_samples is ")


def test_pair_classification_best_values_follow_the_functions(tmp_path: Path) -> None:
    data = _fresh_result("MockPairClassification", tmp_path)
    best = data["scores"]["default"]["max_ap"]
    forged = json.loads(json.dumps(data))
    forged["scores"]["default"]["max_ap"] = forged["main_score"] = 1.0
    path = _write(tmp_path / "max", forged, "log-mel/v1/MockPairClassification.json")
    assert _lines(path) == [
        f"{path}: scores.default: max_ap: 1.0 is not the best function's ap ({best!r})"
    ]
    n_pairs = data["scores"]["default"]["n_pairs"]
    data["scores"]["default"]["n_positive"] = n_pairs + 1
    path = _write(tmp_path / "count", data, "log-mel/v1/MockPairClassification.json")
    assert _lines(path) == [
        f"{path}: scores.default: n_positive ({n_pairs + 1}) exceeds n_pairs ({n_pairs})"
    ]


def test_perceptual_agreements_are_whole_or_half_trials(tmp_path: Path) -> None:
    data = _fresh_result("MockPerceptualAlignment", tmp_path)
    trials = data["scores"]["default"]["cosine"]["triplet"]["all"]
    trials["n_correct"] = 0.99 * trials["n"]  # accuracy, aggregate and headline in step
    trials["accuracy"] = data["aggregates"]["mean"]["cosine"]["triplet/all"] = 0.99
    data["main_score"] = 0.99
    forged = _write(tmp_path / "forged", data, "log-mel/v1/MockPerceptualAlignment.json")
    assert _lines(forged) == [
        f"{forged}: scores.default.cosine.triplet.all: n_correct {0.99 * trials['n']!r} is not "
        "a whole or half count"
    ]


# ---------------------------------------------------------------------------- item 2: provenance


def test_local_data_cannot_be_edited_into_pinned_data(real_results: Path, tmp_path: Path) -> None:
    data = _load(real_results, VOCSIM)
    local = data["run"]["dataset"]
    assert (local["kind"], local["pinned"]) == ("local_copy", False)
    cases: dict[str, tuple[dict[str, Any], str]] = {
        "pinned": (
            {"pinned": True},
            f"run.dataset: local data ({local['source']}) is never pinned",
        ),
        "synthetic": (
            {"kind": "synthetic", "pinned": True, "digest": None},
            "run.dataset.kind: 'synthetic': task VocSimGSR's data is 'huggingface', not "
            "'synthetic'",
        ),
        "no-digest": (
            {"digest": None},
            "run.dataset: local data must carry the SHA-256 digest of its content",
        ),
        "hub-pinned-main": (
            {
                "kind": "huggingface",
                "source": "anonymous-submission000/vocsim",
                "revision": "main",
                "digest": None,
                "pinned": True,
            },
            "run.dataset: pinned is true, but huggingface data at revision 'main' is not pinned",
        ),
    }
    for name, (change, message) in cases.items():
        forged = json.loads(json.dumps(data))
        forged["run"]["dataset"].update(change)
        path = _write(tmp_path / name, forged, VOCSIM)
        lines = _lines(path)
        assert lines and lines[0] == f"{path}: {message}", (name, lines)
        # Refused for a private table too: the file contradicts itself.
        assert _lines(path, allow_unpinned=True) == lines


def test_a_synthetic_kind_must_name_the_tasks_generator(real_results: Path, tmp_path: Path) -> None:
    data = _load(real_results, "log-mel/v1/ExampleChirps.json")
    data["run"]["dataset"]["source"] = "/home/me/my-chirps"
    path = _write(tmp_path, data, "log-mel/v1/ExampleChirps.json")
    assert _lines(path) == [
        f"{path}: run.dataset.source: '/home/me/my-chirps': task ExampleChirps's generator is "
        "'audiobench_plugin_example'"
    ]


def test_a_synthetic_tasks_result_cannot_claim_hub_data(tmp_path: Path) -> None:
    """Moved from tests/trust: this forgery was refused only without --allow-unpinned."""
    import audiobench

    (result,) = audiobench.evaluate(
        "MockClustering", "log-mel", output_dir=tmp_path, progress=False, count_flops=False
    )
    path = result.path(tmp_path)
    data = json.loads(path.read_text())
    data["run"]["dataset"].update(kind="huggingface", revision="main", pinned=False)
    path.write_text(json.dumps(data))
    expected = [
        f"{path}: run.dataset.kind: 'huggingface': task MockClustering's data is 'synthetic', "
        "not 'huggingface'"
    ]
    assert _lines(path, allow_unpinned=False) == expected
    assert _lines(path, allow_unpinned=True) == expected


def test_unpinned_hub_revision_is_refused_unless_allowed(
    real_results: Path, tmp_path: Path
) -> None:
    """A consistent result on the hub at ``main`` (VocSim is registered there)."""
    data = _load(real_results, VOCSIM)
    data["run"]["dataset"] = {
        "kind": "huggingface",
        "source": "anonymous-submission000/vocsim",
        "revision": "main",
        "config": None,
        "digest": None,
        "pinned": False,
    }
    path = _write(tmp_path, data, VOCSIM)
    _, problems = validate_file(path)
    assert [p.field for p in problems] == ["run.dataset"]
    assert "unpinned revision 'main'" in problems[0].message
    assert validate_file(path, allow_unpinned=True)[1] == []


@pytest.mark.parametrize("version", [1, None], ids=["schema-1", "no-version"])
def test_a_local_result_saved_as_version_1_is_still_local(
    real_results: Path, tmp_path: Path, version: int | None
) -> None:
    data = _load(real_results, VOCSIM)
    local = data.pop("run")["dataset"]["source"]
    data.pop("schema_version")
    if version is not None:
        data["schema_version"] = version
    path = _write(tmp_path, data, VOCSIM)
    assert _lines(path, allow_unpinned=False) == [
        f"{path}: task.dataset: computed on local data ({data['task']['dataset']}); the public "
        "leaderboard takes results on pinned data only (use --allow-unpinned for a private "
        "table)"
    ]
    assert data["task"]["dataset"] != local or Path(local).is_absolute()
    assert _lines(path, allow_unpinned=True) == []
    root = tmp_path / "board"
    shutil.copytree(tmp_path / "log-mel", root / "log-mel")
    build = build_leaderboard(root, tmp_path / "site", generated=BUILT_AT)
    assert build.board.n_results == 0


def test_version_1_files_on_registered_data_keep_validating() -> None:
    from audiobench.leaderboard.validate import validate_paths

    fixtures = Path(__file__).parents[1] / "trust" / "v1_results"
    outcome = validate_paths([fixtures])
    assert outcome.ok, [p.line() for p in outcome.problems]
    assert len(outcome.accepted) == 7
