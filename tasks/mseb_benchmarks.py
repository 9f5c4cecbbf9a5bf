"""MSEB's benchmarks: ``MSEB`` (its leaderboard's overall table) and one per super task.

Aggregated by MSEB's leaderboard rule (:mod:`audiobench.mseb_benchmark`): ``MSEB`` has a
column per aggregated super task (the mean of the task records a model has; transcription as
100 − WER %) and MSEB's average, a missing super task counted as 0. ``MSEB <Super task>`` has a
column per declared task (its main score) and the tab's task average. Stability has its own
benchmark but, as in MSEB, does not enter the average.
"""

from __future__ import annotations

from audiobench.benchmark import MEAN, ScoreColumn
from audiobench.mseb_benchmark import AVERAGED, MsebBenchmark
from audiobench.task import Task
from audiobench.tasks.fsd50k_mseb import FSD50KTestClassification, FSD50KTestClustering
from audiobench.tasks.reasoning import SVQ_REASONING_TASKS
from audiobench.tasks.segmentation import SVQ_SEGMENTATION_TASKS
from audiobench.tasks.speech_massive import SPEECH_MASSIVE_TASKS
from audiobench.tasks.stability import SVQ_STABILITY_TASKS
from audiobench.tasks.svq_catalogue import SVQ_EMBEDDING_TASKS
from audiobench.tasks.transcription import SVQ_TRANSCRIPTION_TASKS

__all__ = ["MSEB", "MSEB_SUPER_TASKS", "mseb_tasks_of"]

#: MSEB's super task -> the audiobench family of its declared tasks.
_FAMILIES = {
    "classification": ("zero_shot_classification", "classification"),
    "clustering": ("clustering",),
    "reasoning": ("reasoning",),
    "reranking": ("reranking",),
    "retrieval": ("retrieval",),
    "segmentation": ("segmentation",),
    "transcription": ("transcription",),
    "stability": ("stability",),
}
_DECLARED: tuple[type[Task], ...] = (
    *SVQ_EMBEDDING_TASKS,
    *SVQ_TRANSCRIPTION_TASKS,
    *SVQ_REASONING_TASKS,
    *SVQ_STABILITY_TASKS,
    *SVQ_SEGMENTATION_TASKS,
    *SPEECH_MASSIVE_TASKS,
    FSD50KTestClassification,
    FSD50KTestClustering,
)


def mseb_tasks_of(super_task: str) -> tuple[type[Task], ...]:
    """The declared MSEB tasks of ``super_task``, in catalogue order."""
    return tuple(t for t in _DECLARED if str(t.metadata.family) in _FAMILIES[super_task])


def _super_task_benchmark(super_task: str) -> MsebBenchmark:
    tasks = mseb_tasks_of(super_task)
    higher = tasks[0].metadata.higher_is_better
    return MsebBenchmark(
        name=f"MSEB {super_task.capitalize()}",
        description=(
            f"MSEB's {super_task} tasks ({len(tasks)}), each by its main score; the mean is "
            "MSEB's task average over the tasks shown"
            + (", a missing one counted as 0" if higher else ", empty if one is missing")
            + (". Not part of MSEB's average." if super_task not in AVERAGED else ".")
        ),
        kind="super_task",
        tasks=tuple(t.metadata.name for t in tasks),
        columns=tuple(
            ScoreColumn(
                name=t.metadata.name,
                task=t.metadata.name,
                score=t.metadata.main_score,
                aggregate=None,
                higher_is_better=higher,
            )
            for t in tasks
        ),
        mean_of=tuple(t.metadata.name for t in tasks),
        rank_by=(MEAN,),
    )


def _overall() -> MsebBenchmark:
    groups = {name: tuple(t.metadata.name for t in mseb_tasks_of(name)) for name in AVERAGED}
    # A column is named for its super task and points at its first task (a registered name,
    # for the leaderboard's context); the table reads every task of the group.
    columns = tuple(
        ScoreColumn(
            name=name,
            task=groups[name][0],
            score=mseb_tasks_of(name)[0].metadata.main_score,
            # 100 − WER: higher is better, unlike the task's own WER.
            aggregate="mean" if name == "transcription" else None,
        )
        for name in AVERAGED
    )
    return MsebBenchmark(
        name="MSEB",
        description=(
            "MSEB's leaderboard: per super task the mean of a model's task scores "
            "(transcription as 100 − WER %, SVQ clustering as the mean of its three targets); "
            "the mean is MSEB's average over the seven, a missing super task counted as 0."
        ),
        kind="overall",
        tasks=tuple(t for name in AVERAGED for t in groups[name]),
        columns=columns,
        groups=groups,
        mean_of=AVERAGED,
        rank_by=(MEAN,),
    )


MSEB = _overall()
#: One benchmark per super task, by name.
MSEB_SUPER_TASKS: dict[str, MsebBenchmark] = {
    name: _super_task_benchmark(name) for name in (*AVERAGED, "stability")
}
MSEB_CLASSIFICATION = MSEB_SUPER_TASKS["classification"]
MSEB_CLUSTERING = MSEB_SUPER_TASKS["clustering"]
MSEB_REASONING = MSEB_SUPER_TASKS["reasoning"]
MSEB_RERANKING = MSEB_SUPER_TASKS["reranking"]
MSEB_RETRIEVAL = MSEB_SUPER_TASKS["retrieval"]
MSEB_SEGMENTATION = MSEB_SUPER_TASKS["segmentation"]
MSEB_TRANSCRIPTION = MSEB_SUPER_TASKS["transcription"]
MSEB_STABILITY = MSEB_SUPER_TASKS["stability"]
