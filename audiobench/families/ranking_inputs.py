"""What the cosine-ranking families read: list-valued metadata and unit-norm embedding matrices.

Retrieval, reranking and zero-shot classification all score a query (a clip, a caption) against
items (documents, candidates, class prompts) by the cosine similarity of their embeddings, which
may come from the encoder's audio tower or its text tower. The helpers here turn clips and
texts into float64 ``[n, D]`` matrices with a row index per id, check that both sides share one
space, and scale rows to unit norm (refusing NaN, infinite and zero rows by name). They also
read the list-valued metadata these tasks carry (``relevant``, ``candidates``, ``positives``)
and refuse an encoder without the text tower a task needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from audiobench.audio import Clip
from audiobench.encoder import Encoder, Modality
from audiobench.errors import DataError
from audiobench.metrics.naming import describe_clips
from audiobench.task import Embedder

__all__ = [
    "LIST_SEPARATOR",
    "MAX_LISTED_IDS",
    "SKIP_HINT",
    "check_same_width",
    "embed_both",
    "embed_text_matrix",
    "parse_list",
    "require_text_tower",
    "unit_rows",
]

#: Separator of list-valued metadata in folder ``labels.csv`` files (``relevant``,
#: ``candidates``, ``positives``): ``"a|b|c"``. Items are stripped; empty items are dropped.
LIST_SEPARATOR = "|"
#: How many ids of left-out queries a result's ``details`` lists.
MAX_LISTED_IDS = 20
#: The end of the error about queries whose metrics are undefined (``on_missing="raise"``).
SKIP_HINT = "; pass on_missing='skip' to leave them out (counted in the result)"


def parse_list(value: Any, *, field: str, clip_id: str) -> list[str]:
    """A list-valued metadata field as a list of strings.

    Accepts a list or tuple (a Hugging Face sequence column) of strings or integers, or one
    string whose items are joined by :data:`LIST_SEPARATOR` (a folder ``labels.csv`` cell).
    Items are stripped and empty ones dropped, so ``""`` is the empty list.
    """
    if value is None:
        return []
    items = value.split(LIST_SEPARATOR) if isinstance(value, str) else value
    if not isinstance(items, list | tuple | np.ndarray):
        raise DataError(
            f"clip {clip_id!r}: metadata[{field!r}] must be a list of strings or one string "
            f"joined by {LIST_SEPARATOR!r}, not {type(value).__name__}"
        )
    for item in items:
        if isinstance(item, bool) or not isinstance(item, str | int | np.integer):
            raise DataError(
                f"clip {clip_id!r}: metadata[{field!r}] holds {item!r}; items must be strings"
            )
    return [text for item in items if (text := str(item).strip())]


def embed_both(
    embedder: Embedder, clips: Sequence[Clip], texts: Sequence[str], description: str
) -> tuple[dict[str, int], np.ndarray, dict[str, int], np.ndarray]:
    """The pooled audio embeddings of ``clips`` and the text embeddings of ``texts``, each a
    float64 ``[n, D]`` matrix with each clip id's or text's row, refused unless both share
    one width.

    The clips are collated together (:meth:`~audiobench.task.Embedder.embed_matrix`); clips
    the runner skipped have no row. No texts: no text embedding.
    """
    kept, audio = embedder.embed_matrix(clips, description)
    text_rows, text = embed_text_matrix(embedder, texts, f"{description} texts")
    if kept and text_rows:
        check_same_width(audio, text, "audio", "text", embedder.encoder.meta.name)
    return {clip.id: i for i, clip in enumerate(kept)}, audio.astype(np.float64), text_rows, text


def embed_text_matrix(
    embedder: Embedder, texts: Sequence[str], description: str
) -> tuple[dict[str, int], np.ndarray]:
    """Text embeddings of the distinct ``texts`` (``[n, D]`` float64) and each text's row."""
    unique = list(dict.fromkeys(texts))
    if not unique:
        return {}, np.zeros((0, 0))
    matrix = np.asarray(embedder.embed_text(unique, description), dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != len(unique):
        raise ValueError(
            f"model {embedder.encoder.meta.name!r} returned text embeddings of shape "
            f"{matrix.shape} for {len(unique)} texts; expected [n, D]"
        )
    return {text: i for i, text in enumerate(unique)}, matrix


def unit_rows(matrix: np.ndarray, names: Sequence[str], what: str) -> np.ndarray:
    """Rows scaled to unit L2 norm (float64); non-finite or zero rows are an error naming them."""
    matrix = np.asarray(matrix, dtype=np.float64)
    bad = [names[int(i)] for i in np.flatnonzero(~np.isfinite(matrix).all(axis=1))]
    if bad:
        raise DataError(f"{what} embeddings have NaN or infinite values: {describe_clips(bad)}")
    norms = np.linalg.norm(matrix, axis=1)
    zero = [names[int(i)] for i in np.flatnonzero(norms == 0)]
    if zero:
        raise DataError(f"{what} embeddings are zero vectors (no cosine): {describe_clips(zero)}")
    return np.asarray(matrix / norms[:, None])


def require_text_tower(encoder: Encoder, needed: bool, why: str) -> None:
    """Refuse an ``encoder`` with no text tower where one is ``needed`` (``why`` ends the error)."""
    if needed and Modality.TEXT not in encoder.meta.modalities:
        raise ValueError(f"model {encoder.meta.name!r} has no text encoder; {why}")


def check_same_width(a: np.ndarray, b: np.ndarray, what_a: str, what_b: str, model: str) -> None:
    """Refuse two embedding matrices of different widths: they cannot be one space."""
    if a.shape[1] != b.shape[1]:
        raise ValueError(
            f"model {model!r}: {what_a} embeddings have dimension {a.shape[1]} but {what_b} "
            f"embeddings {b.shape[1]}; they must share one space"
        )
