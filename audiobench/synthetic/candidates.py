"""Candidate lists for reranking: hard-negative captions, and generated reranking datasets.

:func:`caption_candidates` builds each item's candidate texts from its own captions (the
positives) and those of the most alike other items (hard negatives); the Clotho reranking task
applies it to the real captions when its data is loaded, and the text mock to generated ones.
The two generators write the generated sounds of :mod:`audiobench.synthetic.sounds` with, per
query clip, its candidates and positives joined by ``|`` in ``labels.csv``: captions
(:func:`write_caption_reranking`) or clip ids of other sounds (:func:`write_audio_reranking`).
The same seed always gives the same files, bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from audiobench.families.ranking_inputs import LIST_SEPARATOR
from audiobench.synthetic.sounds import sound_classes, write_sound_files
from audiobench.synthetic.writer import write_labels

__all__ = ["caption_candidates", "write_audio_reranking", "write_caption_reranking"]

#: Rows of the similarity matrix computed at once (bounds memory on large datasets).
_BLOCK = 512


def _key(text: str) -> str:
    return " ".join(text.lower().split())


def caption_candidates(
    texts: Sequence[Sequence[str]],
    labels: Sequence[str | None],
    *,
    n_negatives: int,
    seed: int,
) -> list[tuple[list[str], list[str]]]:
    """For each item, ``(candidates, positives)``: its own texts plus hard-negative texts.

    The hard negatives of item i are the texts of the ``n_negatives`` other items most similar
    to it (cosine of TF-IDF vectors of each item's texts joined; ties to the lower index),
    leaving out items with the same non-empty label. Texts equal to a positive or to an earlier
    candidate (ignoring case and spacing) are dropped, and an item left with no new text does
    not count towards ``n_negatives``. The list is shuffled by a generator seeded with
    ``(seed, i)``, so positives are not always first (ties in the scores go to the earlier
    candidate).
    """
    from sklearn.feature_extraction.text import TfidfVectorizer

    n = len(texts)
    if len(labels) != n:
        raise ValueError(f"got {len(labels)} labels for {n} items")
    vectors = TfidfVectorizer().fit_transform([" ".join(t) for t in texts])
    label_array = np.array([label if label is not None else "" for label in labels], dtype=object)
    out: list[tuple[list[str], list[str]]] = []
    for start in range(0, n, _BLOCK):
        block = (vectors[start : start + _BLOCK] @ vectors.T).toarray()
        for offset, row in enumerate(block):
            i = start + offset
            excluded = label_array == label_array[i] if labels[i] is not None else np.zeros(n, bool)
            excluded[i] = True
            positives = list(dict.fromkeys(t.strip() for t in texts[i] if t.strip()))
            taken = {_key(t) for t in positives}
            candidates = list(positives)
            n_taken = 0
            for j in np.lexsort((np.arange(n), -row)):
                if n_taken == n_negatives:
                    break
                new = [t.strip() for t in texts[j] if t.strip() and _key(t) not in taken]
                if excluded[j] or not new:
                    continue
                n_taken += 1
                for text in new:
                    if _key(text) not in taken:
                        taken.add(_key(text))
                        candidates.append(text)
            shuffle = np.random.default_rng([seed, i]).permutation(len(candidates))
            out.append(([candidates[k] for k in shuffle], positives))
    return out


def write_caption_reranking(
    directory: Path,
    *,
    seed: int,
    sample_rate: int = 16000,
    classes: int,
    renditions: int,
    n_negatives: int,
) -> int:
    """Generated sounds, each a query reranking its own caption among hard negatives.

    ``classes`` classes drawn with ``seed``, ``renditions`` each; every clip's candidates are
    its caption and those of the ``n_negatives`` most alike clips of other classes
    (:func:`caption_candidates`). ``labels.csv``: file, id, label, text, split (``query``),
    candidates, positives. Returns the clip count.
    """
    rows = write_sound_files(
        directory, sound_classes(classes, seed), renditions, seed=seed, sample_rate=sample_rate
    )
    lists = caption_candidates(
        [[row["text"]] for row in rows],
        [row["label"] for row in rows],
        n_negatives=n_negatives,
        seed=seed,
    )
    for row, (candidates, positives) in zip(rows, lists, strict=True):
        row.update(
            split="query",
            candidates=LIST_SEPARATOR.join(candidates),
            positives=LIST_SEPARATOR.join(positives),
        )
    fields = ("file", "id", "label", "text", "split", "candidates", "positives")
    write_labels(directory, rows, fields)
    return len(rows)


def write_audio_reranking(
    directory: Path, *, seed: int, sample_rate: int = 16000, classes: int, renditions: int
) -> int:
    """Generated sounds, each a query reranking other sounds (audio candidates, by clip id).

    ``classes`` classes drawn with ``seed``, ``renditions`` each; a clip's candidates are the
    other renditions of its class (the positives) and one random sound of every other class,
    in random order. ``labels.csv``: file, id, label, split (``query``), candidates,
    positives. Returns the clip count.
    """
    rows = write_sound_files(
        directory, sound_classes(classes, seed), renditions, seed=seed, sample_rate=sample_rate
    )
    by_class: dict[str, list[str]] = {}
    for row in rows:
        by_class.setdefault(row["label"], []).append(row["id"])
    for i, row in enumerate(rows):
        rng = np.random.default_rng([seed, i])
        positives = [c for c in by_class[row["label"]] if c != row["id"]]
        negatives = [
            ids[int(rng.integers(len(ids)))]
            for label, ids in by_class.items()
            if label != row["label"]
        ]
        candidates = [*positives, *negatives]
        candidates = [candidates[k] for k in rng.permutation(len(candidates))]
        row.update(
            split="query",
            candidates=LIST_SEPARATOR.join(candidates),
            positives=LIST_SEPARATOR.join(positives),
        )
    write_labels(directory, rows, ("file", "id", "label", "split", "candidates", "positives"))
    return len(rows)
