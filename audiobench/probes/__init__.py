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
paper's recipe for the token probes (asymmetric loss: :mod:`audiobench.probes.losses`).
"""

from __future__ import annotations

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
from audiobench.probes.registry import PROBES, TOKEN_PROBES, VECTOR_PROBES, make_probe
from audiobench.probes.splits import (
    Split,
    check_split,
    fold_splits,
    grouped_folds,
    grouped_split,
    groups_in_several_parts,
    split_from_labels,
)

__all__ = [
    "PROBES",
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
    "check_split",
    "fold_splits",
    "grouped_folds",
    "grouped_split",
    "groups_in_several_parts",
    "make_probe",
    "split_from_labels",
]
