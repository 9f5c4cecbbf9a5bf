"""Result files: one versioned JSON document per (model, revision, task).

Written to ``<output_dir>/<model>/<revision>/<Task>.json``. The schema is
strict (unknown fields are errors) so that the leaderboard can trust what it
collates; ``schema_version`` lets it read old files after the schema moves on.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import platform
import re
import secrets
import sys
import time
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from audiobench.audio import MAX_CLIP_SECONDS
from audiobench.errors import ResultFileError
from audiobench.task import SAFE_NAME

__all__ = [
    "SCHEMA_VERSION",
    "CacheStats",
    "DatasetIdentity",
    "Efficiency",
    "Environment",
    "ModelInfo",
    "RayInfo",
    "ReportedSource",
    "RunIdentity",
    "SkippedClip",
    "TaskInfo",
    "TaskResult",
    "Timings",
    "load_result",
    "result_path",
    "safe_component",
]

#: Version 2 added the run identity (``run``); version-1 files still validate.
SCHEMA_VERSION: Literal[2] = 2
NO_REVISION = "no_revision"
#: A revision that names one immutable state of a hub dataset: a full commit hash.
PINNED_REVISION = r"^[0-9a-f]{40}$"

_STRICT = ConfigDict(extra="forbid")


class TaskInfo(BaseModel):
    model_config = _STRICT
    name: str = Field(pattern=SAFE_NAME)
    family: str
    revision: str | None = Field(description="Dataset revision the scores were computed on.")
    dataset: str = Field(description="Dataset id or local path it was loaded from.")
    subsets: list[str] = []


class DatasetIdentity(BaseModel):
    """Exactly which data a result was computed on.

    ``pinned`` is true only for data that cannot change under the same name: a
    hub dataset at a full commit hash, or generated data at a versioned
    generator. A local copy or folder (``digest`` over its clip table and a hash
    of every clip's encoded audio bytes, so audio edited in place is noticed
    whatever its timestamps) or a hub branch such as ``main`` is not pinned;
    the public leaderboard accepts pinned results only.
    """

    model_config = _STRICT
    kind: Literal["huggingface", "synthetic", "folder", "local_copy"]
    source: str = Field(description="Hub id, generator, or resolved local path.")
    revision: str | None = None
    config: str | None = None
    digest: str | None = Field(default=None, description="Content digest of local data.")
    pinned: bool

    @model_validator(mode="after")
    def _consistent(self) -> DatasetIdentity:
        # "pinned" is a consequence of the kind and revision, never a claim of its own.
        if self.kind in ("folder", "local_copy"):
            if self.pinned:
                raise ValueError(f"local data ({self.source}) is never pinned")
            if self.digest is None or re.fullmatch(r"[0-9a-f]{64}", self.digest) is None:
                raise ValueError("local data must carry the SHA-256 digest of its content")
            return self
        if self.digest is not None:
            raise ValueError(f"{self.kind} data is identified by name and revision, not a digest")
        pinned = self.kind == "synthetic" or (
            self.revision is not None and re.fullmatch(PINNED_REVISION, self.revision) is not None
        )
        if self.pinned != pinned:
            raise ValueError(
                f"pinned is {str(self.pinned).lower()}, but {self.kind} data at revision "
                f"{self.revision!r} is {'' if pinned else 'not '}pinned"
            )
        return self


class RunIdentity(BaseModel):
    """What makes two runs the same: a result is reused only for an identical identity.

    Where or how fast it ran (device, batch size, Ray workers) is not part of it.
    """

    model_config = _STRICT
    task: str
    dataset: DatasetIdentity
    model_fingerprint: str = Field(description="Name, revision, options, pooling, dtype, weights.")
    task_options: dict[str, Any] = Field(description="Every option of the task, as run.")
    subsets: list[str] | None = Field(description="Subsets asked for (None: all).")
    on_error: Literal["raise", "skip"]
    max_clip_seconds: float | None = Field(
        default=MAX_CLIP_SECONDS, description="Longest clip decoded (None: no limit)."
    )

    @property
    def digest(self) -> str:
        """SHA-256 of the canonical JSON of the identity."""
        text = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def differences(self, other: RunIdentity) -> list[str]:
        """Top-level fields (and task options) that differ from ``other``."""
        mine, theirs = self.model_dump(mode="json"), other.model_dump(mode="json")
        changed = [k for k in mine if k != "task_options" and mine[k] != theirs[k]]
        options = {**mine["task_options"], **theirs["task_options"]}
        changed += [
            f"task option {k}"
            for k in sorted(options)
            if mine["task_options"].get(k) != theirs["task_options"].get(k)
        ]
        return changed


class ModelInfo(BaseModel):
    model_config = _STRICT
    name: str
    revision: str | None
    source: str | None = None
    params: dict[str, Any] = {}
    pooling: str
    fingerprint: str
    n_parameters: int | None = Field(default=None, ge=0)
    embedding_dim: int | None = Field(default=None, ge=0)
    sample_rate: int | None = Field(
        gt=0, description="Rate the model reads (None only in a reported result: not given)."
    )
    license: str | None = Field(default=None, description="The weights' licence, where known.")
    open_weights: bool | None = Field(default=None, description="Whether the weights are public.")
    release_date: date | None = Field(default=None, description="When the model was released.")
    modalities: list[str] | None = Field(default=None, description="Inputs the model takes.")


class ReportedSource(BaseModel):
    """Where a reported result comes from: scores published elsewhere, not computed here.

    An imported MTEB result (``audiobench results import-mteb``) or MSEB result
    (``audiobench results import-mseb``) keeps what the published file says about itself, so
    a reader can tell how far it is comparable with a local run.
    """

    model_config = _STRICT
    origin: Literal["mteb", "mseb"] = Field(description="The format the scores were published in.")
    repository: str = Field(description="Where the published file was read from.")
    file: str = Field(description="The published file, relative to the repository.")
    mteb_version: str | None = Field(description="MTEB version that computed the scores.")
    model: str = Field(description="The model as the publisher names it (a hub id).")
    model_revision: str | None = Field(description="The model revision as published.")
    dataset_revision: str | None = Field(description="Dataset revision the scores were run on.")
    revision_matches: bool = Field(
        description="Whether that revision is the audiobench task's pinned revision."
    )
    split: str = Field(description="The published split the scores were read from.")
    audiobench_model: str | None = Field(
        description="The audiobench model computing the same embeddings (None: none known)."
    )
    evaluation_time_s: float | None = Field(default=None, ge=0)
    dropped_keys: list[str] = Field(
        default=[], description="Published keys audiobench's report has no place for."
    )
    dropped_subsets: list[str] = Field(
        default=[], description="Published subsets the audiobench task does not declare."
    )


class Timings(BaseModel):
    model_config = _STRICT
    load_data_s: float = Field(ge=0)
    encode_s: float = Field(ge=0)
    evaluate_s: float = Field(ge=0)
    total_s: float = Field(ge=0)


class CacheStats(BaseModel):
    """Embeddings served and computed; a task that needs a clip both pooled and
    frame-level (token probes, codecs) counts it once per pass."""

    model_config = _STRICT
    n_clips: int = Field(ge=0)
    n_cached: int = Field(ge=0, description="Clips served from the embedding cache.")
    n_encoded: int = Field(ge=0, description="Clips run through the encoder in this run.")

    @model_validator(mode="after")
    def _consistent(self) -> CacheStats:
        # A clip is served or encoded at most once (duplicates and skipped clips are neither).
        if self.n_cached + self.n_encoded > self.n_clips:
            raise ValueError(
                f"n_cached ({self.n_cached}) + n_encoded ({self.n_encoded}) exceed "
                f"n_clips ({self.n_clips})"
            )
        return self


class Efficiency(BaseModel):
    """Cost of the model; see :mod:`audiobench.efficiency` for the definitions."""

    model_config = _STRICT
    n_parameters: int | None = Field(default=None, ge=0)
    embedding_size: int | None = Field(
        default=None, ge=0, description="Values per pooled embedding (median over clips)."
    )
    bytes_per_second: float | None = Field(
        default=None, ge=0, description="Pooled embedding bytes per second of audio."
    )
    compression_ratio: float | None = Field(
        default=None,
        ge=0,
        description="MSEB's: embedding bytes / float32 waveform bytes at the task's rate, "
        "mean over clips (below 1: the embedding is smaller).",
    )
    pcm_compression_ratio: float | None = Field(
        default=None, ge=0, description="16-bit PCM bytes at the task's rate / embedding bytes."
    )
    mean_encoding_size_bytes: float | None = Field(
        default=None,
        ge=0,
        description="MSEB's: mean bytes of the output handed to the task per clip (an "
        "embedding's bytes; a transcript 8, as MSEB counts a string).",
    )
    flops_per_example: float | None = Field(
        default=None,
        ge=0,
        description="MSEB's: FLOPs of one forward pass on a clip of the median duration.",
    )
    flops_per_second: float | None = Field(
        default=None, ge=0, description="FLOPs per second of audio (probe clip, eager attention)."
    )
    clips_per_s: float | None = Field(default=None, ge=0)
    audio_seconds_per_s: float | None = Field(
        default=None, ge=0, description="Seconds of audio encoded per second of encoder time."
    )
    audio_seconds: float | None = Field(default=None, ge=0)
    peak_memory_mb: float | None = Field(default=None, ge=0)
    peak_gpu_memory_mb: float | None = Field(default=None, ge=0)
    batch_size: int | None = Field(default=None, ge=1, description="Final batch size.")
    dtype: str | None = None


class RayInfo(BaseModel):
    """The Ray cluster that computed a run's embeddings (``--ray``); not part of its identity."""

    model_config = _STRICT
    address: str | None = Field(description="Cluster address as given (None: the default one).")
    ray_version: str
    nodes: int = Field(ge=0, description="Alive nodes of the cluster.")
    cluster_cpus: float = Field(ge=0)
    cluster_gpus: float = Field(ge=0)
    workers: int = Field(ge=0, description="Encoder actors (0: the cache held everything).")
    gpus: float = Field(ge=0, description="GPUs held by the encoder actors.")
    n_dispatched: int = Field(ge=0, description="Clips sent to the encoder actors.")
    n_encoded: int = Field(ge=0, description="Clips whose embeddings the cluster committed.")
    restarts: int = Field(ge=0, description="Encoder actors restarted after dying.")
    wall_s: float = Field(ge=0, description="Duration of the cluster stage.")


