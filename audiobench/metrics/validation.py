"""Input checks for embeddings, clip ids and distance matrices.

Errors name the offending clips so that a user can find them in their data: by the caller's
clip id when ``ids`` were given, else by row index.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import torch

from audiobench.errors import DataError
from audiobench.metrics.blocks import row_ranges
from audiobench.metrics.errors import InvalidEmbeddingsError
from audiobench.metrics.labels import EncodedLabels, encode_labels
from audiobench.metrics.naming import MAX_LISTED_CLIPS as MAX_LISTED_CLIPS
from audiobench.metrics.naming import describe_clips as describe_clips
from audiobench.metrics.runtime import is_tensor


def clip_names(
    positions: Sequence[int] | np.ndarray, ids: Sequence[str | int] | None
) -> list[str | int]:
    """The caller's id of each clip position (or the position itself when there are no ids).

    ``ids`` may itself hold integers: the grid passes the input indices of the labelled clips
    so that errors about a subset still name clips by their position in the caller's input.
    """
    if ids is None:
        return [int(p) for p in positions]
    return [ids[int(p)] for p in positions]


def check_positive_int(value: object, name: str = "k") -> int:
    """``value`` as an ``int``, checked to be a positive integer (``bool`` is refused)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def check_ks(
    ks: Iterable[int], n_labelled: int | None = None, *, name: str = "ks"
) -> tuple[int, ...]:
    """Validate neighbour counts or rank cut-offs: a non-empty sequence of positive integers.

    With ``n_labelled`` (precision@k among labelled clips) each k must also be at most
    ``n_labelled − 1``. Order and repeats are kept; callers that need unique cut-offs drop
    repeats themselves.
    """
    if isinstance(ks, int | np.integer | str | bytes):
        raise ValueError(f"{name} must be a sequence of positive integers, got {ks!r}")
    checked = tuple(check_positive_int(k) for k in ks)
    if not checked:
        raise ValueError(
            f"{name} must not be empty: expected a non-empty sequence of positive integers"
        )
    if n_labelled is not None:
        for k in checked:
            if k > n_labelled - 1:
                raise DataError(f"P@{k} needs more than {k} labelled clips, got {n_labelled}")
    return checked


def invalid_clips_error(
    problem: str, positions: Sequence[int] | np.ndarray, ids: Sequence[str | int] | None
) -> InvalidEmbeddingsError:
    """Build an :class:`InvalidEmbeddingsError` for ``problem`` naming the given clips."""
    names = clip_names(positions, ids)
    noun = "clip" if len(names) == 1 else "clips"
    kind = "indices" if all(isinstance(name, int) for name in names) else "ids"
    return InvalidEmbeddingsError(
        f"{problem}: {len(names)} {noun} ({kind}: {describe_clips(names)})", names
    )


def check_finite(arrays: Sequence[np.ndarray] | np.ndarray, ids: Sequence[str], what: str) -> None:
    """Raise :class:`InvalidEmbeddingsError` naming by ``ids`` the clips whose embedding (one
    array per clip, or a matrix row) holds NaN or infinite values; ``what`` starts the message."""
    if isinstance(arrays, np.ndarray) and arrays.ndim == 2:
        bad = np.flatnonzero(~np.isfinite(arrays).all(axis=1)).tolist()
    else:
        bad = [i for i, array in enumerate(arrays) if not np.isfinite(array).all()]
    if bad:
        raise invalid_clips_error(f"{what} contain NaN or infinite values", bad, ids)


def validate_ids(ids: Sequence[object] | None, n_clips: int) -> list[str] | None:
    """Return the clip ids as strings, checking there is one per clip."""
    if ids is None:
        return None
    if isinstance(ids, str | bytes):
        raise ValueError("ids must be a sequence with one id per clip, not a string")
    names = [str(clip_id) for clip_id in (ids.tolist() if isinstance(ids, np.ndarray) else ids)]
    if len(names) != n_clips:
        raise ValueError(f"got {len(names)} ids for {n_clips} clips")
    return names


def _to_numpy(values: object) -> np.ndarray:
    import torch

    if isinstance(values, torch.Tensor):
        return values.detach().cpu().numpy()
    return np.asarray(values)


