"""Perceptual alignment: do embedding distances agree with listeners' judgments?

Follows VocSim's avian-perception benchmark (zebra finch judgments of song
syllables, Zandberg et al. 2024), generalised to any listeners.

**Trials.** Two kinds, each naming clips by a *key*: the clip id, or the
metadata column named by the ``trial_key`` option (the avian set's
``original_name``, e.g. ``M2020_2.wav``).

- *Triplets* (anchor a, positive p, negative n): listeners judged p closer
  to a than n. The model is right when d(a, p) < d(a, n).
- *Two-alternative forced choice* (AXB probes): a probe x and two
  alternatives, left and right; listeners chose one (``decision``). The
  model chooses the closer alternative and is right when it chooses the
  same one.

Trials come from *trial tables* (CSV files, columns matched
case-insensitively; options ``triplet_file``, ``probe_file`` and
``trial_columns``): ``triplets.csv`` with ``anchor``, ``positive``,
``negative`` and optionally ``margin_type``; ``probes.csv`` with
``sound_id`` (or ``anchor``/``probe``), ``left``, ``right``, ``decision``
(``left``/``right``; anything else, e.g. ``NA`` for no response, is a
counted skip). These are VocSim's files. Tables are looked for beside a
local copy (``--dataset``), in a ``folder`` source, or in the hub dataset
repository at the pinned revision. Trials can also ride on the clips
themselves: a clip whose metadata (extra columns of ``labels.csv``) has
``positive`` and ``negative`` is the anchor of a triplet; one with ``left``,
``right`` and ``decision`` is the probe of a 2AFC trial. A task with several
subsets scores each on its own clips: a trial naming a clip of another
subset names a clip that subset lacks.

**Scores**, per subset and distance (option ``distances``, via
:func:`audiobench.vocsim.pairwise_distances` on the pooled embeddings,
float64), in ``scores[subset][distance][kind][group]`` (:class:`TrialScores`):
for triplets, accuracy over ``all`` of them and over each ``margin_type``
group (VocSim's ``high``); for 2AFC, over ``all`` answered trials and over
the ``consistent`` ones: judgments grouped by (probe, pair of alternatives),
kept when the majority choice has at least ``consistency_threshold`` of the
votes, scored once with the majority choice. (VocSim's reference code groups
by probe alone; grouping by the whole trial keeps judgments of different
pairs apart.) Each entry has accuracy, n, n_correct, n_ties, a one-sided
exact binomial p-value against 50 % (:func:`audiobench.metrics.binomial_p_value`)
and a percentile bootstrap 95 % interval over trials (options
``n_bootstrap``, ``seed``). An exact distance tie counts half in both kinds,
so constant embeddings score exactly chance. The summary
(``aggregates["mean"]``, written even for one subset) holds the mean
accuracy over subsets at ``[distance]["<kind>/<group>"]``.

Main score: the task's ``main_score`` in the shared grammar
(:func:`audiobench.reports.parse_score_path`), ``"<distance>:<kind>/<group>"``,
by default ``"cosine:triplet/all"`` (triplet accuracy under cosine distance).

**Bad input.** A trial naming a clip the dataset does not have is an error
naming the trial (option ``missing_members="error"``), or, where the
published trials are known to cover more clips than the published audio
(``"skip"``), a counted skip with examples in ``details``. Trials whose
clips were dropped under ``--on-error skip`` are always counted skips.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import numpy as np
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from audiobench.audio import Clip
from audiobench.errors import DataError
from audiobench.reports import (
    Count,
    KeyedReport,
    NonNegative,
    Report,
    Summary,
    Unit,
    mean_or_none,
    parse_score_path,
    score_at,
)
from audiobench.sources import check_cell, read_csv_table
from audiobench.task import Embedder, Subset, Task, TaskFamily, TaskOptions

__all__ = [
    "PerceptualAlignmentTask",
    "PerceptualReport",
    "PerceptualSummary",
    "Trial",
    "TrialColumns",
    "TrialScores",
    "consistent_trials",
    "read_probe_table",
    "read_triplet_table",
]

TRIPLET = "triplet"
TWO_AFC = "2afc"
KINDS = (TRIPLET, TWO_AFC)
ALL = "all"
CONSISTENT = "consistent"
#: How many offending trials a message or ``details`` lists.
EXAMPLES = 10
#: Distances :func:`audiobench.vocsim.pairwise_distances` computes (named here so that
#: declaring a task imports no numerics; a test keeps the two equal).
DISTANCES: tuple[str, ...] = ("cosine", "euclidean", "spearman")


class TrialColumns(BaseModel):
    """Trial fields, as column names (matched case-insensitively) or clip-metadata keys."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    anchor: tuple[str, ...] = ("anchor", "sound_id", "probe")
    positive: str = "positive"
    negative: str = "negative"
    margin: str = "margin_type"
    left: str = "left"
    right: str = "right"
    decision: str = "decision"

    def of(self, kind: str) -> tuple[str, str, str]:
        """A ``kind`` trial's first and second clip, then its margin group or decision."""
        if kind == TRIPLET:
            return (self.positive, self.negative, self.margin)
        return (self.left, self.right, self.decision)


