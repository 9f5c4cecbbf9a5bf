"""MLP probe: one hidden layer on standardised clip embeddings.

A step up from the linear probe that can pick up non-linearly separable structure, kept small
so that it measures the embedding rather than its own capacity. Trained with the shared
recipe of :mod:`audiobench.probes.neural` (AdamW, cosine schedule, early stopping on the
validation loss when a validation split is given).

Defaults: 256 GELU units (enough for a few hundred classes, small next to typical embedding
sizes), dropout 0.1, lr 1e-3 (AdamW's usual rate for a shallow network on standardised
inputs), weight decay 1e-2, 50 epochs of batches of 64, patience 10.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import torch
from torch import nn

from audiobench.probes.base import ProbeLevel
from audiobench.probes.neural import Batches, TorchProbe
from audiobench.probes.recipe import TrainingRecipe

__all__ = ["MLPProbe"]


class MLPProbe(TorchProbe):
    """One-hidden-layer perceptron on clip embeddings.

    Parameters
    ----------
    hidden_dim:
        Hidden units.
    dropout:
        Dropout on the hidden layer.
    recipe, device, multilabel, seed, **training:
        See :class:`~audiobench.probes.neural.TorchProbe` (the recipe's fields:
        :class:`~audiobench.probes.recipe.TrainingRecipe`).
    """

    name: ClassVar[str] = "mlp"
    level: ClassVar[ProbeLevel] = "vector"

    default_recipe: ClassVar[TrainingRecipe] = TrainingRecipe(
        epochs=50, batch_size=64, lr=(1e-3,), weight_decay=(1e-2,), patience=10
    )

    def __init__(
        self,
        *,
        hidden_dim: int = 256,
        dropout: float = 0.1,
        recipe: TrainingRecipe | None = None,
        device: str | torch.device | None = None,
        multilabel: bool = False,
        seed: int = 0,
        **training: Any,
    ) -> None:
        super().__init__(recipe=recipe, device=device, multilabel=multilabel, seed=seed, **training)
        if hidden_dim < 1 or not 0 <= dropout < 1:
            raise ValueError(
                f"need hidden_dim >= 1 and 0 <= dropout < 1, got {hidden_dim}, {dropout}"
            )
        self.hidden_dim = int(hidden_dim)
        self.dropout = float(dropout)

    def _build(self, train: Batches, targets: np.ndarray, n_classes: int, seed: int) -> nn.Module:
        return nn.Sequential(
            nn.Linear(train.n_features, self.hidden_dim),
            nn.GELU(),
            nn.Dropout(self.dropout),
            nn.Linear(self.hidden_dim, n_classes),
        )

    def _architecture(self) -> dict[str, Any]:
        return {
            "architecture": "linear-gelu-dropout-linear",
            "hidden_dim": self.hidden_dim,
            "dropout": self.dropout,
        }
