"""MSEB's protocol for stability: drift of each clean output's variants, micro and macro.

Per subset:

1. The clean clips are embedded (frames or pooled vectors, per the ``outputs`` option; codes
   for a discrete task); each embedded clip's variants are made by the family
   (:meth:`~audiobench.families.stability.StabilityTask.variants`) and embedded the same way.
   Variants may hold the same audio (a silent clip), so they are embedded without the
   duplicate check.
2. Continuous outputs: :func:`audiobench.metrics.stability.continuous_stability` (CED, DTW,
   L2: the largest singular value of the zero-padded difference); discrete outputs:
   :func:`~audiobench.metrics.stability.discrete_stability` (UED over the codes, a frame's Q
   codes joined into one unit).
3. The report holds MSEB's names: ``Corpus_Mean_<m>`` (Σ distance / (c · Σ reference
   length), c = 2 for CED) and ``Mean_Local_IS_<m>`` with its ``_std`` (the mean over
   utterances of the per-utterance std of drifts: the instability score). Lower is better.

A clean clip the runner skipped (``--on-error skip``) drops its variants
(``n_unembedded``); a variant that could not be embedded is left out of its utterance
(``n_variants_unembedded``), as MSEB leaves out a variant without an embedding.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from pydantic import Field, model_validator

from audiobench import reports as _reports
from audiobench.audio import AudioDecodeError, Clip
from audiobench.errors import DataError
from audiobench.evaluators.evaluator import Evaluator
from audiobench.evaluators.registry import register
from audiobench.reports import Count, NonNegative, Report, Summary
from audiobench.task import Embedder, Subset, Task, TaskFamily, error_in_context

__all__ = ["CONTINUOUS", "DISCRETE", "MsebStabilityEvaluator", "StabilityReport"]

#: The distances of each representation; the first is the main one.
CONTINUOUS = ("CED", "DTW", "L2")
DISCRETE = ("UED",)


def score_names(metrics: tuple[str, ...]) -> tuple[str, ...]:
    """MSEB's score names of ``metrics``: ``Corpus_Mean_<m>``, ``Mean_Local_IS_<m>``."""
    return tuple(f"{kind}_{m}" for m in metrics for kind in ("Corpus_Mean", "Mean_Local_IS"))


class StabilityScores(Report):
    """MSEB's stability scores; those of the other representation are left out."""

    Corpus_Mean_CED: NonNegative | None = None
    Mean_Local_IS_CED: NonNegative | None = None
    Corpus_Mean_DTW: NonNegative | None = None
    Mean_Local_IS_DTW: NonNegative | None = None
    Corpus_Mean_L2: NonNegative | None = None
    Mean_Local_IS_L2: NonNegative | None = None
    Corpus_Mean_UED: NonNegative | None = None
    Mean_Local_IS_UED: NonNegative | None = None


class StabilityReport(StabilityScores):
    """One subset: the scores, each ``Mean_Local_IS`` std, and what was counted."""

    Mean_Local_IS_CED_std: NonNegative | None = None
    Mean_Local_IS_DTW_std: NonNegative | None = None
    Mean_Local_IS_L2_std: NonNegative | None = None
    Mean_Local_IS_UED_std: NonNegative | None = None
    n_utterances: Count = Field(description="Clean utterances with at least one scored variant.")
    n_pairs: Count = Field(description="(clean, variant) pairs scored.")
    n_variants: Count = Field(description="Variants made per utterance.")
    n_unembedded: Count = Field(description="Clean clips that could not be embedded.")
    n_variants_unembedded: Count

    @model_validator(mode="after")
    def _one_representation(self) -> StabilityReport:
        """Exactly one representation's scores, each with its std; pairs per utterance fit."""
        present = [
            metrics
            for metrics in (CONTINUOUS, DISCRETE)
            if any(getattr(self, n) is not None for n in score_names(metrics))
        ]
        if len(present) != 1:
            raise ValueError(
                "a report holds the continuous (CED, DTW, L2) or the discrete "
                "(UED) scores, not both or neither"
            )
        for m in present[0]:
            for name in (*score_names((m,)), f"Mean_Local_IS_{m}_std"):
                if getattr(self, name) is None:
                    raise ValueError(f"{name} is missing")
        if not self.n_utterances <= self.n_pairs <= self.n_utterances * self.n_variants:
            raise ValueError(
                f"n_pairs ({self.n_pairs}) must lie between n_utterances ({self.n_utterances}) "
                f"and n_utterances × n_variants ({self.n_utterances * self.n_variants})"
            )
        return self


