"""Generated speech-like utterances, and the span-QA and stability datasets built on them.

:func:`render_utterance` turns a text into a speech-like waveform, one voiced syllable per
word: a glottal-like harmonic source on a falling pitch contour, shaped by two formants chosen
from the word's first vowel, with a noise burst where the word starts with a consonant and a
short pause between words. The words decide the sound (the same word always gets the same
formants, and its pitch and duration are drawn from the word and the utterance's seed), so it
is not intelligible speech, but it has speech's rhythm and spectral shape, and different texts
sound different.

:func:`write_span_qa` writes spoken questions about generated passages (the reasoning mock);
:func:`write_utterances` writes spoken sentences (the stability mock). The same seed always
gives the same files, bit for bit.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import soundfile as sf

from audiobench.families.ranking_inputs import LIST_SEPARATOR
from audiobench.metrics.mseb_conventions import NO_ANSWER
from audiobench.synthetic.writer import write_labels

__all__ = ["render_utterance", "span_qa_examples", "write_span_qa", "write_utterances"]

#: (F1, F2) in Hz of the vowel a word's sound takes (its first vowel letter).
_FORMANTS = {
    "a": (730.0, 1090.0),
    "e": (530.0, 1840.0),
    "i": (270.0, 2290.0),
    "o": (570.0, 840.0),
    "u": (300.0, 870.0),
    "y": (440.0, 1020.0),
}
_VOWELS = "aeiouy"


def _word_seed(word: str, seed: int) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(word.lower().encode())])


def _syllable(word: str, f0: float, sample_rate: int, rng: np.random.Generator) -> np.ndarray:
    """One voiced syllable for ``word``: harmonics under two formant peaks, enveloped."""
    vowel = next((ch for ch in word.lower() if ch in _VOWELS), "a")
    f1, f2 = _FORMANTS[vowel]
    duration = 0.10 + 0.03 * min(len(word), 8) + float(rng.uniform(0.0, 0.04))
    n = int(duration * sample_rate)
    t = np.arange(n) / sample_rate
    contour = f0 * (1.0 - 0.15 * t / duration)  # a falling pitch, as in a statement
    phase = 2.0 * np.pi * np.cumsum(contour) / sample_rate
    wave = np.zeros(n)
    for k in range(1, int(4000.0 / f0) + 1):
        freq = k * f0
        gain = sum(1.0 / (1.0 + ((freq - f) / (0.12 * f + 60.0)) ** 2) for f in (f1, f2)) / k
        wave += gain * np.sin(k * phase)
    attack = min(n, int(0.02 * sample_rate))
    envelope = np.ones(n)
    envelope[:attack] = np.linspace(0.0, 1.0, attack)
    envelope *= np.exp(-2.5 * t / duration)
    wave *= envelope
    if word[:1].lower() not in _VOWELS:  # a consonant onset: a short noise burst
        burst = min(n, int(0.03 * sample_rate))
        wave[:burst] += 0.3 * rng.standard_normal(burst) * np.linspace(1.0, 0.0, burst)
    return wave


def render_utterance(text: str, *, seed: int, sample_rate: int = 16000) -> np.ndarray:
    """A speech-like float32 waveform of ``text`` (module docstring), peak −3 dBFS."""
    words = text.split()
    if not words:
        raise ValueError("cannot speak an empty text")
    rng = np.random.default_rng([seed, zlib.crc32(text.encode())])
    base = float(rng.uniform(100.0, 220.0))  # the speaker's pitch
    pause = np.zeros(int(0.04 * sample_rate))
    parts = [pause]
    for i, word in enumerate(words):
        f0 = base * (1.0 - 0.2 * i / len(words)) * float(_word_seed(word, seed).uniform(0.9, 1.1))
        parts += [_syllable(word, f0, sample_rate, rng), pause]
    wave = np.concatenate(parts)
    wave += 1e-3 * rng.standard_normal(wave.size)  # a noise floor
    peak = float(np.max(np.abs(wave)))
    return np.asarray(wave / peak * 10 ** (-3 / 20), dtype=np.float32)


_PEOPLE = ("Mara Quill", "Tobin Reyes", "Ilse Varga", "Omar Lindqvist", "Wen Ashby", "Kofi Dunmore")
_SHOPS = ("bakery", "bookshop", "forge", "tea house", "boatyard", "print shop")
_CITIES = ("Port Alder", "Kestrel Bay", "Lowmoor", "Saint Veil", "Brackenridge", "Ostvik")
_YEARS = ("1887", "1902", "1931", "1958", "1974", "1996")
_GOODS = ("rye bread", "old maps", "iron gates", "smoked tea", "small sloops", "posters")
_CUSTOMERS = ("fishermen", "students", "farmers", "sailors", "travellers", "teachers")


def span_qa_examples(n_passages: int, seed: int) -> list[dict[str, str]]:
    """Generated passages, each with one answerable and one unanswerable question.

    Each passage names a person, a shop, a city, a year, goods and customers; its candidate
    spans are those phrases as they appear in it. One question asks for one of them (the
    reference is that span); the other asks for something the passage does not say (the
    reference is "No Answer"). Returns rows with ``id``, ``text`` (the question), ``title``,
    ``context``, ``spans`` (joined by ``|``) and ``answer``.
    """
    rng = np.random.default_rng(seed)
    rows: list[dict[str, str]] = []
    for p in range(n_passages):
        person, shop, city, year, goods, customers = (
            str(options[int(rng.integers(len(options)))])
            for options in (_PEOPLE, _SHOPS, _CITIES, _YEARS, _GOODS, _CUSTOMERS)
        )
        context = (
            f"{person} opened a {shop} in {city} in {year}. "
            f"It sold {goods} to {customers} for many years."
        )
        spans = [person, city, year, goods, customers]
        answerable = (
            (f"who opened a {shop} in {city}", person),
            (f"where did {person} open a {shop}", city),
            (f"when did {person} open the {shop}", year),
            (f"what did the {shop} in {city} sell", goods),
            (f"who bought {goods} from {person}", customers),
        )
        unanswerable = (
            f"who painted the {shop} in {city}",
            f"how much did {person} pay for the {shop}",
            f"when did the {shop} in {city} close",
        )
        question, answer = answerable[int(rng.integers(len(answerable)))]
        order = [spans[k] for k in rng.permutation(len(spans))]
        for kind, (text, reference) in (
            ("a", (question, answer)),
            ("u", (unanswerable[int(rng.integers(len(unanswerable)))], NO_ANSWER)),
        ):
            rows.append(
                {
                    "id": f"q{p:03d}{kind}",
                    "text": text,
                    "title": f"The {shop} of {city}",
                    "context": context,
                    "spans": LIST_SEPARATOR.join(order),
                    "answer": reference,
                }
            )
    return rows


def write_span_qa(directory: Path, *, seed: int, sample_rate: int = 16000, n_passages: int) -> int:
    """Spoken questions about generated passages (:func:`span_qa_examples`), one WAV each.

    ``labels.csv``: file, id, text, title, context, spans, answer. Returns the clip count.
    """
    rows = span_qa_examples(n_passages, seed)
    for i, row in enumerate(rows):  # a seed per clip: a repeated question sounds different
        wave = render_utterance(row["text"], seed=seed + i, sample_rate=sample_rate)
        row["file"] = f"{row['id']}.wav"
        sf.write(directory / row["file"], wave, sample_rate, subtype="PCM_16")
    write_labels(directory, rows, ("file", "id", "text", "title", "context", "spans", "answer"))
    return len(rows)


_WORDS = (
    "river", "lantern", "copper", "meadow", "harbour", "window", "thunder", "orchard",
    "pebble", "violet", "candle", "island", "falcon", "morning", "silver", "garden",
)  # fmt: skip


def write_utterances(
    directory: Path, *, seed: int, sample_rate: int = 16000, n_utterances: int, n_words: int
) -> int:
    """``n_utterances`` spoken sentences of ``n_words`` generated words each, one WAV each.

    ``labels.csv``: file, id, text. Returns the clip count.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_utterances):
        text = " ".join(str(_WORDS[int(k)]) for k in rng.integers(len(_WORDS), size=n_words))
        clip_id = f"utt{i:03d}"
        wave = render_utterance(text, seed=seed + i, sample_rate=sample_rate)
        sf.write(directory / f"{clip_id}.wav", wave, sample_rate, subtype="PCM_16")
        rows.append({"file": f"{clip_id}.wav", "id": clip_id, "text": text})
    write_labels(directory, rows, ("file", "id", "text"))
    return len(rows)
