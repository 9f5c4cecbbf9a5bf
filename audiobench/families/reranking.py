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

**Scoring** is the evaluator's that the ``protocol`` option selects
(:mod:`audiobench.evaluators`): ``"audiobench"`` (:mod:`audiobench.evaluators.reranking`):
cosine similarity between the query clip's pooled audio embedding and each candidate's (the
candidate clip's audio, or the text tower's embedding of the candidate text), ranked by
decreasing score, ties to the earlier candidate; ``map``, ``mrr``, ``ndcg``, ``ndcg@<k>``,
and for text candidates the top candidate read as a transcript (``wer``,
``char_error_rate``, ``candidate_error_rate``; lowercased, and with punctuation removed when
``strip_punctuation``). ``"mteb"`` (:mod:`audiobench.evaluators.mteb`): as MTEB scores
MAEB's reranking tasks (float32 cosine over each query's candidates, the trec metrics at
MTEB's cut-offs, a positive outside the candidates still counted in recall and mAP, queries
without a positive left out).

**Bad input.** A query with an empty candidate list or without a relevant candidate makes
audiobench's metrics undefined: an error naming the queries (``on_missing="raise"``,
default), or with ``on_missing="skip"`` it is left out of every mean (the error rates
included) and counted (``n_skipped_empty``, ``n_skipped_no_relevant``, ids in
``details["skipped_queries"]``). An audio candidate id that is not a clip of the task is an
error. Clips the runner skipped (``--on-error skip``) drop their queries
(``n_queries_unembedded``) and candidate entries (``n_candidates_unembedded``). Text
candidates need an encoder with a text tower.

Subsets (``Clip.subset``) holding queries are scored separately (a subset of candidate clips
only is not a subset of the scores); with several, ``aggregates["mean"]`` holds the unweighted
mean of every metric and the main score is that mean.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np
from pydantic import Field

from audiobench.audio import Clip
from audiobench.encoder import Encoder
from audiobench.errors import DataError
from audiobench.evaluators.evaluator import EvaluatedOptions, EvaluatedTask
from audiobench.evaluators.reranking import RerankingReport, RerankingSummary
from audiobench.families import ranking_inputs
from audiobench.families.ranking_inputs import embed_both, parse_list
from audiobench.metrics.naming import describe_clips
from audiobench.task import Embedder, Subset, TaskFamily, TaskScores

__all__ = ["RerankingInputs", "RerankingReport", "RerankingSummary", "RerankingTask"]

#: A query clip with its candidates (in order) and its positives.
_Query = tuple[Clip, list[str], list[str]]


@dataclass(frozen=True)
class RerankingInputs:
    """One subset's queries, and the embeddings of those that could be embedded."""

    #: Every query clip of the subset, with its listed candidates and positives.
    queries: list[_Query]
    #: The queries whose clip was embedded, with every listed candidate.
    embedded: list[_Query]
    #: The same queries with only their embedded candidates (in order).
    kept: list[_Query]
    #: The kept queries' audio embeddings, one row each.
    query_matrix: np.ndarray
    #: Each embedded candidate's row (a text, or a clip id) in ``candidate_matrix``.
    candidate_rows: dict[str, int]
    candidate_matrix: np.ndarray


class RerankingTask(EvaluatedTask):
    """Base of reranking tasks; a concrete task sets metadata and, where needed, options."""

    family: ClassVar[TaskFamily] = TaskFamily.RERANKING
    needs_labels = False  # relevance comes from each query's positives

    class Options(EvaluatedOptions):
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
    def check_encoder(cls, encoder: Encoder) -> None:
        why = (
            f"{cls.__name__} ranks text candidates and needs an audio-text model (or an ASR -> "
            "text-embedding cascade)"
        )
        ranking_inputs.require_text_tower(encoder, cls.options.candidate_modality == "text", why)

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

    def reranking_inputs(self, embedder: Embedder, subset: Subset) -> RerankingInputs:
        """The subset's queries, their audio embeddings and their candidates' embeddings."""
        text_candidates = self.options.candidate_modality == "text"
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
        return RerankingInputs(
            queries=queries,
            embedded=embedded,
            kept=kept,
            query_matrix=audio[[rows[clip.id] for clip, _, _ in kept]],
            candidate_rows=cand_rows,
            candidate_matrix=cand_matrix,
        )