class StabilitySummary(Summary, StabilityScores):
    """Unweighted mean over subsets of each score."""

    n_subsets: Count


def _continuous(array: Any, clip_id: str) -> np.ndarray:
    z = np.asarray(array)
    if z.ndim == 1:
        z = z[None, :]
    if z.ndim != 2 or z.shape[0] == 0:
        raise DataError(
            f"clip {clip_id!r}: the output has shape {z.shape}; continuous stability needs "
            "frames × dimensions (or one vector)"
        )
    if not np.issubdtype(z.dtype, np.floating):
        z = z.astype(np.float64)
    return z


def _units(array: Any, clip_id: str) -> list[str]:
    z = np.asarray(array)
    if z.ndim == 1:
        return [str(v) for v in z.tolist()]
    if z.ndim == 2:
        return ["-".join(str(v) for v in row) for row in z.tolist()]
    raise DataError(
        f"clip {clip_id!r}: the codes have shape {z.shape}; discrete stability needs [T] or [T, Q]"
    )


@register
class MsebStabilityEvaluator(Evaluator):
    family = TaskFamily.STABILITY
    protocol = "mseb"
    Report = StabilityReport
    Summary = StabilitySummary

    @classmethod
    def check_main_score(cls, task: type[Task], path: tuple[str, ...]) -> None:
        o = cast(Any, task.options)
        task.require_main_score(
            path, score_names(DISCRETE if o.representation == "discrete" else CONTINUOUS)
        )

    @classmethod
    def evaluate_subset(cls, task: Task, embedder: Embedder, subset: Subset) -> _reports.Report:
        from audiobench.families.stability import StabilityTask
        from audiobench.metrics.stability import continuous_stability, discrete_stability

        assert isinstance(task, StabilityTask)
        o = cast(Any, task.options)
        discrete = o.representation == "discrete"
        pooled = not discrete and o.outputs == "pooled"
        kept, clean = embedder.embed(subset.clips, subset.label, pooled=pooled)
        if not kept:
            raise DataError(f"{subset.where}: no clean clip could be embedded")
        variant_lists: list[list[Clip]] = []
        for clip in kept:
            try:
                variant_lists.append(task.variants(clip))
            except AudioDecodeError as exc:
                raise DataError(f"{subset.where}: {exc}") from exc
        made = [v for variants in variant_lists for v in variants]
        loose = embedder.with_encoder(embedder.encoder, allow_duplicates=True)
        done, outputs = loose.embed(made, f"{subset.label} variants", pooled=pooled)
        by_id = dict(zip((c.id for c in done), outputs, strict=True))
        convert = _units if discrete else _continuous
        references = [convert(z, c.id) for c, z in zip(kept, clean, strict=True)]
        variants = [
            [convert(by_id[v.id], v.id) for v in vs if v.id in by_id] for vs in variant_lists
        ]
        try:
            result = (discrete_stability if discrete else continuous_stability)(
                references, variants
            )
        except ValueError as exc:
            raise error_in_context(exc, subset.where) from exc
        main = result.metrics[result.main_metric]
        scores: dict[str, float] = result.to_dict()
        return StabilityReport(
            **scores,
            n_utterances=main.n_utterances,
            n_pairs=main.n_pairs,
            n_variants=o.n_variants,
            n_unembedded=len(subset.clips) - len(kept),
            n_variants_unembedded=len(made) - len(done),
        )

    @classmethod
    def describe(cls, task: Task) -> dict[str, Any]:
        o = cast(Any, task.options)
        discrete = o.representation == "discrete"
        return {
            "perturbation": "SpecAugment on the STFT magnitude, inverted with the original "
            "phase; variant i of clip u seeded by md5('<u>_<i>') mod 2**32",
            **task.options.model_dump(mode="json", exclude={"protocol"}),
            "distances": list(DISCRETE if discrete else CONTINUOUS),
            "normalisation": "CED by 2·L_ref, the others by L_ref (frames or units)",
            "l2": "largest singular value of the zero-padded difference (matrix 2-norm)",
        }
