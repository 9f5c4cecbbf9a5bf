"""The probing paper's hyper-parameter search for the neural probes (``search="paper"``).

As the paper describes it (Rauch et al., "Unmute the Patch Tokens", ICLR 2026, appendix D.4
and Table 10), per (backbone, dataset, probe):

1. ``trials`` configurations (50), the learning rate and weight decay drawn log-uniformly from
   their ranges: the first ``startup_trials`` (25) from a scrambled Sobol sequence, the rest by
   TPE, every trial under successive halving (a trial whose validation score after some
   epochs falls in the bottom of its rung is stopped there);
2. each trial scored on the validation split (mAP for multi-label tasks; accuracy for
   multi-class ones, as every selection in this package), or, without one, on a held-out part
   of the training clips (20 %, whole groups when the fit has groups);
3. the ``top_k`` best finished trials trained again with ``seeds`` seeds (5) each; the one with
   the best mean validation score is chosen (ties: the better single trial).

The caller then trains (and tests) the chosen configuration with its own seeds: the
classification family trains every token probe with 5 seeds under the paper recipe.

The paper states neither ``top_k`` nor the pruner's constants: ``top_k`` is 3 here, and the
successive-halving pruner keeps Optuna's defaults (minimum resource chosen from the first
finished trial, reduction factor 4), both recorded with the result. Optuna implements the
samplers and the pruner; it is an optional dependency (``pip install 'audiobench[search]'``)
imported only when a search runs.
"""

from __future__ import annotations

import importlib.util
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

if TYPE_CHECKING:
    import optuna

__all__ = ["PaperSearch", "SearchOutcome", "SearchPruned", "require_optuna", "run_search"]

#: What the trainer returns beside its score (a trained model), kept for the chosen trial.
T = TypeVar("T")

#: The extra that installs the search's dependency.
EXTRA_HINT = "pip install 'audiobench[search]'"


