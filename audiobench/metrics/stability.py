"""Representation stability under perturbation, as MSEB's stability super task measures it.

Source: ``mseb/tasks/stability.py`` (aggregation) and ``mseb/metrics.py`` (distances), read at
commit ``a88af49``. Each clean utterance's output is the reference for the outputs of its
perturbed variants; a distance per (clean, variant) pair is normalised by the reference's
length.

**Continuous outputs** (2-D, frames × dimensions; :func:`continuous_stability`):

- ``CED`` (:func:`continuous_edit_distance`, the main score): an edit distance between vector
  sequences. Each sequence is first divided by (its largest row norm + 1e-9) (by 1 + 1e-9 when
  it is all zeros); substituting frame a by b costs ‖a − b‖₂, inserting or deleting a frame
  costs 2 (the diameter of the unit ball). Normalised by c·L with c = 2.
- ``DTW`` (:func:`dynamic_time_warping_distance`): classic dynamic time warping with the
  Euclidean frame distance as local cost (each step adds the cost of the cell it enters;
  steps right, down or diagonal); c = 1. Infinite when exactly one sequence is empty.
- ``L2`` (:func:`padded_spectral_distance`): the shorter sequence is zero-padded at the end,
  and the distance is the **matrix 2-norm** of the difference, i.e. its largest singular
  value (NumPy's ``norm(..., ord=2)`` on a matrix), *not* the Frobenius norm of the
  difference nor a mean frame distance; c = 1.

Frame distances are computed as √max(‖a‖² + ‖b‖² − 2a·b, 0), in the outputs' own floating
dtype (float32 stays float32), as MSEB does; the dynamic programmes accumulate in float64.

**Discrete outputs** (a token sequence, or text split on whitespace;
:func:`discrete_stability`): ``UED`` (:func:`unit_edit_distance`), the Levenshtein distance
between the token sequences, tokens compared as the words of their ``str()`` forms joined by
spaces (as MSEB's jiwer-based count does: ``1`` equals ``"1"``, and a token containing a
space counts as several words); c = 1, L = the number of reference words.

**Aggregates** per metric m, over the pairs (u, v) whose reference length L_u > 0 (others are
left out, as in MSEB):

- ``Corpus_Mean_<m>`` = Σ d(u, v) / (c · Σ L_u), a micro-average;
- ``Mean_Local_IS_<m>``: with the drifts δ(u, v) = d(u, v) / (c · L_u), the mean over
  utterances of each utterance's mean drift; its ``std`` (the *instability score*) is the mean
  over utterances of each utterance's population std of drifts.

Deliberate differences: MSEB stacks the per-utterance drift lists into one array and fails
when utterances have different numbers of variants; this module averages each utterance's own
list, which gives MSEB's value whenever MSEB gives one. Where MSEB reports nothing (no pair
with a non-empty reference) this module raises a ValueError. The dynamic programmes are
evaluated one anti-diagonal at a time (NumPy instead of a compiled loop): the same additions
and minima in a different order of cells, so the values are bit-identical.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from audiobench.metrics.mseb_conventions import split_words
from audiobench.metrics.text_errors import edit_distance
from audiobench.metrics.validation import real_array

__all__ = [
    "StabilityScores",
    "StabilitySummary",
    "continuous_edit_distance",
    "continuous_stability",
    "discrete_stability",
    "dynamic_time_warping_distance",
    "padded_spectral_distance",
    "unit_edit_distance",
]

#: The length normaliser c of each metric (CED's maximum substitution cost is 2).
_NORMALISER: dict[str, float] = {"CED": 2.0, "DTW": 1.0, "L2": 1.0, "UED": 1.0}


def _sequence(values: object, name: str) -> np.ndarray:
    """A 2-D finite real array in a floating dtype (float32 and float64 kept as given)."""
    return real_array(values, name, 2, "frames × dimensions")


def _pair(reference: object, hypothesis: object) -> tuple[np.ndarray, np.ndarray]:
    ref = _sequence(reference, "reference")
    hyp = _sequence(hypothesis, "hypothesis")
    if ref.shape[1] != hyp.shape[1]:
        raise ValueError(
            f"reference and hypothesis have different dimensions: {ref.shape[1]} vs {hyp.shape[1]}"
        )
    return ref, hyp


def _frame_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Euclidean distances between the rows of a and b, by MSEB's expansion."""
    cross = np.dot(a, b.T)
    sq_a = np.sum(a**2, axis=1).reshape(-1, 1)
    sq_b = np.sum(b**2, axis=1).reshape(1, -1)
    distances: np.ndarray = np.sqrt(np.maximum(sq_a + sq_b - 2 * cross, 0))
    return distances


