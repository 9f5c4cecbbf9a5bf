"""The reference protocol: each family scored as MTEB scores its MAEB tasks (``protocol="mteb"``).

Every family that has a MAEB task type takes the option ``protocol``: ``"audiobench"`` (the
family's own, richer evaluation, the default of audiobench's tasks) or ``"mteb"`` (the default
of the MAEB tasks in ``tasks/maeb.py``). Under ``"mteb"`` a subset is scored by the metric
functions that reproduce the reference evaluator on the same embeddings (each checked against
it, ``tests/metrics/test_mteb_protocols.py``), with the reference's fixed settings:

- **classification**: few-shot logistic regression (:mod:`audiobench.metrics.logreg_protocol`),
  8 training clips per label, seed 42. A subset whose clips all belong to one split is
  cross-validated (5 folds, one experiment per fold); otherwise the ``train`` clips train and
  the evaluation split (``test`` where present, else the one other split) is scored, 10
  experiments. Multi-label tasks: one regression per label, 10 experiments, main score
  ``lrap``. Labels that are all whole numbers written as text are compared as integers, as the
  reference reads integer label columns.
- **clustering**: mini-batch k-means on 10 bootstrap draws of 16,384 clips
  (:mod:`audiobench.metrics.kmeans_bootstrap`); ``v_measure``, ``ami`` and their spread.
- **retrieval** and **reranking**: float32 cosine scores (:mod:`audiobench.metrics.cosine_scores`)
  and ``trec_eval``'s metrics at k = 1, 3, 5, 10, 20, 100, 1000
  (:mod:`audiobench.metrics.trec_retrieval`), ties broken by decreasing document id; queries
  without a relevant document are left out (the reference loads only judged queries).
  Reranking ranks each query's candidates only; a relevant document outside them still counts
  in recall and mAP.
- **zero-shot classification**: float32 cosine to each class prompt, arg-max, ties to the
  first class (:mod:`audiobench.metrics.zero_shot_argmax`).
- **pair classification**: the scores of
  :func:`audiobench.metrics.pair_classification.pair_classification_scores`, the reference's
  keys without the thresholds.

A report under ``"mteb"`` is a :class:`MtebReport`: the reference's metric keys (``accuracy``,
``hit_rate_at_5``, ``max_ap``, ...) with their values (None where the reference has none), the
number of scored items (``n_samples``: clips, pairs or queries), and, where the reference
repeats an experiment, each experiment's values (``per_experiment``). The mean over subsets is
a :class:`MtebSummary`, as the reference averages its language subsets. Where the reference
and audiobench differ on purpose, the README's MAEB section says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Generic, Literal, TypeVar, cast

import numpy as np
from pydantic import ConfigDict, Field, StringConstraints

from audiobench.reports import Count, Report, Summary, mean_or_none
from audiobench.task import Embedder, Subset, Task, error_in_context

if TYPE_CHECKING:
    from audiobench.audio import Clip
    from audiobench.families.pair_classification import PairClassificationTask
    from audiobench.families.reranking import RerankingTask
    from audiobench.families.zero_shot_classification import ZeroShotClassificationTask

__all__ = [
    "PROTOCOL_DESCRIPTION",
    "ByProtocol",
    "MtebReport",
    "MtebSummary",
    "Protocol",
    "check_main_score",
    "classification_report",
    "clustering_report",
    "describe",
    "mteb_labels",
    "pair_report",
    "reranking_report",
    "retrieval_report",
    "summarize",
    "zero_shot_report",
]

#: The protocol option of every family with a MAEB task type.
Protocol = Literal["audiobench", "mteb"]
PROTOCOL_DESCRIPTION = (
    "'audiobench': the family's own evaluation; 'mteb': MTEB's evaluation of MAEB tasks "
    "(comparable with its published numbers)."
)

#: The reference's fixed settings.
SEED = 42
SAMPLES_PER_LABEL = 8
N_EXPERIMENTS = 10
N_FOLDS = 5
N_BOOTSTRAPS = 10
BOOTSTRAP_SIZE = 16_384
KMEANS_BATCH_SIZE = 512

MetricName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*$")]
R = TypeVar("R", bound=Report)


class MtebReport(Report):
    """One subset under the reference protocol: its metric keys, and what was scored."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[MetricName, float | None] = Field(init=False)
    n_samples: Count = Field(description="Clips, pairs or queries scored.")
    n_documents: Count | None = Field(default=None, description="Retrieval: documents ranked.")
    per_experiment: list[dict[MetricName, float | None]] | None = Field(
        default=None, description="Each experiment's values (folds, samplings, bootstraps)."
    )


