"""Shared machinery of the neural probes (MLP, attentive pooling, binarised prototypes).

One training recipe for all of them (:class:`~audiobench.probes.recipe.TrainingRecipe`, each
class's defaults in :attr:`TorchProbe.default_recipe`), so their results differ by
architecture only:

- inputs standardised with the training statistics (per feature; for frame sequences over all
  training frames), because embeddings from different models differ in scale by orders of
  magnitude and one learning rate should suit them all (``standardise=False``: the raw
  embeddings, as the paper recipe of the token probes has it);
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
(``holdout``, stratified by class; whole groups when ``fit`` is given groups) scores them and
the chosen combination is then trained on all training clips. Ties go to the earlier grid
point. With a ``search`` in the recipe, the probing paper's search
(:mod:`audiobench.probes.search`) chooses them instead, on the same validation or held-out
clips.

Determinism: the whole fit runs under :func:`torch.random.fork_rng` seeded with ``seed``
(initialisation and dropout), so the same inputs and seed give identical scores on CPU, and
the caller's global random state is left untouched. Torch uses at most the usable cores.
"""

from __future__ import annotations

import copy
import math
import warnings
from abc import abstractmethod
from collections.abc import Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from audiobench.metrics.runtime import limited_cpu_threads, resolve_device
from audiobench.probes.base import (
    Inputs,
    Probe,
    ProgressCounter,
    select_best,
    subset,
)
from audiobench.probes.losses import ASL_DEFAULTS, asymmetric_loss
from audiobench.probes.recipe import TrainingRecipe
from audiobench.probes.search import EpochReport, PaperSearch, require_optuna, run_search
from audiobench.probes.splits import group_codes, group_folds

__all__ = ["Batches", "TorchProbe", "TrainingRecipe", "holdout_split", "pad_sequences"]


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


