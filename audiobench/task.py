"""The task interface: metadata, data loading, and the contract with evaluation.

A concrete task is mostly declarative (metadata plus column mapping, see
``tasks/``); its family class in :mod:`audiobench.families` knows how to
evaluate. Data comes from a Hugging Face dataset pinned to a revision, a
local folder, or the in-package generator, and a user can point any task at
a local copy with ``dataset_path``.
"""

from __future__ import annotations

import json
import typing
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from audiobench import reports as _reports
from audiobench.audio import Clip
from audiobench.errors import DataError, OptionError
from audiobench.options import StrictOptions, current_option_names
from audiobench.outputs import OutputType, TextOutput
from audiobench.reports import Report, Summary, parse_score_path, problems_of, score_at
from audiobench.sources import Columns, DatasetSource, Synthetic

if TYPE_CHECKING:
    from audiobench.encoder import Encoder

__all__ = [
    "Columns",
    "DatasetSource",
    "Embedder",
    "Subset",
    "Synthetic",
    "Task",
    "TaskFamily",
    "TaskMetadata",
    "TaskOptions",
    "TaskScores",
    "error_in_context",
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
    PAIR_CLASSIFICATION = "pair_classification"
    REASONING = "reasoning"
    STABILITY = "stability"
    TRANSCRIPTION = "transcription"
    SEGMENTATION = "segmentation"


class TaskMetadata(BaseModel):
    """Static description of a task, shown by ``audiobench list tasks``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=SAFE_NAME)
    family: TaskFamily | None = Field(
        default=None, description="Filled in from the task's family base class."
    )
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
    """What a task's evaluation returns, before it is wrapped in a result file.

    ``scores`` and ``aggregates`` are the JSON of the family's typed
    :class:`~audiobench.reports.Report` per subset and
    :class:`~audiobench.reports.Summary` per aggregate group.
    """

    main_score: float | None
    scores: dict[str, dict[str, Any]]
    aggregates: dict[str, dict[str, Any]] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)


class TaskOptions(StrictOptions):
    """Base of a family's knobs: one typed, validated model per family.

    A family declares ``class Options(TaskOptions)``; a concrete task may set
    other defaults with ``options = <Family>.Options(...)``; a run overrides
    them with ``--task-option KEY=VALUE``. The options a run used are recorded
    in its result. Booleans for numbers and non-finite floats are refused
    (:class:`~audiobench.options.StrictOptions`).
    """


@dataclass
class Subset:
    """One subset's clips, handed to :meth:`Task.evaluate_subset`.

    A family puts per-subset records (split sizes, fitted configurations) into
    ``details``; they land in the result under ``details[<key>][<subset>]``.
    """

    name: str
    clips: list[Clip]
    task: str
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def where(self) -> str:
        """``"task T"`` or ``"task T, subset S"``, the prefix of error messages."""
        return f"task {self.task}" + (
            f", subset {self.name}" if self.name != DEFAULT_SUBSET else ""
        )

    @property
    def label(self) -> str:
        """Progress-bar description."""
        return self.task + (f" {self.name}" if self.name != DEFAULT_SUBSET else "")


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

    def embed_matrix(
        self, clips: Sequence[Clip], description: str
    ) -> tuple[list[Clip], np.ndarray]:
        """The clips that could be embedded and their pooled vectors as one ``[n, D]`` matrix.

        The vectors are collated together (:func:`audiobench.pooling.collate`: zero-padded to
        the longest), so padded (``flatten``) embeddings of one subset share one width.
        """
        from audiobench.pooling import collate

        kept, arrays = self.embed(clips, description) if clips else ([], [])
        if not kept:
            return [], np.zeros((0, 0))
        return kept, collate(arrays, ids=[c.id for c in kept])

    def embed_text(self, texts: Sequence[str], description: str) -> np.ndarray:
        """Text embeddings ``[n, D]`` in the audio space (audio-text encoders only)."""
        raise NotImplementedError(f"model {self.encoder.meta.name!r} has no text encoder")

    def outputs(
        self, clips: Sequence[Clip], description: str, output: OutputType
    ) -> tuple[list[Clip], list[TextOutput]]:
        """The clips that could be processed and the encoder's text ``output`` for each
        (a transcript, timed words...), cached and aligned as :meth:`embed`'s embeddings."""
        raise NotImplementedError(f"{type(self).__name__} produces no {output} outputs")

    @abstractmethod
    def track(self, description: str, total: int, unit: str) -> Any:
        """A progress bar (``advance(n)``, ``close()``) for a family's own long work."""

    #: ``"skip"``: clips that cannot be used are left out and recorded; ``"raise"``: stop.
    on_error: str = "raise"

    def skip(self, clips: Sequence[Clip], reason: str) -> None:
        """Record ``clips`` as left out at scoring time (only under ``on_error="skip"``)."""
        raise NotImplementedError(f"{type(self).__name__} cannot record skipped clips")

    def with_encoder(self, encoder: Encoder, *, allow_duplicates: bool | None = None) -> Embedder:
        """An embedder for another ``encoder`` (a family's reference model).

        It shares this one's cache, error policy, batch size, progress display and record
        of skipped clips. ``allow_duplicates`` (None: as this embedder) accepts clips of one
        subset that hold the same waveform, e.g. two reconstructions a codec made identical.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot embed with another encoder")


class Task(ABC):
    """Base of every task. Subclass a family class, not this one.

    :meth:`evaluate` is the one evaluation loop: it groups clips into subsets,
    checks them, calls the family's :meth:`evaluate_subset` for each, averages
    public and blind subsets apart (:meth:`summarize`) and looks up the main
    score in the headline average. A family supplies ``Options``, ``Report``,
    ``Summary``, :meth:`evaluate_subset` and, where its scores nest,
    :meth:`summarize`; a concrete
    task supplies ``metadata`` (and, optionally, other option defaults).
    """

    metadata: ClassVar[TaskMetadata]
    family: ClassVar[TaskFamily]
    #: The family's knobs; ``options`` holds the task's defaults, then the run's values.
    Options: ClassVar[type[TaskOptions]] = TaskOptions
    options: TaskOptions = TaskOptions()
    #: Typed scores of one subset, and of the mean over subsets.
    Report: ClassVar[type[Report]] = Report
    Summary: ClassVar[type[Summary]] = Summary
    #: Aggregate key of the public subsets' mean (blind subsets average under ``"blind"``).
    public_group: ClassVar[str] = "mean"
    #: Write the aggregate even for a single subset (VocSim's public/blind table does).
    always_aggregate: ClassVar[bool] = False
    #: Path prefix of the main score inside ``Summary`` (e.g. ``("configs",)``).
    score_root: ClassVar[tuple[str, ...]] = ()
    #: Every clip must carry a label (families that score against labels).
    needs_labels: ClassVar[bool] = True
    #: The encoder output the family scores; a model that does not produce it is refused
    #: before any work (:func:`audiobench.outputs.require_output`).
    needs_output: ClassVar[OutputType] = OutputType.EMBEDDING
    #: Other outputs the family scores instead (reasoning: an answer text); a model that
    #: produces one of them is not refused for lacking ``needs_output``.
    also_scores: ClassVar[frozenset[OutputType]] = frozenset()

    def __init__(
        self,
        *,
        dataset_path: str | Path | None = None,
        revision: str | None = None,
        subsets: Sequence[str] | None = None,
        device: str | None = None,
        options: Mapping[str, Any] | TaskOptions | None = None,
        allow_outside_paths: bool = False,
        **option_values: Any,
    ) -> None:
        self.dataset_path = Path(dataset_path) if dataset_path is not None else None
        self.dataset_revision = revision if revision is not None else self.metadata.revision
        self.selected_subsets = tuple(subsets) if subsets else None
        #: Torch device for family work that can use one (scoring grids, neural probes).
        self.device = device
        #: Read label-table entries that resolve outside the dataset folder (explicit opt-in).
        self.allow_outside_paths = allow_outside_paths
        given = options.model_dump() if isinstance(options, TaskOptions) else dict(options or {})
        self.options = self.resolve_options({**given, **option_values})
        #: Run options this task does not take (set by ``evaluate``; recorded in the result).
        self.unused_options: list[str] = []

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if callable(cls.__dict__.get("protocol")):
            # A family written before the rename would silently lose its facts.
            raise TypeError(
                f"{cls.__name__} defines protocol(): the run-wide facts written to a result's "
                "details are now returned by run_facts(); rename the method"
            )
        if "Options" in cls.__dict__ and "options" not in cls.__dict__:
            cls.options = cls.Options()  # a family's defaults are its Options' defaults
        if not isinstance(cls.options, cls.Options):
            raise TypeError(
                f"{cls.__name__}.options must be a {cls.Options.__qualname__}, "
                f"not {type(cls.options).__qualname__}"
            )
        meta = cls.__dict__.get("metadata")
        if meta is None:
            return
        family = getattr(cls, "family", None)
        if family is None:
            raise TypeError(f"task {meta.name}: subclass a family class, not Task")
        if meta.family is not None and meta.family != family:
            raise TypeError(
                f"task {meta.name}: declares family {meta.family}, its base is {family}"
            )
        cls.metadata = meta.model_copy(update={"family": family})
        cls.check_main_score(parse_score_path(meta.main_score))

    @classmethod
    def check_main_score(cls, path: tuple[str, ...]) -> None:
        """Raise ``ValueError`` if ``path`` cannot name a number in this family's summary."""
        return None

    @classmethod
    def require_main_score(cls, path: tuple[str, ...], known: Sequence[str]) -> None:
        """Raise ``ValueError`` unless ``path`` reads one of ``known`` (a family's check)."""
        if ":".join(path) not in known:
            raise ValueError(
                f"task {cls.metadata.name}: main score {':'.join(path)!r} is not one of "
                f"{list(known)}"
            )

    @classmethod
    def resolve_options(cls, values: Mapping[str, Any]) -> TaskOptions:
        """The task's defaults with ``values`` applied, validated; errors name the task.

        An option given under its old name (``Options.renamed``) is read under its new one,
        with a :class:`~audiobench.options.DeprecatedOptionWarning`.
        """
        values = current_option_names(cls.Options, values, where=f"task {cls.metadata.name}")
        unknown = sorted(k for k in values if k not in cls.Options.model_fields)
        if unknown:
            accepted = ", ".join(cls.Options.model_fields) or "none"
            raise OptionError(
                f"task {cls.metadata.name}: unknown option(s) {', '.join(unknown)}; "
                f"accepted: {accepted}"
            )
        fields = cls.Options.model_fields
        values = {k: _sequence_from_text(fields[k].annotation, v) for k, v in values.items()}
        try:
            return cls.Options.model_validate({**cls.options.model_dump(), **values})
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc']))}: {str(e['msg']).removeprefix('Value error, ')}"
                for e in exc.errors(include_url=False)
            )
            raise OptionError(f"task {cls.metadata.name}: invalid option {problems}") from None

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def main_score_path(self) -> tuple[str, ...]:
        return (*self.score_root, *parse_score_path(self.metadata.main_score))

    @classmethod
    def summary_score(cls, summary: Mapping[str, Any] | None, spec: str) -> float | None:
        """The number that score ``spec`` (main-score grammar) names in a summary's JSON."""
        if summary is None:
            return None
        return score_at(summary, (*cls.score_root, *parse_score_path(spec)))

    def subsets_to_run(self) -> tuple[str, ...]:
        """Subsets evaluated in this run (all declared ones unless narrowed)."""
        declared = self.metadata.subsets
        if not self.selected_subsets:
            return declared
        unknown = [s for s in self.selected_subsets if declared and s not in declared]
        if unknown:
            raise DataError(
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

    def load_data(
        self, progress: Callable[[str], None] | None = None, *, missing_ok: bool = False
    ) -> list[Clip]:
        """All clips of the task's subsets to run, in dataset order.

        ``missing_ok`` keeps label-table entries whose file is missing, for the runner to
        skip and record under ``on_error="skip"`` (otherwise they are an error here). A
        subset asked for (``--subset``) that the data does not hold is an error.
        """
        say = progress or (lambda _msg: None)
        wanted = self._subsets_available(say)
        clips = self.read_clips(say, missing_ok=missing_ok)
        if not wanted:
            return clips
        held = {c.subset for c in clips}
        absent = [s for s in self.selected_subsets or () if s in wanted and s not in held]
        if absent:
            from audiobench.sources import DatasetError

            present = sorted(s for s in held if s is not None)
            raise DatasetError(
                f"task {self.name}: the data holds no subset {', '.join(map(repr, absent))}; "
                + (f"its subsets: {', '.join(present)}" if present else "its clips carry no subset")
            )
        keep = set(wanted)
        return [c for c in clips if c.subset in keep]

    def read_clips(self, say: Callable[[str], None], *, missing_ok: bool) -> list[Clip]:
        """Every clip of the task's data source, in dataset order (``load_data`` selects)."""
        from audiobench import sources

        meta = self.metadata
        return sources.load_source(
            meta.dataset,
            meta.columns,
            meta.splits,
            name=meta.name,
            revision=self.dataset_revision,
            local_copy=self.dataset_path,
            generate=self.generate_data if meta.dataset.kind == "synthetic" else None,
            progress=say,
            allow_outside=self.allow_outside_paths,
            allow_duplicates=bool(getattr(self, "allow_duplicates", False)),
            missing_ok=missing_ok,
        )

    def _subsets_available(self, say: Callable[[str], None]) -> tuple[str, ...]:
        """The subsets to run; blind ones only where a local copy was given.

        Blind subsets are never published; they exist only in an owner's local copy.
        """
        from audiobench.sources import DatasetError

        meta = self.metadata
        wanted = self.subsets_to_run()
        if self.dataset_path is not None or not meta.blind_subsets:
            return wanted
        blind = [s for s in wanted if s in meta.blind_subsets]
        if not blind:
            return wanted
        rest = tuple(s for s in wanted if s not in meta.blind_subsets)
        if not rest:
            raise DatasetError(
                f"task {meta.name}: subsets {blind} are blind and not on the hub; "
                "point --dataset at the local copy that holds them"
            )
        say(
            f"blind subsets {', '.join(blind)} are evaluated only from a local copy "
            "(--dataset); leaving them out"
        )
        return rest

    def generate_data(self, directory: Path) -> None:
        """Write the task's audio and labels into ``directory`` (synthetic tasks only)."""
        source = self.metadata.dataset
        if not isinstance(source, Synthetic):
            raise NotImplementedError(f"task {self.name} has no data generator")
        source.generate(directory, self.metadata.sample_rate)

    # ------------------------------------------------------------------ evaluation

    def evaluate(self, embedder: Embedder, clips: Sequence[Clip]) -> TaskScores:
        """Score the encoder behind ``embedder`` on ``clips``, subset by subset."""
        if not clips:
            raise DataError(f"task {self.name}: no clips to evaluate")
        reports: dict[str, _reports.Report] = {}
        per_subset_details: dict[str, dict[str, Any]] = {}
        for name, members in self.clips_by_subset(clips).items():
            subset = Subset(name=name, clips=members, task=self.name)
            if self.needs_labels:
                self._check_labels(subset)
            report = self._evaluate_skipping(embedder, subset)
            if not isinstance(report, self.Report):
                raise TypeError(
                    f"{type(self).__name__}.evaluate_subset returned "
                    f"{type(report).__name__}, not {self.Report.__name__}"
                )
            reports[name] = report
            for key, value in subset.details.items():
                per_subset_details.setdefault(key, {})[name] = value
        blind = set(self.metadata.blind_subsets)
        summaries: dict[str, _reports.Summary] = {}
        for group, names in (
            (self.public_group, [s for s in reports if s not in blind]),
            ("blind", [s for s in reports if s in blind]),
        ):
            if names:
                summaries[group] = self.summarize({s: reports[s] for s in names})
        headline = summaries.get(self.public_group) or summaries["blind"]
        written = self.always_aggregate or len(reports) > 1
        return TaskScores(
            main_score=score_at(headline, self.main_score_path),
            # Blind subsets leave the machine only as averages.
            scores={s: r.to_json() for s, r in reports.items() if s not in blind},
            aggregates={g: s.to_json() for g, s in summaries.items()} if written else {},
            details={**self.run_facts(), **per_subset_details},
        )

    def _evaluate_skipping(self, embedder: Embedder, subset: Subset) -> _reports.Report:
        """``evaluate_subset``, leaving out clips found unusable at scoring time under skip.

        A metric that rejects some clips' embeddings (a constant vector under
        Spearman, a zero vector under cosine) names them; with ``on_error="skip"``
        they are recorded as skipped and the subset is scored again without them.
        """
        from audiobench.metrics.errors import InvalidEmbeddingsError

        while True:
            try:
                return self.evaluate_subset(embedder, subset)
            except InvalidEmbeddingsError as exc:
                bad = {str(i) for i in exc.clip_ids}
                dropped = [c for c in subset.clips if c.id in bad]
                if embedder.on_error != "skip" or not dropped:
                    raise
                embedder.skip(dropped, f"unusable for scoring: {exc}")
                subset.clips = [c for c in subset.clips if c.id not in bad]
                subset.details.clear()

    def _check_labels(self, subset: Subset) -> None:
        from audiobench.metrics.naming import describe_clips

        unlabelled = [c.id for c in subset.clips if c.label is None]
        if unlabelled:
            raise DataError(
                f"{subset.where}: {len(unlabelled)} clip(s) have no label: "
                f"{describe_clips(unlabelled)}"
            )

    @abstractmethod
    def evaluate_subset(self, embedder: Embedder, subset: Subset) -> _reports.Report:
        """The family's scores of one subset (an instance of ``self.Report``)."""

    def summarize(self, reports: Mapping[str, _reports.Report]) -> _reports.Summary:
        """The unweighted mean over ``reports`` (subset name -> report), as ``self.Summary``.

        By default the mean of every number the reports share with the summary
        (:func:`~audiobench.reports.mean_summary`); a family whose scores nest overrides it.
        """
        return _reports.mean_summary(self.Summary, reports)

    def run_facts(self) -> dict[str, Any]:
        """Run-wide facts of the evaluation recorded in the result's ``details``.

        (Called ``protocol()`` before; "protocol" names the scoring protocol only.)
        """
        return {}

    def highlights(self, scores: TaskScores) -> list[str]:
        """A few lines that sum up a run for the terminal (default: the main score)."""
        main = "undefined" if scores.main_score is None else f"{scores.main_score:.4f}"
        return [f"{self.metadata.main_score} = {main}"]

    def embedding_passes(self, encoder: Encoder) -> tuple[bool, ...]:
        """The embedding passes a run makes: ``True`` pooled vectors, ``False`` frame outputs.

        The Ray stage fills the cache for exactly these before the local pass; a pass left
        out here is only slower (the local pass encodes whatever the cache lacks).
        """
        return (True,)

    @classmethod
    def check_encoder(cls, encoder: Encoder) -> None:
        """Raise a clear error if ``encoder`` lacks what this family needs."""
        return None  # most families need nothing beyond audio encoding

    # ------------------------------------------------------------------ validation

    @classmethod
    def score_problems(cls, scores: Mapping[str, Any]) -> list[str]:
        """What is wrong with a result file's ``scores`` (or ``aggregates``) mapping.

        Each subset's entry is validated by ``Report``, each aggregate group
        (``public_group`` or ``"blind"``) by ``Summary``. Each problem is one
        ``"<path inside the mapping>: <message>"`` string.
        """
        meta = getattr(cls, "metadata", None)
        if meta is None:  # an abstract base: nothing declared to check against
            return []
        declared = meta.subsets or (DEFAULT_SUBSET,)
        groups = (cls.public_group, "blind")
        problems: list[str] = []
        for key, entry in scores.items():
            if key in groups and key not in declared:
                problems += problems_of(cls.Summary, entry, key)
                members = entry.get("subsets") if isinstance(entry, Mapping) else None
                for i, member in enumerate(members if isinstance(members, list) else []):
                    if member not in declared:
                        problems.append(f"{key}.subsets[{i}]: unknown subset {member!r}")
                    elif (member in meta.blind_subsets) != (key == "blind"):
                        kind = "blind" if member in meta.blind_subsets else "public"
                        problems.append(f"{key}.subsets[{i}]: {member} is a {kind} subset")
            elif key in meta.blind_subsets:
                problems.append(
                    f"{key}: blind subset: only its public/blind averages may be written"
                )
            elif key not in declared:
                problems.append(f"{key}: unknown subset; the task declares {', '.join(declared)}")
            else:
                problems += problems_of(cls.Report, entry, key)
        return problems


def error_in_context(exc: ValueError, where: str) -> ValueError:
    """The same kind of error, its message prefixed with where it happened."""
    from audiobench.metrics.errors import InvalidEmbeddingsError
    from audiobench.probes import GroupLeakError, MissingClassError

    message = f"{where}: {exc}"
    if isinstance(exc, MissingClassError):
        return MissingClassError(message, exc.classes, exc.split)
    if isinstance(exc, GroupLeakError):
        return GroupLeakError(message, exc.groups, exc.split)
    if isinstance(exc, InvalidEmbeddingsError):
        return InvalidEmbeddingsError(message, exc.clip_ids)
    try:
        return type(exc)(message)
    except TypeError:  # an exception type with a richer constructor
        return ValueError(message)


def _sequence_from_text(annotation: Any, value: Any) -> Any:
    """``"linear,knn"`` -> ``["linear", "knn"]`` for a sequence option given as text.

    Each item is read as JSON where it parses (``"null,100"`` -> ``[None, 100]``).
    """
    if not isinstance(value, str):
        return value
    kinds = (annotation, *typing.get_args(annotation))
    if not any(typing.get_origin(k) in (tuple, list) for k in kinds):
        return value
    items = []
    for text in (part.strip() for part in value.split(",")):
        if not text:
            continue
        try:
            items.append(json.loads(text))
        except json.JSONDecodeError:
            items.append(text)
    return items
