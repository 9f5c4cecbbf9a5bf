"""The training recipe shared by the neural probes: one typed model, every field checked once.

:class:`TrainingRecipe` holds how a torch probe is trained (epochs, batches, AdamW's learning
rate and weight decay or grids of them, early stopping, standardisation, the multi-label loss,
the fraction held out to choose hyper-parameters, and optionally the probing paper's search,
:class:`~audiobench.probes.search.PaperSearch`). Each probe class declares its defaults as a
recipe (:attr:`~audiobench.probes.neural.TorchProbe.default_recipe`); a probe is built from a
recipe, from keyword overrides of its class's defaults (``MLPProbe(epochs=30)``, a task's
``probe_params``), or both. Where the probe runs (``device``), its labels (``multilabel``) and
its ``seed`` are not part of the recipe.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from audiobench.probes.search import PaperSearch

__all__ = ["MultilabelLoss", "TrainingRecipe"]

MultilabelLoss = Literal["binary_cross_entropy", "asymmetric"]


def _as_grid(value: object) -> object:
    """One number as a one-point grid; a sequence kept in its order."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (float(value),)
    if isinstance(value, str | bytes) or not isinstance(value, Sequence) or not value:
        raise ValueError("must be a number or a non-empty sequence of numbers")
    return tuple(value)


#: ``lr`` or ``weight_decay``: one value or a grid, held as a tuple in the order given.
Grid = Annotated[tuple[float, ...], BeforeValidator(_as_grid)]


class TrainingRecipe(BaseModel):
    """How a neural probe is trained (see :mod:`audiobench.probes.neural`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    epochs: int = Field(
        ge=1,
        strict=True,
        description="Passes over the training clips (the most, with early stopping).",
    )
    batch_size: int = Field(ge=1, strict=True, description="Clips per optimisation step.")
    lr: Grid = Field(description="AdamW's peak learning rate (cosine decay to 0), or a grid.")
    weight_decay: Grid = Field(description="AdamW's decoupled weight decay, or a grid.")
    patience: int = Field(ge=1, description="Early stopping: epochs without a lower loss.")
    early_stopping: bool = Field(
        True, description="Stop on the validation loss when a validation split is given."
    )
    standardise: bool = Field(
        True, description="Standardise inputs with the training statistics (else: raw)."
    )
    multilabel_loss: MultilabelLoss = Field(
        "binary_cross_entropy",
        description="Multi-label loss: 'binary_cross_entropy' or 'asymmetric'.",
    )
    holdout: float = Field(
        0.2,
        gt=0.0,
        lt=1.0,
        description="Without a validation split: the fraction of training clips (whole groups "
        "when the fit has groups) that chooses among hyper-parameters.",
    )
    search: PaperSearch | None = Field(
        None,
        description="The probing paper's search over learning rate and weight decay (then "
        "lr and weight_decay are not used); None: the lr × weight_decay grid.",
    )

    @model_validator(mode="after")
    def _check_values(self) -> TrainingRecipe:
        if not all(v > 0 for v in self.lr) or min(self.weight_decay) < 0:
            raise ValueError(
                f"need lr > 0 and weight_decay >= 0, got {list(self.lr)}, {list(self.weight_decay)}"
            )
        return self

    def with_overrides(self, what: str, overrides: dict[str, Any]) -> TrainingRecipe:
        """This recipe with ``overrides`` replacing fields (all checked again).

        Raises ``ValueError`` naming ``what`` (the probe) for a key that is not a field.
        """
        if unknown := sorted(set(overrides) - set(type(self).model_fields)):
            raise ValueError(
                f"{what} has no parameter {', '.join(map(repr, unknown))}; its training "
                f"recipe's fields are {', '.join(type(self).model_fields)}"
            )
        if not overrides:
            return self
        return type(self).model_validate({**self.model_dump(), **overrides})

    @property
    def grid(self) -> list[tuple[float, float]]:
        """Every ``(lr, weight_decay)`` of the grid: lr, then weight decay, in the given order."""
        return [(lr, wd) for lr in self.lr for wd in self.weight_decay]
