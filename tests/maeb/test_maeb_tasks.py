"""The 30 MAEB tasks read local copies laid out as their hub repositories, offline.

Each copy holds a few rows with the real column names, types and configurations of the
pinned dataset (as MTEB's task definitions read them); every task is loaded from its copy and
its clips checked. A few tasks are then evaluated end to end with the ``log-mel`` model, and
the audio–text ones with a small fake text-capable embedder.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import pytest
from threadpoolctl import threadpool_limits
from typer.testing import CliRunner

from audiobench import evaluate, registry
from audiobench.audio import Clip
from audiobench.benchmark import MEAN, get_benchmark
from audiobench.cli import app
from audiobench.hub_layouts import SUBSAMPLE_SEED, SUBSAMPLE_SIZE, TextOnly
from audiobench.models.baselines import LogMelEncoder
from audiobench.results import TaskResult
from tests.families.test_retrieval import FakeEmbedder, hashed_vector
from tests.maeb.hub_layout import audio, write_hub_dataset

MAEB_JSON = Path("/work/shared/peers/maeb_v1_tasks.json")

ClassLabel = datasets.ClassLabel


# ---------------------------------------------------------------------------- the copies


@dataclass
class Case:
    """How to write a task's local copy, and what loading it must give."""

    configs: dict[str, dict[str, list[dict[str, Any]]]]
    n_clips: int
    features: dict[str, dict[str, Any]] = field(default_factory=dict)
    subsets: tuple[str, ...] | None = None
    check: Callable[[list[Clip]], None] | None = None


def _labelled(
    label_column: str, labels: list[Any], audio_column: str = "audio", **extra: Any
) -> list[dict[str, Any]]:
    base = 200.0
    return [
        {audio_column: audio(base * (1 + 0.5 * hash(str(v)) % 7), i), label_column: v, **extra}
        for i, v in enumerate(labels)
    ]


def _tones(
    label_column: str, labels: list[Any], audio_column: str = "audio"
) -> list[dict[str, Any]]:
    """One clip per label, its pitch set by the label (so log-mel separates the classes)."""
    names = sorted({str(v) for v in labels})
    return [
        {audio_column: audio(250.0 * 2 ** names.index(str(v)), i), label_column: v}
        for i, v in enumerate(labels)
    ]


def _check_labels(expected: set[str]) -> Callable[[list[Clip]], None]:
    def check(clips: list[Clip]) -> None:
        assert {c.label for c in clips} == expected

    return check


def _cv_case(
    label_column: str = "label",
    audio_column: str = "audio",
    names: tuple[str, ...] = ("a", "b", "c"),
) -> Case:
    labels = [i % len(names) for i in range(12)]
    return Case(
        {"default": {"train": _tones(label_column, labels, audio_column)}},
        12,
        features={"default": {label_column: ClassLabel(names=list(names))}},
        check=_check_labels(set(names)),
    )


def _multi_config(
    configs: tuple[str, ...], label_column: str, labels: list[Any], feature: Any = None
) -> Case:
    def check(clips: list[Clip]) -> None:
        assert {c.subset for c in clips} == set(configs)
        assert all(c.id.startswith(f"{c.subset}/") for c in clips)

    return Case(
        {c: {"train": _tones(label_column, labels)} for c in configs},
        len(configs) * len(labels),
        features={c: {label_column: feature} for c in configs} if feature else {},
        subsets=configs,
        check=check,
    )


def _pairs_case() -> Case:
    rows = [
        {"audio1": audio(300, i), "audio2": audio(300 if i % 2 else 900, i + 50), "label": i % 2}
        for i in range(6)
    ]

    def check(clips: list[Clip]) -> None:
        assert [c.id for c in clips[:2]] == ["test:0-1", "test:0-2"]
        assert clips[0].metadata == {"pair": "test:0"} and clips[1].metadata == {"pair": "test:0"}
        assert [c.label for c in clips[::2]] == ["0", "1", "0", "1", "0", "1"]

    return Case({"default": {"test": rows}}, 12, check=check)


