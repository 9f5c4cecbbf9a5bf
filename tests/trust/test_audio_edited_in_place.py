"""Issue 22, item 10: audio edited in place is another dataset, whatever its timestamps.

The identity of local data hashes every clip's encoded audio bytes, so a file rewritten
with the same size and its modification time put back is noticed and the task recomputed.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import audiobench
from audiobench.audio import ArrayAudioRef, ArrowAudioRef, FileAudioRef
from audiobench.results import load_result
from tests.conftest import write_tone
from tests.trust.test_run_identity import _folder

FAST = {"n_permutations": 10, "n_bootstrap": 5}


def _run(folder: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    audiobench.evaluate(
        f"folder:{folder}",
        "log-mel",
        output_dir=out,
        cache_dir=out / "cache",
        task_options=FAST,
        progress=False,
        count_flops=False,
    )
    return capsys.readouterr().err


def test_audio_rewritten_with_the_same_size_and_mtime_is_recomputed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path / "clips")
    out = tmp_path / "res"
    _run(folder, out, capsys)
    (path,) = (p for p in out.rglob("*.json") if "cache" not in p.parts)
    before = load_result(path)
    assert "reusing existing result" in _run(folder, out, capsys)

    clip = folder / "c2-1.wav"
    stat = clip.stat()
    size = stat.st_size
    write_tone(clip, freq=450.0, seconds=0.4)  # another sound, the same format and length
    os.utime(clip, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert (clip.stat().st_size, clip.stat().st_mtime_ns) == (size, stat.st_mtime_ns)

    err = _run(folder, out, capsys)
    assert "reusing" not in err
    assert "differs in dataset" in err
    after = load_result(path)
    assert after.run is not None and before.run is not None
    assert after.run.dataset.digest != before.run.dataset.digest
    assert after.cache.n_encoded == 1  # only the edited clip is new to the cache


def test_each_audio_reference_hashes_its_content() -> None:
    import datasets

    wave = np.sin(np.linspace(0, 20, 800)).astype(np.float32)
    same = ArrayAudioRef(wave, 16000).content_digest()
    assert same == ArrayAudioRef(wave.copy(), 16000).content_digest()
    assert same != ArrayAudioRef(wave * 0.5, 16000).content_digest()
    table = datasets.Dataset.from_dict(
        {"audio": [{"bytes": b"RIFF-one", "path": None}, {"bytes": b"RIFF-two", "path": None}]}
    )
    one, two = (ArrowAudioRef(table, i, "audio", "copy").content_digest() for i in (0, 1))
    assert one != two
    assert one == ArrowAudioRef(table, 0, "audio", "copy").content_digest()


def test_a_missing_file_counts_as_absent(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        FileAudioRef(tmp_path / "gone.wav").content_digest()
