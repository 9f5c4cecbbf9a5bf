"""Generated inputs shared by the MSEB parity tests.

Each function returns plain Python / NumPy data built from a fixed seed, so that the values
MSEB's own evaluator code gave on exactly these inputs (run once, outside this repository,
against MSEB commit ``a88af49``) can be pinned in ``tests/parity/test_mseb_*.py``. The
inputs include MSEB's edge cases: empty and missing predictions, "No Answer" on both sides,
ties, and time differences on both sides of the ±0.05 s tolerance.
"""

from __future__ import annotations

import numpy as np

_WORDS = (
    "the", "cat", "sat", "on", "a", "mat", "while", "it", "rained", "over", "london", "and",
    "paris", "today", "we", "will", "meet", "at", "noon", "to", "discuss", "colour", "of", "the",
    "new", "blue", "car",
)  # fmt: skip

#: A few entries of Whisper's British → American spelling table (the full table ships with
#: every Whisper tokenizer as ``normalizer.json``); the inputs use no other British spelling.
SPELLING = {"colour": "color", "favourite": "favorite", "organise": "organize"}


def transcription_english() -> list[tuple[str, str]]:
    """(reference, hypothesis) pairs for an English locale: punctuation, case, contractions,
    spelled numbers, British spellings, tabs, an empty and a missing hypothesis."""
    pairs = [
        ("The cat sat on the mat.", "the cat sat on the mat"),
        ("It's twenty five past ten, Mr. Smith!", "its 25 past 10 mister smith"),
        ("My favourite colour is blue.", "my favorite color is blue"),
        ("We don't know where they went.", "we do not know where they want"),
        ("Organise the meeting at noon", ""),
        ("Hello world", "NO_RESPONSE"),
        ("one two three four", "one\ttwo three four five"),
        ("a b c", "a  b   c"),
        ("Paris is in France", "paris is is in france today"),
    ]
    rng = np.random.default_rng(2025)
    for _ in range(25):
        ref = [str(w) for w in rng.choice(_WORDS, size=int(rng.integers(3, 12)))]
        hyp = list(ref)
        for _ in range(int(rng.integers(0, 4))):
            op = int(rng.integers(0, 3))
            if op == 0 and hyp:
                hyp[int(rng.integers(0, len(hyp)))] = str(rng.choice(_WORDS))
            elif op == 1 and hyp:
                del hyp[int(rng.integers(0, len(hyp)))]
            else:
                hyp.insert(int(rng.integers(0, len(hyp) + 1)), str(rng.choice(_WORDS)))
        pairs.append((" ".join(ref).capitalize() + ".", " ".join(hyp)))
    return pairs


def transcription_basic() -> list[tuple[str, str]]:
    """(reference, hypothesis) pairs for a non-English locale (Whisper's basic normaliser):
    diacritics, brackets, symbols, text without spaces."""
    return [
        ("Hyvää huomenta, Helsinki!", "hyvää huomenta helsinki"),
        ("Kävelin kauppaan [melu] eilen.", "kävelin kauppaan eilen"),
        ("Hinta on 5 € (viisi euroa).", "hinta on 5 viisi euroa"),
        ("今日は良い天気です。", "今日はいい天気です"),
        ("Äiti ja isä", "aiti ja isa"),
        ("Yksi kaksi kolme", "NO_RESPONSE"),
        ("Tämä on testi", ""),
    ]


#: (term, start, end) reference segments and predictions, hand-made around the boundaries.
#: abs(0.5 - 0.55) = 0.050000000000000044 > 0.05 (a miss), abs(0.25 - 0.3) =
#: 0.04999999999999999 (a hit), abs(1.0 - 1.05) = 0.050000000000000044 (a miss).
Segment = tuple[str, float, float]
ScoredSegment = tuple[str, float, float, float]