def _t2a_corpus_case() -> Case:
    corpus = [{"id": f"d{j}", "audio": audio(200.0 * (j + 1), j)} for j in range(4)]
    queries = [{"id": f"q{i}", "text": f"sound number {i}"} for i in range(5)]
    qrels = [{"query-id": f"q{i}", "corpus-id": f"d{i}", "score": 1} for i in range(4)]

    def check(clips: list[Clip]) -> None:
        docs = [c for c in clips if c.split == "corpus"]
        qs = [c for c in clips if c.split == "query"]
        assert [c.id for c in docs] == ["d0", "d1", "d2", "d3"]
        assert [c.id for c in qs] == ["query:q0", "query:q1", "query:q2", "query:q3"]  # q4 unjudged
        assert qs[2].metadata["relevant"] == ["d2"] and qs[2].text == "sound number 2"
        assert isinstance(qs[0].audio, TextOnly)

    return Case(
        {"corpus": {"test": corpus}, "queries": {"test": queries}, "default": {"test": qrels}},
        8,
        check=check,
    )


def _reranking_case() -> Case:
    corpus = [{"id": f"d{j}", "audio": audio(200.0 * (1 + j % 3), j)} for j in range(9)]
    queries = [{"id": f"q{i}", "audio": audio(200.0 * (1 + i), 100 + i)} for i in range(3)]
    qrels = [
        {"query-id": f"q{i}", "corpus-id": f"d{j}", "score": 1}
        for i in range(3)
        for j in range(9)
        if j % 3 == i
    ]
    top = [{"query-id": f"q{i}", "corpus-ids": [f"d{j}" for j in range(9)]} for i in range(3)]

    def check(clips: list[Clip]) -> None:
        q = next(c for c in clips if c.id == "query:q1")
        assert q.metadata["candidates"] == [f"d{j}" for j in range(9)]
        assert q.metadata["positives"] == ["d1", "d4", "d7"] and q.split == "query"

    return Case(
        {
            "corpus": {"test": corpus},
            "queries": {"test": queries},
            "default": {"test": qrels},
            "top_ranked": {"test": top},
        },
        12,
        check=check,
    )


def _clotho_case() -> Case:
    rows = [
        {
            "index": 10 + i,
            "audio": audio(300.0 * (i + 1), i),
            "text": f"A sound {i}. Another caption {i}.",
        }
        for i in range(3)
    ]

    def check(clips: list[Clip]) -> None:
        assert [c.id for c in clips] == ["10", "11", "12"]
        assert clips[0].text == "A sound 0. Another caption 0."

    return Case({"default": {"test": rows}}, 3, check=check)


def _speech_t2a_case(
    configs: tuple[str, ...], id_column: str, text_column: str, ids: list[Any]
) -> Case:
    rows = [
        {id_column: v, text_column: f"sentence {k}", "audio": audio(300.0 + 40 * k, k)}
        for k, v in enumerate(ids)
    ]

    def check(clips: list[Clip]) -> None:
        assert {c.subset for c in clips} == set(configs)
        first = [c for c in clips if c.subset == configs[0]]
        expected = [f"{configs[0]}/{v}" for v in ids]
        if len(set(ids)) < len(ids):  # a repeated id is made unique
            expected[-1] += "#2"
        assert [c.id for c in first] == expected
        assert first[0].text == "sentence 0"

    return Case(
        {c: {"test": rows} for c in configs}, len(configs) * len(ids), subsets=configs, check=check
    )


def _jam_alt_case(*, lyric: bool) -> Case:
    rows = []
    for k in range(8):
        rows.append(
            {
                "audio": audio(220.0 * (1 + k % 2), k),
                "artist": f"artist{k % 2}",
                "text": f"la la {k % 3}",
                "song_language": ("en", "fr", "xx")[k % 3] if k < 6 else "en",
                "song_name": f"song{k % 4}",
                "line_indices": [k, k + 1],
            }
        )

    def check(clips: list[Clip]) -> None:
        assert {c.subset for c in clips} == {"en", "fr"}  # "xx" is not a MAEB language
        assert clips[0].id == "song00" and clips[0].label == ("la la 0" if lyric else "artist0")

    return Case({"pure": {"test": rows}}, 6, check=check)


def _zero_shot_case(label_column: str, n_classes: int, split: str, feature: Any = None) -> Case:
    rows = [
        {"audio": audio(200.0 * (1 + k), k), label_column: k % n_classes}
        for k in range(2 * n_classes)
    ]
    return Case(
        {"default": {split: rows}},
        2 * n_classes,
        features={"default": {label_column: feature}} if feature else {},
    )


