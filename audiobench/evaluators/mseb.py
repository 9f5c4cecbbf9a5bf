"""MSEB's protocol (``protocol="mseb"``) for the vector families: each scored as MSEB scores it.

Retrieval, reranking, classification (the ``classification`` and ``zero_shot_classification``
families) and clustering, reproducing MSEB's evaluators (``docs/MSEB_METRICS.md``):

- **Similarity** is the raw dot product of a clip's pooled vector (MSEB's row 0 of a one-row
  output) with the document, candidate or label embedding, in float32 as MSEB's index and
  classifier weights hold them; nothing is normalised.
- **Retrieval**: the 10 best documents per query (:mod:`audiobench.metrics.mseb_retrieval`):
  ``mrr`` (MRR@10, main), ``em`` (hit@1), ``recall_at_10`` (hit@10), ``recall_at_inf``,
  ``ndcg_at_10`` (single-reference), ``invalid_result_rate``, ``no_result_rate``.
- **Reranking**: every candidate ranked; the reference is a query's first positive, MSEB's
  ``texts[0]`` (:mod:`audiobench.metrics.mseb_reranking`): ``map``, ``ndcg`` (@3), ``mrr``
  (@10), ``wer``, ``candidate_error_rate`` (MSEB's "CER"), the two rates; word errors after
  Whisper's normaliser of the locale (English for ``en*``, basic otherwise).
- **Classification**: zero-shot against the raw class labels' text embeddings, no prompt and
  no training (:mod:`audiobench.metrics.mseb_classification`); single-label ``accuracy``
  (main) and MSEB's other multi-class scores, multi-label ``map`` (main) and the scores at
  MSEB's threshold of 0.5 on raw dot products.
- **Clustering**: one MiniBatchKMeans (batch 32, ``n_init="auto"``, seeded by the family's
  first ``seeds`` value) and ``v_measure`` (:mod:`audiobench.metrics.mseb_clustering`); clips
  carrying SVQ's speaker targets are also clustered per target (``targets``) and
  ``targets_mean_v_measure`` is their mean, MSEB's leaderboard score for SVQ clustering.

**Noise slices.** Where clips carry ``metadata["environment"]`` (SVQ's recording environment),
retrieval, reranking and classification reports hold the same scores per environment
(``environments``): MSEB's sub-tasks ``<task>:clean``, ``:media_noise``, ``:traffic_noise``,
``:background_speech``; the top-level scores are its ``<task>`` sub-task over all utterances.

**Clips that could not be embedded** (``--on-error skip``) are MSEB's missing predictions:
retrieval and reranking score them as no response (0, and counted in ``no_result_rate``);
classification and clustering leave them out (MSEB scores only the predictions it has) and
count them (``n_unembedded``).

**Efficiency.** Each report holds ``mean_encoding_size_bytes``, MSEB's figure: the bytes of
a clip's float32 vector; MSEB's ``flops`` is the result's ``efficiency.flops_per_example``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from pydantic import Field

from audiobench import reports as _reports
from audiobench.audio import Clip
from audiobench.errors import DataError
from audiobench.evaluators.evaluator import Evaluator
from audiobench.evaluators.registry import register
from audiobench.metrics.naming import describe_clips
from audiobench.reports import Count, NonNegative, Report, Summary, Unit
from audiobench.task import Embedder, Subset, Task, TaskFamily, error_in_context

if TYPE_CHECKING:
    from audiobench.encoder import Encoder
    from audiobench.families.classification import ClassificationTask
    from audiobench.families.clustering import ClusteringTask
    from audiobench.families.reranking import RerankingTask
    from audiobench.families.retrieval import RetrievalTask
    from audiobench.families.zero_shot_classification import ZeroShotClassificationTask

__all__ = [
    "CLASSIFICATION_METRICS",
    "CLUSTERING_METRICS",
    "ENVIRONMENT_KEY",
    "MULTILABEL_METRICS",
    "RERANKING_METRICS",
    "RETRIEVAL_METRICS",
    "SVQ_CLUSTERING_TARGETS",
    "MsebClassificationEvaluator",
    "MsebClassificationReport",
    "MsebClassificationSummary",
    "MsebClusteringEvaluator",
    "MsebClusteringReport",
    "MsebClusteringSummary",
    "MsebRerankingEvaluator",
    "MsebRerankingReport",
    "MsebRerankingSummary",
    "MsebRetrievalEvaluator",
    "MsebRetrievalReport",
    "MsebRetrievalSummary",
    "MsebZeroShotClassificationEvaluator",
]

#: The clip metadata naming SVQ's recording environment (MSEB's noise slices).
ENVIRONMENT_KEY = "environment"
#: Metrics a main score may name, per family (MSEB's name in the comments).
RETRIEVAL_METRICS = (
    "mrr",  # MRR
    "em",  # EM
    "recall_at_10",  # RecallAt10
    "recall_at_inf",  # RecallAtInf
    "ndcg_at_10",  # NDCG@10
    "invalid_result_rate",  # InvalidResultRate
    "no_result_rate",  # NoResultRate
)
RERANKING_METRICS = (
    "map",  # MAP
    "ndcg",  # NDCG
    "mrr",  # MRR
    "wer",  # WER
    "candidate_error_rate",  # CER
    "invalid_result_rate",  # InvalidResultRate
    "no_result_rate",  # NoResultRate
)
CLASSIFICATION_METRICS = (
    "accuracy",  # Accuracy
    "top_5_accuracy",  # Top-5 Accuracy
    "balanced_accuracy",  # Balanced Accuracy
    "weighted_precision",  # Weighted Precision
    "weighted_recall",  # Weighted Recall
    "weighted_f1",  # Weighted F1-Score
    "invalid_result_rate",  # InvalidResultRate
    "missing_result_rate",  # MissingResultRate
)
MULTILABEL_METRICS = (
    "map",  # mAP
    "micro_f1",  # Micro F1
    "macro_f1",  # Macro F1
    "hamming_loss",  # Hamming Loss
    "subset_accuracy",  # Subset Accuracy
)
CLUSTERING_METRICS = ("v_measure", "targets_mean_v_measure")  # VMeasure
#: SVQ clustering's three sub-tasks: clip metadata each clustered on its own.
SVQ_CLUSTERING_TARGETS = ("speaker_gender", "speaker_age", "speaker_id")


def _environment_groups(clips: Sequence[Clip]) -> dict[str, list[int]]:
    """Positions of ``clips`` per recording environment (clips without one are in none)."""
    groups: dict[str, list[int]] = {}
    for i, clip in enumerate(clips):
        value = clip.metadata.get(ENVIRONMENT_KEY)
        if value is not None and str(value) != "":
            groups.setdefault(str(value), []).append(i)
    return dict(sorted(groups.items()))


def _slices(environments: dict[str, Any]) -> dict[str, Any]:
    """The ``environments`` field of a report: left out (not null) when there is no slice."""
    return {"environments": environments} if environments else {}


def _encoding_bytes(width: int) -> float:
    """MSEB's ``mean_encoding_size_bytes`` of one pooled float32 vector of ``width``."""
    return float(width * np.dtype(np.float32).itemsize)


