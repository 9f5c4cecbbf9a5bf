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
  query split, e.g. songs by the same artist); whether a query's own clip is relevant is the
  evaluator's convention (audiobench's: no, and it is ranked last, leave-one-out; MTEB's:
  yes, as in MAEB's ``JamAltArtistA2ARetrieval``).

A side whose modality is ``"audio"`` is the clip's pooled audio embedding; a ``"text"`` side is
``Clip.text`` embedded by the encoder's text tower. With ``text_separator`` set, ``Clip.text``
holds several texts (captions) joined by it; each piece is its own query or document
(stripped, and empty pieces dropped, unless the evaluator keeps them as they are, as MTEB's
does). So audio→audio is query by example, audio→text and text→audio are cross-modal, and a
spoken query against text documents (``query_modality="audio"``, ``document_modality="text"``)
is what a cascade encoder (ASR, then a text embedder) is scored on: its ``encode_audio`` returns
the text embedding of the transcript and its ``encode_text`` embeds the documents.

**Relevance.** A document is relevant to a query when

- the query clip carries ``metadata["relevant"]``: the document's clip id is in it (a list of
  ids, or in a folder ``labels.csv`` one string of ids joined by ``|``); otherwise
- the document comes from the query's own clip (paired layout), or both clips carry the same
  non-empty ``label``.

Every document of a clip in ``relevant`` is relevant (all captions of a relevant clip).

**Scoring** is the evaluator's that the ``protocol`` option selects
(:mod:`audiobench.evaluators`): ``"audiobench"`` (:mod:`audiobench.evaluators.retrieval`):
cosine similarity, exact or faiss ranking (``index``, ``depth``), ``mrr``, ``map``,
``ndcg@<k>``, ``hit@<k>``, ``recall@<k>`` (the report names the cut-off metrics after the
``ks`` and ``ndcg_k`` options); ``"mteb"`` (:mod:`audiobench.evaluators.mteb`): as MTEB scores
MAEB's retrieval tasks (float32 cosine, the trec metrics at MTEB's cut-offs, ties by
decreasing document id, rows sharing an id collapsed and every judged query scored, one
without a relevant document scoring 0).

**Bad input.** A query without any relevant document makes audiobench's metrics undefined: an
error naming the queries (``on_missing="raise"``, default), or with ``on_missing="skip"`` it is
left out and counted (``n_skipped`` in the scores, ids in ``details["skipped_queries"]``). Clips the
runner skipped (``--on-error skip``) leave their queries and documents out, counted as
``n_queries_unembedded`` / ``n_documents_unembedded``. A text side needs an encoder with a
text tower (:meth:`RetrievalTask.check_encoder`); a text side without text is an error naming
the clip.

Subsets (``Clip.subset``) are scored separately; with several, ``aggregates["mean"]`` holds
the unweighted mean of every metric and the main score is that mean.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import AfterValidator, Field, model_validator

from audiobench.audio import Clip
from audiobench.encoder import Encoder
from audiobench.errors import DataError
from audiobench.evaluators.evaluator import EvaluatedOptions, EvaluatedTask
from audiobench.evaluators.retrieval import RetrievalReport, RetrievalSummary
from audiobench.families import ranking_inputs
from audiobench.families.ranking_inputs import embed_both, parse_list
from audiobench.metrics.naming import describe_clips
from audiobench.task import Embedder, Subset, TaskFamily

__all__ = ["RetrievalInputs", "RetrievalReport", "RetrievalSummary", "RetrievalTask"]

Modal = Literal["audio", "text"]

#: Cut-offs as an option: positive, kept sorted and unique.
Cutoffs = Annotated[
    tuple[Annotated[int, Field(ge=1)], ...], AfterValidator(lambda ks: tuple(sorted(set(ks))))
]


@dataclass(frozen=True)
class _Item:
    """One query or document: a clip's audio (``text`` None) or one of its texts."""

    clip: Clip
    text: str | None

    @property
    def key(self) -> str:
        """Its row's key among the embeddings: the clip id for audio, else the text."""
        return self.clip.id if self.text is None else self.text


