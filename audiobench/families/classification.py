"""Classification by probes trained on frozen embeddings.

A classification task holds labelled clips, split into subsets, and the splits its probes are
evaluated on. How it is scored belongs to the evaluator its ``protocol`` option selects
(:mod:`audiobench.evaluators`):

- ``"audiobench"`` (:mod:`audiobench.evaluators.classification`): the task's probes
  (``probes``; vector probes on pooled embeddings, token probes on the encoder's token maps,
  :mod:`audiobench.probes`) fitted on every split and tested there; ``main_score`` reads
  ``"<probe>:<metric>"`` (``"linear:accuracy"``, ``"linear:map"``). The token probes' recipe
  (``token_recipe``: the family's ``"default"`` or the probing paper's ``"paper"``), its
  search and seeds are that evaluator's options.
- ``"mteb"`` (:mod:`audiobench.evaluators.mteb`): as MTEB scores MAEB's classification tasks
  (few-shot logistic regression, main score ``accuracy``, or ``lrap`` for multi-label tasks;
  probes, folds and grouping are then not used).

Data contract. Every clip carries a ``label`` (multi-label tasks: class names joined by the
``label_separator`` option). The evaluation splits come from the first of these that applies:

1. ``folds`` declared by the task: each clip's ``metadata[fold_key]`` (ESC-50's ``fold``)
   must be one of them; leave-one-fold-out, one split per fold;
2. ``Clip.split`` values other than ``train`` (the dataset's own ``train`` / ``validation``
   / ``test``): one split; the validation part, when present, chooses hyper-parameters,
   otherwise probes use inner cross-validation on the training part;
3. otherwise ``generated_folds`` seeded folds, stratified by class; with ``grouped`` they
   are group folds on ``Clip.group`` (no speaker or individual on both sides).

With ``grouped`` every split is checked for group leakage (a clip without a group is an
error); without it, a given split whose clips carry groups records how many groups span
several parts (``groups_in_several_parts``), for information. Every split is checked for
classes that occur in its validation or test part but never in its training part: an error
naming the task, the split (``fold-3``) and the class, never a silently capped score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self

import numpy as np
from pydantic import Field, model_validator

from audiobench.audio import Clip
from audiobench.errors import DataError
from audiobench.evaluators.evaluator import EvaluatedOptions, EvaluatedTask
from audiobench.metrics.naming import describe_clips
from audiobench.probes.registry import PROBE_NAMES, ProbeName
from audiobench.reports import parse_score_path
from audiobench.task import TaskFamily, error_in_context

if TYPE_CHECKING:
    from audiobench.probes import Split

__all__ = ["ClassificationTask"]


class ClassificationTask(EvaluatedTask):
    """Base class of probe-classification tasks; subclasses declare metadata and options."""

    family: ClassVar[TaskFamily] = TaskFamily.CLASSIFICATION

    class Options(EvaluatedOptions):
        # token_recipe was called token_protocol: "protocol" now names the scoring protocol only.
        renamed: ClassVar[Mapping[str, str]] = {"token_protocol": "token_recipe"}

        probes: tuple[ProbeName, ...] = Field(
            ("linear", "knn"), description="Probes run; the main score's probe always runs (first)."
        )
        multilabel: bool = Field(
            False, description="Labels are lists of class names joined by label_separator."
        )
        label_separator: str = Field(",", min_length=1, description="Multi-label separator.")
        folds: tuple[str, ...] = Field(
            (), description="The dataset's cross-validation folds (as text); empty: none."
        )
        fold_key: str = Field("fold", min_length=1, description="Clip.metadata key of the fold.")
        grouped: bool = Field(
            False, description="No Clip.group (speaker, individual) on two sides of any split."
        )
        generated_folds: int = Field(
            5, ge=2, description="Seeded folds when the data has neither folds nor a test split."
        )
        probe_params: dict[ProbeName, dict[str, Any]] = Field(
            default_factory=dict,
            description="Fixed keyword arguments per probe, e.g. {'mlp': {'epochs': 30}}.",
        )
        top_k: int = Field(5, ge=1, description="k of top_<k>_accuracy (reported when C > k).")
        threshold: float = Field(
            0.5, ge=0.0, le=1.0, description="Multi-label decision threshold (F1 scores)."
        )
        seed: int = Field(0, description="Seed of generated folds and of every probe.")
        token_recipe: Literal["default", "paper"] = Field(
            "default",
            description="Token probes' training recipe: 'default' (the family's neural recipe) "
            "or 'paper' (the probing paper's: raw tokens, asymmetric multi-label loss, batch "
            "128, 30 epochs without early stopping, lr/weight-decay grid, full-width attention, "
            "5 seeds). Formerly token_protocol (still read, with a deprecation warning).",
        )
        # Declared so that a run handing options to the tasks that take them keeps it; read
        # as token_recipe on input (Options.renamed) and never recorded.
        token_protocol: Literal["default", "paper"] | None = Field(
            None, exclude=True, description="Deprecated: the old name of token_recipe."
        )
        token_search: Literal["grid", "paper"] = Field(
            "grid",
            description="Paper recipe: how the token probes' learning rate and weight decay "
            "are chosen: 'grid' (a 2 × 2 grid inside the paper's ranges) or 'paper' (the "
            "paper's search: Sobol then TPE trials under successive halving, the best few "
            "re-run with 5 seeds; needs pip install 'audiobench[search]').",
        )
        token_trials: int = Field(
            50, ge=1, description="Trials of token_search='paper' (the paper: 50)."
        )
        token_seeds: int | None = Field(
            None,
            ge=1,
            description="Seeds per token probe (seed, seed + 1, ...; mean ± std over them). "
            "None: 5 under the paper recipe, else 1.",
        )

        @model_validator(mode="after")
        def _search_needs_paper(self) -> Self:
            if self.token_search == "paper" and self.token_recipe != "paper":
                raise ValueError(
                    "token_search='paper' is the paper recipe's search: add "
                    "-O token_recipe=paper (the default recipe has no search)"
                )
            return self

    options: Options = Options()

    @classmethod
    def resolve_options(cls, values: Mapping[str, Any]) -> Options:
        """As :meth:`Task.resolve_options`; ``multilabel`` follows the labels, not the run."""
        options = super().resolve_options(values)
        assert isinstance(options, cls.Options)
        if options.multilabel != cls.options.multilabel:
            raise ValueError(
                f"task {cls.metadata.name}: multilabel is fixed by the task's labels "
                f"({cls.options.multilabel}); it cannot be set per run"
            )
        return options

    @property
    def probe_names(self) -> tuple[str, ...]:
        """The probes run: the main score's (primary) probe first, then the others."""
        primary = parse_score_path(self.metadata.main_score)[0]
        # A reference-protocol main score names no probe.
        first = [primary] if primary in PROBE_NAMES else []
        return tuple(dict.fromkeys([*first, *self.options.probes]))

    @property
    def token_seeds(self) -> int:
        """Seeds each token probe is trained with."""
        from audiobench.probes.paper import PAPER_SEEDS

        o = self.options
        return o.token_seeds or (PAPER_SEEDS if o.token_recipe == "paper" else 1)

    # ------------------------------------------------------------------ labels and splits

    def evaluation_splits(self, clips: Sequence[Clip]) -> tuple[str, list[Split]]:
        """How the probes split ``clips`` (one subset): the method and the checked splits.

        The method is ``"folds"``, ``"given"``, ``"grouped_folds"`` or ``"generated_folds"``
        (see the module docstring); split indices are positions in ``clips``.
        """
        where = f"task {self.name}"
        targets, class_names = self.targets_of(list(clips), where)
        return self.splits_of(list(clips), targets, class_names, where)

    def targets_of(self, clips: list[Clip], where: str) -> tuple[Any, list[str]]:
        """Multi-class: the label strings and sorted class names; multi-label: indicator rows."""
        o = self.options
        if not o.multilabel:
            labels = [str(c.label) for c in clips]
            return labels, sorted(set(labels))
        sets = [{p.strip() for p in str(c.label).split(o.label_separator)} - {""} for c in clips]
        if empty := [c.id for c, names in zip(clips, sets, strict=True) if not names]:
            raise DataError(
                f"{where}: {len(empty)} clip(s) have an empty label list: {describe_clips(empty)}"
            )
        class_names = sorted(set().union(*sets))
        column = {name: j for j, name in enumerate(class_names)}
        matrix = np.zeros((len(clips), len(class_names)), dtype=np.int64)
        for i, names in enumerate(sets):
            matrix[i, [column[n] for n in names]] = 1
        return matrix, class_names

    def splits_of(
        self, clips: list[Clip], targets: Any, class_names: list[str], where: str
    ) -> tuple[str, list[Split]]:
        """The splits of ``clips`` (see :meth:`evaluation_splits`) for their ``targets``
        (:meth:`targets_of`), each checked for leaked groups and unseen classes."""
        from audiobench.probes import check_split, fold_splits, grouped_folds, split_from_labels

        o = self.options
        if o.grouped and (missing := [c.id for c in clips if c.group is None]):
            raise DataError(
                f"{where}: grouped splits need a group (speaker, individual) for every "
                f"clip; {len(missing)} have none: {describe_clips(missing)}"
            )
        groups = [str(c.group) for c in clips] if o.grouped else None
        try:
            if o.folds:
                method, splits = "folds", fold_splits(self._fold_ids(clips, where))
            elif {c.split for c in clips} - {"train", None}:
                method, splits = "given", [split_from_labels([c.split for c in clips])]  # type: ignore[misc]
            else:
                method = "grouped_folds" if o.grouped else "generated_folds"
                by = groups or [c.id for c in clips]  # ungrouped: every clip its own group
                splits = grouped_folds(
                    targets, by, n_splits=o.generated_folds, seed=o.seed, multilabel=o.multilabel
                )
            for s in splits:
                check_split(s, targets, groups, multilabel=o.multilabel, class_names=class_names)
        except ValueError as exc:
            raise error_in_context(exc, where) from exc
        return method, splits

    def _fold_ids(self, clips: list[Clip], where: str) -> list[int | str]:
        """Each clip's fold, checked against the declared ones (integers when all are)."""
        o = self.options
        values = [c.metadata.get(o.fold_key) for c in clips]
        if missing := [c.id for c, v in zip(clips, values, strict=True) if v is None or v == ""]:
            raise DataError(
                f"{where}: {len(missing)} clip(s) have no {o.fold_key!r}: {describe_clips(missing)}"
            )
        text = [str(v) for v in values]
        if odd := sorted({v for v in text if v not in o.folds}):
            raise DataError(
                f"{where}: fold value(s) {odd} are not among the declared folds "
                f"{sorted(set(o.folds))}"
            )
        # Integers when all are, so that fold-2 sorts before fold-10.
        return [int(v) for v in text] if all(v.lstrip("-").isdigit() for v in text) else list(text)
