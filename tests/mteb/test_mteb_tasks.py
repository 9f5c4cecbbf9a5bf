"""MTEB's audio tasks outside MAEB read local copies laid out as their hub repositories, offline.

Each copy holds a few generated rows with the columns, configurations and splits MTEB's task
definitions read; each family's tasks are loaded from them and scored end to end under
``protocol="mteb"`` (audio-only tasks with the ``log-mel`` model, audio–text ones with a small
fake text-capable embedder whose vectors make every answer right, so a wrong pairing of
queries and documents shows as a score below 1).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import datasets
import pytest
from threadpoolctl import threadpool_limits

from audiobench import evaluate, registry
from audiobench.audio import Clip
from audiobench.hub_layouts import TextOnly
from audiobench.results import TaskResult
from audiobench.sources import DatasetError
from audiobench.task import TaskScores
from tests.families.test_retrieval import FakeEmbedder, hashed_vector
from tests.maeb.hub_layout import audio, write_hub_dataset

ClassLabel = datasets.ClassLabel
Configs = Mapping[str, Mapping[str, Sequence[Mapping[str, Any]]]]


@pytest.fixture(autouse=True)
def one_openmp_thread() -> Iterator[None]:
    with threadpool_limits(1):
        yield


def _copy(tmp_path: Path, name: str, configs: Configs, features: Any = None) -> Path:
    # A folder name no other test uses: ``datasets`` caches a local copy by its folder's name.
    digest = hashlib.sha1(str(tmp_path).encode()).hexdigest()[:12]
    return write_hub_dataset(tmp_path / f"{name.replace('.', '_')}-{digest}", configs, features)


def _task(name: str, root: Path, subsets: Sequence[str] | None = None, **options: Any) -> Any:
    return registry.tasks.get(name)(dataset_path=root, subsets=subsets, options=options)


def _tones(label_column: str, labels: Sequence[Any], audio_column: str = "audio", seed: int = 0):
    """One clip per label, its pitch set by the label (so log-mel separates the classes)."""
    names = sorted({str(v) for v in labels})
    return [
        {audio_column: audio(250.0 * 2 ** names.index(str(v)), seed + i), label_column: v}
        for i, v in enumerate(labels)
    ]


def _log_mel(task: Any, tmp_path: Path) -> TaskResult:
    (result,) = evaluate(
        task,
        "log-mel",
        output_dir=tmp_path / "out",
        cache_dir=tmp_path / "cache",
        pooling="mean_time",
        progress=False,
        count_flops=False,
    )
    assert result.run is not None and result.run.task_options["protocol"] == "mteb"
    assert result.details["protocol"]["name"] == "mteb"
    cls = type(task)
    assert cls.score_problems(result.scores) == [] and cls.score_problems(result.aggregates) == []
    return result


def _summary(result: TaskResult | TaskScores) -> dict[str, Any]:
    return dict(result.aggregates.get("mean") or next(iter(result.scores.values())))


# ---------------------------------------------------------------------------- classification


def test_cross_validated_classification_runs_end_to_end(tmp_path: Path) -> None:
    rows = _tones("label", [0, 1, 2] * 4)
    root = _copy(tmp_path, "AESDD", {"default": {"train": rows}},
                 {"default": {"label": ClassLabel(names=["anger", "fear", "joy"])}})  # fmt: skip
    result = _log_mel(_task("AESDD", root), tmp_path)
    assert _summary(result)["accuracy"] == 1.0 and result.main_score == 1.0
    assert result.details["splits"]["default"]["method"] == "cross_validation"


def test_train_test_classification_scores_the_test_split(tmp_path: Path) -> None:
    train, test = _tones("label", ["1", "2", "3"] * 4), _tones("label", ["1", "2", "3"], seed=50)
    root = _copy(tmp_path, "FSDD", {"default": {"train": train, "test": test}})
    result = _log_mel(_task("FSDD", root), tmp_path)
    assert _summary(result)["accuracy"] == 1.0 and _summary(result)["n_samples"] == 3
    assert result.details["splits"]["default"]["evaluated_split"] == "test"


def test_a_hub_split_is_read_under_the_name_the_reference_gives_it(tmp_path: Path) -> None:
    # VocalSound trains on the hub's "val" split; SpokenQAForIC cross-validates "test".
    val, test = _tones("answer", ["cough", "laugh"] * 3), _tones("answer", ["cough", "laugh"])
    root = _copy(tmp_path, "VocalSound", {"default": {"val": val, "test": test}})
    clips = _task("VocalSound", root).load_data()
    assert [c.split for c in clips] == ["train"] * 6 + ["test"] * 2
    root = _copy(tmp_path, "SpokenQAForIC", {"default": {"test": _tones("label", [0, 1] * 3)}})
    assert {c.split for c in _task("SpokenQAForIC", root).load_data()} == {"train"}


def test_gender_labels_are_renamed_to_the_references_ids(tmp_path: Path) -> None:
    root = _copy(tmp_path, "VoxPopuliGenderID",
                 {"default": {"train": _tones("gender", ["female", "male"] * 3)}})  # fmt: skip
    assert [c.label for c in _task("VoxPopuliGenderID", root).load_data()] == ["0", "1"] * 3


def test_multilabel_classification_runs_end_to_end(tmp_path: Path) -> None:
    sets = [["Bark"], ["Bark", "Walk"], ["Walk"]]
    rows = {
        split: [{"audio": audio(200.0 * (1 + k % 3), seed + k), "labels": sets[k % 3]}
                for k in range(n)]
        for split, n, seed in (("train", 24, 0), ("test", 6, 100))
    }  # fmt: skip
    root = _copy(tmp_path, "FSD50K_mteb", {"default": rows})
    task = _task("FSD50K.mteb", root)
    assert {c.label for c in task.load_data()} == {"Bark", "Bark,Walk", "Walk"}
    result = _log_mel(task, tmp_path)
    summary = _summary(result)
    assert result.main_score == summary["lrap"] and 0.0 < summary["lrap"] <= 1.0


# ---------------------------------------------------------------------------- clustering


def test_clustering_runs_end_to_end(tmp_path: Path) -> None:
    rows = _tones("label", ["blues", "jazz", "rock"] * 4)
    root = _copy(tmp_path, "GTZANGenreClustering", {"default": {"train": rows}})
    result = _log_mel(_task("GTZANGenreClustering", root), tmp_path)
    assert _summary(result)["v_measure"] == pytest.approx(1.0)


def test_voxceleb_clustering_drops_and_numbers_labels_as_the_reference(tmp_path: Path) -> None:
    labels = ["Negative", "Neutral", "Positive", "Disagreement", "<mixed>"] * 2
    root = _copy(tmp_path, "VoxCelebClustering", {"default": {"test": _tones("label", labels)}})
    clips = _task("VoxCelebClustering", root).load_data()
    assert [c.label for c in clips] == ["0", "1", "2"] * 2


def test_a_task_reads_its_hub_configuration(tmp_path: Path) -> None:
    rows = _tones("label", ["dog", "cat"] * 2)
    root = _copy(tmp_path, "VimSketch", {"clustering": {"test": rows}})
    assert len(_task("VimSketchImitationClustering", root).load_data()) == 4


# ---------------------------------------------------------------------------- pairs, reranking


def test_pair_classification_runs_end_to_end(tmp_path: Path) -> None:
    rows = [
        {"audio1": audio(300, i), "audio2": audio(300 if i % 2 else 900, i + 50), "label": i % 2}
        for i in range(6)
    ]
    root = _copy(tmp_path, "ESC50PairClassification", {"default": {"test": rows}})
    result = _log_mel(_task("ESC50PairClassification", root), tmp_path)
    assert _summary(result)["max_ap"] == 1.0


def test_audio_reranking_runs_end_to_end(tmp_path: Path) -> None:
    corpus = [{"id": f"d{j}", "audio": audio(200.0 * (1 + j % 3), j)} for j in range(9)]
    queries = [{"id": f"q{i}", "audio": audio(200.0 * (1 + i), 100 + i)} for i in range(3)]
    qrels = [{"query-id": f"q{i}", "corpus-id": f"d{j}", "score": 1}
             for i in range(3) for j in range(9) if j % 3 == i]  # fmt: skip
    top = [{"query-id": f"q{i}", "corpus-ids": [f"d{j}" for j in range(9)]} for i in range(3)]
    configs = {"corpus": {"test": corpus}, "queries": {"test": queries},
               "default": {"test": qrels}, "top_ranked": {"test": top}}  # fmt: skip
    root = _copy(tmp_path, "ESC50AudioReranking", configs)
    result = _log_mel(_task("ESC50AudioReranking", root), tmp_path)
    assert _summary(result)["map_at_1000"] == 1.0


# ---------------------------------------------------------------------------- zero-shot


def _labelled_fake(clips: Sequence[Clip]) -> FakeEmbedder:
    """Each clip's audio vector is its label's text vector: every answer is right."""
    return FakeEmbedder({c.id: hashed_vector(str(c.label)) for c in clips}, hashed_vector)


def test_zero_shot_uses_the_references_candidate_texts(tmp_path: Path) -> None:
    rows = [{"audio": audio(200.0 * (1 + k), k), "target": k} for k in range(5)]
    root = _copy(tmp_path, "ESC50_Zeroshot", {"default": {"train": rows}})
    task = _task("ESC50_Zeroshot", root)
    clips = task.load_data()
    assert (
        clips[0].label == "This is a sound of dog" and clips[4].label == "This is a sound of frog"
    )
    fake = _labelled_fake(clips)
    scores = task.evaluate(fake, clips)
    assert scores.main_score == 1.0 and len(fake.text_calls[0]) == 50
    # As the reference embeds them: "sea_waves", not "sea waves".
    assert fake.text_calls[0][11] == "This is a sound of sea_waves"
    assert scores.details["protocol"]["prompts"]["This is a sound of sea_waves"] == (
        "This is a sound of sea_waves"
    )


# ---------------------------------------------------------------------------- retrieval


def _corpus_layout(docs: list[dict[str, Any]], queries: list[dict[str, Any]]) -> Configs:
    qrels = [{"query-id": q["id"], "corpus-id": f"d{q['id'][1:]}", "score": 1} for q in queries]
    return {"corpus": {"test": docs}, "queries": {"test": queries}, "default": {"test": qrels}}


def test_text_to_audio_retrieval_in_the_corpus_layout(tmp_path: Path) -> None:
    docs = [{"id": f"d{j}", "audio": audio(200.0 * (j + 1), j)} for j in range(6)]
    queries = [{"id": f"q{i}", "text": f"caption {i}"} for i in range(6)]
    root = _copy(tmp_path, "AudioCapsT2A", _corpus_layout(docs, queries))
    task = _task("AudioCapsT2ARetrieval", root)
    clips = task.load_data()
    fake = FakeEmbedder({f"d{j}": hashed_vector(f"caption {j}") for j in range(6)}, hashed_vector)
    scores = task.evaluate(fake, clips)
    assert scores.main_score == _summary(scores)["hit_rate_at_5"] == 1.0
    assert _summary(scores)["hit_rate_at_1"] == 1.0


def test_audio_to_text_retrieval_reads_a_text_corpus(tmp_path: Path) -> None:
    docs = [{"id": f"d{j}", "text": f"caption {j}"} for j in range(6)]
    queries = [{"id": f"q{i}", "audio": audio(200.0 * (i + 1), i)} for i in range(6)]
    root = _copy(tmp_path, "AudioCapsA2T", _corpus_layout(docs, queries))
    task = _task("AudioCapsA2TRetrieval", root)
    clips = task.load_data()
    documents = [c for c in clips if c.split == "corpus"]
    assert [c.text for c in documents] == [f"caption {j}" for j in range(6)]
    assert all(isinstance(c.audio, TextOnly) for c in documents)
    query = next(c for c in clips if c.id == "query:q2")
    assert query.metadata["relevant"] == ["d2"] and not isinstance(query.audio, TextOnly)
    fake = FakeEmbedder({f"query:q{i}": hashed_vector(f"caption {i}") for i in range(6)},
                        hashed_vector)  # fmt: skip
    scores = task.evaluate(fake, clips)
    assert _summary(scores)["hit_rate_at_1"] == 1.0 and scores.main_score == 1.0
    assert sorted(fake.text_calls[0]) == [f"caption {j}" for j in range(6)]


def test_a_text_corpus_with_titles_is_refused(tmp_path: Path) -> None:
    docs = [{"id": f"d{j}", "text": f"caption {j}", "title": "a title"} for j in range(2)]
    queries = [{"id": f"q{i}", "audio": audio(300.0, i)} for i in range(2)]
    root = _copy(tmp_path, "MusicCapsA2T", _corpus_layout(docs, queries))
    with pytest.raises(DatasetError, match="'title' column"):
        _task("MusicCapsA2TRetrieval", root).load_data()


def test_audio_to_audio_retrieval_runs_end_to_end(tmp_path: Path) -> None:
    docs = [{"id": f"d{j}", "audio": audio(250.0 * 2**j, j)} for j in range(4)]
    queries = [{"id": f"q{i}", "audio": audio(250.0 * 2**i, 100 + i)} for i in range(4)]
    root = _copy(tmp_path, "VimSketchA2A", _corpus_layout(docs, queries))
    result = _log_mel(_task("VimSketchA2ARetrieval", root), tmp_path)
    assert _summary(result)["ndcg_at_10"] == 1.0 and _summary(result)["n_samples"] == 4


def _paired_fake(clips: Sequence[Clip]) -> FakeEmbedder:
    """Each clip's audio vector is its own text's vector."""
    return FakeEmbedder({c.id: hashed_vector(str(c.text)) for c in clips}, hashed_vector)


def test_common_voice_audio_to_text_reads_each_language(tmp_path: Path) -> None:
    rows = [{"path": f"cv_{k}.mp3", "sentence": f"sentence {k}", "audio": audio(300.0 + 40 * k, k)}
            for k in range(4)]  # fmt: skip
    root = _copy(tmp_path, "CV17", {"en": {"test": rows}, "fr": {"test": rows}})
    task = _task("CommonVoiceMini17A2TRetrieval", root, subsets=("en", "fr"))
    clips = task.load_data()
    assert {c.subset for c in clips} == {"en", "fr"} and clips[0].id == "en/cv_0.mp3"
    scores = task.evaluate(_paired_fake(clips), clips)
    assert set(scores.aggregates["mean"]["subsets"]) == {"en", "fr"}
    assert scores.main_score == 1.0


def test_google_svq_reads_locales_from_a_column(tmp_path: Path) -> None:
    rows = [
        {"utt_id": f"u{k}", "text": f"question {k}", "waveform": audio(300.0 + 40 * k, k),
         "locale": ("en_us", "ja_jp", "xx_yy")[k % 3]}
        for k in range(6)
    ]  # fmt: skip
    root = _copy(tmp_path, "SVQ", {"audio": {"test": rows}})
    task = _task("GoogleSVQT2ARetrieval", root, subsets=("en_us", "ja_jp"))
    clips = task.load_data()
    assert [c.subset for c in clips] == ["en_us", "ja_jp"] * 2  # "xx_yy" is not an SVQ locale
    scores = task.evaluate(_paired_fake(clips), clips)
    assert scores.main_score == 1.0


def test_fgmcaps_pairs_each_clip_with_its_caption(tmp_path: Path) -> None:
    rows = [{"id": f"m{k}", "caption": f"in {k} flat", "audio": audio(220.0 * (k + 1), k)}
            for k in range(3)]  # fmt: skip
    root = _copy(tmp_path, "FGMCaps", {"default": {"test": rows}})
    task = _task("FGMCapsT2ARetrieval", root)
    clips = task.load_data()
    assert [(c.id, c.text) for c in clips] == [(f"m{k}", f"in {k} flat") for k in range(3)]
    scores = task.evaluate(_paired_fake(clips), clips)
    assert scores.main_score == _summary(scores)["recall_at_10"] == 1.0


def test_lyrics_text_to_audio_counts_every_line_with_the_same_text(tmp_path: Path) -> None:
    rows = [
        {"audio": audio(220.0 * (1 + k % 3), k), "artist": "a", "text": f"la la {k % 3}",
         "song_language": "en", "song_name": f"song{k}", "line_indices": [k]}
        for k in range(6)
    ]  # fmt: skip
    root = _copy(tmp_path, "JamAlt", {"pure": {"test": rows}})
    task = _task("JamAltLyricT2ARetrieval", root, subsets=("en",))
    clips = task.load_data()
    assert clips[0].id == "song00" and clips[0].label == "la la 0"
    scores = task.evaluate(_paired_fake(clips), clips)
    assert scores.scores["en"]["ndcg_at_10"] == 1.0
