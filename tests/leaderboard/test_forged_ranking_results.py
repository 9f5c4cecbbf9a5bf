"""Issue 22, item 1 (siblings): retrieval, reranking, zero-shot and reconstruction reports
refuse a count or score edited away from the others; ``results validate`` names the field.

Each case starts from a valid file (a stored run of the offline mock task, or a hand-made
report whose numbers agree), checks that it validates, edits one number and checks the one
line of the refusal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from audiobench.leaderboard.validate import validate_file
from tests.leaderboard.conftest import hand_made_result

V1 = Path(__file__).parents[1] / "trust" / "v1_results" / "log-mel" / "v1"


def _lines(path: Path) -> list[str]:
    result, problems = validate_file(path, allow_unpinned=True)
    assert (result is None) == bool(problems)
    return [p.line() for p in problems]


def _stored(task: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((V1 / f"{task}.json").read_text())
    return data


def _write(root: Path, data: dict[str, Any], task: str) -> Path:
    path = root / "log-mel" / "v1" / f"{task}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


def _hand_made(task: str, report: dict[str, Any], main: str, tmp_path: Path) -> dict[str, Any]:
    path = hand_made_result(task, "log-mel", report[main], report=report).save(tmp_path / "good")
    assert _lines(path) == []
    data: dict[str, Any] = json.loads(path.read_text())
    return data


# ---------------------------------------------------------------------------- retrieval

_RETRIEVAL = "MockRetrieval"


def test_a_stored_retrieval_result_validates(tmp_path: Path) -> None:
    assert _lines(_write(tmp_path, _stored(_RETRIEVAL), _RETRIEVAL)) == []


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        # hit@k is a mean of 0/1 outcomes over the 16 queries.
        ("hit@5", 0.95, "hit@5: 0.95 is not a share of n_queries = 16 items (k/16; nearest "
         "0.9375)"),
        ("n_queries", 17, "hit@1: 0.75 is not a share of n_queries = 17 items (k/17; nearest "
         f"{13 / 17!r})"),
        # hit@1 is 0.75: at most 0.75 + 0.25 / 2 of the reciprocal ranks' mean.
        ("mrr", 0.99, "mrr (0.99) exceeds what hit@1 allows (0.875)"),
        ("mrr", 0.5, "hit@1 (0.75) exceeds mrr (0.5)"),
        ("recall@5", 0.75, "recall@5 (0.75) exceeds recall@10 (0.71875)"),
        ("hit@10", 0.875, "hit@5 (0.9375) exceeds hit@10 (0.875)"),
        # With 8 documents a cut-off of 10 ranks them all: every query hits.
        ("n_documents", 8, "recall@10: 0.71875, but k = 10 ranks all n_documents = 8 documents "
         "(1.0)"),
    ],
    ids=["hit-share", "n_queries", "mrr-high", "mrr-low", "recall-order", "hit-order", "n_docs"],
)  # fmt: skip
def test_an_edited_retrieval_count_or_score_is_refused(
    tmp_path: Path, field: str, value: float, message: str
) -> None:
    data = _stored(_RETRIEVAL)
    data["scores"]["default"][field] = value
    if field == data["main_score_name"]:
        data["main_score"] = value  # the headline edited in step
    path = _write(tmp_path, data, _RETRIEVAL)
    assert _lines(path) == [f"{path}: scores.default: {message}"]


# ---------------------------------------------------------------------------- reranking

_RERANKING = "MockAudioReranking"


def test_a_stored_reranking_result_validates(tmp_path: Path) -> None:
    assert _lines(_write(tmp_path, _stored(_RERANKING), _RERANKING)) == []


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("n_skipped", 3, "n_skipped: 3 is not n_skipped_empty + n_skipped_no_relevant (0)"),
        ("n_candidates", 20, "n_candidates: 20 is below n_queries (24); every evaluated query "
         "has a candidate"),
        # 24 queries of 8 candidates: a reciprocal rank is at least 1/8.
        ("mrr", 0.1, "n_queries / n_candidates (0.125) exceeds mrr (0.1)"),
        ("n_queries", 0, "n_queries: 0, but metrics are defined"),
    ],
    ids=["n_skipped", "n_candidates", "mrr-floor", "n_queries"],
)  # fmt: skip
def test_an_edited_reranking_count_or_score_is_refused(
    tmp_path: Path, field: str, value: float, message: str
) -> None:
    data = _stored(_RERANKING)
    assert data["scores"]["default"]["n_queries"] == 24
    assert data["scores"]["default"]["n_candidates"] == 24 * 8
    data["scores"]["default"][field] = value
    path = _write(tmp_path, data, _RERANKING)
    assert _lines(path) == [f"{path}: scores.default: {message}"]


def test_text_reranking_error_rates_come_together_and_are_shares(tmp_path: Path) -> None:
    report = {
        "map": 0.75,
        "mrr": 0.75,
        "ndcg": 0.8,
        "ndcg@10": 0.8,
        "wer": 0.5,
        "candidate_error_rate": 0.5,
        "char_error_rate": 0.25,
        "n_queries": 4,
        "n_skipped": 0,
        "n_skipped_empty": 0,
        "n_skipped_no_relevant": 0,
        "n_candidates": 24,
        "n_queries_unembedded": 0,
        "n_candidates_unembedded": 0,
    }
    data = _hand_made("MockReranking", report, "map", tmp_path)
    data["scores"]["default"]["candidate_error_rate"] = 0.6
    path = _write(tmp_path / "share", data, "MockReranking")
    assert _lines(path) == [
        f"{path}: scores.default: candidate_error_rate: 0.6 is not a share of n_queries = 4 "
        "items (k/4; nearest 0.5)"
    ]
    data["scores"]["default"]["candidate_error_rate"] = None
    path = _write(tmp_path / "together", data, "MockReranking")
    assert _lines(path) == [
        f"{path}: scores.default: char_error_rate, wer: the three error rates come together"
    ]


# ---------------------------------------------------------------------------- zero-shot

_ZERO_SHOT_REPORT = {
    "accuracy": 0.4,
    "balanced_accuracy": 0.4,
    "f1_macro": 0.35,
    "top_5_accuracy": 0.7,
    "n_samples": 30,
    "n_classes": 6,
    "n_unembedded": 0,
}


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("accuracy", 0.41, "accuracy: 0.41 is not a share of n_samples = 30 items (k/30; nearest "
         f"{12 / 30!r})"),
        ("n_samples", 31, "accuracy: 0.4 is not a share of n_samples = 31 items (k/31; nearest "
         f"{12 / 31!r})"),
        ("top_5_accuracy", 0.3, "accuracy (0.4) exceeds top_5_accuracy (0.3)"),
        ("n_classes", 5, "top_5_accuracy: reported with n_classes = 5 (only when k < n_classes)"),
        ("n_classes", 1, "n_classes: 1; zero-shot needs two classes"),
    ],
    ids=["accuracy", "n_samples", "top-k", "n_classes", "one-class"],
)  # fmt: skip
def test_an_edited_zero_shot_count_or_score_is_refused(
    tmp_path: Path, field: str, value: float, message: str
) -> None:
    task = "MockZeroShotClassification"
    data = _hand_made(task, dict(_ZERO_SHOT_REPORT), "accuracy", tmp_path)
    data["scores"]["default"][field] = value
    if field == "accuracy":
        data["main_score"] = value
    path = _write(tmp_path / "forged", data, task)
    where = "scores.default" + ("" if message.startswith(".") else ": ")
    assert _lines(path) == [f"{path}: {where}{message}"]


# ---------------------------------------------------------------------------- reconstruction

_RECONSTRUCTION_REPORT = {
    "fad": 1.0,
    "kad": 0.01,
    "kid_poly": -0.01,
    "embedding_mse": {
        "mean": 1.0,
        "std": 0.5,
        "median": 1.0,
        "min": 0.5,
        "max": 1.5,
        "n_evaluated": 3,
        "n_skipped": 0,
    },
    "si_sdr": {"mean": 5.0, "std": 1.0, "median": 5.0, "min": 4.0, "max": 6.0, "n_capped": 0},
    "log_mel_distance": {"mean": 1.0, "std": 0.0, "median": 1.0, "min": 1.0, "max": 1.0},
    "bits_per_second": 1500.0,
    "length_matching": {"n_trimmed": 2, "n_padded": 1, "max_padded_samples": 40},
    "kad_bandwidth": 3.0,
    "n_frames_reference": 60,
    "n_frames_reconstructed": 60,
    "n_clips": 3,
}


@pytest.mark.parametrize(
    ("keys", "value", "message"),
    [
        (("length_matching", "n_trimmed"), 5,
         "length_matching.n_trimmed + n_padded: 6 exceeds n_clips (3)"),
        (("embedding_mse", "n_skipped"), 1,
         "embedding_mse: n_evaluated + n_skipped (3 + 1) is not n_clips (3)"),
        (("n_frames_reconstructed",), 61,
         "n_frames_reconstructed: 61 is not n_frames_reference (60), though every clip's two "
         "frame sequences have one length (embedding_mse.n_skipped is 0)"),
        (("n_frames_reference",), 2,
         "n_frames_reference: 2 is below n_clips (3); a clip has a frame"),
        (("length_matching", "max_padded_samples"), 0,
         "length_matching.max_padded_samples: 0 with n_padded = 1"),
        (("si_sdr", "n_capped"), 1,
         ".si_sdr: n_capped: 1 clip(s) clipped to ±100 dB, but min and max (4.0, 6.0) lie inside"),
        (("si_sdr", "min"), 5.5, ".si_sdr: min (5.5) exceeds mean (5.0)"),
        (("log_mel_distance", "std"), 0.5,
         ".log_mel_distance: std (0.5) exceeds half of max - min (0.0)"),
    ],
    ids=["trimmed", "mse-counts", "frames", "frames-below", "padded", "capped", "min", "std"],
)  # fmt: skip
def test_an_edited_reconstruction_count_or_score_is_refused(
    tmp_path: Path, keys: tuple[str, ...], value: float, message: str
) -> None:
    task = "MockReconstruction"
    report = json.loads(json.dumps(_RECONSTRUCTION_REPORT))
    data = _hand_made(task, report, "fad", tmp_path)
    node = data["scores"]["default"]
    for key in keys[:-1]:
        node = node[key]
    node[keys[-1]] = value
    path = _write(tmp_path / "forged", data, task)
    where = "scores.default" + ("" if message.startswith(".") else ": ")
    assert _lines(path) == [f"{path}: {where}{message}"]


# ---------------------------------------------------------------------------- under MTEB's protocol

_TREC = {
    "n_samples": 4,
    "n_documents": 12,
    "hit_rate_at_1": 0.5,
    "hit_rate_at_5": 0.75,
    "recall_at_1": 0.25,
    "recall_at_5": 0.5,
    "mrr_at_1": 0.5,
    "mrr_at_5": 0.625,
    "precision_at_1": 0.5,
    "map_at_1000": 0.55,
}


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("hit_rate_at_5", 0.7, "hit_rate_at_5: 0.7 is not a share of n_samples = 4 items (k/4; "
         "nearest 0.75)"),
        ("n_samples", 3, "hit_rate_at_1: 0.5 is not a share of n_samples = 3 items (k/3; nearest "
         f"{2 / 3!r})"),
        ("recall_at_5", 0.8, "recall_at_5 (0.8) exceeds hit_rate_at_5 (0.75)"),
        ("mrr_at_5", 0.4, "mrr_at_1 (0.5) exceeds mrr_at_5 (0.4)"),
        ("precision_at_1", 0.25, "precision_at_1: 0.25 is not hit_rate_at_1 (0.5)"),
    ],
    ids=["hit-share", "n_samples", "recall", "mrr-order", "precision"],
)  # fmt: skip
def test_an_edited_reference_protocol_ranking_report_is_refused(
    tmp_path: Path, field: str, value: float, message: str
) -> None:
    task = "GTZANAudioReranking"
    data = _hand_made(task, dict(_TREC), "map_at_1000", tmp_path)
    data["scores"]["default"][field] = value
    path = _write(tmp_path / "forged", data, task)
    assert _lines(path) == [f"{path}: scores.default: {message}"]


def test_an_edited_reference_protocol_zero_shot_accuracy_is_refused(tmp_path: Path) -> None:
    task = "RavdessZeroshot"
    data = _hand_made(task, {"n_samples": 16, "accuracy": 0.5}, "accuracy", tmp_path)
    data["scores"]["default"]["accuracy"] = data["main_score"] = 0.51
    path = _write(tmp_path / "forged", data, task)
    assert _lines(path) == [
        f"{path}: scores.default: accuracy: 0.51 is not a share of n_samples = 16 items "
        "(k/16; nearest 0.5)"
    ]
