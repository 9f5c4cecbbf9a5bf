"""The reference protocol: each family scored as MTEB scores its MAEB tasks (``protocol="mteb"``).

Every family that has a MAEB task type takes the option ``protocol``: ``"audiobench"`` (the
family's own, richer evaluation, the default of audiobench's tasks) or ``"mteb"`` (the default
of the MAEB tasks in ``tasks/maeb.py``). Under ``"mteb"`` a subset is scored by the metric
functions that reproduce the reference evaluator on the same embeddings (each checked against
it, ``tests/mteb_protocol/test_mteb_protocols.py``), with the reference's fixed settings:

- **classification**: few-shot logistic regression (:mod:`.logistic_regression`),
  8 training clips per label, seed 42. A subset whose clips all belong to one split is
  cross-validated (5 folds, one experiment per fold); otherwise the ``train`` clips train and
  the evaluation split (``test`` where present, else the one other split) is scored, 10
  experiments. Multi-label tasks: one regression per label, 10 experiments, main score
  ``lrap``. Labels that are all whole numbers written as text are compared as integers, as the
  reference reads integer label columns.
- **clustering**: mini-batch k-means on 10 bootstrap draws of 16,384 clips
  (:mod:`.kmeans_bootstrap`); ``v_measure``, ``ami`` and their spread.
- **retrieval** and **reranking**: float32 cosine scores (:mod:`.cosine_scores`)
  and ``trec_eval``'s metrics at k = 1, 3, 5, 10, 20, 100, 1000
  (:mod:`.trec_retrieval`), ties broken by decreasing document id, and
  the reference's abstention scores ``nauc_*`` (:mod:`audiobench.metrics.abstention`). The
  results are gathered as the reference's search gathers them
  (:mod:`.search`): rows that share an id collapse into one query or
  document, each query keeps its 1,000 best documents. Every query is scored: one whose
  judgements are all 0, whose relevant documents are all missing from the corpus, or (reranking)
  that has no ranked list scores 0. Graded judgements are the nDCG gain. Reranking ranks each
  query's candidates only; a relevant document outside them (or outside the corpus) still
  counts in recall and mAP.
- **zero-shot classification**: float32 cosine to each class prompt, arg-max, ties to the
  first class (:mod:`.zero_shot_argmax`).
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

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import compress, pairwise
from typing import TYPE_CHECKING, Annotated, Any, cast

import numpy as np
from pydantic import Field, StringConstraints, model_validator

from audiobench.errors import DataError
from audiobench.evaluators.mteb_protocol.search import SearchResults
from audiobench.evaluators.mteb_protocol.trec_retrieval import TREC_K_VALUES, TREC_METRICS
from audiobench.metrics.pair_classification import PAIR_METRICS, PAIR_SIMILARITIES
from audiobench.reports import Count, KeyedReport, Summary, finite_or_none, same_number
from audiobench.task import Embedder, Subset, Task, error_in_context

if TYPE_CHECKING:
    from audiobench.audio import Clip

__all__ = [
    "MtebRankingReport",
    "MtebReport",
    "MtebSummary",
    "MtebZeroShotReport",
    "check_main_score",
    "classification_report",
    "clustering_report",
    "describe",
    "pair_report",
    "reranking_report",
    "retrieval_report",
    "zero_shot_report",
]

#: The reference's fixed settings.
SEED = 42
SAMPLES_PER_LABEL = 8
N_EXPERIMENTS = 10
N_FOLDS = 5
N_BOOTSTRAPS = 10
BOOTSTRAP_SIZE = 16_384
KMEANS_BATCH_SIZE = 512

MetricName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*$")]


class MtebReport(KeyedReport):
    """One subset under the reference protocol: its metric keys, and what was scored."""

    __pydantic_extra__: dict[MetricName, float | None] = Field(init=False)
    n_samples: Count | None = Field(
        description="Clips, pairs or queries scored (None: not published, in a reported result)."
    )
    n_documents: Count | None = Field(default=None, description="Retrieval: documents ranked.")
    per_experiment: list[dict[MetricName, float | None]] | None = Field(
        default=None, description="Each experiment's values (folds, samplings, bootstraps)."
    )

    @model_validator(mode="after")
    def _consistent(self) -> MtebReport:
        """A repeated experiment's metric is the mean of its defined values (``_std``: their
        population spread), as the reference averages them."""
        if not self.per_experiment:
            return self
        reported = self.model_extra or {}
        for metric in {m for e in self.per_experiment for m in e}:
            values = [v for e in self.per_experiment if (v := e.get(metric)) is not None]
            given = reported.get(metric)
            if given is None or not values:
                continue
            for name, written, expected in (
                (metric, given, float(np.mean(values))),
                (f"{metric}_std", reported.get(f"{metric}_std"), float(np.std(values))),
            ):
                if written is not None and not same_number(written, expected):
                    raise ValueError(
                        f"{name}: {written!r} is not what per_experiment gives ({expected!r})"
                    )
        return self


class MtebRankingReport(MtebReport):
    """Retrieval or reranking under the reference protocol: the trec metrics agree with the
    number of judged queries (``n_samples``) and with each other."""

    @model_validator(mode="after")
    def _ranked(self) -> MtebRankingReport:
        """hit_rate_at_k is a share of the judged queries; hit_rate, recall and mrr grow with
        k; recall_at_k ≤ hit_rate_at_k; at k = 1, mrr and precision are the hit rate."""
        from audiobench.evaluators.consistency import check_at_most, check_share_of, cutoffs

        extra = self.model_extra or {}
        names = list(extra)
        for family in ("hit_rate", "recall", "mrr"):
            ranked = cutoffs(names, f"{family}_at_")
            for (_, low), (_, high) in pairwise(ranked):
                check_at_most(low, extra[low], high, extra[high])
        for k, name in cutoffs(names, "hit_rate_at_"):
            if self.n_samples is not None:  # None: a published result, which does not say
                check_share_of(name, extra[name], self.n_samples, "n_samples")
            recall = f"recall_at_{k}"
            check_at_most(recall, extra.get(recall), name, extra[name])
            # A published file's MRR may break score ties otherwise than its hit rate (older MTEB
            # versions ranked tied documents for MRR in insertion order): not checked there.
            same_at_1 = (
                ("precision_at_1",) if self.n_samples is None else ("mrr_at_1", "precision_at_1")
            )
            for same in same_at_1 if k == 1 else ():
                value, hit = extra.get(same), extra[name]
                # Either may be the rounded one (the reference rounds hit rates, not mrr).
                if (
                    value is not None
                    and hit is not None
                    and not (same_number(value, hit) or same_number(hit, value))
                ):
                    raise ValueError(f"{same}: {value!r} is not {name} ({hit!r})")
        return self


class MtebZeroShotReport(MtebReport):
    """Zero-shot classification under the reference protocol: the accuracy is a share of the
    scored clips (``n_samples``)."""

    @model_validator(mode="after")
    def _shares(self) -> MtebZeroShotReport:
        from audiobench.evaluators.consistency import check_share_of

        accuracy = (self.model_extra or {}).get("accuracy")
        if self.n_samples is not None:  # None: a published result, which does not say
            check_share_of("accuracy", accuracy, self.n_samples, "n_samples")
        return self


class MtebSummary(Summary, KeyedReport):
    """Unweighted mean over subsets of every metric (None if undefined in any subset)."""

    __pydantic_extra__: dict[MetricName, float | None] = Field(init=False)
    n_subsets: Count


# ---------------------------------------------------------------------------- main scores

_AVERAGED = ("f1", "precision", "recall", "ap")  # each reported plain, then "_weighted"
_CLASSIFICATION_KEYS = ("accuracy", *(f"{m}{w}" for m in _AVERAGED for w in ("", "_weighted")))
_MULTILABEL_KEYS = ("accuracy", "lrap", "f1", "hamming")
_CLUSTERING_KEYS = ("v_measure", "v_measure_std", "ami", "ami_std")
_RANKING_KEYS = (*(f"{m}_at_{k}" for m in TREC_METRICS for k in TREC_K_VALUES), "accuracy")
_PAIR_KEYS = (
    *(f"{s}_{m}" for s in (*PAIR_SIMILARITIES, "similarity") for m in PAIR_METRICS),
    *(f"max_{m}" for m in PAIR_METRICS),
)
#: The reference's metric keys a main score may name, by family (multi-label
#: classification: :data:`_MULTILABEL_KEYS`).
MAIN_SCORE_KEYS: dict[str, tuple[str, ...]] = {
    "classification": _CLASSIFICATION_KEYS,
    "clustering": _CLUSTERING_KEYS,
    "retrieval": _RANKING_KEYS,
    "reranking": _RANKING_KEYS,
    "zero_shot_classification": _CLASSIFICATION_KEYS,
    "pair_classification": _PAIR_KEYS,
}

_RANKING_SETTINGS = {
    "similarity": "cosine (float32)",
    "k_values": list(TREC_K_VALUES),
    "ties": "decreasing document id",
    "queries_without_relevant": "scored 0",
    "repeated_ids": "collapsed as the reference's search results key them",
    "search_depth": 1000,
}
#: The reference's settings recorded in a result's details, by family.
SETTINGS: dict[str, dict[str, Any]] = {
    "classification": {
        "classifier": "LogisticRegression(max_iter=100)",
        "samples_per_label": SAMPLES_PER_LABEL,
        "n_experiments": N_EXPERIMENTS,
        "cross_validation_folds": N_FOLDS,
    },
    "clustering": {
        "algorithm": "MiniBatchKMeans",
        "n_bootstraps": N_BOOTSTRAPS,
        "bootstrap_size": BOOTSTRAP_SIZE,
        "batch_size": KMEANS_BATCH_SIZE,
    },
    "retrieval": _RANKING_SETTINGS,
    "reranking": _RANKING_SETTINGS,
    "zero_shot_classification": {"similarity": "cosine (float32)", "ties": "first class"},
    "pair_classification": {"similarities": list(PAIR_SIMILARITIES)},
}


def check_main_score(task: type[Task], path: tuple[str, ...]) -> None:
    """Raise ``ValueError`` unless ``path`` is one of the reference's keys for the task."""
    multilabel = getattr(task.options, "multilabel", False)
    known = _MULTILABEL_KEYS if multilabel else MAIN_SCORE_KEYS[task.family]
    if len(path) != 1 or path[0] not in known:
        shown = ", ".join(known) if len(known) <= 12 else ", ".join(known[:12]) + ", ..."
        raise ValueError(
            f"task {task.metadata.name}: under protocol 'mteb' the main score "
            f"{':'.join(path)!r} must be one of the reference's keys ({shown})"
        )


