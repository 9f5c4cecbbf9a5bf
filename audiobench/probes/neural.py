"""Shared machinery of the neural probes (MLP, attentive pooling, binarised prototypes).

One training recipe for all of them, so their results differ by architecture only:

- inputs standardised with the training statistics (per feature; for frame sequences over all
  training frames), because embeddings from different models differ in scale by orders of
  magnitude and one learning rate should suit them all;
- AdamW with a cosine learning-rate schedule (from ``lr`` to 0 over ``epochs``), seeded
  mini-batches (a local :class:`torch.Generator` shuffles), softmax cross-entropy for
  multi-class and per-class sigmoid with binary cross-entropy for multi-label;
- with a validation split: the validation loss is computed after every epoch, the weights of
  the best epoch are kept and training stops after ``patience`` epochs without improvement;
  without one: a fixed number of epochs.

Determinism: the whole fit runs under :func:`torch.random.fork_rng` seeded with ``seed``
(initialisation and dropout), so the same inputs and seed give identical scores on CPU, and
the caller's global random state is left untouched. Torch uses at most the usable cores.
"""

from __future__ import annotations

import copy
import math
from abc import abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from audiobench.metrics.runtime import limited_cpu_threads, resolve_device
from audiobench.probes.base import Inputs, Probe

__all__ = ["Batches", "TorchProbe", "pad_sequences"]


def pad_sequences(
    sequences: list[torch.Tensor], device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """Zero-pad ``[T_i, D]`` tensors to ``[B, T_max, D]``; mask ``[B, T_max]`` is True on frames."""
    lengths = torch.tensor([seq.shape[0] for seq in sequences], device=device)
    padded = nn.utils.rnn.pad_sequence(sequences, batch_first=True).to(device)
    mask = torch.arange(padded.shape[1], device=device)[None, :] < lengths[:, None]
    return padded, mask


class Batches:
    """Inputs that yield standardised, model-ready batches: ``(x,)`` or ``(x, mask)``.

    The raw arrays are shared, not copied (frame sequences can be large); each batch is
    standardised as it is built.
    """

    def __init__(
        self, inputs: Inputs, mean: np.ndarray, std: np.ndarray, device: torch.device
    ) -> None:
        self.device = device
        self.mean = torch.from_numpy(mean).to(device)
        self.std = torch.from_numpy(std).to(device)
        if isinstance(inputs, np.ndarray):
            self.vectors: torch.Tensor | None = torch.from_numpy(inputs)
            self.sequences: list[torch.Tensor] = []
        else:
            self.vectors = None
            self.sequences = [torch.from_numpy(seq) for seq in inputs]

    def __len__(self) -> int:
        return len(self.sequences) if self.vectors is None else int(self.vectors.shape[0])

    @property
    def n_features(self) -> int:
        return int((self.vectors if self.vectors is not None else self.sequences[0]).shape[-1])

    def standardised(self, index: int) -> torch.Tensor:
        """One clip's standardised vector or frame sequence (on the CPU)."""
        raw = self.vectors[index] if self.vectors is not None else self.sequences[index]
        return (raw - self.mean.cpu()) / self.std.cpu()

    def batch(self, indices: torch.Tensor | range) -> tuple[torch.Tensor, ...]:
        if self.vectors is not None:
            index = torch.as_tensor(list(indices) if isinstance(indices, range) else indices)
            return ((self.vectors[index].to(self.device) - self.mean) / self.std,)
        padded, mask = pad_sequences([self.sequences[int(i)] for i in indices], self.device)
        # Padding stays exactly 0 after standardising (it is masked anyway).
        return ((padded - self.mean) / self.std) * mask[:, :, None], mask


@contextmanager
def seeded(seed: int, device: torch.device) -> Iterator[None]:
    """Seed torch for the block, restoring the caller's random state afterwards."""
    devices = [device.index or 0] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices), limited_cpu_threads():
        torch.manual_seed(seed)
        yield


