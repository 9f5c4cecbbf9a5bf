"""Retrieval: every query ranks a corpus; MRR (main), hit@k, recall@k, nDCG@k, mAP.

**Queries and documents.** Two layouts (option ``layout``):

- ``"split"`` (default): query clips have ``split`` in ``query_splits`` (``"query"``),
  documents are the clips with ``split`` in ``corpus_splits`` (``"corpus"``); other clips are
  ignored and counted. ``split_field`` reads the split from ``Clip.metadata`` instead (ESC-50:
  ``fold``; values compared as text).
- ``"paired"``: every clip is both a query and a document, in different modalities
  (audio-caption datasets such as Clotho: the clip's audio queries the captions, or a
  caption queries the audio clips).
- ``"all"``: every clip queries every clip in one modality (query by example without a
  query split, e.g. songs by the same artist); a query's own clip is ranked last and is not
  relevant (leave-one-out), except under ``protocol="mteb"``, where it is ranked and relevant
  as in MAEB's ``JamAltArtistA2ARetrieval``.

A side whose modality is ``"audio"`` is the clip's pooled audio embedding; a ``"text"`` side is
``Clip.text`` embedded by the encoder's text tower. With ``text_separator`` set, ``Clip.text``
holds several texts (captions) joined by it; each non-empty, stripped piece is its own query or
document. So audio→audio is query by example, audio→text and text→audio are cross-modal, and a
spoken query against text documents (``query_modality="audio"``, ``document_modality="text"``)
is what a cascade encoder (ASR, then a text embedder) is scored on: its ``encode_audio`` returns
the text embedding of the transcript and its ``encode_text`` embeds the documents.

**Relevance.** A document is relevant to a query when

- the query clip carries ``metadata["relevant"]``: the document's clip id is in it (a list of
  ids, or in a folder ``labels.csv`` one string of ids joined by ``|``); otherwise
- the document comes from the query's own clip (paired layout), or both clips carry the same
  non-empty ``label``.

Every document of a clip in ``relevant`` is relevant (all captions of a relevant clip).

**Scoring.** Cosine similarity of L2-normalised embeddings. ``index="exact"`` (default) scores
every query against every document and ranks the whole corpus, so MRR and mAP are exact;
``index="faiss"`` (optional ``faiss-cpu``) searches a flat faiss index for the ``depth`` best
documents, for corpora too large for a dense score matrix: MRR and mAP are then MRR@depth and
mAP@depth (exact again when ``depth`` ≥ the corpus). Ties rank the lower document index first.
Metric definitions: :mod:`audiobench.metrics.retrieval`. The report names the cut-off metrics
after their cut-offs (``ndcg@10``, ``hit@5``, ``recall@5``), so its metric fields follow the
``ks`` and ``ndcg_k`` options.

**Bad input.** A query without any relevant document makes the metrics undefined: an error
naming the queries (``on_missing="raise"``, default), or with ``on_missing="skip"`` it is left
out and counted (``n_skipped`` in the scores, ids in ``details["skipped_queries"]``). Clips the
runner skipped (``--on-error skip``) leave their queries and documents out, counted as
``n_queries_unembedded`` / ``n_documents_unembedded``. A text side needs an encoder with a
text tower (:meth:`RetrievalTask.check_encoder`); a text side without text is an error naming
the clip.

Subsets (``Clip.subset``) are scored separately; with several, ``aggregates["mean"]`` holds
the unweighted mean of every metric and the main score is that mean.

``protocol="mteb"`` scores as MTEB scores MAEB's retrieval tasks instead: float32 cosine, the
trec metrics at MTEB's cut-offs (``hit_rate_at_5``, ``ndcg_at_10``, ``map_at_1000``, ...), ties
by decreasing document id, queries without a relevant document left out, and texts split by
``text_separator`` exactly as the reference splits them (unstripped, empty pieces kept); see
:mod:`audiobench.families.mteb_protocol`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

import numpy as np
from pydantic import AfterValidator, Field, model_validator

from audiobench import reports as _reports
from audiobench.audio import Clip
from audiobench.encoder import Encoder
from audiobench.errors import DataError
from audiobench.families import mteb_protocol, ranking_inputs
from audiobench.families.mteb_protocol import ByProtocol, MtebReport, MtebSummary, ProtocolOptions
from audiobench.families.ranking_inputs import MAX_LISTED_IDS, embed_both, parse_list, unit_rows
from audiobench.metrics.naming import describe_clips
from audiobench.reports import Count, KeyedReport, Summary, Unit, metric_names
from audiobench.task import Embedder, Subset, Task, TaskFamily

__all__ = ["RetrievalReport", "RetrievalSummary", "RetrievalTask"]

Modal = Literal["audio", "text"]


#: Metrics reported at a cut-off k: ``ndcg@<k>``, ``hit@<k>``, ``recall@<k>``.
CutoffMetric = Annotated[
    str,
    AfterValidator(metric_names(("mrr", "map"), ("ndcg@", ""), ("hit@", ""), ("recall@", ""))),
]
#: Cut-offs as an option: positive, kept sorted and unique.
Cutoffs = Annotated[
    tuple[Annotated[int, Field(ge=1)], ...], AfterValidator(lambda ks: tuple(sorted(set(ks))))
]


class RetrievalScores(KeyedReport):
    """MRR and mAP, and the cut-off metrics (``ndcg@<k>``, ``hit@<k>``, ``recall@<k>``)."""

    __pydantic_extra__: dict[CutoffMetric, Unit | None] = Field(init=False)
    mrr: Unit | None
    map: Unit | None


class RetrievalReport(RetrievalScores):
    """One subset: the metrics over its evaluated queries, and what was counted."""

    n_queries: Count
    n_skipped: Count
    n_documents: Count
    n_queries_unembedded: Count
    n_documents_unembedded: Count
    #: Split layout only: clips in neither the query nor the corpus splits.
    n_clips_unused: Count | None = None


class RetrievalSummary(Summary, RetrievalScores):
    """Unweighted mean over subsets of every metric (None if undefined in any subset)."""

    n_subsets: Count


@dataclass(frozen=True)
class _Item:
    """One query or document: a clip's audio (``text`` None) or one of its texts."""

    clip: Clip
    text: str | None

    @property
    def key(self) -> str:
        """Its row's key among the embeddings: the clip id for audio, else the text."""
        return self.clip.id if self.text is None else self.text


