"""Transcription metrics as MSEB computes them, and the character error rate beside them.

Source: ``mseb/evaluators/transcription_evaluator.py`` and ``mseb/metrics.py``
(``compute_word_errors``), read at commit ``a88af49``.

**Normalisation.** Both the reference and the hypothesis go through the same normaliser before
counting. MSEB uses Whisper's ``EnglishTextNormalizer`` for English locales (language part
``en``) and ``BasicTextNormalizer`` otherwise; :func:`whisper_normalizer` returns the ones
transformers ships. The English one needs Whisper's British → American spelling table, which
ships with every Whisper tokenizer (``normalizer.json``;
``WhisperTokenizer.from_pretrained(name).english_spelling_normalizer``).

**Word errors** of one utterance: e_i = the Levenshtein distance between the word sequences
(S + D + I), n_i = the number of reference words (H + S + D), words split as
:func:`~audiobench.metrics.mseb_conventions.split_words` says.

**Metrics** over utterances i = 1..N:

- ``WER`` (MSEB's main transcription score) = Σ e_i / Σ n_i, corpus-level, ≥ 0 and may exceed
  1; its std is MSEB's weighted std of e_i / n_i with weights n_i
  (:func:`~audiobench.metrics.mseb_conventions.weighted_mean_and_std`). Utterances whose
  reference is empty after normalisation add their insertions to the numerator and nothing
  to the denominator.
- ``SER`` (sentence error rate) = mean_i [e_i > 0], std the population std.
- ``NoResultRate`` = share of hypotheses equal to ``"NO_RESPONSE"``. Such a hypothesis is
  scored as an empty transcript (every reference word deleted) **and** counts as a sentence
  error even when the reference is empty.
- ``UtteranceCount`` = N, ``WordCount`` = Σ n_i.

**Character error rate** (not an MSEB metric: MSEB defines one in ``mseb/metrics.py`` but no
evaluator reports it, and never for ja/ko where WER over unsegmented text is a sentence error
rate in disguise): Σ character edits / Σ reference characters over the same normalised texts,
the words re-joined with single spaces (spaces between words count, as in
:func:`~audiobench.metrics.text_errors.character_error_rate`). It is reported as
``character_error_rate``, never under one of MSEB's names.

Deliberate differences: none in the values. Where MSEB divides by zero (every reference empty
after normalisation, or no utterances) this module raises a ValueError instead of returning
inf/NaN; a locale written with a hyphen (``en-US``) is treated as English, where MSEB only
splits on ``_``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from audiobench.metrics.mseb_conventions import (
    NO_RESPONSE,
    _weighted_mean_and_std,
    check_texts,
    split_words,
)
from audiobench.metrics.text_errors import edit_distance

__all__ = [
    "Normalizer",
    "TranscriptionScores",
    "transcription_scores",
    "whisper_normalizer",
]

#: A text normaliser: a callable str -> str applied to references and hypotheses alike.
Normalizer = Callable[[str], str]


def whisper_normalizer(
    locale: str, *, english_spelling_mapping: Mapping[str, str] | None = None
) -> Normalizer:
    """The Whisper normaliser MSEB applies for ``locale`` (``en_us``, ``ja_jp``, ...).

    English (language part ``en``, before the first ``_`` or ``-``, any case): transformers'
    ``EnglishTextNormalizer`` with ``english_spelling_mapping``, which is then required (pass
    a Whisper tokenizer's ``english_spelling_normalizer``; ``{}`` skips the spelling step,
    which departs from MSEB on British spellings). Any other language:
    ``BasicTextNormalizer()`` (lowercase, bracketed words removed, symbols and punctuation
    replaced by spaces, whitespace collapsed).
    """
    if not isinstance(locale, str) or not locale.strip():
        raise ValueError(f"locale must be a non-empty string such as 'en_us', got {locale!r}")
    from transformers.models.whisper.english_normalizer import (
        BasicTextNormalizer,
        EnglishTextNormalizer,
    )

    language = re.split(r"[_-]", locale.strip(), maxsplit=1)[0].lower()
    if language != "en":
        return BasicTextNormalizer()
    if english_spelling_mapping is None:
        raise ValueError(
            f"locale {locale!r} is English: MSEB's English normaliser needs Whisper's "
            "British→American spelling table; pass english_spelling_mapping="
            "WhisperTokenizer.from_pretrained(<whisper checkpoint>).english_spelling_normalizer "
            "(or {} to skip spelling standardisation, which differs from MSEB)"
        )
    return EnglishTextNormalizer(dict(english_spelling_mapping))  # type: ignore[no-untyped-call]


@dataclass(frozen=True, eq=False)
class TranscriptionScores:
    """MSEB's transcription metrics, with the per-utterance counts they are built from.

    Attributes
    ----------
    wer, wer_std:
        ``WER`` = Σ word errors / Σ reference words and MSEB's weighted std.
    ser, ser_std:
        ``SER``: share of utterances with at least one word error, and its population std.
    no_result_rate, no_result_rate_std:
        ``NoResultRate``: share of ``"NO_RESPONSE"`` hypotheses, and its population std.
    utterance_count, word_count:
        ``UtteranceCount`` (N) and ``WordCount`` (Σ reference words).
    character_error_rate:
        Σ character edits / Σ reference characters (not an MSEB metric).
    word_errors, reference_words, character_errors, reference_characters:
        Per-utterance int64 counts (e_i, n_i and their character twins), for slicing by
        subset or recording environment without recomputing edit distances.
    """

    wer: float
    wer_std: float
    ser: float
    ser_std: float
    no_result_rate: float
    no_result_rate_std: float
    utterance_count: int
    word_count: int
    character_error_rate: float
    word_errors: np.ndarray = field(repr=False)
    reference_words: np.ndarray = field(repr=False)
    character_errors: np.ndarray = field(repr=False)
    reference_characters: np.ndarray = field(repr=False)

    def to_dict(self) -> dict[str, float]:
        """The metrics under MSEB's names (``WER``, ``SER``, ...) plus
        ``character_error_rate``; stds as ``<name>_std``."""
        return {
            "WER": self.wer,
            "WER_std": self.wer_std,
            "SER": self.ser,
            "SER_std": self.ser_std,
            "NoResultRate": self.no_result_rate,
            "NoResultRate_std": self.no_result_rate_std,
            "UtteranceCount": float(self.utterance_count),
            "WordCount": float(self.word_count),
            "character_error_rate": self.character_error_rate,
        }


def _transcription_scores(
    references: list[str], hypotheses: list[str], normalizer: Normalizer | None
) -> TranscriptionScores:
    n = len(references)
    word_errors = np.zeros(n, dtype=np.int64)
    reference_words = np.zeros(n, dtype=np.int64)
    char_errors = np.zeros(n, dtype=np.int64)
    reference_chars = np.zeros(n, dtype=np.int64)
    sentence_errors = np.zeros(n, dtype=np.float64)
    no_response = np.zeros(n, dtype=np.float64)
    for i, (reference, hypothesis) in enumerate(zip(references, hypotheses, strict=True)):
        missing = hypothesis == NO_RESPONSE
        if missing:
            hypothesis = ""  # MSEB scores a missing answer as an empty transcript
        if normalizer is not None:
            reference, hypothesis = normalizer(reference), normalizer(hypothesis)
        ref_words, hyp_words = split_words(reference), split_words(hypothesis)
        word_errors[i] = edit_distance(ref_words, hyp_words)
        reference_words[i] = len(ref_words)
        ref_text, hyp_text = " ".join(ref_words), " ".join(hyp_words)
        char_errors[i] = edit_distance(ref_text, hyp_text)
        reference_chars[i] = len(ref_text)
        sentence_errors[i] = 1.0 if missing else float(word_errors[i] != 0)
        no_response[i] = float(missing)
    if int(reference_words.sum()) == 0:
        raise ValueError(
            "every reference is empty after normalisation: the word error rate is undefined"
        )
    ones = np.ones(n, dtype=np.float64)
    wer, wer_std = _weighted_mean_and_std(
        word_errors.astype(np.float64), reference_words.astype(np.float64)
    )
    ser, ser_std = _weighted_mean_and_std(sentence_errors, ones)
    no_result, no_result_std = _weighted_mean_and_std(no_response, ones)
    return TranscriptionScores(
        wer=wer,
        wer_std=wer_std,
        ser=ser,
        ser_std=ser_std,
        no_result_rate=no_result,
        no_result_rate_std=no_result_std,
        utterance_count=n,
        word_count=int(reference_words.sum()),
        character_error_rate=int(char_errors.sum()) / int(reference_chars.sum()),
        word_errors=word_errors,
        reference_words=reference_words,
        character_errors=char_errors,
        reference_characters=reference_chars,
    )


def transcription_scores(
    references: Sequence[str],
    hypotheses: Sequence[str],
    *,
    normalizer: Normalizer | None = None,
) -> TranscriptionScores:
    """MSEB's transcription metrics (``WER``, ``SER``, ``NoResultRate``, counts) and the
    character error rate, over utterances (module docstring for the definitions).

    Parameters
    ----------
    references:
        The true transcript of each utterance.
    hypotheses:
        The transcript produced for each utterance, in the same order; ``"NO_RESPONSE"``
        marks a missing one.
    normalizer:
        Applied to both texts before counting; MSEB's is ``whisper_normalizer(locale, ...)``.
        None counts the texts as given.

    Raises
    ------
    ValueError
        If the inputs are not equal-length sequences of strings, are empty, or every
        reference is empty after normalisation (WER undefined), or the normaliser does not
        return strings.
    """
    refs = check_texts(references, "references", "utterance")
    hyps = check_texts(hypotheses, "hypotheses", "utterance")
    if len(refs) != len(hyps):
        raise ValueError(f"got {len(refs)} references and {len(hyps)} hypotheses")
    if not refs:
        raise ValueError("no utterances: references and hypotheses are empty")
    if normalizer is not None:
        if not callable(normalizer):
            raise ValueError("normalizer must be a callable str -> str, or None")
        probe = normalizer(refs[0])
        if not isinstance(probe, str):
            raise ValueError(f"normalizer returned {type(probe).__name__}, expected str")
    return _transcription_scores(refs, hyps, normalizer)