class TorchProbe(Probe):
    """A probe whose model is a torch module trained with the shared recipe.

    Parameters
    ----------
    epochs:
        Maximum number of passes over the training clips (the exact number without a
        validation split).
    batch_size:
        Clips per optimisation step.
    lr:
        Peak learning rate of AdamW (decays to 0 along a cosine).
    weight_decay:
        AdamW's decoupled weight decay.
    patience:
        With a validation split: epochs without a lower validation loss before stopping.
    device:
        Torch device (``None``: CPU).
    multilabel, seed:
        See :class:`Probe`.
    """

    #: Clips per forward pass at prediction time for vector inputs (token-level probes use
    #: ``batch_size``: a padded batch of long sequences is large).
    vector_predict_batch_size: int = 1024

    def __init__(
        self,
        *,
        epochs: int,
        batch_size: int,
        lr: float,
        weight_decay: float,
        patience: int,
        device: str | torch.device | None = None,
        multilabel: bool = False,
        seed: int = 0,
    ) -> None:
        super().__init__(multilabel=multilabel, seed=seed)
        for label, value in (("epochs", epochs), ("batch_size", batch_size)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{label} must be a positive integer, got {value!r}")
        if not lr > 0 or weight_decay < 0 or patience < 1:
            raise ValueError(
                f"need lr > 0, weight_decay >= 0 and patience >= 1, "
                f"got {lr}, {weight_decay}, {patience}"
            )
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = float(lr)
        self.weight_decay = float(weight_decay)
        self.patience = int(patience)
        self.device = device
        self._module: nn.Module | None = None
        self._mean: np.ndarray | None = None
        self._std: np.ndarray | None = None
        self._history: dict[str, Any] | None = None

    @property
    def module_(self) -> nn.Module:
        """The trained torch module (in eval mode), e.g. to inspect attention weights."""
        self.classes_  # noqa: B018 - raises when not fitted
        assert self._module is not None
        return self._module

    # ------------------------------------------------------------------ subclass hooks

    @abstractmethod
    def _build(self, train: Batches, targets: np.ndarray, n_classes: int) -> nn.Module:
        """The untrained module (called under the seeded random state)."""

    @abstractmethod
    def _architecture(self) -> dict[str, Any]:
        """Architecture hyper-parameters for ``config()``."""

    # ------------------------------------------------------------------ training

    def _loss(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        if self.multilabel:
            return F.binary_cross_entropy_with_logits(logits, targets)
        return F.cross_entropy(logits, targets)

    def _statistics(self, inputs: Inputs) -> tuple[np.ndarray, np.ndarray]:
        """Per-feature mean and standard deviation over training clips (or all their frames).

        Accumulated in float64 one clip at a time, without concatenating the frames.
        """
        blocks = [inputs] if isinstance(inputs, np.ndarray) else inputs
        count = 0
        total = np.zeros(blocks[0].shape[-1], dtype=np.float64)
        for block in blocks:
            count += block.shape[0]
            total += block.sum(axis=0, dtype=np.float64)
        mean = total / count
        squares = np.zeros_like(total)
        for block in blocks:
            squares += ((block - mean) ** 2).sum(axis=0)
        std = np.sqrt(squares / count)
        # Constant features carry nothing; leave them at 0 rather than divide by 0.
        std = np.where(std > 1e-12, std, 1.0)
        return mean.astype(np.float32), std.astype(np.float32)

    def _logits(self, module: nn.Module, data: Batches) -> torch.Tensor:
        step = self.vector_predict_batch_size if data.vectors is not None else self.batch_size
        parts = []
        for start in range(0, len(data), step):
            stop = min(start + step, len(data))
            parts.append(module(*data.batch(range(start, stop))))
        return torch.cat(parts)

    def _fit(
        self,
        inputs: Inputs,
        targets: np.ndarray,
        n_classes: int,
        validation: tuple[Inputs, np.ndarray] | None,
    ) -> None:
        device = resolve_device(self.device)
        self._mean, self._std = self._statistics(inputs)
        train = Batches(inputs, self._mean, self._std, device)
        target_tensor = torch.from_numpy(targets).to(device)
        val_data = val_targets = None
        if validation is not None:
            val_data = Batches(validation[0], self._mean, self._std, device)
            val_targets = torch.from_numpy(validation[1]).to(device)
        n = len(train)
        steps_per_epoch = math.ceil(n / self.batch_size)
        total_steps = self.epochs * steps_per_epoch
        history: dict[str, Any] = {"train_loss": [], "validation_loss": []}
        with seeded(self.seed, device):
            module = self._build(train, targets, n_classes).to(device)
            optimiser = torch.optim.AdamW(
                module.parameters(), lr=self.lr, weight_decay=self.weight_decay
            )
            schedule = torch.optim.lr_scheduler.LambdaLR(
                optimiser, lambda step: 0.5 * (1.0 + math.cos(math.pi * step / total_steps))
            )
            generator = torch.Generator().manual_seed(self.seed)
            best_loss, best_epoch, best_state, stale = math.inf, 0, None, 0
            for epoch in range(1, self.epochs + 1):
                module.train()
                order = torch.randperm(n, generator=generator)
                total = 0.0
                for start in range(0, n, self.batch_size):
                    index = order[start : start + self.batch_size]
                    loss = self._loss(module(*train.batch(index)), target_tensor[index.to(device)])
                    optimiser.zero_grad(set_to_none=True)
                    loss.backward()  # type: ignore[no-untyped-call]
                    optimiser.step()
                    schedule.step()
                    total += float(loss.detach()) * len(index)
                history["train_loss"].append(total / n)
                if val_data is None:
                    continue
                module.eval()
                with torch.inference_mode():
                    assert val_targets is not None
                    val_loss = float(self._loss(self._logits(module, val_data), val_targets))
                history["validation_loss"].append(val_loss)
                if val_loss < best_loss:
                    best_loss, best_epoch, stale = val_loss, epoch, 0
                    best_state = copy.deepcopy(module.state_dict())
                else:
                    stale += 1
                    if stale >= self.patience:
                        break
            if best_state is not None:
                module.load_state_dict(best_state)
        module.eval()
        self._module = module
        self._history = {
            "method": "validation_early_stopping" if val_data is not None else "fixed_epochs",
            "metric": "validation_loss" if val_data is not None else None,
            "epochs_run": len(history["train_loss"]),
            "best_epoch": best_epoch if val_data is not None else len(history["train_loss"]),
            "best_validation_loss": best_loss if val_data is not None else None,
            "final_train_loss": history["train_loss"][-1],
        }

    def _predict_scores(self, inputs: Inputs) -> np.ndarray:
        assert self._module is not None and self._mean is not None and self._std is not None
        device = next(self._module.parameters()).device
        data = Batches(inputs, self._mean, self._std, device)
        with torch.inference_mode(), limited_cpu_threads():
            logits = self._logits(self._module, data)
            scores = torch.sigmoid(logits) if self.multilabel else torch.softmax(logits, dim=1)
        return scores.double().cpu().numpy()

    def _config(self) -> dict[str, Any]:
        return {
            "params": {
                **self._architecture(),
                "optimizer": "AdamW",
                "schedule": "cosine",
                "lr": self.lr,
                "weight_decay": self.weight_decay,
                "epochs": self.epochs,
                "batch_size": self.batch_size,
                "patience": self.patience,
                "standardise": True,
                "loss": "binary_cross_entropy" if self.multilabel else "cross_entropy",
            },
            "grid": {},
            "selection": self._history,
            "chosen": None if self._history is None else {"epochs": self._history["best_epoch"]},
        }