def describe(task: Task, **extra: Any) -> dict[str, Any]:
    """The run-wide facts of the reference protocol recorded in a result's details."""
    return {"protocol": {"name": "mteb", "seed": SEED, **SETTINGS[task.family], **extra}}


# ---------------------------------------------------------------------------- helpers


def _flat(scores: Mapping[str, Any], keys: Sequence[str]) -> dict[str, float | None]:
    return {key: finite_or_none(scores.get(key)) for key in keys}


def _report(scores: Mapping[str, Any], keys: Sequence[str], **fields: Any) -> MtebReport:
    return MtebReport.model_validate({**_flat(scores, keys), **fields})


def mteb_labels(labels: Sequence[str]) -> list[Any]:
    """Labels as the reference reads them: integers when every label is a whole number."""
    text = [str(label) for label in labels]
    if text and all(t.lstrip("-").isdigit() and t.strip() == t for t in text):
        return [int(t) for t in text]
    return text


def _embedded(embedder: Embedder, subset: Subset) -> tuple[list[Clip], np.ndarray]:
    from audiobench.metrics.validation import check_finite

    kept, matrix = embedder.embed_matrix(subset.clips, subset.label)
    if len(kept) < 2:
        raise DataError(f"{subset.where}: fewer than 2 clips left to evaluate")
    check_finite(matrix, [c.id for c in kept], f"{subset.where}: embeddings")
    return kept, matrix


