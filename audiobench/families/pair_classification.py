"""Pair classification: are two clips the same (label 1) or different (0)? ``max_ap`` (main).

**Pairs.** Two layouts (option ``pairs``):

- ``"given"`` (default): every clip carries ``metadata["pair"]``, a pair id; the two clips
  with one id form that pair (the first in dataset order is its first side). Both carry the
  pair's ``label``: ``1`` / ``0`` (also ``same`` / ``different``, ``true`` / ``false``,
  ``yes`` / ``no``). A clip may appear in several pairs (the task accepts repeated audio).
  MAEB's pair tasks are read this way (two audio columns per row, ``audiobench.maeb``).
- ``"from_labels"``: every clip carries a class ``label``; the pairs are the unordered pairs of
  clips of a subset, labelled 1 when their classes are equal. With more than ``max_pairs``
  pairs, ``max_pairs`` are drawn without replacement (seeded by ``seed``); the count of all
  pairs is recorded.

**Scoring.** The pooled embeddings of a subset's clips are collated together and each pair
scored by four similarities: cosine, dot product, and the negated euclidean and manhattan
distances (:func:`audiobench.metrics.pair_classification.pair_classification_scores`). For
each: ``accuracy`` and ``f1`` (with its ``precision`` and ``recall``) at their best threshold,
the thresholds, and ``ap`` (average precision); then ``max_<metric>`` over the four functions.
``main_score`` is ``max_ap`` (or ``<function>:<metric>``, e.g. ``cosine:ap``).

**Bad input.** A pair id with other than two clips, a pair whose clips disagree on the label,
a label that is not binary, or a subset without both kinds of pair is an error naming them.
Pairs that lose a clip to the runner (``--on-error skip``) are left out and counted
(``n_pairs_unembedded``). With several subsets, ``aggregates["mean"]`` holds the unweighted
mean of the ``max_*`` values and of each function's metrics (thresholds are not averaged).

``protocol="mteb"`` reports the reference's flat keys instead (``cosine_ap``, ``max_ap``, ...;
:mod:`audiobench.families.mteb_protocol`): the same numbers, in the reference's layout.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import product
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field, model_validator

from audiobench import reports as _reports
from audiobench.audio import Clip
from audiobench.errors import DataError
from audiobench.families import mteb_protocol
from audiobench.families.mteb_protocol import ByProtocol, MtebReport, MtebSummary, ProtocolOptions
from audiobench.metrics.naming import describe_clips
from audiobench.metrics.pair_classification import PAIR_METRICS as METRICS
from audiobench.metrics.pair_classification import PAIR_SIMILARITIES as SIMILARITIES
from audiobench.metrics.pair_classification import pair_classification_scores
from audiobench.reports import Count, Report, Summary, Unit, finite_or_none, mean_or_none
from audiobench.task import Embedder, Subset, Task, TaskFamily, error_in_context

__all__ = [
    "PairClassificationReport",
    "PairClassificationSummary",
    "PairClassificationTask",
    "parse_pair_label",
]

_PAIR_LABELS = {"1": 1, "same": 1, "true": 1, "yes": 1, "0": 0, "different": 0, "false": 0, "no": 0}


def parse_pair_label(value: str | None) -> int | None:
    """1, 0, or None for a label that is not a pair label."""
    return _PAIR_LABELS.get((value or "").strip().lower())


class SimilarityScores(Report):
    """One similarity function's metrics at its best thresholds."""

    accuracy: Unit
    accuracy_threshold: float | None = Field(description="None when every score is tied.")
    f1: Unit
    f1_threshold: float | None
    precision: Unit
    recall: Unit
    ap: Unit


class PairClassificationReport(Report):
    """One subset: the best value of each metric over the similarity functions, every
    function's metrics, and the counts."""

    max_accuracy: Unit
    max_f1: Unit
    max_precision: Unit
    max_recall: Unit
    max_ap: Unit
    cosine: SimilarityScores
    dot: SimilarityScores
    euclidean: SimilarityScores
    manhattan: SimilarityScores
    n_pairs: Count
    n_positive: Count
    n_pairs_unembedded: Count
    n_clips: Count

    @model_validator(mode="after")
    def _consistent(self) -> PairClassificationReport:
        """Each ``max_<metric>`` is the best function's value; positives are among the pairs."""
        for metric in METRICS:
            given = getattr(self, f"max_{metric}")
            best = max(getattr(getattr(self, name), metric) for name in SIMILARITIES)
            if not _reports.same_number(given, best):
                raise ValueError(
                    f"max_{metric}: {given!r} is not the best function's {metric} ({best!r})"
                )
        if self.n_positive > self.n_pairs:
            raise ValueError(f"n_positive ({self.n_positive}) exceeds n_pairs ({self.n_pairs})")
        return self