class _MsebSummary(Summary):
    n_subsets: Count


# --- retrieval -------------------------------------------------------------------------------


class MsebRetrievalScores(Report):
    """MSEB's retrieval scores of a set of queries (means and population stds)."""

    mrr: Unit = Field(description="MRR@10 (MSEB's MRR, main).")
    mrr_std: NonNegative
    em: Unit = Field(description="Share of queries whose first document is relevant (EM).")
    em_std: NonNegative
    recall_at_10: Unit = Field(description="Share with a relevant document in the top 10.")
    recall_at_10_std: NonNegative
    recall_at_inf: Unit = Field(description="The same over the whole (top-10) list.")
    recall_at_inf_std: NonNegative
    ndcg_at_10: Unit = Field(description="MSEB's single-reference NDCG@10.")
    ndcg_at_10_std: NonNegative
    invalid_result_rate: Unit
    invalid_result_rate_std: NonNegative
    no_result_rate: Unit = Field(description="Share of queries without a prediction.")
    no_result_rate_std: NonNegative
    n_queries: Count


class MsebRetrievalReport(MsebRetrievalScores):
    """One subset: MSEB's scores over all its queries, per environment, and the counts."""

    n_documents: Count
    n_queries_unembedded: Count
    n_documents_unembedded: Count
    n_without_relevant: Count = Field(description="Queries whose reference is not indexed.")
    n_multi_reference: Count = Field(description="Queries with several relevant documents.")
    mean_encoding_size_bytes: NonNegative
    environments: dict[str, MsebRetrievalScores] | None = None


