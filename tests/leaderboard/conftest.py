"""Result files made by real offline runs, hostile variants of them, and a built leaderboard.

Everything is session-scoped: two models (the built-in ``log-mel`` and the
plugin's ``example-spectral-stats``) are evaluated once on the offline tasks
(``SyntheticVocalisations``, the plugin task ``ExampleChirps``) and on
``VocSimGSR`` from a small local copy laid out like the hub dataset (public
BC, BS1 and blind HU3), so every benchmark and family table has real rows.
"""

from __future__ import annotations

import io
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

import audiobench
from audiobench.leaderboard.build import Build, build_leaderboard
from audiobench.results import TaskResult, load_result
from audiobench.synthetic import SubsetSpec, render_call, sample_call_types
from tests.hub_copy import write_hub_like

MODELS = ("log-mel", "example-spectral-stats")
OFFLINE_TASKS = ("SyntheticVocalisations", "ExampleChirps")
# The leaderboard needs real files, not tight intervals: few permutations and
# resamples, and only the headline grid (each task adds its own main configuration).
FAST = {"n_permutations": 50, "n_bootstrap": 20, "pca": [100], "distances": ["spearman"]}

#: The payload from the issue, and one that would leave a mark if it ever ran.
HOSTILE_NAME = "<img src=x onerror=alert(1)>"
MARKING_NAME = "<img src=x onerror=document.documentElement.dataset.pwned=1>"
#: A revision trying to close the JSON data block and open a script.
MARKING_REVISION = "v1</script><script>document.documentElement.dataset.pwned=2</script>"

BUILT_AT = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def _vocsim_copy(root: Path) -> Path:
    """A local dataset laid out like the hub one: public BC and BS1, blind HU3."""
    rng = np.random.default_rng(11)
    rows = []
    for subset, f0 in (("BC", (1000.0, 5000.0)), ("BS1", (200.0, 800.0)), ("HU3", (100.0, 400.0))):
        spec = SubsetSpec(subset, n_classes=4, clips_per_class=5, f0_range=f0, max_harmonics=4)
        for call in sample_call_types(spec, rng):
            for _ in range(spec.clips_per_class):
                wave = render_call(
                    call, rng, 16000, individual_shift=1.0, individual_formant=(1500.0, 300.0)
                )
                rows.append(
                    {"audio": (wave, 16000), "label": call.name, "subset": subset, "speaker": "s0"}
                )
    return write_hub_like(root, rows)


@pytest.fixture(scope="session")
def real_results(tmp_path_factory: pytest.TempPathFactory, generated_data_dir: Path) -> Path:
    """``results/<model>/<revision>/<Task>.json`` from actual audiobench runs."""
    base = tmp_path_factory.mktemp("leaderboard-runs")
    out = base / "results"
    quiet = Console(file=io.StringIO())
    with pytest.MonkeyPatch.context() as env:
        # The autouse isolation in tests/conftest.py is per test; a session
        # fixture sets up the same isolation itself.
        for key, value in {
            "HF_HUB_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "HF_HOME": str(base / "hf-home"),
            "AUDIOBENCH_DATA": str(generated_data_dir),
        }.items():
            env.setenv(key, value)
        vocsim = _vocsim_copy(base / "vocsim")
        common = {
            "output_dir": out,
            "cache_dir": base / "cache",
            "progress": False,
            "task_options": FAST,
            "console": quiet,
        }
        for model in MODELS:
            audiobench.evaluate(list(OFFLINE_TASKS), model, **common)
            audiobench.evaluate("VocSimGSR", model, dataset=vocsim, **common)
    return out


def renamed(result: TaskResult, name: str, revision: str | None = None) -> TaskResult:
    """``result`` as if another model had produced it (a valid file, written through the API)."""
    update = {"name": name} if revision is None else {"name": name, "revision": revision}
    return result.model_copy(update={"model": result.model.model_copy(update=update)})


@dataclass(frozen=True)
class Site:
    results: Path
    output: Path
    build: Build


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory, real_results: Path) -> Site:
    """The leaderboard built from the real runs, two hostile but valid files and two invalid."""
    base = tmp_path_factory.mktemp("leaderboard-site")
    results = base / "results"
    shutil.copytree(real_results, results)
    source = load_result(real_results / "log-mel" / "v1" / "SyntheticVocalisations.json")
    renamed(source, HOSTILE_NAME).save(results)
    renamed(source, MARKING_NAME, MARKING_REVISION).save(results)
    broken = results / "broken-model" / "v1" / "SyntheticVocalisations.json"
    broken.parent.mkdir(parents=True)
    broken.write_text("{not json", encoding="utf-8")
    shady = results / "log-mel" / "v1" / "NoSuchTask.json"
    text = (real_results / "log-mel" / "v1" / "ExampleChirps.json").read_text(encoding="utf-8")
    shady.write_text(text.replace('"ExampleChirps"', '"NoSuchTask"'), encoding="utf-8")
    output = base / "site"
    return Site(
        results, output, build_leaderboard(results, output, generated=BUILT_AT, allow_unpinned=True)
    )


@pytest.fixture
def artifacts_dir() -> Iterator[Path]:
    """Where browser screenshots are kept: $AUDIOBENCH_ARTIFACTS or tests/leaderboard/artifacts."""
    import os

    path = Path(os.environ.get("AUDIOBENCH_ARTIFACTS") or Path(__file__).parent / "artifacts")
    path.mkdir(parents=True, exist_ok=True)
    yield path