def holdout_split(
    targets: np.ndarray,
    fraction: float,
    seed: int,
    *,
    groups: Sequence[Hashable] | np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Seeded ``(train, held_out)`` indices: ``fraction`` of the clips held out, stratified by
    class for multi-class targets (when every class has two clips), shuffled otherwise.

    With ``groups`` (one per clip), whole groups are held out, so that no group is on both
    sides: one fold of a ``round(1 / fraction)``-fold group K-fold (fewer folds when there are
    fewer groups), stratified by class for multi-class targets as far as the groups allow.
    ``ValueError`` when there are fewer than 2 groups.
    """
    from sklearn.model_selection import ShuffleSplit, StratifiedShuffleSplit

    n = int(targets.shape[0])
    zeros = np.zeros(n)
    if groups is not None:
        codes = group_codes(groups, n)
        n_groups = int(codes.max(initial=-1)) + 1
        if n_groups < 2:
            raise ValueError(
                "choosing hyper-parameters without a validation split needs training clips "
                f"from at least 2 groups (the held-out part takes whole groups), got "
                f"{n_groups}; give the data a validation split, or fix the values "
                "(probe_params, e.g. {'mlp': {'lr': 0.001, 'weight_decay': 0.01}})"
            )
        k = min(max(2, round(1 / fraction)), n_groups)
        train, held = group_folds(targets, codes, k, seed, targets.ndim == 2)[0]
        return np.sort(train), np.sort(held)
    n_held = max(1, min(n - 1, round(fraction * n)))
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
    recipe:
        How the model is trained (:class:`~audiobench.probes.recipe.TrainingRecipe`);
        ``None``: the class's :attr:`default_recipe`.
    device:
        Torch device (``None``: CPU).
    multilabel, seed:
        See :class:`Probe`.
    **training:
        Fields of the recipe to replace (``epochs=30``, ``lr=(1e-4, 1e-3)``); an unknown
        name is a ``ValueError`` listing the fields.
    """

    #: The recipe a probe of this class is trained with unless told otherwise.
    default_recipe: ClassVar[TrainingRecipe]

    #: Clips per forward pass at prediction time for vector inputs (token-level probes use
    #: ``batch_size``: a padded batch of long sequences is large).
    vector_predict_batch_size: int = 1024

    def __init__(
        self,
        *,
        recipe: TrainingRecipe | None = None,
        device: str | torch.device | None = None,
        multilabel: bool = False,
        seed: int = 0,
        **training: Any,
    ) -> None:
        super().__init__(multilabel=multilabel, seed=seed)
        base = self.default_recipe if recipe is None else recipe
        self.recipe: TrainingRecipe = base.with_overrides(type(self).__name__, training)
        if self.recipe.search is not None:
            require_optuna()  # before any training, not after the first split
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
    def _build(self, train: Batches, targets: np.ndarray, n_classes: int, seed: int) -> nn.Module:
        """The untrained module (called under the random state seeded with ``seed``, which
        also seeds any other random choice of the build)."""

    @abstractmethod
    def _architecture(self) -> dict[str, Any]:
        """Architecture hyper-parameters for ``config()``."""

    # ------------------------------------------------------------------ training

    def _loss(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        if not self.multilabel:
            return F.cross_entropy(logits, targets)
        if self.recipe.multilabel_loss == "asymmetric":
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
        step = (
            self.vector_predict_batch_size if data.vectors is not None else self.recipe.batch_size
        )
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
        *,
        seed: int | None = None,
        scored: tuple[Inputs, np.ndarray] | None = None,
        on_epoch: EpochReport | None = None,
    ) -> _Trained:
        """Train one model; with ``validation``, stop early on its loss (best epoch kept).

        ``seed`` replaces the probe's own (a search's re-evaluations); with ``on_epoch``, the
        model's selection score on ``scored`` is handed to it after every epoch.
        """
        seed = self.seed if seed is None else seed
        batch_size = self.recipe.batch_size
        device = resolve_device(self.device)
        mean, std = self._statistics(inputs) if self.recipe.standardise else (None, None)
        train = Batches(inputs, mean, std, device)
        target_tensor = torch.from_numpy(targets).to(device)
        val_data = val_targets = None
        if validation is not None:
            val_data = Batches(validation[0], mean, std, device)
            val_targets = torch.from_numpy(validation[1]).to(device)
        n = len(train)
        steps_per_epoch = math.ceil(n / batch_size)
        total_steps = epochs * steps_per_epoch
        history: dict[str, Any] = {"train_loss": [], "validation_loss": []}
        with seeded(seed, device):
            module = self._build(train, targets, n_classes, seed).to(device)
            optimiser = torch.optim.AdamW(
                module.parameters(), lr=lr, weight_decay=weight_decay, foreach=True
            )
            schedule = torch.optim.lr_scheduler.LambdaLR(
                optimiser, lambda step: 0.5 * (1.0 + math.cos(math.pi * step / total_steps))
            )
            generator = torch.Generator().manual_seed(seed)
            best_loss, best_epoch, best_state, stale = math.inf, 0, None, 0
            for epoch in range(1, epochs + 1):
                module.train()
                order = torch.randperm(n, generator=generator)
                total = 0.0
                for start in range(0, n, batch_size):
                    index = order[start : start + batch_size]
                    loss = self._loss(module(*train.batch(index)), target_tensor[index.to(device)])
                    optimiser.zero_grad(set_to_none=True)
                    loss.backward()  # type: ignore[no-untyped-call]
                    optimiser.step()
                    schedule.step()
                    total += float(loss.detach()) * len(index)
                history["train_loss"].append(total / n)
                report(f"{label}epoch {epoch}/{epochs}", score=total / n, metric="train_loss")
                if on_epoch is not None and scored is not None:
                    module.eval()
                    on_epoch(epoch, self._grid_score(_Trained(module, mean, std, {}), scored))
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
                    if stale >= self.recipe.patience:
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
        recipe = self.recipe
        self._selection = None
        if recipe.search is not None:
            self._fit_search(recipe.search, inputs, targets, n_classes, validation)
            return
        grid = recipe.grid
        if len(grid) == 1:
            report = self._progress_counter(recipe.epochs)
            (lr, wd), stopping = grid[0], validation if recipe.early_stopping else None
            final = self._train_model(
                inputs, targets, n_classes, stopping, lr, wd, recipe.epochs, report, ""
            )
            self._adopt(final, lr, wd)
            return
        method, search, held = self._selection_data(inputs, targets, validation)
        report = self._progress_counter(recipe.epochs * (len(grid) + int(method == "holdout")))
        results: list[tuple[float, _Trained]] = []
        for lr, wd in grid:
            trained = self._train_model(
                search[0],
                search[1],
                n_classes,
                held if recipe.early_stopping else None,
                lr,
                wd,
                recipe.epochs,
                report,
                f"lr={lr:g}, weight_decay={wd:g}, ",
            )
            results.append((self._grid_score(trained, held), trained))
        scores = [score for score, _ in results]
        best = select_best(list(range(len(grid))), scores, prefer="first")
        lr, wd = grid[best]
        final = self._refit(method, results[best][1], inputs, targets, n_classes, lr, wd, report)
        self._selection = {
            "method": method,
            "metric": "map" if self.multilabel else "accuracy",
            "holdout": recipe.holdout if method == "holdout" else None,
            **self._holdout_groups(method),
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

    def _selection_data(
        self, inputs: Inputs, targets: np.ndarray, validation: tuple[Inputs, np.ndarray] | None
    ) -> tuple[str, tuple[Inputs, np.ndarray], tuple[Inputs, np.ndarray]]:
        """``(method, training part, scoring part)`` of a choice among hyper-parameters: the
        validation split when given, else a seeded holdout of the training clips (whole groups
        when the fit has groups)."""
        if validation is not None:
            return "validation", (inputs, targets), validation
        kept, out = holdout_split(targets, self.recipe.holdout, self.seed, groups=self.fit_groups)
        return "holdout", (subset(inputs, kept), targets[kept]), (subset(inputs, out), targets[out])

    def _holdout_groups(self, method: str) -> dict[str, Any]:
        """``{"grouped": True}`` when the holdout was cut along groups (else nothing)."""
        return {"grouped": True} if method == "holdout" and self.fit_groups is not None else {}

    def _refit(
        self,
        method: str,
        chosen: _Trained,
        inputs: Inputs,
        targets: np.ndarray,
        n_classes: int,
        lr: float,
        wd: float,
        report: ProgressCounter,
    ) -> _Trained:
        """The model to keep: ``chosen`` (trained on the training clips), or after a holdout
        the chosen values trained again on every training clip."""
        if method != "holdout":
            return chosen
        recipe = self.recipe
        epochs = chosen.history["best_epoch"] if recipe.early_stopping else recipe.epochs
        return self._train_model(
            inputs, targets, n_classes, None, lr, wd, epochs, report, "final fit, "
        )

    def _fit_search(
        self,
        spec: PaperSearch,
        inputs: Inputs,
        targets: np.ndarray,
        n_classes: int,
        validation: tuple[Inputs, np.ndarray] | None,
    ) -> None:
        """The paper's search (:mod:`audiobench.probes.search`) instead of the grid."""
        recipe = self.recipe
        method, search, held = self._selection_data(inputs, targets, validation)
        runs = spec.trials + spec.top_k * (spec.seeds - 1) + int(method == "holdout")
        report = self._progress_counter(recipe.epochs * runs)
        stopping = held if recipe.early_stopping else None

        def train(
            lr: float, wd: float, seed: int, on_epoch: EpochReport | None
        ) -> tuple[float, int, _Trained]:
            trained = self._train_model(
                search[0],
                search[1],
                n_classes,
                stopping,
                lr,
                wd,
                recipe.epochs,
                report,
                f"lr={lr:.3g}, weight_decay={wd:.3g}, seed {seed}, ",
                seed=seed,
                scored=held,
                on_epoch=on_epoch,
            )
            return self._grid_score(trained, held), trained.history["epochs_run"], trained

        outcome = run_search(spec, train, seed=self.seed)
        lr, wd = outcome.lr, outcome.weight_decay
        final = self._refit(method, outcome.trained, inputs, targets, n_classes, lr, wd, report)
        self._selection = {
            **outcome.record,
            "metric": "map" if self.multilabel else "accuracy",
            "validation": method,
            "holdout": recipe.holdout if method == "holdout" else None,
            **self._holdout_groups(method),
        }
        self._adopt(final, lr, wd)

    def fixed_choice(self) -> dict[str, Any]:
        """Keyword arguments that train another probe (another seed) with this fit's chosen
        learning rate and weight decay, without searching again."""
        chosen = self.chosen_
        return {"lr": chosen["lr"], "weight_decay": chosen["weight_decay"], "search": None}

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
        recipe = self.recipe
        searched = self._selection is not None
        loss = "cross_entropy"
        if self.multilabel:
            loss = recipe.multilabel_loss
        lrs, decays = recipe.lr, recipe.weight_decay
        params: dict[str, Any] = {
            **self._architecture(),
            "optimizer": "AdamW",
            "schedule": "cosine",
            "lr": list(lrs) if len(lrs) > 1 else lrs[0],
            "weight_decay": list(decays) if len(decays) > 1 else decays[0],
            "epochs": recipe.epochs,
            "batch_size": recipe.batch_size,
            "patience": recipe.patience,
            "early_stopping": recipe.early_stopping,
            "standardise": recipe.standardise,
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
        if recipe.search is not None:
            del params["lr"], params["weight_decay"]  # the search's ranges replace them
            params["search"] = recipe.search.model_dump(mode="json")
            grid = {"search": "paper", **params["search"]}
        elif len(lrs) > 1 or len(decays) > 1:
            grid = {"lr": list(lrs), "weight_decay": list(decays)}
        chosen: dict[str, Any] | None = None
        if self._history is not None:
            chosen = {"epochs": self._history["best_epoch"]}
            if searched and self._chosen is not None:
                chosen = {**self._chosen, **chosen}
        selection = self._history
        if searched and self._selection is not None:
            selection = {**self._selection, "training": self._history}
        return {"params": params, "grid": grid, "selection": selection, "chosen": chosen}