class MsebRetrievalSummary(_MsebSummary):
    """Unweighted mean over subsets of MSEB's retrieval scores."""

    mrr: Unit
    em: Unit
    recall_at_10: Unit
    recall_at_inf: Unit
    ndcg_at_10: Unit
    invalid_result_rate: Unit
    no_result_rate: Unit


class _MsebEvaluator(Evaluator):
    protocol = "mseb"
    metrics: tuple[str, ...] = ()

    @classmethod
    def check_main_score(cls, task: type[Task], path: tuple[str, ...]) -> None:
        task.require_main_score(path, cls.metrics)


@register
class MsebRetrievalEvaluator(_MsebEvaluator):
    family = TaskFamily.RETRIEVAL
    Report = MsebRetrievalReport
    Summary = MsebRetrievalSummary
    metrics = RETRIEVAL_METRICS

    @classmethod
    def describe(cls, task: Task) -> dict[str, Any]:
        from audiobench.metrics.mseb_retrieval import TOP_K

        sides = task.options.model_dump(include={"query_modality", "document_modality", "layout"})
        return {
            **sides,
            "similarity": "dot product (float32)",
            "top_k": TOP_K,
            "environment_key": ENVIRONMENT_KEY,
        }

    @classmethod
    def evaluate_subset(cls, task: Task, embedder: Embedder, subset: Subset) -> _reports.Report:
        from audiobench.metrics.mseb_conventions import NO_RESPONSE
        from audiobench.metrics.mseb_retrieval import dot_product_top_k, mseb_retrieval_scores

        family = cast("RetrievalTask", task)
        inputs = family.retrieval_inputs(embedder, subset, strip_texts=True, leave_one_out=True)
        ranked = dot_product_top_k(inputs.query_matrix, inputs.document_matrix)
        query_clips = [item.clip for item in inputs.queries]
        answers: list[Any] = [list(row) for row in ranked]
        references: list[set[int]] = [set(rel) for rel in inputs.relevance]
        if inputs.n_queries_unembedded:  # MSEB: a query without a prediction has no response
            kept = {clip.id for clip in query_clips}
            lost = [c for c in family._partition(subset)[0] if c.id not in kept]
            query_clips += lost
            answers += [NO_RESPONSE] * len(lost)
            references += [set()] * len(lost)
        without = [c.id for c, r in zip(query_clips, references, strict=True) if not r]
        if len(without) == len(query_clips):
            raise DataError(
                f"{subset.where}: no query has a relevant document among the "
                f"{len(inputs.documents)} documents (query clips: {describe_clips(without)})"
            )

        def scores(idx: Sequence[int]) -> dict[str, Any]:
            try:
                values = mseb_retrieval_scores(
                    [answers[i] for i in idx], [references[i] for i in idx]
                )
            except ValueError as exc:
                raise error_in_context(exc, subset.where) from exc
            return {**values, "n_queries": len(idx)}

        environments = {
            name: MsebRetrievalScores(**scores(idx))
            for name, idx in _environment_groups(query_clips).items()
        }
        if without:
            subset.details["queries_without_relevant"] = describe_clips(without)
        return MsebRetrievalReport(
            **scores(range(len(query_clips))),
            n_documents=len(inputs.documents),
            n_queries_unembedded=inputs.n_queries_unembedded,
            n_documents_unembedded=inputs.n_documents_unembedded,
            n_without_relevant=len(without),
            n_multi_reference=sum(len(r) > 1 for r in references),
            mean_encoding_size_bytes=_encoding_bytes(inputs.query_matrix.shape[1]),
            **_slices(environments),
        )


# --- reranking -------------------------------------------------------------------------------


class MsebRerankingScores(Report):
    """MSEB's reranking scores of a set of queries (means and MSEB's stds)."""

    map: Unit = Field(description="Mean average precision (relevant: no word error vs texts[0]).")
    map_std: NonNegative
    ndcg: Unit = Field(description="NDCG@3 (relevant: one of the reference texts).")
    ndcg_std: NonNegative
    mrr: Unit = Field(description="MRR@10 of the exact reference text.")
    mrr_std: NonNegative
    wer: NonNegative = Field(description="Corpus WER of the top candidate vs texts[0].")
    wer_std: NonNegative
    candidate_error_rate: Unit = Field(description="Share with a wrong top candidate (CER).")
    candidate_error_rate_std: NonNegative
    invalid_result_rate: Unit
    invalid_result_rate_std: NonNegative
    no_result_rate: Unit
    no_result_rate_std: NonNegative
    n_queries: Count