#: VocSim's column names.
DEFAULT_COLUMNS = TrialColumns()


@dataclass(frozen=True)
class Trial:
    """One judgment: listeners found ``first`` (choice 0) or ``second`` (1) closer to ``anchor``.

    Triplets always have ``first`` = positive, ``second`` = negative, choice 0;
    2AFC trials have ``first`` = left, ``second`` = right.
    """

    where: str  # for messages: "triplets.csv line 7", "clip 'c01' (labels)"
    kind: str
    anchor: str
    first: str
    second: str
    choice: int = 0
    group: str | None = None

    @property
    def members(self) -> tuple[str, str, str]:
        return (self.anchor, self.first, self.second)


def _trial(where: str, kind: str, anchor: str, first: str, second: str, last: str) -> Trial | None:
    """A trial whose ``last`` field holds its margin group (triplet) or decision (2AFC).

    None: a 2AFC trial without an answer (a decision other than ``left``/``right``).
    """
    if kind == TRIPLET:
        return Trial(where, kind, anchor, first, second, group=last.lower() or None)
    choice = {"left": 0, "right": 1}.get(last.strip().lower())
    return None if choice is None else Trial(where, kind, anchor, first, second, choice)


def _read_table(path: Path, kind: str, columns: TrialColumns) -> tuple[list[Trial], list[str]]:
    """Trials of ``kind`` from a CSV table, in file order, and where decisions were missing.

    A field's column is the first of its names among the headers, matched case-insensitively;
    a missing column is an error, except a triplet table's margin group.
    """
    fields = [columns.anchor, *([name] for name in columns.of(kind))]
    # A triplet's margin group is optional: without its column every group reads as empty.
    required = fields[:3] if kind == TRIPLET else fields
    # Read as strictly as labels.csv: UTF-8, no repeated or padded column names, no ragged
    # rows, and no invisible character in a cell that names a clip.
    rows = read_csv_table(path)
    headers = rows[0][1] if rows else []
    lower = {f.lower(): f for f in headers}
    found = [
        next((lower[n.lower()] for n in names if n.lower() in lower), None) for names in fields
    ]
    for names, column in zip(required, found[: len(required)], strict=True):
        if column is None:
            raise ValueError(f"{path}: needs a column named {' or '.join(names)}; found {headers}")
    positions = {name: position for position, name in enumerate(headers, start=1)}
    trials, unanswered = [], []
    for line, row in rows[1:]:
        values = dict(zip(headers, row, strict=True))
        for column in found:
            if column is not None:
                check_cell(path, line, positions[column], column, values[column])
        anchor, first, second, last = (values[c].strip() if c else "" for c in found)
        where = f"{path.name} line {line}"
        trial = _trial(where, kind, anchor, first, second, last)
        if trial is None:
            unanswered.append(where)
        else:
            trials.append(trial)
    return trials, unanswered


