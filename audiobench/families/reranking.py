"""Reranking: every audio query orders its own candidate list; mAP (main), MRR, nDCG.

**Data contract.** A clip is a query when its ``split`` is ``query_split`` (``"query"``) or
it carries ``metadata["candidates"]``. A query's

- ``candidates`` are texts (``candidate_modality="text"``) or clip ids of other clips of the
  task (``"audio"``);
- ``positives`` are the relevant candidates (texts or clip ids).

Both are lists (a Hugging Face sequence column) or, in a folder ``labels.csv``, one string
with the items joined by ``|`` (:data:`~audiobench.families.retrieval.LIST_SEPARATOR`; so a
text candidate cannot contain ``|``). A candidate is relevant when it equals one of the
positives; a positive that is not among the candidates marks nothing (it still serves as a
reference transcript, below).

**Scoring.** Each candidate's score is the cosine similarity between the query clip's pooled
audio embedding and the candidate's embedding (the candidate clip's audio, or the text
tower's embedding of the candidate text). Candidates are ranked by decreasing score, ties to
the earlier candidate; metric definitions: :mod:`audiobench.metrics.reranking`. For text
candidates the top-ranked candidate is also read as a transcript of the query:
``wer``/``cer`` are the corpus-level word and character error rates
(:mod:`audiobench.metrics.text_errors`; lowercased, and with punctuation removed when
``strip_punctuation``) of the top candidates against, for each query, the positive with the
fewest edits to it (the usual multi-reference convention; with one positive, that positive).

**Bad input.** A query with an empty candidate list or without a relevant candidate makes the
metrics undefined: an error naming the queries (``on_missing="raise"``, default), or with
``on_missing="skip"`` it is left out of every mean (WER/CER included) and counted
(``n_skipped_empty``, ``n_skipped_no_relevant``, ids in ``details["skipped_queries"]``). An
audio candidate id that is not a clip of the task is an error. Clips the runner skipped
(``--on-error skip``) drop their queries (``n_queries_unembedded``) and candidate entries
(``n_candidates_unembedded``). Text candidates need an encoder with a text tower.

Subsets (``Clip.subset``) are scored separately and averaged as in the retrieval family.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal

import numpy as np

from audiobench.audio import Clip
from audiobench.encoder import Encoder, Modality
from audiobench.families.retrieval import (
    MAX_LISTED,
    check_ks,
    check_same_width,
    describe,
    embed_audio_matrix,
    embed_text_matrix,
    parse_list,
    summarize_subsets,
    unit_rows,
)
from audiobench.families.score_checks import cutoff_metric, flat_score_problems
from audiobench.task import Embedder, Task, TaskFamily, TaskScores

__all__ = ["RerankingTask", "closest_references"]

_COUNTS = frozenset(
    {
        "n_queries",
        "n_skipped",
        "n_skipped_empty",
        "n_skipped_no_relevant",
        "n_candidates",
        "n_queries_unembedded",
        "n_candidates_unembedded",
    }
)


def closest_references(
    positives: Sequence[Sequence[str]],
    hypotheses: Sequence[str],
    unit: Literal["word", "char"],
    *,
    lowercase: bool = True,
    strip_punctuation: bool = False,
) -> list[str]:
    """For each hypothesis, the positive with the fewest ``unit`` edits to it (first on ties)."""
    from audiobench.metrics import edit_distance, normalize_text

    def units(text: str) -> Sequence[str]:
        norm = normalize_text(text, lowercase=lowercase, strip_punctuation=strip_punctuation)
        return norm.split() if unit == "word" else norm

    chosen = []
    for refs, hyp in zip(positives, hypotheses, strict=True):
        if not refs:
            raise ValueError("a query without positives has no reference text")
        target = units(hyp)
        chosen.append(min(refs, key=lambda ref: edit_distance(units(ref), target)))
    return chosen


class RerankingTask(Task):
    """Base of reranking tasks; a concrete task sets metadata and the class options below."""

    family: ClassVar[TaskFamily] = TaskFamily.RERANKING
    candidate_modality: ClassVar[Literal["audio", "text"]] = "text"
    query_split: ClassVar[str] = "query"
    ndcg_k: ClassVar[int] = 10
    on_missing: ClassVar[Literal["raise", "skip"]] = "raise"
    #: Text normalisation for WER/CER (always lowercased).
    strip_punctuation: ClassVar[bool] = False

    def __init__(
        self,
        *,
        ndcg_k: int | None = None,
        on_missing: Literal["raise", "skip"] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.ndcg_k = check_ks([ndcg_k if ndcg_k is not None else type(self).ndcg_k], "ndcg_k")[0]
        self.on_missing = on_missing or type(self).on_missing
        if self.on_missing not in ("raise", "skip"):
            raise ValueError(f"on_missing must be 'raise' or 'skip', got {self.on_missing!r}")

    @classmethod
    def check_encoder(cls, encoder: Encoder) -> None:
        if cls.candidate_modality == "text" and Modality.TEXT not in encoder.meta.modalities:
            raise ValueError(
                f"model {encoder.meta.name!r} has no text encoder; {cls.__name__} ranks text "
                "candidates and needs an audio-text model (or an ASR -> text-embedding cascade)"
            )

    @classmethod
    def score_problems(cls, scores: dict[str, Any]) -> list[str]:
        """Unknown subsets and metrics, ranking metrics outside [0, 1], negative error rates."""

        def bounds(name: str) -> tuple[float, float] | None:
            if name in ("map", "mrr", "ndcg") or cutoff_metric(name, ("ndcg@",)):
                return (0.0, 1.0)
            if name in ("wer", "cer"):
                return (0.0, float("inf"))
            return None

        return flat_score_problems(
            scores,
            subsets=cls.metadata.subsets,
            metric_range=bounds,
            counts=_COUNTS,
            known="map, mrr, ndcg, ndcg@<k>, wer, cer",
        )

    def is_query(self, clip: Clip) -> bool:
        return clip.split == self.query_split or "candidates" in clip.metadata

    def evaluate(self, embedder: Embedder, clips: Sequence[Clip]) -> TaskScores:
        if not clips:
            raise ValueError(f"task {self.name}: no clips to evaluate")
        by_id = {clip.id: clip for clip in clips}
        per_subset: dict[str, dict[str, Any]] = {}
        skipped: dict[str, dict[str, Any]] = {}
        for subset, group in self.clips_by_subset(clips).items():
            queries = [clip for clip in group if self.is_query(clip)]
            if not queries:
                continue  # a subset of candidate clips only
            per_subset[subset], skipped[subset] = self._evaluate_group(
                embedder, subset, queries, by_id
            )
        if not per_subset:
            raise ValueError(
                f"task {self.name}: no query clips (split {self.query_split!r} or "
                "metadata['candidates'])"
            )
        main, aggregates = summarize_subsets(per_subset, self.metadata.main_score, _COUNTS)
        details: dict[str, Any] = {
            "candidate_modality": self.candidate_modality,
            "similarity": "cosine",
            "ndcg_k": self.ndcg_k,
            "on_missing": self.on_missing,
            "skipped_queries": skipped,
        }
        if self.candidate_modality == "text":
            details["text_normalization"] = {
                "lowercase": True,
                "strip_punctuation": self.strip_punctuation,
                "reference": "closest positive",
            }
        return TaskScores(
            main_score=main, scores=per_subset, aggregates=aggregates, details=details
        )

    def _lists(
        self, queries: Sequence[Clip], by_id: dict[str, Clip]
    ) -> tuple[list[list[str]], list[list[str]]]:
        candidates, positives = [], []
        for clip in queries:
            cands = parse_list(clip.metadata.get("candidates"), field="candidates", clip_id=clip.id)
            pos = parse_list(clip.metadata.get("positives"), field="positives", clip_id=clip.id)
            if self.candidate_modality == "audio":
                unknown = [c for c in dict.fromkeys(cands) if c not in by_id]
                if unknown:
                    raise ValueError(
                        f"task {self.name}: query clip {clip.id!r} lists candidate(s) "
                        f"{describe(unknown)} that are not clips of the task"
                    )
            candidates.append(cands)
            positives.append(pos)
        return candidates, positives

    def _evaluate_group(
        self,
        embedder: Embedder,
        subset: str,
        queries: Sequence[Clip],
        by_id: dict[str, Clip],
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        from audiobench.metrics import (
            character_error_rate,
            reranking_scores,
            top_candidates,
            word_error_rate,
        )

        candidates, positives = self._lists(queries, by_id)
        audio_clips = {clip.id: clip for clip in queries}
        if self.candidate_modality == "audio":
            for cands in candidates:
                audio_clips.update((c, by_id[c]) for c in cands)
        rows, audio = embed_audio_matrix(
            embedder, list(audio_clips.values()), f"{self.name} {subset}"
        )
        if self.candidate_modality == "text":
            texts = [c for cands in candidates for c in cands]
            text_rows, text = embed_text_matrix(embedder, texts, f"{self.name} {subset} texts")
            if text_rows and rows:
                check_same_width(audio, text, "audio", "text", embedder.encoder.meta.name)
            cand_rows, cand_matrix = text_rows, text
        else:
            cand_rows, cand_matrix = rows, audio

        q_ids = [clip.id for clip in queries if clip.id in rows]
        if not q_ids:
            raise ValueError(f"task {self.name}, subset {subset}: no query could be embedded")
        q_unit = dict(
            zip(q_ids, unit_rows(audio[[rows[i] for i in q_ids]], q_ids, "query"), strict=True)
        )
        n_unembedded_candidates = 0
        kept: list[tuple[Clip, list[str], list[str]]] = []
        for clip, cands, pos in zip(queries, candidates, positives, strict=True):
            if clip.id not in q_unit:
                continue
            usable = [c for c in cands if c in cand_rows]
            n_unembedded_candidates += len(cands) - len(usable)
            kept.append((clip, usable, pos))
        empty = [clip.id for clip, cands, _ in kept if not cands]
        no_relevant = [clip.id for clip, cands, pos in kept if cands and not set(cands) & set(pos)]
        if (empty or no_relevant) and self.on_missing == "raise":
            parts = []
            if empty:
                parts.append(f"{len(empty)} with an empty candidate list ({describe(empty)})")
            if no_relevant:
                parts.append(
                    f"{len(no_relevant)} without a relevant candidate ({describe(no_relevant)})"
                )
            raise ValueError(
                f"task {self.name}, subset {subset}: of {len(kept)} queries, "
                + " and ".join(parts)
                + "; pass on_missing='skip' to leave them out (counted in the result)"
            )
        if len(empty) + len(no_relevant) == len(kept):
            raise ValueError(
                f"task {self.name}, subset {subset}: no query has a non-empty candidate list "
                "with a relevant candidate"
            )

        score_lists: list[np.ndarray] = []
        relevance: list[np.ndarray] = []
        for clip, cands, pos in kept:
            if cands:
                names = [f"{clip.id} candidate {c!r}" for c in cands]
                matrix = unit_rows(cand_matrix[[cand_rows[c] for c in cands]], names, "candidate")
                score_lists.append(matrix @ q_unit[clip.id])
            else:
                score_lists.append(np.zeros(0))
            relevance.append(np.array([c in set(pos) for c in cands], dtype=bool))
        report: dict[str, Any] = reranking_scores(
            relevance, score_lists, ndcg_k=self.ndcg_k, on_missing=self.on_missing
        )
        if self.candidate_modality == "text":
            evaluated = [
                i for i, (_, cands, pos) in enumerate(kept) if cands and set(cands) & set(pos)
            ]
            best = top_candidates([score_lists[i] for i in evaluated])
            hyps = [kept[i][1][b] for i, b in zip(evaluated, best, strict=True)]
            refs = [kept[i][2] for i in evaluated]
            norm = {"lowercase": True, "strip_punctuation": self.strip_punctuation}
            report["wer"] = word_error_rate(
                closest_references(refs, hyps, "word", **norm), hyps, **norm
            )
            report["cer"] = character_error_rate(
                closest_references(refs, hyps, "char", **norm), hyps, **norm
            )
        report.update(
            n_candidates=int(sum(len(cands) for _, cands, _ in kept)),
            n_queries_unembedded=len(queries) - len(kept),
            n_candidates_unembedded=n_unembedded_candidates,
        )
        skipped = {
            "n_empty": len(empty),
            "n_no_relevant": len(no_relevant),
            "n_unembedded": len(queries) - len(kept),
            "empty_ids": empty[:MAX_LISTED],
            "no_relevant_ids": no_relevant[:MAX_LISTED],
        }
        return report, skipped
