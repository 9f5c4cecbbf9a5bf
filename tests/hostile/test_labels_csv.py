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


# ---------------------------------------------------------------- issue 22, item 3: strictly


def _table(root: Path, text: str) -> Path:
    (root / "labels.csv").write_text(text, encoding="utf-8")
    return root


def test_a_repeated_column_name_is_an_error_naming_both_columns(tmp_path: Path) -> None:
    # Read loosely, the second 'file' wins and every label lands on its neighbour's audio.
    root = _table(tone_folder(tmp_path / "d", n=3), "file,file,label\nc0.wav,c1.wav,a\n")
    with pytest.raises(
        DatasetError,
        match=r"d/labels.csv line 1, columns 1 and 2: the column name 'file' appears twice",
    ):
        load_folder_clips(root)


def test_a_space_padded_column_name_is_an_error_naming_its_column(tmp_path: Path) -> None:
    # Read loosely, ' label' is not 'label': no clip has a label ("0 classes remain").
    root = _table(tone_folder(tmp_path / "d", n=2), "file, label\nc0.wav,a\nc1.wav,b\n")
    with pytest.raises(
        DatasetError,
        match=r"labels.csv line 1, column 2: the column name ' label' starts or ends with a "
        r"space; column names are read exactly as written, so write 'label'",
    ):
        load_folder_clips(root)


@pytest.mark.parametrize(
    ("row", "column", "char"),
    [
        ("c1.wav,b\x00", "column 2 \\('label'\\)", "U\\+0000 \\(a control character\\)"),
        ("c1.wav,b\u200b", "column 2 \\('label'\\)", "U\\+200B \\(zero width space\\)"),
        ("c1.wav,\u202eb", "column 2 \\('label'\\)", "U\\+202E \\(right-to-left override\\)"),
        ('c1.wav,"b\tc"', "column 2 \\('label'\\)", "U\\+0009"),
        ('c1.wav,"b\nc"', "column 2 \\('label'\\)", "U\\+000A"),
        ("c1.wav\x00,b", "column 1 \\('file'\\)", "U\\+0000"),
    ],
)
def test_an_invisible_character_in_a_key_cell_is_an_error_naming_line_and_column(
    tmp_path: Path, row: str, column: str, char: str
) -> None:
    # A NUL (or a zero-width space, a direction override) would make an invisible class.
    root = _table(tone_folder(tmp_path / "d", n=2), f"file,label\nc0.wav,b\n{row}\n")
    with pytest.raises(DatasetError, match=rf"labels.csv line 3, {column}: the cell holds {char}"):
        load_folder_clips(root)


def test_a_control_character_in_any_cell_is_an_error_and_text_keeps_its_newlines(
    tmp_path: Path,
) -> None:
    root = _table(tone_folder(tmp_path / "d", n=2), "file,label,note\nc0.wav,a,x\x00y\nc1.wav,b,\n")
    with pytest.raises(
        DatasetError,
        match=r"labels.csv line 2, column 3 \('note'\): the cell holds U\+0000",
    ):
        load_folder_clips(root)
    _table(root, 'file,label,note\nc0.wav,a,"x\ty\nz"\nc1.wav,b,\n')
    assert load_folder_clips(root)[0].metadata == {"note": "x\ty\nz"}


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ("file,label,", r"line 1, column 3: empty column name; name the column or remove it"),
        ("\ufefffile,label", r"line 1, column 1: the column name '\\ufefffile' holds U\+FEFF"),
        ("file,la\u200bbel", r"line 1, column 2: the column name 'la\\u200bbel' holds U\+200B"),
    ],
)
def test_an_empty_or_invisible_column_name_is_an_error(
    tmp_path: Path, header: str, message: str
) -> None:
    root = tone_folder(tmp_path / "d", n=2)
    width = header.count(",") + 1
    rows = ",".join(["c0.wav", "a", ""][:width]), ",".join(["c1.wav", "b", ""][:width])
    # A second byte order mark (two files joined) is not the one that UTF-8-SIG removes.
    (root / "labels.csv").write_bytes(
        b"\xef\xbb\xbf" + "\n".join([header, *rows, ""]).encode("utf-8")
    )
    with pytest.raises(DatasetError, match=rf"labels.csv {message}"):
        load_folder_clips(root)


def test_a_file_name_is_read_exactly_as_written(tmp_path: Path) -> None:
    root = tone_folder(tmp_path / "d", n=2)
    (root / "c1.wav").rename(root / " c1.wav")  # a name that starts with a space
    _table(root, "file,label\nc0.wav,a\n c1.wav,b\n")
    _, b = load_folder_clips(root)
    assert b.audio.path == (root / " c1.wav").resolve() and b.label == "b"  # type: ignore[attr-defined]
    # The other way round: a padded entry names another file, and the error says so.
    _table(root, "label,file\na,c0.wav \n")
    with pytest.raises(
        DatasetError,
        match=r"labels.csv line 2: audio file .*c0.wav  not found \(the name 'c0.wav ' starts or "
        r"ends with a space, which is part of the name; 'c0.wav' exists\)",
    ):
        load_folder_clips(root)


def test_columns_named_for_a_role_must_exist_and_serve_one_role(tmp_path: Path) -> None:
    from audiobench.sources import FolderColumns

    root = _table(tone_folder(tmp_path / "d", n=2), "audio,kind,who\nc0.wav,a,s1\nc1.wav,b,s2\n")
    a, b = load_folder_clips(root, columns=FolderColumns(file="audio", label="kind", group="who"))
    assert (a.label, a.group, b.label, b.group) == ("a", "s1", "b", "s2")
    with pytest.raises(
        DatasetError,
        match=r"labels.csv: no column 'speaker' \(asked for as the label column\); "
        r"columns: \['audio', 'kind', 'who'\]",
    ):
        load_folder_clips(root, columns=FolderColumns(file="audio", label="speaker"))
    with pytest.raises(DatasetError, match=r"'kind' is asked for as both the label and the group"):
        load_folder_clips(root, columns=FolderColumns(file="audio", label="kind", group="kind"))
    with pytest.raises(DatasetError, match=r"has no labels.csv or metadata.csv, so the columns"):
        (root / "labels.csv").unlink()
        load_folder_clips(root, columns=FolderColumns(label="kind"))
