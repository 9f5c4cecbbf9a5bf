"""Items 7 and 11: label tables with a byte order mark, ragged rows, or not UTF-8."""

from __future__ import annotations

from pathlib import Path

import pytest

from audiobench.sources import DatasetError, load_folder_clips
from tests.hostile.files import tone_folder


def test_a_utf8_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    root = tone_folder(tmp_path / "d", n=2)
    (root / "labels.csv").write_text("file,label\nc0.wav,a\nc1.wav,b\n", encoding="utf-8-sig")
    assert (root / "labels.csv").read_bytes().startswith(b"\xef\xbb\xbf")
    clips = load_folder_clips(root)
    assert [(c.id, c.label) for c in clips] == [("c0", "a"), ("c1", "b")]


@pytest.mark.parametrize(
    ("row", "n_fields"), [("c1.wav,b,surplus", 3), ("c1.wav", 1), ("c1.wav,b,,", 4)]
)
def test_a_ragged_row_is_an_error_naming_its_line(tmp_path: Path, row: str, n_fields: int) -> None:
    root = tone_folder(tmp_path / "d", n=3)
    (root / "labels.csv").write_text(f"file,label\nc0.wav,a\n\n{row}\nc2.wav,a\n")
    with pytest.raises(
        DatasetError, match=rf"labels.csv line 4: {n_fields} field\(s\), but the header has 2"
    ):
        load_folder_clips(root)


def test_a_quoted_field_may_hold_commas_and_newlines(tmp_path: Path) -> None:
    root = tone_folder(tmp_path / "d", n=2)
    (root / "labels.csv").write_text('file,label,note\nc0.wav,a,"x, y\nz"\nc1.wav,b,\n')
    a, b = load_folder_clips(root)
    assert a.metadata == {"note": "x, y\nz"} and b.label == "b"


def test_a_table_that_is_not_utf8_is_an_error_naming_the_file(tmp_path: Path) -> None:
    root = tone_folder(tmp_path / "d", n=2)
    (root / "labels.csv").write_bytes("file,label\nc0.wav,a\nc1.wav,café\n".encode("latin-1"))
    with pytest.raises(
        DatasetError,
        match=r"d/labels.csv line 3: not UTF-8 text \(byte 0xe9\); save the file as UTF-8",
    ):
        load_folder_clips(root)


def test_an_unterminated_quote_is_an_error_naming_the_line(tmp_path: Path) -> None:
    root = tone_folder(tmp_path / "d", n=3)
    # Read loosely, the open quote would swallow the rows after it into one label.
    (root / "labels.csv").write_text('file,label\nc0.wav,a\nc1.wav,"b\nc2.wav,a\n')
    with pytest.raises(DatasetError, match=r"labels.csv line 3: malformed CSV: unexpected end"):
        load_folder_clips(root)
