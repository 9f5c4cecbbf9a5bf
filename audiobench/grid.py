"""Grids of runs: every (task, model) pair of a benchmark or of several ``--task``/``--model``.

Each pair writes its result file as soon as it finishes. A pair that fails is
reported and the others go on; a rerun does only what is missing, since
:func:`~audiobench.evaluation.evaluate` reuses a result that records the
identical run. Each model is loaded once for all its tasks (and with ``--ray``
its encoder actors serve all of them, over one connection to the cluster).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from rich.console import Console

from audiobench import distributed
from audiobench.encoder import Encoder
from audiobench.errors import OptionError
from audiobench.evaluation import RunConfig, evaluate
from audiobench.results import TaskResult
from audiobench.task import Task

__all__ = ["GridOutcome", "RunFailure", "evaluate_grid"]


@dataclass(frozen=True)
class RunFailure:
    """A (task, model) pair that failed; ``task`` is None when the model failed before any task."""

    task: str | None
    model: str
    error: Exception

    def __str__(self) -> str:
        where = f"{self.task} with {self.model}" if self.task else f"model {self.model}"
        return f"{where}: {self.error}"


@dataclass
class GridOutcome:
    results: list[TaskResult] = field(default_factory=list)
    failures: list[RunFailure] = field(default_factory=list)


def evaluate_grid(
    tasks: Sequence[str | Task],
    models: Sequence[str | Encoder],
    config: RunConfig | None = None,
    *,
    console: Console | None = None,
    on_failure: Callable[[RunFailure], None] | None = None,
) -> GridOutcome:
    """Run every task with every model, model by model, with the settings of ``config``.

    ``config`` is used as given (default: every setting's default): it was
    validated when it was made. With ``on_failure`` a failed pair is passed to
    it and recorded in the outcome, and the grid goes on; without, the first
    failure raises (as :func:`~audiobench.evaluation.evaluate` does). Ctrl-C
    always stops the grid.
    """
    if not models:
        raise OptionError("no model given")
    config = config if config is not None else RunConfig()
    console = console or Console(stderr=True, soft_wrap=True)
    outcome = GridOutcome()

    def failed(failure: RunFailure) -> None:
        outcome.failures.append(failure)
        if on_failure is not None:
            on_failure(failure)

    with distributed.session_scope(config, console):
        for model in models:
            name = model if isinstance(model, str) else model.meta.name

            def task_failed(task: str, exc: Exception, name: str = name) -> None:
                failed(RunFailure(task, name, exc))

            try:
                outcome.results += evaluate(
                    list(tasks),
                    model,
                    config,
                    console=console,
                    on_failure=task_failed if on_failure is not None else None,
                )
            except Exception as exc:
                if on_failure is None:
                    raise
                failed(RunFailure(None, name, exc))
    return outcome
