"""Word, character and candidate error rates (of a top-ranked candidate's text, say).

**Edit distance.** The Levenshtein distance between a reference and a hypothesis sequence:
the least number of substitutions, deletions and insertions (each costing 1) that turn the
reference into the hypothesis.

**Corpus-level rate.** Over pairs (reference_i, hypothesis_i),
rate = Σ_i edits_i / Σ_i len(reference_i), counted in words (WER) or characters (CER). It is
not the mean of per-pair rates, and it can exceed 1 (insertions). An empty reference is fine
as long as the references are not all empty (then the rate is undefined: a ValueError).

**Candidate error rate** (MSEB's reranking "CER"): the share of pairs whose hypothesis has
any word error, i.e. mean_i [word edits_i > 0]; in [0, 1]. Not a character error rate.

**Normalisation**, applied identically to both sides, in this order:

1. ``lowercase=True`` (default): ``str.lower()``.
2. ``strip_punctuation=True`` (default False): delete every Unicode punctuation character
   (general category ``P*``: ``. , ; : ! ? ' " - ( ) …``); symbols (``$ + %``) stay. "don't"
   becomes "dont", "a-b" becomes "ab".
3. Whitespace: words are the maximal runs of non-whitespace (``str.split()``); for CER the
   words are re-joined with single spaces, so spaces between words count as characters but
   leading, trailing and repeated whitespace does not.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np

from audiobench.metrics.results import MetricResult

__all__ = [
    "candidate_error_rate",
    "character_error_rate",
    "character_error_rate_details",
    "closest_references",
    "edit_distance",
    "multi_reference_error_rates",
    "normalize_text",
    "word_error_rate",
    "word_error_rate_details",
]


def normalize_text(text: str, *, lowercase: bool = True, strip_punctuation: bool = False) -> str:
    """The normalised text: optional lowercase, optional punctuation removal, single spaces."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    if lowercase:
        text = text.lower()
    if strip_punctuation:
        text = "".join(ch for ch in text if not unicodedata.category(ch).startswith("P"))
    return " ".join(text.split())


def _levenshtein(reference: np.ndarray, hypothesis: np.ndarray) -> int:
    """Edit distance of two int sequences; one vectorised row of the DP table at a time.

    Row i of the table D[i, j] (edits between the first i reference and first j hypothesis
    items) is min(D[i−1, j−1] + [a_i ≠ b_j], D[i−1, j] + 1, D[i, j−1] + 1). The last term runs
    along the row; with t_j the minimum of the first two, D[i, j] − j = min_{j' ≤ j} (t_j' − j'),
    a cumulative minimum.
    """
    if reference.shape[0] < hypothesis.shape[0]:
        reference, hypothesis = hypothesis, reference  # symmetric; loop over the shorter
    n = hypothesis.shape[0]
    if n == 0:
        return int(reference.shape[0])
    offsets = np.arange(n + 1, dtype=np.int64)
    previous = offsets.copy()
    candidate = np.empty(n + 1, dtype=np.int64)
    for i, item in enumerate(reference, start=1):
        candidate[0] = i
        np.minimum(previous[:-1] + (hypothesis != item), previous[1:] + 1, out=candidate[1:])
        previous = np.minimum.accumulate(candidate - offsets) + offsets
    return int(previous[-1])


def edit_distance(reference: Sequence[Hashable], hypothesis: Sequence[Hashable]) -> int:
    """Levenshtein distance (unit-cost substitutions, deletions, insertions) of two sequences.

    Works on any sequences of hashable items: strings (characters) or lists of words.
    """
    for name, value in (("reference", reference), ("hypothesis", hypothesis)):
        if not isinstance(value, Sequence):
            raise ValueError(f"{name} must be a sequence (a string or a list of tokens)")
    vocabulary: dict[Hashable, int] = {}
    try:
        ref = np.array([vocabulary.setdefault(t, len(vocabulary)) for t in reference], np.int64)
        hyp = np.array([vocabulary.setdefault(t, len(vocabulary)) for t in hypothesis], np.int64)
    except TypeError as error:
        raise ValueError(f"sequence items must be hashable: {error}") from error
    return _levenshtein(ref, hyp)


def _texts(values: str | Sequence[str], name: str) -> list[str]:
    items = [values] if isinstance(values, str) else list(values)
    for position, item in enumerate(items):
        if not isinstance(item, str):
            raise ValueError(f"{name}[{position}] must be a string, got {type(item).__name__}")
    return items


def _pairs(
    references: str | Sequence[str], hypotheses: str | Sequence[str]
) -> tuple[list[str], list[str]]:
    """The (reference, hypothesis) texts, checked: both strings or equal-length sequences."""
    if isinstance(references, str) != isinstance(hypotheses, str):
        raise ValueError("give references and hypotheses both as strings or both as sequences")
    refs = _texts(references, "references")
    hyps = _texts(hypotheses, "hypotheses")
    if len(refs) != len(hyps):
        raise ValueError(f"got {len(refs)} references and {len(hyps)} hypotheses")
    if not refs:
        raise ValueError("no texts to compare: references and hypotheses are empty")
    return refs, hyps