# ---------------------------------------------------------------------------- classification


def _evaluation_split(clips: Sequence[Clip], where: str) -> str | None:
    """The split scored against ``train`` (None: one split only, cross-validation)."""
    others = sorted({c.split for c in clips if c.split not in ("train", None)})
    if "test" in others:
        return "test"
    if len(others) <= 1:
        return others[0] if others else None
    raise DataError(
        f"{where}: the reference protocol scores one split against 'train'; found "
        f"{others} and none is 'test'"
    )


def classification_report(
    embedder: Embedder, subset: Subset, *, multilabel: bool, separator: str
) -> MtebReport:
    """Few-shot logistic regression on one subset (cross-validated or train / test)."""
    from audiobench.evaluators.mteb_protocol.logistic_regression import (
        logreg_cross_validation_scores,
        logreg_multilabel_scores,
        logreg_train_test_scores,
    )

    kept, X = _embedded(embedder, subset)
    evaluated = _evaluation_split(kept, subset.where)
    train = np.array([c.split in ("train", None) for c in kept])
    test = np.array([c.split == evaluated for c in kept])
    keys = _MULTILABEL_KEYS if multilabel else _CLASSIFICATION_KEYS
    fixed = {"samples_per_label": SAMPLES_PER_LABEL, "seed": SEED}
    y: list[Any]
    try:
        if multilabel:
            if evaluated is None:
                raise ValueError(
                    "multi-label classification under the reference protocol needs a 'train' "
                    "split and an evaluation split"
                )
            y = [[p.strip() for p in str(c.label).split(separator) if p.strip()] for c in kept]
        else:
            y = mteb_labels([str(c.label) for c in kept])
        if evaluated is None:
            scores = logreg_cross_validation_scores(X, y, n_splits=N_FOLDS, **fixed)
        else:
            train_test = logreg_multilabel_scores if multilabel else logreg_train_test_scores
            y_train, y_test = list(compress(y, train)), list(compress(y, test))
            scores = train_test(
                X[train], y_train, X[test], y_test, n_experiments=N_EXPERIMENTS, **fixed
            )
    except ValueError as exc:
        raise error_in_context(exc, subset.where) from exc
    subset.details["splits"] = {
        "method": "cross_validation" if evaluated is None else "train_test",
        "n_clips": len(kept),
        **({} if evaluated is None else {"evaluated_split": evaluated}),
    }
    experiments = cast("list[dict[str, Any]]", scores["scores_per_experiment"])
    return _report(
        scores,
        keys,
        n_samples=len(kept) if evaluated is None else int(test.sum()),
        per_experiment=[_flat(e, keys) for e in experiments],
    )


