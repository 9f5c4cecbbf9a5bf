"""``--on-error skip`` also covers clips that only fail at scoring time."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import audiobench
from audiobench.metrics.errors import InvalidEmbeddingsError
from tests.conftest import write_tone


def _folder_with_a_silent_clip(root: Path) -> Path:
    root.mkdir()
    rows = ["file,label"]
    for c, freq in enumerate((300.0, 1200.0)):
        for k in range(3):
            write_tone(root / f"c{c}-{k}.wav", freq=freq * (1 + 0.03 * k), seconds=0.5)
            rows.append(f"c{c}-{k}.wav,c{c}")
    # Silence: log-mel floors it to one constant vector, which Spearman cannot rank.
    sf.write(root / "silent.wav", np.zeros(8000, dtype=np.float32), 16000, subtype="PCM_16")
    rows.append("silent.wav,c0")
    (root / "labels.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return root


def _evaluate(folder: Path, tmp_path: Path, on_error: str) -> audiobench.results.TaskResult:
    (result,) = audiobench.evaluate(
        f"folder:{folder}",
        "log-mel",
        output_dir=tmp_path / "res",
        on_error=on_error,
        task_options={"n_permutations": 10, "n_bootstrap": 5, "pca": [None]},
        progress=False,
        count_flops=False,
    )
    return result


def test_a_constant_vector_stops_the_run_naming_the_clip(tmp_path: Path) -> None:
    folder = _folder_with_a_silent_clip(tmp_path / "clips")
    with pytest.raises(InvalidEmbeddingsError, match="silent"):
        _evaluate(folder, tmp_path, "raise")


def test_under_skip_the_clip_is_recorded_and_the_rest_is_scored(tmp_path: Path) -> None:
    folder = _folder_with_a_silent_clip(tmp_path / "clips")
    result = _evaluate(folder, tmp_path, "skip")
    assert [s.id for s in result.skipped] == ["silent"]
    assert "unusable for scoring" in result.skipped[0].reason
    counts = result.scores["default"]["counts"]
    assert counts["n_clips"] == 6
    assert result.main_score is not None
