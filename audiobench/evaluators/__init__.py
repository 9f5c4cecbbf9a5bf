"""Scoring protocols as evaluators: a family says what a task holds, an evaluator how it is scored.

See :mod:`audiobench.evaluators.evaluator` for the interface and
:mod:`audiobench.evaluators.registry` for how a (family, protocol) pair finds its evaluator.
"""

from audiobench.evaluators.evaluator import EvaluatedTask, Evaluator
from audiobench.evaluators.registry import evaluator_for, protocols_for, register

__all__ = ["EvaluatedTask", "Evaluator", "evaluator_for", "protocols_for", "register"]
