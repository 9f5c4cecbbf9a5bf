"""k-nearest-neighbour probe: the training set itself is the model.

A clip's score for a class is the fraction of its k nearest training clips carrying that
class (multi-label: each class voted on separately). The multi-class decision is the majority
class; a tie between classes goes to the one whose nearest member is closer (then to the
lower class code). Neighbours are ranked by cosine similarity (default: the usual choice for
embeddings, insensitive to their scale) or euclidean distance.

k comes from a fixed grid, chosen by accuracy (multi-label: micro-averaged average precision)
on the validation split when one is given, else by seeded stratified inner cross-validation
(group folds when ``fit`` is given groups: no speaker on both sides of an inner fold);
ties go to the larger k (the smoother rule). A fixed ``k`` skips the search.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar, Literal

import numpy as np

from audiobench.metrics.validation import invalid_clips_error
from audiobench.probes.base import (
    Inputs,
    Probe,
    ProbeLevel,
    inner_cv_folds,
    select_best,
    selection_metric,
    selection_score,
)

__all__ = ["DEFAULT_K_GRID", "KNNProbe"]

#: Neighbour counts searched: from the most local rule to a fairly smooth one.
DEFAULT_K_GRID: tuple[int, ...] = (1, 3, 5, 10, 20)

#: Query rows per block when ranking neighbours (bounds the block's similarity matrix).
QUERY_BLOCK: int = 256


class KNNProbe(Probe):
    """k-NN classifier on clip embeddings.

    Parameters
    ----------
    k:
        A fixed neighbour count (no search), or ``None`` to choose from ``k_grid``.
    k_grid:
        Neighbour counts searched when ``k`` is ``None``; values above the number of training
        clips are clipped to it.
    metric:
        ``"cosine"`` (default) or ``"euclidean"``.
    n_splits:
        Inner cross-validation folds when no validation split is given.
    multilabel, seed:
        See :class:`Probe`.
    """

    name: ClassVar[str] = "knn"
    level: ClassVar[ProbeLevel] = "vector"

    def __init__(
        self,
        *,
        k: int | None = None,
        k_grid: Sequence[int] = DEFAULT_K_GRID,
        metric: Literal["cosine", "euclidean"] = "cosine",
        n_splits: int = 5,
        multilabel: bool = False,
        seed: int = 0,
    ) -> None:
        super().__init__(multilabel=multilabel, seed=seed)
        grid = tuple(int(value) for value in ([k] if k is not None else k_grid))
        if not grid or any(value < 1 for value in grid):
            raise ValueError(f"k values must be positive integers, got {grid}")
        if metric not in ("cosine", "euclidean"):
            raise ValueError(f"metric must be 'cosine' or 'euclidean', got {metric!r}")
        if n_splits < 2:
            raise ValueError(f"n_splits must be at least 2, got {n_splits}")
        self.k = None if k is None else int(k)
        self.k_grid: tuple[int, ...] = tuple(sorted(set(grid)))
        self.metric: Literal["cosine", "euclidean"] = metric
        self.n_splits = int(n_splits)
        self._train: np.ndarray | None = None
        self._targets: np.ndarray | None = None
        self._n_classes = 0
        self._chosen_k: int | None = None
        self._selection: dict[str, Any] | None = None

    # ------------------------------------------------------------------ neighbours

    def _prepare(self, X: np.ndarray, what: str) -> np.ndarray:
        X = X.astype(np.float64)
        if self.metric == "cosine":
            norms = np.linalg.norm(X, axis=1, keepdims=True)
            zero = np.flatnonzero(norms[:, 0] == 0)
            if zero.size:
                raise invalid_clips_error(
                    f"{what} has all-zero embeddings, for which cosine similarity is undefined",
                    zero,
                    None,
                )
            X = X / norms
        return X

    def _neighbour_blocks(
        self, queries: np.ndarray, train: np.ndarray, k: int
    ) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """``(start, neighbours [b, k], similarity [b, k])`` per query block, nearest first.

        Similarity is the cosine, or minus the squared euclidean distance, so "larger is
        nearer" in both cases. Equal similarities rank the lower training index first.
        """
        k = min(k, train.shape[0])
        train_sq = (train**2).sum(axis=1)
        for start in range(0, queries.shape[0], QUERY_BLOCK):
            block = queries[start : start + QUERY_BLOCK]
            similarity = block @ train.T
            if self.metric == "euclidean":
                similarity = 2 * similarity - train_sq[None, :] - (block**2).sum(axis=1)[:, None]
            if k < train.shape[0]:
                candidates = np.argpartition(-similarity, k - 1, axis=1)[:, :k]
            else:
                candidates = np.broadcast_to(np.arange(train.shape[0]), similarity.shape)
            values = np.take_along_axis(similarity, candidates, axis=1)
            order = np.lexsort((candidates, -values), axis=1)
            neighbours = np.take_along_axis(candidates, order, axis=1)
            yield start, neighbours, np.take_along_axis(values, order, axis=1)

    def _votes(self, neighbours: np.ndarray, targets: np.ndarray, k: int) -> np.ndarray:
        """Vote fractions ``[b, C]`` of the first k neighbours."""
        nearest = neighbours[:, :k]
        if targets.ndim == 2:
            return np.asarray(targets[nearest].mean(axis=1))
        votes = np.zeros((nearest.shape[0], self._n_classes), dtype=np.float64)
        rows = np.repeat(np.arange(nearest.shape[0]), nearest.shape[1])
        np.add.at(votes, (rows, targets[nearest].reshape(-1)), 1.0)
        return np.asarray(votes / nearest.shape[1])

    def _decide(self, neighbours: np.ndarray, targets: np.ndarray, k: int) -> np.ndarray:
        """Majority class codes; ties go to the class whose nearest member ranks first."""
        nearest = neighbours[:, :k]
        votes = self._votes(neighbours, targets, k)
        labels = targets[nearest]
        # Rank of each class's first appearance among the neighbours (k when absent).
        first = np.full(votes.shape, k, dtype=np.int64)
        for rank in range(nearest.shape[1] - 1, -1, -1):
            first[np.arange(nearest.shape[0]), labels[:, rank]] = rank
        # Lexicographic: most votes, then earliest first appearance, then lower code.
        key = votes * (k + 1) - first / (k + 1)
        return np.asarray(np.argmax(key, axis=1))

    def _evaluate_grid(
        self,
        train: np.ndarray,
        targets: np.ndarray,
        queries: np.ndarray,
        query_targets: np.ndarray,
        ks: Sequence[int],
    ) -> list[float]:
        k_max = max(ks)
        scores_per_k: list[list[np.ndarray]] = [[] for _ in ks]
        codes_per_k: list[list[np.ndarray]] = [[] for _ in ks]
        for _, neighbours, _ in self._neighbour_blocks(queries, train, k_max):
            for index, k in enumerate(ks):
                kk = min(k, neighbours.shape[1])
                scores_per_k[index].append(self._votes(neighbours, targets, kk))
                if targets.ndim == 1:
                    codes_per_k[index].append(self._decide(neighbours, targets, kk))
        results = []
        for index in range(len(ks)):
            scores = np.concatenate(scores_per_k[index])
            codes = np.concatenate(codes_per_k[index]) if targets.ndim == 1 else None
            results.append(selection_score(query_targets, scores, codes))
        return results

    # ------------------------------------------------------------------ Probe hooks

    def _fit(
        self,
        inputs: Inputs,
        targets: np.ndarray,
        n_classes: int,
        validation: tuple[Inputs, np.ndarray] | None,
    ) -> None:
        assert isinstance(inputs, np.ndarray)
        train = self._prepare(inputs, "X")
        self._n_classes = n_classes
        ks = [min(k, train.shape[0]) for k in self.k_grid]
        ks = sorted(set(ks))
        method: str
        scores: list[float]
        if len(ks) == 1:
            method, scores, n_splits = "fixed", [], None
        elif validation is not None:
            val_inputs, val_targets = validation
            assert isinstance(val_inputs, np.ndarray)
            queries = self._prepare(val_inputs, "X_val")
            method, n_splits = "validation", None
            scores = self._evaluate_grid(train, targets, queries, val_targets, ks)
        else:
            method = "inner_cv"
            folds = inner_cv_folds(
                targets, n_splits=self.n_splits, seed=self.seed, groups=self.fit_groups
            )
            n_splits = len(folds)
            per_fold = np.array(
                [
                    self._evaluate_grid(
                        train[tr],
                        targets[tr],
                        train[te],
                        targets[te],
                        [min(k, len(tr)) for k in ks],
                    )
                    for tr, te in folds
                ]
            )
            with np.errstate(invalid="ignore"):
                scores = [
                    float(np.nanmean(column)) if np.isfinite(column).any() else float("nan")
                    for column in per_fold.T
                ]
        chosen = ks[0] if method == "fixed" else select_best(ks, scores, prefer="last")
        self._train, self._targets, self._chosen_k = train, targets, int(chosen)
        self._selection = {
            "method": method,
            "metric": None if method == "fixed" else selection_metric(self.multilabel),
            "n_splits": n_splits,
            "scores": [{"k": k, "score": s} for k, s in zip(ks, scores, strict=False)],
            "tie_break": "larger k",
        }

    def _neighbours_of(self, inputs: Inputs) -> Iterator[np.ndarray]:
        assert isinstance(inputs, np.ndarray) and self._train is not None
        assert self._chosen_k is not None
        queries = self._prepare(inputs, "X")
        for _, neighbours, _ in self._neighbour_blocks(queries, self._train, self._chosen_k):
            yield neighbours

    def _predict_scores(self, inputs: Inputs) -> np.ndarray:
        assert self._targets is not None and self._chosen_k is not None
        k = min(self._chosen_k, self._targets.shape[0])
        return np.concatenate(
            [self._votes(nb, self._targets, k) for nb in self._neighbours_of(inputs)]
        )

    def _predict_codes(self, inputs: Inputs) -> np.ndarray:
        assert self._targets is not None and self._chosen_k is not None
        k = min(self._chosen_k, self._targets.shape[0])
        return np.concatenate(
            [self._decide(nb, self._targets, k) for nb in self._neighbours_of(inputs)]
        )

    def _config(self) -> dict[str, Any]:
        return {
            "params": {"metric": self.metric, "n_splits": self.n_splits, "votes": "uniform"},
            "grid": {"k": list(self.k_grid)},
            "selection": self._selection,
            "chosen": None if self._chosen_k is None else {"k": self._chosen_k},
        }
