"""audiobench's metric functions: numpy in, floats or dicts out, no model, no disk.

A public function validates its inputs once (the shared checks are :mod:`.validation`, the
exceptions :mod:`.errors`, label encoding :mod:`.labels`, how errors name clips
:mod:`.naming`); the private helpers behind it trust them. The VocSim zero-shot
similarity engine is its own package, :mod:`audiobench.vocsim`; the functions that reproduce
MTEB's scoring protocol sit beside its evaluator, in :mod:`audiobench.evaluators.mteb_protocol`.

Per family (each module's docstring gives the exact definitions, tie rules and edge cases):

- Classification (:mod:`.classification`): :func:`accuracy`, :func:`balanced_accuracy`,
  :func:`macro_f1`, :func:`top_k_accuracy`, :func:`average_precision_per_class`,
  :func:`macro_average_precision` (and :func:`macro_average_precision_details`),
  :func:`multilabel_f1`; the report
  :func:`classification_scores`.
- Clustering (:mod:`.clustering`): :func:`v_measure`, :func:`normalized_mutual_information`,
  :func:`adjusted_rand_index`, :func:`purity_score` (plain contingency purity of a given
  labelling; :func:`audiobench.vocsim.clustering_purity` is VocSim's UMAP + HDBSCAN pipeline),
  :func:`labelling_scores`; MiniBatchKMeans over seeds: :func:`cluster_scores` →
  :class:`ClusterScores`.
- Retrieval (:mod:`.retrieval`): :func:`mean_reciprocal_rank`, :func:`hit_at_k`,
  :func:`recall_at_k`, :func:`ndcg_at_k`, :func:`mean_average_precision`, the report
  :func:`retrieval_scores`, and the search :func:`top_k` (exact, or faiss with the ``faiss``
  extra).
- Reranking (:mod:`.reranking`): :func:`reranking_scores`, :func:`top_candidates`; text error
  rates (:mod:`.text_errors`): :func:`word_error_rate`, :func:`character_error_rate` (and their
  ``*_details`` twins), :func:`candidate_error_rate`, against several references
  :func:`multi_reference_error_rates` (:func:`closest_references`),
  :func:`edit_distance`, :func:`normalize_text`.
- Reconstruction (:mod:`.reconstruction`): :func:`reconstruction_embedding_scores` (FAD, KAD
  and embedding MSE over frame embeddings as MSEB defines them), :func:`frechet_audio_distance`,
  :func:`kernel_audio_distance`, :func:`median_pairwise_distance`, :func:`polynomial_mmd`,
  :func:`embedding_mse`, :func:`frame_bag`, :func:`si_sdr`, :func:`log_mel_distance`,
  :func:`bits_per_second`, :func:`per_clip_summary`.
- Perceptual alignment (:mod:`.perceptual`): :func:`triplet_accuracy`,
  :func:`two_afc_accuracy`, :func:`binomial_p_value`.
- Pair classification (:mod:`.pair_classification`): :func:`pair_similarities`,
  :func:`best_accuracy_threshold`, :func:`best_f1_threshold`, :func:`average_precision`,
  :func:`pair_classification_metrics`, the report :func:`pair_classification_scores`
  (main score ``max_ap``, the keys MTEB reports).

MSEB's super tasks beyond vectors, as MSEB defines them (``docs/MSEB_METRICS.md``):
transcription (:mod:`.transcription`): :func:`transcription_scores` (WER, SER, no-result rate,
and the character error rate) with :func:`whisper_normalizer`; segmentation
(:mod:`.segmentation`): :func:`segmentation_scores` (positional NDCG, greedy hit accuracies
with a time tolerance, mAP), :func:`positional_ndcg`, :func:`greedy_segment_hits`,
:func:`segment_average_precision`; span QA (:mod:`.span_qa`): :func:`span_qa_scores`
(GmeanF1, F1, invalid and missing rates), :func:`mseb_span_f1`, :func:`select_answers`,
:func:`no_answer_threshold`, :func:`gaussian_decision_boundary`; stability
(:mod:`.stability`): :func:`continuous_stability`, :func:`discrete_stability` and their
distances; shared conventions (:mod:`.mseb_conventions`): :func:`weighted_mean_and_std`,
:func:`split_words` and the sentinel answers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from audiobench.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from audiobench.metrics.classification import (
        accuracy,
        average_precision_per_class,
        balanced_accuracy,
        classification_scores,
        macro_average_precision,
        macro_average_precision_details,
        macro_f1,
        multilabel_f1,
        top_k_accuracy,
    )
    from audiobench.metrics.clustering import (
        CLUSTERING_METRICS,
        ClusterScores,
        adjusted_rand_index,
        cluster_scores,
        labelling_scores,
        normalized_mutual_information,
        purity_score,
        v_measure,
    )
    from audiobench.metrics.errors import InsufficientClassesError, InvalidEmbeddingsError
    from audiobench.metrics.mseb_conventions import (
        INVALID_ANSWER,
        NO_ANSWER,
        NO_RESPONSE,
        split_words,
        weighted_mean_and_std,
    )
    from audiobench.metrics.pair_classification import (
        average_precision,
        best_accuracy_threshold,
        best_f1_threshold,
        pair_classification_metrics,
        pair_classification_scores,
        pair_similarities,
    )
    from audiobench.metrics.perceptual import binomial_p_value, triplet_accuracy, two_afc_accuracy
    from audiobench.metrics.reconstruction import (
        bits_per_second,
        embedding_mse,
        embedding_mse_details,
        frame_bag,
        frechet_audio_distance,
        kernel_audio_distance,
        log_mel_distance,
        log_mel_distance_details,
        median_pairwise_distance,
        per_clip_summary,
        polynomial_mmd,
        reconstruction_embedding_scores,
        si_sdr,
        si_sdr_details,
    )
    from audiobench.metrics.reranking import reranking_scores, top_candidates
    from audiobench.metrics.results import MetricResult
    from audiobench.metrics.retrieval import (
        hit_at_k,
        mean_average_precision,
        mean_reciprocal_rank,
        ndcg_at_k,
        recall_at_k,
        retrieval_scores,
        top_k,
    )
    from audiobench.metrics.segmentation import (
        DEFAULT_TOLERANCE_S,
        SegmentationScores,
        SegmentHits,
        TimedTerm,
        greedy_segment_hits,
        positional_ndcg,
        segment_average_precision,
        segmentation_scores,
    )
    from audiobench.metrics.span_qa import (
        AnswerSelection,
        SpanQAScores,
        gaussian_decision_boundary,
        mseb_span_f1,
        no_answer_threshold,
        select_answers,
        span_qa_scores,
    )
    from audiobench.metrics.stability import (
        StabilityScores,
        StabilitySummary,
        continuous_edit_distance,
        continuous_stability,
        discrete_stability,
        dynamic_time_warping_distance,
        padded_spectral_distance,
        unit_edit_distance,
    )
    from audiobench.metrics.text_errors import (
        candidate_error_rate,
        character_error_rate,
        character_error_rate_details,
        closest_references,
        edit_distance,
        multi_reference_error_rates,
        normalize_text,
        word_error_rate,
        word_error_rate_details,
    )
    from audiobench.metrics.transcription import (
        Normalizer,
        TranscriptionScores,
        transcription_scores,
        whisper_normalizer,
    )

#: Public name -> submodule. Names are imported on first use (PEP 562), so that importing
#: one light submodule (or listing tasks) does not load torch, SciPy and scikit-learn.
_EXPORTS: dict[str, str] = {
    "accuracy": "classification",
    "average_precision_per_class": "classification",
    "balanced_accuracy": "classification",
    "classification_scores": "classification",
    "macro_average_precision": "classification",
    "macro_average_precision_details": "classification",
    "macro_f1": "classification",
    "multilabel_f1": "classification",
    "top_k_accuracy": "classification",
    "CLUSTERING_METRICS": "clustering",
    "ClusterScores": "clustering",
    "adjusted_rand_index": "clustering",
    "cluster_scores": "clustering",
    "labelling_scores": "clustering",
    "normalized_mutual_information": "clustering",
    "purity_score": "clustering",
    "v_measure": "clustering",
    "InsufficientClassesError": "errors",
    "InvalidEmbeddingsError": "errors",
    "INVALID_ANSWER": "mseb_conventions",
    "NO_ANSWER": "mseb_conventions",
    "NO_RESPONSE": "mseb_conventions",
    "split_words": "mseb_conventions",
    "weighted_mean_and_std": "mseb_conventions",
    "average_precision": "pair_classification",
    "best_accuracy_threshold": "pair_classification",
    "best_f1_threshold": "pair_classification",
    "pair_classification_metrics": "pair_classification",
    "pair_classification_scores": "pair_classification",
    "pair_similarities": "pair_classification",
    "binomial_p_value": "perceptual",
    "triplet_accuracy": "perceptual",
    "two_afc_accuracy": "perceptual",
    "bits_per_second": "reconstruction",
    "embedding_mse": "reconstruction",
    "embedding_mse_details": "reconstruction",
    "frame_bag": "reconstruction",
    "frechet_audio_distance": "reconstruction",
    "kernel_audio_distance": "reconstruction",
    "log_mel_distance": "reconstruction",
    "log_mel_distance_details": "reconstruction",
    "median_pairwise_distance": "reconstruction",
    "per_clip_summary": "reconstruction",
    "polynomial_mmd": "reconstruction",
    "reconstruction_embedding_scores": "reconstruction",
    "si_sdr": "reconstruction",
    "si_sdr_details": "reconstruction",
    "reranking_scores": "reranking",
    "top_candidates": "reranking",
    "MetricResult": "results",
    "hit_at_k": "retrieval",
    "mean_average_precision": "retrieval",
    "mean_reciprocal_rank": "retrieval",
    "ndcg_at_k": "retrieval",
    "recall_at_k": "retrieval",
    "retrieval_scores": "retrieval",
    "top_k": "retrieval",
    "DEFAULT_TOLERANCE_S": "segmentation",
    "SegmentHits": "segmentation",
    "SegmentationScores": "segmentation",
    "TimedTerm": "segmentation",
    "greedy_segment_hits": "segmentation",
    "positional_ndcg": "segmentation",
    "segment_average_precision": "segmentation",
    "segmentation_scores": "segmentation",
    "AnswerSelection": "span_qa",
    "SpanQAScores": "span_qa",
    "gaussian_decision_boundary": "span_qa",
    "mseb_span_f1": "span_qa",
    "no_answer_threshold": "span_qa",
    "select_answers": "span_qa",
    "span_qa_scores": "span_qa",
    "StabilityScores": "stability",
    "StabilitySummary": "stability",
    "continuous_edit_distance": "stability",
    "continuous_stability": "stability",
    "discrete_stability": "stability",
    "dynamic_time_warping_distance": "stability",
    "padded_spectral_distance": "stability",
    "unit_edit_distance": "stability",
    "candidate_error_rate": "text_errors",
    "character_error_rate": "text_errors",
    "character_error_rate_details": "text_errors",
    "closest_references": "text_errors",
    "edit_distance": "text_errors",
    "multi_reference_error_rates": "text_errors",
    "normalize_text": "text_errors",
    "word_error_rate": "text_errors",
    "word_error_rate_details": "text_errors",
    "Normalizer": "transcription",
    "TranscriptionScores": "transcription",
    "transcription_scores": "transcription",
    "whisper_normalizer": "transcription",
}

__all__ = [
    "CLUSTERING_METRICS",
    "DEFAULT_TOLERANCE_S",
    "INVALID_ANSWER",
    "NO_ANSWER",
    "NO_RESPONSE",
    "AnswerSelection",
    "ClusterScores",
    "InsufficientClassesError",
    "InvalidEmbeddingsError",
    "MetricResult",
    "Normalizer",
    "SegmentHits",
    "SegmentationScores",
    "SpanQAScores",
    "StabilityScores",
    "StabilitySummary",
    "TimedTerm",
    "TranscriptionScores",
    "accuracy",
    "adjusted_rand_index",
    "average_precision",
    "average_precision_per_class",
    "balanced_accuracy",
    "best_accuracy_threshold",
    "best_f1_threshold",
    "binomial_p_value",
    "bits_per_second",
    "candidate_error_rate",
    "character_error_rate",
    "character_error_rate_details",
    "classification_scores",
    "closest_references",
    "cluster_scores",
    "continuous_edit_distance",
    "continuous_stability",
    "discrete_stability",
    "dynamic_time_warping_distance",
    "edit_distance",
    "embedding_mse",
    "embedding_mse_details",
    "frame_bag",
    "frechet_audio_distance",
    "gaussian_decision_boundary",
    "greedy_segment_hits",
    "hit_at_k",
    "kernel_audio_distance",
    "labelling_scores",
    "log_mel_distance",
    "log_mel_distance_details",
    "macro_average_precision",
    "macro_average_precision_details",
    "macro_f1",
    "mean_average_precision",
    "mean_reciprocal_rank",
    "median_pairwise_distance",
    "mseb_span_f1",
    "multi_reference_error_rates",
    "multilabel_f1",
    "ndcg_at_k",
    "no_answer_threshold",
    "normalize_text",
    "normalized_mutual_information",
    "padded_spectral_distance",
    "pair_classification_metrics",
    "pair_classification_scores",
    "pair_similarities",
    "per_clip_summary",
    "polynomial_mmd",
    "positional_ndcg",
    "purity_score",
    "recall_at_k",
    "reconstruction_embedding_scores",
    "reranking_scores",
    "retrieval_scores",
    "segment_average_precision",
    "segmentation_scores",
    "select_answers",
    "si_sdr",
    "si_sdr_details",
    "span_qa_scores",
    "split_words",
    "top_candidates",
    "top_k",
    "top_k_accuracy",
    "transcription_scores",
    "triplet_accuracy",
    "two_afc_accuracy",
    "unit_edit_distance",
    "v_measure",
    "weighted_mean_and_std",
    "whisper_normalizer",
    "word_error_rate",
    "word_error_rate_details",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