def _diagonals(n: int, m: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The cells (i, j), 1 ≤ i ≤ n, 1 ≤ j ≤ m, grouped by anti-diagonal i + j (in order).

    Every cell depends only on cells of the two previous anti-diagonals, so a diagonal is
    computed in one vectorised step from exactly the operands a row-by-row loop would use.
    """
    cells = []
    for d in range(2, n + m + 1):
        i = np.arange(max(1, d - m), min(n, d - 1) + 1)
        cells.append((i, d - i))
    return cells


def _edit_cost(costs: np.ndarray, insertion: float, deletion: float) -> float:
    n, m = costs.shape
    table = np.zeros((n + 1, m + 1))
    # Boundaries accumulate one step at a time (not i·cost) to add exactly as a loop would.
    for i in range(1, n + 1):
        table[i, 0] = table[i - 1, 0] + deletion
    for j in range(1, m + 1):
        table[0, j] = table[0, j - 1] + insertion
    for rows, cols in _diagonals(n, m):
        deleted = table[rows - 1, cols] + deletion
        inserted = table[rows, cols - 1] + insertion
        substituted = table[rows - 1, cols - 1] + costs[rows - 1, cols - 1]
        table[rows, cols] = np.minimum(np.minimum(deleted, inserted), substituted)
    return float(table[n, m])


def _warping_cost(costs: np.ndarray) -> float:
    n, m = costs.shape
    table = np.full((n + 1, m + 1), np.inf)
    table[0, 0] = 0.0
    for rows, cols in _diagonals(n, m):
        best = np.minimum(
            np.minimum(table[rows - 1, cols], table[rows, cols - 1]), table[rows - 1, cols - 1]
        )
        table[rows, cols] = costs[rows - 1, cols - 1] + best
    return float(table[n, m])


def _unit_scaled(z: np.ndarray) -> np.ndarray:
    largest = np.max(np.linalg.norm(z, axis=1)) if z.any() else 1.0
    return z / (largest + 1e-9)


def _ced(ref: np.ndarray, hyp: np.ndarray, insertion: float, deletion: float, scale: bool) -> float:
    if scale:
        ref, hyp = _unit_scaled(ref), _unit_scaled(hyp)
    return _edit_cost(_frame_distances(ref, hyp), insertion, deletion)


def _dtw(ref: np.ndarray, hyp: np.ndarray) -> float:
    return _warping_cost(_frame_distances(ref, hyp))


def _l2(ref: np.ndarray, hyp: np.ndarray) -> float:
    frames = max(ref.shape[0], hyp.shape[0])
    padded = []
    for z in (ref, hyp):
        if z.shape[0] < frames:
            full = np.zeros((frames, z.shape[1]), dtype=z.dtype)
            full[: z.shape[0]] = z
            z = full
        padded.append(z)
    return float(np.linalg.norm(padded[0] - padded[1], ord=2))


def continuous_edit_distance(
    reference: object,
    hypothesis: object,
    *,
    insertion_cost: float = 2.0,
    deletion_cost: float = 2.0,
    unit_sphere_scaling: bool = True,
) -> float:
    """MSEB's continuous edit distance (CED) between two frame sequences, unnormalised (module
    docstring); divide by 2 · len(reference) for MSEB's per-pair drift.

    ``reference``, ``hypothesis``: 2-D arrays (frames × dimensions, same dimensions; either
    may have 0 frames). Costs must be finite and ≥ 0.
    """
    ref, hyp = _pair(reference, hypothesis)
    for name, cost in (("insertion_cost", insertion_cost), ("deletion_cost", deletion_cost)):
        if isinstance(cost, bool) or not math.isfinite(float(cost)) or float(cost) < 0:
            raise ValueError(f"{name} must be a finite number ≥ 0, got {cost!r}")
    return _ced(ref, hyp, float(insertion_cost), float(deletion_cost), bool(unit_sphere_scaling))


def dynamic_time_warping_distance(reference: object, hypothesis: object) -> float:
    """The DTW cost of aligning two frame sequences with Euclidean local cost (module
    docstring); 0 for two empty sequences, inf when exactly one is empty."""
    ref, hyp = _pair(reference, hypothesis)
    return _dtw(ref, hyp)


def padded_spectral_distance(reference: object, hypothesis: object) -> float:
    """MSEB's stability "L2": the largest singular value of the difference of the two frame
    sequences after zero-padding the shorter at the end (module docstring)."""
    ref, hyp = _pair(reference, hypothesis)
    return _l2(ref, hyp)


Tokens = str | Sequence[object] | np.ndarray


def _tokens(values: object, name: str) -> list[str]:
    """A discrete output as a list of token strings (text is split on whitespace)."""
    if isinstance(values, str):
        return values.split()
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise ValueError(f"{name} must be 1-D (a token sequence), got shape {values.shape}")
        return [str(token) for token in values]
    if not isinstance(values, Sequence):
        raise ValueError(f"{name} must be a text or a sequence of tokens")
    return [str(token) for token in values]


def _ued(reference: list[str], hypothesis: list[str]) -> tuple[float, float]:
    """(edits, reference length) as MSEB counts them for a discrete pair."""
    if not reference:
        return float(len(hypothesis)), 0.0
    ref_words = split_words(" ".join(reference))
    hyp_words = split_words(" ".join(hypothesis))
    return float(edit_distance(ref_words, hyp_words)), float(len(ref_words))


def unit_edit_distance(reference: Tokens, hypothesis: Tokens) -> int:
    """MSEB's unit edit distance (UED) between two token sequences or texts, unnormalised
    (module docstring); an empty reference gives the hypothesis' token count."""
    return int(_ued(_tokens(reference, "reference"), _tokens(hypothesis, "hypothesis"))[0])


