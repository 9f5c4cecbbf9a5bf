"""Zero-shot classification with an audio-text model (CLAP): accuracy (main), top-5, F1.

**Data contract.** Every clip carries ``label`` (one class name). The classes are the task's
``classes`` when declared, else the sorted distinct labels of the evaluated clips. Each class
name becomes a text prompt: :meth:`ZeroShotClassificationTask.class_text` turns the name into
words (underscores to spaces: ``"sea_waves"`` → ``"sea waves"``) and ``prompt_template``
(``"This is a sound of {label}."``) wraps them. The prompts are embedded by the encoder's text
tower, the clips by its audio tower (pooled); each clip's class scores are the cosine
similarities to the prompts and the predicted class is the arg-max (ties: the earlier class).
Scores: :func:`audiobench.metrics.classification_scores` (accuracy, balanced accuracy, macro
F1, top-k accuracy when there are more than k classes). The prompts are recorded in the
result's details.

**Bad input.** A model without a text tower is refused before any audio is decoded; a clip
without a label or with a label outside the declared classes, fewer than two classes, two
classes with the same prompt, or text and audio embeddings of different sizes are errors.
Clips the runner skipped (``--on-error skip``) are left out and counted (``n_unembedded``).

Subsets (``Clip.subset``) are scored separately with the same class set and averaged as in the
retrieval family.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from audiobench.audio import Clip
from audiobench.encoder import Encoder, Modality
from audiobench.families.retrieval import (
    check_same_width,
    describe,
    embed_audio_matrix,
    embed_text_matrix,
    summarize_subsets,
    unit_rows,
)
from audiobench.families.score_checks import cutoff_metric, flat_score_problems
from audiobench.task import Embedder, Task, TaskFamily, TaskScores

__all__ = ["ZeroShotClassificationTask"]

_COUNTS = frozenset({"n_samples", "n_classes", "n_unembedded"})


class ZeroShotClassificationTask(Task):
    """Base of zero-shot classification tasks; subclasses set metadata and the options below."""

    family: ClassVar[TaskFamily] = TaskFamily.ZERO_SHOT_CLASSIFICATION
    prompt_template: ClassVar[str] = "This is a sound of {label}."
    #: The class names, in score-column order; empty: the sorted labels found in the data.
    classes: ClassVar[tuple[str, ...]] = ()
    top_k: ClassVar[int] = 5

    def __init__(self, *, prompt_template: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.prompt_template = prompt_template or type(self).prompt_template
        try:
            filled = self.prompt_template.format(label="\x00")
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(
                f"prompt_template {self.prompt_template!r} must contain '{{label}}' and no "
                f"other fields: {exc}"
            ) from None
        if "\x00" not in filled:
            raise ValueError(f"prompt_template {self.prompt_template!r} must contain '{{label}}'")

    @classmethod
    def check_encoder(cls, encoder: Encoder) -> None:
        if Modality.TEXT not in encoder.meta.modalities:
            raise ValueError(
                f"model {encoder.meta.name!r} has no text encoder; zero-shot "
                "classification needs an audio-text model such as CLAP"
            )

    @classmethod
    def score_problems(cls, scores: dict[str, Any]) -> list[str]:
        """Unknown subsets and metrics, values outside [0, 1], counts that are not counts."""

        def bounds(name: str) -> tuple[float, float] | None:
            if name in ("accuracy", "balanced_accuracy", "f1_macro"):
                return (0.0, 1.0)
            if name.endswith("_accuracy") and cutoff_metric(
                name.removesuffix("_accuracy"), ("top_",)
            ):
                return (0.0, 1.0)
            return None

        return flat_score_problems(
            scores,
            subsets=cls.metadata.subsets,
            metric_range=bounds,
            counts=_COUNTS,
            known="accuracy, balanced_accuracy, f1_macro, top_<k>_accuracy",
        )

    @classmethod
    def class_text(cls, label: str) -> str:
        """The words a class name stands for in a prompt (underscores become spaces)."""
        return " ".join(label.replace("_", " ").split())

    def prompts(self, classes: Sequence[str]) -> list[str]:
        """One prompt per class, in order."""
        return [self.prompt_template.format(label=self.class_text(c)) for c in classes]

    def _classes(self, clips: Sequence[Clip]) -> list[str]:
        unlabelled = [c.id for c in clips if c.label is None]
        if unlabelled:
            raise ValueError(
                f"task {self.name}: {len(unlabelled)} clip(s) have no label: {describe(unlabelled)}"
            )
        found = sorted({c.label for c in clips if c.label is not None})
        classes = list(self.classes) or found
        if len(set(classes)) != len(classes):
            raise ValueError(f"task {self.name}: classes repeat a name: {classes}")
        unknown = sorted(set(found) - set(classes))
        if unknown:
            raise ValueError(
                f"task {self.name}: label(s) {describe(unknown)} are not among the task's classes"
            )
        if len(classes) < 2:
            raise ValueError(f"task {self.name}: zero-shot classification needs two classes")
        return classes

    def evaluate(self, embedder: Embedder, clips: Sequence[Clip]) -> TaskScores:
        from audiobench.metrics import classification_scores

        if not clips:
            raise ValueError(f"task {self.name}: no clips to evaluate")
        classes = self._classes(clips)
        prompts = self.prompts(classes)
        repeated = sorted({p for p in prompts if prompts.count(p) > 1})
        if repeated:
            raise ValueError(
                f"task {self.name}: several classes share the prompt(s) {describe(repeated)}"
            )
        rows, text = embed_text_matrix(embedder, prompts, f"{self.name} prompts")
        prompt_unit = unit_rows(text[[rows[p] for p in prompts]], prompts, "prompt")
        per_subset: dict[str, dict[str, Any]] = {}
        for subset, group in self.clips_by_subset(clips).items():
            ids, audio = embed_audio_matrix(embedder, group, f"{self.name} {subset}")
            kept = [c for c in group if c.id in ids]
            if not kept:
                raise ValueError(f"task {self.name}, subset {subset}: no clip could be embedded")
            check_same_width(audio, text, "audio", "text", embedder.encoder.meta.name)
            audio_unit = unit_rows(audio[[ids[c.id] for c in kept]], [c.id for c in kept], "audio")
            report: dict[str, Any] = classification_scores(
                [c.label for c in kept],
                audio_unit @ prompt_unit.T,
                classes=classes,
                top_k=self.top_k,
            )
            report["n_unembedded"] = len(group) - len(kept)
            per_subset[subset] = report
        main, aggregates = summarize_subsets(per_subset, self.metadata.main_score, _COUNTS)
        details: dict[str, Any] = {
            "prompt_template": self.prompt_template,
            "prompts": dict(zip(classes, prompts, strict=True)),
            "similarity": "cosine",
            "top_k": self.top_k,
        }
        return TaskScores(
            main_score=main, scores=per_subset, aggregates=aggregates, details=details
        )
