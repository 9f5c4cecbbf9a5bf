"""Item 3: the same audio twice is an error naming both entries, not a better score."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import audiobench
from audiobench.audio import DuplicateAudioError
from audiobench.runner import CachedEmbedder
from audiobench.sources import DatasetError, load_folder_clips
from tests.conftest import write_tone
from tests.encoders import StatsEncoder
from tests.hostile.files import tone_folder, write_labels


@pytest.mark.parametrize("spelling", ["x/../c0.wav", "./c0.wav", "link.wav"])
def test_one_file_under_two_spellings_is_refused(tmp_path: Path, spelling: str) -> None:
    root = tone_folder(tmp_path / "d", n=3)
    (root / "x").mkdir()
    os.symlink(root / "c0.wav", root / "link.wav")
    write_labels(root, ["c0.wav,a", "c1.wav,b", f"{spelling},a"], header="file,label")
    with pytest.raises(
        DatasetError,
        match=rf"labels.csv line 4: clip '[^']+' \('{spelling}'\) is the same file as "
        rf"clip 'c0' on line 2: .*c0.wav",
    ):
        load_folder_clips(root)


def test_one_file_under_two_ids_is_refused(tmp_path: Path) -> None:
    root = tone_folder(tmp_path / "d", n=2)
    write_labels(root, ["c0.wav,a,first", "c1.wav,b,other", "c0.wav,a,second"], "file,label,id")
    with pytest.raises(DatasetError, match=r"line 4: clip 'second' .* same file as clip 'first'"):
        load_folder_clips(root)


def test_a_symlink_in_a_class_folder_is_refused(tmp_path: Path) -> None:
    write_tone(tmp_path / "d" / "a" / "x.wav", freq=300.0)
    write_tone(tmp_path / "d" / "b" / "y.wav", freq=900.0)
    os.symlink(tmp_path / "d" / "a" / "x.wav", tmp_path / "d" / "b" / "z.wav")
    with pytest.raises(DatasetError, match=r"clips 'a/x' and 'b/z' .* are the same file"):
        load_folder_clips(tmp_path / "d")


def test_identical_waveforms_in_two_files_name_both_clips(tmp_path: Path) -> None:
    root = tone_folder(tmp_path / "d", n=4)
    shutil.copy(root / "c1.wav", root / "copy.wav")
    write_labels(root, ["c0.wav,a", "c1.wav,b", "c2.wav,a", "c3.wav,b", "copy.wav,a"])
    clips = load_folder_clips(root)  # different files: only their content gives them away
    for on_error in ("raise", "skip"):  # not a per-clip failure: never skipped silently
        embedder = CachedEmbedder(StatsEncoder(), None, on_error=on_error)  # type: ignore[arg-type]
        with pytest.raises(DuplicateAudioError) as info:
            embedder.embed(clips, "dupes")
        assert info.value.first[0] == "c1" and info.value.first[1].endswith("c1.wav")
        assert info.value.second[0] == "copy" and info.value.second[1].endswith("copy.wav")
        assert "clips 'c1' (file " in str(info.value)


def test_duplicates_are_caught_across_chunks_and_embed_calls(tmp_path: Path) -> None:
    root = tone_folder(tmp_path / "d", n=4)
    shutil.copy(root / "c0.wav", root / "copy.wav")
    write_labels(root, ["c0.wav,a", "c1.wav,b", "c2.wav,a", "c3.wav,b", "copy.wav,a"])
    clips = load_folder_clips(root)
    embedder = CachedEmbedder(StatsEncoder(), None, batch_size=1, chunk_size=1)
    embedder.embed(clips[:2], "queries")
    with pytest.raises(DuplicateAudioError, match=r"clips 'c0' .* and 'copy'"):
        embedder.embed(clips[2:], "corpus")


def test_a_task_may_declare_duplicates_legitimate(tmp_path: Path) -> None:
    root = tone_folder(tmp_path / "d", n=2)
    shutil.copy(root / "c1.wav", root / "copy.wav")
    os.symlink(root / "c0.wav", root / "link.wav")
    write_labels(root, ["c0.wav,a", "c1.wav,b", "copy.wav,b", "link.wav,a"])
    clips = load_folder_clips(root, allow_duplicates=True)
    assert [c.id for c in clips] == ["c0", "c1", "copy", "link"]
    kept, _ = CachedEmbedder(StatsEncoder(), None, allow_duplicates=True).embed(clips, "")
    assert len(kept) == 4


def test_the_same_audio_in_two_subsets_is_not_a_duplicate(tmp_path: Path) -> None:
    root = tone_folder(tmp_path / "d", n=2)
    shutil.copy(root / "c0.wav", root / "again.wav")
    write_labels(root, ["c0.wav,a,S1", "c1.wav,b,S1", "again.wav,a,S2"], "file,label,subset")
    kept, _ = CachedEmbedder(StatsEncoder(), None).embed(load_folder_clips(root), "")
    assert [c.id for c in kept] == ["c0", "c1", "again"]  # scored apart: nothing inflated


def test_evaluate_refuses_a_duplicated_clip_instead_of_scoring_it(tmp_path: Path) -> None:
    root = tmp_path / "d"
    rows = []
    for c, freq in enumerate((300.0, 900.0, 2700.0)):
        for k in range(3):
            write_tone(root / f"c{c}-{k}.wav", freq=freq * (1 + 0.03 * k), seconds=0.4)
            rows.append(f"c{c}-{k}.wav,c{c}")
    shutil.copy(root / "c0-0.wav", root / "twin.wav")
    write_labels(root, [*rows, "twin.wav,c0"])
    with pytest.raises(DuplicateAudioError, match=r"clips 'c0-0' .* and 'twin'"):
        audiobench.evaluate(
            f"folder:{root}",
            StatsEncoder(),
            output_dir=tmp_path / "res",
            cache_dir=tmp_path / "cache",
            progress=False,
            count_flops=False,
            task_options={"n_permutations": 20, "n_bootstrap": 5, "pca": [None]},
        )
    assert not (tmp_path / "res").exists()  # no result file with an inflated score