def _zero_shot_check(classes: tuple[str, ...]) -> Callable[[list[Clip]], None]:
    def check(clips: list[Clip]) -> None:
        assert [c.label for c in clips[: len(classes)]] == list(classes)

    return check


CASES: dict[str, Callable[[], Case]] = {
    # retrieval
    "ClothoT2ARetrieval": _clotho_case,
    "CommonVoiceMini21T2ARetrieval": lambda: _speech_t2a_case(
        ("en", "fr"), "path", "sentence", ["common_voice_en_1.mp3", "common_voice_en_2.mp3"]
    ),
    "FleursT2ARetrieval": lambda: _speech_t2a_case(
        ("en_us", "fr_fr"), "id", "transcription", [1901, 1902, 1901]
    ),
    "GigaSpeechT2ARetrieval": _t2a_corpus_case,
    "JamAltArtistA2ARetrieval": lambda: _jam_alt_case(lyric=False),
    "JamAltLyricA2TRetrieval": lambda: _jam_alt_case(lyric=True),
    "MACST2ARetrieval": _t2a_corpus_case,
    "SpokenSQuADT2ARetrieval": _t2a_corpus_case,
    "UrbanSound8KT2ARetrieval": _t2a_corpus_case,
    # classification
    "BeijingOpera": lambda: _cv_case(names=("Bangu", "Daluo", "Naobo", "Xiaoluo")),
    "BirdCLEF": lambda: Case(
        {
            "default": {
                "train": _tones("primary_label", ["grekis", "compau", "trokin"] * 4, "recording")
            }
        },
        12,
        check=_check_labels({"grekis", "compau", "trokin"}),
    ),
    "CREMA_D": lambda: _cv_case(names=("anger", "disgust", "fear", "happy", "neutral", "sad")),
    "CommonLanguageAgeDetection": lambda: Case(
        {
            "default": {
                "train": _tones("age", ["teens", "twenties", "eighties", "thirties"] * 3),
                "test": _tones("age", ["teens", "twenties", "not_defined", "thirties"] * 2),
            }
        },
        15,
        check=_check_labels({"teens", "twenties", "thirties"}),
    ),
    "GTZANGenre": lambda: _cv_case(names=("blues", "classical", "country")),
    "IEMOCAPGender": lambda: Case(
        {"default": {"train": _tones("gender", ["Female", "Male"] * 4)}},
        8,
        check=_check_labels({"0", "1"}),
    ),
    "MInDS14": lambda: _multi_config(
        ("en-GB", "fr-FR"),
        "intent_class",
        [0, 1, 2] * 2,
        ClassLabel(names=["abroad", "address", "app_error"]),
    ),
    "MridinghamTonic": lambda: _cv_case(names=("B", "C", "C#")),
    "SIBFLEURS": lambda: _multi_config(
        ("afr_Latn", "eng_Latn"), "category", ["science", "sports", "travel"] * 2
    ),
    "VoxCelebSA": lambda: Case(
        {
            "default": {
                "test": _tones("label", ["Positive", "Neutral", "Negative", "Disagreement"] * 3)
            }
        },
        9,
        check=lambda clips: (
            _check_labels({"Positive", "Neutral", "Negative"})(clips),
            {c.split for c in clips} == {"train"} or pytest.fail("split"),
        ),
    ),
    "VoxPopuliLanguageID": lambda: Case(
        {
            "default": {
                "train": [
                    *_tones("language", ["en", "de", "fr"] * 3),
                    {"audio": audio(300, 99, seconds=0.02), "language": "en"},  # 320 samples
                ]
            }
        },
        9,
    ),
    "FSD2019Kaggle": lambda: Case(
        {
            "curated": {
                "train": [
                    {
                        "audio": audio(200.0 * (1 + k % 3), k),
                        "sound": [["Bark"], ["Bark", "Walk"], ["Walk"]][k % 3],
                    }
                    for k in range(9)
                ],
                "test": [
                    {
                        "audio": audio(200.0 * (1 + k % 3), 50 + k),
                        "sound": [["Bark"], ["Bark", "Walk"], ["Walk"]][k % 3],
                    }
                    for k in range(3)
                ],
            }
        },
        12,
        subsets=("curated",),
        check=_check_labels({"Bark", "Bark,Walk", "Walk"}),
    ),
    # clustering
    "CREMA_DClustering": lambda: _cv_case(names=("anger", "happy", "sad")),
    "VehicleSoundClustering": lambda: Case(
        {"default": {"test": _tones("label", [0, 1, 2] * 4)}},
        12,
        features={"default": {"label": ClassLabel(names=["car", "truck", "motorcycle"])}},
        check=_check_labels({"car", "truck", "motorcycle"}),
    ),
    "VoxPopuliGenderClustering": lambda: Case(
        {"default": {"train": _tones("gender", ["female", "male"] * 5)}},
        10,
        check=_check_labels({"0", "1"}),
    ),
    # pairs
    "CREMADPairClassification": _pairs_case,
    "NMSQAPairClassification": _pairs_case,
    "VoxPopuliAccentPairClassification": _pairs_case,
    # reranking
    "GTZANAudioReranking": _reranking_case,
    # zero-shot
    "RavdessZeroshot": lambda: Case(
        _zero_shot_case("labels", 8, "train").configs,
        16,
        check=_zero_shot_check(
            tuple(
                f"this person is feeling {e}"
                for e in (
                    "neutral",
                    "calm",
                    "happy",
                    "sad",
                    "angry",
                    "fearful",
                    "disgust",
                    "surprised",
                )
            )
        ),
    ),
    "SpeechCommandsZeroshotv0.02": lambda: Case(
        _zero_shot_case("label", 10, "test").configs,
        20,
        features={
            "default": {
                "label": ClassLabel(
                    names=["yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go"]
                )
            }
        },
        check=_zero_shot_check(
            ("Yes", "No", "Up", "Down", "Left", "Right", "On", "Off", "Stop", "Go")
        ),
    ),
}