def read_triplet_table(path: Path, columns: TrialColumns = DEFAULT_COLUMNS) -> list[Trial]:
    """Triplets from a CSV table (VocSim's ``triplets.csv``), in file order."""
    return _read_table(path, TRIPLET, columns)[0]


def read_probe_table(
    path: Path, columns: TrialColumns = DEFAULT_COLUMNS
) -> tuple[list[Trial], list[str]]:
    """2AFC trials from a CSV table (VocSim's ``probes.csv``), and where decisions were missing."""
    return _read_table(path, TWO_AFC, columns)


def consistent_trials(trials: Sequence[Trial], threshold: float) -> tuple[list[Trial], int]:
    """One trial per (probe, pair of alternatives) whose majority choice has ≥ ``threshold``.

    Votes count the chosen clip, so a pair shown left/right in one session
    and right/left in another is one trial. The kept trial has the first
    occurrence's layout and the majority choice. Returns the kept trials
    (in first-occurrence order) and how many groups fell below the
    threshold (an exact split always does: it has no majority).
    """
    groups: dict[tuple[str, frozenset[str]], list[Trial]] = {}
    for trial in trials:
        groups.setdefault((trial.anchor, frozenset((trial.first, trial.second))), []).append(trial)
    kept = []
    for members in groups.values():
        ranked = Counter(t.second if t.choice else t.first for t in members).most_common(2)
        (winner, top), runner_up = ranked[0], ranked[1:]
        if (runner_up and runner_up[0][1] == top) or top / len(members) < threshold:
            continue
        first = members[0]
        repeats = f" (+{len(members) - 1} repeats)" if len(members) > 1 else ""
        choice = 0 if winner == first.first else 1
        kept.append(replace(first, where=first.where + repeats, choice=choice, group=CONSISTENT))
    return kept, len(groups) - len(kept)


def _distance_name(name: str) -> str:
    if name not in DISTANCES:
        raise ValueError(f"unknown distance {name!r}; known: {', '.join(DISTANCES)}")
    return name


def _kind_name(name: str) -> str:
    if name not in KINDS:
        raise ValueError(f"unknown trial kind; known: {', '.join(KINDS)}")
    return name


def _main_parts(path: tuple[str, ...]) -> tuple[str, str, str] | None:
    """("cosine", "triplet/all") -> ("cosine", "triplet", "all"); None if it is no such path."""
    kind, slash, group = path[-1].partition("/")
    ok = len(path) == 2 and slash and group and kind in KINDS
    return (path[0], kind, group) if ok else None


def _trial_set(name: str) -> str:
    if _main_parts(("", name)) is None:
        raise ValueError(f"must read '<kind>/<group>' with kind in {', '.join(KINDS)}")
    return name


DistanceName = Annotated[str, AfterValidator(_distance_name)]
KindName = Annotated[str, AfterValidator(_kind_name)]
GroupName = Annotated[str, Field(min_length=1)]
#: ``"<kind>/<group>"``, e.g. ``"triplet/all"``: one scored set of trials in a summary.
TrialSetName = Annotated[str, AfterValidator(_trial_set)]


class TrialScores(Report):
    """Accuracy of one set of trials under one distance, its test and its interval."""

    accuracy: Unit
    n: Annotated[int, Field(ge=1)]
    n_correct: NonNegative = Field(description="Agreements; an exact tie counts half.")
    n_ties: Count
    p_value: Unit = Field(description="One-sided exact binomial test against 50 %.")
    ci95: tuple[Unit, Unit] | None = Field(
        default=None, description="Percentile bootstrap 95 % interval (None: no bootstrap)."
    )

    @model_validator(mode="after")
    def _consistent(self) -> TrialScores:
        for name, value in (("n_correct", self.n_correct), ("n_ties", self.n_ties)):
            if value > self.n:
                raise ValueError(f"{name} {value!r} is more than n = {self.n}")
        if abs(self.accuracy - self.n_correct / self.n) > 1e-9:
            raise ValueError(f"accuracy {self.accuracy!r} is not n_correct / n")
        # Agreements are whole trials, a tie half of one.
        if self.n_correct * 2 != round(self.n_correct * 2):
            raise ValueError(f"n_correct {self.n_correct!r} is not a whole or half count")
        if self.ci95 is not None and self.ci95[0] > self.ci95[1]:
            raise ValueError(f"ci95: low {self.ci95[0]!r} > high {self.ci95[1]!r}")
        return self


