"""The evaluator interface, and the task base whose scoring an evaluator supplies.

An :class:`Evaluator` is stateless: its class methods receive the task (its options, its
metadata) and own the protocol's ``Report``/``Summary`` models, the main scores it accepts
and the run-wide facts recorded in the result's ``details``. An :class:`EvaluatedTask`
routes each of those to the evaluator named by its ``protocol`` option, and records that
evaluator's name and version under ``details["evaluator"]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, cast, get_args

from pydantic import Field

from audiobench import reports as _reports
from audiobench.errors import OptionError
from audiobench.evaluators.registry import evaluator_for, protocols_for
from audiobench.reports import parse_score_path
from audiobench.task import Embedder, Subset, Task, TaskOptions

if TYPE_CHECKING:
    from audiobench.encoder import Encoder

__all__ = ["EvaluatedOptions", "EvaluatedTask", "Evaluator", "EvaluatorModel", "task_protocols"]

M = TypeVar("M")


class Evaluator:
    """How the tasks of one family are scored under one protocol."""

    family: ClassVar[str]
    protocol: ClassVar[str]
    #: Bumped when the same embeddings would be scored differently.
    version: ClassVar[str] = "1"
    Report: ClassVar[type[_reports.Report]]
    Summary: ClassVar[type[_reports.Summary]]

    @classmethod
    def report_model(cls, task: Task | type[Task]) -> type[_reports.Report]:
        """The model of one subset's scores of ``task`` (``cls.Report`` unless it depends on
        the task's options, as the metric names of a multi-label task do)."""
        return cls.Report

    @classmethod
    def summary_model(cls, task: Task | type[Task]) -> type[_reports.Summary]:
        """The model of the mean over subsets of ``task`` (``cls.Summary`` by default)."""
        return cls.Summary

    @classmethod
    def check_main_score(cls, task: type[Task], path: tuple[str, ...]) -> None:
        """Raise ``ValueError`` unless ``path`` names a number in this protocol's summary."""
        return None

    @classmethod
    def check_encoder(cls, task: type[Task], encoder: Encoder) -> None:
        """Raise a clear error if ``encoder`` lacks what this protocol needs for ``task``."""
        return None

    @classmethod
    def embedding_passes(cls, task: Task, encoder: Encoder) -> tuple[bool, ...]:
        """The embedding passes scoring ``task`` reads (:meth:`Task.embedding_passes`)."""
        return (True,)

    @classmethod
    def evaluate_subset(cls, task: Task, embedder: Embedder, subset: Subset) -> _reports.Report:
        """One subset's scores, an instance of ``cls.Report``."""
        raise NotImplementedError(f"{cls.__qualname__} does not score subsets")

    @classmethod
    def summarize(cls, task: Task, reports: Mapping[str, _reports.Report]) -> _reports.Summary:
        """The unweighted mean over ``reports``, as ``cls.Summary``."""
        return _reports.mean_summary(cls.Summary, reports)

    @classmethod
    def describe(cls, task: Task) -> dict[str, Any]:
        """Run-wide facts of the evaluation recorded in the result's ``details``."""
        return {}


def _evaluator(owner: Task | type[Task]) -> type[Evaluator]:
    options = owner.options
    return evaluator_for(owner.family, getattr(options, "protocol", "audiobench"))


class EvaluatorModel(Generic[M]):
    """A task's ``Report`` or ``Summary``: the model of the evaluator its protocol selects.

    Read on a class it follows the class's default ``protocol`` option, on a task its run's;
    so a result is built and checked with the model of the protocol it was run under.
    ``method`` names the evaluator's class method that gives it
    (:meth:`Evaluator.report_model`, :meth:`Evaluator.summary_model`).
    """

    def __init__(self, method: str) -> None:
        self.method = method

    def __get__(self, instance: object, owner: type) -> type[M]:
        owned = cast("Task | type[Task]", instance if instance is not None else owner)
        model: type[M] = getattr(_evaluator(owned), self.method)(owned)
        return model