class RetrievalTask(Task):
    """Base of retrieval tasks; a concrete task sets metadata and, where needed, options."""

    family: ClassVar[TaskFamily] = TaskFamily.RETRIEVAL
    Report = ByProtocol(RetrievalReport, MtebReport)
    Summary = ByProtocol(RetrievalSummary, MtebSummary)
    needs_labels = False  # relevance may come from metadata or from the clip itself

    class Options(ProtocolOptions):
        query_modality: Modal = Field("audio", description="Queries: clip audio or its texts.")
        document_modality: Modal = Field("audio", description="Documents: audio or texts.")
        layout: Literal["split", "paired", "all"] = Field(
            "split",
            description="'split': queries and corpus are clips of different splits; "
            "'paired': every clip is both, in the two modalities; 'all': every clip queries "
            "every clip, in one modality.",
        )
        query_splits: tuple[str, ...] = Field(
            ("query",), min_length=1, description="Split values of query clips (split layout)."
        )
        corpus_splits: tuple[str, ...] = Field(
            ("corpus",), min_length=1, description="Split values of corpus clips (split layout)."
        )
        split_field: str | None = Field(
            None, min_length=1, description="Read the split from Clip.metadata[split_field]."
        )
        text_separator: str | None = Field(
            None, min_length=1, description="Clip.text holds several texts joined by this."
        )
        index: Literal["exact", "faiss"] = Field(
            "exact", description="'exact' ranks the whole corpus; 'faiss' the depth best."
        )
        ks: Cutoffs = Field((1, 5, 10), min_length=1, description="Cut-offs of hit@k, recall@k.")
        ndcg_k: int = Field(10, ge=1, description="Cut-off of nDCG.")
        depth: int = Field(100, ge=1, description="Documents retrieved per query with faiss.")
        on_missing: Literal["raise", "skip"] = Field(
            "raise", description="A query without a relevant document: error, or leave it out."
        )

        @model_validator(mode="after")
        def _consistent(self) -> RetrievalTask.Options:
            deepest = max(*self.ks, self.ndcg_k)
            if self.index == "faiss" and self.depth < deepest:
                raise ValueError(f"depth {self.depth} is below the largest cutoff {deepest}")
            if self.layout == "paired" and self.query_modality == self.document_modality:
                raise ValueError(
                    "the paired layout needs two modalities (a clip would retrieve itself)"
                )
            if self.layout == "all" and (
                self.query_modality != self.document_modality or self.index != "exact"
            ):
                raise ValueError("the 'all' layout needs one modality and the exact index")
            return self

    options: Options = Options()

    @classmethod
    def check_main_score(cls, path: tuple[str, ...]) -> None:
        o = cls.options
        if o.protocol == "mteb":
            return mteb_protocol.check_main_score(cls, path)
        cutoffs = [f"{m}@{k}" for m in ("hit", "recall") for k in o.ks]
        cls.require_main_score(path, ["mrr", "map", f"ndcg@{o.ndcg_k}", *cutoffs])

    @classmethod
    def check_encoder(cls, encoder: Encoder) -> None:
        sides = (cls.options.query_modality, cls.options.document_modality)
        why = f"{cls.__name__} needs one ({' -> '.join(sides)})"
        ranking_inputs.require_text_tower(encoder, "text" in sides, why)

    def protocol(self) -> dict[str, Any]:
        o = self.options
        sides = o.model_dump(include={"query_modality", "document_modality", "layout"})
        if o.protocol == "mteb":
            return mteb_protocol.describe(self, **sides)
        ranking = o.model_dump(mode="json", include={"index", "ks", "ndcg_k", "on_missing"})
        depth = {"depth": o.depth} if o.index == "faiss" else {}
        return {**sides, "similarity": "cosine", **ranking, **depth}

    # -- evaluation ------------------------------------------------------------------------

    def _split_of(self, clip: Clip) -> str | None:
        field = self.options.split_field
        value = clip.split if field is None else clip.metadata.get(field)
        return None if value is None else str(value)

    def _partition(self, subset: Subset) -> tuple[list[Clip], list[Clip]]:
        o = self.options
        if o.layout in ("paired", "all"):
            return list(subset.clips), list(subset.clips)
        queries = [c for c in subset.clips if self._split_of(c) in o.query_splits]
        corpus = [c for c in subset.clips if self._split_of(c) in o.corpus_splits]
        if not queries or not corpus:
            found = sorted({str(self._split_of(c)) for c in subset.clips})
            field = f"metadata[{o.split_field!r}]" if o.split_field else "split"
            raise DataError(
                f"{subset.where}: needs query clips ({field} in {list(o.query_splits)}) and "
                f"corpus clips ({field} in {list(o.corpus_splits)}); found {len(queries)} and "
                f"{len(corpus)} (values present: {found})"
            )
        return queries, corpus

    def _items(self, clips: Sequence[Clip], modality: Modal, role: str) -> list[_Item]:
        if modality == "audio":
            return [_Item(clip, None) for clip in clips]
        separator, items = self.options.text_separator, []
        for clip in clips:
            text = clip.text
            pieces = [] if text is None else [text] if separator is None else text.split(separator)
            if self.options.protocol != "mteb":  # the reference keeps them unstripped, and empty
                pieces = [p.strip() for p in pieces if p.strip()]
            if not pieces:
                raise DataError(
                    f"task {self.name}: {role} clip {clip.id!r} has no text, but its {role} "
                    "side is text"
                )
            items += [_Item(clip, piece) for piece in pieces]
        return items

    def _explicit_relevance(
        self, queries: Sequence[Clip], corpus: Sequence[Clip]
    ) -> dict[str, set[str]]:
        """``metadata["relevant"]`` of each query clip that has it, checked against the corpus."""
        corpus_ids = {c.id for c in corpus}
        explicit: dict[str, set[str]] = {}
        for clip in [q for q in queries if "relevant" in q.metadata]:
            ids = parse_list(clip.metadata["relevant"], field="relevant", clip_id=clip.id)
            unknown = [i for i in ids if i not in corpus_ids]
            if unknown:
                raise DataError(
                    f"task {self.name}: query clip {clip.id!r} lists relevant document(s) "
                    f"{describe_clips(unknown)} that are not corpus clips"
                )
            explicit[clip.id] = set(ids)
        return explicit

    def _relevance(
        self, q_kept: Sequence[_Item], d_kept: Sequence[_Item], explicit: dict[str, set[str]]
    ) -> list[list[int]]:
        """Each query's relevant document indices (explicit ids, own clip, same label)."""
        by_clip: defaultdict[str, set[int]] = defaultdict(set)
        by_label: defaultdict[str | None, set[int]] = defaultdict(set)
        for d, item in enumerate(d_kept):
            by_clip[item.clip.id].add(d)
            if item.clip.label is not None:
                by_label[item.clip.label].add(d)
        layout, protocol = self.options.layout, self.options.protocol
        # 'all': the reference counts a clip as relevant to itself; audiobench leaves it out.
        own_counts = layout == "paired" or (layout == "all" and protocol == "mteb")
        relevance: list[list[int]] = []
        for clip in (item.clip for item in q_kept):
            if clip.id in explicit:
                docs = set().union(*(by_clip[c] for c in explicit[clip.id]))
            else:
                docs = by_label.get(clip.label, set()) | (by_clip[clip.id] if own_counts else set())
            if layout == "all" and protocol != "mteb":
                docs = docs - by_clip[clip.id]
            relevance.append(sorted(docs))
        return relevance

    def evaluate_subset(self, embedder: Embedder, subset: Subset) -> _reports.Report:
        from audiobench.metrics import retrieval_scores

        o = self.options
        queries, corpus = self._partition(subset)
        explicit = self._explicit_relevance(queries, corpus)
        q_items = self._items(queries, o.query_modality, "query")
        d_items = self._items(corpus, o.document_modality, "document")
        items = [*q_items, *d_items]
        audio_clips = list({it.clip.id: it.clip for it in items if it.text is None}.values())
        texts = [it.text for it in items if it.text is not None]
        audio_rows, audio, text_rows, text = embed_both(embedder, audio_clips, texts, subset.label)

        def embedded(items: list[_Item], modality: Modal) -> tuple[list[_Item], np.ndarray, int]:
            """The embedded items, their embedding matrix, and how many had no embedding."""
            rows, matrix = (audio_rows, audio) if modality == "audio" else (text_rows, text)
            # An audio item without a row is a clip the runner skipped (--on-error skip).
            kept = [it for it in items if it.key in rows]
            return kept, matrix[[rows[it.key] for it in kept]], len(items) - len(kept)

        q_kept, q_matrix, q_lost = embedded(q_items, o.query_modality)
        d_kept, d_matrix, d_lost = embedded(d_items, o.document_modality)
        if not q_kept or not d_kept:
            raise DataError(
                f"{subset.where}: no {'queries' if not q_kept else 'documents'} left once "
                "clips that could not be embedded were skipped"
            )
        relevance = self._relevance(q_kept, d_kept, explicit)
        if o.protocol == "mteb":
            return mteb_protocol.retrieval_report(
                subset, q_kept, d_kept, q_matrix, d_matrix, relevance
            )
        q_ids, d_ids = [it.clip.id for it in q_kept], [it.clip.id for it in d_kept]
        missing = [i for i, rel in zip(q_ids, relevance, strict=True) if not rel]
        if missing and (o.on_missing == "raise" or len(missing) == len(q_kept)):
            hint = ranking_inputs.SKIP_HINT if o.on_missing == "raise" else ""
            raise DataError(
                f"{subset.where}: {len(missing)} of {len(q_kept)} queries have no relevant "
                f"document (query clips: {describe_clips(missing)}){hint}"
            )

        q_unit = unit_rows(q_matrix, q_ids, f"{self.name}: query")
        d_unit = unit_rows(d_matrix, d_ids, f"{self.name}: document")
        if o.index == "exact":
            ranked: dict[str, Any] = {"scores": q_unit @ d_unit.T}
            if o.layout == "all":  # leave-one-out: a query's own clip ranks last, below any cosine
                ranked["scores"][np.array(q_ids)[:, None] == np.array(d_ids)] = -2.0
        else:
            ranked = self._faiss_ranked(q_unit, d_unit)
        scores = retrieval_scores(
            relevance, **ranked, ks=o.ks, ndcg_k=o.ndcg_k, on_missing=o.on_missing
        )
        if o.layout == "split":
            used = {c.id for c in queries} | {c.id for c in corpus}
            scores["n_clips_unused"] = sum(c.id not in used for c in subset.clips)
        subset.details["skipped_queries"] = {
            "n_no_relevant": len(missing),
            "n_unembedded": q_lost,
            "no_relevant_ids": list(dict.fromkeys(missing))[:MAX_LISTED_IDS],
        }
        return RetrievalReport(
            **scores,
            n_documents=len(d_kept),
            n_queries_unembedded=q_lost,
            n_documents_unembedded=d_lost,
        )

    def _faiss_ranked(self, queries: np.ndarray, docs: np.ndarray) -> dict[str, Any]:
        """The ``ranking`` (or, when it covers the corpus, the ``scores``) that faiss gives."""
        from audiobench.metrics import top_k

        depth = min(self.options.depth, docs.shape[0])
        _, ranking = top_k(queries, docs, depth, metric="cosine", index="faiss")
        if depth < docs.shape[0]:
            return {"ranking": ranking}
        # The whole corpus is ranked: minus the rank is a score with the same order, and it
        # allows cutoffs beyond a small corpus, as the exact path does.
        scores = np.empty(ranking.shape, dtype=np.float64)
        np.put_along_axis(scores, ranking, -np.arange(depth, dtype=np.float64)[None], axis=1)
        return {"scores": scores}
