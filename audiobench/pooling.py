"""Pooling: turning an encoder's frame sequence ``Z[T, D]`` into one array per clip.

Pooling is a named, composable step separate from the encoder, so a model can
default to the paper's variant (Whisper: ``mean_time_feat``) while a user asks
for another. The component names and definitions follow the VocSim protocol:

=================  =============================  ======
name               definition                     length
=================  =============================  ======
``mean_time``      mean of Z over time            D
``mean_feat``      mean of Z over features        T
``first_time``     Z[0, :]                        D
``first_feat``     Z[:, 0]                        T
``max_time``       max of Z over time             D
``flatten``        Z itself, kept 2-D [T, D]      T × D
=================  =============================  ======

Components join with ``+`` (``mean_time+first_time``); ``mean_time_feat`` and
``first_time_feat`` are the protocol's names for ``mean_time+mean_feat`` and
``first_time+first_feat``. A ``masked:`` prefix restricts every component to
the clip's valid frames (an encoder that pads, such as Whisper, reports how
many frames are real); unmasked pooling includes padding frames, which is the
protocol's default.

Pooled arrays may differ in length between clips when the encoder's ``T``
varies. :func:`collate` turns them into one matrix for a subset exactly as the
protocol says: zero-padded at the end to the longest clip, and for
``flatten`` padded along time and then flattened feature-major (band-major
for the log-mel baseline).

Padding makes one long clip cost as much memory as every clip being that
long, so :func:`collate` first checks the padded matrix against a budget
(:func:`collate_budget`, about half the machine's memory) and refuses with
an error naming the longest clip rather than exhausting memory.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from audiobench.errors import UserError

__all__ = [
    "POOLING_COMPONENTS",
    "CollateTooLargeError",
    "Pooling",
    "check_collate_size",
    "collate",
    "collate_budget",
]

#: Bytes per element of a collated matrix at the peak of its scoring: the float32
#: matrix (4) and what the zero-shot similarity engine allocates beside it with its
#: default grid (float64 copies, PCA, rank transforms): 41.5 bytes per element,
#: measured by ru_maxrss on [10, 2e6] and [40, 5e5] matrices. Rounded up.
_BYTES_PER_ELEMENT = 48
#: Budget when the machine's memory cannot be read: 256 Mi elements (12 GiB).
_FALLBACK_ELEMENTS = 1 << 28


def _mean_time(z: np.ndarray) -> np.ndarray:
    return np.asarray(z.mean(axis=0))


def _mean_feat(z: np.ndarray) -> np.ndarray:
    return np.asarray(z.mean(axis=1))


def _first_time(z: np.ndarray) -> np.ndarray:
    return np.asarray(z[0])


def _first_feat(z: np.ndarray) -> np.ndarray:
    return np.asarray(z[:, 0])


def _max_time(z: np.ndarray) -> np.ndarray:
    return np.asarray(z.max(axis=0))


#: component name -> (function, whether its length depends on T)
POOLING_COMPONENTS: dict[str, tuple[Callable[[np.ndarray], np.ndarray], bool]] = {
    "mean_time": (_mean_time, False),
    "mean_feat": (_mean_feat, True),
    "first_time": (_first_time, False),
    "first_feat": (_first_feat, True),
    "max_time": (_max_time, False),
}

_ALIASES = {
    "mean_time_feat": ("mean_time", "mean_feat"),
    "first_time_feat": ("first_time", "first_feat"),
}

_MASK_PREFIX = "masked:"


@dataclass(frozen=True)
class Pooling:
    """A parsed pooling specification such as ``"mean_time_feat"`` or ``"masked:mean_time"``.

    ``"none"`` passes vector outputs through unchanged; ``"flatten"`` keeps the
    whole sequence (padded and flattened by :func:`collate`).
    """

    components: tuple[str, ...]
    masked: bool = False

    @classmethod
    def parse(cls, spec: str) -> Pooling:
        text = spec.strip()
        masked = text.startswith(_MASK_PREFIX)
        if masked:
            text = text[len(_MASK_PREFIX) :]
        if text in ("none", "flatten"):
            if masked:
                raise ValueError(f"pooling {spec!r}: 'masked:' applies to frame statistics only")
            return cls((text,), masked=False)
        parts: list[str] = []
        for name in text.split("+"):
            name = name.strip()
            if name in _ALIASES:
                parts.extend(_ALIASES[name])
            elif name in POOLING_COMPONENTS:
                parts.append(name)
            else:
                known = sorted([*POOLING_COMPONENTS, *_ALIASES, "none", "flatten"])
                raise ValueError(f"unknown pooling {name!r} in {spec!r}; known: {', '.join(known)}")
        variable = [p for p in parts if POOLING_COMPONENTS[p][1]]
        # End-padding a concatenation is only the protocol's zero-padding when the
        # single T-length part is the last one.
        if variable and (len(variable) > 1 or parts[-1] != variable[0]):
            raise ValueError(
                f"pooling {spec!r}: at most one time-length component "
                "(mean_feat, first_feat), and it must come last"
            )
        return cls(tuple(parts), masked=masked)

    @property
    def name(self) -> str:
        body = "+".join(self.components)
        for alias, parts in _ALIASES.items():
            if self.components == parts:
                body = alias
        return f"{_MASK_PREFIX}{body}" if self.masked else body

    def __str__(self) -> str:
        return self.name

    def __call__(self, z: np.ndarray, n_valid: int | None = None) -> np.ndarray:
        """Pool one encoder output. ``n_valid`` counts the real (unpadded) frames."""
        if self.components == ("none",):
            if z.ndim != 1:
                raise ValueError(
                    f"pooling 'none' expects one vector per clip, got shape {z.shape}; "
                    "choose a pooling such as mean_time for sequence outputs"
                )
            return z
        if z.ndim != 2:
            raise ValueError(f"pooling {self.name!r} expects a [T, D] sequence, got {z.shape}")
        if z.shape[0] == 0:
            raise ValueError("cannot pool an empty sequence (0 frames)")
        if self.components == ("flatten",):
            return z
        if self.masked and n_valid is not None:
            z = z[: max(1, n_valid)]
        pieces = [POOLING_COMPONENTS[c][0](z) for c in self.components]
        return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)


class CollateTooLargeError(UserError, ValueError):
    """Padding every embedding to the longest one would not fit the memory budget."""


def collate_budget() -> int:
    """Most elements a collated matrix may hold: half the physical memory, 48 bytes each."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # not a POSIX system
        return _FALLBACK_ELEMENTS
    return max(1, total // 2 // _BYTES_PER_ELEMENT) if total > 0 else _FALLBACK_ELEMENTS


def check_collate_size(
    arrays: Sequence[np.ndarray],
    ids: Sequence[str] | None = None,
    max_elements: int | None = None,
) -> None:
    """Raise :class:`CollateTooLargeError` if :func:`collate` would exceed ``max_elements``.

    The error names the longest clip (by ``ids``, else by position), whose
    length every other clip would be padded to. ``max_elements`` defaults to
    :func:`collate_budget`.
    """
    if not arrays:
        return
    lengths = [a.shape[0] if a.ndim else 1 for a in arrays]
    longest = int(np.argmax(lengths))
    per_step = int(np.prod(arrays[longest].shape[1:], dtype=np.int64))
    total = len(arrays) * lengths[longest] * per_step
    budget = collate_budget() if max_elements is None else max_elements
    if total <= budget:
        return
    name = f"clip {ids[longest]!r}" if ids is not None else f"embedding #{longest}"
    shape = "×".join(str(n) for n in arrays[longest].shape)
    raise CollateTooLargeError(
        f"padding {len(arrays)} embeddings to the longest, {name} ({shape}; median length "
        f"{int(np.median(lengths))}), needs {total:,} values (about "
        f"{total * _BYTES_PER_ELEMENT / 2**30:.1f} GiB while scoring), over the budget of "
        f"{budget:,}; drop or shorten that clip, set --max-clip-seconds below its duration "
        "(with --on-error skip it is then left out and recorded), or use a pooling that does "
        "not keep time (--pooling mean_time)"
    )


def collate(
    arrays: Sequence[np.ndarray],
    *,
    ids: Sequence[str] | None = None,
    max_elements: int | None = None,
) -> np.ndarray:
    """Stack pooled arrays of one subset into an ``[N, dim]`` float matrix.

    1-D arrays of different lengths are zero-padded at the end to the longest.
    2-D arrays ``[T_i, D]`` (``flatten`` pooling) are zero-padded along time to
    the longest ``T`` and flattened feature-major, so that element
    ``d * T_max + t`` holds feature ``d`` at frame ``t``. A result larger than
    ``max_elements`` (default :func:`collate_budget`) is refused by
    :func:`check_collate_size`; ``ids`` name the clips in that error.
    """
    if not arrays:
        raise ValueError("no embeddings to collate")
    ndims = {a.ndim for a in arrays}
    if len(ndims) != 1 or ndims.pop() not in (1, 2):
        raise ValueError("embeddings to collate must all be 1-D, or all 2-D [T, D]")
    if arrays[0].ndim == 2 and len({a.shape[1] for a in arrays}) != 1:
        feats = sorted({a.shape[1] for a in arrays})
        raise ValueError(f"sequences to flatten have different feature sizes: {feats}")
    check_collate_size(arrays, ids, max_elements)
    dtype = np.result_type(*arrays, np.float32)
    if arrays[0].ndim == 1:
        width = max(a.shape[0] for a in arrays)
        out = np.zeros((len(arrays), width), dtype=dtype)
        for i, a in enumerate(arrays):
            out[i, : a.shape[0]] = a
        return out
    n_feat = arrays[0].shape[1]
    t_max = max(a.shape[0] for a in arrays)
    out = np.zeros((len(arrays), n_feat, t_max), dtype=dtype)
    for i, a in enumerate(arrays):
        out[i, :, : a.shape[0]] = a.T
    return out.reshape(len(arrays), n_feat * t_max)