@dataclass(frozen=True)
class RetrievalInputs:
    """One subset's embedded queries and documents, and which documents each query wants."""

    queries: list[_Item]
    documents: list[_Item]
    query_matrix: np.ndarray
    document_matrix: np.ndarray
    #: Each query's relevant document indices, sorted.
    relevance: list[list[int]]
    #: Queries and documents left out because their clip could not be embedded.
    n_queries_unembedded: int
    n_documents_unembedded: int
    #: Split layout only: clips in neither the query nor the corpus splits.
    n_clips_unused: int | None


class RetrievalTask(EvaluatedTask):
    """Base of retrieval tasks; a concrete task sets metadata and, where needed, options."""

    family: ClassVar[TaskFamily] = TaskFamily.RETRIEVAL
    needs_labels = False  # relevance may come from metadata or from the clip itself

    class Options(EvaluatedOptions):
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
    def check_encoder(cls, encoder: Encoder) -> None:
        sides = (cls.options.query_modality, cls.options.document_modality)
        why = f"{cls.__name__} needs one ({' -> '.join(sides)})"
        ranking_inputs.require_text_tower(encoder, "text" in sides, why)

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

    def _items(self, clips: Sequence[Clip], modality: Modal, role: str, strip: bool) -> list[_Item]:
        if modality == "audio":
            return [_Item(clip, None) for clip in clips]
        separator, items = self.options.text_separator, []
        for clip in clips:
            text = clip.text
            pieces = [] if text is None else [text] if separator is None else text.split(separator)
            if strip:
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
        self,
        q_kept: Sequence[_Item],
        d_kept: Sequence[_Item],
        explicit: dict[str, set[str]],
        leave_one_out: bool,
    ) -> list[list[int]]:
        """Each query's relevant document indices (explicit ids, own clip, same label)."""
        by_clip: defaultdict[str, set[int]] = defaultdict(set)
        by_label: defaultdict[str | None, set[int]] = defaultdict(set)
        for d, item in enumerate(d_kept):
            by_clip[item.clip.id].add(d)
            if item.clip.label is not None:
                by_label[item.clip.label].add(d)
        layout = self.options.layout
        # 'all': a clip is relevant to itself unless the evaluator leaves it out.
        own_counts = layout == "paired" or (layout == "all" and not leave_one_out)
        relevance: list[list[int]] = []
        for clip in (item.clip for item in q_kept):
            if clip.id in explicit:
                docs = set().union(*(by_clip[c] for c in explicit[clip.id]))
            else:
                docs = by_label.get(clip.label, set()) | (by_clip[clip.id] if own_counts else set())
            if layout == "all" and leave_one_out:
                docs = docs - by_clip[clip.id]
            relevance.append(sorted(docs))
        return relevance

    def retrieval_inputs(
        self, embedder: Embedder, subset: Subset, *, strip_texts: bool, leave_one_out: bool
    ) -> RetrievalInputs:
        """The subset's queries and documents, embedded, with each query's relevant documents.

        Two conventions are the scoring evaluator's: ``strip_texts`` (strip the pieces of a
        text split by ``text_separator`` and drop empty ones) and ``leave_one_out`` (layout
        ``all``: a query's own clip is not relevant to it).
        """
        o = self.options
        queries, corpus = self._partition(subset)
        explicit = self._explicit_relevance(queries, corpus)
        q_items = self._items(queries, o.query_modality, "query", strip_texts)
        d_items = self._items(corpus, o.document_modality, "document", strip_texts)
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
        unused = None
        if o.layout == "split":
            used = {c.id for c in queries} | {c.id for c in corpus}
            unused = sum(c.id not in used for c in subset.clips)
        return RetrievalInputs(
            queries=q_kept,
            documents=d_kept,
            query_matrix=q_matrix,
            document_matrix=d_matrix,
            relevance=self._relevance(q_kept, d_kept, explicit, leave_one_out),
            n_queries_unembedded=q_lost,
            n_documents_unembedded=d_lost,
            n_clips_unused=unused,
        )
