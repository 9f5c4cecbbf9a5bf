"""Pair classification: are two clips the same (label 1) or different (0)?

A pair classification task holds pairs of clips, each labelled same or different, in subsets.
How they are scored belongs to the evaluator its ``protocol`` option selects
(:mod:`audiobench.evaluators`): ``"audiobench"``
(:mod:`audiobench.evaluators.pair_classification`: four similarities, each one's accuracy,
F1 and average precision at its best thresholds, ``max_ap`` the main score) or ``"mteb"``
(:mod:`audiobench.evaluators.mteb`: the same numbers in the reference's flat keys).

**Pairs.** Two layouts (option ``pairs``):

- ``"given"`` (default): every clip carries ``metadata["pair"]``, a pair id; the two clips
  with one id form that pair (the first in dataset order is its first side). Both carry the
  pair's ``label``: ``1`` / ``0`` (also ``same`` / ``different``, ``true`` / ``false``,
  ``yes`` / ``no``). A clip may appear in several pairs (the task accepts repeated audio).
  MAEB's pair tasks are read this way (two audio columns per row, ``audiobench.hub_layouts``).
- ``"from_labels"``: every clip carries a class ``label``; the pairs are the unordered pairs of
  clips of a subset, labelled 1 when their classes are equal. With more than ``max_pairs``
  pairs, ``max_pairs`` are drawn without replacement (seeded by ``seed``); the count of all
  pairs is recorded.

The pooled embeddings of a subset's clips are collated together, one row per side of each
pair (:meth:`PairClassificationTask.embed_pairs`).

**Bad input.** A pair id with other than two clips, a pair whose clips disagree on the label,
a label that is not binary, or a subset without both kinds of pair is an error naming them.
Pairs that lose a clip to the runner (``--on-error skip``) are left out and counted
(``n_pairs_unembedded``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field

from audiobench.audio import Clip
from audiobench.errors import DataError
from audiobench.evaluators.evaluator import EvaluatedOptions, EvaluatedTask
from audiobench.metrics.naming import describe_clips
from audiobench.task import Embedder, Subset, TaskFamily

__all__ = ["EmbeddedPairs", "PairClassificationTask", "parse_pair_label"]

_PAIR_LABELS = {"1": 1, "same": 1, "true": 1, "yes": 1, "0": 0, "different": 0, "false": 0, "no": 0}


def parse_pair_label(value: str | None) -> int | None:
    """1, 0, or None for a label that is not a pair label."""
    return _PAIR_LABELS.get((value or "").strip().lower())


@dataclass(frozen=True)
class EmbeddedPairs:
    """The pairs of a subset whose two clips were embedded: one row per pair on each side."""

    #: First and second sides' embeddings, ``[n, D]`` each, row ``i`` of both is pair ``i``.
    first: np.ndarray
    second: np.ndarray
    #: Each pair's 0/1 label.
    labels: np.ndarray
    #: Pairs of the subset, embedded or not.
    n_pairs: int
    #: Clips embedded.
    n_clips: int

    @property
    def n_scored(self) -> int:
        """Pairs with both clips embedded."""
        return int(self.labels.shape[0])


class PairClassificationTask(EvaluatedTask):
    """Base of pair classification tasks; a concrete task sets metadata and, maybe, options."""

    family: ClassVar[TaskFamily] = TaskFamily.PAIR_CLASSIFICATION
    #: One clip may sit in several pairs: its audio then appears more than once.
    allow_duplicates: ClassVar[bool] = True

    class Options(EvaluatedOptions):
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

    def pairs_layout(self) -> dict[str, Any]:
        """How the pairs are formed, recorded in the result's details under every protocol."""
        o = self.options
        layout: dict[str, Any] = {"pairs": o.pairs}
        if o.pairs == "from_labels":
            layout.update(max_pairs=o.max_pairs, seed=o.seed)
        return layout

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

    # ------------------------------------------------------------------ embedding

    def embed_pairs(self, embedder: Embedder, subset: Subset) -> EmbeddedPairs:
        """The pairs of ``subset`` whose clips were both embedded, side by side; their counts
        go into the subset's details (``pair_counts``)."""
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
        return EmbeddedPairs(first, second, y, n_pairs=len(pairs), n_clips=len(kept))


def _unrank_pairs(ranks: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Pair (i, j), i < j, of each rank in the row-major order of the upper triangle."""
    ranks, rows = ranks.astype(np.int64), np.arange(n, dtype=np.int64)
    # Row i starts at rank i*n - i*(i+1)/2; find the last start ≤ rank (exact integer search).
    starts = rows * n - rows * (rows + 1) // 2
    first = np.searchsorted(starts, ranks, side="right") - 1
    second = ranks - starts[first] + first + 1
    return first, second
