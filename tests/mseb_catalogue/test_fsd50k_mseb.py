"""FSD50K as MSEB reads it (labels/eval.csv and clips/eval/*.wav): a copy of the hub layout
written here with generated audio, read, and run offline under MSEB's protocol."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import soundfile as sf

import audiobench
from audiobench import registry
from audiobench.leaderboard.validate import validate_file
from audiobench.sources import DatasetError
from tests.families.test_retrieval import tiny_clap  # noqa: F401  (a fixture)
from tests.mseb_catalogue.test_mseb_catalogue import _wav


def write_fsd50k(root: Path) -> Path:
    (root / "labels").mkdir(parents=True)
    (root / "clips" / "eval").mkdir(parents=True)
    rows = [("1", "Bark,Dog"), ("2", "Meow"), ("3", "Dog"), ("4", "Meow,Cat")]
    for k, (fname, _) in enumerate(rows):
        sf.write(root / "clips" / "eval" / f"{fname}.wav", sf.read(io.BytesIO(_wav(k)))[0], 16000)
    lines = ["fname,labels,mids"] + [f'{f},"{labels}",x' for f, labels in rows]
    (root / "labels" / "eval.csv").write_text("\n".join(lines) + "\n")
    return root


def test_fsd50k_reads_labels_and_clips(tmp_path: Path) -> None:
    root = write_fsd50k(tmp_path / "fsd")
    task = registry.tasks.get("FSD50KTestClassification")(dataset_path=root)
    assert [(c.id, c.label) for c in task.load_data()] == [
        ("1", "Bark,Dog"),
        ("2", "Meow"),
        ("3", "Dog"),
        ("4", "Meow,Cat"),
    ]
    clustering = registry.tasks.get("FSD50KTestClustering")(dataset_path=root)
    assert [c.label for c in clustering.load_data()] == ["Bark", "Meow", "Dog", "Meow"]


def test_fsd50k_names_a_missing_clip_with_its_line(tmp_path: Path) -> None:
    root = write_fsd50k(tmp_path / "fsd")
    (root / "clips" / "eval" / "3.wav").unlink()
    task = registry.tasks.get("FSD50KTestClustering")(dataset_path=root)
    with pytest.raises(DatasetError, match=r"eval\.csv line 4: .*3\.wav not found"):
        task.load_data()


def test_fsd50k_runs_offline_under_msebs_protocol(tmp_path: Path, tiny_clap: Path) -> None:  # noqa: F811
    root = write_fsd50k(tmp_path / "fsd")
    for name, model, main in (
        ("FSD50KTestClassification", f"hf:{tiny_clap}", "map"),
        ("FSD50KTestClustering", "log-mel", "v_measure"),
    ):
        (result,) = audiobench.evaluate(
            name, model, output_dir=tmp_path / "out", dataset=root, progress=False
        )
        (report,) = result.scores.values()
        assert result.main_score == report[main]
        (path,) = (tmp_path / "out").glob(f"*/*/{name}.json")
        parsed, problems = validate_file(path, allow_unpinned=True)
        assert parsed is not None and problems == [], problems