# ---------------------------------------------------------------------------- clustering


def clustering_report(embedder: Embedder, subset: Subset) -> MtebReport:
    """Bootstrapped mini-batch k-means on one subset."""
    from audiobench.evaluators.mteb_protocol.kmeans_bootstrap import bootstrapped_kmeans_scores

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
    runs = cast("list[list[float]]", [scores["v_measures"], scores["ami_scores"]])
    per_experiment = [{"v_measure": float(v), "ami": float(a)} for v, a in zip(*runs, strict=True)]
    return _report(scores, _CLUSTERING_KEYS, n_samples=len(kept), per_experiment=per_experiment)


# ---------------------------------------------------------------------------- ranking


def source_id(clip: Clip) -> str:
    """The id the reference keys a clip by: its hub id before audiobench made it unique
    (``metadata["source_id"]``, set by the hub loader on a repeated id), else the clip id."""
    return str(clip.metadata.get("source_id") or clip.metadata.get("doc_id") or clip.id)


def _item_keys(items: Sequence[Any]) -> list[str]:
    """Each query or document item's id: its clip's source id, with ``-<i>`` appended when
    the clip gives several items (captions), so ties fall as the reference breaks them."""
    per_clip = Counter(item.clip.id for item in items)
    seen: Counter[str] = Counter()
    keys = []
    for item in items:
        key = source_id(item.clip)
        if per_clip[item.clip.id] > 1:
            key = f"{key}-{seen[item.clip.id]}"
            seen[item.clip.id] += 1
        keys.append(key)
    return keys


