"""MSEB's transcription metrics: WER, SER, no-result rate, and the character error rate."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audiobench.metrics import NO_RESPONSE, transcription_scores, whisper_normalizer


def _levenshtein(a: list[str], b: list[str]) -> int:
    """Explicit recursion with memoisation (not the row-vectorised DP under test)."""
    memo: dict[tuple[int, int], int] = {}

    def d(i: int, j: int) -> int:
        if i == 0 or j == 0:
            return i + j
        if (i, j) not in memo:
            memo[i, j] = min(
                d(i - 1, j) + 1, d(i, j - 1) + 1, d(i - 1, j - 1) + (a[i - 1] != b[j - 1])
            )
        return memo[i, j]

    return d(len(a), len(b))


def _brute_scores(refs: list[str], hyps: list[str]) -> dict[str, float]:
    errors, lengths, sentence, missing = [], [], [], []
    for ref, hyp in zip(refs, hyps, strict=True):
        gone = hyp == NO_RESPONSE
        r, h = ref.split(), ([] if gone else hyp.split())
        errors.append(_levenshtein(r, h))
        lengths.append(len(r))
        sentence.append(1.0 if gone or errors[-1] > 0 else 0.0)
        missing.append(1.0 if gone else 0.0)
    wer = sum(errors) / sum(lengths)
    spread = sum(n * ((e / n if n else e) - wer) ** 2 for e, n in zip(errors, lengths, strict=True))
    ser = sum(sentence) / len(sentence)
    return {
        "WER": wer,
        "WER_std": math.sqrt(spread / sum(lengths)),
        "SER": ser,
        "SER_std": math.sqrt(sum((s - ser) ** 2 for s in sentence) / len(sentence)),
        "NoResultRate": sum(missing) / len(missing),
        "WordCount": float(sum(lengths)),
    }


def test_hand_computed_corpus() -> None:
    refs = ["the cat sat", "hello world", "good morning all"]
    hyps = ["the bat sat down", NO_RESPONSE, "good morning all"]
    scores = transcription_scores(refs, hyps)
    # Utterance 1: cat→bat (S) + down (I) = 2 errors / 3 words; utterance 2 missing → scored
    # as empty: 2 deletions / 2 words; utterance 3 exact: 0 / 3.
    # WER = (2 + 2 + 0) / (3 + 2 + 3) = 0.5.
    assert scores.wer == 0.5
    # Ratios 2/3, 1, 0 weighted 3, 2, 3 around 0.5:
    # (3·(1/6)² + 2·(1/2)² + 3·(1/2)²) / 8 = (1/12 + 1/2 + 3/4) / 8 = (4/3) / 8 = 1/6.
    assert scores.wer_std == pytest.approx(math.sqrt(1 / 6))
    assert scores.ser == pytest.approx(2 / 3)  # utterances 1 and 2
    assert scores.ser_std == pytest.approx(math.sqrt(2 / 9))
    assert scores.no_result_rate == pytest.approx(1 / 3)
    assert (scores.utterance_count, scores.word_count) == (3, 8)
    assert scores.word_errors.tolist() == [2, 2, 0]
    assert scores.reference_words.tolist() == [3, 2, 3]
    # Characters: "the cat sat" → "the bat sat down": c→b and " down" = 1 + 5 = 6 edits;
    # "hello world" → "": 11; exact: 0. Reference characters 11 + 11 + 16 = 38.
    assert scores.character_errors.tolist() == [6, 11, 0]
    assert scores.character_error_rate == pytest.approx(17 / 38)
    assert scores.to_dict()["WER"] == 0.5
    assert "character_error_rate" in scores.to_dict()
    assert "CER" not in scores.to_dict()


def test_empty_prediction_is_all_deletions_and_a_sentence_error() -> None:
    scores = transcription_scores(["a b c d"], [""])
    assert (scores.wer, scores.ser, scores.no_result_rate) == (1.0, 1.0, 0.0)


def test_empty_reference_adds_insertions_only() -> None:
    # Utterance 2 has no reference words: its 2 insertions count, its length does not.
    scores = transcription_scores(["a b", ""], ["a b", "x y"])
    assert scores.wer == 1.0  # (0 + 2) / (2 + 0)
    assert scores.ser == 0.5
    # The zero-weight utterance carries no weight in the std: ratio 0 at weight 2 around 1.
    assert scores.wer_std == 1.0


def test_no_response_on_an_empty_reference_is_still_a_sentence_error() -> None:
    scores = transcription_scores(["a", ""], ["a", NO_RESPONSE])
    assert scores.wer == 0.0
    assert scores.ser == 0.5
    assert scores.no_result_rate == 0.5


def test_all_references_empty_is_an_error() -> None:
    with pytest.raises(ValueError, match="every reference is empty"):
        transcription_scores(["", " "], ["a", ""])


@pytest.mark.parametrize(
    ("refs", "hyps", "match"),
    [
        ("abc", ["abc"], "not a string"),
        (["a"], ["a", "b"], "1 references and 2 hypotheses"),
        ([], [], "no utterances"),
        (["a", 3], ["a", "b"], r"references\[1\]"),
    ],
)
def test_bad_input_is_a_clear_error(refs, hyps, match) -> None:
    with pytest.raises(ValueError, match=match):
        transcription_scores(refs, hyps)


@settings(max_examples=60, deadline=None)
@given(
    data=st.lists(
        st.tuples(
            st.lists(st.sampled_from("abcd"), min_size=0, max_size=6),
            st.one_of(
                st.lists(st.sampled_from("abcde"), min_size=0, max_size=6),
                st.just(None),
            ),
        ),
        min_size=1,
        max_size=8,
    ).filter(lambda d: any(ref for ref, _ in d))
)
def test_matches_brute_force(data) -> None:
    refs = [" ".join(ref) for ref, _ in data]
    hyps = [NO_RESPONSE if hyp is None else " ".join(hyp) for _, hyp in data]
    scores = transcription_scores(refs, hyps).to_dict()
    for key, value in _brute_scores(refs, hyps).items():
        assert scores[key] == pytest.approx(value, rel=1e-12, abs=1e-12), key


@settings(max_examples=30, deadline=None)
@given(
    refs=st.lists(st.text(alphabet="ab ", min_size=1, max_size=8), min_size=1, max_size=6),
    seed=st.integers(0, 1000),
)
def test_exact_hypotheses_score_zero_and_order_does_not_matter(refs, seed) -> None:
    if not any(r.split() for r in refs):
        refs = [*refs, "a"]
    assert transcription_scores(refs, refs).wer == 0.0
    hyps = [r[::-1] for r in refs]
    order = np.random.default_rng(seed).permutation(len(refs))
    forward = transcription_scores(refs, hyps)
    shuffled = transcription_scores([refs[i] for i in order], [hyps[i] for i in order])
    assert shuffled.wer == pytest.approx(forward.wer)
    assert shuffled.ser == pytest.approx(forward.ser)


def test_basic_normaliser_is_whispers_and_applies_to_both_sides() -> None:
    normalise = whisper_normalizer("ja_jp")
    # Punctuation becomes a space and case folds; "Hello, World!" → "hello world ".
    assert normalise("Hello, World!").split() == ["hello", "world"]
    scores = transcription_scores(["Hello, World!"], ["hello world"], normalizer=normalise)
    assert scores.wer == 0.0
    raw = transcription_scores(["Hello, World!"], ["hello world"])
    assert raw.wer == 1.0  # without normalisation both words differ


def test_english_normaliser_needs_the_spelling_table() -> None:
    with pytest.raises(ValueError, match="english_spelling_normalizer"):
        whisper_normalizer("en_us")
    normalise = whisper_normalizer("en_us", english_spelling_mapping={"colour": "color"})
    # Contractions expand, titles expand, British spelling maps through the table.
    assert normalise("Mr. Smith's colour").split() == ["mister", "smith", "is", "color"]
    assert whisper_normalizer("EN-GB", english_spelling_mapping={})("can't") == "can not"
    scores = transcription_scores(
        ["The colour, Mr. Smith."], ["the color mister smith"], normalizer=normalise
    )
    assert scores.wer == 0.0


def test_normaliser_must_return_text() -> None:
    with pytest.raises(ValueError, match="expected str"):
        transcription_scores(["a"], ["a"], normalizer=lambda s: 3)  # type: ignore[arg-type,return-value]
    with pytest.raises(ValueError, match="locale"):
        whisper_normalizer("")
