"""Attentive probe: learned queries cross-attend over the frames of a clip.

For sequence outputs the pooling is part of what is learned: a few learned query tokens
attend, with multi-head cross-attention, over the (standardised, linearly projected) frames;
padding frames are excluded by a key mask, so a clip's prediction does not depend on what it
is batched with. The attended vectors pass an output projection and layer norm, then a linear
head. Mean pooling dilutes an event that occupies a few frames of a long clip; attention can
weight those frames up.

Defaults: width 128 with 4 heads (each head can lock onto a different kind of frame; small
enough to train in seconds on CPU), one query (as in the attentive probes of V-JEPA and AIM:
the heads already give several attention patterns), dropout 0.1 before the head, lr 1e-3,
weight decay 1e-2, 30 epochs of batches of 32, patience 8.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import torch
from torch import nn

from audiobench.probes.base import ProbeLevel
from audiobench.probes.neural import Batches, TorchProbe
from audiobench.probes.recipe import TrainingRecipe

__all__ = ["AttentivePooling", "AttentiveProbe"]


class AttentivePooling(nn.Module):
    """Multi-head cross-attention from learned queries to frames, then a linear classifier."""

    def __init__(
        self,
        n_features: int,
        n_classes: int,
        *,
        dim: int = 128,
        num_heads: int = 4,
        num_queries: int = 1,
        dropout: float = 0.1,
    ) -> None:
        super().__init__()
        if dim % num_heads:
            raise ValueError(f"dim ({dim}) must be divisible by num_heads ({num_heads})")
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.queries = nn.Parameter(torch.randn(num_queries, dim))
        self.key = nn.Linear(n_features, dim)
        self.value = nn.Linear(n_features, dim)
        self.out = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(num_queries * dim, n_classes)

    def attention(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Pooled vectors ``[B, Q, dim]`` and attention weights ``[B, heads, Q, T]``.

        ``mask`` is ``[B, T]``, True on real frames; padded frames get weight exactly 0.
        """
        batch, frames, _ = x.shape
        heads, head_dim = self.num_heads, self.head_dim
        keys = self.key(x).view(batch, frames, heads, head_dim).transpose(1, 2)
        values = self.value(x).view(batch, frames, heads, head_dim).transpose(1, 2)
        queries = self.queries.view(-1, heads, head_dim).transpose(0, 1)  # [heads, Q, hd]
        logits = torch.einsum("hqd,bhtd->bhqt", queries, keys) / math.sqrt(head_dim)
        logits = logits.masked_fill(~mask[:, None, None, :], float("-inf"))
        weights = torch.softmax(logits, dim=-1)
        pooled = torch.einsum("bhqt,bhtd->bhqd", weights, values)
        pooled = pooled.transpose(1, 2).reshape(batch, -1, heads * head_dim)
        return self.norm(self.out(pooled)), weights

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        pooled, _ = self.attention(x, mask)
        logits: torch.Tensor = self.classifier(self.dropout(pooled.flatten(1)))
        return logits


class AttentiveProbe(TorchProbe):
    """Attentive-pooling probe on frame sequences (a list of ``[T_i, D]`` arrays).

    Parameters
    ----------
    dim:
        Width of keys, values and queries (frames are projected from D to it); ``None``: the
        frames' own width D (the model's full width).
    num_heads:
        Attention heads (must divide ``dim``; with ``dim=None``, the largest count up to
        ``num_heads`` that divides D).
    num_queries:
        Learned query tokens; their outputs are concatenated for the head.
    dropout:
        Dropout before the linear head.
    recipe, device, multilabel, seed, **training:
        See :class:`~audiobench.probes.neural.TorchProbe` (the recipe's fields:
        :class:`~audiobench.probes.recipe.TrainingRecipe`).
    """

    name: ClassVar[str] = "attentive"
    level: ClassVar[ProbeLevel] = "token"

    default_recipe: ClassVar[TrainingRecipe] = TrainingRecipe(
        epochs=30, batch_size=32, lr=(1e-3,), weight_decay=(1e-2,), patience=8
    )

    def __init__(
        self,
        *,
        dim: int | None = 128,
        num_heads: int = 4,
        num_queries: int = 1,
        dropout: float = 0.1,
        recipe: TrainingRecipe | None = None,
        device: str | torch.device | None = None,
        multilabel: bool = False,
        seed: int = 0,
        **training: Any,
    ) -> None:
        super().__init__(recipe=recipe, device=device, multilabel=multilabel, seed=seed, **training)
        if num_heads < 1 or (dim is not None and (dim < 1 or dim % num_heads)):
            raise ValueError(f"dim ({dim}) must be a positive multiple of num_heads ({num_heads})")
        if num_queries < 1 or not 0 <= dropout < 1:
            raise ValueError(
                f"need num_queries >= 1 and 0 <= dropout < 1, got {num_queries}, {dropout}"
            )
        self.dim = None if dim is None else int(dim)
        self.num_heads = int(num_heads)
        self._width: tuple[int, int] | None = None  # (dim, heads) of the fitted module
        self.num_queries = int(num_queries)
        self.dropout = float(dropout)

    def _build(self, train: Batches, targets: np.ndarray, n_classes: int, seed: int) -> nn.Module:
        dim, heads = self.dim, self.num_heads
        if dim is None:  # the full width: as many heads as divide it, up to num_heads
            dim = train.n_features
            heads = max(h for h in range(1, self.num_heads + 1) if dim % h == 0)
        self._width = (dim, heads)
        return AttentivePooling(
            train.n_features,
            n_classes,
            dim=dim,
            num_heads=heads,
            num_queries=self.num_queries,
            dropout=self.dropout,
        )

    def _architecture(self) -> dict[str, Any]:
        dim, heads = self._width or (self.dim, self.num_heads)
        return {
            "architecture": "cross-attention(learned queries)-layernorm-linear",
            "dim": dim,
            "full_width": self.dim is None,
            "num_heads": heads,
            "num_queries": self.num_queries,
            "dropout": self.dropout,
        }