def _grades(judged: Mapping[str, Any]) -> dict[str, int]:
    """A query's judgements ``{corpus id: grade}`` (hub qrels), grades below 1 dropped."""
    return {str(doc): int(grade) for doc, grade in judged.items() if int(grade) >= 1}


def _score_results(
    subset: Subset, results: SearchResults, relevant: Mapping[str, Mapping[str, int]]
) -> MtebReport:
    """trec metrics and nAUC of the reference's search ``results``, every query id scored
    (one without a relevant or retrieved document scores 0); a judged document missing from
    the corpus is never retrieved but counts among its query's relevant ones."""
    from audiobench.evaluators.mteb_protocol.trec_retrieval import trec_means, trec_per_query
    from audiobench.metrics.abstention import nauc_scores

    columns = list(results.corpus_ids)
    index = {cid: j for j, cid in enumerate(columns)}
    for qid in results.query_ids:
        for doc in relevant.get(qid, {}):
            if doc not in index:  # judged but not in the corpus
                index[doc] = len(columns)
                columns.append(doc)
    extra = len(columns) - len(results.corpus_ids)
    scores = np.pad(results.scores, ((0, 0), (0, extra)))
    retrieved = np.pad(results.retrieved, ((0, 0), (0, extra)))
    grades = [
        {index[doc]: grade for doc, grade in relevant.get(qid, {}).items()}
        for qid in results.query_ids
    ]
    try:
        per_query = trec_per_query(
            scores,
            grades,
            candidates=retrieved,
            corpus_ids=columns,
            on_missing="zero",
            allow_empty_candidates=True,
        )
    except ValueError as exc:
        raise error_in_context(exc, subset.where) from exc
    abstention = nauc_scores(
        {k: v for k, v in per_query.items() if not k.startswith("hit_rate")},
        [results.retrieved_scores(q) for q in range(len(results.query_ids))],
    )
    subset.details["queries"] = {
        "n_query_ids": len(results.query_ids),
        "n_without_relevant": sum(not g for g in grades),
        "n_without_results": int((~results.retrieved.any(axis=1)).sum()),
        "n_judged_documents_missing": extra,
    }
    return MtebRankingReport.model_validate(
        {
            **trec_means(per_query),
            **abstention,
            "n_samples": len(results.query_ids),
            "n_documents": len(results.corpus_ids),
        }
    )


def retrieval_report(
    subset: Subset,
    queries: Sequence[Any],
    documents: Sequence[Any],
    q_matrix: np.ndarray,
    d_matrix: np.ndarray,
    relevance: list[list[int]],
) -> MtebReport:
    """trec metrics of the embedded queries against the embedded documents, as the reference
    gathers them (:func:`~audiobench.evaluators.mteb_protocol.search.corpus_search`).

    ``queries`` and ``documents`` are the retrieval family's items (a clip, and its text or
    None for its audio). Rows sharing an id collapse into one query or document, as the
    reference keys them by id. A query's relevant documents are its clip's hub judgements
    (``metadata["judgements"]``: graded, documents missing from the corpus included) where it
    has them, else ``relevance`` (grade 1).
    """
    from audiobench.evaluators.mteb_protocol.cosine_scores import cosine_score_matrix
    from audiobench.evaluators.mteb_protocol.search import corpus_search

    q_keys, d_keys = _item_keys(queries), _item_keys(documents)
    relevant: dict[str, dict[str, int]] = {}
    for item, key, docs in zip(queries, q_keys, relevance, strict=True):
        judged = item.clip.metadata.get("judgements")
        grades = _grades(judged) if judged is not None else {d_keys[d]: 1 for d in docs}
        merged = relevant.setdefault(key, {})
        for doc, grade in grades.items():
            merged[doc] = max(grade, merged.get(doc, 0))
    results = corpus_search(cosine_score_matrix(q_matrix, d_matrix), q_keys, d_keys)
    return _score_results(subset, results, relevant)


