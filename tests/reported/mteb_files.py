"""Write result files in the layout and format of MTEB's public results repository.

``<root>/<org>__<model>/<revision>/<Task>.json`` beside ``model_meta.json``; a task file has
``dataset_revision``, ``task_name``, ``mteb_version``, ``evaluation_time`` and ``scores``: per
split, a list of entries, one per ``hf_subset``, each with its metric keys, ``main_score`` and
``languages``. Values are rounded to six decimals, as MTEB writes them. The numbers are
generated here; nothing is copied from the repository.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from audiobench import registry
from audiobench.evaluators.mteb_protocol.subset_scores import MAIN_SCORE_KEYS
from audiobench.reported.mteb_import import evaluated_split
from audiobench.task import DEFAULT_SUBSET
from audiobench.tasks.mteb_audio import mteb_task_names

__all__ = ["MTEB_TASKS", "entry", "model_dir", "task_file", "write_task_file"]

#: Registered tasks scored as MTEB scores them by default (the ones that import).
MTEB_TASKS = sorted(
    name
    for name in registry.tasks.names()
    if getattr(registry.tasks.get(name).options, "protocol", None) == "mteb"
)

MODEL_META = {
    "name": "acme/audio-encoder",
    "revision": "0123456789abcdef0123456789abcdef01234567",
    "release_date": "2025-03-14",
    "n_parameters": 95_000_000,
    "embed_dim": 768,
    "license": "apache-2.0",
    "open_weights": True,
    "modalities": ["audio"],
    "loader": "AcmeWrapper",
    "max_tokens": float("inf"),  # MTEB writes Infinity here
}


def model_dir(root: Path, meta: Mapping[str, Any] | None = None) -> Path:
    """The revision folder of a model, with its ``model_meta.json`` (None: no meta file)."""
    given = dict(MODEL_META if meta is None else meta)
    name = str(given.get("name", MODEL_META["name"]))
    revision = str(given.get("revision", MODEL_META["revision"]))
    folder = root / name.replace("/", "__") / revision
    folder.mkdir(parents=True, exist_ok=True)
    if meta is None or meta:
        (folder / "model_meta.json").write_text(json.dumps(given))
    return folder


def _keys(name: str) -> tuple[str, ...]:
    cls = registry.tasks.get(name)
    if getattr(cls.options, "multilabel", False):
        return ("accuracy", "lrap", "f1", "hamming")
    return MAIN_SCORE_KEYS[str(cls.metadata.family)]


def entry(keys: Sequence[str], main: str, subset: str, rng: np.random.Generator) -> dict[str, Any]:
    """One ``hf_subset`` entry with a value for each key, rounded as MTEB rounds."""
    values: dict[str, Any] = {k: round(float(rng.uniform(0.05, 0.95)), 6) for k in keys}
    _consistent_ranking(values, rng)
    return {**values, "main_score": values[main], "hf_subset": subset, "languages": ["eng-Latn"]}


#: audiobench's name of a task -> MTEB's (``ESC50.mteb`` -> ``ESC50``).
MTEB_NAME = {ours: theirs for theirs, ours in mteb_task_names().items()}


def _consistent_ranking(values: dict[str, Any], rng: np.random.Generator) -> None:
    """Make ranking keys what a real run gives: hit rate, recall and mrr grow with k, recall
    stays under the hit rate, and at k = 1 mrr and precision are the hit rate."""
    ks = sorted(int(k.rsplit("_", 1)[1]) for k in values if k.startswith("hit_rate_at_"))
    if not ks:
        return
    hits = np.sort(rng.uniform(0.05, 0.95, len(ks)))
    share = float(rng.uniform(0.5, 1.0))
    for k, hit in zip(ks, hits, strict=True):
        values[f"hit_rate_at_{k}"] = round(float(hit), 6)
        for name, value in (
            (f"recall_at_{k}", hit * share),
            (f"mrr_at_{k}", hits[0] + (hit - hits[0]) / 2),
            *([(f"precision_at_{k}", hit)] if k == 1 else []),
        ):
            if name in values:
                values[name] = round(float(value), 6)


def task_file(name: str, seed: int = 0, **changes: Any) -> dict[str, Any]:
    """A published file for registered task ``name``, under MTEB's name for it: every declared
    subset of its evaluated split, at its pinned revision (``changes`` replace top-level
    fields)."""
    meta = registry.tasks.get(name).metadata
    rng = np.random.default_rng(seed)
    keys = _keys(name)
    subsets = list(meta.subsets) or [DEFAULT_SUBSET]
    data = {
        "dataset_revision": meta.revision,
        "task_name": MTEB_NAME.get(name, name),
        "mteb_version": "2.3.0",
        "scores": {
            evaluated_split(tuple(meta.splits)): [
                entry(keys, meta.main_score, s, rng) for s in subsets
            ]
        },
        "evaluation_time": 12.5,
        "kg_co2_emissions": None,
    }
    data.update(changes)
    return data


def write_task_file(folder: Path, data: Mapping[str, Any], stem: str | None = None) -> Path:
    path = folder / f"{stem or data.get('task_name', 'Task')}.json"
    path.write_text(json.dumps(data, indent=2))
    return path
