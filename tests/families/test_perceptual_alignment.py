"""Perceptual alignment: hand-computed trials, trial tables, bad input, tasks, and a CLI run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from audiobench import registry
from audiobench.audio import Clip, FileAudioRef
from audiobench.benchmark import get_benchmark
from audiobench.cli import app
from audiobench.families.perceptual_alignment import (
    DISTANCES,
    PerceptualAlignmentTask,
    Trial,
    consistent_trials,
    read_probe_table,
    read_triplet_table,
)
from audiobench.leaderboard.validate import validate_file
from audiobench.metrics import InvalidEmbeddingsError
from audiobench.reports import parse_score_path
from audiobench.results import load_result
from audiobench.runner import CachedEmbedder, ProgressBar
from audiobench.sources import DatasetError
from audiobench.task import DatasetSource, Embedder, TaskFamily, TaskMetadata
from audiobench.tasks.perceptual_alignment import AvianPerception, MockPerceptualAlignment
from audiobench.vocsim import DISTANCE_METRICS
from tests.encoders import StatsEncoder
from tests.hub_copy import write_hub_like


class VectorEmbedder(Embedder):
    """Hands out given vectors by clip id; ids in ``skip`` are "dropped under --on-error skip"."""

    def __init__(self, vectors: dict[str, Sequence[float]], skip: Sequence[str] = ()) -> None:
        self.encoder = StatsEncoder()
        self.durations = {}
        self.vectors = {k: np.asarray(v, dtype=np.float64) for k, v in vectors.items()}
        self.left_out = set(skip)

    def embed(
        self, clips: Sequence[Clip], description: str, *, pooled: bool = True
    ) -> tuple[list[Clip], list[Any]]:
        kept = [c for c in clips if c.id not in self.left_out]
        return kept, [self.vectors[c.id] for c in kept]

    def track(self, description: str, total: int, unit: str) -> ProgressBar:
        return ProgressBar(total)


class Judged(PerceptualAlignmentTask):
    """A folder task whose trial tables sit in ``dataset_path``."""

    metadata = TaskMetadata(
        name="JudgedTest",
        family=TaskFamily.PERCEPTUAL_ALIGNMENT,
        description="test",
        dataset=DatasetSource(kind="folder", path="/nowhere"),
        main_score="cosine:triplet/all",
    )


class OnClips(Judged):
    """Trials only from clip metadata."""

    options = Judged.Options(triplet_file=None, probe_file=None)


def clip(clip_id: str, **metadata: str) -> Clip:
    return Clip(id=clip_id, audio=FileAudioRef(Path(f"/data/{clip_id}.wav")), metadata=metadata)


# a and b nearly parallel; c orthogonal to a; d opposite a.
VECTORS = {"a": [1.0, 0.0], "b": [1.0, 0.1], "c": [0.0, 1.0], "d": [-1.0, 0.0]}
TRIPLETS = (
    "ID_String,Positive,Negative,Anchor,Margin_Type\n"
    "t1,b,c,a,high\n"  # d(a,b) < d(a,c): right
    "t2,c,b,a,low\n"  # wrong
    "t3,b,b,a,high\n"  # tie: half
    "t4,b,d,c,high\n"  # cos d(c,b) = 0.45 < d(c,d) = 0.5: right
    "t1,b,c,a,high\n"  # a repeat of line 2: one judgment
)
PROBES = (
    "left,right,sound_id,decision\n"
    "c,b,a,Right\n"  # model picks b (closer to a): agrees
    "a,c,d,left\n"  # model picks c: disagrees
    "a,c,d,NA\n"  # no response: counted, not scored
)


def tables(root: Path, triplets: str = TRIPLETS, probes: str = PROBES) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "triplets.csv").write_text(triplets)
    (root / "probes.csv").write_text(probes)
    return root


def test_hand_computed_triplets_and_2afc(tmp_path: Path) -> None:
    task = Judged(dataset_path=tables(tmp_path / "judged"), n_bootstrap=200)
    out = task.evaluate(VectorEmbedder(VECTORS), [clip(k) for k in VECTORS])
    for distance in ("cosine", "euclidean"):  # same order of distances here
        triplets = out.scores["default"][distance]["triplet"]
        every = triplets["all"]
        assert (every["n"], every["n_correct"], every["n_ties"]) == (4, 2.5, 1)
        assert every["accuracy"] == 0.625
        # One-sided binomial, k = floor(2.5) = 2 of 4: P(X ≥ 2) = 11/16.
        assert every["p_value"] == pytest.approx(11 / 16)
        assert triplets["high"]["n"] == 3 and triplets["high"]["n_correct"] == 2.5
        assert triplets["low"]["accuracy"] == 0.0
        probes = out.scores["default"][distance]["2afc"]["all"]
        assert (probes["n"], probes["n_correct"], probes["accuracy"]) == (2, 1, 0.5)
        assert probes["p_value"] == pytest.approx(3 / 4)
    assert out.main_score == 0.625
    low, high = out.scores["default"]["cosine"]["triplet"]["all"]["ci95"]
    assert 0.0 <= low <= 0.625 <= high <= 1.0
    counts = out.details["counts"]["default"]
    assert counts["triplet"] == {
        "declared": 5,
        "duplicates": 1,
        "missing_members": 0,
        "unembedded": 0,
        "evaluated": 4,
    }
    assert counts["2afc"]["unanswered"] == 1 and counts["2afc"]["evaluated"] == 2
    assert out.details["examples"]["default"]["unanswered"] == ["probes.csv line 4"]
    assert Judged.score_problems(out.scores) == []
    assert Judged.score_problems(out.aggregates) == []


def test_ties_count_half_in_both_kinds(tmp_path: Path) -> None:
    constant = {k: [1.0, 1.0] for k in VECTORS}
    task = Judged(dataset_path=tables(tmp_path / "t"), distances=["euclidean"], n_bootstrap=0)
    out = task.evaluate(VectorEmbedder(constant), [clip(k) for k in VECTORS])
    scores = out.scores["default"]
    assert scores["euclidean"]["triplet"]["all"]["accuracy"] == 0.5
    assert scores["euclidean"]["2afc"]["all"]["n_ties"] == 2
    assert scores["euclidean"]["2afc"]["all"]["accuracy"] == 0.5
    assert scores["euclidean"]["triplet"]["all"]["ci95"] is None
    # The main score's distance (cosine) is always evaluated.
    assert set(scores) == {"euclidean", "cosine"}


def test_trials_on_clip_metadata() -> None:
    clips = [
        clip("a", positive="b", negative="c", left="c", right="b", decision="right"),
        clip("b"),
        clip("c", positive="d", negative="a"),
        clip("d"),
    ]
    out = OnClips().evaluate(VectorEmbedder(VECTORS), clips)
    # c: d(c, d) = 0.5 vs d(c, a) = 0.5: a tie.
    assert out.scores["default"]["cosine"]["triplet"]["all"]["n_correct"] == 1.5
    assert out.scores["default"]["cosine"]["2afc"]["all"]["accuracy"] == 1.0
    assert out.details["trial_sources"]["default"] == [{"source": "clip metadata", "n_rows": 3}]


def test_consistent_trials_vote_by_chosen_clip() -> None:
    def probe(left: str, right: str, choice: int) -> Trial:
        return Trial("x", "2afc", "p", left, right, choice)

    trials = [
        probe("a", "b", 0),  # a
        probe("b", "a", 1),  # a (sides swapped)
        probe("a", "b", 1),  # b
        probe("c", "d", 0),  # c
        probe("c", "d", 1),  # d: an even split is never consistent
    ]
    kept, dropped = consistent_trials(trials, 0.6)
    assert dropped == 1 and len(kept) == 1
    assert (kept[0].first, kept[0].second, kept[0].choice) == ("a", "b", 0)
    assert consistent_trials(trials, 0.7) == ([], 2)


def test_vocsim_consistency_filter_in_scores(tmp_path: Path) -> None:
    probes = "left,right,sound_id,decision\n" + "c,b,a,Right\n" * 3 + "c,b,a,Left\n"
    task = Judged(dataset_path=tables(tmp_path / "v", probes=probes), n_bootstrap=0)
    out = task.evaluate(VectorEmbedder(VECTORS), [clip(k) for k in VECTORS])
    probes_scores = out.scores["default"]["cosine"]["2afc"]
    assert probes_scores["all"]["n"] == 4 and probes_scores["all"]["n_correct"] == 3
    assert probes_scores["consistent"]["n"] == 1 and probes_scores["consistent"]["accuracy"] == 1
    assert out.details["counts"]["default"]["2afc"]["consistent"] == 1


def test_missing_members_error_or_counted_skip(tmp_path: Path) -> None:
    root = tables(tmp_path / "m", triplets="anchor,positive,negative\na,b,c\na,b,zz\n,b,c\n")
    clips = [clip(k) for k in VECTORS]
    with pytest.raises(ValueError, match=r"2 trial\(s\) name clips.*triplets.csv line 3: 'zz'"):
        Judged(dataset_path=root).evaluate(VectorEmbedder(VECTORS), clips)

    class Lenient(Judged):
        options = Judged.Options(missing_members="skip")

    out = Lenient(dataset_path=root).evaluate(VectorEmbedder(VECTORS), clips)
    assert out.details["counts"]["default"]["triplet"]["missing_members"] == 2
    examples = out.details["examples"]["default"]
    assert "triplets.csv line 4: (blank)" in examples["missing_members"]
    assert out.scores["default"]["cosine"]["triplet"]["all"]["n"] == 1

    # Clips dropped by the embedder (--on-error skip) are always a counted skip.
    out = Judged(dataset_path=tables(tmp_path / "u")).evaluate(
        VectorEmbedder(VECTORS, skip=["d"]), clips
    )
    assert out.details["counts"]["default"]["triplet"]["unembedded"] == 1
    assert out.details["counts"]["default"]["2afc"]["unembedded"] == 1
    assert out.details["examples"]["default"]["unembedded"] == [
        "triplets.csv line 5",
        "probes.csv line 3",
    ]


def test_bad_input_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"no trials found.*no triplets.csv in"):
        Judged(dataset_path=tmp_path).evaluate(VectorEmbedder(VECTORS), [clip("a"), clip("b")])
    with pytest.raises(ValueError, match=r"clip 'a' \(file /data/a.wav\) has one of 'positive'"):
        OnClips().evaluate(VectorEmbedder(VECTORS), [clip("a", positive="b"), clip("b")])
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "triplets.csv").write_text("anchor,pos,neg\na,b,c\n")
    with pytest.raises(ValueError, match=r"triplets.csv: needs a column named positive"):
        Judged(dataset_path=tmp_path / "bad").evaluate(VectorEmbedder(VECTORS), [clip("a")])
    zero = {**VECTORS, "b": [0.0, 0.0]}
    with pytest.raises(InvalidEmbeddingsError, match=r"zero vectors.*'b'"):
        Judged(dataset_path=tables(tmp_path / "z")).evaluate(
            VectorEmbedder(zero), [clip(k) for k in VECTORS]
        )
    with pytest.raises(ValueError, match=r"unknown distance"):
        Judged(distances=["manhattan"])
    with pytest.raises(ValueError, match=r"must read '<distance>:<kind>/<group>'"):

        class Unreadable(Judged):
            metadata = Judged.metadata.model_copy(update={"main_score": "cosine:accuracy"})


def test_table_readers_match_vocsim_headers(tmp_path: Path) -> None:
    root = tables(tmp_path / "r")
    triplets = read_triplet_table(root / "triplets.csv")
    assert triplets[0] == Trial("triplets.csv line 2", "triplet", "a", "b", "c", 0, "high")
    probes, unanswered = read_probe_table(root / "probes.csv")
    assert [(p.anchor, p.first, p.second, p.choice) for p in probes] == [
        ("a", "c", "b", 1),
        ("d", "a", "c", 0),
    ]
    assert unanswered == ["probes.csv line 4"]


def test_score_problems() -> None:
    report = {"accuracy": 0.5, "n": 4, "n_correct": 2.0, "n_ties": 0, "p_value": 0.6875}
    good = {"default": {"cosine": {"triplet": {"all": {**report, "ci95": [0.25, 0.75]}}}}}
    assert Judged.score_problems(good) == []
    assert Judged.score_problems({}) == []
    bad = {
        "default": {
            "manhattan": {},
            "cosine": {
                "triplets": {},
                "2afc": {
                    "all": {**report, "accuracy": 0.9, "p_value": 2.0},
                    "high": {**report, "n_ties": 9, "ci95": [0.8, 0.2], "extra": 1},
                },
            },
        }
    }
    assert Judged.score_problems(bad) == [
        "default.manhattan: unknown distance 'manhattan'; known: cosine, euclidean, spearman",
        "default.cosine.triplets: unknown trial kind; known: triplet, 2afc",
        "default.cosine.2afc.all.p_value: Input should be less than or equal to 1, not 2.0",
        "default.cosine.2afc.high.extra: unknown field",
    ]
    problems = Judged.score_problems(
        {"default": {"cosine": {"2afc": {"all": {**report, "accuracy": 0.9}}}}}
    )
    assert problems == ["default.cosine.2afc.all: accuracy 0.9 is not n_correct / n"]


def test_declared_tasks_and_benchmark() -> None:
    for cls in (AvianPerception, MockPerceptualAlignment):
        task = registry.tasks.create(cls.metadata.name)
        assert isinstance(task, cls)
        assert task.metadata.family == TaskFamily.PERCEPTUAL_ALIGNMENT
        assert parse_score_path(task.metadata.main_score) == ("cosine", "triplet/all")
    source = AvianPerception.metadata.dataset
    assert (source.kind, source.revision) == ("huggingface", "main")
    assert source.path == "anonymous-submission000/vocsim-applications-avian-perception"
    assert MockPerceptualAlignment.metadata.offline and not AvianPerception.metadata.offline
    bench = get_benchmark("AvianPerception")
    assert [(c.task, c.aggregate, c.higher_is_better) for c in bench.columns] == [
        ("AvianPerception", None, True)
    ]


def test_avian_trial_tables_are_not_fetched_offline() -> None:
    found, notes = AvianPerception().trial_tables()
    assert found == {}
    assert len(notes) == 2 and "triplets.csv not fetched from anonymous-submission000" in notes[0]


def test_avian_perception_on_a_hub_like_copy(tmp_path: Path) -> None:
    """The hub layout (parquet, original_name) plus VocSim's two tables, scored with log-mel."""
    rng = np.random.default_rng(0)
    t = np.arange(4000) / 16000
    rows = []
    for i, (name, freq) in enumerate(
        [("M1_1.wav", 800), ("M1_2.wav", 820), ("W5_1.wav", 3000), ("W5_2.wav", 3100)]
    ):
        wave = 0.3 * np.sin(2 * np.pi * freq * t) + 0.01 * rng.standard_normal(t.size)
        rows.append(
            {
                "index": i,
                "audio": (wave.astype(np.float32), 16000),
                "subset": "avian_perception",
                "speaker": name.split("_")[0],
                "label": name.split("_")[0],
                "original_name": name,
            }
        )
    root = write_hub_like(tmp_path / "avian", rows)
    tables(
        root,
        triplets="ID_String,Positive,Negative,Anchor,Cycle_Accuracy,Consistency,Margin_Type\n"
        "x,M1_2.wav,W5_1.wav,M1_1.wav,0.7,1.0,high\n"
        "x,W5_2.wav,M1_2.wav,W5_1.wav,0.7,1.0,high\n"
        "x,W5_2.wav,M1_2.wav,Gone_1.wav,0.7,1.0,low\n",
        probes="left,right,sound_id,ground_truth,decision,nPIT,choiceTot,acc_cycle\n"
        "M1_2.wav,W5_1.wav,M1_1.wav,probe,Left,1,1,0.9\n"
        "M1_2.wav,W5_1.wav,W5_2.wav,probe,NA,1,1,0.9\n",
    )
    task = AvianPerception(dataset_path=root, n_bootstrap=50)
    clips = task.load_data()
    assert [c.metadata["original_name"] for c in clips] == [r["original_name"] for r in rows]
    embedder = CachedEmbedder(registry.models.create("log-mel", pooling="mean_time"), None)
    out = task.evaluate(embedder, clips)
    assert out.main_score == 1.0
    assert out.scores["default"]["cosine"]["2afc"]["all"]["n"] == 1
    # The published trials name syllables the audio may lack: skipped and counted, as VocSim.
    assert out.details["counts"]["default"]["triplet"]["missing_members"] == 1
    assert "'Gone_1.wav'" in out.details["examples"]["default"]["missing_members"]
    assert out.details["trial_key"] == "original_name"
    assert AvianPerception.score_problems(out.scores) == []


