"""Reranking: every audio query orders its own candidate list; mAP (main), MRR, nDCG.

**Data contract.** A clip is a query when its ``split`` is ``query_split`` (``"query"``) or
it carries ``metadata["candidates"]``. A query's

- ``candidates`` are texts (``candidate_modality="text"``) or clip ids of other clips of the
  task (``"audio"``, from any subset);
- ``positives`` are the relevant candidates (texts or clip ids).

Both are lists (a Hugging Face sequence column) or, in a folder ``labels.csv``, one string
with the items joined by ``|`` (:data:`~audiobench.families.ranking_inputs.LIST_SEPARATOR`; so
a text candidate cannot contain ``|``). A candidate is relevant when it equals one of the
positives; a positive that is not among the candidates marks nothing (it still serves as a
reference transcript, below).

**Scoring.** Each candidate's score is the cosine similarity between the query clip's pooled
audio embedding and the candidate's embedding (the candidate clip's audio, or the text
tower's embedding of the candidate text). Candidates are ranked by decreasing score, ties to
the earlier candidate; metric definitions: :mod:`audiobench.metrics.reranking`. For text
candidates the top-ranked candidate is also read as a transcript of the query:
``wer`` and ``char_error_rate`` are the corpus-level word and character error rates, and
``candidate_error_rate`` is MSEB's reranking "CER": the share of queries whose top candidate
has any word error (:mod:`audiobench.metrics.text_errors`; lowercased, and with punctuation
removed when ``strip_punctuation``), each against, for each query, the positive with the
fewest edits to it (the usual multi-reference convention; with one positive, that positive).

**Bad input.** A query with an empty candidate list or without a relevant candidate makes the
metrics undefined: an error naming the queries (``on_missing="raise"``, default), or with
``on_missing="skip"`` it is left out of every mean (the error rates included) and counted
(``n_skipped_empty``, ``n_skipped_no_relevant``, ids in ``details["skipped_queries"]``). An
audio candidate id that is not a clip of the task is an error. Clips the runner skipped
(``--on-error skip``) drop their queries (``n_queries_unembedded``) and candidate entries
(``n_candidates_unembedded``). Text candidates need an encoder with a text tower.

Subsets (``Clip.subset``) holding queries are scored separately (a subset of candidate clips
only is not a subset of the scores); with several, ``aggregates["mean"]`` holds the unweighted
mean of every metric and the main score is that mean.

``protocol="mteb"`` scores as MTEB scores MAEB's reranking tasks instead: float32 cosine over
each query's candidates, the trec metrics at MTEB's cut-offs (``map_at_1000``, ...), a
positive outside the candidates still counted in recall and mAP, queries without a positive
left out (:mod:`audiobench.families.mteb_protocol`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, ClassVar, Literal

import numpy as np
from pydantic import AfterValidator, Field

from audiobench import reports as _reports
from audiobench.audio import Clip
from audiobench.encoder import Encoder
from audiobench.errors import DataError
from audiobench.families import mteb_protocol, ranking_inputs
from audiobench.families.mteb_protocol import ByProtocol, MtebReport, MtebSummary, ProtocolOptions
from audiobench.families.ranking_inputs import MAX_LISTED_IDS, embed_both, parse_list, unit_rows
from audiobench.metrics.naming import describe_clips
from audiobench.reports import Count, KeyedReport, NonNegative, Summary, Unit, metric_names
from audiobench.task import Embedder, Subset, Task, TaskFamily, TaskScores

__all__ = ["RerankingReport", "RerankingSummary", "RerankingTask"]

#: Metrics that are means over queries of [0, 1] values, and the error rates (≥ 0).
RANKING_METRICS = ("map", "mrr", "ndcg")
ERROR_RATES = ("wer", "candidate_error_rate", "char_error_rate")

NdcgAt = Annotated[
    str, AfterValidator(metric_names((*RANKING_METRICS, *ERROR_RATES), ("ndcg@", "")))
]


class RerankingScores(KeyedReport):
    """mAP, MRR, nDCG over the whole list and at the cut-off (``ndcg@<k>``), WER/CER."""

    __pydantic_extra__: dict[NdcgAt, Unit | None] = Field(init=False)
    map: Unit | None
    mrr: Unit | None
    ndcg: Unit | None
    #: Text candidates only: error rates of the top candidate (corpus level, may exceed 1).
    wer: NonNegative | None = None
    #: MSEB's reranking "CER": share of queries whose top candidate has any word error.
    candidate_error_rate: Unit | None = None
    char_error_rate: NonNegative | None = None


class RerankingReport(RerankingScores):
    """One subset: the metrics over its evaluated queries, and what was counted."""

    n_queries: Count
    n_skipped: Count
    n_skipped_empty: Count
    n_skipped_no_relevant: Count
    n_candidates: Count
    n_queries_unembedded: Count
    n_candidates_unembedded: Count


class RerankingSummary(Summary, RerankingScores):
    """Unweighted mean over subsets of every metric (None if undefined in any subset)."""

    n_subsets: Count


#: A query clip with its candidates (in order) and its positives.
_Query = tuple[Clip, list[str], list[str]]


class RerankingTask(Task):
    """Base of reranking tasks; a concrete task sets metadata and, where needed, options."""

    family: ClassVar[TaskFamily] = TaskFamily.RERANKING
    Report = ByProtocol(RerankingReport, MtebReport)
    Summary = ByProtocol(RerankingSummary, MtebSummary)
    needs_labels = False  # relevance comes from each query's positives

    class Options(ProtocolOptions):
        candidate_modality: Literal["audio", "text"] = Field(
            "text", description="Candidates are texts, or clip ids of the task's clips."
        )
        query_split: str = Field(
            "query", description="Split of query clips (clips with candidates are queries too)."
        )
        ndcg_k: int = Field(10, ge=1, description="Cut-off of nDCG@k.")
        on_missing: Literal["raise", "skip"] = Field(
            "raise", description="An empty list or no relevant candidate: error, or leave out."
        )
        strip_punctuation: bool = Field(
            False, description="WER/CER: remove punctuation (texts are always lowercased)."
        )

    options: Options = Options()
    #: Every clip of the evaluation by id (set by :meth:`evaluate`): audio candidates may
    #: sit in any subset.
    _clips_by_id: dict[str, Clip]

    @classmethod
    def check_main_score(cls, path: tuple[str, ...]) -> None:
        if cls.options.protocol == "mteb":
            return mteb_protocol.check_main_score(cls, path)
        text = cls.options.candidate_modality == "text"
        ndcg_k = f"ndcg@{cls.options.ndcg_k}"
        cls.require_main_score(path, [*RANKING_METRICS, ndcg_k, *(ERROR_RATES if text else ())])

    @classmethod
    def check_encoder(cls, encoder: Encoder) -> None:
        why = (
            f"{cls.__name__} ranks text candidates and needs an audio-text model (or an ASR -> "
            "text-embedding cascade)"
        )
        ranking_inputs.require_text_tower(encoder, cls.options.candidate_modality == "text", why)

    def protocol(self) -> dict[str, Any]:
        o = self.options
        if o.protocol == "mteb":
            return mteb_protocol.describe(self, candidate_modality=o.candidate_modality)
        protocol: dict[str, Any] = {
            "candidate_modality": o.candidate_modality,
            "similarity": "cosine",
            **o.model_dump(include={"ndcg_k", "on_missing"}),
        }
        if o.candidate_modality == "text":
            protocol["text_normalization"] = {
                "lowercase": True,
                "strip_punctuation": o.strip_punctuation,
                "reference": "closest positive",
            }
        return protocol

    def is_query(self, clip: Clip) -> bool:
        return clip.split == self.options.query_split or "candidates" in clip.metadata

    def evaluate(self, embedder: Embedder, clips: Sequence[Clip]) -> TaskScores:
        """As :meth:`Task.evaluate`, with audio candidates looked up among all ``clips``."""
        self._clips_by_id = {clip.id: clip for clip in clips}
        return super().evaluate(embedder, clips)

    def clips_by_subset(self, clips: Sequence[Clip]) -> dict[str, list[Clip]]:
        """The subsets that hold queries (the others only supply audio candidates)."""
        groups = {
            name: group
            for name, group in super().clips_by_subset(clips).items()
            if any(self.is_query(clip) for clip in group)
        }
        if clips and not groups:
            raise DataError(
                f"task {self.name}: no query clips (split {self.options.query_split!r} or "
                "metadata['candidates'])"
            )
        return groups

    def _query(self, clip: Clip) -> _Query:
        """A query clip with its listed candidates (audio ones checked) and positives."""
        cands = parse_list(clip.metadata.get("candidates"), field="candidates", clip_id=clip.id)
        pos = parse_list(clip.metadata.get("positives"), field="positives", clip_id=clip.id)
        if self.options.candidate_modality == "audio":
            unknown = [c for c in dict.fromkeys(cands) if c not in self._clips_by_id]
            if unknown:
                raise DataError(
                    f"task {self.name}: query clip {clip.id!r} lists candidate(s) "
                    f"{describe_clips(unknown)} that are not clips of the task"
                )
        return clip, cands, pos

    def evaluate_subset(self, embedder: Embedder, subset: Subset) -> _reports.Report:
        from audiobench.metrics import multi_reference_error_rates, reranking_scores, top_candidates

        o = self.options
        text_candidates = o.candidate_modality == "text"
        queries = [self._query(clip) for clip in subset.clips if self.is_query(clip)]
        listed = [c for _, cands, _ in queries for c in cands]
        audio_clips = {clip.id: clip for clip, _, _ in queries}
        if not text_candidates:  # clip ids of any subset, embedded with the queries
            audio_clips.update((c, self._clips_by_id[c]) for c in listed)
        rows, audio, text_rows, text = embed_both(
            embedder, list(audio_clips.values()), listed if text_candidates else [], subset.label
        )
        cand_rows, cand_matrix = (text_rows, text) if text_candidates else (rows, audio)
        embedded = [query for query in queries if query[0].id in rows]
        kept: list[_Query] = [
            (clip, [c for c in cands if c in cand_rows], pos) for clip, cands, pos in embedded
        ]
        q_matrix = audio[[rows[clip.id] for clip, _, _ in kept]]
        if o.protocol == "mteb":
            return mteb_protocol.reranking_report(
                subset, kept, q_matrix, cand_rows, cand_matrix, len(queries)
            )
        if not kept:
            raise DataError(f"{subset.where}: no query could be embedded")
        q_unit = unit_rows(q_matrix, [clip.id for clip, _, _ in kept], "query")
        empty = [clip.id for clip, cands, _ in kept if not cands]
        no_relevant = [clip.id for clip, cands, pos in kept if cands and not set(cands) & set(pos)]
        parts = [
            f"{len(ids)} {what} ({describe_clips(ids)})"
            for ids, what in (
                (empty, "with an empty candidate list"),
                (no_relevant, "without a relevant candidate"),
            )
            if ids
        ]
        if parts and o.on_missing == "raise":
            raise DataError(
                f"{subset.where}: of {len(kept)} queries, {' and '.join(parts)}"
                + ranking_inputs.SKIP_HINT
            )
        if len(empty) + len(no_relevant) == len(kept):
            raise DataError(
                f"{subset.where}: no query has a non-empty candidate list with a relevant candidate"
            )
        score_lists: list[np.ndarray] = []
        for row, (clip, cands, _) in zip(q_unit, kept, strict=True):
            names = [f"{clip.id} candidate {c!r}" for c in cands]
            matrix = unit_rows(cand_matrix[[cand_rows[c] for c in cands]], names, "candidate")
            score_lists.append(matrix @ row if cands else np.zeros(0))
        relevance = [np.array([c in pos for c in cands], dtype=bool) for _, cands, pos in kept]
        scores: dict[str, Any] = reranking_scores(
            relevance, score_lists, ndcg_k=o.ndcg_k, on_missing=o.on_missing
        )
        if text_candidates:
            # The top candidate of each evaluated query is read as its transcript.
            evaluated = [i for i, r in enumerate(relevance) if r.any()]
            best = top_candidates([score_lists[i] for i in evaluated])
            scores |= multi_reference_error_rates(
                [kept[i][2] for i in evaluated],
                [kept[i][1][b] for i, b in zip(evaluated, best, strict=True)],
                strip_punctuation=o.strip_punctuation,
            )
        subset.details["skipped_queries"] = {
            "n_empty": len(empty),
            "n_no_relevant": len(no_relevant),
            "n_unembedded": len(queries) - len(kept),
            "empty_ids": empty[:MAX_LISTED_IDS],
            "no_relevant_ids": no_relevant[:MAX_LISTED_IDS],
        }
        n_candidates = sum(len(cands) for _, cands, _ in kept)
        return RerankingReport(
            **scores,
            n_candidates=n_candidates,
            n_queries_unembedded=len(queries) - len(kept),
            n_candidates_unembedded=sum(len(cands) for _, cands, _ in embedded) - n_candidates,
        )
