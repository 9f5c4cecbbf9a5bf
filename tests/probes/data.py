"""Generated data for the probe tests: separable blobs and sequences with hidden events."""

from __future__ import annotations

import numpy as np


def blobs(
    rng: np.random.Generator, n: int, n_classes: int, dim: int = 8, spread: float = 6.0
) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian blobs (unit variance) around well separated class centres; balanced labels."""
    centres = rng.normal(scale=spread, size=(n_classes, dim))
    labels = np.arange(n) % n_classes
    rng.shuffle(labels)
    X = centres[labels] + rng.normal(size=(n, dim))
    return X.astype(np.float32), labels


def multilabel_blobs(
    rng: np.random.Generator, n: int, n_classes: int, dim: int = 8
) -> tuple[np.ndarray, np.ndarray]:
    """Each class present or not (p = 0.5) adds its own direction: a linearly separable code."""
    Y = (rng.random((n, n_classes)) < 0.5).astype(np.int64)
    directions = rng.normal(size=(n_classes, dim))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    X = 4.0 * Y @ directions + 0.3 * rng.normal(size=(n, dim))
    return X.astype(np.float32), Y


def event_sequences(
    rng: np.random.Generator,
    n: int,
    n_classes: int,
    *,
    dim: int = 8,
    lengths: tuple[int, int] = (12, 40),
    event_frames: int = 2,
    multilabel: bool = False,
) -> tuple[list[np.ndarray], np.ndarray]:
    """Noise frames in which each present class's pattern replaces a few random frames.

    The pattern occupies 2 of 12–40 frames, so mean pooling dilutes it by a factor of
    6–20 while attention or a max over frames sees it at full strength. Multi-class: one
    class per sequence (balanced). Multi-label: each class present with p = 0.5.
    """
    patterns = rng.normal(size=(n_classes, dim))
    patterns *= 3.0 / np.linalg.norm(patterns, axis=1, keepdims=True) * np.sqrt(dim) / 2
    if multilabel:
        present = rng.random((n, n_classes)) < 0.5
        targets: np.ndarray = present.astype(np.int64)
    else:
        codes = np.arange(n) % n_classes
        rng.shuffle(codes)
        present = np.eye(n_classes, dtype=bool)[codes]
        targets = codes
    sequences = []
    for row in present:
        length = int(rng.integers(lengths[0], lengths[1] + 1))
        frames = rng.normal(size=(length, dim))
        classes = np.flatnonzero(row)
        slots = rng.permutation(length)[: event_frames * classes.size]
        for i, c in enumerate(classes):
            where = slots[i * event_frames : (i + 1) * event_frames]
            frames[where] = patterns[c] + 0.3 * rng.normal(size=(where.size, dim))
        sequences.append(frames.astype(np.float32))
    return sequences, targets