class PairClassificationSummary(Summary):
    """Unweighted mean over subsets of the maxima and of each function's metrics."""

    max_accuracy: Unit | None
    max_f1: Unit | None
    max_precision: Unit | None
    max_recall: Unit | None
    max_ap: Unit | None
    cosine: dict[str, Unit | None]
    dot: dict[str, Unit | None]
    euclidean: dict[str, Unit | None]
    manhattan: dict[str, Unit | None]
    n_subsets: Count


class PairClassificationTask(Task):
    """Base of pair classification tasks; a concrete task sets metadata and, maybe, options."""

    family: ClassVar[TaskFamily] = TaskFamily.PAIR_CLASSIFICATION
    Report = ByProtocol(PairClassificationReport, MtebReport)
    Summary = ByProtocol(PairClassificationSummary, MtebSummary)
    #: One clip may sit in several pairs: its audio then appears more than once.
    allow_duplicates: ClassVar[bool] = True

    class Options(ProtocolOptions):
        pairs: Literal["given", "from_labels"] = Field(
            "given",
            description="'given': clips carry metadata['pair'] and the pair's 0/1 label; "
            "'from_labels': every two clips of a subset, same class or not.",
        )
        max_pairs: int = Field(
            20_000, ge=2, description="from_labels: most pairs scored per subset (drawn)."
        )
        seed: int = Field(0, description="from_labels: seed of the drawn pairs.")

    options: Options = Options()

    @classmethod
    def check_main_score(cls, path: tuple[str, ...]) -> None:
        if cls.options.protocol == "mteb":
            return mteb_protocol.check_main_score(cls, path)
        if path not in {(f"max_{m}",) for m in METRICS} | set(product(SIMILARITIES, METRICS)):
            raise ValueError(
                f"task {cls.metadata.name}: main score {':'.join(path)!r} is not 'max_<metric>' "
                f"or '<similarity>:<metric>' (similarities {list(SIMILARITIES)}, metrics "
                f"{list(METRICS)})"
            )

    def protocol(self) -> dict[str, Any]:
        o = self.options
        pairs: dict[str, Any] = {"pairs": o.pairs}
        if o.pairs == "from_labels":
            pairs.update(max_pairs=o.max_pairs, seed=o.seed)
        if o.protocol == "mteb":
            return mteb_protocol.describe(self, **pairs)
        return {
            **pairs,
            "similarities": list(SIMILARITIES),
            "thresholds": "best accuracy and best F1, between distinct scores",
            "ap": "average precision over the distinct scores",
        }

    # ------------------------------------------------------------------ pairs

    def pairs_of(
        self, clips: Sequence[Clip], where: str
    ) -> tuple[list[tuple[int, int]], list[int]]:
        """The pairs of ``clips`` (positions) and their 0/1 labels, in a fixed order."""
        if self.options.pairs == "from_labels":
            return self._pairs_from_labels(clips)
        members: dict[str, list[int]] = {}
        for i, clip in enumerate(clips):
            pair = clip.metadata.get("pair")
            members.setdefault("" if pair is None else str(pair).strip(), []).append(i)
        missing = [clips[i].id for i in members.pop("", [])]
        if missing:
            raise DataError(
                f"{where}: {len(missing)} clip(s) carry no pair id (metadata 'pair'): "
                f"{describe_clips(missing)}; use pairs='from_labels' to pair clips by class"
            )
        odd = [p for p, idx in members.items() if len(idx) != 2]
        if odd:
            raise DataError(
                f"{where}: every pair id needs exactly two clips; {len(odd)} do not: "
                f"{describe_clips(odd)}"
            )
        parsed = {p: [parse_pair_label(clips[i].label) for i in idx] for p, idx in members.items()}
        bad = [p for p, labels in parsed.items() if None in labels]
        if bad:
            raise DataError(
                f"{where}: pair labels must be 1/0 (same/different, true/false, yes/no); "
                f"{len(bad)} pair(s) have another: {describe_clips(bad)}"
            )
        disagree = [p for p, (first, second) in parsed.items() if first != second]
        if disagree:
            raise DataError(
                f"{where}: the two clips of {len(disagree)} pair(s) carry different labels: "
                f"{describe_clips(disagree)}"
            )
        # Both labels of every pair are now 0 or 1, and equal.
        return [(a, b) for a, b in members.values()], [int(x == 1) for x, _ in parsed.values()]

    def _pairs_from_labels(self, clips: Sequence[Clip]) -> tuple[list[tuple[int, int]], list[int]]:
        n = len(clips)
        total = n * (n - 1) // 2
        if total <= self.options.max_pairs:
            first, second = np.triu_indices(n, k=1)
        else:
            rng = np.random.default_rng(self.options.seed)
            drawn = np.sort(rng.choice(total, size=self.options.max_pairs, replace=False))
            first, second = _unrank_pairs(drawn, n)
        pairs = [(int(a), int(b)) for a, b in zip(first, second, strict=True)]
        return pairs, [int(str(clips[a].label) == str(clips[b].label)) for a, b in pairs]

    # ------------------------------------------------------------------ evaluation

    def evaluate_subset(self, embedder: Embedder, subset: Subset) -> _reports.Report:
        from audiobench.metrics.validation import check_finite

        o, where, clips = self.options, subset.where, subset.clips
        pairs, labels = self.pairs_of(clips, where)
        used = sorted({i for pair in pairs for i in pair})
        kept, matrix = embedder.embed_matrix([clips[i] for i in used], subset.label)
        row_of = {clip.id: r for r, clip in enumerate(kept)}
        usable = [
            (pair, label)
            for pair, label in zip(pairs, labels, strict=True)
            if clips[pair[0]].id in row_of and clips[pair[1]].id in row_of
        ]
        if not usable:
            raise DataError(f"{where}: no pair has both clips embedded")
        sides = []
        for side in (0, 1):
            ids = [clips[pair[side]].id for pair, _ in usable]
            sides.append(matrix[[row_of[i] for i in ids]])
            check_finite(sides[-1], ids, f"{where}: embeddings")
        first, second = sides
        y = np.array([label for _, label in usable], dtype=np.int64)
        counts = subset.details["pair_counts"] = {"layout": o.pairs, "n_pairs_total": len(pairs)}
        if o.pairs == "from_labels":
            counts["n_pairs_possible"] = len(clips) * (len(clips) - 1) // 2
        try:
            scores = pair_classification_scores(first, second, y)
        except ValueError as exc:
            raise error_in_context(exc, where) from exc
        if o.protocol == "mteb":
            return mteb_protocol.pair_report(scores, n_pairs=len(usable))
        fields = SimilarityScores.model_fields
        return PairClassificationReport.model_validate(
            {
                **{f"max_{m}": scores[f"max_{m}"] for m in METRICS},
                **{
                    n: {k: finite_or_none(scores[f"{n}_{k}"]) for k in fields} for n in SIMILARITIES
                },
                "n_pairs": int(y.shape[0]),
                "n_positive": int(y.sum()),
                "n_pairs_unembedded": len(pairs) - len(usable),
                "n_clips": len(kept),
            }
        )

    def summarize(self, reports: Mapping[str, _reports.Report]) -> _reports.Summary:
        if self.options.protocol == "mteb":
            return super().summarize(reports)
        functions = {
            name: {
                m: mean_or_none(_reports.score_at(r, (name, m)) for r in reports.values())
                for m in METRICS
            }
            for name in SIMILARITIES
        }
        return _reports.mean_summary(PairClassificationSummary, reports, **functions)


def _unrank_pairs(ranks: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Pair (i, j), i < j, of each rank in the row-major order of the upper triangle."""
    ranks, rows = ranks.astype(np.int64), np.arange(n, dtype=np.int64)
    # Row i starts at rank i*n - i*(i+1)/2; find the last start ≤ rank (exact integer search).
    starts = rows * n - rows * (rows + 1) // 2
    first = np.searchsorted(starts, ranks, side="right") - 1
    second = ranks - starts[first] + first + 1
    return first, second
