"""Attentive and protobin probes on frame sequences."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from audiobench.probes import AttentiveProbe, LinearProbe, ProtoBinProbe, make_probe
from audiobench.probes.neural import pad_sequences
from audiobench.probes.protobin import binarise

from .data import event_sequences
from .helpers import assert_chance, hamming_accuracy

N_CLASSES = 4
TOKEN = ["attentive", "protobin"]
SequenceData = tuple[list[np.ndarray], np.ndarray]


@pytest.fixture(scope="module")
def events() -> SequenceData:
    # One pattern frame among 20-50 noise frames: mean pooling dilutes it 20-50 times.
    return event_sequences(
        np.random.default_rng(0), 320, N_CLASSES, dim=32, event_frames=1, lengths=(20, 50)
    )


@pytest.fixture(scope="module")
def fitted(events: SequenceData) -> dict[str, object]:
    sequences, y = events
    return {name: make_probe(name).fit(sequences[:160], y[:160]) for name in TOKEN}


@pytest.mark.parametrize("name", TOKEN)
def test_hidden_events_near_perfect(
    name: str, events: SequenceData, fitted: dict[str, object]
) -> None:
    sequences, y = events
    probe = fitted[name]
    assert probe.score(sequences[160:], y[160:]) >= 0.95  # type: ignore[attr-defined]
    scores = probe.predict_scores(sequences[160:])  # type: ignore[attr-defined]
    assert scores.shape == (160, N_CLASSES)
    np.testing.assert_allclose(scores.sum(axis=1), 1.0, rtol=1e-5)


def test_mean_pooling_dilutes_the_events(events: SequenceData, fitted: dict[str, object]) -> None:
    # The generated task needs frame-level probes: a linear probe on mean-pooled frames
    # is far from perfect.
    sequences, y = events
    pooled = np.stack([seq.mean(axis=0) for seq in sequences])
    mean_pooled = LinearProbe().fit(pooled[:160], y[:160]).score(pooled[160:], y[160:])
    for name in TOKEN:
        token_level = fitted[name].score(sequences[160:], y[160:])  # type: ignore[attr-defined]
        assert token_level >= mean_pooled + 0.2


@pytest.mark.parametrize("name", TOKEN)
def test_shuffled_labels_give_chance(name: str, events: SequenceData) -> None:
    sequences, y = events
    shuffled = np.random.default_rng(1).permutation(y)
    probe = make_probe(name).fit(sequences[:160], shuffled[:160])
    assert_chance(probe.score(sequences[160:], shuffled[160:]), 160, N_CLASSES)


@pytest.mark.parametrize("name", TOKEN)
def test_same_seed_same_scores(name: str, events: SequenceData) -> None:
    sequences, y = events
    runs = [
        make_probe(name, seed=7, epochs=3)
        .fit(sequences[:80], y[:80])
        .predict_scores(sequences[80:120])
        for _ in range(2)
    ]
    np.testing.assert_array_equal(runs[0], runs[1])
    other = make_probe(name, seed=8, epochs=3).fit(sequences[:80], y[:80])
    assert not np.array_equal(runs[0], other.predict_scores(sequences[80:120]))


def test_global_random_state_is_left_alone(events: SequenceData) -> None:
    sequences, y = events
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    AttentiveProbe(epochs=1).fit(sequences[:40], y[:40])
    np.testing.assert_array_equal(torch.rand(3).numpy(), expected.numpy())


@pytest.mark.parametrize("name", TOKEN)
def test_batching_with_longer_sequences_changes_nothing(
    name: str, events: SequenceData, fitted: dict[str, object]
) -> None:
    sequences, _ = events
    probe = fitted[name]
    alone = np.concatenate([probe.predict_scores([seq]) for seq in sequences[160:170]])  # type: ignore[attr-defined]
    long = np.random.default_rng(3).normal(size=(400, 32)).astype(np.float32)
    batched = probe.predict_scores([*sequences[160:170], long])[:10]  # type: ignore[attr-defined]
    np.testing.assert_allclose(batched, alone, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", TOKEN)
def test_padding_frames_are_ignored(name: str, fitted: dict[str, object]) -> None:
    # Whatever sits in the padded frames, the module's output is the same.
    module = fitted[name].module_  # type: ignore[attr-defined]
    rng = np.random.default_rng(5)
    sequences = [torch.from_numpy(rng.normal(size=(t, 32)).astype(np.float32)) for t in (5, 9, 30)]
    padded, mask = pad_sequences(sequences, torch.device("cpu"))
    garbage = padded.clone()
    garbage[~mask] = torch.from_numpy(rng.normal(scale=50.0, size=(int((~mask).sum()), 32))).float()
    with torch.inference_mode():
        np.testing.assert_allclose(
            module(garbage, mask).numpy(), module(padded, mask).numpy(), rtol=1e-5, atol=1e-6
        )


def test_attention_puts_no_weight_on_padding(fitted: dict[str, object]) -> None:
    module = fitted["attentive"].module_  # type: ignore[attr-defined]
    sequences = [torch.randn(4, 32), torch.randn(11, 32)]
    padded, mask = pad_sequences(sequences, torch.device("cpu"))
    with torch.inference_mode():
        _, weights = module.attention(padded, mask)
    assert weights.shape == (2, 4, 1, 11)
    assert torch.all(weights[0, :, :, 4:] == 0)
    torch.testing.assert_close(weights.sum(dim=-1), torch.ones(2, 4, 1))


@pytest.mark.parametrize("name", TOKEN)
def test_multilabel(name: str) -> None:
    sequences, Y = event_sequences(
        np.random.default_rng(6), 300, 3, dim=32, event_frames=1, lengths=(20, 50), multilabel=True
    )
    probe = make_probe(name, multilabel=True).fit(sequences[:200], Y[:200])
    predicted = probe.predict(sequences[200:])
    assert predicted.shape == (100, 3)
    assert hamming_accuracy(predicted, Y[200:]) >= 0.95
    assert probe.config()["params"]["loss"] == "binary_cross_entropy"


@pytest.mark.parametrize("name", TOKEN)
def test_validation_split_keeps_the_best_epoch(name: str, events: SequenceData) -> None:
    sequences, y = events
    probe = make_probe(name).fit(
        sequences[:120], y[:120], X_val=sequences[120:160], y_val=y[120:160]
    )
    config = probe.config()
    json.dumps(config)
    selection = config["selection"]
    assert selection["method"] == "validation_early_stopping"
    assert 1 <= selection["best_epoch"] <= selection["epochs_run"] <= 30
    assert config["chosen"] == {"epochs": selection["best_epoch"]}
    assert config["n_validation"] == 40
    assert probe.score(sequences[160:], y[160:]) >= 0.95


@pytest.mark.parametrize("name", TOKEN)
def test_early_stopping_stops_when_validation_stalls(name: str, events: SequenceData) -> None:
    # Shuffled labels: nothing generalises, the validation loss stops improving early.
    sequences, y = events
    shuffled = np.random.default_rng(2).permutation(y)
    probe = make_probe(name, patience=3).fit(
        sequences[:120], shuffled[:120], X_val=sequences[120:160], y_val=shuffled[120:160]
    )
    selection = probe.config()["selection"]
    assert selection["epochs_run"] < 30
    assert selection["epochs_run"] == selection["best_epoch"] + 3


def test_protobin_prototypes_and_binarisation(fitted: dict[str, object]) -> None:
    probe = fitted["protobin"]
    assert isinstance(probe, ProtoBinProbe)
    prototypes = probe.module_.prototypes
    assert prototypes.shape == (20 * N_CLASSES, 32)
    assert probe.module_.classifier.in_features == 20 * N_CLASSES
    # Forward: exact signs. Backward: the gradient passes straight through.
    weights = torch.tensor([-0.3, 0.0, 0.7], requires_grad=True)
    binary = binarise(weights)
    np.testing.assert_array_equal(binary.detach().numpy(), [-1.0, 1.0, 1.0])
    (binary * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_array_equal(weights.grad.numpy(), [1.0, 2.0, 3.0])  # type: ignore[union-attr]


def test_three_dimensional_array_input(events: SequenceData, fitted: dict[str, object]) -> None:
    sequences, _ = events
    same_length = np.stack([seq[:20] for seq in sequences[160:170]])
    probe = fitted["attentive"]
    np.testing.assert_allclose(
        probe.predict_scores(same_length),  # type: ignore[attr-defined]
        probe.predict_scores(list(same_length)),  # type: ignore[attr-defined]
        rtol=1e-6,
    )


def test_config_records_architecture(fitted: dict[str, object]) -> None:
    attentive = fitted["attentive"].config()  # type: ignore[attr-defined]
    json.dumps(attentive)
    assert attentive["probe"] == "attentive" and attentive["level"] == "token"
    assert attentive["params"]["num_heads"] == 4 and attentive["params"]["optimizer"] == "AdamW"
    assert attentive["selection"]["method"] == "fixed_epochs"
    protobin = ProtoBinProbe(prototypes_per_class=5).config()
    assert protobin["params"]["prototypes_per_class"] == 5 and protobin["chosen"] is None
    assert isinstance(fitted["attentive"], AttentiveProbe)
