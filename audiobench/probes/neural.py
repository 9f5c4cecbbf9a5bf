"""Shared machinery of the neural probes (MLP, attentive pooling, binarised prototypes).

One training recipe for all of them, so their results differ by architecture only:

- inputs standardised with the training statistics (per feature; for frame sequences over all
  training frames), because embeddings from different models differ in scale by orders of
  magnitude and one learning rate should suit them all (``standardise=False``: the raw
  embeddings, as the paper protocol of the token probes has it);
- AdamW with a cosine learning-rate schedule (from ``lr`` to 0 over ``epochs``), seeded
  mini-batches (a local :class:`torch.Generator` shuffles), softmax cross-entropy for
  multi-class and per-class sigmoid with binary cross-entropy for multi-label
  (``multilabel_loss="asymmetric"``: the asymmetric loss, :mod:`audiobench.probes.losses`);
- with a validation split and ``early_stopping`` (the default): the validation loss is
  computed after every epoch, the weights of the best epoch are kept and training stops after
  ``patience`` epochs without improvement; otherwise a fixed number of epochs.

``lr`` and ``weight_decay`` may be grids (sequences): every combination is trained and the one
with the best accuracy (multi-label: macro mAP over the classes with a positive) on the
validation split is kept; without a validation split, a seeded part of the training clips
(``holdout``, stratified by class) scores them and the chosen combination is then trained on
all training clips. Ties go to the earlier grid point.

Determinism: the whole fit runs under :func:`torch.random.fork_rng` seeded with ``seed``
(initialisation and dropout), so the same inputs and seed give identical scores on CPU, and
the caller's global random state is left untouched. Torch uses at most the usable cores.
"""

from __future__ import annotations

import copy
import math
import warnings
from abc import abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from audiobench.metrics.runtime import limited_cpu_threads, resolve_device
from audiobench.probes.base import Inputs, Probe, ProgressCounter, select_best, subset
from audiobench.probes.losses import ASL_DEFAULTS, asymmetric_loss

__all__ = ["Batches", "TorchProbe", "holdout_split", "pad_sequences"]

#: ``lr`` or ``weight_decay``: one value, or a grid to choose from.
Hyper = float | Sequence[float]
MultilabelLoss = Literal["binary_cross_entropy", "asymmetric"]


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
    standardised as it is built. ``mean`` and ``std`` ``None``: the raw inputs.
    """

    def __init__(
        self,
        inputs: Inputs,
        mean: np.ndarray | None,
        std: np.ndarray | None,
        device: torch.device,
    ) -> None:
        self.device = device
        raw = mean is None or std is None
        self.mean = None if raw else torch.from_numpy(mean).to(device)
        self.std = None if raw else torch.from_numpy(std).to(device)
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

    def _standardise(self, x: torch.Tensor) -> torch.Tensor:
        if self.mean is None or self.std is None:
            return x
        return (x - self.mean.to(x.device)) / self.std.to(x.device)

    def standardised(self, index: int) -> torch.Tensor:
        """One clip's standardised vector or frame sequence (on the CPU)."""
        raw = self.vectors[index] if self.vectors is not None else self.sequences[index]
        return self._standardise(raw)

    def batch(self, indices: torch.Tensor | range) -> tuple[torch.Tensor, ...]:
        if self.vectors is not None:
            index = torch.as_tensor(list(indices) if isinstance(indices, range) else indices)
            return (self._standardise(self.vectors[index].to(self.device)),)
        padded, mask = pad_sequences([self.sequences[int(i)] for i in indices], self.device)
        # Padding stays exactly 0 after standardising (it is masked anyway).
        return self._standardise(padded) * mask[:, :, None], mask


@contextmanager
def seeded(seed: int, device: torch.device) -> Iterator[None]:
    """Seed torch for the block, restoring the caller's random state afterwards."""
    devices = [device.index or 0] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices), limited_cpu_threads():
        torch.manual_seed(seed)
        yield


