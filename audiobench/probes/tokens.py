"""The token maps the token probes read: each clip's frame sequence, cut to its audio.

An encoder's unpooled output (``embed(..., pooled=False)``) may hold tokens that do not stand
for the audio, as the encoder declares them (:class:`~audiobench.encoder.ModelMeta`): the
``n_prefix_tokens`` it puts first (AST's class and distillation tokens), the frames past
``ceil(duration × rate)`` of a model that pads clips to a fixed window
(``padded_frame_rate``, Whisper), or the columns of a patch grid that start past the clip's
last input frame (``patch_grid``). :func:`token_maps` leaves them out
(:func:`audiobench.probes.paper.token_map`) and counts what it left out;
:func:`embed_token_maps` embeds a subset's clips frame-level chunk by chunk
(:data:`FRAME_CHUNK`) and cuts each chunk before the next.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from audiobench.errors import DataError
from audiobench.metrics.naming import describe_clips

if TYPE_CHECKING:
    from audiobench.audio import Clip
    from audiobench.encoder import Encoder
    from audiobench.task import Embedder, Subset

__all__ = ["FRAME_CHUNK", "embed_token_maps", "token_maps", "token_skip_reason"]

#: Clips embedded frame-level at a time: each chunk is cut to its token maps (and the padded
#: windows freed) before the next, so a subset never holds every clip's window at once
#: (Whisper pads every clip to 1500 frames: 2,000 clips would be 15 GB at d = 1280).
FRAME_CHUNK = 512


def embed_token_maps(
    clips: list[Clip], embedder: Embedder, subset: Subset
) -> tuple[list[Clip], list[np.ndarray], dict[str, Any] | None]:
    """The clips of ``subset`` that could be embedded frame-level, their token maps, and what
    was left out of them (:func:`token_maps`), chunk by chunk (:data:`FRAME_CHUNK`)."""
    kept: list[Clip] = []
    maps: list[np.ndarray] = []
    info: dict[str, Any] | None = None
    n_frames = 0
    description = f"{subset.label} frames"
    for start in range(0, len(clips), FRAME_CHUNK):
        part, frames = embedder.embed(clips[start : start + FRAME_CHUNK], description, pooled=False)
        part_maps, info = token_maps(part, frames, embedder, subset.where)
        kept += part
        maps += part_maps
        n_frames += sum(int(f.shape[0]) for f in frames)
    if info is not None:  # the counts of every chunk, not only the last one's
        n_tokens = sum(int(m.shape[0]) for m in maps)
        info |= {"n_tokens": n_tokens, "n_left_out": n_frames - n_tokens}
    return kept, maps, info


def token_maps(
    clips: list[Clip], frames: list[np.ndarray], embedder: Embedder, where: str
) -> tuple[list[np.ndarray], dict[str, Any] | None]:
    """Every clip's token map (:func:`audiobench.probes.paper.token_map`; copies, so that the
    full sequences can be freed), and what was left out (None when the encoder declares
    nothing to leave out: then the sequences themselves)."""
    from audiobench.probes.paper import token_map, valid_frames

    meta = embedder.encoder.meta
    n_prefix = int(getattr(meta, "n_prefix_tokens", 0) or 0)
    rate = getattr(meta, "padded_frame_rate", None)
    grid = getattr(meta, "patch_grid", None)
    timed = rate is not None or grid is not None  # padding is told from the clip's duration
    if not n_prefix and not timed:
        return frames, None
    if missing := [c.id for c in clips if timed and embedder.durations.get(c.id) is None]:
        raise DataError(
            f"{where}: model {meta.name!r} pads clips to a window, and {len(missing)} clip(s) "
            f"have no decoded duration to tell its padding frames: {describe_clips(missing)}"
        )
    maps: list[np.ndarray] = []
    for clip, seq in zip(clips, frames, strict=True):
        seconds = embedder.durations.get(clip.id, 0.0)
        try:  # a grid counts its input frames, a padded model its own
            n_valid = (
                grid.valid_frames(seconds)
                if grid is not None
                else (valid_frames(seconds, float(rate)) if rate is not None else None)
            )
            maps.append(np.array(token_map(seq, n_prefix=n_prefix, n_valid=n_valid, grid=grid)))
        except ValueError as exc:
            raise DataError(f"{where}: clip {clip.id!r}: {exc}") from None
    kept = sum(int(m.shape[0]) for m in maps)
    return maps, {
        "n_prefix_tokens": n_prefix,
        "padded_frame_rate": rate,
        "n_tokens": kept,
        "n_left_out": sum(int(f.shape[0]) for f in frames) - kept,
        **({"patch_grid": grid.model_dump()} if grid is not None else {}),
    }


def token_skip_reason(encoder: Encoder) -> str | None:
    """Why token-level probes cannot run on ``encoder`` (None: they can)."""
    from audiobench.encoder import OutputKind

    kind = encoder.meta.output_kind
    if kind == OutputKind.SEQUENCE:
        return None
    what = "one vector per clip" if kind == OutputKind.VECTOR else "discrete codes"
    return (
        f"model {encoder.meta.name!r} outputs {what} (output kind {str(kind)!r}); "
        "token-level probes need frame sequences"
    )
