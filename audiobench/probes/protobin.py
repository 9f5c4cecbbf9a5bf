"""Binarised prototypical pooling (``protobin``) on frame sequences.

J learnable prototypes per class, J·C in all, shared by every class ("class-agnostic": no
prototype is tied to a class; the final linear layer learns which prototypes speak for which
class). Each prototype is binarised with sign() in the forward pass, a corner of the
hypercube, and trained through a straight-through estimator (the gradient with respect to the
binary prototype is passed unchanged to its real-valued latent weights). Every frame is
compared to every binary prototype by cosine similarity; the maximum over a clip's real frames
(padding masked out) says how strongly the clip contains something like that prototype
anywhere; a linear layer maps the J·C maxima to class logits.

Max over frames keeps a short event in a long clip as visible as a long one (mean pooling
dilutes it); binary prototypes are cheap to store and compare and act as a regulariser.

The latent prototypes start at randomly drawn (seeded) standardised training frames, J from
clips of each class, scaled into [-1, 1] per prototype: each starts as the sign pattern of a
real frame rather than a random corner, which makes training fast and stable. With
``standardise=False`` (the paper recipe, :mod:`audiobench.probes.paper`) the frames stay as
the frozen encoder gives them, for the initial prototypes and for every cosine similarity.

Defaults: J = 20; AdamW with a cosine schedule at lr 3e-2, higher than the other neural
probes because cosine maxima lie in [-1, 1] and differ between classes by a few tenths, so
the linear layer needs weights of order 10 for confident logits, and latent prototype weights
in [-1, 1] must move by about their own size to flip a sign (at 1e-3 neither happens within a
few epochs; measured on generated data, 1e-2 to 5e-2 all reach the same accuracy); weight
decay 1e-4 (decay pulls latent weights towards 0, where signs flip freely: keep it light);
30 epochs of batches of 32, patience 8.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from audiobench.probes.base import ProbeLevel
from audiobench.probes.neural import Batches, TorchProbe
from audiobench.probes.recipe import TrainingRecipe

__all__ = ["ProtoBinPooling", "ProtoBinProbe", "binarise"]


def binarise(weights: torch.Tensor) -> torch.Tensor:
    """sign(weights) (0 counts as +1) forward; identity gradient (straight-through) backward."""
    signs = torch.where(weights >= 0, 1.0, -1.0).to(weights.dtype)
    return weights + (signs - weights).detach()


class ProtoBinPooling(nn.Module):
    """Binary prototypes, cosine similarity per frame, max over frames, linear classifier."""

    def __init__(self, n_features: int, n_classes: int, init: torch.Tensor) -> None:
        super().__init__()
        if init.ndim != 2 or init.shape[1] != n_features:
            raise ValueError(f"init must be [prototypes, {n_features}], got {tuple(init.shape)}")
        self.prototypes = nn.Parameter(init.clone())
        self.classifier = nn.Linear(init.shape[0], n_classes)

    def similarities(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Max cosine similarity over real frames, ``[B, prototypes]``.

        ``mask`` is ``[B, T]``, True on real frames; padded frames never win the max.
        """
        binary = binarise(self.prototypes) / math.sqrt(self.prototypes.shape[1])
        frames = F.normalize(x, dim=-1)
        cosine = frames @ binary.T  # [B, T, prototypes]
        cosine = cosine.masked_fill(~mask[:, :, None], float("-inf"))
        return cosine.amax(dim=1)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        logits: torch.Tensor = self.classifier(self.similarities(x, mask))
        return logits


class ProtoBinProbe(TorchProbe):
    """Binarised-prototype probe on frame sequences (a list of ``[T_i, D]`` arrays).

    Parameters
    ----------
    prototypes_per_class:
        J; the probe learns J·C prototypes shared by all classes.
    recipe, device, multilabel, seed, **training:
        See :class:`~audiobench.probes.neural.TorchProbe` (the recipe's fields:
        :class:`~audiobench.probes.recipe.TrainingRecipe`).
    """

    name: ClassVar[str] = "protobin"
    level: ClassVar[ProbeLevel] = "token"

    default_recipe: ClassVar[TrainingRecipe] = TrainingRecipe(
        epochs=30, batch_size=32, lr=(3e-2,), weight_decay=(1e-4,), patience=8
    )

    def __init__(
        self,
        *,
        prototypes_per_class: int = 20,
        recipe: TrainingRecipe | None = None,
        device: str | torch.device | None = None,
        multilabel: bool = False,
        seed: int = 0,
        **training: Any,
    ) -> None:
        super().__init__(recipe=recipe, device=device, multilabel=multilabel, seed=seed, **training)
        if prototypes_per_class < 1:
            raise ValueError(f"prototypes_per_class must be positive, got {prototypes_per_class}")
        self.prototypes_per_class = int(prototypes_per_class)

    def _initial_prototypes(
        self, train: Batches, targets: np.ndarray, n_classes: int, seed: int
    ) -> torch.Tensor:
        """J (standardised) frames drawn from clips of each class, scaled into [-1, 1].

        A class without a training clip (the training part of a hyper-parameter search may
        miss a rare one) draws from all clips.
        """
        rng = np.random.default_rng(seed)
        rows = []
        for code in range(n_classes):
            members = np.flatnonzero(targets[:, code] > 0 if targets.ndim == 2 else targets == code)
            if not members.size:
                members = np.arange(len(train))
            clips = rng.choice(members, size=self.prototypes_per_class, replace=True)
            for clip in clips:
                sequence = train.standardised(int(clip))
                rows.append(sequence[int(rng.integers(sequence.shape[0]))])
        init = torch.stack(rows).float()
        scale = init.abs().amax(dim=1, keepdim=True).clamp_min(1e-6)
        return init / scale

    def _build(self, train: Batches, targets: np.ndarray, n_classes: int, seed: int) -> nn.Module:
        init = self._initial_prototypes(train, targets, n_classes, seed)
        return ProtoBinPooling(int(init.shape[1]), n_classes, init)

    def _architecture(self) -> dict[str, Any]:
        return {
            "architecture": "binary-prototypes(sign, straight-through)-cosine-max-linear",
            "prototypes_per_class": self.prototypes_per_class,
            "prototype_init": (
                "standardised training frames" if self.recipe.standardise else "raw training frames"
            ),
        }