class PaperSearch(BaseModel):
    """Ranges and budget of the paper's search (defaults: the paper's budget)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    lr: tuple[float, float] = Field(description="Learning-rate range, sampled log-uniformly.")
    weight_decay: tuple[float, float] = Field(
        description="Weight-decay range, sampled log-uniformly."
    )
    trials: int = Field(50, ge=1, description="Configurations tried (the paper: 50).")
    startup_trials: int | None = Field(
        None,
        ge=0,
        description="Of those, drawn from a Sobol sequence before TPE takes over; "
        "None: half (the paper: 25 of 50).",
    )
    top_k: int = Field(3, ge=1, description="Best trials re-trained with several seeds.")
    seeds: int = Field(5, ge=1, description="Seeds each of the top_k trials is trained with.")
    reduction_factor: int = Field(4, ge=2, description="Successive halving's reduction factor.")

    @model_validator(mode="after")
    def _check(self) -> PaperSearch:
        for name, (low, high) in (("lr", self.lr), ("weight_decay", self.weight_decay)):
            if not 0 < low <= high:
                raise ValueError(
                    f"the {name} range must satisfy 0 < low <= high, got {low}, {high}"
                )
        if self.startup_trials is not None and self.startup_trials > self.trials:
            raise ValueError(
                f"startup_trials ({self.startup_trials}) exceeds trials ({self.trials})"
            )
        return self

    @property
    def n_startup(self) -> int:
        """Trials drawn from the Sobol sequence."""
        return self.trials // 2 if self.startup_trials is None else self.startup_trials


class SearchPruned(Exception):
    """Raised by the epoch reporter when successive halving stops the trial."""


#: ``report(epoch, score)``, called after each training epoch of a trial; may raise
#: :class:`SearchPruned`.
EpochReport = Callable[[int, float], None]
#: ``train(lr, weight_decay, seed, report)`` -> (validation score, epochs run, trained model);
#: ``report`` is None when the run is not a pruned trial (the seeded re-evaluations).
Trainer = Callable[[float, float, int, EpochReport | None], tuple[float, int, T]]


@dataclass
class SearchOutcome(Generic[T]):
    """The chosen configuration, the model trained with it and the caller's seed, and the
    record of the search (plain JSON types)."""

    lr: float
    weight_decay: float
    trained: T
    record: dict[str, Any] = field(default_factory=dict)


def require_optuna() -> None:
    """Raise ``ImportError`` naming the extra when Optuna is not installed."""
    try:
        missing = importlib.util.find_spec("optuna") is None
    except ValueError:  # a stand-in module without a spec (tests): try the import itself
        missing = False
    if not missing:
        try:
            import optuna  # noqa: F401
        except ImportError:
            missing = True
    if missing:
        raise ImportError(
            "the probing paper's hyper-parameter search (token_search='paper', or a probe "
            f"recipe's search) needs Optuna: {EXTRA_HINT}"
        )


def run_search(spec: PaperSearch, train: Trainer[T], *, seed: int) -> SearchOutcome[T]:
    """Run the search of ``spec`` with ``train``; seeded by ``seed`` (samplers and the first of
    the re-evaluation seeds, ``seed, seed + 1, ...``)."""
    require_optuna()
    import optuna

    samplers = _samplers(spec, seed)
    pruner = optuna.pruners.SuccessiveHalvingPruner(reduction_factor=spec.reduction_factor)
    storage = optuna.storages.InMemoryStorage()
    trained: dict[tuple[float, float], tuple[float, int, T]] = {}

    def objective(trial: optuna.Trial) -> float:
        lr = trial.suggest_float("lr", *spec.lr, log=True)
        wd = trial.suggest_float("weight_decay", *spec.weight_decay, log=True)

        def report(epoch: int, score: float) -> None:
            trial.report(score if math.isfinite(score) else 0.0, epoch)
            trial.set_user_attr("epochs_run", epoch)
            if trial.should_prune():
                raise SearchPruned

        try:
            score, epochs_run, model = train(lr, wd, seed, report)
        except SearchPruned:
            raise optuna.TrialPruned() from None
        trial.set_user_attr("epochs_run", epochs_run)
        value = score if math.isfinite(score) else 0.0  # undefined: no better than nothing
        # Only the top_k models can be chosen: keep those, not every trial's.
        trained[(lr, wd)] = (value, trial.number, model)
        if len(trained) > spec.top_k:
            worst = min(trained, key=lambda k: (trained[k][0], -trained[k][1]))
            del trained[worst]
        return value

    previous = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            name = "paper-search"
            for sampler, n_trials in samplers:
                study = optuna.create_study(
                    study_name=name,
                    storage=storage,
                    sampler=sampler,
                    pruner=pruner,
                    direction="maximize",
                    load_if_exists=True,
                )
                if n_trials:
                    study.optimize(objective, n_trials=n_trials, catch=())
    finally:
        optuna.logging.set_verbosity(previous)
    trials = study.trials
    finished = [t for t in trials if t.state == optuna.trial.TrialState.COMPLETE]
    if not finished:
        raise RuntimeError("every trial of the search was pruned; nothing to choose from")
    # Best first; equal scores keep the earlier trial first (a stable sort).
    ranked = sorted(finished, key=lambda t: -(t.value if t.value is not None else -math.inf))
    top = ranked[: spec.top_k]
    re_evaluated: list[dict[str, Any]] = []
    for t in top:
        lr, wd = float(t.params["lr"]), float(t.params["weight_decay"])
        scores = [float(t.value) if t.value is not None else math.nan]  # the trial's own seed
        for extra in range(seed + 1, seed + spec.seeds):
            score, _, _ = train(lr, wd, extra, None)
            scores.append(score)
        finite = [s for s in scores if math.isfinite(s)]
        re_evaluated.append(
            {
                "trial": t.number,
                "lr": lr,
                "weight_decay": wd,
                "scores": scores,
                "mean": sum(finite) / len(finite) if finite else math.nan,
            }
        )
    best = max(
        range(len(re_evaluated)),
        key=lambda i: (
            re_evaluated[i]["mean"] if math.isfinite(re_evaluated[i]["mean"]) else -math.inf,
            -i,
        ),
    )
    chosen = re_evaluated[best]
    record: dict[str, Any] = {
        "method": "paper_search",
        "space": {"lr": list(spec.lr), "weight_decay": list(spec.weight_decay)},
        "distribution": "log-uniform",
        "sampler": f"Sobol (scrambled, seed {seed}) for {samplers[0][1]} trial(s), then TPE "
        f"(seed {seed}) for {samplers[1][1]}",
        "pruner": f"successive halving (reduction factor {spec.reduction_factor}, "
        "minimum resource from the first finished trial) on the validation score per epoch",
        "n_trials": len(trials),
        "n_pruned": sum(t.state == optuna.trial.TrialState.PRUNED for t in trials),
        "trials": [
            {
                "number": t.number,
                "lr": t.params.get("lr"),
                "weight_decay": t.params.get("weight_decay"),
                "state": t.state.name.lower(),
                "score": t.value if t.state == optuna.trial.TrialState.COMPLETE else None,
                "epochs_run": t.user_attrs.get("epochs_run"),
            }
            for t in trials
        ],
        "top_k": spec.top_k,
        "seeds": list(range(seed, seed + spec.seeds)),
        "re_evaluated": re_evaluated,
        "tie_break": "higher single-trial score (earlier trial)",
    }
    model = trained[(chosen["lr"], chosen["weight_decay"])][2]
    return SearchOutcome(chosen["lr"], chosen["weight_decay"], model, record)


def _samplers(spec: PaperSearch, seed: int) -> list[tuple[optuna.samplers.BaseSampler, int]]:
    """Sobol for the startup trials, then TPE for the rest, each with its trial count."""
    import optuna

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        sobol = optuna.samplers.QMCSampler(
            qmc_type="sobol", scramble=True, seed=seed, warn_asynchronous_seeding=False
        )
    tpe = optuna.samplers.TPESampler(seed=seed, n_startup_trials=0)
    return [(sobol, spec.n_startup), (tpe, spec.trials - spec.n_startup)]