class MsebRerankingReport(MsebRerankingScores):
    """One subset: MSEB's scores over all its queries, per environment, and the counts."""

    n_candidates: Count
    n_queries_unembedded: Count
    n_candidates_unembedded: Count
    mean_encoding_size_bytes: NonNegative
    environments: dict[str, MsebRerankingScores] | None = None


class MsebRerankingSummary(_MsebSummary):
    """Unweighted mean over subsets of MSEB's reranking scores."""

    map: Unit
    ndcg: Unit
    mrr: Unit
    wer: NonNegative
    candidate_error_rate: Unit
    invalid_result_rate: Unit
    no_result_rate: Unit


def _text_normalizer(task: Task, subset: Subset) -> tuple[Callable[[str], str] | None, str]:
    """MSEB's normaliser for the subset's locale (task option ``locale``, else the subset's
    name) and a description of it: English for ``en`` locales, basic otherwise."""
    from audiobench.evaluators.transcription import english_spelling_table
    from audiobench.families.transcription import DEFAULT_SPELLING_TABLE
    from audiobench.metrics.transcription import whisper_normalizer

    options = task.options
    if getattr(options, "normalizer", "whisper") == "none":
        return None, "none"
    locale = getattr(options, "locale", None) or subset.name
    language = locale.replace("-", "_").split("_")[0].lower()
    if language == "en":
        table = english_spelling_table(getattr(options, "spelling_table", DEFAULT_SPELLING_TABLE))
        return whisper_normalizer(locale, english_spelling_mapping=table), f"english ({locale})"
    return whisper_normalizer(locale), f"basic ({locale})"


@register
class MsebRerankingEvaluator(_MsebEvaluator):
    family = TaskFamily.RERANKING
    Report = MsebRerankingReport
    Summary = MsebRerankingSummary
    metrics = RERANKING_METRICS

    @classmethod
    def describe(cls, task: Task) -> dict[str, Any]:
        from audiobench.metrics.mseb_reranking import MRR_AT, NDCG_AT

        return {
            "candidate_modality": task.options.model_dump()["candidate_modality"],
            "similarity": "dot product (float32)",
            "reference": "each query's first positive (MSEB's texts[0])",
            "mrr_at": MRR_AT,
            "ndcg_at": NDCG_AT,
            "normalizer": "whisper: English for en locales, basic otherwise (locale: the "
            "task's locale option, else the subset's name)",
            "environment_key": ENVIRONMENT_KEY,
        }

    @classmethod
    def evaluate_subset(cls, task: Task, embedder: Embedder, subset: Subset) -> _reports.Report:
        from audiobench.metrics.mseb_conventions import NO_RESPONSE
        from audiobench.metrics.mseb_reranking import mseb_reranking_scores

        family = cast("RerankingTask", task)
        inputs = family.reranking_inputs(embedder, subset)
        no_positive = [clip.id for clip, _, pos in inputs.queries if not pos]
        if no_positive:
            raise DataError(
                f"{subset.where}: {len(no_positive)} query clip(s) have no positives; MSEB's "
                f"reference is a query's first positive: {describe_clips(no_positive)}"
            )
        empty = [clip.id for clip, cands, _ in inputs.kept if not cands]
        if empty:
            raise DataError(
                f"{subset.where}: {len(empty)} query clip(s) have no candidate to rank: "
                f"{describe_clips(empty)}"
            )
        normalize, normalizer = _text_normalizer(task, subset)
        candidates = inputs.candidate_matrix.astype(np.float32)
        queries = inputs.query_matrix.astype(np.float32)
        answers: dict[str, Any] = {}
        for row, (clip, cands, _) in enumerate(inputs.kept):
            scores = np.dot(queries[row], candidates[[inputs.candidate_rows[c] for c in cands]].T)
            order = np.argsort(-scores, kind="stable")  # ties: the earlier candidate
            answers[clip.id] = [(cands[i], float(scores[i])) for i in order]
        clips = [clip for clip, _, _ in inputs.queries]
        listed = [answers.get(clip.id, NO_RESPONSE) for clip in clips]
        texts = [pos for _, _, pos in inputs.queries]

        def scores_of(idx: Sequence[int]) -> dict[str, Any]:
            try:
                values = mseb_reranking_scores(
                    [listed[i] for i in idx], [texts[i] for i in idx], normalize=normalize
                )
            except ValueError as exc:
                raise error_in_context(exc, subset.where) from exc
            return {**values, "n_queries": len(idx)}

        environments = {
            name: MsebRerankingScores(**scores_of(idx))
            for name, idx in _environment_groups(clips).items()
        }
        subset.details["normalizer_used"] = normalizer
        n_listed = sum(len(c) for _, c, _ in inputs.embedded)
        return MsebRerankingReport(
            **scores_of(range(len(clips))),
            n_candidates=sum(len(c) for _, c, _ in inputs.kept),
            n_queries_unembedded=len(inputs.queries) - len(inputs.embedded),
            n_candidates_unembedded=n_listed - sum(len(c) for _, c, _ in inputs.kept),
            mean_encoding_size_bytes=_encoding_bytes(inputs.query_matrix.shape[1]),
            **_slices(environments),
        )


