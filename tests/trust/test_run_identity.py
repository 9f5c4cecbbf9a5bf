"""A result is reused only for the identical run; provenance and headline are checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import audiobench
from audiobench.leaderboard.validate import validate_file
from audiobench.results import load_result
from tests.conftest import write_tone

FAST = {"n_permutations": 10, "n_bootstrap": 5}


def _folder(root: Path, n_per_class: int = 3) -> Path:
    root.mkdir(parents=True)
    rows = ["file,label"]
    for c, freq in enumerate((300.0, 900.0, 2700.0)):
        for k in range(n_per_class):
            write_tone(root / f"c{c}-{k}.wav", freq=freq * (1 + 0.02 * k), seconds=0.4)
            rows.append(f"c{c}-{k}.wav,c{c}")
    (root / "labels.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return root


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], **kwargs: object) -> str:
    audiobench.evaluate(
        "MockClustering",
        kwargs.pop("model", "log-mel"),  # type: ignore[arg-type]
        output_dir=tmp_path / "res",
        cache_dir=tmp_path / "cache",
        progress=False,
        count_flops=False,
        **kwargs,
    )
    return capsys.readouterr().err


def test_identical_run_is_reused_and_a_changed_option_recomputes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(tmp_path, capsys, task_options={"seeds": (0, 1)})
    assert "reusing existing result" in _run(tmp_path, capsys, task_options={"seeds": (0, 1)})
    err = _run(tmp_path, capsys, task_options={"seeds": (0,)})
    assert "replacing" in err and "task option seeds" in err
    path = tmp_path / "res" / "log-mel" / "v1" / "MockClustering.json"
    assert load_result(path).run.task_options["seeds"] == [0]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("first", "second", "what"),
    [
        ({"model_options": {"dim": 64}}, {"model_options": {"dim": 32}}, "model_fingerprint"),
        ({}, {"pooling": "max_time"}, "model_fingerprint"),
        ({}, {"task_options": {"n_init": 2}}, "task option n_init"),
        ({}, {"on_error": "skip"}, "on_error"),
    ],
)
def test_model_options_pooling_and_settings_are_part_of_the_identity(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    first: dict[str, object],
    second: dict[str, object],
    what: str,
) -> None:
    model = "random-projection"
    _run(tmp_path, capsys, model=model, **first)
    err = _run(tmp_path, capsys, model=model, **second)
    assert "reusing" not in err
    assert f"differs in {what}" in err


def test_another_folder_with_the_same_name_is_another_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _folder(tmp_path / "a" / "clips")
    b = _folder(tmp_path / "b" / "clips", n_per_class=4)
    common = {"output_dir": tmp_path / "res", "progress": False, "count_flops": False}
    audiobench.evaluate(f"folder:{a}", "log-mel", task_options=FAST, **common)
    capsys.readouterr()
    (result,) = audiobench.evaluate(f"folder:{b}", "log-mel", task_options=FAST, **common)
    err = capsys.readouterr().err
    # Its own result file: the first folder's result is neither reused nor replaced.
    assert "reusing" not in err and "replacing" not in err
    assert result.run is not None and result.run.dataset.source == str(b.resolve())
    assert len(list((tmp_path / "res" / "log-mel" / "v1").glob("Folder-clips-*.json"))) == 2
    # The same folder again, unchanged: reused.
    audiobench.evaluate(f"folder:{b}", "log-mel", task_options=FAST, **common)
    assert "reusing existing result" in capsys.readouterr().err
    # A rewritten label table changes the digest.
    (b / "labels.csv").write_text(
        (b / "labels.csv").read_text().replace("c2-3.wav,c2", "c2-3.wav,c1"), encoding="utf-8"
    )
    audiobench.evaluate(f"folder:{b}", "log-mel", task_options=FAST, **common)
    assert "differs in dataset" in capsys.readouterr().err


def test_local_data_is_recorded_and_refused_by_the_public_leaderboard(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "mine")
    (result,) = audiobench.evaluate(
        f"folder:{folder}",
        "log-mel",
        output_dir=tmp_path / "res",
        task_options=FAST,
        progress=False,
        count_flops=False,
    )
    assert result.run is not None
    data = result.run.dataset
    assert (data.kind, data.pinned, data.source) == ("folder", False, str(folder.resolve()))
    assert data.digest is not None and len(data.digest) == 64


def test_generated_data_is_pinned_and_a_forged_main_score_is_rejected(tmp_path: Path) -> None:
    (result,) = audiobench.evaluate(
        "MockClustering", "log-mel", output_dir=tmp_path, progress=False, count_flops=False
    )
    assert result.run is not None and result.run.dataset.pinned
    path = result.path(tmp_path)
    accepted, problems = validate_file(path)
    assert accepted is not None and problems == []
    data = json.loads(path.read_text())
    data["main_score"] = min(1.0, data["main_score"] + 0.1)
    path.write_text(json.dumps(data))
    _, problems = validate_file(path)
    assert [p.field for p in problems] == ["main_score"]
    assert "is not 'v_measure' of the file's own scores" in problems[0].message


def test_version_1_files_written_before_the_run_identity_still_validate() -> None:
    fixtures = Path(__file__).parent / "v1_results"
    files = sorted(fixtures.rglob("*.json"))
    assert files
    for path in files:
        result = load_result(path)
        assert result.schema_version == 1 and result.run is None
        _, problems = validate_file(path)
        assert problems == [], [p.line() for p in problems]


def test_free_text_reaching_the_csv_cannot_run_as_a_formula(tmp_path: Path) -> None:
    from audiobench.leaderboard import build_leaderboard

    (result,) = audiobench.evaluate(
        "MockClustering", "log-mel", output_dir=tmp_path / "res", progress=False,
        count_flops=False,
    )  # fmt: skip
    path = result.path(tmp_path / "res")
    data = json.loads(path.read_text())
    data["task"]["dataset"] = '=HYPERLINK("http://x","y")'
    data["model"]["source"] = "@SUM(1+1)"
    data["model"]["pooling"] = "+cmd|' /C calc'!A0"
    path.write_text(json.dumps(data))
    build_leaderboard(tmp_path / "res", tmp_path / "site")
    text = (tmp_path / "site" / "results.csv").read_text()
    for cell in ("@SUM(1+1)", "+cmd|"):
        assert f"'{cell}" in text.replace('""', '"'), cell
    for line in text.splitlines()[1:]:
        for cell in line.split(","):
            assert not cell.startswith(("=", "+", "@")), cell


def test_version_1_compression_ratio_is_read_as_the_pcm_figure() -> None:
    """Version 1 named the PCM-based figure (PCM bytes / embedding bytes) compression_ratio;
    since version 2 that name is MSEB's (embedding bytes / waveform bytes)."""
    path = Path(__file__).parent / "v1_results" / "log-mel" / "v1" / "MockClustering.json"
    written = json.loads(path.read_text())["efficiency"]["compression_ratio"]
    result = load_result(path)
    assert result.efficiency.pcm_compression_ratio == written
    assert result.efficiency.compression_ratio is None


def test_version_1_reranking_cer_is_read_as_the_character_error_rate(tmp_path: Path) -> None:
    """Version 1's reranking ``cer`` was the character error rate; MSEB's "CER" (the candidate
    error rate) is a different number, so the old value keeps its meaning under its new name."""
    source = Path(__file__).parent / "v1_results" / "log-mel" / "v1" / "MockAudioReranking.json"
    data = json.loads(source.read_text())
    for entry in data["scores"].values():
        entry["wer"], entry["cer"] = 0.5, 0.25
    path = tmp_path / "MockAudioReranking.json"
    path.write_text(json.dumps(data))
    result = load_result(path)
    for entry in result.scores.values():
        assert entry["char_error_rate"] == 0.25 and "cer" not in entry
        assert "candidate_error_rate" not in entry  # not computed by version 1: not invented
