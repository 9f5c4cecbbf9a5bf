"""The score-name helpers of :mod:`audiobench.reports`."""

from __future__ import annotations

import math

import pytest

from audiobench.reports import cutoff_of, finite_or_none, metric_names


def test_cutoff_of_reads_plain_positive_cutoffs() -> None:
    assert cutoff_of("hit@5", "hit@") == 5
    assert cutoff_of("top_10_accuracy", "top_", "_accuracy") == 10
    for name in ("hit@0", "hit@05", "hit@", "hit@x", "recall@5", "hit@²", "top_5_acc"):
        assert cutoff_of(name, "hit@") is None
    assert cutoff_of("top_5", "top_", "_accuracy") is None


def test_finite_or_none() -> None:
    assert finite_or_none(0.25) == 0.25
    assert [finite_or_none(v) for v in (None, math.nan, math.inf, -math.inf)] == [None] * 4


def test_metric_names_accepts_the_known_names_and_cutoffs() -> None:
    check = metric_names(("mrr", "map"), ("hit@", ""), ("top_", "_accuracy"))
    assert [check(n) for n in ("map", "hit@3", "top_5_accuracy")] == [
        "map",
        "hit@3",
        "top_5_accuracy",
    ]
    with pytest.raises(
        ValueError, match=r"unknown metric; known: mrr, map, hit@<k>, top_<k>_accuracy"
    ):
        check("hit@0")


def test_mean_summary_averages_what_the_reports_share() -> None:
    from audiobench.reports import KeyedReport, Report, Summary, mean_summary

    class Scores(KeyedReport):
        mrr: float | None
        wer: float | None = None
        nested: dict[str, float] | None = None

    class Means(Summary, KeyedReport):
        mrr: float | None
        wer: float | None = None
        nested: dict[str, float] | None = None
        n_subsets: int

    reports: dict[str, Report] = {
        "a": Scores.model_validate({"mrr": 0.5, "hit@5": 1.0}),
        "b": Scores.model_validate({"mrr": 0.25, "hit@5": None}),
    }
    means = mean_summary(Means, reports, nested={"x": 1.0})
    assert means.to_json() == {
        "subsets": ["a", "b"],
        "mrr": 0.375,
        "nested": {"x": 1.0},
        "n_subsets": 2,
        "hit@5": None,  # undefined in one subset: undefined in the mean
    }