@dataclass(frozen=True)
class StabilitySummary:
    """One stability metric over a corpus (module docstring).

    ``corpus_mean`` is ``Corpus_Mean_<m>``; ``mean_local`` and ``instability`` are the value
    and the ``std`` of ``Mean_Local_IS_<m>``; ``n_pairs`` and ``n_utterances`` count what
    contributed.
    """

    corpus_mean: float
    mean_local: float
    instability: float
    n_pairs: int
    n_utterances: int


@dataclass(frozen=True)
class StabilityScores:
    """MSEB's stability metrics: ``metrics`` maps ``CED``, ``DTW``, ``L2`` (continuous) or
    ``UED`` (discrete) to its summary; ``main_metric`` is ``CED`` or ``UED``."""

    metrics: dict[str, StabilitySummary]
    main_metric: Literal["CED", "UED"]

    @property
    def main_score(self) -> float:
        """``Corpus_Mean_CED`` (continuous) or ``Corpus_Mean_UED`` (discrete)."""
        return self.metrics[self.main_metric].corpus_mean

    def to_dict(self) -> dict[str, float]:
        """MSEB's score names: ``Corpus_Mean_<m>``, ``Mean_Local_IS_<m>`` and its
        ``Mean_Local_IS_<m>_std``."""
        out: dict[str, float] = {}
        for name in sorted(self.metrics):
            summary = self.metrics[name]
            out[f"Corpus_Mean_{name}"] = summary.corpus_mean
            out[f"Mean_Local_IS_{name}"] = summary.mean_local
            out[f"Mean_Local_IS_{name}_std"] = summary.instability
        return out