MAEB_NAMES = (
    [t["name"] for t in json.loads(MAEB_JSON.read_text())] if MAEB_JSON.exists() else sorted(CASES)
)


@pytest.fixture(autouse=True)
def one_openmp_thread() -> Iterator[None]:
    with threadpool_limits(1):
        yield


def _unique(tmp_path: Path, name: str) -> Path:
    """A folder whose name no other test, or earlier session, uses.

    ``datasets`` caches a local copy by its folder's name and files; a name used before
    (another test's copy) could be served from that cache.
    """
    digest = hashlib.sha1(str(tmp_path).encode()).hexdigest()[:12]
    return tmp_path / f"{name.replace('.', '_')}-{digest}"


def _copy(name: str, tmp_path: Path) -> tuple[Path, Case]:
    case = CASES[name]()
    root = write_hub_dataset(_unique(tmp_path, name), case.configs, case.features)
    return root, case


def _task(name: str, root: Path, case: Case, **options: Any) -> Any:
    cls = registry.tasks.get(name)
    return cls(dataset_path=root, subsets=case.subsets, options=options)


# ---------------------------------------------------------------------------- declarations


def test_every_maeb_task_is_declared_as_the_reference_pins_it() -> None:
    assert set(CASES) == set(MAEB_NAMES) and len(CASES) == 30
    if not MAEB_JSON.exists():
        pytest.skip("no MAEB task list on this machine")
    for entry in json.loads(MAEB_JSON.read_text()):
        meta = registry.tasks.get(entry["name"]).metadata
        assert meta.name == entry["name"]
        assert (meta.dataset.path, meta.dataset.revision) == (entry["path"], entry["revision"])
        assert meta.main_score == entry["main"]
        assert meta.splits[-1] == entry["splits"][-1] or entry["name"] == "FSD2019Kaggle"
        label = entry.get("label_column_name")
        if label and entry["type"] not in ("AudioPairClassification",):
            declared = meta.columns.label or registry.tasks.get(entry["name"]).hub.label_column
            renamed = {"IEMOCAPGender": "gender", "VoxPopuliGenderClustering": "gender"}
            assert declared == renamed.get(entry["name"], label)


