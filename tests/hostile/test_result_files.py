"""Item 11: result files follow the umask; a killed write's temporary file is cleaned up."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from audiobench.results import STALE_TEMP_SECONDS
from tests.test_results import make_result


@pytest.fixture
def umask() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_result_files_get_the_users_umask(
    tmp_path: Path, umask: None, mask: int, mode: int
) -> None:
    os.umask(mask)
    path = make_result().save(tmp_path)
    assert path.stat().st_mode & 0o777 == mode
    path = make_result().save(tmp_path)  # replacing a file: same rule
    assert path.stat().st_mode & 0o777 == mode


def test_a_killed_writes_temporary_file_is_removed_by_the_next_save(tmp_path: Path) -> None:
    target = make_result().path(tmp_path)
    target.parent.mkdir(parents=True)
    stale = target.with_name(f".{target.name}.k1ll3d99")  # an earlier version's name
    stale_new = target.with_name(f".{target.name}.0badf00d.tmp")
    fresh = target.with_name(f".{target.name}.5ee1ab1e.tmp")  # a concurrent writer's
    other = target.with_name(".Other.json.0badf00d.tmp")  # another result's
    old = time.time() - STALE_TEMP_SECONDS - 60
    for path in (stale, stale_new, fresh, other):
        path.write_text("{half a")
    for path in (stale, stale_new, other):
        os.utime(path, (old, old))
    make_result().save(tmp_path)
    assert not stale.exists() and not stale_new.exists()
    assert fresh.exists() and other.exists()
    assert sorted(p.name for p in target.parent.iterdir()) == sorted(
        [target.name, fresh.name, other.name]
    )
