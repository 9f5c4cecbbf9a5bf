"""Transcription metrics against the values MSEB's own evaluator gave on the same inputs.

The pinned values come from ``TranscriptionEvaluator.compute_metrics``
(``mseb/evaluators/transcription_evaluator.py``, MSEB commit ``a88af49``), run outside this
repository with jiwer 4.0.0 and openai-whisper's normalisers (20250625), on the inputs of
:mod:`tests.parity.mseb_inputs`. The arithmetic is the same (word edit counts, then MSEB's
weighted mean and std), so every key is compared exactly. The English spelling table is the
subset of Whisper's table the inputs use; MSEB's run used the full table.
"""

from __future__ import annotations

import pytest

from audiobench.metrics.transcription import transcription_scores, whisper_normalizer
from tests.parity import mseb_inputs

#: MSEB's values, key by key (``<metric>_std`` is the Score's ``std``).
MSEB_ENGLISH = {
    "WER": 0.22549019607843138,
    "WER_std": 0.2438379671047228,
    "SER": 0.7647058823529411,
    "SER_std": 0.42418250299576343,
    "NoResultRate": 0.029411764705882353,
    "NoResultRate_std": 0.16895772489817729,
    "UtteranceCount": 34.0,
    "WordCount": 204.0,
}
MSEB_BASIC = {
    "WER": 0.5789473684210527,
    "WER_std": 0.4166435820013304,
    "SER": 0.7142857142857143,
    "SER_std": 0.4517539514526257,
    "NoResultRate": 0.14285714285714285,
    "NoResultRate_std": 0.3499271061118826,
    "UtteranceCount": 7.0,
    "WordCount": 19.0,
}
#: A reference that is empty after normalisation ("[noise]") adds its insertions to the
#: numerator and no words to the denominator; its ratio enters the std with weight 0.
MSEB_EMPTY_REFERENCE = {
    "WER": 0.5,
    "WER_std": 0.5,
    "SER": 0.5,
    "SER_std": 0.5,
    "NoResultRate": 0.0,
    "NoResultRate_std": 0.0,
    "UtteranceCount": 2.0,
    "WordCount": 2.0,
}


def _scores(pairs: list[tuple[str, str]], locale: str) -> dict[str, float]:
    normalizer = whisper_normalizer(locale, english_spelling_mapping=mseb_inputs.SPELLING)
    result = transcription_scores(
        [ref for ref, _ in pairs], [hyp for _, hyp in pairs], normalizer=normalizer
    )
    return result.to_dict()


@pytest.mark.parametrize(
    ("pairs", "locale", "expected"),
    [
        (mseb_inputs.transcription_english(), "en_us", MSEB_ENGLISH),
        (mseb_inputs.transcription_basic(), "fi_fi", MSEB_BASIC),
        ([("[noise]", "hello"), ("a b", "a b")], "fi_fi", MSEB_EMPTY_REFERENCE),
    ],
    ids=["english", "basic", "empty-reference"],
)
def test_every_mseb_key_equals_mseb_exactly(
    pairs: list[tuple[str, str]], locale: str, expected: dict[str, float]
) -> None:
    ours = _scores(pairs, locale)
    assert {key: ours[key] for key in expected} == expected
    # the character error rate is ours alone, under its own name
    assert set(ours) - set(expected) == {"character_error_rate"}


def test_the_inputs_hold_mseb_edge_cases() -> None:
    """An empty and a missing hypothesis are in the English inputs, so the pins cover them."""
    hypotheses = [hyp for _, hyp in mseb_inputs.transcription_english()]
    assert "" in hypotheses and "NO_RESPONSE" in hypotheses