def segmentation_handmade() -> tuple[list[list[Segment]], list[object]]:
    """References and predictions (a list of scored segments, a list of unscored
    ``(term, start, end)`` segments, ``""`` or ``"NO_RESPONSE"``) per utterance."""
    references: list[list[Segment]] = [
        [("London", 0.25, 0.6), ("Paris", 1.0, 1.4), ("noon", 2.0, 2.3)],
        [("blue car", 0.5, 1.0), ("colour", 1.2, 1.5)],
        [("meet", 0.1, 0.3), ("meet", 0.4, 0.6)],
        [("rained", 3.0, 3.5)],
        [("today", 0.0, 0.5), ("we", 0.6, 0.7)],
        [("discuss", 1.0, 1.5)],
        [],
        [("cat", 0.2, 0.4), ("mat", 0.9, 1.2), ("sat", 0.5, 0.8)],
    ]
    predictions: list[object] = [
        # exact, then a time miss at +0.05 (start), then a hit at exactly −0.05 in float
        [("london", 0.3, 0.65, 0.9), ("PARIS", 1.05, 1.4, 0.9), ("noon", 1.95, 2.25, 0.5)],
        # multi-word term, order swapped (NDCG 0, hits on term), a time-only match
        [("colour", 1.2, 1.5, 0.7), ("blue car", 0.55, 1.0, 0.7), ("red", 1.2, 1.5, 0.2)],
        # duplicated term: greedy takes the first unused prediction for each reference
        [("meet", 0.4, 0.6, 0.8), ("meet", 0.1, 0.3, 0.6), ("meet", 0.1, 0.3, 0.6)],
        "",
        "NO_RESPONSE",
        # unscored (text prediction): no part in mAP
        [("discuss", 1.02, 1.48), ("again", 2.0, 2.1)],
        # reference without terms: predictions are false positives for mAP
        [("ghost", 0.0, 0.1, 0.95)],
        [("sat", 0.5, 0.8, 0.4), ("cat", 0.2, 0.4, 0.4), ("mat", 0.9, 1.25, 0.4)],
    ]
    return references, predictions


def segmentation_random(seed: int = 7, n: int = 40) -> tuple[list[list[Segment]], list[object]]:
    """Random utterances: times on a 0.01 s grid jittered by multiples of 0.01 s up to
    ±0.07 s (so many differences sit on the tolerance), scores rounded to one decimal (ties)."""
    rng = np.random.default_rng(seed)
    vocab = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    references: list[list[Segment]] = []
    predictions: list[object] = []
    for u in range(n):
        k = int(rng.integers(1, 5))
        starts = np.sort(rng.integers(0, 300, size=k)) / 100
        ref = [
            (str(rng.choice(vocab)), float(s), float(round(s + rng.integers(10, 60) / 100, 2)))
            for s in starts
        ]
        references.append(ref)
        if u % 13 == 5:
            predictions.append("NO_RESPONSE")
            continue
        pred: list[object] = []
        for term, start, end in ref:
            if rng.random() < 0.15:
                continue
            word = term if rng.random() < 0.75 else str(rng.choice(vocab))
            word = word.upper() if rng.random() < 0.2 else word
            shift = int(rng.integers(-7, 8)) / 100
            pred.append(
                (word, round(start + shift, 2), round(end + shift, 2), round(rng.random(), 1))
            )
        if rng.random() < 0.3:
            pred.append((str(rng.choice(vocab)), 0.5, 0.9, round(rng.random(), 1)))
        order = rng.permutation(len(pred)) if rng.random() < 0.3 else np.arange(len(pred))
        predictions.append([pred[int(i)] for i in order])
    return references, predictions