class EvaluatedOptions(TaskOptions):
    """Base of the options of a family scored by evaluators: which protocol scores it."""

    protocol: str = Field(
        "audiobench",
        pattern=r"^[a-z][a-z0-9_]*$",
        description="The evaluator that scores the task: 'audiobench' (the family's own "
        "evaluation), 'mteb' (MTEB's evaluation of MAEB tasks), or a plugin's protocol.",
    )


class EvaluatedTask(Task):
    """A family whose scoring is done by the evaluator of its ``protocol`` option."""

    Report = EvaluatorModel[_reports.Report]("report_model")
    Summary = EvaluatorModel[_reports.Summary]("summary_model")

    @classmethod
    def check_main_score(cls, path: tuple[str, ...]) -> None:
        _evaluator(cls).check_main_score(cls, path)

    @classmethod
    def check_encoder(cls, encoder: Encoder) -> None:
        _evaluator(cls).check_encoder(cls, encoder)

    def embedding_passes(self, encoder: Encoder) -> tuple[bool, ...]:
        return _evaluator(self).embedding_passes(self, encoder)

    @classmethod
    def resolve_options(cls, values: Mapping[str, Any]) -> Any:
        options = super().resolve_options(values)
        protocol = getattr(options, "protocol", "audiobench")
        try:
            evaluator = evaluator_for(cls.family, protocol)
        except ValueError as exc:
            raise OptionError(f"task {cls.metadata.name}: invalid option protocol: {exc}") from None
        if getattr(cls, "metadata", None) is not None and options != cls.options:
            _check_main_score_under(cls, options, evaluator)
        return options

    def evaluate_subset(self, embedder: Embedder, subset: Subset) -> _reports.Report:
        return _evaluator(self).evaluate_subset(self, embedder, subset)

    def summarize(self, reports: Mapping[str, _reports.Report]) -> _reports.Summary:
        return _evaluator(self).summarize(self, reports)

    def run_facts(self) -> dict[str, Any]:
        evaluator = _evaluator(self)
        return {
            **evaluator.describe(self),
            "evaluator": {"name": evaluator.protocol, "version": evaluator.version},
        }


def _check_main_score_under(task: type[Task], options: Any, evaluator: type[Evaluator]) -> None:
    """Refuse options under which the task's main score is not reported (it would be null).

    A task declares its main score under its default options; a run may choose another
    protocol (or, say, other cut-offs) whose report has no such number.
    """
    # The evaluator reads the options from the class it is given: a view with the run's.
    view = cast("type[Task]", type(task.__name__, (task,), {"options": options}))
    path = parse_score_path(task.metadata.main_score)
    try:
        evaluator.check_main_score(view, path)
    except ValueError as exc:
        scoring = []
        for protocol in protocols_for(task.family):
            other = options.model_copy(update={"protocol": protocol})
            other_view = cast("type[Task]", type(task.__name__, (task,), {"options": other}))
            try:
                evaluator_for(task.family, protocol).check_main_score(other_view, path)
            except ValueError:
                continue
            scoring.append(protocol)
        remedy = (
            f"; it is reported under protocol {', '.join(map(repr, scoring))}" if scoring else ""
        )
        raise OptionError(
            f"task {task.metadata.name}: the options given leave its main score "
            f"{task.metadata.main_score!r} unreported under protocol "
            f"{evaluator.protocol!r} ({exc}){remedy}"
        ) from None


def task_protocols(task: type[Task]) -> tuple[str, ...]:
    """The protocols ``task`` can be scored under (``-O protocol=...``)."""
    if issubclass(task, EvaluatedTask):
        return protocols_for(task.family)
    # Families still scoring in their own module take the protocols their option lists.
    field = task.Options.model_fields.get("protocol")
    return tuple(get_args(field.annotation)) if field is not None else ("audiobench",)