# --- classification (classification and zero-shot classification families) -----------------


class MsebClassificationScores(Report):
    """MSEB's classification scores of a set of clips: single-label or multi-label ones."""

    accuracy: Unit | None = None
    top_5_accuracy: Unit | None = None
    balanced_accuracy: Unit | None = None
    weighted_precision: Unit | None = None
    weighted_recall: Unit | None = None
    weighted_f1: Unit | None = None
    invalid_result_rate: Unit | None = None
    missing_result_rate: Unit | None = None
    map: Unit | None = None
    micro_f1: Unit | None = None
    macro_f1: Unit | None = None
    hamming_loss: Unit | None = None
    subset_accuracy: Unit | None = None
    n_samples: Count


class MsebClassificationReport(MsebClassificationScores):
    """One subset: MSEB's scores over its embedded clips, per environment, and the counts."""

    n_classes: Count
    n_unembedded: Count
    mean_encoding_size_bytes: NonNegative
    environments: dict[str, MsebClassificationScores] | None = None


class MsebClassificationSummary(_MsebSummary):
    """Unweighted mean over subsets of MSEB's classification scores (those computed)."""

    accuracy: Unit | None = None
    top_5_accuracy: Unit | None = None
    balanced_accuracy: Unit | None = None
    weighted_precision: Unit | None = None
    weighted_recall: Unit | None = None
    weighted_f1: Unit | None = None
    invalid_result_rate: Unit | None = None
    missing_result_rate: Unit | None = None
    map: Unit | None = None
    micro_f1: Unit | None = None
    macro_f1: Unit | None = None
    hamming_loss: Unit | None = None
    subset_accuracy: Unit | None = None


def _label_sets(clips: Sequence[Clip], separator: str | None) -> list[list[str]]:
    """Each clip's labels: its one label, or (``separator``) the pieces of its label."""
    if separator is None:
        return [[str(c.label)] for c in clips]
    return [[p.strip() for p in str(c.label).split(separator) if p.strip()] for c in clips]


def _declared_classes(task: Task) -> list[str]:
    return list(getattr(task.options, "classes", ()) or ())


