"""``protocol=mseb`` for retrieval, reranking, classification and clustering: the evaluators
end to end on hand-made clips (dot products, noise slices, missing predictions, raw label
texts, SVQ clustering targets), main-score checks, and the offline mocks from the CLI."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from audiobench.errors import DataError, OptionError
from audiobench.evaluators import evaluator_for, protocols_for
from audiobench.families import RetrievalTask
from audiobench.families.classification import ClassificationTask
from audiobench.families.clustering import ClusteringTask
from audiobench.families.reranking import RerankingTask
from audiobench.families.zero_shot_classification import ZeroShotClassificationTask
from audiobench.metrics.mseb_conventions import NO_RESPONSE
from audiobench.metrics.mseb_retrieval import mseb_retrieval_scores
from audiobench.results import load_result
from audiobench.task import TaskFamily
from tests.families.test_retrieval import (
    FAST,
    FakeEmbedder,
    clip,
    meta,
    run_cli,
    tiny_clap,  # noqa: F401 - a session fixture used below
)

# --- retrieval -------------------------------------------------------------------------------


class Retrieval(RetrievalTask):
    options = RetrievalTask.Options(protocol="mseb", document_modality="text")
    metadata = meta("TestMsebRetrieval", TaskFamily.RETRIEVAL, "mrr")


DOCS = {"first doc": [1.0, 0.0], "second doc": [0.0, 1.0], "third doc": [5.0, 5.0]}


def _retrieval_clips() -> list:  # type: ignore[type-arg]
    docs = [clip(f"d{i}", split="corpus", text=t) for i, t in enumerate(DOCS)]
    queries = [
        clip("q0", split="query", relevant=["d0"], environment="clean"),
        clip("q1", split="query", relevant=["d1"], environment="clean"),
        clip("q2", split="query", relevant=["d2"], environment="traffic_noise"),
        clip("q3", split="query", relevant=["d0"], environment="traffic_noise"),
    ]
    return docs + queries


QUERIES = {"q0": [1.0, 0.1], "q1": [0.0, 1.0], "q2": [0.3, 0.2], "q3": [-1.0, 0.0]}


def test_retrieval_ranks_by_raw_dot_product_with_slices() -> None:
    result = Retrieval().evaluate(FakeEmbedder(QUERIES, DOCS), _retrieval_clips())
    report = result.scores["default"]
    # Dot products: the long "third doc" (d2) comes first for q0, q1 and q2; q3 ranks d1, d0, d2.
    ranks = {"q0": 2, "q1": 2, "q2": 1, "q3": 2}
    assert report["mrr"] == pytest.approx(np.mean([1 / r for r in ranks.values()]))
    assert report["em"] == 0.25 and report["recall_at_10"] == 1.0
    assert report["n_queries"] == 4 and report["n_documents"] == 3
    assert report["mean_encoding_size_bytes"] == 8.0  # two float32 numbers
    clean = report["environments"]["clean"]
    assert clean["mrr"] == 0.5 and clean["n_queries"] == 2
    assert set(report["environments"]) == {"clean", "traffic_noise"}
    assert result.details["evaluator"] == {"name": "mseb", "version": "1"}
    assert result.main_score == report["mrr"]


def test_retrieval_unembedded_query_is_a_missing_response() -> None:
    clips = _retrieval_clips()
    result = Retrieval().evaluate(FakeEmbedder(QUERIES, DOCS, skip=["q1"]), clips)
    report = result.scores["default"]
    assert report["n_queries"] == 4 and report["n_queries_unembedded"] == 1
    assert report["no_result_rate"] == 0.25
    expected = mseb_retrieval_scores(
        [[2, 0, 1], NO_RESPONSE, [2, 0, 1], [1, 0, 2]], [{0}, {1}, {2}, {0}]
    )
    assert report["mrr"] == pytest.approx(expected["mrr"])
    assert report["environments"]["clean"]["no_result_rate"] == 0.5


def test_retrieval_without_environments_has_no_slices() -> None:
    clips = [c for c in _retrieval_clips() if c.split == "corpus"] + [
        clip("q0", split="query", relevant=["d0"])
    ]
    report = Retrieval().evaluate(FakeEmbedder(QUERIES, DOCS), clips).scores["default"]
    assert "environments" not in report


def test_retrieval_main_scores_under_mseb() -> None:
    evaluator = evaluator_for(TaskFamily.RETRIEVAL, "mseb")
    evaluator.check_main_score(Retrieval, ("ndcg_at_10",))
    with pytest.raises(ValueError, match="not one of"):
        evaluator.check_main_score(Retrieval, ("hit@1",))
    for family in ("retrieval", "reranking", "classification", "zero_shot_classification"):
        assert "mseb" in protocols_for(family)
    assert "mseb" in protocols_for("clustering")


# --- reranking -------------------------------------------------------------------------------


class Reranking(RerankingTask):
    options = RerankingTask.Options(protocol="mseb")
    metadata = meta("TestMsebReranking", TaskFamily.RERANKING, "map")


class EnglishReranking(RerankingTask):
    """As an MSEB reranking task declares its locale and spelling table."""

    class Options(RerankingTask.Options):
        locale: str | None = "en_us"
        spelling_table: str = "none"

    options = Options(protocol="mseb")
    metadata = meta("TestMsebEnglishReranking", TaskFamily.RERANKING, "map")


TEXTS = {"don't go": [1.0, 0.0], "do not go": [2.0, 0.0], "go home": [0.0, 1.0]}


def _reranking_clips() -> list:  # type: ignore[type-arg]
    candidates = ["don't go", "do not go", "go home"]
    return [
        clip("a", candidates=candidates, positives=candidates, environment="clean"),
        clip("b", candidates=candidates, positives=candidates, environment="media_noise"),
    ]


def test_reranking_reference_is_the_first_positive_and_the_locale_normalises() -> None:
    audio = {"a": [1.0, 0.0], "b": [0.0, 1.0]}
    basic = Reranking().evaluate(FakeEmbedder(audio, TEXTS), _reranking_clips())
    english = EnglishReranking().evaluate(FakeEmbedder(audio, TEXTS), _reranking_clips())
    # "a" ranks "do not go" first: a word error under the basic normaliser, none in English.
    assert basic.scores["default"]["environments"]["clean"]["candidate_error_rate"] == 1.0
    assert english.scores["default"]["environments"]["clean"]["candidate_error_rate"] == 0.0
    assert basic.details["normalizer_used"] == {"default": "basic (default)"}
    assert english.details["normalizer_used"] == {"default": "english (en_us)"}
    # MRR: the exact string "don't go" at rank 2 for "a"; "b" ranks "go home" first, then
    # "don't go" (its tie with "do not go" goes to the earlier candidate).
    assert english.scores["default"]["mrr"] == pytest.approx(0.5)


def test_reranking_query_without_positives_is_refused() -> None:
    clips = [clip("a", candidates=["go home", "don't go"])]
    with pytest.raises(DataError, match="first positive"):
        Reranking().evaluate(FakeEmbedder({"a": [1.0, 0.0]}, TEXTS), clips)


# --- classification --------------------------------------------------------------------------


class ZeroShot(ZeroShotClassificationTask):
    options = ZeroShotClassificationTask.Options(protocol="mseb", classes=("dog_bark", "rain"))
    metadata = meta("TestMsebZeroShot", TaskFamily.ZERO_SHOT_CLASSIFICATION, "accuracy")


LABELS = {"dog_bark": [10.0, 0.0], "rain": [0.0, 1.0]}


def _label_vector(text: str) -> list[float]:
    return LABELS.get(text, [1.0, 1.0])  # the family's prompts: embedded, not scored


def test_zero_shot_scores_raw_labels_by_dot_product() -> None:
    # Cosine would pick "rain" for c1; the raw dot product picks the long "dog_bark" vector.
    audio = {"c0": [1.0, 0.0], "c1": [0.2, 1.0]}
    clips = [
        clip("c0", label="dog_bark", environment="clean"),
        clip("c1", label="rain", environment="clean"),
    ]
    embedder = FakeEmbedder(audio, _label_vector)
    report = ZeroShot().evaluate(embedder, clips).scores["default"]
    assert report["accuracy"] == 0.5 and report["n_classes"] == 2
    assert ["dog_bark", "rain"] in embedder.text_calls  # no prompt, underscores kept
    assert report["environments"]["clean"]["accuracy"] == 0.5
    assert "map" not in report


class MultiLabel(ClassificationTask):
    options = ClassificationTask.Options(protocol="mseb", multilabel=True)
    metadata = meta("TestMsebMultiLabel", TaskFamily.CLASSIFICATION, "map")


def test_classification_family_multi_label_under_mseb() -> None:
    labels = {"a": [1.0, 0.0], "b": [0.0, 1.0]}
    audio = {"c0": [0.9, 0.1], "c1": [0.1, 0.9], "c2": [0.6, 0.6]}
    clips = [clip("c0", label="a"), clip("c1", label="b"), clip("c2", label="a,b")]
    report = MultiLabel().evaluate(FakeEmbedder(audio, labels), clips).scores["default"]
    assert report["subset_accuracy"] == 1.0 and report["map"] == 1.0
    assert report["hamming_loss"] == 0.0 and "accuracy" not in report
    # Its main score is MSEB's: audiobench's probes report '<probe>:map' instead.
    with pytest.raises(OptionError, match="it is reported under protocol 'mseb'"):
        MultiLabel.resolve_options({"protocol": "audiobench"})


def test_classification_needs_a_text_tower() -> None:
    with pytest.raises(ValueError, match="class labels"):
        MultiLabel.check_encoder(FakeEmbedder({}).encoder)  # type: ignore[arg-type]


# --- clustering ------------------------------------------------------------------------------


class Clustering(ClusteringTask):
    options = ClusteringTask.Options(protocol="mseb", seeds=(3,))
    metadata = meta("TestMsebClustering", TaskFamily.CLUSTERING, "v_measure")


def _clustering_clips(lacking: str | None = None) -> tuple[dict, list]:  # type: ignore[type-arg]
    rng = np.random.default_rng(0)
    audio, clips = {}, []
    for i in range(24):
        group = i % 3
        audio[f"s{i}"] = (np.eye(3)[group] * 10 + rng.standard_normal(3) * 0.1).tolist()
        targets = {"speaker_gender": ["f", "m"][i % 2], "speaker_age": str(20 + group)}
        if f"s{i}" == lacking:
            targets.pop("speaker_age")
        clips.append(clip(f"s{i}", label=f"g{group}", speaker_id=f"spk{group}", **targets))
    return audio, clips


def test_clustering_once_seeded_with_svq_targets() -> None:
    audio, clips = _clustering_clips()
    result = Clustering().evaluate(FakeEmbedder(audio), clips)
    report = result.scores["default"]
    assert report["v_measure"] == pytest.approx(1.0) and report["seed"] == 3
    assert report["targets"]["speaker_age"] == pytest.approx(1.0)
    assert report["targets"]["speaker_id"] == pytest.approx(1.0)
    assert report["targets"]["speaker_gender"] < 0.1  # gender is not the clusters' structure
    mean = np.mean(list(report["targets"].values()))
    assert report["targets_mean_v_measure"] == pytest.approx(mean)
    assert result.details["random_state"] == 3


def test_clustering_target_missing_on_some_clips_is_named() -> None:
    audio, clips = _clustering_clips(lacking="s5")
    with pytest.raises(DataError, match=r"1 clip\(s\) lack metadata\['speaker_age'\].*s5"):
        Clustering().evaluate(FakeEmbedder(audio), clips)


# --- the offline mocks under -O protocol=mseb ------------------------------------------------


@pytest.mark.parametrize(
    ("task", "main"), [("MockRetrieval", "mrr"), ("MockClustering", "v_measure")]
)
def test_audio_mocks_run_under_mseb(tmp_path: Path, task: str, main: str) -> None:
    code, out = run_cli(
        "evaluate", "--task", task, "--model", "log-mel", "-O", "protocol=mseb",
        "--output-dir", str(tmp_path), *FAST,
    )  # fmt: skip
    assert code == 0, out
    (path,) = tmp_path.glob(f"*/*/{task}.json")
    result = load_result(path)
    assert result.details["evaluator"]["name"] == "mseb"
    assert result.main_score == result.scores["default"][main]


@pytest.mark.parametrize(
    ("task", "main"),
    [("MockReranking", "map"), ("MockZeroShotClassification", "accuracy")],
)
def test_text_mocks_run_under_mseb(
    tmp_path: Path,
    tiny_clap: Path,  # noqa: F811
    task: str,
    main: str,
) -> None:
    code, out = run_cli(
        "evaluate", "--task", task, "--model", f"hf:{tiny_clap}", "-O", "protocol=mseb",
        "--output-dir", str(tmp_path), *FAST,
    )  # fmt: skip
    assert code == 0, out
    (path,) = tmp_path.glob(f"*/*/{task}.json")
    result = load_result(path)
    assert result.details["evaluator"]["name"] == "mseb"
    assert result.main_score == result.scores["default"][main]