class Environment(BaseModel):
    model_config = _STRICT
    python: str
    platform: str
    torch: str | None = None
    numpy: str
    device: str
    cpu: str | None = Field(
        default=None,
        description="CPU model, torch's kernel level, int8 dot products, usable cores.",
    )
    scoring_kernels: dict[str, Any] | None = Field(
        default=None,
        description="The scoring kernels chosen (purpose/kernel: count) and the product rates "
        "measured on this machine that chose them (audiobench.vocsim.kernels).",
    )
    ray: RayInfo | None = Field(default=None, description="Set when encoding ran on Ray.")
    threads: int | None = Field(
        default=None, ge=1, description="Torch threads while encoding (None: not recorded)."
    )

    @classmethod
    def capture(
        cls,
        device: str,
        *,
        ray: RayInfo | None = None,
        threads: int | None = None,
        scoring_kernels: dict[str, Any] | None = None,
    ) -> Environment:
        import numpy as np

        from audiobench.machine import cpu_description

        try:
            import torch

            torch_version: str | None = torch.__version__
        except ImportError:  # pragma: no cover - torch is a dependency
            torch_version = None
        return cls(
            python=sys.version.split()[0],
            platform=platform.platform(),
            torch=torch_version,
            numpy=np.__version__,
            device=device,
            cpu=cpu_description(),
            scoring_kernels=scoring_kernels,
            ray=ray,
            threads=threads,
        )


