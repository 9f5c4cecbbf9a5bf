"""Salient-term segmentation: MSEB's IDF cascade over timed words, and its metrics."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import audiobench
from audiobench.audio import Clip, FileAudioRef
from audiobench.encoder import Encoder, ModelMeta, OutputKind
from audiobench.errors import DataError, OptionError, UnsuitableModelError
from audiobench.families import SegmentationTask
from audiobench.leaderboard.validate import validate_file
from audiobench.metrics.salient_terms import idf_table, normalize_token, read_idf_csv, top_terms
from audiobench.outputs import OutputType, SpeechInput, TextOutput, TimedTranscript, TimedWord
from audiobench.runner import CachedEmbedder
from audiobench.task import DatasetSource, TaskFamily, TaskMetadata
from tests.conftest import write_tone
from tests.families.test_transcription import FixedTranscriber

# -- the term extractor ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "token"),
    [(" London?", "london"), ("«Paris»", "paris"), ("end.", "end"), ("a,", "a"), ("?", "")],
)
def test_tokens_are_normalised_as_mseb_normalises_them(word: str, token: str) -> None:
    assert normalize_token(word) == token


def test_idf_table_is_ln_n_over_document_frequency() -> None:
    table = idf_table(["the cat sat", "the dog", "A cat, the cat."])
    assert table == pytest.approx(
        {
            "the": 0.0,
            "cat": math.log(3 / 2),
            "sat": math.log(3),
            "dog": math.log(3),
            "a": math.log(3),
        }
    )
    with pytest.raises(ValueError, match="at least one text"):
        idf_table([])


def test_idf_table_and_top_terms_match_a_brute_force_count() -> None:
    rng = np.random.default_rng(7)
    vocabulary = ["Alpha", "beta,", "gamma?", "delta.", "«eps»", "zeta"]
    for _ in range(20):
        texts = [
            " ".join(rng.choice(vocabulary, size=int(rng.integers(1, 7))))
            for _ in range(int(rng.integers(1, 9)))
        ]
        table = idf_table(texts)
        tokens = {normalize_token(w) for text in texts for w in text.split()} - {""}
        assert set(table) == tokens
        for token in tokens:
            df = sum(any(normalize_token(w) == token for w in text.split()) for text in texts)
            assert table[token] == pytest.approx(math.log(len(texts) / df), abs=0)
        words = texts[0].split()
        expected = sorted(
            ((normalize_token(w), table[normalize_token(w)], i) for i, w in enumerate(words)),
            key=lambda item: (-item[1], item[2]),
        )[:3]
        assert top_terms(words, table, 3) == expected


def test_top_terms_sort_by_idf_stably_and_keep_repeats() -> None:
    table = {"x": 2.0, "y": 1.0, "z": 2.0}
    assert top_terms(["y", "x", "w", "z", "x"], table, 3) == [
        ("x", 2.0, 1),
        ("z", 2.0, 3),
        ("x", 2.0, 4),
    ]
    assert top_terms(["y"], table, 3, confidence=0.5) == [("y", 0.5, 0)]
    with pytest.raises(ValueError, match="top_k"):
        top_terms(["x"], table, 0)


def test_idf_csv_is_read_and_refused_clearly(tmp_path: Path) -> None:
    good = tmp_path / "idf.csv"
    good.write_text("token,idf\nlondon,3.5\ntrain,2\n")
    assert read_idf_csv(good) == {"london": 3.5, "train": 2.0}
    bad = tmp_path / "bad.csv"
    bad.write_text("token,idf\nlondon,high\n")
    with pytest.raises(ValueError, match="line 2"):
        read_idf_csv(bad)
    (tmp_path / "cols.csv").write_text("word,score\na,1\n")
    with pytest.raises(ValueError, match="token and idf"):
        read_idf_csv(tmp_path / "cols.csv")


# -- the family on hand-made timed words -------------------------------------------------------


class FixedTimings(Encoder):
    """Answers each clip with the timed words given for its id."""

    meta = ModelMeta(
        name="fixed-timings", revision="v1", sample_rate=16000, output_kind=OutputKind.TEXT
    )
    produces = frozenset({OutputType.WORD_TIMINGS})

    def __init__(self, words: dict[str, list[tuple[str, float, float]]]) -> None:
        super().__init__()
        self.words = words

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        raise NotImplementedError

    def produce(self, output: OutputType, inputs: Sequence[SpeechInput]) -> list[TextOutput]:
        return [
            TimedTranscript(tuple(TimedWord(*w) for w in self.words[item.clip_id]))
            for item in inputs
        ]


REFERENCES = {
    "u1": [["london", 1.0, 1.4], ["train", 0.5, 0.9]],
    "u2": [["sky", 0.2, 0.5]],
}
WORDS = {
    "u1": [("the", 0.0, 0.4), ("train", 0.5, 0.9), ("to", 0.9, 1.0), ("London", 1.02, 1.41)],
    "u2": [("blue", 0.2, 0.5), ("sky.", 0.6, 0.9)],
}
TABLE = "token,idf\nlondon,3\ntrain,2\nsky,1\nblue,0.5\nthe,0.1\n"


def task_class(**options: object) -> type[SegmentationTask]:
    meta = TaskMetadata(
        name="TestSegmentation",
        family=TaskFamily.SEGMENTATION,
        description="test task",
        dataset=DatasetSource(kind="synthetic", path="tests"),
        main_score="ndcg",
    )
    return type(
        "TestSegmentation",
        (SegmentationTask,),
        {"metadata": meta, "options": SegmentationTask.Options(**options)},  # type: ignore[arg-type]
    )


def clips_of(tmp_path: Path) -> list[Clip]:
    return [
        Clip(
            id=clip_id,
            audio=FileAudioRef(write_tone(tmp_path / f"{clip_id}.wav", freq=300.0 + 80 * k)),
            text=" ".join(w for w, _, _ in WORDS[clip_id]),
            metadata={"salient_terms": json.dumps(REFERENCES[clip_id])},
        )
        for k, clip_id in enumerate(REFERENCES)
    ]


def test_cascade_terms_score_the_hand_computed_values(tmp_path: Path) -> None:
    (tmp_path / "idf.csv").write_text(TABLE)
    task = task_class(idf_table=str(tmp_path / "idf.csv"), top_k=2)()
    scores = task.evaluate(CachedEmbedder(FixedTimings(WORDS), None), clips_of(tmp_path))
    report = scores.scores["default"]
    # u1: london (1.02-1.41), train (0.5-0.9): both match term, rank and time (±0.05 s).
    # u2: sky (0.6-0.9) first, then blue (0.2-0.5): rank 0 right, time wrong; blue takes
    # the reference's time in the second pass.
    assert report["ndcg"] == 1.0
    assert report["num_segments"] == 3
    assert report["timestamps_and_embeddings_hits"] == 2
    assert report["timestamps_hits"] == 3
    assert report["embeddings_hits"] == 2
    assert report["timestamps_accuracy"] == 1.0
    assert report["embeddings_accuracy"] == pytest.approx(2 / 3)
    assert report["word_error_rate"] == pytest.approx(1 / 3)  # "sky blue" for "sky"
    # Scored by IDF: london 3 (hit), train 2 (hit), sky 1 (miss), blue 0.5 (miss).
    assert report["map"] == 1.0
    assert report["scored_predictions"] == 4


def test_the_idf_table_from_the_task_texts(tmp_path: Path) -> None:
    task = task_class(top_k=1)()
    scores = task.evaluate(CachedEmbedder(FixedTimings(WORDS), None), clips_of(tmp_path))
    # Two texts: every word is in one of them, IDF ln 2 for all; the first word wins.
    report = scores.scores["default"]
    assert report["num_segments"] == 3
    assert report["ndcg"] == 0.0  # "the" and "blue" are not the references' first terms


def test_missing_reference_terms_are_named(tmp_path: Path) -> None:
    clips = clips_of(tmp_path)
    clips[1] = Clip(id="u2", audio=clips[1].audio, text="blue sky")
    with pytest.raises(DataError, match="u2"):
        task_class()().evaluate(CachedEmbedder(FixedTimings(WORDS), None), clips)


def test_an_unreadable_idf_table_is_an_option_error(tmp_path: Path) -> None:
    task = task_class(idf_table=str(tmp_path / "absent.csv"))()
    with pytest.raises(OptionError, match="idf_table"):
        task.evaluate(CachedEmbedder(FixedTimings(WORDS), None), clips_of(tmp_path))


def test_a_transcriber_without_word_times_is_refused_first(tmp_path: Path) -> None:
    with pytest.raises(UnsuitableModelError, match="does not produce word_timings"):
        audiobench.evaluate(
            "MockSegmentation", FixedTranscriber({}), output_dir=tmp_path, progress=False
        )


def test_mock_task_with_true_word_times_finds_every_term(tmp_path: Path) -> None:
    (result,) = audiobench.evaluate(
        "MockSegmentation", "transcript-truth", output_dir=tmp_path, progress=False
    )
    assert result.main_score == 1.0
    for report in result.scores.values():
        assert report["timestamps_and_embeddings_accuracy"] == 1.0
        assert report["num_segments"] == 18
    parsed, problems = validate_file(tmp_path / "transcript-truth" / "v1" / "MockSegmentation.json")
    assert parsed is not None and problems == []
