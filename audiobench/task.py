"""The task interface: metadata, data loading, and the contract with evaluation.

A concrete task is mostly declarative (metadata plus column mapping, see
``tasks/``); its family class in :mod:`audiobench.families` knows how to
evaluate. Data comes from a Hugging Face dataset pinned to a revision, a
local folder, or the in-package generator, and a user can point any task at
a local copy with ``dataset_path``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from audiobench.audio import Clip

if TYPE_CHECKING:
    from audiobench.encoder import Encoder

__all__ = [
    "Columns",
    "DatasetSource",
    "Embedder",
    "Task",
    "TaskFamily",
    "TaskMetadata",
    "TaskScores",
]

#: Names become path components of result files; keep them portable.
SAFE_NAME = r"^[A-Za-z0-9][A-Za-z0-9._+-]*$"


class TaskFamily(StrEnum):
    ZERO_SHOT_SIMILARITY = "zero_shot_similarity"
    RETRIEVAL = "retrieval"
    RERANKING = "reranking"
    CLUSTERING = "clustering"
    CLASSIFICATION = "classification"
    ZERO_SHOT_CLASSIFICATION = "zero_shot_classification"
    RECONSTRUCTION = "reconstruction"
    PERCEPTUAL_ALIGNMENT = "perceptual_alignment"


class DatasetSource(BaseModel):
    """Where a task's data comes from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["huggingface", "folder", "synthetic"]
    path: str = Field(description="Hub id, folder path, or generator name.")
    revision: str | None = Field(
        default=None, description="Pinned dataset revision (required for huggingface)."
    )
    config: str | None = Field(default=None, description="Dataset configuration name.")


class Columns(BaseModel):
    """Which dataset columns hold what. ``None`` means the task does not use one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    audio: str = "audio"
    label: str | None = "label"
    subset: str | None = None
    id: str | None = None
    text: str | None = None
    group: str | None = None
    split: str | None = None
    extra: tuple[str, ...] = Field(
        default=(),
        description="Further columns copied into Clip.metadata (e.g. ESC-50's 'fold').",
    )
    required: tuple[str, ...] = Field(
        default=("audio", "label"),
        description="Keys above whose column must exist; the others are used when present.",
    )


class TaskMetadata(BaseModel):
    """Static description of a task, shown by ``audiobench list tasks``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=SAFE_NAME)
    family: TaskFamily
    description: str
    dataset: DatasetSource
    columns: Columns = Columns()
    splits: tuple[str, ...] = ("train",)
    subsets: tuple[str, ...] = Field(
        default=(), description="Subset ids evaluated separately; empty: the whole split."
    )
    blind_subsets: tuple[str, ...] = Field(
        default=(), description="Subsets only evaluated from a local copy; only aggregates leave."
    )
    main_score: str = Field(description="Key of the headline score in the result.")
    domains: tuple[str, ...] = ()
    license: str | None = None
    citation: str | None = None
    reference: str | None = None
    higher_is_better: bool = Field(
        default=True, description="Direction of the main score (False for FAD, WER, ...)."
    )
    visibility: Literal["public", "blind"] = "public"
    sample_rate: int = Field(default=16000, gt=0, description="Canonical decoding rate.")

    @property
    def offline(self) -> bool:
        """Whether the task runs with no network (its data is generated locally)."""
        return self.dataset.kind in ("synthetic", "folder")

    @property
    def revision(self) -> str | None:
        return self.dataset.revision


#: The subset name of clips that carry none (tasks without declared subsets).
DEFAULT_SUBSET = "default"


@dataclass
class TaskScores:
    """What a family's evaluation returns, before it is wrapped in a result file."""

    main_score: float | None
    scores: dict[str, dict[str, Any]]
    aggregates: dict[str, dict[str, Any]] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)