def reasoning_scores(
    seed: int = 11, n: int = 60, dim: int = 8
) -> tuple[np.ndarray, list[np.ndarray], list[list[str]], list[str]]:
    """Float32 question embeddings, per example float32 span embeddings (some without spans)
    and span texts, and the reference answers (about a third "No Answer")."""
    rng = np.random.default_rng(seed)
    queries = rng.normal(size=(n, dim)).astype(np.float32)
    spans: list[np.ndarray] = []
    texts: list[list[str]] = []
    answers: list[str] = []
    for i in range(n):
        k = 0 if i % 17 == 3 else int(rng.integers(1, 6))
        emb = rng.normal(size=(k, dim)).astype(np.float32)
        words = [f"span {i} word{j}" for j in range(k)]
        if k and rng.random() < 0.6:
            pick = int(rng.integers(0, k))
            emb[pick] = queries[i] * np.float32(0.8) + emb[pick] * np.float32(0.3)
            answers.append(words[pick] if rng.random() < 0.8 else f"span {i} other")
        else:
            answers.append("No Answer")
        spans.append(emb)
        texts.append(words)
    return queries, spans, texts, answers


def reasoning_f1_pairs() -> list[tuple[str, str]]:
    """(reference, prediction) pairs over MSEB's F1 edge cases."""
    return [
        ("No Answer", "No Answer"),
        ("No Answer", "the tower"),
        ("the tower", "No Answer"),
        ("the tower", ""),
        ("No Answer", ""),
        ("the tower", "NO_RESPONSE"),
        ("The Eiffel Tower.", "eiffel tower"),
        ("a a b", "a b b"),
        ("in paris france", "paris"),
        ("one two", "one two"),
        ("x y z", "q"),
    ]


def stability_continuous(
    seed: int = 3, n: int = 6, variants: int = 5, dim: int = 4
) -> tuple[list[np.ndarray], list[list[np.ndarray]]]:
    """Float32 frame sequences: references and variants of other lengths (padding), one
    all-zero sequence, one single-frame reference."""
    rng = np.random.default_rng(seed)
    refs: list[np.ndarray] = []
    outs: list[list[np.ndarray]] = []
    for u in range(n):
        t = 1 if u == 4 else int(rng.integers(3, 9))
        ref = rng.normal(size=(t, dim)).astype(np.float32)
        vs = []
        for v in range(variants):
            tv = max(1, t + int(rng.integers(-2, 3)))
            hyp = rng.normal(scale=0.3, size=(tv, dim)).astype(np.float32)
            hyp[: min(t, tv)] += ref[: min(t, tv)]
            if u == 2 and v == 1:
                hyp = np.zeros((tv, dim), dtype=np.float32)
            vs.append(hyp)
        refs.append(ref)
        outs.append(vs)
    return refs, outs


def stability_discrete(
    seed: int = 5, n: int = 8, variants: int = 5
) -> tuple[list[object], list[list[object]]]:
    """Token sequences (int arrays) and texts; one empty reference (left out, as in MSEB)."""
    rng = np.random.default_rng(seed)
    refs: list[object] = []
    outs: list[list[object]] = []
    for u in range(n):
        t = int(rng.integers(2, 10))
        ref = rng.integers(0, 6, size=t)
        vs: list[object] = []
        for _ in range(variants):
            hyp = [int(x) for x in ref]
            for _ in range(int(rng.integers(0, 3))):
                op = int(rng.integers(0, 3))
                if op == 0:
                    hyp[int(rng.integers(0, len(hyp)))] = int(rng.integers(0, 6))
                elif op == 1 and len(hyp) > 1:
                    del hyp[int(rng.integers(0, len(hyp)))]
                else:
                    hyp.insert(int(rng.integers(0, len(hyp) + 1)), int(rng.integers(0, 6)))
            vs.append(np.array(hyp))
        if u == 6:  # texts, as an ASR encoder's outputs
            refs.append(" ".join(f"w{x}" for x in ref))
            outs.append([" ".join(f"w{x}" for x in h) for h in vs])
        elif u == 7:  # an empty reference: every pair is left out
            refs.append(np.array([], dtype=np.int64))
            outs.append(vs)
        else:
            refs.append(ref)
            outs.append(vs)
    return refs, outs