def _error_rate(
    references: str | Sequence[str],
    hypotheses: str | Sequence[str],
    unit: Literal["word", "char"],
    lowercase: bool,
    strip_punctuation: bool,
) -> MetricResult:
    refs, hyps = _pairs(references, hypotheses)
    edits = 0
    length = 0
    for ref, hyp in zip(refs, hyps, strict=True):
        ref_norm = normalize_text(ref, lowercase=lowercase, strip_punctuation=strip_punctuation)
        hyp_norm = normalize_text(hyp, lowercase=lowercase, strip_punctuation=strip_punctuation)
        ref_units = ref_norm.split() if unit == "word" else ref_norm
        hyp_units = hyp_norm.split() if unit == "word" else hyp_norm
        edits += edit_distance(ref_units, hyp_units)
        length += len(ref_units)
    if length == 0:
        raise ValueError(
            "every reference is empty after normalisation: the error rate is undefined"
        )
    return MetricResult(
        name="wer" if unit == "word" else "cer",
        value=edits / length,
        n_evaluated=len(refs),
        extras={"edits": edits, "reference_length": length},
    )


def word_error_rate(
    references: str | Sequence[str],
    hypotheses: str | Sequence[str],
    *,
    lowercase: bool = True,
    strip_punctuation: bool = False,
) -> float:
    """Corpus-level WER = Σ word edits / Σ reference words, ≥ 0 (may exceed 1).

    ``references`` and ``hypotheses``: one string each, or equal-length sequences of strings.
    """
    return _error_rate(references, hypotheses, "word", lowercase, strip_punctuation).value


def word_error_rate_details(
    references: str | Sequence[str],
    hypotheses: str | Sequence[str],
    *,
    lowercase: bool = True,
    strip_punctuation: bool = False,
) -> MetricResult:
    """:func:`word_error_rate` as a :class:`MetricResult` with ``extras`` ``edits`` and
    ``reference_length`` (and ``n_evaluated`` = number of pairs)."""
    return _error_rate(references, hypotheses, "word", lowercase, strip_punctuation)


def character_error_rate(
    references: str | Sequence[str],
    hypotheses: str | Sequence[str],
    *,
    lowercase: bool = True,
    strip_punctuation: bool = False,
) -> float:
    """Corpus-level CER = Σ character edits / Σ reference characters (single spaces count).

    Same arguments as :func:`word_error_rate`.
    """
    return _error_rate(references, hypotheses, "char", lowercase, strip_punctuation).value


def character_error_rate_details(
    references: str | Sequence[str],
    hypotheses: str | Sequence[str],
    *,
    lowercase: bool = True,
    strip_punctuation: bool = False,
) -> MetricResult:
    """:func:`character_error_rate` as a :class:`MetricResult` (same details as
    :func:`word_error_rate_details`)."""
    return _error_rate(references, hypotheses, "char", lowercase, strip_punctuation)


def candidate_error_rate(
    references: str | Sequence[str],
    hypotheses: str | Sequence[str],
    *,
    lowercase: bool = True,
    strip_punctuation: bool = False,
) -> float:
    """Share of pairs whose hypothesis has at least one word error, in [0, 1].

    MSEB reports it for reranking as "CER" (candidate error rate): a query counts as an error
    when its top-ranked candidate differs from the reference in any word after normalisation.
    Same arguments as :func:`word_error_rate`; an empty reference is compared like any other.
    """
    refs, hyps = _pairs(references, hypotheses)
    norm = {"lowercase": lowercase, "strip_punctuation": strip_punctuation}
    wrong = sum(
        edit_distance(normalize_text(r, **norm).split(), normalize_text(h, **norm).split()) > 0
        for r, h in zip(refs, hyps, strict=True)
    )
    return wrong / len(refs)


def closest_references(
    references: Sequence[Sequence[str]],
    hypotheses: Sequence[str],
    unit: Literal["word", "char"],
    *,
    lowercase: bool = True,
    strip_punctuation: bool = False,
) -> list[str]:
    """For each hypothesis, the one of its references with the fewest ``unit`` edits to it
    (the first on ties), after normalisation."""

    def units(text: str) -> Sequence[str]:
        norm = normalize_text(text, lowercase=lowercase, strip_punctuation=strip_punctuation)
        return norm.split() if unit == "word" else norm

    chosen = []
    for refs, hyp in zip(references, hypotheses, strict=True):
        if not refs:
            raise ValueError("a hypothesis without references has no reference text")
        target = units(hyp)
        chosen.append(min(refs, key=lambda ref: edit_distance(units(ref), target)))
    return chosen


def multi_reference_error_rates(
    references: Sequence[Sequence[str]],
    hypotheses: Sequence[str],
    *,
    lowercase: bool = True,
    strip_punctuation: bool = False,
) -> dict[str, float]:
    """``wer``, ``candidate_error_rate`` and ``char_error_rate`` of hypotheses that each have
    several acceptable references: each rate against, per hypothesis, the reference with the
    fewest edits in its unit (words for the first two, characters for CER), the usual
    multi-reference convention (with one reference, that reference)."""
    norm = {"lowercase": lowercase, "strip_punctuation": strip_punctuation}
    by_word = closest_references(references, hypotheses, "word", **norm)
    by_char = closest_references(references, hypotheses, "char", **norm)
    return {
        "wer": word_error_rate(by_word, hypotheses, **norm),
        "candidate_error_rate": candidate_error_rate(by_word, hypotheses, **norm),
        "char_error_rate": character_error_rate(by_char, hypotheses, **norm),
    }
