"""Token maps, and the token-probe recipe of the probing paper ("paper" protocol).

The paper: Rauch, Heinrich, Ghaffari, Miklautz, Moummad, Sick, Scholz, "Unmute the Patch
Tokens: Rethinking Probing in Multi-Label Audio Classification", ICLR 2026
(arXiv:2509.24901). Its probes (attentive pooling, binarised prototypes) read the frozen
encoder's token map.

Token map (:func:`token_map`, both protocols of the classification family): the tokens that
stand for the audio. An encoder declares what else its output holds (:class:`ModelMeta`):

- ``n_prefix_tokens``: tokens put before the patches (AST: the class and distillation tokens,
  2), left out;
- ``padded_frame_rate``: output frames per second of audio for encoders that pad every clip to
  a fixed window (Whisper: 50, its 30 s window is 1,500 frames); of a clip of ``s`` seconds
  only the first ``ceil(s · rate)`` frames hold audio (:func:`valid_frames`), the rest are
  padding and are left out;
- ``patch_grid``: the layout of encoders whose tokens are a 2-D patch grid over a spectrogram
  padded in time (AST: 12 frequency rows × 101 time columns over 1,024 frames, frequency-major,
  :class:`~audiobench.encoder.PatchGrid`); of a clip of ``s`` seconds the first
  ``1 + floor((s − frame_length) · frame_rate)`` input frames hold audio, and every time column
  that starts at or past them reads only padding: all its patches (one per frequency row) are
  left out, the kept ones stay in the grid's order. A clip that fills the window keeps them
  all.

The recipe (:func:`paper_params`, the family's ``token_recipe="paper"``), from the paper's
appendix D.4 and its Table 10:

- raw frozen tokens: no standardisation, so protobin's cosine similarities compare the
  prototypes with the tokens as the encoder gives them (per-feature centring would move every
  token by the same vector and change every angle);
- multi-label: the asymmetric loss; the paper gives no constants for it, so ASL's recommended
  ``γ+ = 0``, ``γ- = 4``, margin ``0.05`` (Ridnik et al. 2021; :mod:`audiobench.probes.losses`)
  stand in; multi-class: cross-entropy;
- AdamW with a cosine schedule over 30 epochs, batches of 128, no early stopping; protobin with
  20 prototypes per class, its prototypes trained at the global learning rate (one parameter
  group);
- the learning rate and weight decay chosen on the validation split's mAP (multi-class:
  accuracy), or on a seeded 20 % of the training clips (whole groups for a grouped task) when
  the task has no validation split (then retrained on all of them), within the paper's ranges
  (:data:`PAPER_RANGES`): learning rate in [1e-4, 7e-3] for the attentive probe, [2e-3, 8e-2]
  for protobin, weight decay in [1e-5, 5e-4] for both, log-uniform. Two ways
  (``search``):

  - ``"grid"`` (default): a 2 × 2 grid inside those ranges (:data:`PAPER_GRIDS`), 4 fits per
    split and seed: cheap, and the way to compare models under one small budget;
  - ``"paper"``: the paper's own search (:mod:`audiobench.probes.search`): 50 trials per
    (model, task, probe), 25 from a Sobol sequence then 25 by TPE, under successive halving on
    the validation score, the 3 best re-trained with 5 seeds and the best mean kept; needs
    Optuna (``pip install 'audiobench[search]'``). ``trials`` sets the budget (half of it
    Sobol).

  On a cross-validated task the paper designates one fold a priori as the validation fold:
  under ``"paper"``, the split testing fold ``i`` validates on the next fold and trains on
  the others (:func:`~audiobench.probes.splits.with_validation_folds`); the grid keeps the
  20 % held out of the training folds. A task or a run may replace any of it through
  ``probe_params``;
- the attentive probe at the model's full width (``dim`` = the token width);
- :data:`PAPER_SEEDS` seeds, reported as mean ± standard deviation; the first chooses the
  hyper-parameters, every seed trains and tests with them.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Final, Literal

import numpy as np

if TYPE_CHECKING:
    from audiobench.encoder import PatchGrid

__all__ = [
    "PAPER_GRIDS",
    "PAPER_PROTOTYPES",
    "PAPER_RANGES",
    "PAPER_SEEDS",
    "paper_params",
    "token_map",
    "valid_frames",
]

#: Seeds per token probe under the paper recipe (mean ± std over them).
PAPER_SEEDS: Final[int] = 5

#: The paper's search ranges (appendix D.4, Table 10): ``(low, high)``, log-uniform.
PAPER_RANGES: Final[dict[str, dict[str, tuple[float, float]]]] = {
    "attentive": {"lr": (1e-4, 7e-3), "weight_decay": (1e-5, 5e-4)},
    "protobin": {"lr": (2e-3, 8e-2), "weight_decay": (1e-5, 5e-4)},
}

#: The default search's grid per token probe: two learning rates and two weight decays a
#: decade apart inside :data:`PAPER_RANGES` (a test keeps them inside).
PAPER_GRIDS: Final[dict[str, dict[str, tuple[float, ...]]]] = {
    "attentive": {"lr": (1e-4, 1e-3), "weight_decay": (5e-5, 5e-4)},
    "protobin": {"lr": (3e-3, 3e-2), "weight_decay": (5e-5, 5e-4)},
}

#: The training recipe shared by both token probes under the paper recipe.
_RECIPE: Final[dict[str, Any]] = {
    "epochs": 30,
    "batch_size": 128,
    "early_stopping": False,
    "standardise": False,
}

#: Prototypes per class of protobin (the paper: 20).
PAPER_PROTOTYPES: Final[int] = 20


def paper_params(
    name: str,
    *,
    multilabel: bool,
    search: Literal["grid", "paper"] = "grid",
    trials: int = 50,
) -> dict[str, Any]:
    """Keyword arguments of token probe ``name`` under the paper recipe.

    ``search="grid"``: the grid :data:`PAPER_GRIDS`; ``"paper"``: the paper's search over
    :data:`PAPER_RANGES` with ``trials`` trials (:class:`~audiobench.probes.search.PaperSearch`,
    which needs Optuna).
    """
    if name not in PAPER_GRIDS:
        raise ValueError(f"the paper recipe covers the token probes {list(PAPER_GRIDS)}")
    if search not in ("grid", "paper"):
        raise ValueError(f"search must be 'grid' or 'paper', got {search!r}")
    params: dict[str, Any] = {**_RECIPE, **PAPER_GRIDS[name]}
    if search == "paper":
        from audiobench.probes.search import PaperSearch

        params["search"] = PaperSearch(**PAPER_RANGES[name], trials=trials)
    if multilabel:
        params["multilabel_loss"] = "asymmetric"
    if name == "attentive":
        params["dim"] = None  # the model's full width
    else:
        params["prototypes_per_class"] = PAPER_PROTOTYPES
    return params


def valid_frames(seconds: float, frame_rate: float) -> int:
    """Frames holding audio of a ``seconds``-long clip: ``ceil(seconds · frame_rate)``, at least 1.

    A hair below an integer product counts as that integer (``0.1 · 50`` in floating point).
    """
    if not seconds >= 0 or not frame_rate > 0:
        raise ValueError(f"need seconds >= 0 and frame_rate > 0, got {seconds}, {frame_rate}")
    return max(1, math.ceil(seconds * frame_rate - 1e-9))


def token_map(
    frames: np.ndarray,
    *,
    n_prefix: int = 0,
    n_valid: int | None = None,
    grid: PatchGrid | None = None,
) -> np.ndarray:
    """One clip's token map: ``frames`` without its first ``n_prefix`` tokens, and without the
    tokens that hold only padding (``n_valid=None``: none do).

    Without ``grid``, the tokens after the prefix are frames in time and the first ``n_valid``
    of them hold audio: the map is cut to them (a view, no copy). With ``grid``, they are that
    patch grid and ``n_valid`` counts the grid's *input* frames that hold audio
    (:meth:`~audiobench.encoder.PatchGrid.valid_frames`): the time columns that start at or
    past it are left out, all their frequency rows, and the kept patches stay in the grid's
    frequency-major order (a copy when columns are left out).

    Raises ``ValueError`` when nothing would be left, or the tokens do not fill the grid.
    """
    if n_prefix < 0 or (n_valid is not None and n_valid < 1):
        raise ValueError(f"need n_prefix >= 0 and n_valid >= 1, got {n_prefix}, {n_valid}")
    if frames.shape[0] <= n_prefix:
        raise ValueError(
            f"the output has {frames.shape[0]} token(s), no more than the {n_prefix} prefix "
            "token(s) the model declares"
        )
    if grid is not None:
        return _grid_token_map(frames[n_prefix:], grid, n_valid, n_prefix)
    stop = frames.shape[0] if n_valid is None else min(frames.shape[0], n_prefix + n_valid)
    return frames[n_prefix:stop]


def _grid_token_map(
    patches: np.ndarray, grid: PatchGrid, n_valid: int | None, n_prefix: int
) -> np.ndarray:
    """The patches of the columns that start before input frame ``n_valid``, row by row."""
    if patches.shape[0] != grid.n_patches:
        raise ValueError(
            f"the output has {patches.shape[0]} token(s) after the {n_prefix} prefix token(s), "
            f"not the {grid.rows} × {grid.columns} = {grid.n_patches} patches of the grid the "
            "model declares"
        )
    keep = grid.columns if n_valid is None else grid.valid_columns(n_valid)
    if keep == grid.columns:
        return patches
    by_row = patches.reshape(grid.rows, grid.columns, *patches.shape[1:])
    return by_row[:, :keep].reshape(grid.rows * keep, *patches.shape[1:])