class SkippedClip(BaseModel):
    model_config = _STRICT
    id: str
    location: str
    reason: str


def _renamed(entry: Any, old: str, new: str) -> Any:
    if isinstance(entry, dict) and old in entry and new not in entry:
        return {(new if key == old else key): value for key, value in entry.items()}
    return entry


def _renamed_since_version_1(data: dict[str, Any]) -> dict[str, Any]:
    """A version-1 result with the fields renamed when their names took the papers' meaning.

    ``efficiency.compression_ratio`` was the PCM-based figure (now ``pcm_compression_ratio``;
    the name is MSEB's ratio since version 2), and reranking's ``cer`` the character error
    rate (now ``char_error_rate``; MSEB's "CER" is ``candidate_error_rate``).
    """
    data = dict(data)
    if "efficiency" in data:
        data["efficiency"] = _renamed(
            data["efficiency"], "compression_ratio", "pcm_compression_ratio"
        )
    task = data.get("task")
    if isinstance(task, dict) and task.get("family") == "reranking":
        for key in ("scores", "aggregates"):
            block = data.get(key)
            if isinstance(block, dict):
                data[key] = {k: _renamed(v, "cer", "char_error_rate") for k, v in block.items()}
    return data


class TaskResult(BaseModel):
    """Everything one evaluation produced, and enough context to reproduce it."""

    model_config = _STRICT

    schema_version: Literal[1, 2] = SCHEMA_VERSION
    task: TaskInfo
    run: RunIdentity | None = Field(
        default=None, description="The run's identity (absent only in version-1 files)."
    )
    model: ModelInfo
    audiobench_version: str
    main_score: float | None = Field(description="The task's headline number (None: undefined).")
    main_score_name: str
    scores: dict[str, dict[str, Any]] = Field(
        description="Per subset (or split): the family's scores, nested plain JSON."
    )
    aggregates: dict[str, dict[str, Any]] = {}
    details: dict[str, Any] = {}
    skipped: list[SkippedClip] = []
    # Always written; null only in a reported result (checked in _identified), which has none.
    cache: CacheStats | None
    efficiency: Efficiency = Efficiency()
    timings: Timings | None
    environment: Environment | None
    date: datetime
    reported: ReportedSource | None = Field(
        default=None,
        description="Set on scores published elsewhere and imported (not computed here).",
    )

    @model_validator(mode="before")
    @classmethod
    def _version(cls, data: Any) -> Any:
        # Without an explicit version, a result with no run identity reads as version 1.
        if isinstance(data, dict) and "schema_version" not in data and data.get("run") is None:
            data = {**data, "schema_version": 1}
        if isinstance(data, dict) and data.get("schema_version") == 1:
            data = _renamed_since_version_1(data)
        return data

    @model_validator(mode="after")
    def _identified(self) -> TaskResult:
        if self.schema_version >= 2 and self.run is None:
            raise ValueError("run: a version-2 result must carry its run identity")
        if self.reported is None:
            # What only a run here can record: a computed result always has it.
            missing = [
                name
                for name, value in (
                    ("cache", self.cache),
                    ("timings", self.timings),
                    ("environment", self.environment),
                    ("model.sample_rate", self.model.sample_rate),
                )
                if value is None
            ]
            if missing:
                raise ValueError(
                    f"{', '.join(missing)}: missing; only a reported result (with 'reported') "
                    "may leave them out"
                )
        # The model's size is counted once and written twice.
        counted = (self.model.n_parameters, self.efficiency.n_parameters)
        if None not in counted and counted[0] != counted[1]:
            raise ValueError(
                f"model.n_parameters ({counted[0]}) is not efficiency.n_parameters ({counted[1]})"
            )
        return self

    @field_validator("scores", "aggregates", "details")
    @classmethod
    def _finite(cls, value: dict[str, Any]) -> dict[str, Any]:
        _check_finite(value, "")
        return value

    @field_validator("main_score")
    @classmethod
    def _finite_main(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ValueError("main_score must be finite or null")
        return value

    def path(self, output_dir: str | os.PathLike[str]) -> Path:
        return result_path(output_dir, self.model.name, self.model.revision, self.task.name)

    def save(self, output_dir: str | os.PathLike[str]) -> Path:
        """Write atomically, so an interrupted write never leaves half a file.

        The file gets the permissions of any new file (``0o666`` less the
        umask). Temporary files that a killed write left beside it, older
        than :data:`STALE_TEMP_SECONDS`, are removed first.
        """
        path = self.path(output_dir)
        path.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_temps(path)
        text = self.model_dump_json(indent=2) + "\n"
        for _ in range(100):
            tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}{_TEMP_SUFFIX}")
            try:
                # Not mkstemp, which creates 0600 files: the kernel applies the umask here.
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            except FileExistsError:
                continue
            break
        else:  # pragma: no cover - 100 collisions of 32 random bits
            raise FileExistsError(f"could not create a temporary file beside {path}")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return path


