"""Result files made by real offline runs, hostile variants of them, and a built leaderboard.

Everything is session-scoped: two models (the built-in ``log-mel`` and the
plugin's ``example-spectral-stats``) are evaluated once on the offline tasks
(``SyntheticVocalisations``, the plugin task ``ExampleChirps``) and on
``VocSimGSR`` from a small local copy laid out like the hub dataset (public
BC, BS1 and blind HU3), so every benchmark and family table has real rows.
A second site (``maeb_site``) is built from hand-made, valid result files: MAEB
tasks for a few models, and one clustering task in a benchmark and one in none.
"""

from __future__ import annotations

import io
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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
        common: dict[str, Any] = {
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


# ---------------------------------------------------------------------------- hand-made results

#: Models of the hand-made MAEB site and the tasks they have: every MAEB task, the
#: audio-only ones (twice, scored apart), all audio-only ones but one, and two clustering tasks.
MAEB_GAP_TASK = "GTZANAudioReranking"


def clustering_report(v_measure: float) -> dict[str, Any]:
    """One subset's scores under audiobench's own clustering protocol."""
    scores = {"v_measure": v_measure, "nmi": v_measure, "ari": v_measure, "purity": v_measure}
    return {
        **scores,
        "std": dict.fromkeys(scores, 0.0),
        "per_seed": {name: [value] for name, value in scores.items()},
        "n_clusters": 5,
        "n_samples": 40,
    }


def hand_made_result(
    task: str, model: str, score: float, *, report: dict[str, Any] | None = None
) -> TaskResult:
    """A valid result of ``task`` on its pinned data, with ``score`` as its main score.

    ``report`` is the scores of the one subset evaluated; the default is a report under the
    reference protocol (MAEB tasks' default), ``{"n_samples": ..., <main score>: score}``,
    averaged over that subset when the task declares subsets.
    """
    from audiobench import registry
    from audiobench.results import (
        PINNED_REVISION,
        CacheStats,
        DatasetIdentity,
        Environment,
        ModelInfo,
        RunIdentity,
        TaskInfo,
        Timings,
    )
    from audiobench.task import DEFAULT_SUBSET

    cls = registry.tasks.get(task)
    meta = cls.metadata
    metric = meta.main_score
    subset = meta.subsets[0] if meta.subsets else DEFAULT_SUBSET
    if report is None:
        # 1000 items: a score given to three decimals is a share of them (a hit rate or an
        # accuracy must be, as validation checks).
        report = {"n_samples": 1000, metric: score}
        aggregates = (
            {"mean": {"subsets": [subset], "n_subsets": 1, metric: score}} if meta.subsets else {}
        )
    elif meta.subsets:
        raise NotImplementedError("a hand-made report of a task with subsets")
    else:
        aggregates = {}
    source = meta.dataset
    return TaskResult(
        task=TaskInfo(
            name=task,
            family=str(meta.family),
            revision=meta.revision,
            dataset=source.path,
            subsets=[subset] if meta.subsets else [],
        ),
        run=RunIdentity(
            task=task,
            dataset=DatasetIdentity(
                kind="synthetic" if source.kind == "synthetic" else "huggingface",
                source=source.path,
                revision=meta.revision,
                config=source.config,
                # Pinned as the run would record it: generated data, or a hub commit.
                pinned=source.kind == "synthetic"
                or re.fullmatch(PINNED_REVISION, meta.revision or "") is not None,
            ),
            model_fingerprint=f"{model}-fingerprint",
            task_options=cls.options.model_dump(mode="json"),
            subsets=[subset] if meta.subsets else None,
            on_error="raise",
        ),
        model=ModelInfo(
            name=model,
            revision="v1",
            pooling="mean_time",
            fingerprint=f"{model}-fingerprint",
            n_parameters=1000,
            sample_rate=16000,
        ),
        audiobench_version=audiobench.__version__,
        main_score=score,
        main_score_name=metric,
        scores={subset: report},
        aggregates=aggregates,
        cache=CacheStats(n_clips=16, n_cached=0, n_encoded=16),
        timings=Timings(load_data_s=0.0, encode_s=0.0, evaluate_s=0.0, total_s=0.0),
        environment=Environment(python="3.11", platform="linux", numpy="2", device="cpu"),
        date=BUILT_AT,
    )


def maeb_scores() -> dict[str, dict[str, float]]:
    """Model -> MAEB task -> main score, for the hand-made MAEB site."""
    from audiobench.tasks.maeb import MAEB_AUDIO_ONLY_TASKS, MAEB_TASKS

    return {
        "maeb-full": {task: 0.50 + i / 100 for i, task in enumerate(MAEB_TASKS)},
        "audio-strong": {task: 0.80 + i / 1000 for i, task in enumerate(MAEB_AUDIO_ONLY_TASKS)},
        "audio-weak": {task: 0.30 + i / 1000 for i, task in enumerate(MAEB_AUDIO_ONLY_TASKS)},
        # The best scores of all, but one task short: no mean, so no rank.
        "audio-gap": {task: 0.95 for task in MAEB_AUDIO_ONLY_TASKS if task != MAEB_GAP_TASK},
    }


@pytest.fixture(scope="session")
def maeb_site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    """A leaderboard built from hand-made, valid results: MAEB tasks, and two clustering tasks.

    ``ESC50Clustering`` is in the ``Clustering`` benchmark and ``MockClustering`` in no
    benchmark on the leaderboard, so a family table of clustering tasks sits beside it.
    """
    base = tmp_path_factory.mktemp("leaderboard-maeb")
    results = base / "results"
    for model, scores in maeb_scores().items():
        for task, score in scores.items():
            hand_made_result(task, model, score).save(results)
    for task, score in (("ESC50Clustering", 0.41), ("MockClustering", 0.62)):
        hand_made_result(task, "clusterer", score, report=clustering_report(score)).save(results)
    output = base / "site"
    return Site(results, output, build_leaderboard(results, output, generated=BUILT_AT))