def holdout_split(targets: np.ndarray, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded ``(train, held_out)`` indices: ``fraction`` of the clips held out, stratified by
    class for multi-class targets (when every class has two clips), shuffled otherwise."""
    from sklearn.model_selection import ShuffleSplit, StratifiedShuffleSplit

    n = int(targets.shape[0])
    n_held = max(1, min(n - 1, round(fraction * n)))
    zeros = np.zeros(n)
    if targets.ndim == 1 and np.bincount(targets).min(initial=n) >= 2:
        try:
            stratified = StratifiedShuffleSplit(n_splits=1, test_size=n_held, random_state=seed)
            train, held = next(stratified.split(zeros, targets))
            return np.sort(train), np.sort(held)
        except ValueError:  # fewer held-out clips than classes
            pass
    train, held = next(ShuffleSplit(n_splits=1, test_size=n_held, random_state=seed).split(zeros))
    return np.sort(train), np.sort(held)


@dataclass
class _Trained:
    """One trained model with the statistics it was trained on and its training record."""

    module: nn.Module
    mean: np.ndarray | None
    std: np.ndarray | None
    history: dict[str, Any]


class TorchProbe(Probe):
    """A probe whose model is a torch module trained with the shared recipe.

    Parameters
    ----------
    epochs:
        Maximum number of passes over the training clips (the exact number without early
        stopping).
    batch_size:
        Clips per optimisation step.
    lr:
        Peak learning rate of AdamW (decays to 0 along a cosine), or a grid of them.
    weight_decay:
        AdamW's decoupled weight decay, or a grid.
    patience:
        With early stopping: epochs without a lower validation loss before stopping.
    early_stopping:
        Stop on the validation loss when a validation split is given (else: fixed epochs).
    standardise:
        Standardise inputs with the training statistics (else: the raw embeddings).
    multilabel_loss:
        ``"binary_cross_entropy"`` or ``"asymmetric"`` (:mod:`audiobench.probes.losses`).
    holdout:
        With a grid and no validation split: the fraction of training clips that scores it.
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
        lr: Hyper,
        weight_decay: Hyper,
        patience: int,
        early_stopping: bool = True,
        standardise: bool = True,
        multilabel_loss: MultilabelLoss = "binary_cross_entropy",
        holdout: float = 0.2,
        device: str | torch.device | None = None,
        multilabel: bool = False,
        seed: int = 0,
    ) -> None:
        super().__init__(multilabel=multilabel, seed=seed)
        for label, value in (("epochs", epochs), ("batch_size", batch_size)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{label} must be a positive integer, got {value!r}")
        self.lr_grid = _grid(lr, "lr")
        self.weight_decay_grid = _grid(weight_decay, "weight_decay")
        if not all(v > 0 for v in self.lr_grid) or min(self.weight_decay_grid) < 0 or patience < 1:
            raise ValueError(
                f"need lr > 0, weight_decay >= 0 and patience >= 1, "
                f"got {lr}, {weight_decay}, {patience}"
            )
        if multilabel_loss not in ("binary_cross_entropy", "asymmetric"):
            raise ValueError(
                f"multilabel_loss must be 'binary_cross_entropy' or 'asymmetric', "
                f"got {multilabel_loss!r}"
            )
        if not 0 < holdout < 1:
            raise ValueError(f"holdout must lie in (0, 1), got {holdout}")
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr: float | tuple[float, ...] = _one_or_grid(self.lr_grid)
        self.weight_decay: float | tuple[float, ...] = _one_or_grid(self.weight_decay_grid)
        self.patience = int(patience)
        self.early_stopping = bool(early_stopping)
        self.standardise = bool(standardise)
        self.multilabel_loss: MultilabelLoss = multilabel_loss
        self.holdout = float(holdout)
        self.device = device
        self._module: nn.Module | None = None
        self._mean: np.ndarray | None = None
        self._std: np.ndarray | None = None
        self._history: dict[str, Any] | None = None
        self._selection: dict[str, Any] | None = None
        self._chosen: dict[str, Any] | None = None

    @property
    def module_(self) -> nn.Module:
        """The trained torch module (in eval mode), e.g. to inspect attention weights."""
        self.classes_  # noqa: B018 - raises when not fitted
        assert self._module is not None
        return self._module

    @property
    def chosen_(self) -> dict[str, Any]:
        """The learning rate, weight decay and epochs of the fitted model."""
        self.classes_  # noqa: B018 - raises when not fitted
        assert self._chosen is not None
        return dict(self._chosen)

    # ------------------------------------------------------------------ subclass hooks

    @abstractmethod
    def _build(self, train: Batches, targets: np.ndarray, n_classes: int) -> nn.Module:
        """The untrained module (called under the seeded random state)."""

    @abstractmethod
    def _architecture(self) -> dict[str, Any]:
        """Architecture hyper-parameters for ``config()``."""

    # ------------------------------------------------------------------ training

    def _loss(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        if not self.multilabel:
            return F.cross_entropy(logits, targets)
        if self.multilabel_loss == "asymmetric":
            return asymmetric_loss(logits, targets)
        return F.binary_cross_entropy_with_logits(logits, targets)

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

    def _train_model(
        self,
        inputs: Inputs,
        targets: np.ndarray,
        n_classes: int,
        validation: tuple[Inputs, np.ndarray] | None,
        lr: float,
        weight_decay: float,
        epochs: int,
        report: ProgressCounter,
        label: str,
    ) -> _Trained:
        """Train one model; with ``validation``, stop early on its loss (best epoch kept)."""
        device = resolve_device(self.device)
        mean, std = self._statistics(inputs) if self.standardise else (None, None)
        train = Batches(inputs, mean, std, device)
        target_tensor = torch.from_numpy(targets).to(device)
        val_data = val_targets = None
        if validation is not None:
            val_data = Batches(validation[0], mean, std, device)
            val_targets = torch.from_numpy(validation[1]).to(device)
        n = len(train)
        steps_per_epoch = math.ceil(n / self.batch_size)
        total_steps = epochs * steps_per_epoch
        history: dict[str, Any] = {"train_loss": [], "validation_loss": []}
        with seeded(self.seed, device):
            module = self._build(train, targets, n_classes).to(device)
            optimiser = torch.optim.AdamW(
                module.parameters(), lr=lr, weight_decay=weight_decay, foreach=True
            )
            schedule = torch.optim.lr_scheduler.LambdaLR(
                optimiser, lambda step: 0.5 * (1.0 + math.cos(math.pi * step / total_steps))
            )
            generator = torch.Generator().manual_seed(self.seed)
            best_loss, best_epoch, best_state, stale = math.inf, 0, None, 0
            for epoch in range(1, epochs + 1):
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
                report(f"{label}epoch {epoch}/{epochs}", score=total / n, metric="train_loss")
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
        early = val_data is not None
        record = {
            "method": "validation_early_stopping" if early else "fixed_epochs",
            "metric": "validation_loss" if early else None,
            "epochs_run": len(history["train_loss"]),
            "best_epoch": best_epoch if early else len(history["train_loss"]),
            "best_validation_loss": best_loss if early else None,
            "final_train_loss": history["train_loss"][-1],
        }
        return _Trained(module, mean, std, record)

    def _grid_score(self, trained: _Trained, held: tuple[Inputs, np.ndarray]) -> float:
        """Accuracy (multi-class) or macro mAP over classes with a positive (multi-label)."""
        from sklearn.metrics import average_precision_score

        scores = self._scores(trained, held[0])
        targets = held[1]
        if targets.ndim == 1:
            return float(np.mean(np.argmax(scores, axis=1) == targets))
        present = targets.sum(axis=0) > 0
        if not present.any():
            return math.nan
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a class positive for every held-out clip
            return float(
                average_precision_score(targets[:, present], scores[:, present], average="macro")
            )

    def _fit(
        self,
        inputs: Inputs,
        targets: np.ndarray,
        n_classes: int,
        validation: tuple[Inputs, np.ndarray] | None,
    ) -> None:
        grid = [(lr, wd) for lr in self.lr_grid for wd in self.weight_decay_grid]
        self._selection = None
        if len(grid) == 1:
            report = self._progress_counter(self.epochs)
            (lr, wd), stopping = grid[0], validation if self.early_stopping else None
            final = self._train_model(
                inputs, targets, n_classes, stopping, lr, wd, self.epochs, report, ""
            )
            self._adopt(final, lr, wd)
            return
        if validation is not None:
            method, search, held = "validation", (inputs, targets), validation
        else:
            method = "holdout"
            kept, out = holdout_split(targets, self.holdout, self.seed)
            search = (subset(inputs, kept), targets[kept])
            held = (subset(inputs, out), targets[out])
        report = self._progress_counter(self.epochs * (len(grid) + int(method == "holdout")))
        results: list[tuple[float, _Trained]] = []
        for lr, wd in grid:
            trained = self._train_model(
                search[0],
                search[1],
                n_classes,
                held if self.early_stopping else None,
                lr,
                wd,
                self.epochs,
                report,
                f"lr={lr:g}, weight_decay={wd:g}, ",
            )
            results.append((self._grid_score(trained, held), trained))
        scores = [score for score, _ in results]
        best = select_best(list(range(len(grid))), scores, prefer="first")
        lr, wd = grid[best]
        final = results[best][1]
        if method == "holdout":  # the chosen values, trained on every training clip
            epochs = final.history["best_epoch"] if self.early_stopping else self.epochs
            final = self._train_model(
                inputs, targets, n_classes, None, lr, wd, epochs, report, "final fit, "
            )
        self._selection = {
            "method": method,
            "metric": "map" if self.multilabel else "accuracy",
            "holdout": self.holdout if method == "holdout" else None,
            "scores": [
                {
                    "lr": lr_,
                    "weight_decay": wd_,
                    "score": score,
                    "epochs_run": trained.history["epochs_run"],
                }
                for (lr_, wd_), (score, trained) in zip(grid, results, strict=True)
            ],
            "tie_break": "earlier grid point (lr, then weight_decay, ascending)",
        }
        self._adopt(final, lr, wd)

    def _adopt(self, trained: _Trained, lr: float, weight_decay: float) -> None:
        self._module, self._mean, self._std = trained.module, trained.mean, trained.std
        self._history = trained.history
        self._chosen = {"lr": lr, "weight_decay": weight_decay}

    def _scores(self, trained: _Trained, inputs: Inputs) -> np.ndarray:
        device = next(trained.module.parameters()).device
        data = Batches(inputs, trained.mean, trained.std, device)
        with torch.inference_mode(), limited_cpu_threads():
            logits = self._logits(trained.module, data)
            scores = torch.sigmoid(logits) if self.multilabel else torch.softmax(logits, dim=1)
        return scores.double().cpu().numpy()

    def _predict_scores(self, inputs: Inputs) -> np.ndarray:
        assert self._module is not None and self._history is not None
        return self._scores(_Trained(self._module, self._mean, self._std, self._history), inputs)

    def _config(self) -> dict[str, Any]:
        searched = self._selection is not None
        loss = "cross_entropy"
        if self.multilabel:
            loss = self.multilabel_loss
        params: dict[str, Any] = {
            **self._architecture(),
            "optimizer": "AdamW",
            "schedule": "cosine",
            "lr": list(self.lr_grid) if len(self.lr_grid) > 1 else self.lr_grid[0],
            "weight_decay": (
                list(self.weight_decay_grid)
                if len(self.weight_decay_grid) > 1
                else self.weight_decay_grid[0]
            ),
            "epochs": self.epochs,
            "batch_size": self.batch_size,
            "patience": self.patience,
            "early_stopping": self.early_stopping,
            "standardise": self.standardise,
            "loss": loss,
        }
        if loss == "asymmetric":
            gamma_pos, gamma_neg, margin = ASL_DEFAULTS
            params["loss_params"] = {
                "gamma_pos": gamma_pos,
                "gamma_neg": gamma_neg,
                "margin": margin,
            }
        grid: dict[str, Any] = {}
        if len(self.lr_grid) > 1 or len(self.weight_decay_grid) > 1:
            grid = {"lr": list(self.lr_grid), "weight_decay": list(self.weight_decay_grid)}
        chosen: dict[str, Any] | None = None
        if self._history is not None:
            chosen = {"epochs": self._history["best_epoch"]}
            if searched and self._chosen is not None:
                chosen = {**self._chosen, **chosen}
        selection = self._history
        if searched and self._selection is not None:
            selection = {**self._selection, "training": self._history}
        return {"params": params, "grid": grid, "selection": selection, "chosen": chosen}


def _grid(value: Hyper, what: str) -> tuple[float, ...]:
    """One value or a non-empty sequence of them, as a tuple of floats (order kept)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (float(value),)
    if isinstance(value, str | bytes) or not isinstance(value, Sequence) or not value:
        raise ValueError(f"{what} must be a number or a non-empty sequence of numbers")
    return tuple(float(v) for v in value)


def _one_or_grid(values: tuple[float, ...]) -> float | tuple[float, ...]:
    return values[0] if len(values) == 1 else values
