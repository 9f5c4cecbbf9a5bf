"""Edit distance, WER and CER."""

from __future__ import annotations

import numpy as np
import pytest

from audiobench.metrics import (
    candidate_error_rate,
    character_error_rate,
    closest_references,
    edit_distance,
    multi_reference_error_rates,
    normalize_text,
    word_error_rate,
    word_error_rate_details,
)


def test_hand_computed_edit_distances() -> None:
    assert edit_distance("kitten", "sitting") == 3  # k->s, e->i, +g
    assert edit_distance("flaw", "lawn") == 2  # -f, +n
    assert edit_distance("", "abc") == 3
    assert edit_distance("abc", "") == 3
    assert edit_distance("", "") == 0
    assert edit_distance("same", "same") == 0
    # Words: one substitution (cat -> bat) and one insertion (down).
    assert edit_distance(["the", "cat", "sat"], ["the", "bat", "sat", "down"]) == 2


def _reference_distance(a: str, b: str) -> int:
    """The full dynamic-programming table."""
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        table[i][0] = i
    for j in range(len(b) + 1):
        table[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            table[i][j] = min(
                table[i - 1][j] + 1,
                table[i][j - 1] + 1,
                table[i - 1][j - 1] + (a[i - 1] != b[j - 1]),
            )
    return table[len(a)][len(b)]


def test_edit_distance_matches_the_full_table() -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):
        a = "".join(rng.choice(list("abc"), size=int(rng.integers(0, 12))))
        b = "".join(rng.choice(list("abc"), size=int(rng.integers(0, 12))))
        assert edit_distance(a, b) == _reference_distance(a, b)
        assert edit_distance(b, a) == edit_distance(a, b)


def test_corpus_level_rates() -> None:
    refs = ["the cat sat", "hello world"]
    hyps = ["the bat sat down", "hello world"]
    # Σ edits / Σ reference words = (2 + 0) / (3 + 2), not the mean of 2/3 and 0.
    assert word_error_rate(refs, hyps) == pytest.approx(2 / 5)
    details = word_error_rate_details(refs, hyps)
    assert details.extras == {"edits": 2, "reference_length": 5}
    assert details.n_evaluated == 2
    # Characters: "the cat sat" -> "the bat sat down": 1 substitution + 5 insertions
    # (" down"); "hello world" exact. (1 + 5) / (11 + 11).
    assert character_error_rate(refs, hyps) == pytest.approx(6 / 22)
    assert character_error_rate("abc", "abd") == pytest.approx(1 / 3)
    # Insertions can push the rate above 1.
    assert word_error_rate("a", "a b c") == pytest.approx(2.0)
    # An empty reference is fine while the total reference length is positive.
    assert word_error_rate(["", "a b"], ["x", "a b"]) == pytest.approx(1 / 2)


def test_normalisation() -> None:
    assert normalize_text("  Hello,   World!\n") == "hello, world!"
    assert normalize_text("Hello, World!", strip_punctuation=True) == "hello world"
    assert normalize_text("Don't «stop» — now…", strip_punctuation=True) == "dont stop now"
    # Symbols ($ +) stay; % is Unicode punctuation (Po) and goes.
    assert normalize_text("Cost: $5 + 10%", strip_punctuation=True) == "cost $5 + 10"
    assert normalize_text("ABC", lowercase=False) == "ABC"
    # Words "hello," and "world!" differ from "hello" and "world" unless punctuation goes.
    assert word_error_rate("Hello, World!", "hello world") == 1.0
    assert word_error_rate("Hello, World!", "hello world", strip_punctuation=True) == 0.0
    assert word_error_rate("Hello world", "hello world", lowercase=False) == pytest.approx(1 / 2)
    # Whitespace collapses; CER counts the single spaces between words: "a b" (3) vs "ab".
    assert character_error_rate("  the   cat ", "the cat") == 0.0
    assert character_error_rate("a b", "ab") == pytest.approx(1 / 3)


def test_errors() -> None:
    with pytest.raises(ValueError, match="2 references and 1 hypotheses"):
        word_error_rate(["a", "b"], ["a"])
    with pytest.raises(ValueError, match="both as strings or both as sequences"):
        word_error_rate("a", ["a"])
    with pytest.raises(ValueError, match=r"hypotheses\[1\] must be a string"):
        word_error_rate(["a", "b"], ["a", None])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="every reference is empty"):
        character_error_rate(["", "  "], ["a", "b"])
    with pytest.raises(ValueError, match="every reference is empty"):
        word_error_rate("!!", "x", strip_punctuation=True)
    with pytest.raises(ValueError, match="no texts"):
        word_error_rate([], [])
    with pytest.raises(ValueError, match="hashable"):
        edit_distance([["a"]], [["b"]])
    with pytest.raises(ValueError, match="must be a string"):
        normalize_text(3)  # type: ignore[arg-type]


def test_candidate_error_rate_hand_computed_and_brute_force() -> None:
    refs = ["the dog barks", "rain falls", "A cat.", ""]
    hyps = ["a dog barks", "rain  falls", "a cat", ""]
    # Word errors: 1, 0, 1 ("cat." vs "cat" without stripping punctuation), 0.
    assert candidate_error_rate(refs, hyps) == pytest.approx(2 / 4)
    assert candidate_error_rate(refs, hyps, strip_punctuation=True) == pytest.approx(1 / 4)
    assert candidate_error_rate("x y", "x y") == 0.0
    # Brute force: a pair is an error exactly when its own WER is positive (or, for an
    # empty reference, when the hypothesis has words).
    rng = np.random.default_rng(3)
    words = ["a", "b", "c"]
    pairs = [
        (
            " ".join(rng.choice(words, int(rng.integers(1, 4)))),
            " ".join(rng.choice(words, int(rng.integers(0, 4)))),
        )
        for _ in range(200)
    ]
    expected = np.mean([word_error_rate(r, h) > 0 for r, h in pairs])
    assert candidate_error_rate([r for r, _ in pairs], [h for _, h in pairs]) == expected
    with pytest.raises(ValueError, match="empty"):
        candidate_error_rate([], [])


def test_closest_positive_is_the_reference() -> None:
    refs = closest_references([["a cat sleeps", "a dog barks loudly"]], ["a dog barks"], "word")
    assert refs == ["a dog barks loudly"]
    refs = closest_references([["ab", "xy"], ["same"]], ["xb", "same"], "char")
    assert refs == ["ab", "same"]  # tie (1 edit each): the first positive
    with pytest.raises(ValueError, match="without references"):
        closest_references([[]], ["x"], "word")


def test_multi_reference_rates_use_the_closest_reference_per_unit() -> None:
    refs = [["a dog barks loudly", "a cat"], ["Same."]]
    hyps = ["a dog barks", "same"]
    rates = multi_reference_error_rates(refs, hyps, strip_punctuation=True)
    # Words: "a dog barks loudly" (1 deletion of 4 words) and "same" (0 of 1).
    assert rates["wer"] == pytest.approx(1 / 5)
    assert rates["candidate_error_rate"] == pytest.approx(1 / 2)
    # Characters: the closest by characters may differ from the closest by words.
    by_char = closest_references(refs, hyps, "char", strip_punctuation=True)
    expected = character_error_rate(by_char, hyps, strip_punctuation=True)
    assert rates["char_error_rate"] == pytest.approx(expected)
