"""The IDF-table salient-term extractor of MSEB's segmentation cascade, as pure functions.

MSEB's baseline for salient-term segmentation (``mseb/encoders/segmentation_encoder.py``,
read at commit ``a88af49``) transcribes with word timings, then keeps the ``top_k`` terms
with the highest inverse document frequency, each with its words' span and its IDF as the
score. This module holds the term part:

- :func:`normalize_token`: MSEB's word normalisation (``NormalizingRetokenizer``): a leading
  space, then a trailing ``?``, ``؟``, ``»``, ``».``, ``।``, ``.`` or ``,`` and a leading
  ``«`` removed (in MSEB's order), then lowercased; an empty result is no token.
- :func:`idf_table`: IDF of every token of a set of texts, ln(N / df) with N the number of
  texts and df the number holding the token (the natural-log IDF; MSEB loads a precomputed
  ``token,idf`` CSV, which :func:`read_idf_csv` reads).
- :func:`top_terms`: every word whose token is in the table, as (token, idf, word index);
  sorted by decreasing IDF, stably (ties keep word order), cut to ``top_k``, as MSEB's
  ``TextSegmenterEncoder`` does; a repeated word can appear more than once, as there.

Deliberate difference: MSEB retokenises with spaCy (and a longest-prefix trie for Japanese);
here a word is a token (its normalised form), which equals spaCy's tokenisation for words
without inner punctuation. Words whose scores are given (log-probabilities) multiply the IDF
by exp(Σ scores) in MSEB; :func:`top_terms` takes that factor as ``confidence``.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = ["idf_table", "normalize_token", "read_idf_csv", "top_terms"]


def normalize_token(word: str) -> str:
    """MSEB's normalisation of one word (module docstring); ``""`` when nothing is left."""
    token = (
        word.removeprefix(" ")
        .removesuffix("?")
        .removesuffix("؟")
        .removeprefix("«")
        .removesuffix("»")
        .removesuffix("».")
        .removesuffix("।")
        .removesuffix(".")
        .removesuffix(",")
    )
    return token.lower()


def idf_table(texts: Iterable[str]) -> dict[str, float]:
    """ln(N / df) of every token of ``texts`` (words split on whitespace, normalised)."""
    documents = [{t for t in (normalize_token(w) for w in text.split()) if t} for text in texts]
    if not documents:
        raise ValueError("an IDF table needs at least one text")
    frequency: dict[str, int] = {}
    for tokens in documents:
        for token in tokens:
            frequency[token] = frequency.get(token, 0) + 1
    n = len(documents)
    return {token: math.log(n / df) for token, df in sorted(frequency.items())}


def read_idf_csv(path: str | Path) -> dict[str, float]:
    """A ``token,idf`` CSV (MSEB's table format) as a mapping; ValueError naming the line."""
    table: dict[str, float] = {}
    with Path(path).open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames is None or not {"token", "idf"} <= set(reader.fieldnames):
            raise ValueError(f"{path}: an IDF table CSV needs token and idf columns")
        for line, row in enumerate(reader, 2):
            try:
                value = float(row["idf"])
            except (TypeError, ValueError):
                raise ValueError(
                    f"{path} line {line}: idf {row['idf']!r} is not a number"
                ) from None
            if not math.isfinite(value):
                raise ValueError(f"{path} line {line}: idf must be finite, got {value}")
            table[row["token"]] = value
    return table


def top_terms(
    words: Sequence[str], table: dict[str, float], top_k: int, *, confidence: float = 1.0
) -> list[tuple[str, float, int]]:
    """The ``top_k`` (token, score, word index) of ``words`` by decreasing IDF (stable).

    ``score`` = IDF × ``confidence``.
    """
    if top_k < 1:
        raise ValueError(f"top_k must be at least 1, got {top_k}")
    found = []
    for index, word in enumerate(words):
        token = normalize_token(word)
        if token and token in table:
            found.append((token, table[token] * confidence, index))
    found.sort(key=lambda item: item[1], reverse=True)
    return found[:top_k]