def reranking_report(
    subset: Subset,
    queries: Sequence[tuple[Clip, list[str], list[str]]],
    q_matrix: np.ndarray,
    cand_rows: Mapping[str, int],
    cand_matrix: np.ndarray,
    n_queries: int,
) -> MtebReport:
    """trec metrics of each query's ranking of its own candidates, as the reference gathers
    them (:func:`~audiobench.evaluators.mteb_protocol.search.rerank_search`).

    ``queries`` are the embedded query clips of the subset's ``n_queries``, each with its
    embedded candidates (in its list's order; none: the query scores 0) and its positives
    (or, where the clip has them, its hub judgements, graded); ``q_matrix`` holds their
    audio embeddings.
    """
    from audiobench.evaluators.mteb_protocol.cosine_scores import cosine_score_matrix
    from audiobench.evaluators.mteb_protocol.search import rerank_search

    if not queries:
        raise DataError(f"{subset.where}: no query could be embedded")
    doc_ids = list(cand_rows)
    documents = np.asarray(cand_matrix)[[cand_rows[doc] for doc in doc_ids]]
    column = {doc: j for j, doc in enumerate(doc_ids)}
    q_keys = [source_id(clip) for clip, _, _ in queries]
    relevant: dict[str, dict[str, int]] = {}
    for (clip, _, positives), key in zip(queries, q_keys, strict=True):
        judged = clip.metadata.get("judgements")
        grades = _grades(judged) if judged is not None else dict.fromkeys(positives, 1)
        merged = relevant.setdefault(key, {})
        for doc, grade in grades.items():
            merged[doc] = max(grade, merged.get(doc, 0))
    scores = cosine_score_matrix(q_matrix, documents)
    listed = [[column[c] for c in cands] for _, cands, _ in queries]
    report = _score_results(subset, rerank_search(scores, q_keys, doc_ids, listed), relevant)
    subset.details["queries"]["n_unembedded"] = n_queries - len(queries)
    return report


# ---------------------------------------------------------------------------- zero-shot


def zero_shot_report(audio: np.ndarray, prompts: np.ndarray, targets: Sequence[int]) -> MtebReport:
    """Arg-max of float32 cosine similarities of the clips' audio embeddings to the class
    prompts' (raw, as the encoder gave them); ``targets``: each clip's class index."""
    from audiobench.evaluators.mteb_protocol.cosine_scores import cosine_score_matrix
    from audiobench.evaluators.mteb_protocol.zero_shot_argmax import zero_shot_argmax_scores

    scores = zero_shot_argmax_scores(cosine_score_matrix(audio, prompts), list(targets))
    return MtebZeroShotReport.model_validate(
        {**_flat(scores, _CLASSIFICATION_KEYS), "n_samples": len(targets)}
    )


# ---------------------------------------------------------------------------- pairs


def pair_report(scores: Mapping[str, float], n_pairs: int) -> MtebReport:
    """The reference's pair classification keys (no thresholds) of ``scores``, from
    :func:`~audiobench.metrics.pair_classification.pair_classification_scores` with the
    encoder's similarity taken as cosine (the ``similarity_*`` keys)."""
    keys = [k for k in scores if not k.endswith("_threshold")]
    return _report(scores, keys, n_samples=n_pairs)