def _zero_shot_scores(
    embedder: Embedder, subset: Subset, classes: Sequence[str], *, separator: str | None
) -> MsebClassificationReport:
    """MSEB's zero-shot classification of ``subset`` against ``classes`` (empty: the sorted
    labels of the subset): single-label without ``separator``, multi-label with it (labels
    outside the class list left out, as MSEB does)."""
    from audiobench.families.ranking_inputs import check_same_width
    from audiobench.metrics.mseb_classification import (
        label_dot_scores,
        mseb_multiclass_scores,
        mseb_multilabel_scores,
    )

    unlabelled = [c.id for c in subset.clips if c.label is None]
    if unlabelled:
        raise DataError(f"{subset.where}: clip(s) without a label: {describe_clips(unlabelled)}")
    sets = _label_sets(subset.clips, separator)
    classes = list(classes) or sorted({name for names in sets for name in names})
    if len(classes) < 2:
        raise DataError(f"{subset.where}: classification needs two classes, found {classes}")
    if separator is None:
        unknown = sorted({names[0] for names in sets} - set(classes))
        if unknown:
            raise DataError(
                f"{subset.where}: label(s) {describe_clips(unknown)} are not among the task's "
                "classes"
            )
    kept, audio = embedder.embed_matrix(subset.clips, subset.label)
    if not kept:
        raise DataError(f"{subset.where}: no clip could be embedded")
    # The raw class names, as MSEB embeds them: no prompt, no underscore replacement.
    labels = np.asarray(embedder.embed_text(classes, f"{subset.label} class labels"))
    check_same_width(audio, labels, "audio", "class label", embedder.encoder.meta.name)
    scores = label_dot_scores(np.asarray(audio, dtype=np.float32), labels)
    kept_sets = _label_sets(kept, separator)
    column = {name: j for j, name in enumerate(classes)}

    def scores_of(idx: Sequence[int]) -> dict[str, Any]:
        rows = scores[list(idx)]
        try:
            if separator is None:
                targets = np.array([column[kept_sets[i][0]] for i in idx], dtype=np.int64)
                values = mseb_multiclass_scores(rows, targets)
            else:
                truth = np.zeros(rows.shape, dtype=np.int64)
                for r, i in enumerate(idx):
                    truth[r, [column[n] for n in kept_sets[i] if n in column]] = 1
                values = mseb_multilabel_scores(rows, truth)
        except ValueError as exc:
            raise error_in_context(exc, subset.where) from exc
        return {**values, "n_samples": len(idx)}

    environments = {
        name: MsebClassificationScores(**scores_of(idx))
        for name, idx in _environment_groups(kept).items()
    }
    return MsebClassificationReport(
        **scores_of(range(len(kept))),
        n_classes=len(classes),
        n_unembedded=len(subset.clips) - len(kept),
        mean_encoding_size_bytes=_encoding_bytes(audio.shape[1]),
        **_slices(environments),
    )


def _require_text_tower(task: type[Task], encoder: Encoder) -> None:
    from audiobench.families.ranking_inputs import require_text_tower

    require_text_tower(
        encoder,
        True,
        f"{task.__name__} under protocol 'mseb' scores clips against the text embeddings of "
        "the class labels and needs an audio-text model (or an ASR -> text-embedding cascade)",
    )


def _classification_description(task: Task, multilabel: bool) -> dict[str, Any]:
    from audiobench.metrics.mseb_classification import MULTILABEL_THRESHOLD, TOP_K

    threshold = {"threshold": MULTILABEL_THRESHOLD} if multilabel else {"top_k": TOP_K}
    return {
        "scoring": "zero-shot: dot product (float32) with the raw class labels' text "
        "embeddings, no prompt, no training",
        "multilabel": multilabel,
        "classes": _declared_classes(task) or "the sorted labels of each subset",
        **threshold,
        "environment_key": ENVIRONMENT_KEY,
    }


@register
class MsebClassificationEvaluator(_MsebEvaluator):
    """The ``classification`` family under MSEB's protocol: single- or multi-label
    (the family's ``multilabel`` and ``label_separator`` options), no probe trained."""

    family = TaskFamily.CLASSIFICATION
    Report = MsebClassificationReport
    Summary = MsebClassificationSummary

    @classmethod
    def check_main_score(cls, task: type[Task], path: tuple[str, ...]) -> None:
        multilabel = cast("ClassificationTask.Options", task.options).multilabel
        task.require_main_score(path, MULTILABEL_METRICS if multilabel else CLASSIFICATION_METRICS)

    @classmethod
    def check_encoder(cls, task: type[Task], encoder: Encoder) -> None:
        _require_text_tower(task, encoder)

    @classmethod
    def describe(cls, task: Task) -> dict[str, Any]:
        o = cast("ClassificationTask.Options", task.options)
        return _classification_description(task, o.multilabel)

    @classmethod
    def evaluate_subset(cls, task: Task, embedder: Embedder, subset: Subset) -> _reports.Report:
        o = cast("ClassificationTask.Options", task.options)
        separator = o.label_separator if o.multilabel else None
        return _zero_shot_scores(embedder, subset, _declared_classes(task), separator=separator)


