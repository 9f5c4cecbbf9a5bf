"""Zero-shot classification with an audio-text model (CLAP): accuracy (main), top-k, F1.

**Data contract.** Every clip carries ``label`` (one class name). The classes are the
``classes`` option when declared, else the sorted distinct labels of the evaluated clips (all
subsets together). Each class name becomes a text prompt:
:meth:`ZeroShotClassificationTask.class_text` turns the name into words (underscores to spaces:
``"sea_waves"`` → ``"sea waves"``) and ``prompt_template`` (``"This is a sound of {label}."``)
wraps them. The prompts are embedded once by the encoder's text tower, the clips by its audio
tower (pooled); each clip's class scores are the cosine similarities to the prompts and the
predicted class is the arg-max (ties: the earlier class). Scores:
:func:`audiobench.metrics.classification_scores` (accuracy, balanced accuracy, macro F1,
``top_<k>_accuracy`` when there are more than k classes). The prompts are recorded in the
result's details.

**Bad input.** A model without a text tower is refused before any audio is decoded; a clip
without a label or with a label outside the declared classes, fewer than two classes, two
classes with the same prompt, or text and audio embeddings of different sizes are errors.
Clips the runner skipped (``--on-error skip``) are left out and counted (``n_unembedded``).

Subsets (``Clip.subset``) are scored separately with the same class set; with several,
``aggregates["mean"]`` holds the unweighted mean of every metric and the main score is that
mean.

``protocol="mteb"`` scores as MTEB scores MAEB's zero-shot tasks instead: float32 cosine of the
encoder's raw audio and prompt embeddings, arg-max with ties to the first class, MTEB's keys
(``accuracy``, ``f1``, ...; :mod:`audiobench.families.mteb_protocol`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, ClassVar

import numpy as np
from pydantic import AfterValidator, Field

from audiobench import reports as _reports
from audiobench.audio import Clip
from audiobench.encoder import Encoder
from audiobench.errors import DataError
from audiobench.families import mteb_protocol
from audiobench.families.mteb_protocol import ByProtocol, MtebReport, MtebSummary, ProtocolOptions
from audiobench.families.ranking_inputs import (
    check_same_width,
    embed_text_matrix,
    require_text_tower,
    unit_rows,
)
from audiobench.metrics.naming import describe_clips
from audiobench.reports import Count, KeyedReport, Summary, Unit, metric_names
from audiobench.task import Embedder, Subset, Task, TaskFamily, TaskScores

__all__ = [
    "ZeroShotClassificationReport",
    "ZeroShotClassificationSummary",
    "ZeroShotClassificationTask",
]

#: Metrics always reported; ``top_<k>_accuracy`` joins them when there are more than k classes.
METRICS = ("accuracy", "balanced_accuracy", "f1_macro")


def _template(template: str) -> str:
    try:
        filled = template.format(label="\x00")
    except (KeyError, IndexError, ValueError) as exc:
        raise ValueError(
            f"prompt_template {template!r} must contain '{{label}}' and no other fields: {exc}"
        ) from None
    if "\x00" not in filled:
        raise ValueError(f"prompt_template {template!r} must contain '{{label}}'")
    return template


def _distinct(classes: tuple[str, ...]) -> tuple[str, ...]:
    if len(set(classes)) != len(classes):
        raise ValueError(f"classes repeat a name: {list(classes)}")
    return classes


TopKMetric = Annotated[str, AfterValidator(metric_names(METRICS, ("top_", "_accuracy")))]


class ZeroShotScores(KeyedReport):
    """Accuracy, balanced accuracy, macro F1, and ``top_<k>_accuracy`` where defined."""

    __pydantic_extra__: dict[TopKMetric, Unit | None] = Field(init=False)
    accuracy: Unit | None
    balanced_accuracy: Unit | None
    f1_macro: Unit | None


class ZeroShotClassificationReport(ZeroShotScores):
    """One subset: the metrics over its embedded clips, and the counts."""

    n_samples: Count
    n_classes: Count
    n_unembedded: Count


class ZeroShotClassificationSummary(Summary, ZeroShotScores):
    """Unweighted mean over subsets of every metric (None if undefined in any subset)."""

    n_subsets: Count


class ZeroShotClassificationTask(Task):
    """Base of zero-shot classification tasks; subclasses set metadata and, maybe, options."""

    family: ClassVar[TaskFamily] = TaskFamily.ZERO_SHOT_CLASSIFICATION
    Report = ByProtocol(ZeroShotClassificationReport, MtebReport)
    Summary = ByProtocol(ZeroShotClassificationSummary, MtebSummary)

    class Options(ProtocolOptions):
        prompt_template: Annotated[str, AfterValidator(_template)] = Field(
            "This is a sound of {label}.", description="Prompt of a class; '{label}': its words."
        )
        classes: Annotated[tuple[str, ...], AfterValidator(_distinct)] = Field(
            (), description="Class names in score-column order; empty: the labels found."
        )
        top_k: int = Field(5, ge=1, description="k of top_<k>_accuracy (reported when C > k).")

    options: Options = Options()
    #: The classes and the unit-norm prompt embeddings of the evaluation (set by ``evaluate``).
    _classes: list[str]
    _prompt_unit: np.ndarray
    #: The prompt embeddings as the encoder gave them (the reference protocol normalises them).
    _prompt_raw: np.ndarray

    @classmethod
    def check_main_score(cls, path: tuple[str, ...]) -> None:
        if cls.options.protocol == "mteb":
            return mteb_protocol.check_main_score(cls, path)
        cls.require_main_score(path, [*METRICS, f"top_{cls.options.top_k}_accuracy"])

    @classmethod
    def check_encoder(cls, encoder: Encoder) -> None:
        require_text_tower(
            encoder, True, "zero-shot classification needs an audio-text model such as CLAP"
        )

    @classmethod
    def class_text(cls, label: str) -> str:
        """The words a class name stands for in a prompt (underscores become spaces)."""
        return " ".join(label.replace("_", " ").split())

    def prompts(self, classes: Sequence[str]) -> list[str]:
        """One prompt per class, in order."""
        return [self.options.prompt_template.format(label=self.class_text(c)) for c in classes]

    def protocol(self) -> dict[str, Any]:
        prompts = dict(zip(self._classes, self.prompts(self._classes), strict=True))
        if self.options.protocol == "mteb":
            return mteb_protocol.describe(self, prompts=prompts)
        return {
            "prompt_template": self.options.prompt_template,
            "prompts": prompts,
            "similarity": "cosine",
            "top_k": self.options.top_k,
        }

    def _class_set(self, clips: Sequence[Clip]) -> list[str]:
        found = sorted({c.label for c in clips if c.label is not None})
        classes = list(self.options.classes) or found
        unknown = sorted(set(found) - set(classes))
        if unknown:
            raise DataError(
                f"task {self.name}: label(s) {describe_clips(unknown)} are not among the "
                "task's classes"
            )
        if len(classes) < 2:
            raise DataError(f"task {self.name}: zero-shot classification needs two classes")
        return classes

    def evaluate(self, embedder: Embedder, clips: Sequence[Clip]) -> TaskScores:
        """As :meth:`Task.evaluate`, with one class set and one prompt embedding for all subsets."""
        for name, group in self.clips_by_subset(clips).items():
            self._check_labels(Subset(name=name, clips=group, task=self.name))
        if clips:
            self._classes = self._class_set(clips)
            prompts = self.prompts(self._classes)
            repeated = sorted({p for p in prompts if prompts.count(p) > 1})
            if repeated:
                raise DataError(
                    f"task {self.name}: several classes share the prompt(s) "
                    f"{describe_clips(repeated)}"
                )
            rows, text = embed_text_matrix(embedder, prompts, f"{self.name} prompts")
            self._prompt_raw = text[[rows[p] for p in prompts]]
            self._prompt_unit = unit_rows(self._prompt_raw, prompts, "prompt")
        return super().evaluate(embedder, clips)

    def evaluate_subset(self, embedder: Embedder, subset: Subset) -> _reports.Report:
        from audiobench.metrics import classification_scores

        kept, audio = embedder.embed_matrix(subset.clips, subset.label)
        if not kept:
            raise DataError(f"{subset.where}: no clip could be embedded")
        check_same_width(audio, self._prompt_raw, "audio", "text", embedder.encoder.meta.name)
        if self.options.protocol == "mteb":
            targets = [self._classes.index(str(c.label)) for c in kept]
            return mteb_protocol.zero_shot_report(audio, self._prompt_raw, targets)
        scores = classification_scores(
            [c.label for c in kept],
            unit_rows(audio, [c.id for c in kept], "audio") @ self._prompt_unit.T,
            classes=self._classes,
            top_k=self.options.top_k,
        )
        return ZeroShotClassificationReport(**scores, n_unembedded=len(subset.clips) - len(kept))
