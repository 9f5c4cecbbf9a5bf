"""Retrieval: every query ranks a corpus; MRR (main), hit@k, recall@k, nDCG@10, mAP.

**Queries and documents.** Two layouts (``layout``):

- ``"split"`` (default): query clips have ``split`` in ``query_splits`` (``"query"``),
  documents are the clips with ``split`` in ``corpus_splits`` (``"corpus"``); other clips are
  ignored and counted. ``split_field`` reads the split from ``Clip.metadata`` instead (ESC-50:
  ``fold``; values compared as text).
- ``"paired"``: every clip is both a query and a document, in different modalities
  (audio-caption datasets such as Clotho: the clip's audio queries the captions, or a
  caption queries the audio clips).

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
Metric definitions: :mod:`audiobench.metrics.retrieval`.

**Bad input.** A query without any relevant document makes the metrics undefined: an error
naming the queries (``on_missing="raise"``, default), or with ``on_missing="skip"`` it is left
out and counted (``n_skipped`` in the scores, ids in ``details["skipped_queries"]``). Clips the
runner skipped (``--on-error skip``) leave their queries and documents out, counted as
``n_queries_unembedded`` / ``n_documents_unembedded``. A text side needs an encoder with a
text tower (:meth:`RetrievalTask.check_encoder`); a text side without text is an error naming
the clip.

Subsets (``Clip.subset``) are scored separately; with several, ``aggregates["mean"]`` holds
the unweighted mean of every metric and the main score is that mean.

The helpers below (list parsing, subset grouping, embedding matrices, result validation) are
shared by the reranking and zero-shot classification families.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from audiobench.audio import Clip
from audiobench.encoder import Encoder, Modality
from audiobench.families.score_checks import MEAN_GROUP, cutoff_metric, flat_score_problems
from audiobench.task import Embedder, Task, TaskFamily, TaskScores

__all__ = ["LIST_SEPARATOR", "RetrievalTask", "parse_list"]

#: Separator of list-valued metadata in folder ``labels.csv`` files (``relevant``,
#: ``candidates``, ``positives``): ``"a|b|c"``. Items are stripped; empty items are dropped.
LIST_SEPARATOR = "|"
#: How many offending ids an error message or a details entry lists.
MAX_LISTED = 20

Modal = Literal["audio", "text"]


# -- helpers shared by the retrieval, reranking and zero-shot classification families ---------


def describe(names: Sequence[str]) -> str:
    """``'a', 'b' and 3 more``: at most :data:`MAX_LISTED` names."""
    shown = ", ".join(repr(n) for n in names[:MAX_LISTED])
    rest = len(names) - MAX_LISTED
    return f"{shown} and {rest} more" if rest > 0 else shown


def parse_list(value: Any, *, field: str, clip_id: str) -> list[str]:
    """A list-valued metadata field as a list of strings.

    Accepts a list or tuple (a Hugging Face sequence column) of strings or integers, or one
    string whose items are joined by :data:`LIST_SEPARATOR` (a folder ``labels.csv`` cell).
    Items are stripped and empty ones dropped, so ``""`` is the empty list.
    """
    if value is None:
        return []
    if isinstance(value, str):
        items: Iterable[Any] = value.split(LIST_SEPARATOR)
    elif isinstance(value, list | tuple | np.ndarray):
        items = list(value)
    else:
        raise ValueError(
            f"clip {clip_id!r}: metadata[{field!r}] must be a list of strings or one string "
            f"joined by {LIST_SEPARATOR!r}, not {type(value).__name__}"
        )
    out = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, str | int | np.integer):
            raise ValueError(
                f"clip {clip_id!r}: metadata[{field!r}] holds {item!r}; items must be strings"
            )
        text = str(item).strip()
        if text:
            out.append(text)
    return out


def summarize_subsets(
    per_subset: Mapping[str, Mapping[str, Any]], main: str, counts: frozenset[str]
) -> tuple[float | None, dict[str, dict[str, Any]]]:
    """The main score and aggregates of per-subset reports.

    One subset: its own main metric, no aggregates. Several: ``aggregates["mean"]`` holds the
    unweighted mean over subsets of every metric (counts are left out); a metric that is
    undefined (None) or missing in any subset makes its mean None rather than averaging fewer.
    """
    if len(per_subset) == 1:
        (report,) = per_subset.values()
        value = report.get(main)
        return (None if value is None else float(value)), {}
    names: list[str] = []
    for report in per_subset.values():
        names += [k for k in report if k not in counts and k not in names]
    mean: dict[str, Any] = {}
    for name in names:
        values = [report.get(name) for report in per_subset.values()]
        numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
        mean[name] = float(np.mean(numbers)) if len(numbers) == len(values) else None
    mean["n_subsets"] = len(per_subset)
    mean["subsets"] = list(per_subset)
    value = mean.get(main)
    return value, {MEAN_GROUP: mean}


def embed_audio_matrix(
    embedder: Embedder, clips: Sequence[Clip], description: str
) -> tuple[dict[str, int], np.ndarray]:
    """Pooled embeddings of ``clips`` as one ``[n, D]`` float64 matrix, and each kept id's row.

    All clips are collated together, so padded (``flatten``) embeddings share one width.
    Clips the runner skipped have no row.
    """
    from audiobench.pooling import collate

    if not clips:
        return {}, np.zeros((0, 0))
    kept, arrays = embedder.embed(clips, description)
    if not kept:
        return {}, np.zeros((0, 0))
    matrix = collate([np.asarray(a) for a in arrays]).astype(np.float64)
    return {clip.id: i for i, clip in enumerate(kept)}, matrix


def embed_text_matrix(
    embedder: Embedder, texts: Sequence[str], description: str
) -> tuple[dict[str, int], np.ndarray]:
    """Text embeddings of the distinct ``texts`` (``[n, D]`` float64) and each text's row."""
    unique = list(dict.fromkeys(texts))
    if not unique:
        return {}, np.zeros((0, 0))
    matrix = np.asarray(embedder.embed_text(unique, description), dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != len(unique):
        raise ValueError(
            f"model {embedder.encoder.meta.name!r} returned text embeddings of shape "
            f"{matrix.shape} for {len(unique)} texts; expected [n, D]"
        )
    return {text: i for i, text in enumerate(unique)}, matrix


def unit_rows(matrix: np.ndarray, names: Sequence[str], what: str) -> np.ndarray:
    """Rows scaled to unit L2 norm (float64); non-finite or zero rows are an error naming them."""
    matrix = np.asarray(matrix, dtype=np.float64)
    bad = [names[i] for i in np.flatnonzero(~np.isfinite(matrix).all(axis=1))]
    if bad:
        raise ValueError(f"{what} embeddings have NaN or infinite values: {describe(bad)}")
    norms = np.linalg.norm(matrix, axis=1)
    zero = [names[i] for i in np.flatnonzero(norms == 0)]
    if zero:
        raise ValueError(f"{what} embeddings are zero vectors (no cosine): {describe(zero)}")
    return matrix / norms[:, None]


def check_same_width(a: np.ndarray, b: np.ndarray, what_a: str, what_b: str, model: str) -> None:
    if a.shape[1] != b.shape[1]:
        raise ValueError(
            f"model {model!r}: {what_a} embeddings have dimension {a.shape[1]} but {what_b} "
            f"embeddings {b.shape[1]}; they must share one space"
        )


def check_ks(ks: Sequence[int], name: str = "ks") -> tuple[int, ...]:
    values = tuple(ks)
    if not values or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in values):
        raise ValueError(f"{name} must be positive integers, got {list(values)!r}")
    return tuple(sorted(set(values)))