def test_cli_mock_with_log_mel(tmp_path: Path) -> None:
    runner = CliRunner()
    listed = runner.invoke(app, ["list", "tasks", "--type", "perceptual_alignment", "--json"])
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert rows["MockPerceptualAlignment"]["offline"] and not rows["AvianPerception"]["offline"]

    args = ["evaluate", "--task", "MockPerceptualAlignment", "--model", "log-mel"]
    done = runner.invoke(app, [*args, "--output-dir", str(tmp_path), "--no-progress", "--no-flops"])
    assert done.exit_code == 0, done.stderr
    path = tmp_path / "log-mel" / "v1" / "MockPerceptualAlignment.json"
    result = load_result(path)
    main = result.scores["default"]["cosine"]["triplet"]["all"]
    assert result.main_score == main["accuracy"] and main["n"] == 36
    # The same call type is closer in log-mel space well above chance.
    assert main["accuracy"] > 0.6 and main["p_value"] < 0.05
    assert result.scores["default"]["cosine"]["2afc"]["all"]["accuracy"] > 0.6
    assert MockPerceptualAlignment.score_problems(result.scores) == []
    assert validate_file(path)[1] == []


def test_distances_match_the_metrics_engine() -> None:
    assert DISTANCES == DISTANCE_METRICS


def test_trial_tables_are_read_as_strictly_as_labels_csv(tmp_path: Path) -> None:
    """The sibling of labels.csv: a repeated column, a ragged row or an invisible character in
    a clip name is an error naming the file, line and column, not a silently other trial."""
    table = tmp_path / "triplets.csv"
    table.write_text("anchor,positive,negative\na,b,c\na\u200b,b,c\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"line 3, column 1 \('anchor'\): .*U\+200B"):
        read_triplet_table(table)
    table.write_text("anchor,anchor,positive,negative\na,a,b,c\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="columns 1 and 2: the column name 'anchor' appears"):
        read_triplet_table(table)
    table.write_text("anchor,positive,negative\na,b\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="line 2: 2 field"):
        read_triplet_table(table)
    table.write_text("anchor,positive,negative\r\n a ,b,c\r\n", encoding="utf-8")
    [trial] = read_triplet_table(table)  # ordinary spaces around a name are still trimmed
    assert (trial.anchor, trial.first, trial.second) == ("a", "b", "c")
