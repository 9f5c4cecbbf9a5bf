from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from audiobench.audio import FileAudioRef, load_waveform
from audiobench.sources import DatasetError, load_folder_clips, load_hf_clips
from audiobench.task import Columns
from tests.conftest import write_tone
from tests.hub_copy import write_hub_like


def test_class_subfolders(labelled_folder: Path) -> None:
    clips = load_folder_clips(labelled_folder)
    assert len(clips) == 12
    assert {c.label for c in clips} == {"low", "mid", "high"}
    assert clips[0].id == "high/high0" and clips[0].subset is None


def test_subset_and_class_subfolders(tmp_path: Path) -> None:
    for subset in ("S1", "S2"):
        for label in ("a", "b"):
            write_tone(tmp_path / subset / label / "x.wav")
    clips = load_folder_clips(tmp_path)
    assert [(c.subset, c.label) for c in clips] == [
        ("S1", "a"),
        ("S1", "b"),
        ("S2", "a"),
        ("S2", "b"),
    ]
    assert len({c.id for c in clips}) == 4


def test_labels_csv(tmp_path: Path) -> None:
    write_tone(tmp_path / "audio" / "one.wav")
    write_tone(tmp_path / "audio" / "two.flac")
    (tmp_path / "labels.csv").write_text(
        "file,label,subset,speaker\naudio/one.wav,dog,S1,alice\naudio/two.flac,,S1,bob\n"
    )
    one, two = load_folder_clips(tmp_path)
    assert (one.id, one.label, one.subset, one.group) == ("audio/one", "dog", "S1", "alice")
    assert two.label is None  # blank label: unlabelled, not the string ""
    assert isinstance(one.audio, FileAudioRef)


def test_labels_csv_errors_name_the_line(tmp_path: Path) -> None:
    (tmp_path / "labels.csv").write_text("file,label\nmissing.wav,x\n")
    with pytest.raises(DatasetError, match=r"labels.csv line 2: audio file .*missing.wav"):
        load_folder_clips(tmp_path)
    write_tone(tmp_path / "a.wav")
    write_tone(tmp_path / "b.wav", freq=300.0)
    (tmp_path / "labels.csv").write_text("file,label,id\na.wav,x,same\nb.wav,y,same\n")
    with pytest.raises(DatasetError, match="line 3: duplicate clip id 'same'"):
        load_folder_clips(tmp_path)
    (tmp_path / "labels.csv").write_text("name,label\na.wav,x\n")
    with pytest.raises(DatasetError, match="needs a file column"):
        load_folder_clips(tmp_path)


def test_empty_or_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no audio files"):
        load_folder_clips(tmp_path)
    with pytest.raises(DatasetError, match="does not exist"):
        load_folder_clips(tmp_path / "nope")


def _rows(n: int = 6) -> list[dict[str, object]]:
    rng = np.random.default_rng(0)
    return [
        {
            "audio": ((0.1 * rng.standard_normal(800)).astype(np.float32), 8000),
            "label": i % 3,
            "subset": "A" if i < 4 else "B",
        }
        for i in range(n)
    ]


def test_hub_like_local_dataset(tmp_path: Path) -> None:
    root = write_hub_like(tmp_path / "ds", _rows(), n_shards=2)
    clips = load_hf_clips(
        str(root), revision=None, config=None, splits=("train",), columns=Columns(subset="subset")
    )
    assert [c.label for c in clips] == ["0", "1", "2", "0", "1", "2"]  # cast to str, in order
    assert [c.subset for c in clips] == ["A"] * 4 + ["B"] * 2
    assert clips[5].id == "train:5"
    wave = load_waveform(clips[0].audio, 16000, clip_id=clips[0].id)
    assert abs(len(wave) - 1600) <= 2  # 800 samples at 8 kHz -> 16 kHz


def test_hub_like_dataset_missing_column(tmp_path: Path) -> None:
    root = write_hub_like(tmp_path / "ds", _rows())
    with pytest.raises(DatasetError, match=r"missing column\(s\) \['spk'\]"):
        load_hf_clips(
            str(root),
            revision=None,
            config=None,
            splits=("train",),
            columns=Columns(subset="subset", group="spk", required=("audio", "group")),
        )


def test_unreachable_hub_dataset_explains_offline_mode() -> None:
    with pytest.raises(DatasetError, match="HF_HUB_OFFLINE"):
        load_hf_clips(
            "someone/not-here", revision="abc123", config=None, splits=("train",), columns=Columns()
        )


def test_optional_columns_may_be_absent(tmp_path: Path) -> None:
    root = write_hub_like(tmp_path / "ds", _rows())
    clips = load_hf_clips(
        str(root),
        revision=None,
        config=None,
        splits=("train",),
        columns=Columns(subset="subset", group="speaker"),
    )
    assert all(c.group is None for c in clips) and len(clips) == 6


def test_extra_csv_columns_land_in_metadata(tmp_path: Path) -> None:
    write_tone(tmp_path / "a.wav")
    write_tone(tmp_path / "b.wav")
    (tmp_path / "labels.csv").write_text("file,label,fold,note\na.wav,dog,1,x\nb.wav,cat,2,\n")
    a, b = load_folder_clips(tmp_path)
    assert a.metadata == {"fold": "1", "note": "x"}
    assert b.metadata == {"fold": "2"}  # blank cells are absent, not ""


def test_extra_columns_class_names_and_label_lists_from_a_hub_dataset(tmp_path: Path) -> None:
    import datasets

    wave = np.zeros(800, dtype=np.float32)
    root = write_hub_like(
        tmp_path / "ds",
        [
            {"audio": (wave, 8000), "label": 1, "tags": [0, 2], "fold": 3},
            {"audio": (wave, 8000), "label": 0, "tags": [1], "fold": 5},
        ],
    )
    ds = datasets.load_dataset(str(root), split="train")
    names = datasets.ClassLabel(names=["dog", "cat", "bird"])
    ds = ds.cast_column("label", names).cast_column("tags", datasets.List(names))
    ds.save_to_disk(str(tmp_path / "saved"))
    for columns, expected in (
        (Columns(extra=("fold",)), ["cat", "dog"]),
        (Columns(label="tags", extra=("fold",)), ["dog,bird", "cat"]),
    ):
        clips = load_hf_clips(
            str(tmp_path / "saved"),
            revision=None,
            config=None,
            splits=("train",),
            columns=columns,
            from_disk=True,
        )
        assert [c.label for c in clips] == expected
        assert [c.metadata for c in clips] == [{"fold": 3}, {"fold": 5}]
    with pytest.raises(DatasetError, match=r"missing column\(s\) \['speaker_id'\]"):
        load_hf_clips(
            str(tmp_path / "saved"),
            revision=None,
            config=None,
            splits=("train",),
            columns=Columns(extra=("speaker_id",)),
            from_disk=True,
        )