# -- the retrieval family ------------------------------------------------------------------


@dataclass(frozen=True)
class _Item:
    """One query or document: a clip's audio (``text`` None) or one of its texts."""

    clip: Clip
    text: str | None


_COUNTS = frozenset(
    {
        "n_queries",
        "n_skipped",
        "n_documents",
        "n_queries_unembedded",
        "n_documents_unembedded",
        "n_clips_unused",
    }
)


class RetrievalTask(Task):
    """Base of retrieval tasks; a concrete task sets metadata and the class options below."""

    family: ClassVar[TaskFamily] = TaskFamily.RETRIEVAL
    query_modality: ClassVar[Modal] = "audio"
    document_modality: ClassVar[Modal] = "audio"
    layout: ClassVar[Literal["split", "paired"]] = "split"
    query_splits: ClassVar[tuple[str, ...]] = ("query",)
    corpus_splits: ClassVar[tuple[str, ...]] = ("corpus",)
    #: Read the split from ``Clip.metadata[split_field]`` instead of ``Clip.split``.
    split_field: ClassVar[str | None] = None
    #: ``Clip.text`` holds several texts joined by this separator (None: one text).
    text_separator: ClassVar[str | None] = None
    index: ClassVar[Literal["exact", "faiss"]] = "exact"
    ks: ClassVar[tuple[int, ...]] = (1, 5, 10)
    ndcg_k: ClassVar[int] = 10
    #: Documents retrieved per query with ``index="faiss"``.
    depth: ClassVar[int] = 100
    on_missing: ClassVar[Literal["raise", "skip"]] = "raise"

    def __init__(
        self,
        *,
        index: Literal["exact", "faiss"] | None = None,
        ks: Sequence[int] | None = None,
        ndcg_k: int | None = None,
        depth: int | None = None,
        on_missing: Literal["raise", "skip"] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.index = index or type(self).index
        if self.index not in ("exact", "faiss"):
            raise ValueError(f"index must be 'exact' or 'faiss', got {self.index!r}")
        self.ks = check_ks(ks if ks is not None else type(self).ks)
        self.ndcg_k = check_ks([ndcg_k if ndcg_k is not None else type(self).ndcg_k], "ndcg_k")[0]
        self.depth = check_ks([depth if depth is not None else type(self).depth], "depth")[0]
        if self.index == "faiss" and self.depth < max(*self.ks, self.ndcg_k):
            raise ValueError(
                f"depth {self.depth} is below the largest cutoff {max(*self.ks, self.ndcg_k)}"
            )
        self.on_missing = on_missing or type(self).on_missing
        if self.on_missing not in ("raise", "skip"):
            raise ValueError(f"on_missing must be 'raise' or 'skip', got {self.on_missing!r}")
        if self.layout == "paired" and self.query_modality == self.document_modality:
            raise ValueError(
                f"task {self.name}: the paired layout needs two modalities (a clip would "
                "retrieve itself)"
            )

    @classmethod
    def check_encoder(cls, encoder: Encoder) -> None:
        if "text" in (cls.query_modality, cls.document_modality) and (
            Modality.TEXT not in encoder.meta.modalities
        ):
            raise ValueError(
                f"model {encoder.meta.name!r} has no text encoder; "
                f"{cls.__name__} needs one ({cls.query_modality} -> {cls.document_modality})"
            )

    @classmethod
    def score_problems(cls, scores: dict[str, Any]) -> list[str]:
        """Unknown subsets and metrics, values outside [0, 1], counts that are not counts."""

        def bounds(name: str) -> tuple[float, float] | None:
            if name in ("mrr", "map") or cutoff_metric(name, ("ndcg@", "hit@", "recall@")):
                return (0.0, 1.0)
            return None

        return flat_score_problems(
            scores,
            subsets=cls.metadata.subsets,
            metric_range=bounds,
            counts=_COUNTS,
            known="mrr, map, ndcg@<k>, hit@<k>, recall@<k>",
        )

    # -- evaluation ------------------------------------------------------------------------

    def evaluate(self, embedder: Embedder, clips: Sequence[Clip]) -> TaskScores:
        if not clips:
            raise ValueError(f"task {self.name}: no clips to evaluate")
        per_subset: dict[str, dict[str, Any]] = {}
        skipped: dict[str, dict[str, Any]] = {}
        for subset, group in self.clips_by_subset(clips).items():
            per_subset[subset], skipped[subset] = self._evaluate_group(embedder, subset, group)
        main, aggregates = summarize_subsets(per_subset, self.metadata.main_score, _COUNTS)
        details: dict[str, Any] = {
            "query_modality": self.query_modality,
            "document_modality": self.document_modality,
            "layout": self.layout,
            "similarity": "cosine",
            "index": self.index,
            "ks": list(self.ks),
            "ndcg_k": self.ndcg_k,
            "on_missing": self.on_missing,
            "skipped_queries": skipped,
        }
        if self.index == "faiss":
            details["depth"] = self.depth
        return TaskScores(
            main_score=main, scores=per_subset, aggregates=aggregates, details=details
        )

    def _split_of(self, clip: Clip) -> str | None:
        if self.split_field is None:
            return clip.split
        value = clip.metadata.get(self.split_field)
        return None if value is None else str(value)

    def _partition(self, subset: str, group: Sequence[Clip]) -> tuple[list[Clip], list[Clip]]:
        if self.layout == "paired":
            return list(group), list(group)
        queries = [c for c in group if self._split_of(c) in self.query_splits]
        corpus = [c for c in group if self._split_of(c) in self.corpus_splits]
        if not queries or not corpus:
            found = sorted({str(self._split_of(c)) for c in group})
            field = f"metadata[{self.split_field!r}]" if self.split_field else "split"
            raise ValueError(
                f"task {self.name}, subset {subset}: needs query clips ({field} in "
                f"{list(self.query_splits)}) and corpus clips ({field} in "
                f"{list(self.corpus_splits)}); found {len(queries)} and {len(corpus)} "
                f"(values present: {found})"
            )
        return queries, corpus

    def _items(self, clips: Sequence[Clip], modality: Modal, role: str) -> list[_Item]:
        if modality == "audio":
            return [_Item(clip, None) for clip in clips]
        items = []
        for clip in clips:
            pieces = self._texts(clip)
            if not pieces:
                raise ValueError(
                    f"task {self.name}: {role} clip {clip.id!r} has no text, but its {role} "
                    "side is text"
                )
            items += [_Item(clip, text) for text in pieces]
        return items

    def _texts(self, clip: Clip) -> list[str]:
        if clip.text is None:
            return []
        if self.text_separator is None:
            return [clip.text.strip()] if clip.text.strip() else []
        return [p.strip() for p in clip.text.split(self.text_separator) if p.strip()]

    def _explicit_relevance(
        self, queries: Sequence[Clip], corpus: Sequence[Clip]
    ) -> dict[str, set[str]]:
        """``metadata["relevant"]`` of each query clip that has it, checked against the corpus."""
        corpus_ids = {c.id for c in corpus}
        explicit: dict[str, set[str]] = {}
        for clip in queries:
            if "relevant" not in clip.metadata:
                continue
            ids = parse_list(clip.metadata["relevant"], field="relevant", clip_id=clip.id)
            unknown = [i for i in ids if i not in corpus_ids]
            if unknown:
                raise ValueError(
                    f"task {self.name}: query clip {clip.id!r} lists relevant document(s) "
                    f"{describe(unknown)} that are not corpus clips"
                )
            explicit[clip.id] = set(ids)
        return explicit

    def _matrix(
        self,
        items: Sequence[_Item],
        audio_rows: Mapping[str, int],
        audio: np.ndarray,
        text_rows: Mapping[str, int],
        text: np.ndarray,
    ) -> tuple[list[_Item], np.ndarray, int]:
        """The embedded items, their embedding rows, and how many had no embedding."""
        kept: list[_Item] = []
        rows: list[np.ndarray] = []
        for item in items:
            if item.text is None:
                row = audio_rows.get(item.clip.id)
                if row is None:  # the runner skipped this clip (--on-error skip)
                    continue
                rows.append(audio[row])
            else:
                rows.append(text[text_rows[item.text]])
            kept.append(item)
        matrix = np.stack(rows) if rows else np.zeros((0, 0))
        return kept, matrix, len(items) - len(kept)

    def _evaluate_group(
        self, embedder: Embedder, subset: str, group: Sequence[Clip]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        from audiobench.metrics import retrieval_scores

        queries, corpus = self._partition(subset, group)
        explicit = self._explicit_relevance(queries, corpus)
        q_items = self._items(queries, self.query_modality, "query")
        d_items = self._items(corpus, self.document_modality, "document")

        audio_clips = list(
            {it.clip.id: it.clip for it in [*q_items, *d_items] if it.text is None}.values()
        )
        audio_rows, audio = embed_audio_matrix(embedder, audio_clips, f"{self.name} {subset}")
        texts = [it.text for it in [*q_items, *d_items] if it.text is not None]
        text_rows, text = embed_text_matrix(embedder, texts, f"{self.name} {subset} texts")
        q_kept, q_matrix, q_lost = self._matrix(q_items, audio_rows, audio, text_rows, text)
        d_kept, d_matrix, d_lost = self._matrix(d_items, audio_rows, audio, text_rows, text)
        if not q_kept or not d_kept:
            raise ValueError(
                f"task {self.name}, subset {subset}: no {'queries' if not q_kept else 'documents'}"
                " left once clips that could not be embedded were skipped"
            )
        model = embedder.encoder.meta.name
        check_same_width(q_matrix, d_matrix, self.query_modality, self.document_modality, model)

        by_clip: dict[str, list[int]] = {}
        by_label: dict[str, list[int]] = {}
        for d, item in enumerate(d_kept):
            by_clip.setdefault(item.clip.id, []).append(d)
            if item.clip.label is not None:
                by_label.setdefault(item.clip.label, []).append(d)
        relevance: list[list[int]] = []
        for item in q_kept:
            if item.clip.id in explicit:
                docs = [d for c in explicit[item.clip.id] for d in by_clip.get(c, [])]
            else:
                docs = by_clip.get(item.clip.id, []) if self.layout == "paired" else []
                if item.clip.label is not None:
                    docs = docs + by_label.get(item.clip.label, [])
            relevance.append(sorted(set(docs)))
        missing = [item.clip.id for item, rel in zip(q_kept, relevance, strict=True) if not rel]
        if missing and (self.on_missing == "raise" or len(missing) == len(q_kept)):
            hint = (
                "; pass on_missing='skip' to leave them out (counted in the result)"
                if self.on_missing == "raise"
                else ""
            )
            raise ValueError(
                f"task {self.name}, subset {subset}: {len(missing)} of {len(q_kept)} queries have "
                f"no relevant document (query clips: {describe(missing)}){hint}"
            )

        q_ids = [it.clip.id for it in q_kept]
        d_ids = [it.clip.id for it in d_kept]
        q_unit = unit_rows(q_matrix, q_ids, f"{self.name}: query")
        d_unit = unit_rows(d_matrix, d_ids, f"{self.name}: document")
        options = {"ks": self.ks, "ndcg_k": self.ndcg_k, "on_missing": self.on_missing}
        if self.index == "exact":
            report = retrieval_scores(relevance, scores=q_unit @ d_unit.T, **options)
        else:
            report = self._faiss_report(relevance, q_unit, d_unit, options)
        report.update(
            n_documents=len(d_kept),
            n_queries_unembedded=q_lost,
            n_documents_unembedded=d_lost,
        )
        if self.layout == "split":
            used = {c.id for c in queries} | {c.id for c in corpus}
            report["n_clips_unused"] = sum(c.id not in used for c in group)
        skipped = {
            "n_no_relevant": len(missing),
            "n_unembedded": q_lost,
            "no_relevant_ids": list(dict.fromkeys(missing))[:MAX_LISTED],
        }
        return report, skipped

    def _faiss_report(
        self,
        relevance: list[list[int]],
        queries: np.ndarray,
        docs: np.ndarray,
        options: dict[str, Any],
    ) -> dict[str, Any]:
        from audiobench.metrics import retrieval_scores, top_k

        depth = min(self.depth, docs.shape[0])
        _, ranking = top_k(queries, docs, depth, metric="cosine", index="faiss")
        if depth < docs.shape[0]:
            return retrieval_scores(relevance, ranking=ranking, **options)
        # The whole corpus is ranked: minus the rank is a score with the same order, and it
        # allows cutoffs beyond a small corpus, as the exact path does.
        scores = np.empty(ranking.shape, dtype=np.float64)
        np.put_along_axis(scores, ranking, -np.arange(depth, dtype=np.float64)[None], axis=1)
        return retrieval_scores(relevance, scores=scores, **options)