class MtebSummary(Summary):
    """Unweighted mean over subsets of every metric (None if undefined in any subset)."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[MetricName, float | None] = Field(init=False)
    n_subsets: Count


class ByProtocol(Generic[R]):
    """A family's ``Report`` or ``Summary``: its own model, or the reference protocol's.

    Read on a class it follows the class's default ``protocol`` option, on a task its run's;
    so a result is built and checked with the model of the protocol it was run under.
    """

    def __init__(self, own: type[R], mteb: type[R]) -> None:
        self.own = own
        self.mteb = mteb

    def __get__(self, instance: object, owner: type) -> type[R]:
        options = getattr(instance if instance is not None else owner, "options", None)
        return self.mteb if getattr(options, "protocol", "audiobench") == "mteb" else self.own


def summarize(reports: Mapping[str, Report]) -> MtebSummary:
    """The mean over subsets of every metric key the reports hold."""
    extras = [r.model_extra or {} for r in reports.values()]
    names = list(dict.fromkeys(name for extra in extras for name in extra))
    return MtebSummary.model_validate(
        {
            "subsets": list(reports),
            "n_subsets": len(extras),
            **{name: mean_or_none(extra.get(name) for extra in extras) for name in names},
        }
    )


# ---------------------------------------------------------------------------- main scores

_CLASSIFICATION_KEYS = (
    "accuracy",
    "f1",
    "f1_weighted",
    "precision",
    "precision_weighted",
    "recall",
    "recall_weighted",
    "ap",
    "ap_weighted",
)
_MULTILABEL_KEYS = ("accuracy", "lrap", "f1", "hamming")
_CLUSTERING_KEYS = ("v_measure", "v_measure_std", "ami", "ami_std")


def _ranking_keys() -> tuple[str, ...]:
    from audiobench.metrics.trec_retrieval import TREC_K_VALUES, TREC_METRICS

    return (*(f"{m}_at_{k}" for m in TREC_METRICS for k in TREC_K_VALUES), "accuracy")


def _pair_keys() -> tuple[str, ...]:
    from audiobench.metrics.pair_classification import PAIR_METRICS, PAIR_SIMILARITIES

    sides = (*PAIR_SIMILARITIES, "similarity")
    return (*(f"{s}_{m}" for s in sides for m in PAIR_METRICS), *(f"max_{m}" for m in PAIR_METRICS))


def main_score_keys(family: str, *, multilabel: bool = False) -> tuple[str, ...]:
    """The reference's metric keys a main score may name, for a family."""
    if family == "classification":
        return _MULTILABEL_KEYS if multilabel else _CLASSIFICATION_KEYS
    if family == "clustering":
        return _CLUSTERING_KEYS
    if family in ("retrieval", "reranking"):
        return _ranking_keys()
    if family == "zero_shot_classification":
        return _CLASSIFICATION_KEYS
    if family == "pair_classification":
        return _pair_keys()
    raise ValueError(f"family {family!r} has no reference protocol")


def check_main_score(
    task: type[Task], path: tuple[str, ...], family: str, *, multilabel: bool = False
) -> None:
    """Raise ``ValueError`` unless ``path`` is one of the reference's keys for ``family``."""
    known = main_score_keys(family, multilabel=multilabel)
    if len(path) != 1 or path[0] not in known:
        shown = ", ".join(known) if len(known) <= 12 else ", ".join(known[:12]) + ", ..."
        raise ValueError(
            f"task {task.metadata.name}: under protocol 'mteb' the main score "
            f"{':'.join(path)!r} must be one of the reference's keys ({shown})"
        )


