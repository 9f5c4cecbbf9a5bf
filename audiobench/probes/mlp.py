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
from audiobench.probes.neural import Batches, Hyper, MultilabelLoss, TorchProbe

__all__ = ["MLPProbe"]


class MLPProbe(TorchProbe):
    """One-hidden-layer perceptron on clip embeddings.

    Parameters
    ----------
    hidden_dim:
        Hidden units.
    dropout:
        Dropout on the hidden layer.
    epochs, batch_size, lr, weight_decay, patience, early_stopping, standardise,
    multilabel_loss, holdout, device, multilabel, seed:
        See :class:`~audiobench.probes.neural.TorchProbe`.
    """

    name: ClassVar[str] = "mlp"
    level: ClassVar[ProbeLevel] = "vector"

    def __init__(
        self,
        *,
        hidden_dim: int = 256,
        dropout: float = 0.1,
        epochs: int = 50,
        batch_size: int = 64,
        lr: Hyper = 1e-3,
        weight_decay: Hyper = 1e-2,
        patience: int = 10,
        early_stopping: bool = True,
        standardise: bool = True,
        multilabel_loss: MultilabelLoss = "binary_cross_entropy",
        holdout: float = 0.2,
        device: str | torch.device | None = None,
        multilabel: bool = False,
        seed: int = 0,
    ) -> None:
        super().__init__(
            epochs=epochs,
            batch_size=batch_size,
            lr=lr,
            weight_decay=weight_decay,
            patience=patience,
            early_stopping=early_stopping,
            standardise=standardise,
            multilabel_loss=multilabel_loss,
            holdout=holdout,
            device=device,
            multilabel=multilabel,
            seed=seed,
        )
        if hidden_dim < 1 or not 0 <= dropout < 1:
            raise ValueError(
                f"need hidden_dim >= 1 and 0 <= dropout < 1, got {hidden_dim}, {dropout}"
            )
        self.hidden_dim = int(hidden_dim)
        self.dropout = float(dropout)

    def _build(self, train: Batches, targets: np.ndarray, n_classes: int) -> nn.Module:
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
