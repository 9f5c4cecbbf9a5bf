"""Zero-shot classification tasks: ESC-50 with CLAP-style prompts, and an offline mock.

``ESC50ZeroShot``: all 2,000 clips of ``ashraq/esc50`` (the revision MTEB pins), 50 classes
named by the ``category`` column; prompts ``"This is a sound of {label}."`` with underscores in
the class names read as spaces (``"sea_waves"`` → ``"This is a sound of sea waves."``).

``MockZeroShotClassification``: generated sounds (:mod:`audiobench.synthetic.sounds`) whose
class names are words (``"rising_whistle"``), offline.
"""

from __future__ import annotations

from audiobench.benchmark import Benchmark, ScoreColumn
from audiobench.families import ZeroShotClassificationTask
from audiobench.task import Synthetic, TaskMetadata
from audiobench.tasks.esc50 import (
    ESC50_CITATION,
    ESC50_COLUMNS,
    ESC50_LICENSE,
    ESC50_REFERENCE,
    ESC50_SOURCE,
)

__all__ = ["ESC50_CLASSES", "ZERO_SHOT", "ESC50ZeroShot", "MockZeroShotClassification"]

#: The 50 ESC-50 categories in target order (0-49).
ESC50_CLASSES = (
    "dog", "rooster", "pig", "cow", "frog", "cat", "hen", "insects", "sheep", "crow",
    "rain", "sea_waves", "crackling_fire", "crickets", "chirping_birds", "water_drops", "wind",
    "pouring_water", "toilet_flush", "thunderstorm",
    "crying_baby", "sneezing", "clapping", "breathing", "coughing", "footsteps", "laughing",
    "brushing_teeth", "snoring", "drinking_sipping",
    "door_wood_knock", "mouse_click", "keyboard_typing", "door_wood_creaks", "can_opening",
    "washing_machine", "vacuum_cleaner", "clock_alarm", "clock_tick", "glass_breaking",
    "helicopter", "chainsaw", "siren", "car_horn", "engine", "train", "church_bells",
    "airplane", "fireworks", "hand_saw",
)  # fmt: skip


class ESC50ZeroShot(ZeroShotClassificationTask):
    options = ZeroShotClassificationTask.Options(classes=ESC50_CLASSES)
    metadata = TaskMetadata(
        name="ESC50ZeroShot",
        description=(
            "ESC-50, zero-shot: each of the 2,000 clips is assigned the class whose prompt "
            "('This is a sound of <class>.') its audio embedding is closest to; 50 classes. "
            "Needs an audio-text model."
        ),
        dataset=ESC50_SOURCE,
        columns=ESC50_COLUMNS,
        splits=("train",),
        main_score="accuracy",
        domains=("environmental", "audio-text"),
        license=ESC50_LICENSE,
        citation=ESC50_CITATION,
        reference=ESC50_REFERENCE,
        sample_rate=44100,
    )


#: (contour, register, timbre) of the mock's classes; labelled "<contour>_<timbre>".
_MOCK_CLASSES = (
    ("rising", "high", "whistle"),
    ("falling", "high", "whistle"),
    ("warbling", "high", "whistle"),
    ("steady", "low", "buzz"),
    ("rising", "low", "buzz"),
    ("steady", "low", "reed"),
)


class MockZeroShotClassification(ZeroShotClassificationTask):
    metadata = TaskMetadata(
        name="MockZeroShotClassification",
        description=(
            "Generated sounds of 6 classes named in words ('rising whistle', 'steady buzz'), 5 "
            "renditions each, classified by prompts built from the class names. Needs an "
            "audio-text model. Runs offline."
        ),
        dataset=Synthetic(
            generator="audiobench.synthetic.sounds:write_sounds",
            seed=31,
            params={"classes": _MOCK_CLASSES, "renditions": 5, "label": "{contour}_{timbre}"},
        ),
        main_score="accuracy",
        domains=("synthetic",),
        license="Apache-2.0",
    )


ZERO_SHOT = Benchmark(
    name="ZeroShotClassification",
    description="Zero-shot classification with audio-text models: ESC-50 accuracy.",
    tasks=("ESC50ZeroShot",),
    columns=(
        ScoreColumn(name="ESC-50 accuracy", task="ESC50ZeroShot", score="accuracy", aggregate=None),
    ),
    rank_by=("ESC-50 accuracy",),
)