class Embedder(ABC):
    """What evaluation hands a family: embeddings of clips, cached and aligned.

    ``embed`` returns the clips that could be embedded and their arrays, in
    the same order; clips skipped under ``--on-error skip`` are left out of
    both and recorded by the embedder, so labels never drift from vectors.
    """

    encoder: Encoder
    #: Decoded duration in seconds of every clip embedded so far, by clip id.
    durations: dict[str, float]

    @abstractmethod
    def embed(
        self, clips: Sequence[Clip], description: str, *, pooled: bool = True
    ) -> tuple[list[Clip], list[Any]]:
        """Embeddings of ``clips`` (cache first, encoder for the misses).

        ``pooled=False`` returns the encoder's unpooled outputs (frame
        sequences ``[T, D]``, codes ``[T, Q]``), for token-level probes and
        decoding; they are cached separately from the pooled vectors.
        """

    def embed_text(self, texts: Sequence[str], description: str) -> np.ndarray:
        """Text embeddings ``[n, D]`` in the audio space (audio-text encoders only)."""
        raise NotImplementedError(f"model {self.encoder.meta.name!r} has no text encoder")

    @abstractmethod
    def track(self, description: str, total: int, unit: str) -> Any:
        """A progress bar (``advance(n)``, ``close()``) for a family's own long work."""


class Task(ABC):
    """Base of every task. Subclass a family class, not this one."""

    metadata: ClassVar[TaskMetadata]

    def __init__(
        self,
        *,
        dataset_path: str | Path | None = None,
        revision: str | None = None,
        subsets: Sequence[str] | None = None,
    ) -> None:
        self.dataset_path = Path(dataset_path) if dataset_path is not None else None
        self.dataset_revision = revision if revision is not None else self.metadata.revision
        self.selected_subsets = tuple(subsets) if subsets else None
        #: Run options this task does not take (set by ``evaluate``; recorded in the result).
        self.unused_options: list[str] = []

    @property
    def name(self) -> str:
        return self.metadata.name

    def subsets_to_run(self) -> tuple[str, ...]:
        """Subsets evaluated in this run (all declared ones unless narrowed)."""
        declared = self.metadata.subsets
        if not self.selected_subsets:
            return declared
        unknown = [s for s in self.selected_subsets if declared and s not in declared]
        if unknown:
            raise ValueError(
                f"task {self.name}: unknown subset(s) {unknown}; declared: {list(declared)}"
            )
        return self.selected_subsets

    def clips_by_subset(self, clips: Sequence[Clip]) -> dict[str, list[Clip]]:
        """Clips by subset (:data:`DEFAULT_SUBSET` for none), declared subsets first, in order."""
        groups: dict[str, list[Clip]] = {}
        for clip in clips:
            groups.setdefault(clip.subset or DEFAULT_SUBSET, []).append(clip)
        order = {s: i for i, s in enumerate(self.metadata.subsets)}
        return dict(sorted(groups.items(), key=lambda kv: order.get(kv[0], len(order))))

    def load_data(self, progress: Callable[[str], None] | None = None) -> list[Clip]:
        """All clips of the task, in dataset order."""
        from audiobench import sources

        return sources.load_task_clips(self, progress=progress)

    def generate_data(self, directory: Path) -> None:
        """Write the task's audio and labels into ``directory`` (synthetic tasks only)."""
        raise NotImplementedError(f"task {self.name} has no data generator")

    @abstractmethod
    def evaluate(self, embedder: Embedder, clips: Sequence[Clip]) -> TaskScores:
        """Score the encoder behind ``embedder`` on ``clips``."""

    @classmethod
    def check_encoder(cls, encoder: Encoder) -> None:
        """Raise a clear error if ``encoder`` lacks what this family needs."""
        return None  # most families need nothing beyond audio encoding

    @classmethod
    def score_problems(cls, scores: dict[str, Any]) -> list[str]:
        """What is wrong with a result file's ``scores`` (or ``aggregates``) mapping.

        Result validation calls this on both mappings of a file that already
        passed the schema (so every number is finite or null). Each problem is
        one ``"<path inside the mapping>: <message>"`` string, e.g.
        ``"SYN-A.configs.raw/cosine.p@1.value: 1.5 is outside [0, 1]"``. The
        default finds nothing; a family overrides it to reject unknown metric
        names and values outside their range.
        """
        return []
