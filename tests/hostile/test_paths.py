"""Item 4: folder paths stay inside the folder unless explicitly allowed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from audiobench.sources import DatasetError, load_folder_clips
from tests.conftest import write_tone
from tests.hostile.files import tone_folder, write_labels


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    return write_tone(tmp_path / "elsewhere" / "secret.wav", freq=700.0)


def test_dot_dot_leaving_the_folder_is_refused(tmp_path: Path, outside: Path) -> None:
    root = tone_folder(tmp_path / "d", n=2)
    write_labels(root, ["c0.wav,a", "../elsewhere/secret.wav,b"])
    with pytest.raises(
        DatasetError,
        match=r"labels.csv line 3: file '../elsewhere/secret.wav' resolves to "
        r".*elsewhere/secret.wav, outside the dataset folder .*--allow-outside-paths",
    ):
        load_folder_clips(root)


def test_absolute_path_outside_the_folder_is_refused(tmp_path: Path, outside: Path) -> None:
    root = tone_folder(tmp_path / "d", n=2)
    write_labels(root, ["c0.wav,a", f"{outside},b"])
    with pytest.raises(DatasetError, match=r"line 3: file '/.*secret.wav' resolves to .*outside"):
        load_folder_clips(root)


def test_absolute_path_inside_the_folder_is_accepted(tmp_path: Path) -> None:
    root = tone_folder(tmp_path / "d", n=2)
    write_labels(root, ["c0.wav,a", f"{(root / 'c1.wav').resolve()},b"])
    assert len(load_folder_clips(root)) == 2


def test_symlink_leaving_the_folder_is_refused(tmp_path: Path, outside: Path) -> None:
    root = tone_folder(tmp_path / "d", n=2)
    os.symlink(outside, root / "innocent.wav")
    write_labels(root, ["c0.wav,a", "innocent.wav,b"])
    with pytest.raises(DatasetError, match=r"line 3: file 'innocent.wav' resolves to .*secret"):
        load_folder_clips(root)


def test_symlinked_class_folder_leaving_the_folder_is_refused(
    tmp_path: Path, outside: Path
) -> None:
    write_tone(tmp_path / "d" / "a" / "x.wav")
    os.symlink(outside.parent, tmp_path / "d" / "b")
    with pytest.raises(DatasetError, match=r"b/secret.wav resolves to .*elsewhere.*outside"):
        load_folder_clips(tmp_path / "d")


def test_explicit_opt_in_reads_outside_files(tmp_path: Path, outside: Path) -> None:
    root = tone_folder(tmp_path / "d", n=2)
    os.symlink(outside, root / "innocent.wav")
    write_labels(root, ["c0.wav,a", "../elsewhere/secret.wav,b", "innocent.wav,b"])
    # The link and the relative path are one file: the opt-in does not waive that check.
    with pytest.raises(DatasetError, match="same file"):
        load_folder_clips(root, allow_outside=True)
    write_labels(root, ["c0.wav,a", "../elsewhere/secret.wav,b"])
    clips = load_folder_clips(root, allow_outside=True)
    assert clips[1].audio.path == outside.resolve()  # type: ignore[attr-defined]


def test_the_cli_refuses_outside_paths_and_its_flag_allows_them(
    tmp_path: Path, outside: Path
) -> None:
    from typer.testing import CliRunner

    from audiobench.cli import app

    root = tone_folder(tmp_path / "d", n=8)
    rows = [f"c{k}.wav,{'ab'[k % 2]}" for k in range(8)]
    write_labels(root, [*rows, "../elsewhere/secret.wav,b"])
    args = [
        "evaluate", "--task", f"folder:{root}", "--model", "log-mel", "--no-cache",
        "--no-flops", "--no-progress", "--output-dir", str(tmp_path / "out"),
        "--permutations", "5", "--bootstrap", "5",
    ]  # fmt: skip
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code == 1
    assert "outside the dataset folder" in refused.output
    assert "--allow-outside-paths" in refused.output
    allowed = CliRunner().invoke(app, [*args, "--allow-outside-paths"])
    assert allowed.exit_code == 0, allowed.output