def _aggregate(
    per_utterance: list[list[tuple[float, float]]], name: str
) -> StabilitySummary | None:
    """Micro and macro aggregates of (distance, reference length) pairs, grouped by utterance."""
    c = _NORMALISER[name]
    total_distance = total_length = 0.0
    means, stds = [], []
    n_pairs = 0
    for pairs in per_utterance:
        drifts = []
        for distance, length in pairs:
            if length > 0:
                total_distance += distance
                total_length += length
                drifts.append(distance / (c * length))
        if drifts:
            n_pairs += len(drifts)
            means.append(np.mean(drifts))
            stds.append(np.std(drifts))
    if not means:
        return None
    return StabilitySummary(
        corpus_mean=float(total_distance / (c * total_length)),
        mean_local=float(np.mean(means)),
        instability=float(np.mean(stds)),
        n_pairs=n_pairs,
        n_utterances=len(means),
    )


def _check_corpus(references: Sequence[object], variants: Sequence[Sequence[object]]) -> None:
    if isinstance(references, str | np.ndarray) or isinstance(variants, str | np.ndarray):
        raise ValueError(
            "references and variants must be sequences with one entry per utterance "
            "(variants[u]: the outputs for utterance u's perturbed copies)"
        )
    if len(references) != len(variants):
        raise ValueError(f"got {len(references)} references and {len(variants)} variant lists")
    if not references:
        raise ValueError("no utterances: references is empty")
    for u, outputs in enumerate(variants):
        if isinstance(outputs, str) or not isinstance(outputs, Sequence):
            raise ValueError(f"variants[{u}] must be a sequence of outputs (one per variant)")


def _summaries(
    distances: dict[str, list[list[tuple[float, float]]]], main: Literal["CED", "UED"]
) -> StabilityScores:
    metrics = {}
    for name, per_utterance in distances.items():
        summary = _aggregate(per_utterance, name)
        if summary is not None:
            metrics[name] = summary
    if main not in metrics:
        raise ValueError(
            "no (reference, variant) pair has a non-empty reference: stability is undefined"
        )
    return StabilityScores(metrics=metrics, main_metric=main)


def continuous_stability(
    references: Sequence[object], variants: Sequence[Sequence[object]]
) -> StabilityScores:
    """MSEB's continuous stability (CED, DTW, L2; main ``Corpus_Mean_CED``) of frame
    sequences (module docstring).

    ``references[u]``: utterance u's clean output, a 2-D array (frames × dimensions);
    ``variants[u]``: the outputs of its perturbed copies (possibly none), same dimensions.
    Raises ValueError naming the utterance and variant of a malformed output.
    """
    _check_corpus(references, variants)
    distances: dict[str, list[list[tuple[float, float]]]] = {"CED": [], "DTW": [], "L2": []}
    for u, (reference, outputs) in enumerate(zip(references, variants, strict=True)):
        rows: dict[str, list[tuple[float, float]]] = {name: [] for name in distances}
        for k, output in enumerate(outputs):
            try:
                ref, hyp = _pair(reference, output)
            except ValueError as error:
                raise ValueError(f"utterance {u}, variant {k}: {error}") from error
            length = float(ref.shape[0])
            rows["CED"].append((_ced(ref, hyp, 2.0, 2.0, True), length))
            rows["DTW"].append((_dtw(ref, hyp), length))
            rows["L2"].append((_l2(ref, hyp), length))
        for name, pairs in rows.items():
            distances[name].append(pairs)
    return _summaries(distances, "CED")


def discrete_stability(
    references: Sequence[Tokens], variants: Sequence[Sequence[Tokens]]
) -> StabilityScores:
    """MSEB's discrete stability (UED; main ``Corpus_Mean_UED``) of token sequences or texts
    (module docstring).

    ``references[u]``: utterance u's clean output (a text, a list of tokens or a 1-D array);
    ``variants[u]``: the outputs of its perturbed copies (possibly none).
    """
    _check_corpus(references, variants)
    per_utterance: list[list[tuple[float, float]]] = []
    for u, (reference, outputs) in enumerate(zip(references, variants, strict=True)):
        ref = _tokens(reference, f"references[{u}]")
        per_utterance.append(
            [_ued(ref, _tokens(out, f"variants[{u}][{k}]")) for k, out in enumerate(outputs)]
        )
    return _summaries({"UED": per_utterance}, "UED")
