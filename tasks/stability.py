"""Stability tasks: SVQ's English clean utterances under SpecAugment, and an offline mock.

``SVQEnUsContinuousStability`` and ``SVQEnUsDiscreteStability`` are MSEB's tasks of those
names (``mseb_tasks.json``): the en_us utterances of SVQ's index recorded in the clean
environment, each followed by 5 SpecAugment variants; main scores ``Corpus_Mean_CED`` and
``Corpus_Mean_UED`` (lower is more stable). SVQ is read from the default branch, as MSEB reads
it: unpinned (:mod:`audiobench.tasks.svq`).

``MockStability``: generated speech-like sentences (:func:`audiobench.synthetic.spoken.
write_utterances`), offline with any vector or frame model (``log-mel``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from audiobench.audio import Clip
from audiobench.families import StabilityTask
from audiobench.sources import DatasetError
from audiobench.task import Synthetic, Task, TaskMetadata
from audiobench.tasks.svq import (
    INDEX_FILE,
    SVQ_CITATION,
    SVQ_LICENSE,
    SVQ_LOCALES,
    SVQ_REFERENCE,
    SVQ_SOURCE,
    svq_folder,
    svq_utterances,
)

__all__ = [
    "SVQ_STABILITY_TASKS",
    "MockStability",
    "SVQEnUsContinuousStability",
    "SVQEnUsDiscreteStability",
    "SvqStability",
]


class MockStability(StabilityTask):
    metadata = TaskMetadata(
        name="MockStability",
        description=(
            "8 generated speech-like sentences of 6 words, each followed by 5 SpecAugment "
            "variants; MSEB's continuous stability of the encoder's frames (Corpus_Mean_CED, "
            "lower is more stable). Runs offline."
        ),
        dataset=Synthetic(
            generator="audiobench.synthetic.spoken:write_utterances",
            seed=25,
            params={"n_utterances": 8, "n_words": 6},
        ),
        main_score="Corpus_Mean_CED",
        higher_is_better=False,
        domains=("synthetic", "speech"),
        license="Apache-2.0",
    )


class SvqStability(StabilityTask):
    """SVQ's clean utterances of one locale (MSEB's ``SVQ<Loc>...Stability``)."""

    locale: ClassVar[str]

    def read_clips(self, say: Callable[[str], None], *, missing_ok: bool) -> list[Clip]:
        """The locale's clean-environment utterances, in the index's order."""
        folder = svq_folder(self.name, self.dataset_path, self.dataset_revision, INDEX_FILE)
        say(f"reading SVQ from {folder}")
        clips = [
            Clip(id=u.id, audio=u.audio, text=u.text, metadata={"environment": u.environment})
            for u in svq_utterances(folder, self.name).values()
            if u.locale == self.locale and u.environment == "clean"
        ]
        if not clips:
            raise DatasetError(
                f"{self.name}: {INDEX_FILE} has no clean utterance of locale {self.locale}"
            )
        return clips


def _svq_metadata(name: str, kind: str, main: str, locale: str = "en_us") -> TaskMetadata:
    return TaskMetadata(
        name=name,
        description=(
            f"SVQ, {locale}, clean utterances, each with 5 SpecAugment variants: MSEB's {kind} "
            f"stability ({main}, lower is more stable)."
        ),
        dataset=SVQ_SOURCE,
        splits=("test",),
        main_score=main,
        higher_is_better=False,
        domains=("speech", "robustness"),
        license=SVQ_LICENSE,
        citation=SVQ_CITATION,
        reference=SVQ_REFERENCE,
    )


class SVQEnUsContinuousStability(SvqStability):
    locale = "en_us"
    metadata = _svq_metadata("SVQEnUsContinuousStability", "continuous", "Corpus_Mean_CED")


class SVQEnUsDiscreteStability(SvqStability):
    locale = "en_us"
    options = StabilityTask.Options(representation="discrete")
    metadata = _svq_metadata("SVQEnUsDiscreteStability", "discrete", "Corpus_Mean_UED")


def _svq_task(locale: str, discrete: bool) -> type[Task]:
    kind = "discrete" if discrete else "continuous"
    name = f"SVQ{SVQ_LOCALES[locale][0]}{kind.capitalize()}Stability"
    main = "Corpus_Mean_UED" if discrete else "Corpus_Mean_CED"
    attributes: dict[str, object] = {
        "locale": locale,
        "metadata": _svq_metadata(name, kind, main, locale),
        "__module__": __name__,
    }
    if discrete:
        attributes["options"] = StabilityTask.Options(representation="discrete")
    return type(name, (SvqStability,), attributes)


#: MSEB's 52 SVQ stability tasks, continuous and discrete per locale, under MSEB's names
#: (the ``audiobench.task_catalogues`` entry point ``svq-stability``).
SVQ_STABILITY_TASKS: tuple[type[Task], ...] = tuple(
    task
    for locale in SVQ_LOCALES
    for task in (
        (SVQEnUsContinuousStability, SVQEnUsDiscreteStability)
        if locale == "en_us"
        else (_svq_task(locale, False), _svq_task(locale, True))
    )
)
