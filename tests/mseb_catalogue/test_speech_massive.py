"""Speech-MASSIVE's intent and gender tasks read a copy of the hub layout (one folder of
parquet files per locale) written here with generated audio, and run offline."""

from __future__ import annotations

from pathlib import Path

import pytest

import audiobench
from audiobench import registry
from audiobench.leaderboard.validate import validate_file
from audiobench.sources import DatasetError
from audiobench.tasks.speech_massive import SPEECH_MASSIVE_TASKS, hub_folder
from tests.families.test_retrieval import tiny_clap  # noqa: F401  (a fixture)
from tests.mseb_catalogue.test_mseb_catalogue import _wav

ROWS = [  # path, intent, speaker_sex
    ("test/a.wav", "alarm_set", "Female"),
    ("test/b.wav", "play_music", "Male"),
    ("test/c.wav", "alarm_set", "Unknown"),
    ("test/d.wav", "weather_query", "Female"),
]


def write_speech_massive(root: Path, folder: str = "de-DE") -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    (root / folder).mkdir(parents=True)
    half = len(ROWS) // 2
    for shard, rows in enumerate((ROWS[:half], ROWS[half:])):
        table = pa.table(
            {
                "audio": [
                    {"bytes": _wav(k + 3 * shard), "path": p} for k, (p, _, _) in enumerate(rows)
                ],
                "path": [p for p, _, _ in rows],
                "utt": ["stelle einen wecker"] * len(rows),
                "intent_str": [i for _, i, _ in rows],
                "speaker_sex": [s for _, _, s in rows],
            }
        )
        pq.write_table(table, root / folder / f"test-0000{shard}-of-00002.parquet")
    return root


def test_every_locale_has_both_tasks_under_msebs_names() -> None:
    names = {t.metadata.name for t in SPEECH_MASSIVE_TASKS}
    assert len(names) == 24
    assert {
        "SpeechMassiveViVnIntentClassification",
        "SpeechMassiveArSaSpeakerGenderClassification",
    } <= names
    assert hub_folder("vi_vn") == "vi-VN"


def test_intent_reads_every_shard_in_order(tmp_path: Path) -> None:
    root = write_speech_massive(tmp_path / "massive")
    task = registry.tasks.get("SpeechMassiveDeDeIntentClassification")(dataset_path=root)
    clips = task.load_data()
    assert [(c.id, c.label) for c in clips] == [(p, i) for p, i, _ in ROWS]


def test_gender_keeps_female_and_male(tmp_path: Path) -> None:
    root = write_speech_massive(tmp_path / "massive")
    task = registry.tasks.get("SpeechMassiveDeDeSpeakerGenderClassification")(dataset_path=root)
    assert [(c.id, c.label) for c in task.load_data()] == [
        ("test/a.wav", "Female"),
        ("test/b.wav", "Male"),
        ("test/d.wav", "Female"),
    ]
    assert task.options.classes == ("Female", "Male")  # type: ignore[attr-defined]


def test_a_copy_without_the_locale_says_what_it_looked_for(tmp_path: Path) -> None:
    root = write_speech_massive(tmp_path / "massive")
    task = registry.tasks.get("SpeechMassiveFrFrIntentClassification")(dataset_path=root)
    with pytest.raises(DatasetError, match=r"no fr-FR/test-\*\.parquet"):
        task.load_data()


def test_intent_runs_offline_under_msebs_protocol(tmp_path: Path, tiny_clap: Path) -> None:  # noqa: F811
    root = write_speech_massive(tmp_path / "massive")
    name = "SpeechMassiveDeDeIntentClassification"
    (result,) = audiobench.evaluate(
        name, f"hf:{tiny_clap}", output_dir=tmp_path / "out", dataset=root, progress=False
    )
    (report,) = result.scores.values()
    assert report["n_samples"] == 4 and report["n_classes"] == 3
    assert result.main_score == report["accuracy"]
    (path,) = (tmp_path / "out").glob(f"*/*/{name}.json")
    parsed, problems = validate_file(path, allow_unpinned=True)
    assert parsed is not None and problems == []