def describe(family: str, **extra: Any) -> dict[str, Any]:
    """The run-wide facts of the reference protocol recorded in a result's details."""
    settings: dict[str, Any] = {"name": "mteb", "seed": SEED}
    if family == "classification":
        settings.update(
            classifier="LogisticRegression(max_iter=100)",
            samples_per_label=SAMPLES_PER_LABEL,
            n_experiments=N_EXPERIMENTS,
            cross_validation_folds=N_FOLDS,
        )
    elif family == "clustering":
        settings.update(
            algorithm="MiniBatchKMeans",
            n_bootstraps=N_BOOTSTRAPS,
            bootstrap_size=BOOTSTRAP_SIZE,
            batch_size=KMEANS_BATCH_SIZE,
        )
    elif family in ("retrieval", "reranking"):
        from audiobench.metrics.trec_retrieval import TREC_K_VALUES

        settings.update(
            similarity="cosine (float32)",
            k_values=list(TREC_K_VALUES),
            ties="decreasing document id",
            queries_without_relevant="left out",
        )
    elif family == "zero_shot_classification":
        settings.update(similarity="cosine (float32)", ties="first class")
    elif family == "pair_classification":
        settings.update(similarities=["cosine", "dot", "euclidean", "manhattan"])
    return {"protocol": {**settings, **extra}}


# ---------------------------------------------------------------------------- helpers


