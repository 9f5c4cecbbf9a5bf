"""Every one of MSEB's 429 registered tasks is declared under MSEB's exact name or listed as
not supported with the reason; ``mseb_tasks.json`` holds MSEB's facts (name, super task,
dataset, main metric) for the check. The per-locale SVQ tasks read their locale from a copy
of SVQ's layout written here with generated audio."""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import audiobench
from audiobench import registry
from audiobench.cli import app
from audiobench.leaderboard.validate import validate_file
from audiobench.tasks.reasoning import SVQ_REASONING_TASKS
from audiobench.tasks.stability import SVQ_STABILITY_TASKS
from audiobench.tasks.transcription import SVQ_TRANSCRIPTION_TASKS
from tests.families.test_retrieval import tiny_clap  # noqa: F401  (a fixture)

MSEB_TASKS = json.loads((Path(__file__).parent / "mseb_tasks.json").read_text())

#: MSEB's main metric -> audiobench's name of it, for the declared super tasks.
MAIN_SCORES = {
    "WER": "wer",
    "GmeanF1": "GmeanF1",
    "Corpus_Mean_CED": "Corpus_Mean_CED",
    "Corpus_Mean_UED": "Corpus_Mean_UED",
    "NDCG": "ndcg",
    "MRR": "mrr",
    "MAP": "map",
    "mAP": "map",
    "Accuracy": "accuracy",
    "VMeasure": "v_measure",
}
#: MSEB's super task -> the audiobench families scoring it, where they differ.
FAMILIES = {"classification": ("zero_shot_classification", "classification")}


def test_the_fixture_is_msebs_registry() -> None:
    assert len(MSEB_TASKS) == 429 and len({t["name"] for t in MSEB_TASKS}) == 429
    assert Counter(t["super_task"] for t in MSEB_TASKS) == {
        "retrieval": 112, "reranking": 52, "reasoning": 36, "classification": 61,
        "clustering": 37, "transcription": 26, "stability": 52, "segmentation": 52,
        "brain_encoding": 1,
    }  # fmt: skip


@pytest.mark.parametrize("entry", MSEB_TASKS, ids=[t["name"] for t in MSEB_TASKS])
def test_each_mseb_task_is_declared_under_its_name_or_unsupported_with_a_reason(
    entry: dict[str, str],
) -> None:
    name = entry["name"]
    declared, unsupported = set(registry.tasks.names()), registry.unsupported_tasks()
    assert (name in declared) != (name in unsupported), "declared xor listed unsupported"
    if name in unsupported:
        missing = unsupported[name]
        assert missing.source.startswith("MSEB 1.0.0 ") and missing.protocol == "mseb"
        assert missing.main_score == entry["main_metric"]
        assert len(missing.reason) > 20 and missing.revision is None
        assert str(missing.dataset).startswith(entry["dataset"].split("/")[0])
        return
    meta = registry.tasks.get(name).metadata
    assert meta.name == name
    assert str(meta.family) in FAMILIES.get(entry["super_task"], (entry["super_task"],))
    main = MAIN_SCORES[entry["main_metric"]]
    if name.startswith("SVQ") and main == "v_measure":
        main = "targets_mean_v_measure"  # the mean of MSEB's three targets, as its leaderboard
    assert meta.main_score == main
    assert meta.dataset.path == entry["dataset"]
    assert meta.dataset.revision == "main"  # unpinned: MSEB versions its data by labels


def test_the_generated_tables_hold_each_locale_once() -> None:
    for tasks, count in (
        (SVQ_TRANSCRIPTION_TASKS, 26),
        (SVQ_REASONING_TASKS, 36),
        (SVQ_STABILITY_TASKS, 52),
    ):
        names = [t.metadata.name for t in tasks]
        assert len(names) == len(set(names)) == count
    # The en_us tasks declared before the catalogue are the same classes.
    assert registry.tasks.get("SVQEnUsSpeechTranscription") in SVQ_TRANSCRIPTION_TASKS
    assert registry.tasks.get("SVQEnUsDiscreteStability") in SVQ_STABILITY_TASKS


def test_list_tasks_json_lists_all_of_msebs_names_with_dataset_and_main_metric() -> None:
    result = CliRunner().invoke(app, ["list", "tasks", "--json"])
    assert result.exit_code == 0, result.stderr
    rows = {r["name"]: r for r in json.loads(result.stdout)}
    for entry in MSEB_TASKS:
        row = rows[entry["name"]]
        assert row["dataset"] and row["main_score"]
        default = row["protocols"] if "unsupported" in row else [row["options"]["protocol"]]
        assert default == ["mseb"]  # MSEB's protocol is the default
    brain = rows["HuthLabBrainEncoding"]
    assert "fMRI" in brain["unsupported"] and brain["main_score"] == "MeanCorrelation"
    assert "image input" in rows["Flickr8kEnImageRetrieval"]["unsupported"]


def test_an_unsupported_mseb_task_is_refused_with_its_reason() -> None:
    result = CliRunner().invoke(
        app, ["evaluate", "--task", "SpokenCocoEnSpeechRetrieval", "--model", "log-mel"]
    )
    assert result.exit_code != 0
    assert "image input" in result.stderr and "MSEB 1.0.0 SpeechRetrieval" in result.stderr


