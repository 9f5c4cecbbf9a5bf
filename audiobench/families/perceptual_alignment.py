"""Perceptual alignment: do embedding distances agree with listeners' judgments?

Follows VocSim's avian-perception benchmark (zebra finch judgments of song
syllables, Zandberg et al. 2024), generalised to any listeners.

**Trials.** Two kinds, each naming clips by a *key*: the clip id, or the
metadata column :attr:`PerceptualAlignmentTask.trial_key` (the avian set's
``original_name``, e.g. ``M2020_2.wav``).

- *Triplets* (anchor a, positive p, negative n): listeners judged p closer
  to a than n. The model is right when d(a, p) < d(a, n).
- *Two-alternative forced choice* (AXB probes): a probe x and two
  alternatives, left and right; listeners chose one (``decision``). The
  model chooses the closer alternative and is right when it chooses the
  same one.

Trials come from *trial tables* (CSV files, columns matched
case-insensitively): ``triplets.csv`` with ``anchor``, ``positive``,
``negative`` and optionally ``margin_type``; ``probes.csv`` with
``sound_id`` (or ``anchor``/``probe``), ``left``, ``right``, ``decision``
(``left``/``right``; anything else, e.g. ``NA`` for no response, is a
counted skip). These are VocSim's files. Tables are looked for beside a
local copy (``--dataset``), in a ``folder`` source, or in the hub dataset
repository at the pinned revision. Trials can also ride on the clips
themselves: a clip whose metadata (extra columns of ``labels.csv``) has
``positive`` and ``negative`` is the anchor of a triplet; one with ``left``,
``right`` and ``decision`` is the probe of a 2AFC trial.

**Scores**, per distance (:attr:`distances`, via
:func:`audiobench.metrics.pairwise_distances` on the pooled embeddings,
float64): for triplets, accuracy over ``all`` of them and over each
``margin_type`` group (VocSim's ``high``); for 2AFC, over ``all`` answered
trials and over the ``consistent`` ones: judgments grouped by (probe, pair of
alternatives), kept when the majority choice has at least
:attr:`consistency_threshold` of the votes, scored once with the majority
choice. (VocSim's reference code groups by probe alone; grouping by the
whole trial keeps judgments of different pairs apart.) Each entry has
accuracy, n, n_correct, n_ties, a one-sided exact binomial p-value against
50 % (:func:`audiobench.metrics.binomial_p_value`) and a percentile
bootstrap 95 % interval over trials. An exact distance tie counts half in
both kinds, so constant embeddings score exactly chance.

Main score: the task's ``main_score``, ``"<distance>:<kind>/<group>"``, by
default ``"cosine:triplet/all"`` (triplet accuracy under cosine distance).

**Bad input.** A trial naming a clip the dataset does not have is an error
naming the trial (:attr:`missing_members` ``"error"``), or, where the
published trials are known to cover more clips than the published audio
(``"skip"``), a counted skip with examples in ``details``. Trials whose
clips were dropped under ``--on-error skip`` are always counted skips.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np

from audiobench.audio import Clip
from audiobench.families.score_checks import number_problem
from audiobench.task import Embedder, Task, TaskFamily, TaskScores

__all__ = [
    "PerceptualAlignmentTask",
    "Trial",
    "TrialColumns",
    "consistent_trials",
    "parse_main_score",
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
#: Options of other families a multi-task CLI call may pass; accepted, unused, recorded.


@dataclass(frozen=True)
class TrialColumns:
    """Trial fields, as column names (matched case-insensitively) or clip-metadata keys."""

    anchor: tuple[str, ...] = ("anchor", "sound_id", "probe")
    positive: str = "positive"
    negative: str = "negative"
    margin: str = "margin_type"
    left: str = "left"
    right: str = "right"
    decision: str = "decision"


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


def parse_main_score(spec: str) -> tuple[str, str, str]:
    """``"cosine:triplet/all"`` -> ("cosine", "triplet", "all")."""
    distance, sep, rest = spec.partition(":")
    kind, slash, group = rest.partition("/")
    if not (sep and slash and distance and group) or kind not in KINDS:
        raise ValueError(
            f"main score {spec!r} must read '<distance>:<kind>/<group>' with kind in {KINDS}"
        )
    return distance, kind, group


def _header(fields: Sequence[str], names: Iterable[str], path: Path, required: bool) -> str | None:
    lower = {f.strip().lower(): f for f in fields}
    for name in names:
        if name.lower() in lower:
            return lower[name.lower()]
    if required:
        raise ValueError(f"{path}: needs a column named {' or '.join(names)}; found {list(fields)}")
    return None


def _cell(row: Mapping[str, str | None], column: str | None) -> str:
    return (row.get(column) or "").strip() if column else ""


def read_triplet_table(path: Path, columns: TrialColumns = TrialColumns()) -> list[Trial]:
    """Triplets from a CSV table (VocSim's ``triplets.csv``), in file order."""
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields = reader.fieldnames or []
        anchor = _header(fields, columns.anchor, path, True)
        positive = _header(fields, [columns.positive], path, True)
        negative = _header(fields, [columns.negative], path, True)
        margin = _header(fields, [columns.margin], path, False)
        return [
            Trial(
                where=f"{path.name} line {line}",
                kind=TRIPLET,
                anchor=_cell(row, anchor),
                first=_cell(row, positive),
                second=_cell(row, negative),
                group=_cell(row, margin).lower() or None,
            )
            for line, row in enumerate(reader, start=2)
        ]


def _choice(decision: str) -> int | None:
    return {"left": 0, "right": 1}.get(decision.strip().lower())


def read_probe_table(
    path: Path, columns: TrialColumns = TrialColumns()
) -> tuple[list[Trial], list[str]]:
    """2AFC trials from a CSV table (VocSim's ``probes.csv``), and where decisions were missing."""
    trials, unanswered = [], []
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields = reader.fieldnames or []
        probe = _header(fields, columns.anchor, path, True)
        left = _header(fields, [columns.left], path, True)
        right = _header(fields, [columns.right], path, True)
        decision = _header(fields, [columns.decision], path, True)
        for line, row in enumerate(reader, start=2):
            where = f"{path.name} line {line}"
            choice = _choice(_cell(row, decision))
            if choice is None:
                unanswered.append(where)
                continue
            members = (_cell(row, probe), _cell(row, left), _cell(row, right))
            trials.append(Trial(where, TWO_AFC, *members, choice))
    return trials, unanswered


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
    kept, dropped = [], 0
    for members in groups.values():
        votes: dict[str, int] = {}
        for t in members:
            chosen = t.second if t.choice else t.first
            votes[chosen] = votes.get(chosen, 0) + 1
        ranked = sorted(votes.values(), reverse=True)
        top = ranked[0]
        if (len(ranked) > 1 and ranked[1] == top) or top / len(members) < threshold:
            dropped += 1
            continue
        winner = next(k for k, v in votes.items() if v == top)
        first = members[0]
        kept.append(
            Trial(
                where=f"{first.where} (+{len(members) - 1} repeats)"
                if len(members) > 1
                else first.where,
                kind=TWO_AFC,
                anchor=first.anchor,
                first=first.first,
                second=first.second,
                choice=0 if winner == first.first else 1,
                group=CONSISTENT,
            )
        )
    return kept, dropped


class PerceptualAlignmentTask(Task):
    """Base class of perceptual-alignment tasks; subclasses declare metadata and trial sources."""

    family: ClassVar[TaskFamily] = TaskFamily.PERCEPTUAL_ALIGNMENT
    #: Distances scored; the main score's distance is always added.
    distances: ClassVar[tuple[str, ...]] = ("cosine", "euclidean", "spearman")
    #: Metadata column whose value names a clip in trials; None: the clip id.
    trial_key: ClassVar[str | None] = None
    #: Trial tables, relative to the dataset root (None: the task has none).
    triplet_file: ClassVar[str | None] = "triplets.csv"
    probe_file: ClassVar[str | None] = "probes.csv"
    trial_columns: ClassVar[TrialColumns] = TrialColumns()
    #: A trial naming a clip the dataset lacks: an error, or a counted skip.
    missing_members: ClassVar[Literal["error", "skip"]] = "error"
    #: Majority share for the ``consistent`` 2AFC set (VocSim: 0.7); None: no such set.
    consistency_threshold: ClassVar[float | None] = 0.7

    def __init__(
        self,
        *,
        distances: Sequence[str] | None = None,
        n_bootstrap: int = 1000,
        seed: int = 0,
        **kwargs: Any,
    ) -> None:
        from audiobench.metrics import DISTANCE_METRICS

        super().__init__(**kwargs)
        main_distance, _, _ = parse_main_score(self.metadata.main_score)
        chosen = tuple(distances or self.distances)
        unknown = [d for d in (*chosen, main_distance) if d not in DISTANCE_METRICS]
        if unknown:
            raise ValueError(f"unknown distance(s) {unknown}; known: {list(DISTANCE_METRICS)}")
        self.distance_names = chosen + ((main_distance,) if main_distance not in chosen else ())
        if n_bootstrap < 0:
            raise ValueError("n_bootstrap must be ≥ 0")
        self.n_bootstrap = n_bootstrap
        self.seed = seed

    # -- trials --------------------------------------------------------------------

    def clip_key(self, clip: Clip) -> str:
        """The name trials use for ``clip``."""
        if self.trial_key is None:
            return clip.id
        value = clip.metadata.get(self.trial_key)
        if value is None or not str(value).strip():
            raise ValueError(
                f"task {self.name}: clip {clip.id!r} ({clip.audio.location}) has no "
                f"{self.trial_key!r}, the column trials use to name clips"
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
        wanted = {TRIPLET: self.triplet_file, TWO_AFC: self.probe_file}
        found: dict[str, Path] = {}
        notes: list[str] = []
        root = self._table_root()
        hub = self.metadata.dataset.kind == "huggingface" and self.dataset_path is None
        for kind, name in wanted.items():
            if not name:
                continue
            if root is not None:
                if (root / name).is_file():
                    found[kind] = root / name
                else:
                    notes.append(f"no {name} in {root}")
            elif hub:
                try:
                    found[kind] = self._download(name)
                except Exception as exc:  # missing file, no network: both mean "not there"
                    notes.append(
                        f"{name} not fetched from {self.metadata.dataset.path}@"
                        f"{self.dataset_revision}: {type(exc).__name__}: {exc}"
                    )
        return found, notes

    def _download(self, name: str) -> Path:
        from huggingface_hub import hf_hub_download

        return Path(
            hf_hub_download(
                self.metadata.dataset.path,
                name,
                repo_type="dataset",
                revision=self.dataset_revision,
            )
        )

    def _metadata_trials(self, clips: Sequence[Clip]) -> tuple[list[Trial], list[str]]:
        cols = self.trial_columns
        trials, unanswered = [], []
        for clip in clips:
            meta = {str(k).lower(): str(v).strip() for k, v in clip.metadata.items()}
            where = f"clip {clip.id!r} ({clip.audio.location})"
            positive, negative = meta.get(cols.positive, ""), meta.get(cols.negative, "")
            if positive or negative:
                if not (positive and negative):
                    raise ValueError(
                        f"task {self.name}: {where} has one of {cols.positive!r} and "
                        f"{cols.negative!r} but not the other"
                    )
                group = meta.get(cols.margin, "").lower() or None
                trials.append(
                    Trial(where, TRIPLET, self.clip_key(clip), positive, negative, 0, group)
                )
            left, right = meta.get(cols.left, ""), meta.get(cols.right, "")
            if left or right:
                if not (left and right):
                    raise ValueError(
                        f"task {self.name}: {where} has one of {cols.left!r} and "
                        f"{cols.right!r} but not the other"
                    )
                choice = _choice(meta.get(cols.decision, ""))
                if choice is None:
                    unanswered.append(where)
                    continue
                trials.append(Trial(where, TWO_AFC, self.clip_key(clip), left, right, choice))
        return trials, unanswered

    def load_trials(self, clips: Sequence[Clip]) -> tuple[list[Trial], dict[str, Any]]:
        """Every trial, from the tables and the clips' metadata, and where they came from."""
        tables, notes = self.trial_tables()
        trials, unanswered = self._metadata_trials(clips)
        sources: list[dict[str, Any]] = []
        if trials or unanswered:
            sources.append({"source": "clip metadata", "n_rows": len(trials) + len(unanswered)})
        if TRIPLET in tables:
            rows = read_triplet_table(tables[TRIPLET], self.trial_columns)
            trials += rows
            sources.append({"source": str(tables[TRIPLET]), "kind": TRIPLET, "n_rows": len(rows)})
        if TWO_AFC in tables:
            rows, missing = read_probe_table(tables[TWO_AFC], self.trial_columns)
            trials += rows
            unanswered += missing
            sources.append(
                {
                    "source": str(tables[TWO_AFC]),
                    "kind": TWO_AFC,
                    "n_rows": len(rows) + len(missing),
                }
            )
        if not trials:
            raise ValueError(
                f"task {self.name}: no trials found: no clip carries trial columns "
                f"({self.trial_columns.positive}/{self.trial_columns.negative} or "
                f"{self.trial_columns.left}/{self.trial_columns.right}/"
                f"{self.trial_columns.decision}), and no trial table was found"
                + (f" ({'; '.join(notes)})" if notes else "")
            )
        return trials, {"sources": sources, "not_found": notes, "unanswered": unanswered}

    # -- evaluation ----------------------------------------------------------------

    def evaluate(self, embedder: Embedder, clips: Sequence[Clip]) -> TaskScores:
        from audiobench.metrics import pairwise_distances
        from audiobench.pooling import collate

        if not clips:
            raise ValueError(f"task {self.name}: no clips to evaluate")
        trials, origin = self.load_trials(clips)
        index: dict[str, Clip] = {}
        duplicate_keys: list[str] = []
        for clip in clips:
            key = self.clip_key(clip)
            if key in index:
                duplicate_keys.append(key)  # trials reach the first clip with this key
            else:
                index[key] = clip

        counts = {kind: {"declared": 0} for kind in KINDS}
        for trial in trials:
            counts[trial.kind]["declared"] += 1
        counts[TWO_AFC]["unanswered"] = len(origin["unanswered"])
        trials, n_duplicates = _drop_duplicate_triplets(trials)
        counts[TRIPLET]["duplicates"] = n_duplicates

        missing = [t for t in trials if any(m not in index for m in t.members)]
        if missing and self.missing_members == "error":
            raise ValueError(
                f"task {self.name}: {len(missing)} trial(s) name clips the dataset does not "
                f"have, e.g. {_describe_missing(missing[:3], index)}"
            )
        for kind in KINDS:
            counts[kind]["missing_members"] = sum(t.kind == kind for t in missing)
        absent = {id(t) for t in missing}
        trials = [t for t in trials if id(t) not in absent]

        kept, arrays = embedder.embed(clips, self.name)
        matrix = collate(arrays)
        row_of = {clip.id: i for i, clip in enumerate(kept)}
        position = {key: row_of[c.id] for key, c in index.items() if c.id in row_of}
        dropped = [t for t in trials if any(m not in position for m in t.members)]
        for kind in KINDS:
            counts[kind]["unembedded"] = sum(t.kind == kind for t in dropped)
        gone = {id(t) for t in dropped}
        trials = [t for t in trials if id(t) not in gone]
        if not trials:
            raise ValueError(f"task {self.name}: no trial has all its clips embedded")

        sets, n_inconsistent = self._trial_sets(trials)
        for kind in KINDS:
            counts[kind]["evaluated"] = len(sets.get((kind, ALL), []))
        if (TWO_AFC, ALL) in sets and self.consistency_threshold is not None:
            counts[TWO_AFC]["consistent"] = len(sets.get((TWO_AFC, CONSISTENT), []))
            counts[TWO_AFC]["inconsistent_groups"] = n_inconsistent

        used = sorted({m for t in trials for m in t.members})
        local = {key: i for i, key in enumerate(used)}
        X = matrix[[position[k] for k in used]].astype(np.float64)
        scores: dict[str, dict[str, Any]] = {}
        for distance in self.distance_names:
            D = pairwise_distances(X, distance, ids=used, dtype=np.float64)
            per_kind: dict[str, dict[str, Any]] = {}
            for (kind, group), members in sets.items():
                per_kind.setdefault(kind, {})[group] = _score(
                    D, members, local, self.n_bootstrap, self.seed
                )
            scores[distance] = per_kind

        main_distance, main_kind, main_group = parse_main_score(self.metadata.main_score)
        main = scores[main_distance].get(main_kind, {}).get(main_group, {}).get("accuracy")
        examples = {
            "missing_members": _describe_missing(missing[:EXAMPLES], index) if missing else None,
            "unembedded": [t.where for t in dropped[:EXAMPLES]],
            "unanswered": origin["unanswered"][:EXAMPLES],
            "duplicate_keys": sorted(set(duplicate_keys))[:EXAMPLES],
        }
        details: dict[str, Any] = {
            "distances": list(self.distance_names),
            "main": {"distance": main_distance, "kind": main_kind, "group": main_group},
            "trial_key": self.trial_key or "clip id",
            "trial_sources": origin["sources"],
            "trial_tables_not_found": origin["not_found"],
            "missing_members_rule": self.missing_members,
            "consistency_threshold": self.consistency_threshold,
            "counts": counts,
            "n_duplicate_keys": len(duplicate_keys),
            "examples": {k: v for k, v in examples.items() if v},
            "ties": "an exact distance tie counts half a correct trial",
            "bootstrap": {"n": self.n_bootstrap, "seed": self.seed, "interval": "percentile 95 %"},
            "n_clips_embedded": len(kept),
        }
        return TaskScores(main_score=main, scores=scores, details=details)

    def _trial_sets(
        self, trials: Sequence[Trial]
    ) -> tuple[dict[tuple[str, str], list[Trial]], int]:
        """Scored sets, (kind, group) -> trials, and the 2AFC groups too inconsistent to keep."""
        sets: dict[tuple[str, str], list[Trial]] = {}
        triplets = [t for t in trials if t.kind == TRIPLET]
        if triplets:
            sets[(TRIPLET, ALL)] = triplets
            for group in sorted({t.group for t in triplets if t.group}):
                if group in (ALL, CONSISTENT):
                    raise ValueError(
                        f"task {self.name}: triplet group name {group!r} is reserved; rename it"
                    )
                sets[(TRIPLET, group)] = [t for t in triplets if t.group == group]
        probes = [t for t in trials if t.kind == TWO_AFC]
        n_inconsistent = 0
        if probes:
            sets[(TWO_AFC, ALL)] = probes
            if self.consistency_threshold is not None:
                kept, n_inconsistent = consistent_trials(probes, self.consistency_threshold)
                if kept:
                    sets[(TWO_AFC, CONSISTENT)] = kept
        return sets, n_inconsistent

    # -- result checks -------------------------------------------------------------

    @classmethod
    def score_problems(cls, scores: dict[str, Any]) -> list[str]:
        """Unknown distances, kinds and fields, and values outside their range.

        ``scores`` maps distance -> kind (``triplet``, ``2afc``) -> group ->
        report; ``aggregates`` is empty, so any key there is a problem.
        Accuracy, p-value and the interval lie in [0, 1]; n ≥ 1;
        0 ≤ n_correct ≤ n; n_ties an integer in [0, n].
        """
        from audiobench.metrics import DISTANCE_METRICS

        problems: list[str] = []
        for distance, kinds in scores.items():
            if distance not in DISTANCE_METRICS:
                problems.append(
                    f"{distance}: unknown distance; known: {', '.join(DISTANCE_METRICS)}"
                )
                continue
            if not isinstance(kinds, dict):
                problems.append(f"{distance}: must be a mapping of trial kinds")
                continue
            for kind, groups in kinds.items():
                where = f"{distance}.{kind}"
                if kind not in KINDS:
                    problems.append(f"{where}: unknown trial kind; known: {', '.join(KINDS)}")
                elif not isinstance(groups, dict):
                    problems.append(f"{where}: must be a mapping of trial groups")
                else:
                    for group, report in groups.items():
                        problems += _report_problems(f"{where}.{group}", report)
        return problems


def _drop_duplicate_triplets(trials: Sequence[Trial]) -> tuple[list[Trial], int]:
    """Repeated identical triplets are one judgment (as VocSim); 2AFC repeats are real votes."""
    seen: set[tuple[str, str, str, str | None]] = set()
    out = []
    for trial in trials:
        if trial.kind == TRIPLET:
            key = (trial.anchor, trial.first, trial.second, trial.group)
            if key in seen:
                continue
            seen.add(key)
        out.append(trial)
    return out, len(trials) - len(out)


def _describe_missing(trials: Sequence[Trial], index: Mapping[str, Clip]) -> str:
    parts = []
    for trial in trials:
        names = ", ".join(repr(m) if m else "(blank)" for m in trial.members if m not in index)
        parts.append(f"{trial.where}: {names}")
    return "; ".join(parts)


def _score(
    D: np.ndarray, trials: Sequence[Trial], local: Mapping[str, int], n_boot: int, seed: int
) -> dict[str, Any]:
    """Accuracy, counts, p-value and bootstrap interval of one set of trials."""
    from audiobench.metrics import binomial_p_value, triplet_accuracy, two_afc_accuracy

    a = np.array([local[t.anchor] for t in trials])
    first = D[a, [local[t.first] for t in trials]]
    second = D[a, [local[t.second] for t in trials]]
    tie = first == second
    if trials[0].kind == TRIPLET:
        report = dict(triplet_accuracy(first, second))
        points = np.where(tie, 0.5, (first < second).astype(np.float64))
    else:
        human = np.array([t.choice for t in trials])
        model = np.where(first < second, 0, 1)
        untied = ~tie
        wins = 0
        if untied.any():
            wins = int(two_afc_accuracy(model[untied], human[untied])["n_correct"])
        n = len(trials)
        n_ties = int(tie.sum())
        n_correct = wins + 0.5 * n_ties
        report = {
            "accuracy": n_correct / n,
            "n": n,
            "n_correct": n_correct,
            "n_ties": n_ties,
            "p_value": binomial_p_value(math.floor(n_correct), n),
        }
        points = np.where(tie, 0.5, (model == human).astype(np.float64))
    report["ci95"] = _bootstrap(points, n_boot, seed)
    return report


def _bootstrap(points: np.ndarray, n_boot: int, seed: int) -> list[float] | None:
    """Percentile 95 % interval of the mean of per-trial scores, resampling trials."""
    if n_boot == 0:
        return None
    rng = np.random.default_rng(seed)
    n = points.shape[0]
    means = np.empty(n_boot)
    step = max(1, 4_000_000 // max(n, 1))  # bounds the index block at ~32 MB
    for start in range(0, n_boot, step):
        size = min(step, n_boot - start)
        means[start : start + size] = points[rng.integers(0, n, (size, n))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return [float(low), float(high)]


_REPORT_FIELDS = frozenset({"accuracy", "n", "n_correct", "n_ties", "p_value", "ci95"})


def _report_problems(where: str, report: Any) -> list[str]:
    if not isinstance(report, dict):
        return [f"{where}: must be a mapping with accuracy, n, n_correct, n_ties, p_value"]
    problems = [f"{where}.{k}: unknown field" for k in report if k not in _REPORT_FIELDS]
    problems += [
        f"{where}.{k}: missing field" for k in sorted(_REPORT_FIELDS - {"ci95"}) if k not in report
    ]
    if problems:
        return problems
    n = report["n"]
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        return [f"{where}.n: must be a positive integer, not {n!r}"]
    problems += number_problem(f"{where}.accuracy", report["accuracy"], 0.0, 1.0, nullable=False)
    problems += number_problem(f"{where}.p_value", report["p_value"], 0.0, 1.0, nullable=False)
    problems += number_problem(f"{where}.n_correct", report["n_correct"], 0.0, n, nullable=False)
    ties = report["n_ties"]
    if isinstance(ties, bool) or not isinstance(ties, int) or not 0 <= ties <= n:
        problems.append(f"{where}.n_ties: must be an integer in [0, {n}], not {ties!r}")
    if not problems and abs(report["accuracy"] - report["n_correct"] / n) > 1e-9:
        problems.append(f"{where}.accuracy: {report['accuracy']!r} is not n_correct / n")
    interval = report.get("ci95")
    if interval is not None:
        if not (isinstance(interval, list) and len(interval) == 2):
            problems.append(f"{where}.ci95: must be [low, high] or null")
        else:
            for i, bound in enumerate(interval):
                problems += number_problem(f"{where}.ci95[{i}]", bound, 0.0, 1.0, nullable=False)
            if not problems and interval[0] > interval[1]:
                problems.append(f"{where}.ci95: low {interval[0]!r} > high {interval[1]!r}")
    return problems