def test_list_tasks_json_shows_every_maeb_task_with_its_pin() -> None:
    result = CliRunner().invoke(app, ["list", "tasks", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.output)}
    for name in MAEB_NAMES:
        assert rows[name]["dataset"].startswith("mteb/") and len(rows[name]["revision"]) == 40
        assert rows[name]["options"]["protocol"] == "mteb"


# ---------------------------------------------------------------------------- loading


@pytest.mark.parametrize("name", sorted(CASES))
def test_task_loads_its_hub_layout_copy(name: str, tmp_path: Path) -> None:
    root, case = _copy(name, tmp_path)
    task = _task(name, root, case)
    clips = task.load_data()
    assert len(clips) == case.n_clips
    assert len({c.id for c in clips}) == len(clips)
    if case.check is not None:
        case.check(clips)
    if task.metadata.subsets:
        assert {c.subset for c in clips} <= set(task.metadata.subsets)
    assert task.allow_duplicates


def test_subsampling_draws_the_rows_the_reference_draws(tmp_path: Path) -> None:
    """CommonLanguageAgeDetection's test split is cut to 2,048 rows as datasets cuts it."""
    n = SUBSAMPLE_SIZE + 90
    ages = ["teens", "twenties", "thirties", "fourties", "fifties"]
    rng = np.random.default_rng(3)
    tiny = audio(300, 0, seconds=0.001)["bytes"]
    test = [
        {"audio": {"bytes": tiny, "path": f"{k}.wav"}, "age": ages[int(rng.integers(5))], "row": k}
        for k in range(n)
    ]
    train = [{"audio": {"bytes": tiny, "path": "t.wav"}, "age": a, "row": -1} for a in ages]
    root = write_hub_dataset(_unique(tmp_path, "cl"), {"default": {"train": train, "test": test}})
    cls = registry.tasks.get("CommonLanguageAgeDetection")
    task = cls(dataset_path=root)
    clips = [c for c in task.load_data() if c.split == "test"]
    # The reference: cast the label to ClassLabel (names sorted), then train_test_split.
    ds = datasets.load_dataset(str(root), split="test")
    ds = ds.cast_column("age", ClassLabel(names=sorted(ages)))
    drawn = ds.train_test_split(
        test_size=SUBSAMPLE_SIZE, seed=SUBSAMPLE_SEED, stratify_by_column="age"
    )
    expected = drawn["test"]["row"]
    assert len(clips) == SUBSAMPLE_SIZE
    rows = [c.audio.dataset[c.audio.row][c.audio.column]["path"] for c in clips]  # type: ignore[attr-defined]
    assert rows == [f"{k}.wav" for k in expected]


# ---------------------------------------------------------------------------- evaluation


def _run(name: str, tmp_path: Path, **settings: Any) -> TaskResult:
    root, case = _copy(name, tmp_path)
    (result,) = evaluate(
        _task(name, root, case, **settings.pop("options", {})),
        "log-mel",
        output_dir=tmp_path / "out",
        cache_dir=tmp_path / "cache",
        pooling="mean_time",
        progress=False,
        count_flops=False,
        **settings,
    )
    return result


@pytest.mark.parametrize(
    ("name", "expect"),
    [
        ("BeijingOpera", {"accuracy": 1.0}),
        ("CREMADPairClassification", {"max_ap": 1.0}),
        ("VehicleSoundClustering", {"v_measure": 1.0}),
        ("GTZANAudioReranking", {"map_at_1000": 1.0}),
        ("JamAltArtistA2ARetrieval", {"hit_rate_at_1": 1.0}),
    ],
)
def test_audio_tasks_run_end_to_end_with_log_mel(
    name: str, expect: dict[str, float], tmp_path: Path
) -> None:
    result = _run(name, tmp_path)
    summary = result.aggregates.get("mean") or next(iter(result.scores.values()))
    assert {k: summary[k] for k in expect} == pytest.approx(expect)
    cls = registry.tasks.get(name)
    assert cls.score_problems(result.scores) == [] and cls.score_problems(result.aggregates) == []
    assert result.main_score is not None and result.run is not None
    assert result.run.task_options["protocol"] == "mteb"
    assert result.details["protocol"]["name"] == "mteb"