# ---------------------------------------------------------------- the readers, per locale


def _wav(k: int) -> bytes:
    import soundfile as sf

    buffer = io.BytesIO()
    t = np.arange(8000) / 16000
    sf.write(buffer, 0.3 * np.sin(2 * np.pi * (180 + 40 * k) * t), 16000, format="WAV")
    return buffer.getvalue()


UTTERANCES = [  # utt_id, locale, environment, transcript
    ("a1", "fi_fi", "clean", "missä on lähin asema"),
    ("a2", "fi_fi", "traffic_noise", "mikä on suomen pääkaupunki"),
    ("a3", "en_us", "clean", "where is the station"),
    ("a4", "fi_fi", "clean", "kuka kirjoitti kalevalan"),
]


def write_svq(root: Path) -> Path:
    """SVQ's layout: the index, one parquet shard of WAV bytes and the task files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    (root / "audio").mkdir(parents=True)
    waves = [_wav(k) for k in range(len(UTTERANCES))]
    pq.write_table(pa.table({"waveform": waves}), root / "audio" / "fi_0.parquet")
    index, transcripts, cross = [], [], []
    for row, (utt, locale, environment, text) in enumerate(UTTERANCES):
        where = {"utt_id": utt, "locale": locale}
        index.append(where | {"index": f"audio/fi_0:{row}", "environment": environment})
        index[-1]["text"] = text
        transcripts.append(where | {"text": text, "environment": environment})
        answer = "Helsinki" if utt == "a2" else "No Answer"
        spans = {"spans": ["Helsinki", "Turku"], "span": answer, "passage_text": "Helsinki."}
        cross.append(where | spans | {"page_title": "Finland"})
    for name, rows in (
        ("utt_index.jsonl", index),
        ("speech_transcription.jsonl", transcripts),
        ("span_reasoning_cross_lang.jsonl", cross),
    ):
        lines = (json.dumps(r, ensure_ascii=False) for r in rows)
        (root / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def test_a_locale_task_reads_only_its_locale(tmp_path: Path) -> None:
    root = write_svq(tmp_path / "svq")
    transcription = registry.tasks.get("SVQFiFiSpeechTranscription")(dataset_path=root)
    clips = transcription.load_data()
    assert [(c.id, c.subset, c.text) for c in clips] == [
        ("a1", "fi_fi", "missä on lähin asema"),
        ("a2", "fi_fi", "mikä on suomen pääkaupunki"),
        ("a4", "fi_fi", "kuka kirjoitti kalevalan"),
    ]
    assert clips[1].metadata["environment"] == "traffic_noise"
    reasoning = registry.tasks.get("SVQFiFiSpanCrossLangReasoning")(dataset_path=root)
    assert [(c.id, c.metadata["answer"]) for c in reasoning.load_data()] == [
        ("a1", "No Answer"),
        ("a2", "Helsinki"),
        ("a4", "No Answer"),
    ]
    stability = registry.tasks.get("SVQFiFiDiscreteStability")(dataset_path=root)
    assert [c.id for c in stability.load_data()] == ["a1", "a4"]  # clean only
    assert stability.options.representation == "discrete"  # type: ignore[attr-defined]


def test_a_locale_without_rows_is_an_error_naming_the_file(tmp_path: Path) -> None:
    from audiobench.sources import DatasetError

    root = write_svq(tmp_path / "svq")
    task = registry.tasks.get("SVQJaJpSpanCrossLangReasoning")(dataset_path=root)
    with pytest.raises(DatasetError, match=r"span_reasoning_cross_lang\.jsonl has no rows of "):
        task.load_data()


def test_a_non_english_transcription_task_runs_with_the_oracle(tmp_path: Path) -> None:
    root = write_svq(tmp_path / "svq")
    (result,) = audiobench.evaluate(
        "SVQFiFiSpeechTranscription",
        "transcript-truth",
        output_dir=tmp_path / "results",
        dataset=root,
        progress=False,
    )
    assert result.main_score == 0.0
    assert set(result.scores) == {"fi_fi"}
    assert set(result.scores["fi_fi"]["environments"]) == {"clean", "traffic_noise"}
    path = tmp_path / "results" / "transcript-truth" / "v1" / "SVQFiFiSpeechTranscription.json"
    parsed, problems = validate_file(path, allow_unpinned=True)
    assert parsed is not None and problems == []


def test_stability_and_cross_language_reasoning_run_offline(
    tmp_path: Path,
    tiny_clap: Path,  # noqa: F811
) -> None:
    root = write_svq(tmp_path / "svq")
    for name, model in (
        ("SVQFiFiContinuousStability", "log-mel"),
        ("SVQFiFiSpanCrossLangReasoning", f"hf:{tiny_clap}"),
    ):
        (result,) = audiobench.evaluate(
            name, model, output_dir=tmp_path / "out", dataset=root, progress=False
        )
        assert result.main_score is not None, name
        (path,) = (tmp_path / "out").glob(f"*/*/{name}.json")
        parsed, problems = validate_file(path, allow_unpinned=True)
        assert parsed is not None and problems == [], (name, problems)