def validate_embeddings(
    X: object, ids: Sequence[object] | None = None
) -> tuple[np.ndarray, list[str] | None]:
    """Return embeddings as a C-contiguous float64 array of shape (N, dim), and the clip ids.

    float64 because the embedding-side preprocessing (PCA, normalisation, ranks) is cheap
    relative to the N × N work and benefits from the precision; the N × N matrix itself is
    float32.

    The ids come back as strings (``None`` when not given), checked to be one per clip.

    Raises
    ------
    ValueError
        If X is not a 2-D real array with at least two rows and one column, or the number of
        ids differs from the number of clips.
    InvalidEmbeddingsError
        If some rows contain NaN or infinite values (names those clips).
    """
    array = _to_numpy(X)
    if array.ndim != 2:
        raise ValueError(
            f"embeddings must be a 2-D array (clips × features), got shape {array.shape}"
        )
    if array.shape[0] < 2 or array.shape[1] < 1:
        raise DataError(f"need at least 2 clips and 1 feature, got shape {array.shape}")
    if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise ValueError(f"embeddings must be real numbers, got dtype {array.dtype}")
    names = validate_ids(ids, array.shape[0])
    array = np.ascontiguousarray(array, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(array).all(axis=1))
    if bad.size:
        raise invalid_clips_error("embeddings contain NaN or infinite values", bad, names)
    return array, names


def validate_distance_matrix(D: object, device: torch.device) -> torch.Tensor:
    """Return D as a contiguous floating tensor on ``device`` (no copy when it already is one).

    float32 and float64 are kept as given; other dtypes become float64. D must be square and
    finite. Symmetry and the zero diagonal are not checked (that would cost a full pass); every
    metric excludes self-distances explicitly, so a non-zero diagonal does not change results.
    """
    import torch

    if isinstance(D, torch.Tensor):
        tensor = D.detach()
    else:
        array = np.asarray(D)
        if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
            raise ValueError(f"distance matrix must hold real numbers, got dtype {array.dtype}")
        tensor = torch.from_numpy(np.ascontiguousarray(array))
    if tensor.dtype not in (torch.float32, torch.float64):
        tensor = tensor.to(torch.float64)
    if tensor.ndim != 2 or tensor.shape[0] != tensor.shape[1]:
        raise ValueError(f"distance matrix must be square, got shape {tuple(tensor.shape)}")
    if tensor.shape[0] < 2:
        raise ValueError("distance matrix must cover at least 2 clips")
    tensor = tensor.to(device).contiguous()
    n = int(tensor.shape[0])
    finite_rows = torch.empty(n, dtype=torch.bool, device=tensor.device)
    # A row sum is finite when every entry is (NaN and ±inf propagate), so one cheap pass
    # finds candidate rows; only those are checked entry by entry (a sum can also overflow).
    # Row blocks: torch.isfinite on the whole matrix would allocate N × N temporaries.
    for start, stop in row_ranges(n, n):
        finite_rows[start:stop] = torch.isfinite(tensor[start:stop].sum(dim=1))
    for row in torch.nonzero(~finite_rows).flatten().tolist():
        finite_rows[row] = bool(torch.isfinite(tensor[row]).all())
    if not bool(finite_rows.all()):
        bad = torch.nonzero(~finite_rows).flatten().cpu().numpy()
        raise DataError(
            f"distance matrix has NaN or infinite values in rows {describe_clips(bad.tolist())}"
        )
    return tensor


def validate_labelled_matrix(
    D: object, labels: object, device: torch.device
) -> tuple[torch.Tensor, EncodedLabels]:
    """Validate a distance matrix and encode one label per row (see :mod:`labels`)."""
    tensor = validate_distance_matrix(D, device)
    return tensor, encode_labels(labels, int(tensor.shape[0]))  # type: ignore[arg-type]


def real_matrix(values: object, name: str) -> np.ndarray:
    """A finite 2-D float array (float32/float64 kept, else float64), at least 1 × 1."""
    if is_tensor(values):
        values = values.detach().cpu().numpy()  # type: ignore[attr-defined]
    array = np.asarray(values)
    if array.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got shape {array.shape}")
    if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise ValueError(f"{name} must hold real numbers, got dtype {array.dtype}")
    if array.shape[0] < 1 or array.shape[1] < 1:
        raise ValueError(f"{name} is empty (shape {array.shape})")
    if array.dtype not in (np.float32, np.float64):
        array = array.astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(array).all(axis=1))
    if bad.size:
        raise ValueError(
            f"{name} has NaN or infinite values in {bad.size} row(s) "
            f"(indices: {describe_clips(bad.tolist())})"
        )
    return array


def real_array(values: object, name: str, ndim: int, what: str) -> np.ndarray:
    """A finite real array of ``ndim`` dimensions (``what`` describes them in errors); float32
    and float64 are kept as given, integers become float64."""
    array = np.asarray(values)
    if array.dtype == object or not (
        np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)
    ):
        raise ValueError(f"{name} must hold real numbers, got dtype {array.dtype}")
    if array.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D ({what}), got shape {array.shape}")
    if not np.isfinite(array).all():
        bad = np.flatnonzero(~np.isfinite(array).reshape(array.shape[0], -1).all(axis=1))
        raise ValueError(f"{name} has NaN or infinite values (rows {bad[:5].tolist()})")
    return array if array.dtype in (np.float32, np.float64) else array.astype(np.float64)
