"""Classification probes trained on frozen embeddings, and the splits they are evaluated on.

Vector-level probes take one embedding per clip (``X``: ``[n, D]``):

- :class:`KNNProbe` (``"knn"``): k nearest neighbours, cosine by default, k chosen on a fixed
  grid;
- :class:`LinearProbe` (``"linear"``): standardised features, logistic regression, C chosen
  on a fixed grid;
- :class:`MLPProbe` (``"mlp"``): one hidden layer.

Token-level probes take each clip's frame sequence (``X``: a list of ``[T_i, D]`` arrays):

- :class:`AttentiveProbe` (``"attentive"``): learned queries, multi-head cross-attention;
- :class:`ProtoBinProbe` (``"protobin"``): binarised prototypes, cosine, max over frames.

All share the :class:`Probe` surface (``fit``, ``predict_scores``, ``predict``, ``score``,
``classes_``, ``config()``), are seeded and deterministic, and handle multi-class labels or,
with ``multilabel=True``, a binary indicator matrix. :mod:`audiobench.probes.splits` builds
train/validation/test index splits (given, fold-wise, grouped) and checks them;
:mod:`audiobench.probes.paper` cuts an encoder's output to its token map and holds the probing
paper's recipe for the token probes (asymmetric loss: :mod:`audiobench.probes.losses`; its
search: :mod:`audiobench.probes.search`); :mod:`audiobench.probes.tokens` embeds a subset's
clips frame-level and cuts them to their token maps, and :mod:`audiobench.probes.fitting`
fits a task's probes on every split (once per seed) and averages their test reports into
their entries. The neural probes share one typed training recipe
(:class:`~audiobench.probes.recipe.TrainingRecipe`). Probe names are registered once, in
:mod:`audiobench.probes.registry`; reading them (``PROBE_NAMES``, ``probe_level``) imports no
torch or scikit-learn, and the rest of this package is imported when first used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from audiobench.probes.registry import (
    PROBE_NAMES,
    TOKEN_PROBES,
    VECTOR_PROBES,
    make_probe,
    probe_class,
    probe_level,
)

if TYPE_CHECKING:
    from audiobench.probes.attentive import AttentiveProbe
    from audiobench.probes.base import Probe, ProbeLevel
    from audiobench.probes.errors import (
        GroupLeakError,
        InsufficientClassesError,
        InvalidEmbeddingsError,
        MissingClassError,
    )
    from audiobench.probes.knn import KNNProbe
    from audiobench.probes.linear import LinearProbe
    from audiobench.probes.mlp import MLPProbe
    from audiobench.probes.protobin import ProtoBinProbe
    from audiobench.probes.recipe import TrainingRecipe
    from audiobench.probes.registry import PROBES
    from audiobench.probes.splits import (
        Split,
        check_split,
        fold_splits,
        grouped_folds,
        grouped_split,
        groups_in_several_parts,
        split_from_labels,
    )

# The rest is imported when first used: the probes need torch and scikit-learn, and reading
# probe names (a task's declaration) must not pull them in.
_LAZY: dict[str, str] = {
    "AttentiveProbe": "attentive",
    "Probe": "base",
    "ProbeLevel": "base",
    "GroupLeakError": "errors",
    "InsufficientClassesError": "errors",
    "InvalidEmbeddingsError": "errors",
    "MissingClassError": "errors",
    "KNNProbe": "knn",
    "LinearProbe": "linear",
    "MLPProbe": "mlp",
    "ProtoBinProbe": "protobin",
    "TrainingRecipe": "recipe",
    "PROBES": "registry",
    "Split": "splits",
    "check_split": "splits",
    "fold_splits": "splits",
    "grouped_folds": "splits",
    "grouped_split": "splits",
    "groups_in_several_parts": "splits",
    "split_from_labels": "splits",
}

__all__ = [
    "PROBES",
    "PROBE_NAMES",
    "TOKEN_PROBES",
    "VECTOR_PROBES",
    "AttentiveProbe",
    "GroupLeakError",
    "InsufficientClassesError",
    "InvalidEmbeddingsError",
    "KNNProbe",
    "LinearProbe",
    "MLPProbe",
    "MissingClassError",
    "Probe",
    "ProbeLevel",
    "ProtoBinProbe",
    "Split",
    "TrainingRecipe",
    "check_split",
    "fold_splits",
    "grouped_folds",
    "grouped_split",
    "groups_in_several_parts",
    "make_probe",
    "probe_class",
    "probe_level",
    "split_from_labels",
]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    globals()[name] = value
    return value