@register
class MsebZeroShotClassificationEvaluator(_MsebEvaluator):
    """The ``zero_shot_classification`` family under MSEB's protocol: the raw class names
    embedded as they are (the family's ``prompt_template`` is not used), single-label."""

    family = TaskFamily.ZERO_SHOT_CLASSIFICATION
    Report = MsebClassificationReport
    Summary = MsebClassificationSummary
    metrics = CLASSIFICATION_METRICS

    @classmethod
    def describe(cls, task: Task) -> dict[str, Any]:
        return _classification_description(task, False)

    @classmethod
    def evaluate_subset(cls, task: Task, embedder: Embedder, subset: Subset) -> _reports.Report:
        # The family's evaluation classes: its declared ones, else the labels of all subsets.
        classes = cast("ZeroShotClassificationTask", task).classes
        return _zero_shot_scores(embedder, subset, classes, separator=None)


# --- clustering ------------------------------------------------------------------------------


class MsebClusteringReport(Report):
    """One subset: MSEB's V-measure over ``Clip.label`` and, for SVQ, per speaker target."""

    v_measure: Unit = Field(description="V-measure of the labels (MSEB's VMeasure).")
    targets: dict[str, Unit] | None = Field(
        None, description="V-measure per SVQ target (speaker_gender, speaker_age, speaker_id)."
    )
    targets_mean_v_measure: Unit | None = Field(
        None, description="Mean of the targets' V-measures (MSEB leaderboard's SVQ score)."
    )
    n_samples: Count
    n_clusters: Count
    n_unembedded: Count
    seed: int
    mean_encoding_size_bytes: NonNegative


class MsebClusteringSummary(_MsebSummary):
    """Unweighted mean over subsets."""

    v_measure: Unit
    targets_mean_v_measure: Unit | None = None


@register
class MsebClusteringEvaluator(_MsebEvaluator):
    family = TaskFamily.CLUSTERING
    Report = MsebClusteringReport
    Summary = MsebClusteringSummary
    metrics = CLUSTERING_METRICS

    @classmethod
    def _seed(cls, task: Task) -> int:
        return int(cast("ClusteringTask.Options", task.options).seeds[0])

    @classmethod
    def describe(cls, task: Task) -> dict[str, Any]:
        from audiobench.metrics.mseb_clustering import BATCH_SIZE

        return {
            "kmeans": f"MiniBatchKMeans(batch_size={BATCH_SIZE}, n_init='auto'), one run",
            "random_state": cls._seed(task),
            "targets": list(SVQ_CLUSTERING_TARGETS),
        }

    @classmethod
    def evaluate_subset(cls, task: Task, embedder: Embedder, subset: Subset) -> _reports.Report:
        from audiobench.metrics.mseb_clustering import mseb_v_measure

        unlabelled = [c.id for c in subset.clips if c.label is None]
        if unlabelled:
            raise DataError(
                f"{subset.where}: clip(s) without a label: {describe_clips(unlabelled)}"
            )
        kept, matrix = embedder.embed_matrix(subset.clips, subset.label)
        if len(kept) < 2:
            raise DataError(f"{subset.where}: clustering needs two embedded clips")
        seed = cls._seed(task)
        x = np.asarray(matrix, dtype=np.float32)

        def v_measure(labels: list[str]) -> float:
            try:
                return mseb_v_measure(x, labels, seed)
            except ValueError as exc:
                raise error_in_context(exc, subset.where) from exc

        labels = [str(c.label) for c in kept]
        targets: dict[str, float] = {}
        for target in SVQ_CLUSTERING_TARGETS:
            carrying = [c.id for c in kept if c.metadata.get(target) is not None]
            if not carrying:
                continue
            if len(carrying) < len(kept):
                lacking = [c.id for c in kept if c.metadata.get(target) is None]
                raise DataError(
                    f"{subset.where}: {len(lacking)} clip(s) lack metadata[{target!r}] that "
                    f"the others carry: {describe_clips(lacking)}"
                )
            targets[target] = v_measure([str(c.metadata[target]) for c in kept])
        return MsebClusteringReport(
            v_measure=v_measure(labels),
            targets=targets or None,
            targets_mean_v_measure=float(np.mean(list(targets.values()))) if targets else None,
            n_samples=len(kept),
            n_clusters=len(set(labels)),
            n_unembedded=len(subset.clips) - len(kept),
            seed=seed,
            mean_encoding_size_bytes=_encoding_bytes(x.shape[1]),
        )
