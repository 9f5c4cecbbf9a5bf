"""``results import-mteb``: MTEB's published files as audiobench results marked reported.

The published files are generated in MTEB's layout and format (``tests/reported/mteb_files.py``),
one per task audiobench scores the MTEB way, so a task declared later is covered too.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from audiobench import registry
from audiobench.cli import app
from audiobench.leaderboard.validate import validate_file, validate_paths
from audiobench.reported.mteb_import import evaluated_split, import_mteb
from audiobench.results import load_result
from tests.reported.mteb_files import (
    MODEL_META,
    MTEB_NAME,
    MTEB_TASKS,
    model_dir,
    task_file,
    write_task_file,
)

runner = CliRunner()


def test_every_task_scored_the_mteb_way_imports_and_validates(tmp_path: Path) -> None:
    folder = model_dir(tmp_path / "mteb")
    published = {}
    for i, name in enumerate(MTEB_TASKS):
        published[name] = task_file(name, seed=i)
        write_task_file(folder, published[name])
    summary = import_mteb(tmp_path / "mteb", tmp_path / "out", repository="acme/results")
    assert summary.refused == [] and summary.seen == len(MTEB_TASKS) == len(summary.written)
    assert (
        summary.line() == f"converted {len(MTEB_TASKS)} of {len(MTEB_TASKS)} file(s); refused none"
    )
    validation = validate_paths([tmp_path / "out"])  # the public board's rules
    assert validation.problems == [] and len(validation.accepted) == len(MTEB_TASKS)
    for _, result in validation.accepted:
        cls = registry.tasks.get(result.task.name)
        meta = cls.metadata
        (entries,) = published[meta.name]["scores"].values()
        # The main score is the task's main key averaged over its subsets, as a run's is.
        expected = float(np.mean([e[meta.main_score] for e in entries]))
        assert result.main_score == pytest.approx(expected, abs=1e-12)
        assert result.main_score_name == meta.main_score
        assert sorted(result.scores) == sorted(e["hf_subset"] for e in entries)
        assert result.run is not None and result.run.task_options["protocol"] == "mteb"
        assert result.run.dataset.pinned and result.run.dataset.source == meta.dataset.path
        for e in entries:  # every published key kept, with its value
            report = result.scores[e["hf_subset"]]
            assert {
                k: report[k] for k in e if k not in ("hf_subset", "languages", "main_score")
            } == {k: v for k, v in e.items() if k not in ("hf_subset", "languages", "main_score")}
            assert report["n_samples"] is None  # not published: never invented
        reported = result.reported
        assert reported is not None
        assert (reported.origin, reported.repository, reported.mteb_version) == (
            "mteb",
            "acme/results",
            "2.3.0",
        )
        stem = MTEB_NAME.get(meta.name, meta.name)  # MTEB's ESC50 is ESC50.mteb here
        assert reported.file == f"acme__audio-encoder/{MODEL_META['revision']}/{stem}.json"
        assert reported.dataset_revision == meta.revision and reported.revision_matches
        assert reported.split == evaluated_split(tuple(meta.splits))
        assert reported.audiobench_model == "hf:acme/audio-encoder"
        model = result.model
        assert (model.name, model.revision) == ("acme/audio-encoder", MODEL_META["revision"])
        assert (model.n_parameters, model.embedding_dim) == (95_000_000, 768)
        assert (model.license, model.open_weights, model.modalities) == (
            "apache-2.0",
            True,
            ["audio"],
        )
        assert model.release_date == date(2025, 3, 14)
        assert result.cache is None and result.timings is None and result.environment is None


def test_mteb_names_taken_by_audiobench_tasks_import_into_their_mteb_tasks(
    tmp_path: Path,
) -> None:
    """MTEB's ``ESC50`` is scored here as ``ESC50.mteb``; audiobench's ESC50 is another task."""
    folder = model_dir(tmp_path / "mteb")
    published = task_file("ESC50.mteb")
    assert published["task_name"] == "ESC50"
    write_task_file(folder, published)
    summary = import_mteb(tmp_path / "mteb", tmp_path / "out")
    assert summary.refused == [] and len(summary.written) == 1
    (path,) = summary.written
    assert load_result(path).task.name == "ESC50.mteb"


def _refusals(tmp_path: Path) -> dict[str, str]:
    """One folder holding a good file and one file per refusal reason; stem -> reason."""
    folder = model_dir(tmp_path / "mteb")
    write_task_file(folder, task_file("BeijingOpera"))
    write_task_file(folder, task_file("BeijingOpera", task_name="NoSuchTask"), "NoSuchTask")
    write_task_file(
        folder, task_file("BeijingOpera", task_name="SyntheticVocalisations"), "Synthetic"
    )
    write_task_file(folder, task_file("CREMA_D", dataset_revision="f" * 40))
    write_task_file(folder, task_file("GTZANGenre", scores={"validation": []}))
    languages = task_file("MInDS14")
    (entries,) = languages["scores"].values()
    del entries[3]
    write_task_file(folder, languages)
    reranking = task_file("GTZANAudioReranking")
    for e in next(iter(reranking["scores"].values())):
        del e["map_at_1000"]  # as MTEB 1 wrote reranking: 'map', 'mrr', no map_at_k
    write_task_file(folder, reranking)
    (folder / "Broken.json").write_text('{"task_name": "BeijingOpera", "scores": ')
    old = {"mteb_dataset_name": "BeijingOpera", "mteb_version": "1.1.0", "test": {"accuracy": 0.5}}
    write_task_file(folder, old, "OldFormat")
    write_task_file(folder, {**old, "mteb_dataset_name": "AFQMC"}, "AFQMC")
    return {
        "NoSuchTask": "unknown task",
        "Synthetic": "not scored the MTEB way",
        "CREMA_D": "dataset revision",
        "GTZANGenre": "missing split",
        "MInDS14": "missing subset",
        "GTZANAudioReranking": "missing main score",
        "Broken": "unreadable",
        "OldFormat": "old MTEB format",
        "AFQMC": "unknown task",
    }


def test_files_that_do_not_convert_are_refused_by_name_and_reason(tmp_path: Path) -> None:
    expected = _refusals(tmp_path)
    summary = import_mteb(tmp_path / "mteb", tmp_path / "out")
    assert [p.stem for p in summary.written] == ["BeijingOpera"]  # the others did not stop it
    assert {r.file.stem: r.reason for r in summary.refused} == expected
    by_stem = {r.file.stem: r for r in summary.refused}
    assert "'NoSuchTask'" in by_stem["NoSuchTask"].message
    assert "f" * 40 in by_stem["CREMA_D"].message
    assert "--allow-revision-mismatch" in by_stem["CREMA_D"].message
    assert (
        "'train'" in by_stem["GTZANGenre"].message and "validation" in by_stem["GTZANGenre"].message
    )
    missing = registry.tasks.get("MInDS14").metadata.subsets[3]
    assert missing in by_stem["MInDS14"].message
    assert "map_at_1000" in by_stem["GTZANAudioReranking"].message
    where = f"acme__audio-encoder/{MODEL_META['revision']}/CREMA_D.json"
    line = by_stem["CREMA_D"].line(summary.root)
    assert line.startswith(f"{where}: refused (dataset revision): ")
    assert summary.line() == (
        "converted 1 of 10 file(s); refused 9: unreadable 1, old MTEB format 1, unknown task 2, "
        "not scored the MTEB way 1, dataset revision 1, missing split 1, missing subset 1, "
        "missing main score 1"
    )


def test_cli_prints_each_refusal_and_the_summary(tmp_path: Path) -> None:
    _refusals(tmp_path)
    done = runner.invoke(
        app, ["results", "import-mteb", str(tmp_path / "mteb"), "-o", str(tmp_path / "out")]
    )
    assert done.exit_code == 0, done.output
    assert "CREMA_D.json: refused (dataset revision)" in done.stdout
    # Tasks audiobench does not declare are counted (a clone holds thousands of text tasks).
    assert "2 file(s) of 2 task(s) audiobench does not declare (AFQMC, NoSuchTask)" in done.stdout
    assert "converted 1 of 10 file(s); refused 9:" in done.stderr
    validated = runner.invoke(app, ["results", "validate", str(tmp_path / "out")])
    assert validated.exit_code == 0, validated.output
    nothing = runner.invoke(app, ["results", "import-mteb", str(tmp_path / "out" / "x")])
    assert nothing.exit_code == 2 and "not a directory" in nothing.stderr


def test_another_dataset_revision_imports_only_when_allowed_and_only_privately(
    tmp_path: Path,
) -> None:
    folder = model_dir(tmp_path / "mteb")
    write_task_file(folder, task_file("CREMA_D", dataset_revision="f" * 40))
    summary = import_mteb(tmp_path / "mteb", tmp_path / "out", allow_revision_mismatch=True)
    (path,) = summary.written
    result = load_result(path)
    assert result.reported is not None and not result.reported.revision_matches
    assert result.task.revision == result.reported.dataset_revision == "f" * 40
    _, public = validate_file(path)
    assert [(p.field, "private tables only" in p.message) for p in public] == [
        ("task.revision", True)
    ]
    assert validate_file(path, allow_unpinned=True)[1] == []


def test_provenance_cannot_claim_the_pinned_revision_it_was_not_run_on(tmp_path: Path) -> None:
    folder = model_dir(tmp_path / "mteb")
    write_task_file(folder, task_file("CREMA_D", dataset_revision="f" * 40))
    (path,) = import_mteb(tmp_path / "mteb", tmp_path / "out", allow_revision_mismatch=True).written
    data = json.loads(path.read_text())
    data["reported"]["revision_matches"] = True
    path.write_text(json.dumps(data))
    _, problems = validate_file(path, allow_unpinned=True)
    assert [p.field for p in problems] == ["reported.revision_matches"]


def test_published_experiments_kept_when_they_average_to_the_means(tmp_path: Path) -> None:
    folder = model_dir(tmp_path / "mteb")
    data = task_file("BeijingOpera")
    (entries,) = data["scores"].values()
    runs = [0.5, 0.625, 0.75, 0.875]  # exact in binary: their mean is exact too
    entries[0].update(
        accuracy=0.6875,
        main_score=0.6875,
        scores_per_experiment=[{"accuracy": a, "f1": a} for a in runs],
        f1=0.6875,
    )
    write_task_file(folder, data)
    other = task_file("CREMA_D")
    (entries,) = other["scores"].values()
    # Rounded apart from their mean, as MTEB's six decimals can leave them: the means stand.
    entries[0].update(accuracy=0.5, main_score=0.5, scores_per_experiment=[{"accuracy": 0.4}])
    write_task_file(folder, other)
    summary = import_mteb(tmp_path / "mteb", tmp_path / "out")
    results = {load_result(p).task.name: load_result(p) for p in summary.written}
    kept = results["BeijingOpera"].scores["default"]["per_experiment"]
    assert [e["accuracy"] for e in kept] == runs
    crema = results["CREMA_D"]
    assert "per_experiment" not in crema.scores["default"] and crema.main_score == 0.5
    assert crema.details["per_experiment_left_out"]["subsets"] == ["default"]


def test_keys_without_a_place_and_undeclared_subsets_are_recorded(tmp_path: Path) -> None:
    folder = model_dir(tmp_path / "mteb")
    data = task_file("FSD2019Kaggle")
    (entries,) = data["scores"].values()
    entries[0]["mrr@10"] = 0.5  # MTEB 1's spelling: not a metric name audiobench writes
    entries[0]["nAUC_map_max"] = 0.1
    entries.append({**entries[0], "hf_subset": "noisy", "lrap": 0.01})
    write_task_file(folder, data)
    (path,) = import_mteb(tmp_path / "mteb", tmp_path / "out").written
    result = load_result(path)
    assert result.reported is not None
    assert result.reported.dropped_keys == ["mrr@10", "nAUC_map_max"]
    assert result.reported.dropped_subsets == ["noisy"]  # the task declares 'curated' only
    assert result.main_score == entries[0]["lrap"]


def test_model_without_meta_is_named_by_its_folders(tmp_path: Path) -> None:
    folder = model_dir(
        tmp_path / "mteb" / "results", {"name": "openai/whisper-tiny", "revision": "main"}
    )
    (folder / "model_meta.json").unlink()
    write_task_file(folder, task_file("BeijingOpera"))
    # A clone of the repository keeps its files under results/.
    (path,) = import_mteb(tmp_path / "mteb", tmp_path / "out").written
    result = load_result(path)
    assert (result.model.name, result.model.revision) == ("openai/whisper-tiny", "main")
    assert result.model.n_parameters is None and result.model.license is None
    assert result.reported is not None and result.reported.audiobench_model == "whisper-tiny"
    assert path == tmp_path / "out" / "openai__whisper-tiny" / "main" / "BeijingOpera.json"


def test_import_never_replaces_a_computed_result(tmp_path: Path) -> None:
    folder = model_dir(tmp_path / "mteb")
    write_task_file(folder, task_file("BeijingOpera"))
    (path,) = import_mteb(tmp_path / "mteb", tmp_path / "out").written
    data = json.loads(path.read_text())
    data["reported"] = None  # as a run here would have written it
    data["cache"] = {"n_clips": 1, "n_cached": 0, "n_encoded": 1}
    data["timings"] = {"load_data_s": 0, "encode_s": 0, "evaluate_s": 0, "total_s": 0}
    data["environment"] = {"python": "3", "platform": "p", "numpy": "2", "device": "cpu"}
    data["model"]["sample_rate"] = 16000
    path.write_text(json.dumps(data))
    summary = import_mteb(tmp_path / "mteb", tmp_path / "out")
    assert [r.reason for r in summary.refused] == ["would overwrite"]
    assert json.loads(path.read_text())["cache"]["n_clips"] == 1
    again = import_mteb(tmp_path / "mteb", tmp_path / "again")
    assert len(again.written) == 1 and import_mteb(tmp_path / "mteb", tmp_path / "again").written


def test_a_computed_result_still_needs_what_only_a_run_records(tmp_path: Path) -> None:
    folder = model_dir(tmp_path / "mteb")
    write_task_file(folder, task_file("BeijingOpera"))
    (path,) = import_mteb(tmp_path / "mteb", tmp_path / "out").written
    data = json.loads(path.read_text())
    data["reported"] = None
    path.write_text(json.dumps(data))
    _, problems = validate_file(path)
    assert len(problems) == 1
    assert problems[0].message.startswith(
        "cache, timings, environment, model.sample_rate: missing; only a reported result"
    )


def test_links_are_not_followed(tmp_path: Path) -> None:
    folder = model_dir(tmp_path / "mteb")
    outside = write_task_file(tmp_path, task_file("BeijingOpera"))
    (folder / "BeijingOpera.json").symlink_to(outside)
    summary = import_mteb(tmp_path / "mteb", tmp_path / "out")
    assert summary.seen == 0 and summary.written == []


def test_a_file_results_validate_would_refuse_is_refused_with_its_problems(
    tmp_path: Path,
) -> None:
    folder = model_dir(tmp_path / "mteb", {"name": "=cmd|calc", "revision": "main"})
    write_task_file(folder, task_file("BeijingOpera"))
    summary = import_mteb(tmp_path / "mteb", tmp_path / "out")
    (refusal,) = summary.refused
    assert refusal.reason == "fails validation" and summary.written == []
    assert refusal.message.startswith("model.name: '=cmd|calc' is not a safe name")
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_legacy_cv_recall_reads_as_the_hit_rate(tmp_path: Path) -> None:
    # MTEB before 2.5 wrote the hit rate as cv_recall_at_<k> (a real CommonVoice file's shape).
    folder = model_dir(tmp_path / "mteb")
    data = task_file("UrbanSound8KT2ARetrieval")
    (entries,) = data["scores"].values()
    for entry in entries:
        for key in [k for k in entry if k.startswith("hit_rate_at_")]:
            entry[key.replace("hit_rate_at_", "cv_recall_at_")] = entry.pop(key)
    write_task_file(folder, data)
    (path,) = import_mteb(tmp_path / "mteb", tmp_path / "out").written
    report = load_result(path).scores["default"]
    assert report["hit_rate_at_5"] == entries[0]["cv_recall_at_5"]
    assert not any(k.startswith("cv_recall") for k in report)


def test_a_published_mrr_may_break_ties_apart_from_the_hit_rate(tmp_path: Path) -> None:
    # A real JamAltLyricA2TRetrieval file: mrr_at_1 0.393057 beside hit_rate_at_1 0.3897
    # (older MTEB versions ranked tied documents for MRR in insertion order).
    folder = model_dir(tmp_path / "mteb")
    data = task_file("UrbanSound8KT2ARetrieval")
    (entries,) = data["scores"].values()
    entries[0]["mrr_at_1"] = min(1.0, entries[0]["hit_rate_at_1"] + 0.003)
    write_task_file(folder, data)
    (path,) = import_mteb(tmp_path / "mteb", tmp_path / "out").written
    assert load_result(path).scores["default"]["mrr_at_1"] == entries[0]["mrr_at_1"]
