"""MSEB's reranking metrics: each query's candidates, ranked, scored against its reference texts.

A query has reference texts ``texts`` whose first, ``texts[0]``, is **the** reference (query
reranking: the true transcript, which is also the first candidate; salient-term reranking: the
top salient term), and an answer: its candidates ranked best first with their scores, or a
sentinel (:data:`~audiobench.metrics.mseb_conventions.INVALID_ANSWER`,
:data:`~audiobench.metrics.mseb_conventions.NO_RESPONSE`). ``normalize`` is the text
normaliser applied before counting word errors (MSEB: Whisper's English normaliser for English
locales, the basic one otherwise; :func:`audiobench.metrics.transcription.whisper_normalizer`).

Per query, for a ranked answer:

- ``map``: scikit-learn's ``average_precision_score`` of the candidates, a candidate relevant
  when it has **zero word errors** against ``texts[0]`` after normalisation, the ranking scores
  as scores (0 when nothing is relevant, as scikit-learn gives).
- ``ndcg``: scikit-learn's ``ndcg_score`` at k = 3 (ties averaged as scikit-learn does), a
  candidate's gain 1 when its text is one of ``texts`` (exact string). A query with one
  candidate (where scikit-learn refuses) scores its gain.
- ``mrr``: 1 / the rank of the exact string ``texts[0]`` among the first 10 candidates, else 0.
- ``wer``: the word errors of the top candidate against ``texts[0]`` (normalised), weighted by
  the reference's words: the mean is Σ errors / Σ reference words (corpus level).
- ``candidate_error_rate`` (MSEB's "CER"): 1 when the top candidate has any word error.

A sentinel answer scores ``wer`` against an empty hypothesis, ``candidate_error_rate`` 1, and
0 on the three ranking metrics; it counts in ``invalid_result_rate`` or ``no_result_rate``.
Means and stds are MSEB's (:func:`~audiobench.metrics.mseb_conventions.weighted_mean_and_std`).
Words are counted as MSEB counts them (:func:`~audiobench.metrics.mseb_conventions.split_words`,
Levenshtein over words).

Source: ``mseb/evaluators/reranking_evaluator.py``, ``mseb/metrics.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from audiobench.metrics.mseb_conventions import (
    INVALID_ANSWER,
    NO_RESPONSE,
    split_words,
    weighted_mean_and_std,
)
from audiobench.metrics.text_errors import edit_distance

__all__ = [
    "MRR_AT",
    "MSEB_RERANKING_METRICS",
    "NDCG_AT",
    "mseb_reranking_scores",
    "word_errors",
]

#: MSEB's cut-offs: MRR@10, NDCG@3.
MRR_AT = 10
NDCG_AT = 3
#: The metrics of :func:`mseb_reranking_scores`, each also with ``_std``.
MSEB_RERANKING_METRICS = (
    "map",
    "ndcg",
    "mrr",
    "wer",
    "candidate_error_rate",
    "invalid_result_rate",
    "no_result_rate",
)

#: A text normaliser, or None (texts counted as given).
Normalize = Callable[[str], str] | None
#: A ranked answer: (candidate text, score) pairs, best first; or a sentinel string.
RankedAnswer = Sequence[tuple[str, float]] | str


def word_errors(
    reference: str, hypothesis: str, normalize: Callable[[str], str] | None
) -> tuple[int, int]:
    """(word edits, reference words) of ``hypothesis`` against ``reference``, both normalised."""
    if normalize is not None:
        reference, hypothesis = normalize(reference), normalize(hypothesis)
    ref, hyp = split_words(reference), split_words(hypothesis)
    return edit_distance(ref, hyp), len(ref)


def _average_precision(relevant: list[bool], scores: list[float]) -> float:
    import warnings

    from sklearn.metrics import average_precision_score

    if not any(relevant):  # scikit-learn warns, then gives 0: no threshold recalls anything
        return 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(average_precision_score(relevant, scores))


def _ndcg(gains: list[bool], scores: list[float]) -> float:
    from sklearn.metrics import ndcg_score

    if len(gains) == 1:
        return float(gains[0])
    return float(ndcg_score([gains], [scores], k=NDCG_AT))


def mseb_reranking_scores(
    answers: Sequence[RankedAnswer],
    references: Sequence[Sequence[str]],
    *,
    normalize: Normalize | Sequence[Normalize] = None,
) -> dict[str, float]:
    """MSEB's reranking metrics over queries (module docstring): each of
    :data:`MSEB_RERANKING_METRICS` and its ``_std``.

    ``normalize`` is one normaliser for every query, or one per query (MSEB normalises each
    query by its own language); None counts the texts as given.

    Raises ValueError for mismatched lengths, an empty reference list, an empty ranked list,
    an unknown sentinel string, or references that have no words at all (WER undefined).
    """
    if len(answers) != len(references):
        raise ValueError(f"got {len(answers)} answers and {len(references)} reference lists")
    if not answers:
        raise ValueError("no queries to score")
    if normalize is None or callable(normalize):
        normalizers: list[Normalize] = [normalize] * len(answers)
    else:
        normalizers = list(normalize)
        if len(normalizers) != len(answers):
            raise ValueError(f"got {len(normalizers)} normalisers for {len(answers)} queries")
    values: dict[str, list[float]] = {name: [] for name in MSEB_RERANKING_METRICS}
    wer_weights: list[float] = []
    for position, (answer, texts) in enumerate(zip(answers, references, strict=True)):
        normalize_text = normalizers[position]
        if isinstance(texts, str) or not texts:
            raise ValueError(f"references[{position}] must be a non-empty list of texts")
        truth = texts[0]
        if isinstance(answer, str):
            if answer not in (INVALID_ANSWER, NO_RESPONSE):
                raise ValueError(
                    f"answers[{position}] is the string {answer!r}; a ranked list or one of "
                    f"{INVALID_ANSWER!r} (invalid), {NO_RESPONSE!r} (no response) is expected"
                )
            errors, words = word_errors(truth, "", normalize_text)
            for name, value in (("map", 0.0), ("ndcg", 0.0), ("mrr", 0.0)):
                values[name].append(value)
            values["wer"].append(float(errors))
            wer_weights.append(float(words))
            values["candidate_error_rate"].append(1.0)
            values["invalid_result_rate"].append(float(answer == INVALID_ANSWER))
            values["no_result_rate"].append(float(answer == NO_RESPONSE))
            continue
        if not answer:
            raise ValueError(f"answers[{position}] ranks no candidate")
        ranked = [text for text, _ in answer]
        scores = [float(score) for _, score in answer]
        counts = [word_errors(truth, text, normalize_text) for text in ranked]
        values["map"].append(_average_precision([e == 0 for e, _ in counts], scores))
        values["ndcg"].append(_ndcg([text in texts for text in ranked], scores))
        values["mrr"].append(
            next((1.0 / r for r, t in enumerate(ranked[:MRR_AT], start=1) if t == truth), 0.0)
        )
        errors, words = counts[0]
        values["wer"].append(float(errors))
        wer_weights.append(float(words))
        values["candidate_error_rate"].append(float(errors != 0))
        values["invalid_result_rate"].append(0.0)
        values["no_result_rate"].append(0.0)
    if sum(wer_weights) == 0:
        raise ValueError("every reference is empty after normalisation: WER is undefined")
    scores_out: dict[str, float] = {}
    for name, column in values.items():
        weights = wer_weights if name == "wer" else None
        mean, std = weighted_mean_and_std(np.asarray(column), weights)
        scores_out[name], scores_out[f"{name}_std"] = mean, std
    return scores_out
