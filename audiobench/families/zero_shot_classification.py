"""Zero-shot classification with an audio-text model (CLAP): accuracy (main), top-k, F1.

**Data contract.** Every clip carries ``label`` (one class name). The classes are the
``classes`` option when declared, else the sorted distinct labels of the evaluated clips (all
subsets together). Each class name becomes a text prompt:
:meth:`ZeroShotClassificationTask.class_text` turns the name into words (underscores to spaces:
``"sea_waves"`` → ``"sea waves"``) and ``prompt_template`` (``"This is a sound of {label}."``)
wraps them. The prompts are embedded once by the encoder's text tower, the clips by its audio
tower (pooled). The prompts are recorded in the result's details.

**Scoring** is the evaluator's that the ``protocol`` option selects
(:mod:`audiobench.evaluators`): ``"audiobench"``
(:mod:`audiobench.evaluators.zero_shot_classification`): each clip's class scores are the
cosine similarities to the prompts, the predicted class is the arg-max (ties: the earlier
class); accuracy, balanced accuracy, macro F1, ``top_<k>_accuracy`` when there are more
than k classes. ``"mteb"`` (:mod:`audiobench.evaluators.mteb`): as MTEB scores MAEB's
zero-shot tasks (float32 cosine of the raw audio and prompt embeddings, arg-max with ties to
the first class, MTEB's keys).

**Bad input.** A model without a text tower is refused before any audio is decoded; a clip
without a label or with a label outside the declared classes, fewer than two classes, two
classes with the same prompt, or text and audio embeddings of different sizes are errors.
Clips the runner skipped (``--on-error skip``) are left out and counted (``n_unembedded``).

Subsets (``Clip.subset``) are scored separately with the same class set; with several,
``aggregates["mean"]`` holds the unweighted mean of every metric and the main score is that
mean.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, ClassVar

import numpy as np
from pydantic import AfterValidator, Field

from audiobench.audio import Clip
from audiobench.encoder import Encoder
from audiobench.errors import DataError
from audiobench.evaluators.evaluator import EvaluatedOptions, EvaluatedTask
from audiobench.evaluators.zero_shot_classification import (
    ZeroShotClassificationReport,
    ZeroShotClassificationSummary,
)
from audiobench.families.ranking_inputs import (
    check_same_width,
    embed_text_matrix,
    require_text_tower,
    unit_rows,
)
from audiobench.metrics.naming import describe_clips
from audiobench.task import Embedder, Subset, TaskFamily, TaskScores

__all__ = [
    "ZeroShotClassificationReport",
    "ZeroShotClassificationSummary",
    "ZeroShotClassificationTask",
]


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


class ZeroShotClassificationTask(EvaluatedTask):
    """Base of zero-shot classification tasks; subclasses set metadata and, maybe, options."""

    family: ClassVar[TaskFamily] = TaskFamily.ZERO_SHOT_CLASSIFICATION

    class Options(EvaluatedOptions):
        prompt_template: Annotated[str, AfterValidator(_template)] = Field(
            "This is a sound of {label}.", description="Prompt of a class; '{label}': its words."
        )
        classes: Annotated[tuple[str, ...], AfterValidator(_distinct)] = Field(
            (), description="Class names in score-column order; empty: the labels found."
        )
        top_k: int = Field(5, ge=1, description="k of top_<k>_accuracy (reported when C > k).")

    options: Options = Options()
    #: The evaluation's classes, in score-column order (set by :meth:`evaluate`).
    classes: list[str]
    #: One prompt embedding per class, as the encoder gave it, and scaled to unit norm.
    prompt_embeddings: np.ndarray
    prompt_unit: np.ndarray

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

    def class_prompts(self) -> dict[str, str]:
        """Each class of the evaluation and its prompt."""
        return dict(zip(self.classes, self.prompts(self.classes), strict=True))

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
            self.classes = self._class_set(clips)
            prompts = self.prompts(self.classes)
            repeated = sorted({p for p in prompts if prompts.count(p) > 1})
            if repeated:
                raise DataError(
                    f"task {self.name}: several classes share the prompt(s) "
                    f"{describe_clips(repeated)}"
                )
            rows, text = embed_text_matrix(embedder, prompts, f"{self.name} prompts")
            self.prompt_embeddings = text[[rows[p] for p in prompts]]
            self.prompt_unit = unit_rows(self.prompt_embeddings, prompts, "prompt")
        return super().evaluate(embedder, clips)

    def embedded_clips(self, embedder: Embedder, subset: Subset) -> tuple[list[Clip], np.ndarray]:
        """The subset's clips that could be embedded, and their pooled audio embeddings."""
        kept, audio = embedder.embed_matrix(subset.clips, subset.label)
        if not kept:
            raise DataError(f"{subset.where}: no clip could be embedded")
        check_same_width(audio, self.prompt_embeddings, "audio", "text", embedder.encoder.meta.name)
        return kept, audio