class PerceptualReport(KeyedReport):
    """One subset: distance -> trial kind (``triplet``, ``2afc``) -> trial group -> scores."""

    __pydantic_extra__: dict[DistanceName, dict[KindName, dict[GroupName, TrialScores]]] = Field(
        init=False
    )


class PerceptualSummary(Summary, KeyedReport):
    """Mean accuracy over subsets: distance -> ``"<kind>/<group>"`` -> mean (None: undefined)."""

    __pydantic_extra__: dict[DistanceName, dict[TrialSetName, Unit | None]] = Field(init=False)


#: Any family's report (inside the task class, ``Report`` names this family's).
_AnyReport = Report


class PerceptualAlignmentTask(Task):
    """Base class of perceptual-alignment tasks; subclasses declare metadata and trial sources."""

    family: ClassVar[TaskFamily] = TaskFamily.PERCEPTUAL_ALIGNMENT
    Report = PerceptualReport
    Summary = PerceptualSummary
    # The main score lives in the summary's "<kind>/<group>" keys: write it for one subset too.
    always_aggregate = True
    # Trials, not labels, are what clips are scored against.
    needs_labels = False

    class Options(TaskOptions):
        distances: tuple[DistanceName, ...] = Field(
            DISTANCES, min_length=1, description="Distances scored; the main score's is added."
        )
        n_bootstrap: int = Field(1000, ge=0, description="Bootstrap resamples (0: no interval).")
        seed: int = Field(0, description="Seed of the bootstrap.")
        trial_key: str | None = Field(
            None, description="Metadata column whose value names a clip in trials; None: clip id."
        )
        triplet_file: str | None = Field(
            "triplets.csv", description="Triplet table, relative to the dataset root; None: none."
        )
        probe_file: str | None = Field(
            "probes.csv", description="2AFC table, relative to the dataset root; None: none."
        )
        trial_columns: TrialColumns = DEFAULT_COLUMNS
        missing_members: Literal["error", "skip"] = Field(
            "error", description="A trial naming a clip the dataset lacks: an error, or a skip."
        )
        consistency_threshold: float | None = Field(
            0.7,
            gt=0.0,
            le=1.0,
            description="Majority share for the 'consistent' 2AFC set (VocSim: 0.7); None: none.",
        )

    options: Options = Options()

    @classmethod
    def check_main_score(cls, path: tuple[str, ...]) -> None:
        """``<distance>:<kind>/<group>``: a known distance and trial kind, and a group."""
        parts = _main_parts(path)
        if parts is None:
            raise ValueError(
                f"task {cls.metadata.name}: main score {':'.join(path)!r} must read "
                f"'<distance>:<kind>/<group>' with kind in {KINDS}"
            )
        if parts[0] not in DISTANCES:
            raise ValueError(
                f"task {cls.metadata.name}: main score names unknown distance {parts[0]!r}; "
                f"known: {', '.join(DISTANCES)}"
            )

    @classmethod
    def summary_score(cls, summary: Mapping[str, Any] | None, spec: str) -> float | None:
        """As :meth:`Task.summary_score`; also reads one subset's report.

        A file without aggregates (version 1, written before the summary
        existed) has only its report: ``"cosine:triplet/all"`` is the
        ``accuracy`` at ``[cosine][triplet][all]`` there.
        """
        value = super().summary_score(summary, spec)
        if value is not None or summary is None or "subsets" in summary:
            return value
        parts = _main_parts(parse_score_path(spec))
        return None if parts is None else score_at(summary, (*parts, "accuracy"))

    @property
    def distance_names(self) -> tuple[str, ...]:
        """The distances scored: the option's, then the main score's if it is not among them."""
        main = parse_score_path(self.metadata.main_score)[0]
        return tuple(dict.fromkeys((*self.options.distances, main)))

    def run_facts(self) -> dict[str, Any]:
        o = self.options
        distance, kind, group = _main_parts(parse_score_path(self.metadata.main_score)) or ("",) * 3
        return {
            "distances": list(self.distance_names),
            "main": {"distance": distance, "kind": kind, "group": group},
            "trial_key": o.trial_key or "clip id",
            "missing_members_rule": o.missing_members,
            "consistency_threshold": o.consistency_threshold,
            "ties": "an exact distance tie counts half a correct trial",
            "bootstrap": {"n": o.n_bootstrap, "seed": o.seed, "interval": "percentile 95 %"},
        }

    # -- trials --------------------------------------------------------------------

    def clip_key(self, clip: Clip) -> str:
        """The name trials use for ``clip``."""
        key = self.options.trial_key
        if key is None:
            return clip.id
        value = clip.metadata.get(key)
        if value is None or not str(value).strip():
            raise DataError(
                f"task {self.name}: clip {clip.id!r} ({clip.audio.location}) has no "
                f"{key!r}, the column trials use to name clips"
            )
        return str(value).strip()

    def _table_root(self) -> Path | None:
        if self.dataset_path is not None:
            return self.dataset_path if self.dataset_path.is_dir() else self.dataset_path.parent
        if self.metadata.dataset.kind == "folder":
            return Path(self.metadata.dataset.path).expanduser()
        return None

    def trial_tables(self) -> tuple[dict[str, Path], list[str]]:
        """Trial tables found (kind -> path), and notes on those looked for and not found."""
        wanted = {TRIPLET: self.options.triplet_file, TWO_AFC: self.options.probe_file}
        found: dict[str, Path] = {}
        notes: list[str] = []
        root = self._table_root()
        for kind, name in wanted.items():
            if not name:
                continue
            if root is not None:
                if (root / name).is_file():
                    found[kind] = root / name
                else:
                    notes.append(f"no {name} in {root}")
            elif self.metadata.dataset.kind == "huggingface":  # no local copy: fetch
                from huggingface_hub import hf_hub_download

                source, revision = self.metadata.dataset.path, self.dataset_revision
                try:
                    path = hf_hub_download(source, name, repo_type="dataset", revision=revision)
                    found[kind] = Path(path)
                except Exception as exc:  # missing file, no network: both mean "not there"
                    problem = f"{type(exc).__name__}: {exc}"
                    notes.append(f"{name} not fetched from {source}@{revision}: {problem}")
        return found, notes

    def load_trials(self, clips: Sequence[Clip], where: str) -> tuple[list[Trial], dict[str, Any]]:
        """Every trial, from the tables and the clips' metadata, and where they came from.

        ``where`` prefixes error messages.
        """
        columns = self.options.trial_columns
        tables, notes = self.trial_tables()
        trials, unanswered = [], []
        for clip in clips:
            meta = {str(k).lower(): str(v).strip() for k, v in clip.metadata.items()}
            on_clip = f"clip {clip.id!r} ({clip.audio.location})"
            for kind in KINDS:
                a, b, last = columns.of(kind)
                first, second = meta.get(a, ""), meta.get(b, "")
                if not (first or second):
                    continue
                if not (first and second):
                    raise DataError(
                        f"{where}: {on_clip} has one of {a!r} and {b!r} but not the other"
                    )
                # The clip is the anchor; its key is looked up only for an answered trial.
                trial = _trial(on_clip, kind, "", first, second, meta.get(last, ""))
                if trial is None:
                    unanswered.append(on_clip)
                else:
                    trials.append(replace(trial, anchor=self.clip_key(clip)))
        sources: list[dict[str, Any]] = []
        if trials or unanswered:
            sources.append({"source": "clip metadata", "n_rows": len(trials) + len(unanswered)})
        for kind, path in tables.items():
            rows, missing = _read_table(path, kind, columns)
            trials += rows
            unanswered += missing
            sources.append({"source": str(path), "kind": kind, "n_rows": len(rows) + len(missing)})
        if not trials:
            raise DataError(
                f"{where}: no trials found: no clip carries trial columns "
                f"({columns.positive}/{columns.negative} or "
                f"{columns.left}/{columns.right}/{columns.decision}), "
                "and no trial table was found" + (f" ({'; '.join(notes)})" if notes else "")
            )
        return trials, {"sources": sources, "not_found": notes, "unanswered": unanswered}

    # -- evaluation ----------------------------------------------------------------

    def evaluate_subset(self, embedder: Embedder, subset: Subset) -> PerceptualReport:
        from audiobench.vocsim import pairwise_distances

        where, clips = subset.where, subset.clips
        trials, origin = self.load_trials(clips, where)
        keys = [self.clip_key(clip) for clip in clips]
        # Reversed, so that trials reach the first clip with a key.
        index = dict(zip(reversed(keys), reversed(clips), strict=True))

        counts: dict[str, dict[str, int]] = {kind: {} for kind in KINDS}

        def count(what: str, of: Sequence[Trial]) -> None:
            for kind in KINDS:
                counts[kind][what] = sum(t.kind == kind for t in of)

        count("declared", trials)
        counts[TWO_AFC]["unanswered"] = len(origin["unanswered"])
        trials, counts[TRIPLET]["duplicates"] = _drop_duplicate_triplets(trials)

        missing = [t for t in trials if any(m not in index for m in t.members)]
        if missing and self.options.missing_members == "error":
            raise DataError(
                f"{where}: {len(missing)} trial(s) name clips the dataset does not "
                f"have, e.g. {_describe_missing(missing[:3], index)}"
            )
        count("missing_members", missing)
        trials = [t for t in trials if all(m in index for m in t.members)]

        kept, matrix = embedder.embed_matrix(clips, subset.label)
        row_of = {clip.id: i for i, clip in enumerate(kept)}
        position = {key: row_of[c.id] for key, c in index.items() if c.id in row_of}
        dropped = [t for t in trials if any(m not in position for m in t.members)]
        count("unembedded", dropped)
        trials = [t for t in trials if all(m in position for m in t.members)]
        if not trials:
            raise DataError(f"{where}: no trial has all its clips embedded")

        count("evaluated", trials)
        sets = _trial_sets(trials, where)
        threshold = self.options.consistency_threshold
        if (TWO_AFC, ALL) in sets and threshold is not None:
            kept_2afc, n_inconsistent = consistent_trials(sets[(TWO_AFC, ALL)], threshold)
            counts[TWO_AFC].update(consistent=len(kept_2afc), inconsistent_groups=n_inconsistent)
            if kept_2afc:
                sets[(TWO_AFC, CONSISTENT)] = kept_2afc

        used = sorted({m for t in trials for m in t.members})
        local = {key: i for i, key in enumerate(used)}
        X = matrix[[position[k] for k in used]].astype(np.float64)
        # Clip ids, so that clips a metric rejects can be skipped under --on-error skip.
        ids = [index[k].id for k in used]
        scores: dict[str, dict[str, dict[str, TrialScores]]] = {}
        for distance in self.distance_names:
            D = pairwise_distances(X, distance, ids=ids, dtype=np.float64)
            for (kind, group), members in sets.items():
                scores.setdefault(distance, {}).setdefault(kind, {})[group] = _score(
                    D, members, local, self.options.n_bootstrap, self.options.seed
                )

        examples = {
            "missing_members": _describe_missing(missing[:EXAMPLES], index) if missing else None,
            "unembedded": [t.where for t in dropped[:EXAMPLES]],
            "unanswered": origin["unanswered"][:EXAMPLES],
            "duplicate_keys": sorted({k for k, n in Counter(keys).items() if n > 1})[:EXAMPLES],
        }
        subset.details.update(
            trial_sources=origin["sources"],
            trial_tables_not_found=origin["not_found"],
            counts=counts,
            n_duplicate_keys=len(keys) - len(index),
            examples={k: v for k, v in examples.items() if v},
            n_clips_embedded=len(kept),
        )
        return PerceptualReport.model_validate(scores)

    def summarize(self, reports: Mapping[str, _AnyReport]) -> PerceptualSummary:
        """Unweighted mean over subsets of each accuracy (None where a subset lacks it)."""
        means: dict[str, dict[str, float | None]] = {}
        for report in reports.values():
            for distance, kinds in (report.model_extra or {}).items():
                for kind, groups in kinds.items():
                    for group in groups:
                        means.setdefault(distance, {})[f"{kind}/{group}"] = mean_or_none(
                            score_at(r, (distance, kind, group, "accuracy"))
                            for r in reports.values()
                        )
        return PerceptualSummary.model_validate({"subsets": list(reports), **means})


