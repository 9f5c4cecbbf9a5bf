"""The classification family: probes on frozen embeddings, splits, scores, real tasks, CLI."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

import audiobench
from audiobench import registry
from audiobench.audio import Clip, FileAudioRef
from audiobench.benchmark import get_benchmark
from audiobench.cli import app
from audiobench.encoder import OutputKind
from audiobench.families import ClassificationTask
from audiobench.leaderboard.validate import validate_file
from audiobench.probes import GroupLeakError, MissingClassError
from audiobench.results import load_result
from audiobench.runner import ProgressBar
from audiobench.task import DatasetSource, Embedder, TaskFamily, TaskMetadata
from tests.hub_copy import write_hub_like

ALL_PROBES = ("linear", "knn", "mlp", "attentive", "protobin")

# ---------------------------------------------------------------------------- helpers


class FakeEmbedder(Embedder):
    """Fixed pooled vectors and frame sequences per clip id; records what was asked."""

    def __init__(
        self,
        vectors: Mapping[str, np.ndarray],
        frames: Mapping[str, np.ndarray] | None = None,
        *,
        kind: OutputKind = OutputKind.SEQUENCE,
        skip: Sequence[str] = (),
    ) -> None:
        self.encoder = SimpleNamespace(meta=SimpleNamespace(name="fake", output_kind=kind))
        self.durations: dict[str, float] = {}
        self.vectors = vectors
        self.frames = frames or {}
        self.skip = set(skip)
        self.calls: list[bool] = []

    def embed(
        self, clips: Sequence[Clip], description: str, *, pooled: bool = True
    ) -> tuple[list[Clip], list[Any]]:
        self.calls.append(pooled)
        kept = [c for c in clips if c.id not in self.skip]
        source = self.vectors if pooled else self.frames
        return kept, [np.asarray(source[c.id], dtype=np.float32) for c in kept]

    def track(self, description: str, total: int, unit: str) -> ProgressBar:
        return ProgressBar(total)


def make_clip(clip_id: str, label: str | None, **fields: Any) -> Clip:
    metadata = fields.pop("metadata", {})
    return Clip(clip_id, FileAudioRef(Path(f"{clip_id}.wav")), label, metadata=metadata, **fields)


def task_class(name: str, main_score: str = "linear:accuracy", **options: Any) -> type:
    """A ClassificationTask subclass with test metadata and the given option defaults."""
    meta = TaskMetadata(
        name=name,
        description="test task",
        dataset=DatasetSource(kind="synthetic", path="tests"),
        main_score=main_score,
    )
    return type(
        name,
        (ClassificationTask,),
        {"metadata": meta, "options": ClassificationTask.Options(**options)},
    )


def separable(
    n_classes: int = 4,
    per_class: int = 18,
    *,
    n_folds: int = 3,
    dim: int = 16,
    seed: int = 0,
    shuffle: bool = False,
) -> tuple[list[Clip], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Clips of well separated classes: pooled vectors and frame sequences around class means.

    Folds are assigned per individual (``g<k>``) so that no individual straddles two folds.
    With ``shuffle`` the labels are permuted: the embeddings then carry no information.
    """
    rng = np.random.default_rng(seed)
    means = 4.0 * rng.standard_normal((n_classes, dim))
    clips, vectors, frames = [], {}, {}
    labels = [f"c{c}" for c in range(n_classes) for _ in range(per_class)]
    shown = list(rng.permutation(labels)) if shuffle else labels
    for i, (true, label) in enumerate(zip(labels, shown, strict=True)):
        c = int(true[1:])
        group = i % (per_class // 2) if per_class > 1 else 0
        clip_id = f"x{i:03d}"
        clips.append(
            make_clip(
                clip_id,
                label,
                group=f"g{group}",
                metadata={"fold": str(group % n_folds + 1)},
            )
        )
        length = int(rng.integers(5, 12))
        frames[clip_id] = means[c] + 0.5 * rng.standard_normal((length, dim))
        vectors[clip_id] = frames[clip_id].mean(axis=0)
    return clips, vectors, frames


FoldTask = task_class("TestFolds", probes=ALL_PROBES, folds=("1", "2", "3"), grouped=True)


# ---------------------------------------------------------------------------- probes


def test_every_probe_is_near_perfect_on_separable_data() -> None:
    clips, vectors, frames = separable()
    embedder = FakeEmbedder(vectors, frames)
    result = FoldTask().evaluate(embedder, clips)
    entry = result.scores["default"]
    assert set(entry) == set(ALL_PROBES)
    for probe in ALL_PROBES:
        assert entry[probe]["accuracy"] >= 0.95, (probe, entry[probe]["accuracy"])
        assert entry[probe]["n_samples"] == len(clips) and entry[probe]["n_splits"] == 3
        assert set(entry[probe]["per_split"]) == {"fold-1", "fold-2", "fold-3"}
    assert result.main_score == entry["linear"]["accuracy"]
    # Token probes ran on frame sequences: one pooled and one unpooled embedding pass.
    assert embedder.calls == [True, False]
    configs = result.details["probes"]["default"]
    assert configs["linear"]["fold-1"]["grid"]["C"][0] == pytest.approx(1e-4)
    assert configs["linear"]["fold-1"]["chosen"]["C"] in configs["linear"]["fold-1"]["grid"]["C"]
    assert configs["attentive"]["fold-2"]["level"] == "token"
    assert result.details["splits"]["default"]["method"] == "folds"
    assert result.details["protocol"]["seed"] == 0
    assert FoldTask.score_problems(result.scores) == []


def test_every_probe_is_at_chance_on_shuffled_labels() -> None:
    clips, vectors, frames = separable(per_class=40, shuffle=True)
    result = FoldTask().evaluate(FakeEmbedder(vectors, frames), clips)
    for probe in ALL_PROBES:
        accuracy = result.scores["default"][probe]["accuracy"]
        assert abs(accuracy - 0.25) < 0.12, (probe, accuracy)  # 4 classes: chance is 1/4


def test_scores_are_seeded_and_reproducible() -> None:
    clips, vectors, frames = separable(per_class=8)
    task = task_class("TestSeeded", probes=("linear", "mlp", "attentive"), folds=("1", "2", "3"))
    first = task().evaluate(FakeEmbedder(vectors, frames), clips)
    again = task().evaluate(FakeEmbedder(vectors, frames), clips)
    assert first.scores == again.scores


def test_fold_averages_pinned_to_hand_computed_one_nn() -> None:
    """1-NN on a line; every prediction is worked out by hand.

    fold 1 tests a0 (0.0), b0 (10.0), a2 (5.2); trains on a1 (1.0), b1 (11.0), b2 (4.8).
      a0 -> a1 (a), b0 -> b1 (b), a2 -> b2 (b, wrong): accuracy 2/3, recall a 1/2, b 1
      -> balanced 3/4, F1 a = 2/(2+0+1) = 2/3, F1 b = 2·1/(2+1+0) = 2/3 -> macro 2/3.
    fold 2 is the mirror: trains on fold 1, tests a1 -> a0 (a), b1 -> b0 (b),
      b2 (4.8) -> a2 (5.2) (a, wrong): the same three numbers.
    """
    points = {"a0": 0.0, "b0": 10.0, "a2": 5.2, "a1": 1.0, "b1": 11.0, "b2": 4.8}
    clips = [
        make_clip(i, i[0], metadata={"fold": "1" if i in ("a0", "b0", "a2") else "2"})
        for i in points
    ]
    vectors = {i: np.array([v, 0.0]) for i, v in points.items()}
    task = task_class(
        "TestOneNN",
        main_score="knn:accuracy",
        probes=("knn",),
        folds=("1", "2"),
        probe_params={"knn": {"k": 1, "metric": "euclidean"}},
    )
    result = task().evaluate(FakeEmbedder(vectors), clips)
    knn = result.scores["default"]["knn"]
    for fold in ("fold-1", "fold-2"):
        report = knn["per_split"][fold]
        assert report["accuracy"] == pytest.approx(2 / 3)
        assert report["balanced_accuracy"] == pytest.approx(3 / 4)
        assert report["f1_macro"] == pytest.approx(2 / 3)
        assert report["n_samples"] == 3 and report["n_classes"] == 2
    assert knn["accuracy"] == pytest.approx(2 / 3) and knn["std"]["accuracy"] == 0.0
    assert knn["n_samples"] == 6 and "top_5_accuracy" not in knn  # 2 classes: top-5 is trivial
    assert result.main_score == pytest.approx(2 / 3)


def test_top_k_reported_with_more_classes_than_k() -> None:
    clips, vectors, _ = separable(n_classes=7, per_class=6)
    task = task_class("TestTopK", probes=("knn",), folds=("1", "2", "3"))
    entry = task().evaluate(FakeEmbedder(vectors), clips).scores["default"]["linear"]
    assert entry["top_5_accuracy"] >= entry["accuracy"] >= 0.9


# ---------------------------------------------------------------------------- splits


def test_fold_missing_a_class_in_training_names_fold_and_class() -> None:
    clips, vectors, _ = separable(n_classes=3, per_class=6)
    for c in clips:  # every clip of class c2 sits in fold 2
        if c.label == "c2":
            c.metadata["fold"] = "2"
    task = task_class("TestMissing", folds=("1", "2", "3"))
    with pytest.raises(MissingClassError) as info:
        task().evaluate(FakeEmbedder(vectors), clips)
    message = str(info.value)
    assert "TestMissing" in message and "fold-2" in message and "'c2'" in message
    assert info.value.split == "fold-2" and info.value.classes == ("c2",)


def test_undeclared_or_missing_fold_is_an_error() -> None:
    clips, vectors, _ = separable(n_classes=2, per_class=6)
    clips[0].metadata["fold"] = "7"
    task = task_class("TestBadFold", folds=("1", "2", "3"))
    with pytest.raises(ValueError, match=r"fold value\(s\) \['7'\] are not among"):
        task().evaluate(FakeEmbedder(vectors), clips)
    del clips[0].metadata["fold"]
    with pytest.raises(ValueError, match="have no 'fold': 'x000'"):
        task().evaluate(FakeEmbedder(vectors), clips)


def test_group_in_two_folds_is_an_error() -> None:
    clips, vectors, _ = separable(n_classes=2, per_class=12)
    leaky = next(c for c in clips if c.group == "g0" and c.label == "c1")
    leaky.metadata["fold"] = "2"  # g0 is otherwise in fold 1
    task = task_class("TestLeak", folds=("1", "2", "3"), grouped=True)
    with pytest.raises(GroupLeakError, match="'g0'") as info:
        task().evaluate(FakeEmbedder(vectors), clips)
    assert "TestLeak" in str(info.value)


def test_generated_group_folds_never_share_a_group() -> None:
    clips, vectors, _ = separable(n_classes=3, per_class=20)
    for c in clips:
        c.metadata.clear()  # no predefined folds or splits
    task = task_class("TestGrouped", grouped=True, generated_folds=4)
    method, splits = task().evaluation_splits(clips)
    assert method == "grouped_folds" and len(splits) == 4
    for split in splits:
        train = {clips[i].group for i in split.train}
        test = {clips[i].group for i in split.test}
        assert train and test and not train & test
    # Every clip is tested exactly once.
    tested = sorted(i for s in splits for i in s.test.tolist())
    assert tested == list(range(len(clips)))
    result = task().evaluate(FakeEmbedder(vectors), clips)
    assert result.details["splits"]["default"]["method"] == "grouped_folds"
    assert result.main_score >= 0.95


def test_grouped_task_needs_a_group_for_every_clip() -> None:
    clips, vectors, _ = separable(n_classes=2, per_class=6)
    clips[3] = replace(clips[3], group=None)
    task = task_class("TestNoGroup", grouped=True)
    with pytest.raises(ValueError, match=r"need a group .* 'x003'"):
        task().evaluate(FakeEmbedder(vectors), clips)


def test_given_splits_use_validation_and_record_sizes() -> None:
    clips, vectors, _ = separable(n_classes=3, per_class=10)
    clips = [
        replace(c, split=("train", "train", "train", "validation", "test")[(i // 2) % 5])
        for i, c in enumerate(clips)
    ]
    for c in clips:
        c.metadata.clear()
    task = task_class("TestGiven", probes=("linear", "knn"))
    result = task().evaluate(FakeEmbedder(vectors), clips)
    info = result.details["splits"]["default"]
    assert info["method"] == "given"
    assert info["splits"] == {"test": {"n_train": 18, "n_validation": 6, "n_test": 6}}
    # Individuals appear in several parts: not an error here (the task is not grouped),
    # but counted.
    assert info["groups_in_several_parts"] > 0
    linear = result.details["probes"]["default"]["linear"]["test"]
    assert linear["selection"]["method"] == "validation"
    assert result.main_score == 1.0


def test_unknown_split_value_is_an_error() -> None:
    clips, vectors, _ = separable(n_classes=2, per_class=6)
    clips = [replace(c, split="train" if i % 3 else "dev") for i, c in enumerate(clips)]
    with pytest.raises(ValueError, match="unexpected split values 'dev'"):
        task_class("TestDev")().evaluate(FakeEmbedder(vectors), clips)


def test_unlabelled_clip_and_nan_embedding_are_errors() -> None:
    clips, vectors, _ = separable(n_classes=2, per_class=6)
    task = task_class("TestBad", folds=("1", "2", "3"))
    vectors["x004"] = np.full(16, np.nan)
    with pytest.raises(ValueError, match=r"NaN or infinite values.*'x004'"):
        task().evaluate(FakeEmbedder(vectors), clips)
    clips[1] = replace(clips[1], label=None)
    with pytest.raises(ValueError, match="have no label: 'x001'"):
        task().evaluate(FakeEmbedder(vectors), clips)


# ---------------------------------------------------------------------------- encoders


def test_token_probes_skipped_for_vector_encoders_with_reason() -> None:
    clips, vectors, _ = separable(n_classes=2, per_class=6)
    embedder = FakeEmbedder(vectors, kind=OutputKind.VECTOR)
    result = FoldTask().evaluate(embedder, clips)
    entry = result.scores["default"]
    assert set(entry) == {"linear", "knn", "mlp", "skipped_probes"}
    assert "token-level probes need frame sequences" in entry["skipped_probes"]["attentive"]
    assert embedder.calls == [True]  # no unpooled pass
    assert result.main_score == entry["linear"]["accuracy"]
    assert FoldTask.score_problems(result.scores) == []


def test_token_primary_probe_refuses_vector_encoders() -> None:
    task = task_class("TestTokenMain", main_score="attentive:accuracy", probes=())
    vector = SimpleNamespace(meta=SimpleNamespace(name="v", output_kind=OutputKind.VECTOR))
    with pytest.raises(ValueError, match=r"primary probe 'attentive'.*frame sequences"):
        task.check_encoder(vector)
    sequence = SimpleNamespace(meta=SimpleNamespace(name="s", output_kind=OutputKind.SEQUENCE))
    task.check_encoder(sequence)
    assert task().probe_names == ("attentive",)


class DropsInTheUnpooledPass(FakeEmbedder):
    """Embeds every clip pooled, and all but ``x000`` frame-level."""

    def embed(self, clips, description, *, pooled=True):  # type: ignore[no-untyped-def]
        self.skip = set() if pooled else {"x000"}
        return super().embed(clips, description, pooled=pooled)


def test_clips_dropped_by_the_unpooled_pass_leave_every_probe() -> None:
    clips, vectors, frames = separable(n_classes=2, per_class=12)
    task = task_class("TestDrop", probes=("linear", "protobin"), folds=("1", "2", "3"))
    result = task().evaluate(DropsInTheUnpooledPass(vectors, frames), clips)
    assert result.details["splits"]["default"]["n_dropped_unpooled"] == 1
    for probe in ("linear", "protobin"):
        assert result.scores["default"][probe]["n_samples"] == len(clips) - 1


def test_clip_dropped_by_the_unpooled_pass_with_token_probes_only() -> None:
    # No vector probe: no pooled vectors to line up with the clips the frame pass kept.
    clips, vectors, frames = separable(n_classes=2, per_class=12)
    task = task_class(
        "TestDropTokens", main_score="protobin:accuracy", probes=(), folds=("1", "2", "3")
    )
    embedder = DropsInTheUnpooledPass(vectors, frames)
    result = task().evaluate(embedder, clips)
    assert embedder.calls == [False]  # the frame pass only
    assert result.details["splits"]["default"]["n_dropped_unpooled"] == 1
    assert result.scores["default"]["protobin"]["n_samples"] == len(clips) - 1


# ---------------------------------------------------------------------------- multi-label


def multilabel_clips(
    n_classes: int = 4, repeats: int = 6, *, shuffle: bool = False
) -> tuple[list[Clip], dict[str, np.ndarray]]:
    """Every single class and pair, ``repeats`` times; vectors sum the classes' prototypes."""
    rng = np.random.default_rng(3)
    protos = 3.0 * rng.standard_normal((n_classes, 12))
    combos = [(a,) for a in range(n_classes)] + [
        (a, b) for a in range(n_classes) for b in range(a + 1, n_classes)
    ]
    clips, vectors = [], {}
    labels = []
    for index, combo in enumerate(combos):
        for k in range(repeats):
            clip_id = f"m{index:02d}-{k}"
            split = "test" if k == repeats - 1 else "validation" if k == repeats - 2 else "train"
            labels.append(",".join(f"k{c}" for c in combo))
            clips.append(make_clip(clip_id, None, split=split))
            vectors[clip_id] = protos[list(combo)].sum(axis=0) + 0.3 * rng.standard_normal(12)
    if shuffle:
        labels = list(rng.permutation(labels))
    clips = [
        # Spaces around the separator are stripped.
        replace(c, label=label.replace(",", " , ") if c.id.endswith("-0") else label)
        for c, label in zip(clips, labels, strict=True)
    ]
    return clips, vectors


MultiTask = task_class(
    "TestMultilabel", main_score="linear:map", multilabel=True, probes=("linear", "knn", "mlp")
)


def test_multilabel_probes_reach_high_map() -> None:
    clips, vectors = multilabel_clips()
    result = MultiTask().evaluate(FakeEmbedder(vectors), clips)
    for probe in ("linear", "knn", "mlp"):
        entry = result.scores["default"][probe]
        assert set(entry) >= {"map", "f1_micro", "f1_macro", "n_samples", "n_classes"}
        assert entry["map"] >= 0.9, (probe, entry["map"])
        assert entry["n_classes"] == 4
        assert entry["per_split"]["test"]["n_classes_without_positives"] == 0
    assert result.main_score == result.scores["default"]["linear"]["map"]
    assert result.details["protocol"]["label_separator"] == ","
    assert MultiTask.score_problems(result.scores) == []


def test_multilabel_shuffled_labels_fall_to_chance() -> None:
    clips, vectors = multilabel_clips(repeats=12, shuffle=True)
    result = MultiTask().evaluate(FakeEmbedder(vectors), clips)
    # Each class is positive for 40 % of the clips: a random ranking's AP is about that.
    assert result.scores["default"]["linear"]["map"] < 0.65


def test_multilabel_class_only_in_test_is_an_error() -> None:
    clips, vectors = multilabel_clips()
    clips[-1] = replace(clips[-1], label="k0,unseen")
    with pytest.raises(MissingClassError, match="'unseen'"):
        MultiTask().evaluate(FakeEmbedder(vectors), clips)


# ---------------------------------------------------------------------------- subsets, checks


def test_subsets_are_scored_apart_and_averaged() -> None:
    clips, vectors, _ = separable(n_classes=2, per_class=12)
    clips = [replace(c, subset="A" if i % 2 else "B") for i, c in enumerate(clips)]
    meta = TaskMetadata(
        name="TestSubsets",
        description="t",
        dataset=DatasetSource(kind="synthetic", path="tests"),
        subsets=("A", "B"),
        main_score="linear:accuracy",
    )
    options = ClassificationTask.Options(folds=("1", "2", "3"))
    task = type("TestSubsets", (ClassificationTask,), {"metadata": meta, "options": options})
    result = task().evaluate(FakeEmbedder(vectors), clips)
    assert list(result.scores) == ["A", "B"]
    mean = result.aggregates["mean"]
    assert mean["subsets"] == ["A", "B"]
    expected = np.mean([result.scores[s]["linear"]["accuracy"] for s in ("A", "B")])
    assert mean["linear"]["accuracy"] == pytest.approx(expected) == result.main_score
    assert task.score_problems(result.scores) == []
    assert task.score_problems(result.aggregates) == []


def test_score_problems_reject_bad_results() -> None:
    clips, vectors, _ = separable(n_classes=2, per_class=6)
    task = task_class("TestProblems", folds=("1", "2", "3"))
    scores = task().evaluate(FakeEmbedder(vectors), clips).scores
    bad = json.loads(json.dumps(scores))
    bad["default"]["linear"]["accuracy"] = 1.5
    bad["default"]["linear"]["per_split"]["fold-1"]["f1_macro"] = -0.1
    bad["default"]["linear"]["std"]["accuracy"] = 0.7
    bad["default"]["linear"]["n_samples"] = -3
    bad["default"]["knn"]["p@1"] = 0.5
    bad["default"]["svm"] = scores["default"]["knn"]  # a sound entry under an unknown name
    bad["elsewhere"] = {}
    problems = task.score_problems(bad)
    expected = [
        "default.linear.accuracy: Input should be less than or equal to 1, not 1.5",
        "default.linear.per_split.fold-1.f1_macro: Input should be greater than or equal to 0",
        "default.linear.std.accuracy: Input should be less than or equal to 0.5, not 0.7",
        "default.linear.n_samples: Input should be greater than or equal to 0, not -3",
        "default.knn.p@1: unknown metric",
        "default.svm: unknown probe",
        "elsewhere: unknown subset",
    ]
    for start in expected:
        assert any(p.startswith(start) for p in problems), (start, problems)
    assert len(problems) == len(expected)
    # A multi-label task knows other metrics (an otherwise complete entry).
    entry = {"n_samples": 3, "n_classes": 2, "n_splits": 1, "std": {}, "per_split": {}}
    assert MultiTask.score_problems({"default": {"linear": {"accuracy": 0.5, **entry}}}) == [
        "default.linear.accuracy: unknown metric; known: map, f1_micro, f1_macro"
    ]


def test_bad_task_declarations_fail_early() -> None:
    with pytest.raises(ValueError, match="must read '<probe>:<metric>'"):
        task_class("TestNoProbe", main_score="accuracy")
    with pytest.raises(ValueError, match="unknown probe 'svm'"):
        task_class("TestSvm", main_score="svm:accuracy")
    with pytest.raises(ValueError, match="'map' is not one of"):
        task_class("TestMap", main_score="linear:map")
    with pytest.raises(ValueError, match="unknown probe"):
        task_class("TestOk")(probes=("linear", "forest"))


# ---------------------------------------------------------------------------- real tasks

REAL = ("ESC50", "SpeechCommands", "FSD50K")
OFFLINE = ("MockClassification", "MockMultilabelClassification")


@pytest.mark.parametrize("name", REAL + OFFLINE)
def test_declared_tasks_instantiate(name: str) -> None:
    task = registry.tasks.create(name)
    meta = task.metadata
    assert meta.family == TaskFamily.CLASSIFICATION
    assert meta.offline == (name in OFFLINE)
    if not meta.offline:
        assert meta.dataset.kind == "huggingface" and len(meta.dataset.revision or "") == 40
    assert task.probe_names[0] == meta.main_score.split(":")[0]


def test_classification_benchmark_columns_are_main_scores() -> None:
    bench = get_benchmark("Classification")
    assert bench.tasks == REAL
    assert all(c.aggregate is None for c in bench.columns)
    assert {c.task for c in bench.columns} == set(REAL)
    for column in bench.columns:
        assert column.score == registry.tasks.get(column.task).metadata.main_score


def _tone(freq: float, seed: int, seconds: float = 0.25) -> tuple[np.ndarray, int]:
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * 16000)) / 16000
    wave = 0.3 * np.sin(2 * np.pi * freq * (1 + 0.01 * rng.standard_normal()) * t)
    return (wave + 0.01 * rng.standard_normal(t.size)).astype(np.float32), 16000


FREQS = {"dog": 300.0, "rain": 1500.0, "siren": 4000.0}


def test_esc50_runs_on_a_hub_like_copy(tmp_path: Path) -> None:
    rows = []
    for fold in range(1, 6):
        for label, freq in FREQS.items():
            for take in "AB":
                rows.append(
                    {
                        "filename": f"{fold}-{label}-{take}.wav",
                        "fold": fold,
                        "target": list(FREQS).index(label),
                        "category": label,
                        "esc10": False,
                        "src_file": f"{fold}-{label}",
                        "take": take,
                        "audio": _tone(freq, len(rows)),
                    }
                )
    root = write_hub_like(tmp_path / "esc50", rows)
    task = registry.tasks.create("ESC50", dataset_path=root, probes=("linear", "knn"))
    [result] = audiobench.evaluate(
        [task],
        "log-mel",
        output_dir=tmp_path / "out",
        use_cache=False,
        progress=False,
        count_flops=False,
    )
    assert result.main_score is not None and result.main_score >= 0.9
    folds = result.scores["default"]["linear"]["per_split"]
    assert list(folds) == [f"fold-{k}" for k in range(1, 6)]
    assert result.details["splits"]["default"]["method"] == "folds"
    assert result.task.revision == "e3e2a63ffff66b9a9735524551e3818e96af03ee"


def test_speech_commands_and_fsd50k_run_on_hub_like_copies(tmp_path: Path) -> None:
    root = tmp_path / "speech"
    for split, n in (("train", 4), ("validation", 2), ("test", 2)):
        rows = [
            {
                "audio": _tone(freq, k + 10 * n + len(split)),
                "label": label,
                "speaker_id": f"{split}{k}",
            }
            for label, freq in FREQS.items()
            for k in range(n)
        ]
        write_hub_like(root, rows, split=split)
    task = registry.tasks.create("SpeechCommands", dataset_path=root, probes=("linear",))
    [speech] = audiobench.evaluate(
        [task],
        "log-mel",
        output_dir=tmp_path / "out",
        use_cache=False,
        progress=False,
        count_flops=False,
    )
    info = speech.details["splits"]["default"]
    assert info["splits"]["test"] == {"n_train": 12, "n_validation": 6, "n_test": 6}
    assert info["groups_in_several_parts"] == 0
    assert speech.main_score is not None and speech.main_score >= 0.8

    root = tmp_path / "fsd"
    names = list(FREQS)
    for split, n in (("train", 4), ("test", 2)):
        rows = []
        for a in range(3):
            for b in range(a, 3):
                for k in range(n):
                    seed = k + 100 * len(split)  # no clip of one split repeats in the other
                    wave = _tone(FREQS[names[a]], seed)[0] + _tone(FREQS[names[b]], seed + 1)[0]
                    labels = sorted({names[a], names[b]})
                    rows.append({"audio": (wave, 16000), "labels": ",".join(labels)})
        write_hub_like(root, rows, split=split)
    task = registry.tasks.create("FSD50K", dataset_path=root, probes=("linear",))
    [fsd] = audiobench.evaluate(
        [task],
        "log-mel",
        output_dir=tmp_path / "out",
        use_cache=False,
        progress=False,
        count_flops=False,
    )
    assert fsd.main_score_name == "linear:map" and fsd.main_score >= 0.8
    assert fsd.scores["default"]["linear"]["n_classes"] == 3


# ---------------------------------------------------------------------------- CLI


def run_cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_list_tasks_shows_real_and_offline_classification_tasks() -> None:
    code, out, err = run_cli("list", "tasks", "--type", "classification", "--json")
    assert code == 0, err
    rows = {r["name"]: r for r in json.loads(out)}
    assert set(REAL + OFFLINE) <= set(rows)
    assert all(rows[n]["offline"] for n in OFFLINE)
    assert not any(rows[n]["offline"] for n in REAL)
    assert {r["family"] for r in rows.values()} == {"classification"}


@pytest.mark.parametrize(
    ("name", "probes"),
    [
        ("MockClassification", ALL_PROBES),
        ("MockMultilabelClassification", ("linear", "knn")),
    ],
)
def test_offline_task_runs_from_the_cli_with_log_mel(
    tmp_path: Path, name: str, probes: tuple[str, ...]
) -> None:
    out = tmp_path / "results"
    code, _, err = run_cli(
        "evaluate", "--task", name, "--model", "log-mel", "--output-dir", str(out), "--no-progress"
    )
    assert code == 0, err
    path = out / "log-mel" / "v1" / f"{name}.json"
    result = load_result(path)
    entry = result.scores["default"]
    # log-mel outputs frame sequences, so the token probes ran on them too.
    assert set(entry) == set(probes)
    assert result.main_score is not None and result.main_score > 0.7
    _, problems = validate_file(path)
    assert problems == []


def test_mock_folds_keep_each_individual_in_one_fold() -> None:
    task = registry.tasks.create("MockClassification")
    clips = task.load_data()
    assert len(clips) == 48 and len({c.label for c in clips}) == 4
    method, splits = task.evaluation_splits(clips)
    assert method == "folds" and [s.name for s in splits] == ["fold-1", "fold-2", "fold-3"]
    for split in splits:
        assert not {clips[i].group for i in split.train} & {clips[i].group for i in split.test}


# ---------------------------------------------------------------------------- token maps, seeds


def padded_frames(
    frames: Mapping[str, np.ndarray], *, prefix: int, total: int, seed: int = 9
) -> dict[str, np.ndarray]:
    """Each sequence behind ``prefix`` loud tokens and padded with loud frames to ``total``."""
    rng = np.random.default_rng(seed)
    out = {}
    for clip_id, seq in frames.items():
        dim = seq.shape[1]
        head = 40.0 * rng.standard_normal((prefix, dim))
        tail = 40.0 * rng.standard_normal((total - prefix - seq.shape[0], dim))
        out[clip_id] = np.concatenate([head, seq, tail])
    return out


def declare(embedder: FakeEmbedder, **facts: Any) -> FakeEmbedder:
    for key, value in facts.items():
        setattr(embedder.encoder.meta, key, value)
    return embedder


TokenTask = task_class(
    "TestTokenMap",
    probes=("protobin",),
    folds=("1", "2", "3"),
    probe_params={"protobin": {"epochs": 6}},
)


def test_token_probes_see_only_the_valid_tokens() -> None:
    """Prefix tokens (AST's CLS and distillation tokens) and padding frames (Whisper's window)
    would win protobin's max over tokens; declared by the model, they are left out, and the
    scores are exactly those of the clean frame sequences."""
    clips, vectors, frames = separable(n_classes=3, per_class=12)
    rate = 10.0  # frames per second: a clip of T valid frames lasts T / 10 s
    clean = TokenTask().evaluate(FakeEmbedder(vectors, frames), clips)
    noisy = padded_frames(frames, prefix=2, total=20)
    embedder = declare(FakeEmbedder(vectors, noisy), n_prefix_tokens=2, padded_frame_rate=rate)
    embedder.durations = {clip_id: seq.shape[0] / rate for clip_id, seq in frames.items()}
    trimmed = TokenTask().evaluate(embedder, clips)
    assert trimmed.scores["default"]["protobin"] == clean.scores["default"]["protobin"]
    info = trimmed.details["splits"]["default"]["token_map"]
    n_tokens = sum(seq.shape[0] for seq in frames.values())
    assert info == {
        "n_prefix_tokens": 2,
        "padded_frame_rate": rate,
        "n_tokens": n_tokens,
        "n_left_out": 20 * len(frames) - n_tokens,
    }
    # Undeclared, the same loud tokens enter the max and change the scores.
    undeclared = TokenTask().evaluate(FakeEmbedder(vectors, noisy), clips)
    assert undeclared.scores["default"]["protobin"] != clean.scores["default"]["protobin"]
    assert "token_map" not in undeclared.details["splits"]["default"]


def test_token_maps_cut_chunk_by_chunk_give_the_same_scores(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Frame sequences are embedded and cut to token maps a chunk at a time (so a subset never
    holds every padded window); the chunking changes no score and no count."""
    import audiobench.probes.tokens as tokens

    clips, vectors, frames = separable(n_classes=3, per_class=12)
    noisy = padded_frames(frames, prefix=2, total=20)

    def run() -> Any:
        embedder = declare(FakeEmbedder(vectors, noisy), n_prefix_tokens=2, padded_frame_rate=10.0)
        embedder.durations = {clip_id: seq.shape[0] / 10.0 for clip_id, seq in frames.items()}
        return TokenTask().evaluate(embedder, clips)

    whole = run()
    monkeypatch.setattr(tokens, "FRAME_CHUNK", 5)
    chunked = run()
    assert chunked.scores == whole.scores
    assert chunked.details["splits"] == whole.details["splits"]


def test_padded_model_needs_every_clip_duration() -> None:
    clips, vectors, frames = separable(n_classes=2, per_class=6)
    embedder = declare(FakeEmbedder(vectors, frames), padded_frame_rate=50.0)
    embedder.durations = {c.id: 0.1 for c in clips[1:]}
    with pytest.raises(ValueError, match=r"no decoded duration .* 'x000'"):
        TokenTask().evaluate(embedder, clips)


def test_token_seeds_report_mean_and_spread_over_seeds() -> None:
    clips, vectors, frames = separable(n_classes=3, per_class=12, seed=4)
    # Noisier frames, so that seeds disagree.
    rng = np.random.default_rng(0)
    frames = {k: v + 6.0 * rng.standard_normal(v.shape) for k, v in frames.items()}
    options = {"probes": ("protobin",), "folds": ("1", "2", "3")}
    params = {"protobin": {"epochs": 3}}
    seeded = task_class("TestSeeds", **options, probe_params=params, token_seeds=5)
    result = seeded().evaluate(FakeEmbedder(vectors, frames), clips)
    entry = result.scores["default"]["protobin"]
    assert entry["n_seeds"] == 5 and list(entry["per_seed"]) == ["0", "1", "2", "3", "4"]
    for metric in ("accuracy", "balanced_accuracy", "f1_macro"):
        values = [entry["per_seed"][s][metric] for s in entry["per_seed"]]
        assert entry[metric] == pytest.approx(np.mean(values), abs=1e-12)
        assert entry["seed_std"][metric] == pytest.approx(np.std(values), abs=1e-12)
        # std stays the spread across folds, of every fold's mean over the seeds.
        folds = [entry["per_split"][f][metric] for f in ("fold-1", "fold-2", "fold-3")]
        assert entry["std"][metric] == pytest.approx(np.std(folds), abs=1e-12)
    assert entry["seed_std"]["accuracy"] > 0
    # Each seed's figure is that seed's own run (no grid: the seeds are independent).
    for seed in (0, 3):
        alone = task_class("TestOneSeed", **options, probe_params=params, seed=seed)
        single = alone().evaluate(FakeEmbedder(vectors, frames), clips)
        one = single.scores["default"]["protobin"]
        assert "n_seeds" not in one and "seed_std" not in one
        assert entry["per_seed"][str(seed)]["accuracy"] == pytest.approx(one["accuracy"])
    configs = result.details["probes"]["default"]["protobin"]["fold-2"]
    assert [configs[s]["seed"] for s in configs] == [0, 1, 2, 3, 4]
    assert result.details["protocol"]["token_seeds"] == 5
    assert seeded.score_problems(result.scores) == []
    # The primary (vector) probe keeps one seed.
    assert "n_seeds" not in result.scores["default"]["linear"]


def event_frames(
    clips: Sequence[Clip], labels: Sequence[set[int]], n_classes: int, dim: int = 12
) -> dict[str, np.ndarray]:
    """Noise frames, each present class's pattern in one of them."""
    rng = np.random.default_rng(5)
    patterns = 3.0 * rng.standard_normal((n_classes, dim))
    frames = {}
    for clip, present in zip(clips, labels, strict=True):
        seq = rng.standard_normal((int(rng.integers(8, 14)), dim))
        slots = rng.permutation(seq.shape[0])
        for slot, c in zip(slots, sorted(present), strict=False):
            seq[slot] = patterns[c] + 0.3 * rng.standard_normal(dim)
        frames[clip.id] = seq
    return frames


def test_paper_protocol_trains_the_token_probes_with_the_papers_recipe() -> None:
    clips, vectors = multilabel_clips(repeats=8)
    names = [f"k{c}" for c in range(4)]
    labels = [{names.index(p.strip()) for p in str(c.label).split(",")} for c in clips]
    frames = event_frames(clips, labels, 4)
    task = task_class(
        "TestPaper",
        main_score="linear:map",
        multilabel=True,
        probes=("attentive", "protobin"),
        token_protocol="paper",
        token_seeds=2,
        probe_params={
            # 60 training clips: one batch of 128, one step per epoch.
            "attentive": {"epochs": 30, "lr": (1e-3, 1e-2), "weight_decay": (1e-2,)},
            "protobin": {"epochs": 30, "lr": (3e-3, 3e-2), "weight_decay": (1e-4,)},
        },
    )
    result = task().evaluate(FakeEmbedder(vectors, frames), clips)
    assert result.details["protocol"]["token_recipe"] == "paper"
    configs = result.details["probes"]["default"]
    for name in ("attentive", "protobin"):
        first, second = configs[name]["test"]["0"], configs[name]["test"]["1"]
        params = first["params"]
        assert params["loss"] == "asymmetric" and params["batch_size"] == 128
        assert params["early_stopping"] is False and params["standardise"] is False
        assert first["selection"]["method"] == "validation"  # the task's validation split
        assert first["selection"]["metric"] == "map"
        chosen = first["chosen"]["lr"]
        # The second seed reuses the first seed's choice: no grid of its own.
        assert second["params"]["lr"] == chosen and second["grid"] == {}
        entry = result.scores["default"][name]
        assert entry["n_seeds"] == 2 and set(entry["per_seed"]) == {"0", "1"}
        assert entry["map"] >= 0.8, (name, entry["map"])
    assert configs["attentive"]["test"]["0"]["params"]["dim"] == 12  # the model's full width
    assert task.score_problems(result.scores) == []


def test_each_probe_fit_prints_a_line_when_progress_shows(
    capsys: pytest.CaptureFixture[str],
) -> None:
    clips, vectors, _ = separable(n_classes=2, per_class=6)
    task = task_class("TestLines", probes=("linear", "knn"), folds=("1", "2", "3"))
    task().evaluate(FakeEmbedder(vectors), clips)
    assert capsys.readouterr().err == ""  # no progress display: silent
    embedder = FakeEmbedder(vectors)
    embedder.progress = object()  # type: ignore[attr-defined]
    task().evaluate(embedder, clips)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 6  # 3 folds × 2 probes, one line per fit
    assert lines[0].startswith("  TestLines probes: fold-1 linear: accuracy ")
    assert lines[0].endswith(" s)")


@pytest.mark.parametrize("name", REAL)
def test_real_tasks_run_the_token_probes_on_sequence_encoders(name: str) -> None:
    task = registry.tasks.create(name)
    assert {"attentive", "protobin"} <= set(task.probe_names)
    assert task.options.token_recipe == "default" and task.token_seeds == 1
    assert registry.tasks.create(name, token_protocol="paper").token_seeds == 5
