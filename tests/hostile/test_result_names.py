"""Issue 22, item 5: two runs never share a result file by accident."""

from __future__ import annotations

import shutil
from collections import namedtuple
from pathlib import Path

import pytest

import audiobench
from audiobench.results import load_result
from audiobench.task import Task
from tests.conftest import folder_digest
from tests.hostile.files import tone_folder

SIMILARITY = {"n_permutations": 10, "n_bootstrap": 5, "pca": [None]}


def _run(spec: str, out: Path, tmp_path: Path) -> Path:
    (result,) = audiobench.evaluate(
        spec,
        "log-mel",
        output_dir=out,
        cache_dir=tmp_path / "cache",
        progress=False,
        count_flops=False,
        task_options=SIMILARITY,
    )
    assert result.run is not None
    return Path(result.run.dataset.source)


@pytest.mark.parametrize(("first", "second"), [("a/data", "b/data"), ("my data", "my_data")])
def test_distinct_folders_write_distinct_result_files(
    tmp_path: Path, first: str, second: str
) -> None:
    out = tmp_path / "out"
    one, two = tone_folder(tmp_path / first, n=6), tone_folder(tmp_path / second, n=8)
    _run(f"folder:{one}", out, tmp_path)
    _run(f"folder:{two}", out, tmp_path)
    written = {p.name: load_result(p) for p in (out / "log-mel" / "v1").glob("*.json")}
    slug = lambda p: p.resolve().name.replace(" ", "_")  # noqa: E731
    expected = {f"Folder-{slug(p)}-{folder_digest(p)}.json": p.resolve() for p in (one, two)}
    assert set(written) == set(expected)  # one file per folder, whatever their names
    for name, result in written.items():
        assert result.run is not None and result.run.dataset.source == str(expected[name])


def test_the_family_follows_the_digest_in_the_name(tmp_path: Path) -> None:
    from audiobench.tasks.folder import folder_task

    root = tone_folder(tmp_path / "calls", n=4).resolve()
    digest = folder_digest(root)
    assert folder_task(str(root)).name == f"Folder-calls-{digest}"
    assert folder_task(str(root), "clustering").name == f"Folder-calls-{digest}-clustering"


def _never_scored(monkeypatch: pytest.MonkeyPatch) -> None:
    def scored(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the task was scored before the output folder was checked")

    monkeypatch.setattr(Task, "evaluate", scored)
    monkeypatch.setattr(Task, "load_data", scored)


def test_an_output_path_that_is_a_file_is_refused_before_scoring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tone_folder(tmp_path / "d", n=4)
    blocker = tmp_path / "results"
    blocker.write_text("not a folder\n")
    _never_scored(monkeypatch)
    with pytest.raises(
        NotADirectoryError,
        match=rf"cannot write results into {blocker}/log-mel/v1: {blocker} is a file, not a "
        r"folder; pass --output-dir with a folder",
    ):
        _run(f"folder:{root}", blocker, tmp_path)
    (tmp_path / "fresh").mkdir()
    (tmp_path / "fresh" / "log-mel").write_text("")  # the model's folder is a file
    with pytest.raises(NotADirectoryError, match=r"fresh/log-mel is a file, not a folder"):
        _run(f"folder:{root}", tmp_path / "fresh", tmp_path)


def test_a_full_disk_is_refused_before_scoring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tone_folder(tmp_path / "d", n=4)
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda _path: usage(10**9, 10**9 - 4096, 4096))
    _never_scored(monkeypatch)
    with pytest.raises(
        OSError,
        match=r"cannot write results into .*out/log-mel/v1: 4096 bytes free on its disk, under "
        r"the 1048576 a run keeps for its result files; free some space or pass --output-dir",
    ):
        _run(f"folder:{root}", tmp_path / "out", tmp_path)
    assert not (tmp_path / "out").exists()  # the check creates nothing


def test_an_unwritable_output_folder_is_refused_before_scoring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    root = tone_folder(tmp_path / "d", n=4)
    real_open = os.open

    def read_only(path: object, flags: int, *args: object) -> int:
        if "write-test" in str(path):  # a read-only mount (root ignores permission bits)
            raise OSError(30, "Read-only file system")
        return real_open(path, flags, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", read_only)
    _never_scored(monkeypatch)
    with pytest.raises(
        OSError,
        match=rf"cannot write results into {tmp_path}/out/log-mel/v1: {tmp_path}: Read-only "
        r"file system; pass --output-dir with a writable folder",
    ):
        _run(f"folder:{root}", tmp_path / "out", tmp_path)