def _finite_or_none(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _flat(scores: Mapping[str, Any], keys: Sequence[str] | None = None) -> dict[str, float | None]:
    chosen = keys if keys is not None else [k for k, v in scores.items() if not isinstance(v, list)]
    return {key: _finite_or_none(scores.get(key)) for key in chosen}


def mteb_labels(labels: Sequence[str]) -> list[Any]:
    """Labels as the reference reads them: integers when every label is a whole number."""
    text = [str(label) for label in labels]
    if text and all(t.lstrip("-").isdigit() and t.strip() == t for t in text):
        return [int(t) for t in text]
    return text


def _embedded(embedder: Embedder, subset: Subset) -> tuple[list[Clip], np.ndarray]:
    from audiobench.pooling import collate

    kept, arrays = embedder.embed(subset.clips, subset.label)
    if len(kept) < 2:
        raise ValueError(f"{subset.where}: fewer than 2 clips left to evaluate")
    matrix = collate(arrays)
    bad = np.flatnonzero(~np.isfinite(matrix).all(axis=1))
    if bad.size:
        from audiobench.metrics.validation import invalid_clips_error

        raise invalid_clips_error(
            f"{subset.where}: embeddings contain NaN or infinite values",
            bad.tolist(),
            [c.id for c in kept],
        )
    return kept, matrix


# ---------------------------------------------------------------------------- classification


def _evaluation_split(clips: Sequence[Clip], where: str) -> str | None:
    """The split scored against ``train`` (None: one split only, cross-validation)."""
    others = sorted({c.split for c in clips if c.split not in ("train", None)})
    if not others:
        return None
    if "test" in others:
        return "test"
    if len(others) == 1:
        return others[0]
    raise ValueError(
        f"{where}: the reference protocol scores one split against 'train'; found "
        f"{others} and none is 'test'"
    )


def classification_report(
    embedder: Embedder, subset: Subset, *, multilabel: bool, separator: str
) -> MtebReport:
    """Few-shot logistic regression on one subset (cross-validated or train / test)."""
    from audiobench.metrics.logreg_protocol import (
        logreg_cross_validation_scores,
        logreg_multilabel_scores,
        logreg_train_test_scores,
    )

    kept, X = _embedded(embedder, subset)
    evaluated = _evaluation_split(kept, subset.where)
    train = np.array([c.split in ("train", None) for c in kept]) if evaluated else None
    test = np.array([c.split == evaluated for c in kept]) if evaluated else None
    try:
        if multilabel:
            if train is None or test is None:
                raise ValueError(
                    "multi-label classification under the reference protocol needs a 'train' "
                    "split and an evaluation split"
                )
            sets = [[p.strip() for p in str(c.label).split(separator) if p.strip()] for c in kept]
            scores = logreg_multilabel_scores(
                X[train],
                [s for s, t in zip(sets, train, strict=True) if t],
                X[test],
                [s for s, t in zip(sets, test, strict=True) if t],
                samples_per_label=SAMPLES_PER_LABEL,
                n_experiments=N_EXPERIMENTS,
                seed=SEED,
            )
            keys: Sequence[str] = _MULTILABEL_KEYS
            n_scored = int(test.sum())
        else:
            y = np.asarray(mteb_labels([str(c.label) for c in kept]), dtype=object)
            if train is None or test is None:
                labels = y.tolist()
                scores = logreg_cross_validation_scores(
                    X, labels, n_splits=N_FOLDS, samples_per_label=SAMPLES_PER_LABEL, seed=SEED
                )
                n_scored = len(kept)
            else:
                scores = logreg_train_test_scores(
                    X[train],
                    y[train].tolist(),
                    X[test],
                    y[test].tolist(),
                    samples_per_label=SAMPLES_PER_LABEL,
                    n_experiments=N_EXPERIMENTS,
                    seed=SEED,
                )
                n_scored = int(test.sum())
            keys = _CLASSIFICATION_KEYS
    except ValueError as exc:
        raise error_in_context(exc, subset.where) from exc
    subset.details["splits"] = {
        "method": "cross_validation" if evaluated is None else "train_test",
        "n_clips": len(kept),
        **({} if evaluated is None else {"evaluated_split": evaluated}),
    }
    experiments = cast("list[dict[str, Any]]", scores["scores_per_experiment"])
    per_experiment = [_flat(e, keys) for e in experiments]
    return MtebReport.model_validate(
        {**_flat(scores, keys), "n_samples": n_scored, "per_experiment": per_experiment}
    )


# ---------------------------------------------------------------------------- clustering


def clustering_report(embedder: Embedder, subset: Subset) -> MtebReport:
    """Bootstrapped mini-batch k-means on one subset."""
    from audiobench.metrics.kmeans_bootstrap import bootstrapped_kmeans_scores

    kept, X = _embedded(embedder, subset)
    try:
        scores = bootstrapped_kmeans_scores(
            X,
            [str(c.label) for c in kept],
            n_bootstraps=N_BOOTSTRAPS,
            sample_size=BOOTSTRAP_SIZE,
            batch_size=KMEANS_BATCH_SIZE,
            seed=SEED,
        )
    except ValueError as exc:
        raise error_in_context(exc, subset.where) from exc
    v_measures = cast("list[float]", scores["v_measures"])
    amis = cast("list[float]", scores["ami_scores"])
    per_experiment = [
        {"v_measure": float(v), "ami": float(a)} for v, a in zip(v_measures, amis, strict=True)
    ]
    return MtebReport.model_validate(
        {
            **_flat(scores, _CLUSTERING_KEYS),
            "n_samples": len(kept),
            "per_experiment": per_experiment,
        }
    )


# ---------------------------------------------------------------------------- ranking


def _ranking(
    scores: np.ndarray,
    relevance: Sequence[Sequence[int]],
    doc_ids: Sequence[str],
    where: str,
    candidates: Sequence[Sequence[int]] | None = None,
) -> dict[str, float]:
    from audiobench.metrics.trec_retrieval import trec_retrieval_scores

    try:
        return trec_retrieval_scores(
            scores,
            [list(r) for r in relevance],
            candidates=None if candidates is None else [list(c) for c in candidates],
            corpus_ids=list(doc_ids),
            on_missing="skip",
        )
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from exc


def retrieval_report(
    subset: Subset,
    queries: Sequence[Any],
    documents: Sequence[Any],
    q_matrix: np.ndarray,
    d_matrix: np.ndarray,
    relevance: Sequence[Sequence[int]],
) -> MtebReport:
    """trec metrics of the embedded queries against the embedded documents.

    ``queries`` and ``documents`` are the retrieval family's items (a clip, and its text or
    None for its audio); a document's id is its clip's id, with ``-<i>`` appended when the
    clip gives several documents (captions), so ties fall as the reference breaks them.
    """
    from audiobench.metrics.cosine_scores import cosine_score_matrix

    per_clip: dict[str, int] = {}
    for item in documents:
        per_clip[item.clip.id] = per_clip.get(item.clip.id, 0) + 1
    seen: dict[str, int] = {}
    doc_ids = []
    for item in documents:
        source = str(item.clip.metadata.get("doc_id", item.clip.id))
        if per_clip[item.clip.id] > 1:
            k = seen.get(item.clip.id, 0)
            seen[item.clip.id] = k + 1
            source = f"{source}-{k}"
        doc_ids.append(source)
    scores = cosine_score_matrix(q_matrix, d_matrix)
    metrics = _ranking(scores, relevance, doc_ids, subset.where)
    judged = sum(1 for r in relevance if r)
    subset.details["skipped_queries"] = {"n_no_relevant": len(queries) - judged}
    return MtebReport.model_validate(
        {**metrics, "n_samples": judged, "n_documents": len(documents)}
    )


def reranking_report(task: RerankingTask, embedder: Embedder, subset: Subset) -> MtebReport:
    """trec metrics of each query's ranking of its own candidates."""
    from audiobench.metrics.cosine_scores import cosine_score_matrix

    queries = [clip for clip in subset.clips if task.is_query(clip)]
    candidates, positives = task._lists(queries)
    rows, audio, cand_rows, cand_matrix = task._candidate_matrix(
        embedder, subset, queries, candidates
    )
    kept = [
        (clip, [c for c in dict.fromkeys(cands) if c in cand_rows], pos)
        for clip, cands, pos in zip(queries, candidates, positives, strict=True)
        if clip.id in rows
    ]
    no_candidates = [clip.id for clip, cands, _ in kept if not cands]
    kept = [entry for entry in kept if entry[1]]
    if not kept:
        raise ValueError(f"{subset.where}: no embedded query has an embedded candidate")
    doc_index: dict[str, int] = {}
    for _, cands, pos in kept:
        for doc in [*cands, *pos]:
            doc_index.setdefault(doc, len(doc_index))
    width = cand_matrix.shape[1]
    documents = np.zeros((len(doc_index), width), dtype=np.float64)
    for doc, j in doc_index.items():
        if doc in cand_rows:  # a positive outside every list is never ranked: no vector needed
            documents[j] = cand_matrix[cand_rows[doc]]
    q_matrix = audio[[rows[clip.id] for clip, _, _ in kept]]
    if q_matrix.shape[1] != width:
        from audiobench.families.ranking_inputs import check_same_width

        check_same_width(q_matrix, documents, "query", "candidate", embedder.encoder.meta.name)
    scores = cosine_score_matrix(q_matrix, documents)
    relevance = [sorted({doc_index[p] for p in pos}) for _, _, pos in kept]
    lists = [[doc_index[c] for c in cands] for _, cands, _ in kept]
    metrics = _ranking(scores, relevance, list(doc_index), subset.where, candidates=lists)
    judged = sum(1 for r in relevance if r)
    subset.details["skipped_queries"] = {
        "n_empty": len(no_candidates),
        "n_no_relevant": len(kept) - judged,
        "n_unembedded": len(queries) - len(kept) - len(no_candidates),
    }
    return MtebReport.model_validate(
        {**metrics, "n_samples": judged, "n_documents": len(doc_index)}
    )


# ---------------------------------------------------------------------------- zero-shot


def zero_shot_report(
    task: ZeroShotClassificationTask, embedder: Embedder, subset: Subset, prompts: np.ndarray
) -> MtebReport:
    """Arg-max of float32 cosine similarities to the class prompts (raw text embeddings)."""
    from audiobench.families.ranking_inputs import check_same_width, embed_audio_matrix
    from audiobench.metrics.cosine_scores import cosine_score_matrix
    from audiobench.metrics.zero_shot_argmax import zero_shot_argmax_scores

    ids, audio = embed_audio_matrix(embedder, subset.clips, subset.label)
    kept = [c for c in subset.clips if c.id in ids]
    if not kept:
        raise ValueError(f"{subset.where}: no clip could be embedded")
    check_same_width(audio, prompts, "audio", "text", embedder.encoder.meta.name)
    similarity = cosine_score_matrix(audio[[ids[c.id] for c in kept]], prompts)
    classes = task._classes
    scores = zero_shot_argmax_scores(
        similarity, [classes.index(str(c.label)) for c in kept], classes=None
    )
    return MtebReport.model_validate(
        {**_flat(scores, _CLASSIFICATION_KEYS), "n_samples": len(kept)}
    )


# ---------------------------------------------------------------------------- pairs


def pair_report(
    task: PairClassificationTask, first: np.ndarray, second: np.ndarray, labels: np.ndarray
) -> MtebReport:
    """The reference's pair classification keys (no thresholds)."""
    from audiobench.metrics.pair_classification import pair_classification_scores

    scores = pair_classification_scores(first, second, labels, model_similarity="cosine")
    keys = [k for k in scores if not k.endswith("_threshold")]
    return MtebReport.model_validate({**_flat(scores, keys), "n_samples": int(labels.shape[0])})