#: Age after which a temporary result file is taken for a killed write's leftover.
STALE_TEMP_SECONDS = 3600.0
_TEMP_SUFFIX = ".tmp"


def _remove_stale_temps(path: Path) -> None:
    """Delete ``.<name>.*`` temporary files beside ``path`` older than the stale age.

    A concurrent writer's file is fresh, so only leftovers of killed writes go.
    """
    prefix = f".{path.name}."
    cutoff = time.time() - STALE_TEMP_SECONDS
    for entry in path.parent.iterdir():
        if not entry.name.startswith(prefix):
            continue
        with contextlib.suppress(OSError):  # raced with another cleaner, or not ours to delete
            if entry.is_file() and not entry.is_symlink() and entry.stat().st_mtime < cutoff:
                entry.unlink()


def _check_finite(value: Any, where: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"score {where or '<root>'} is not finite ({value}); use null")
    if isinstance(value, dict):
        for key, item in value.items():
            _check_finite(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_finite(item, f"{where}[{i}]")


def safe_component(name: str) -> str:
    """Turn a model or revision name into one portable path component.

    ``openai/whisper-large-v3`` becomes ``openai__whisper-large-v3``; anything
    outside letters, digits and ``._+-`` becomes ``_``.
    """
    text = name.replace("/", "__")
    text = re.sub(r"[^A-Za-z0-9._+-]", "_", text).strip(".")
    return text or "_"


def result_path(
    output_dir: str | os.PathLike[str], model: str, revision: str | None, task: str
) -> Path:
    return (
        Path(output_dir)
        / safe_component(model)
        / safe_component(revision or NO_REVISION)
        / f"{safe_component(task)}.json"
    )


def load_result(path: str | os.PathLike[str]) -> TaskResult:
    """Read and validate a result file; a :class:`~audiobench.errors.ResultFileError` names
    the file (an unreadable file, text that is not JSON, or JSON that is not a result)."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ResultFileError(f"{p}: not a readable JSON result file: {exc}") from exc
    except RecursionError as exc:  # deeper than the parser goes: hostile, never a result
        raise ResultFileError(f"{p}: not a readable JSON result file: nested too deeply") from exc
    try:
        return TaskResult.model_validate(data)
    except ValidationError as exc:
        raise ResultFileError(f"{p}: invalid result file: {exc}") from exc
    except RecursionError as exc:
        raise ResultFileError(f"{p}: invalid result file: nested too deeply") from exc


def utc_now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)
