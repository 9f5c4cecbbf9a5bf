"""Clear errors on bad probe input, and the probe registry."""

from __future__ import annotations

import re

import numpy as np
import pytest

from audiobench.probes import (
    PROBES,
    TOKEN_PROBES,
    VECTOR_PROBES,
    AttentiveProbe,
    InsufficientClassesError,
    InvalidEmbeddingsError,
    KNNProbe,
    LinearProbe,
    MissingClassError,
    Probe,
    make_probe,
)

ALL = list(PROBES)
FAST = {"knn": {}, "linear": {"C": 1.0}, "mlp": {"epochs": 2}, "attentive": {"epochs": 2}}
FAST["protobin"] = {"epochs": 2}


def data(name: str, n: int = 12, dim: int = 4) -> object:
    rng = np.random.default_rng(0)
    if PROBES[name].level == "vector":
        return rng.normal(size=(n, dim)).astype(np.float32)
    return [rng.normal(size=(3 + i % 4, dim)).astype(np.float32) for i in range(n)]


def probe(name: str, **kwargs: object) -> Probe:
    return make_probe(name, **{**FAST[name], **kwargs})


LABELS = np.array(["a", "b", "c"] * 4)


def test_registry_lists_every_probe_by_level() -> None:
    assert set(PROBES) == {"knn", "linear", "mlp", "attentive", "protobin"}
    assert VECTOR_PROBES == ("knn", "linear", "mlp")
    assert TOKEN_PROBES == ("attentive", "protobin")
    for name in ALL:
        built = make_probe(name, seed=3)
        assert built.name == name and built.seed == 3
        assert built.level == ("vector" if name in VECTOR_PROBES else "token")
    assert isinstance(make_probe("knn", k=3), KNNProbe)
    with pytest.raises(ValueError, match="unknown probe 'svm'; known probes: knn, linear"):
        make_probe("svm")


@pytest.mark.parametrize("name", ALL)
def test_fewer_than_two_classes(name: str) -> None:
    with pytest.raises(InsufficientClassesError, match=r"1 class .*'a'.* at least 2"):
        probe(name).fit(data(name), ["a"] * 12)


@pytest.mark.parametrize("name", ALL)
def test_validation_class_missing_from_training(name: str) -> None:
    y_val = np.array(["a", "b", "zebra", "c"] * 3)
    with pytest.raises(MissingClassError, match=r"'validation' split .*'zebra'") as error:
        probe(name).fit(data(name), LABELS, X_val=data(name), y_val=y_val)
    assert error.value.classes == ("zebra",) and error.value.split == "validation"


@pytest.mark.parametrize("name", ALL)
def test_test_class_missing_from_training(name: str) -> None:
    fitted = probe(name).fit(data(name), LABELS)
    with pytest.raises(MissingClassError, match=r"'fold-3' split .*'d'"):
        fitted.score(data(name), np.array(["a", "b", "c", "d"] * 3), split="fold-3")


@pytest.mark.parametrize("name", ALL)
def test_nan_inputs_named(name: str) -> None:
    X = data(name)
    if isinstance(X, np.ndarray):
        X[5, 1] = np.nan
    else:
        X[5][0, 1] = np.nan  # type: ignore[index]
    with pytest.raises(InvalidEmbeddingsError, match=r"NaN or infinite .*indices: 5") as error:
        probe(name).fit(X, LABELS)
    assert error.value.clip_ids == (5,)
    fitted = probe(name).fit(data(name), LABELS)
    with pytest.raises(InvalidEmbeddingsError, match="indices: 5"):
        fitted.predict(X)


@pytest.mark.parametrize("name", ALL)
def test_mismatched_lengths(name: str) -> None:
    with pytest.raises(ValueError, match="got 11 labels in y for 12 clips"):
        probe(name).fit(data(name), LABELS[:11])
    with pytest.raises(ValueError, match="pass both X_val and y_val"):
        probe(name).fit(data(name), LABELS, X_val=data(name))


@pytest.mark.parametrize("name", ALL)
def test_feature_size_must_match(name: str) -> None:
    fitted = probe(name).fit(data(name), LABELS)
    with pytest.raises(ValueError, match="X has 5 features, the probe was fitted on 4"):
        fitted.predict_scores(data(name, dim=5))


@pytest.mark.parametrize("name", ALL)
def test_not_fitted(name: str) -> None:
    with pytest.raises(RuntimeError, match="not fitted yet"):
        probe(name).predict(data(name))


@pytest.mark.parametrize("name", ALL)
def test_missing_labels_are_not_dropped(name: str) -> None:
    labels = list(LABELS)
    labels[7] = None
    with pytest.raises(ValueError, match=r"missing label\(s\) .* indices 7"):
        probe(name).fit(data(name), labels)


@pytest.mark.parametrize("name", TOKEN_PROBES)
def test_empty_sequences_named(name: str) -> None:
    X = data(name)
    X[4] = np.zeros((0, 4), dtype=np.float32)  # type: ignore[index]
    with pytest.raises(ValueError, match=r"1 empty sequence\(s\) .*indices: 4"):
        probe(name).fit(X, LABELS)


@pytest.mark.parametrize("name", TOKEN_PROBES)
def test_token_probes_reject_vectors_and_mixed_sizes(name: str) -> None:
    with pytest.raises(ValueError, match="list of \\[frames, features\\] arrays"):
        probe(name).fit(np.zeros((12, 4)), LABELS)
    X = data(name)
    X[2] = np.zeros((3, 5), dtype=np.float32)  # type: ignore[index]
    with pytest.raises(ValueError, match=r"same number of features.*2"):
        probe(name).fit(X, LABELS)


@pytest.mark.parametrize("name", VECTOR_PROBES)
def test_vector_probes_reject_sequences(name: str) -> None:
    with pytest.raises(ValueError, match="use a token-level probe, or pool"):
        probe(name).fit(data("attentive"), LABELS)


def test_multilabel_checks() -> None:
    X = data("knn")
    Y = np.zeros((12, 3), dtype=int)
    Y[::2, 0] = 1
    Y[1::2, 2] = 1
    with pytest.raises(MissingClassError, match=re.escape("columns: 1")) as error:
        LinearProbe(multilabel=True).fit(X, Y)
    assert error.value.classes == (1,)
    with pytest.raises(ValueError, match="binary indicator matrix"):
        LinearProbe(multilabel=True).fit(X, LABELS)
    with pytest.raises(ValueError, match="only 0 and 1"):
        LinearProbe(multilabel=True).fit(X, Y * 2)
    with pytest.raises(ValueError, match="multilabel=True"):
        LinearProbe().fit(X, Y)


def test_bad_hyper_parameters() -> None:
    with pytest.raises(ValueError, match="k values must be positive"):
        KNNProbe(k=0)
    with pytest.raises(ValueError, match="C values must be positive"):
        LinearProbe(C_grid=(1.0, -1.0))
    with pytest.raises(ValueError, match=r"divisible|multiple"):
        AttentiveProbe(dim=30, num_heads=4)
    with pytest.raises(ValueError, match="seed must be an integer"):
        KNNProbe(seed=1.5)  # type: ignore[arg-type]


def test_cosine_rejects_zero_vectors() -> None:
    X = data("knn")
    X[3] = 0.0
    with pytest.raises(InvalidEmbeddingsError, match=r"all-zero .*indices: 3"):
        KNNProbe().fit(X, LABELS)
    KNNProbe(metric="euclidean").fit(X, LABELS)