def test_audiobench_protocol_stays_available_on_a_maeb_task(tmp_path: Path) -> None:
    result = _run("CREMADPairClassification", tmp_path, options={"protocol": "audiobench"})
    report = result.scores["default"]
    assert report["cosine"]["accuracy_threshold"] is not None  # audiobench's richer report
    assert result.main_score == report["max_ap"]


def test_text_tasks_refuse_an_audio_only_model() -> None:
    text_tasks = [n for n in MAEB_NAMES if n in (
        "ClothoT2ARetrieval", "CommonVoiceMini21T2ARetrieval", "FleursT2ARetrieval",
        "GigaSpeechT2ARetrieval", "JamAltLyricA2TRetrieval", "MACST2ARetrieval",
        "SpokenSQuADT2ARetrieval", "UrbanSound8KT2ARetrieval", "RavdessZeroshot",
        "SpeechCommandsZeroshotv0.02",
    )]  # fmt: skip
    assert len(text_tasks) == 10
    for name in text_tasks:
        with pytest.raises(ValueError, match="has no text encoder"):
            registry.tasks.get(name).check_encoder(LogMelEncoder())
    for name in set(MAEB_NAMES) - set(text_tasks):
        registry.tasks.get(name).check_encoder(LogMelEncoder())


def _fake(clips: list[Clip], text: Callable[[str], list[float]]) -> FakeEmbedder:
    """Audio vectors that agree with ``text`` on each clip's own text (or label)."""
    vectors = {
        c.id: text(c.text if c.text is not None else str(c.label))
        for c in clips
        if c.split != "query"
    }
    return FakeEmbedder(vectors, text)


def test_clotho_text_to_audio_splits_captions_as_the_reference(tmp_path: Path) -> None:
    root, case = _copy("ClothoT2ARetrieval", tmp_path)
    task = _task("ClothoT2ARetrieval", root, case)
    clips = task.load_data()
    fake = _fake(clips, lambda t: hashed_vector(t.split(".")[0].strip() or "<empty>"))
    scores = task.evaluate(fake, clips)
    report = scores.scores["default"]
    # "A sound 0. Another caption 0." gives 3 queries: two captions and the empty tail.
    assert report["n_samples"] == 9
    texts = sorted(t for call in fake.text_calls for t in call)
    assert texts == sorted(
        [
            "",
            " Another caption 0",
            " Another caption 1",
            " Another caption 2",
            "A sound 0",
            "A sound 1",
            "A sound 2",
        ]
    )
    assert scores.main_score == report["hit_rate_at_5"] == 1.0  # 3 clips: all in the top 5


def test_zero_shot_uses_the_candidate_texts_verbatim(tmp_path: Path) -> None:
    root, case = _copy("RavdessZeroshot", tmp_path)
    task = _task("RavdessZeroshot", root, case)
    clips = task.load_data()
    fake = _fake(clips, hashed_vector)
    scores = task.evaluate(fake, clips)
    assert scores.main_score == 1.0
    assert fake.text_calls[0][0] == "this person is feeling neutral"
    assert scores.details["protocol"]["name"] == "mteb"


def test_lyrics_retrieval_counts_every_line_with_the_same_text(tmp_path: Path) -> None:
    root, case = _copy("JamAltLyricA2TRetrieval", tmp_path)
    task = _task("JamAltLyricA2TRetrieval", root, case)
    clips = task.load_data()
    fake = _fake(clips, hashed_vector)
    scores = task.evaluate(fake, clips)
    assert scores.scores["en"]["ndcg_at_10"] == 1.0 and scores.main_score == 1.0
    assert set(scores.aggregates["mean"]["subsets"]) == {"en", "fr"}


# ---------------------------------------------------------------------------- benchmarks


def test_maeb_benchmarks_rank_by_the_mean_of_main_scores() -> None:
    maeb, audio_only = get_benchmark("MAEB"), get_benchmark("MAEB-audio-only")
    assert set(maeb.tasks) == set(MAEB_NAMES)
    assert len(audio_only.tasks) == 19 and set(audio_only.tasks) < set(maeb.tasks)
    assert maeb.rank_by == (MEAN,) and set(maeb.mean_of) == set(maeb.tasks)
    for name in audio_only.tasks:
        registry.tasks.get(name).check_encoder(LogMelEncoder())  # no text tower needed