def _trial_sets(trials: Sequence[Trial], where: str) -> dict[tuple[str, str], list[Trial]]:
    """Scored sets, (kind, group) -> trials: each kind's ``all``, then each triplet group."""
    sets = {(kind, ALL): [t for t in trials if t.kind == kind] for kind in KINDS}
    sets = {key: members for key, members in sets.items() if members}
    triplets = sets.get((TRIPLET, ALL), [])
    for group in sorted({t.group for t in triplets if t.group}):
        if group in (ALL, CONSISTENT):
            raise DataError(f"{where}: triplet group name {group!r} is reserved; rename it")
        sets[(TRIPLET, group)] = [t for t in triplets if t.group == group]
    return sets


def _drop_duplicate_triplets(trials: Sequence[Trial]) -> tuple[list[Trial], int]:
    """Repeated identical triplets are one judgment (as VocSim); 2AFC repeats are real votes."""
    # Each judgment (a trial, wherever it was read) -> the position it first appears at.
    first: dict[Trial, int] = {}
    for i, t in enumerate(trials):
        first.setdefault(replace(t, where=""), i)
    out = [t for i, t in enumerate(trials) if t.kind != TRIPLET or first[replace(t, where="")] == i]
    return out, len(trials) - len(out)


def _describe_missing(trials: Sequence[Trial], index: Mapping[str, Clip]) -> str:
    return "; ".join(
        f"{t.where}: " + ", ".join(repr(m) if m else "(blank)" for m in t.members if m not in index)
        for t in trials
    )


def _score(
    D: np.ndarray, trials: Sequence[Trial], local: Mapping[str, int], n_boot: int, seed: int
) -> TrialScores:
    """Accuracy, counts, p-value and bootstrap interval of one set of trials.

    The listeners' choice is the closer clip: a trial is right when the chosen clip is nearer
    the anchor than the other (a triplet's positive always is the chosen one).
    """
    from audiobench.metrics import triplet_accuracy
    from audiobench.vocsim.calibration import bootstrap_interval

    a = np.array([local[t.anchor] for t in trials])
    chosen = D[a, [local[t.second if t.choice else t.first] for t in trials]]
    other = D[a, [local[t.first if t.choice else t.second] for t in trials]]
    # Percentile 95 % interval of the mean of per-trial scores, resampling trials.
    points = np.where(chosen == other, 0.5, (chosen < other).astype(np.float64))
    ci = bootstrap_interval(points, n_boot, seed) if n_boot else None
    return TrialScores(
        **triplet_accuracy(chosen, other), ci95=None if ci is None else (ci.low, ci.high)
    )
