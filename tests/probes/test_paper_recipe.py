"""The probing paper's recipe: asymmetric loss, token maps, grid search, raw tokens, width."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from sklearn.metrics import average_precision_score
from torch.nn import functional as F

from audiobench.probes import AttentiveProbe, ProtoBinProbe, make_probe
from audiobench.probes.losses import ASL_DEFAULTS, asymmetric_loss
from audiobench.probes.neural import Batches, holdout_split
from audiobench.probes.paper import PAPER_GRIDS, paper_params, token_map, valid_frames

from .data import event_sequences

# ---------------------------------------------------------------------------- asymmetric loss


def test_asymmetric_loss_matches_a_hand_computation() -> None:
    """Two clips, three classes, γ+ = 0, γ- = 4, margin 0.05; p = sigmoid(logit).

    clip 1, logits (0, 2, -4), labels (1, 0, 0):
      positive, p = 0.5:                 -log 0.5                          = 0.693147
      negative, p = 0.880797, p_m = 0.830797: 0.830797⁴ · -log(0.169203)   = 0.846415
      negative, p = 0.017986 < 0.05, p_m = 0: costs nothing               = 0
    clip 2, logits (-1, 3, 1), labels (0, 1, 1):
      negative, p = 0.268941, p_m = 0.218941: 0.218941⁴ · -log(0.781059)   = 0.000568
      positive, p = 0.952574:            -log 0.952574                     = 0.048587
      positive, p = 0.731059:            -log 0.731059                     = 0.313262
    Sum per clip: 1.539562 and 0.362417; mean over the two clips: 0.950989.
    """
    logits = torch.tensor([[0.0, 2.0, -4.0], [-1.0, 3.0, 1.0]])
    targets = torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]])
    assert ASL_DEFAULTS == (0.0, 4.0, 0.05)
    loss = asymmetric_loss(logits, targets)
    assert float(loss) == pytest.approx(0.950989, abs=2e-6)
    # The easy negative (p below the margin) gets no gradient at all.
    leaf = logits.clone().requires_grad_(True)
    asymmetric_loss(leaf, targets).backward()  # type: ignore[no-untyped-call]
    assert leaf.grad is not None and float(leaf.grad[0, 2]) == 0.0


def test_asymmetric_loss_without_focusing_or_margin_is_binary_cross_entropy() -> None:
    rng = torch.Generator().manual_seed(0)
    logits = torch.randn(6, 4, generator=rng)
    targets = (torch.rand(6, 4, generator=rng) > 0.5).float()
    plain = asymmetric_loss(logits, targets, gamma_pos=0.0, gamma_neg=0.0, margin=0.0)
    # Summed over classes, averaged over clips: torch's mean over both, times the classes.
    expected = 4 * F.binary_cross_entropy_with_logits(logits, targets)
    torch.testing.assert_close(plain, expected)
    with pytest.raises(ValueError, match="margin"):
        asymmetric_loss(logits, targets, margin=1.0)


def test_multilabel_probe_trains_with_the_asymmetric_loss() -> None:
    sequences, Y = event_sequences(
        np.random.default_rng(6), 160, 3, dim=16, event_frames=1, lengths=(10, 20), multilabel=True
    )
    probe = ProtoBinProbe(multilabel=True, multilabel_loss="asymmetric", epochs=15)
    probe.fit(sequences[:120], Y[:120])
    params = probe.config()["params"]
    assert params["loss"] == "asymmetric"
    assert params["loss_params"] == {"gamma_pos": 0.0, "gamma_neg": 4.0, "margin": 0.05}
    # ASL ranks well (its probabilities lean high: easy negatives cost little), so mAP.
    scores = probe.predict_scores(sequences[120:])
    assert average_precision_score(Y[120:], scores, average="macro") >= 0.9


# ---------------------------------------------------------------------------- token maps


def test_valid_frames_is_the_ceiling_of_duration_times_rate() -> None:
    assert valid_frames(5.0, 50.0) == 250
    assert valid_frames(80001 / 16000, 50.0) == 251  # one sample into the next frame
    assert valid_frames(0.1, 50.0) == 5  # 0.1 · 50 is 5.000000000000001 in floating point
    assert valid_frames(0.0, 50.0) == 1
    with pytest.raises(ValueError):
        valid_frames(1.0, 0.0)


def test_token_map_drops_prefix_tokens_and_padding_frames() -> None:
    frames = np.arange(10 * 2, dtype=np.float32).reshape(10, 2)
    np.testing.assert_array_equal(token_map(frames, n_prefix=2), frames[2:])
    np.testing.assert_array_equal(token_map(frames, n_prefix=2, n_valid=3), frames[2:5])
    np.testing.assert_array_equal(token_map(frames, n_valid=30), frames)  # nothing to cut
    assert np.shares_memory(token_map(frames, n_prefix=1), frames)  # a view, no copy
    with pytest.raises(ValueError, match="no more than the 10 prefix"):
        token_map(frames, n_prefix=10)


def test_paper_params() -> None:
    attentive = paper_params("attentive", multilabel=True)
    assert attentive["dim"] is None and attentive["multilabel_loss"] == "asymmetric"
    assert attentive["batch_size"] == 128 and attentive["epochs"] == 30
    assert attentive["early_stopping"] is False and attentive["standardise"] is False
    protobin = paper_params("protobin", multilabel=False)
    assert "multilabel_loss" not in protobin and "dim" not in protobin
    assert protobin["lr"] == PAPER_GRIDS["protobin"]["lr"]
    with pytest.raises(ValueError, match="token probes"):
        paper_params("linear", multilabel=False)
    make_probe("attentive", **attentive, multilabel=True)  # every key is a real parameter
    make_probe("protobin", **protobin)


# ---------------------------------------------------------------------------- recipe


@pytest.fixture(scope="module")
def events() -> tuple[list[np.ndarray], np.ndarray]:
    return event_sequences(
        np.random.default_rng(0), 200, 4, dim=16, event_frames=1, lengths=(10, 20)
    )


def test_grid_is_chosen_on_a_holdout_then_refitted(
    events: tuple[list[np.ndarray], np.ndarray],
) -> None:
    sequences, y = events
    probe = ProtoBinProbe(lr=(1e-4, 3e-2), weight_decay=(1e-4,), epochs=8, early_stopping=False)
    probe.fit(sequences[:150], y[:150])
    config = probe.config()
    json.dumps(config)
    selection = config["selection"]
    assert selection["method"] == "holdout" and selection["holdout"] == 0.2
    assert [(row["lr"], row["weight_decay"]) for row in selection["scores"]] == [
        (1e-4, 1e-4),
        (3e-2, 1e-4),
    ]
    # A learning rate of 1e-4 barely moves binarised prototypes in 8 epochs.
    assert selection["scores"][1]["score"] > selection["scores"][0]["score"]
    assert config["chosen"] == {"lr": 3e-2, "weight_decay": 1e-4, "epochs": 8}
    assert config["grid"] == {"lr": [1e-4, 3e-2], "weight_decay": [1e-4]}
    assert selection["training"]["epochs_run"] == 8  # the refit on all training clips
    assert probe.config()["n_train"] == 150
    assert probe.score(sequences[150:], y[150:]) >= 0.9
    assert probe.chosen_ == {"lr": 3e-2, "weight_decay": 1e-4}


def test_grid_with_a_validation_split_keeps_the_chosen_model(
    events: tuple[list[np.ndarray], np.ndarray],
) -> None:
    sequences, y = events
    kwargs = {"weight_decay": 1e-4, "epochs": 5, "early_stopping": False, "seed": 3}
    searched = ProtoBinProbe(lr=(1e-4, 3e-2), **kwargs).fit(
        sequences[:100], y[:100], X_val=sequences[100:150], y_val=y[100:150]
    )
    assert searched.config()["selection"]["method"] == "validation"
    # The kept model is the one trained on the training clips with the chosen values.
    alone = ProtoBinProbe(lr=3e-2, **kwargs).fit(sequences[:100], y[:100])
    np.testing.assert_array_equal(
        searched.predict_scores(sequences[150:]), alone.predict_scores(sequences[150:])
    )


def test_holdout_split_is_seeded_and_stratified() -> None:
    targets = np.repeat(np.arange(4), 10)
    train, held = holdout_split(targets, 0.2, seed=1)
    assert len(held) == 8 and np.bincount(targets[held]).tolist() == [2, 2, 2, 2]
    assert not set(train) & set(held) and len(train) + len(held) == 40
    again = holdout_split(targets, 0.2, seed=1)
    np.testing.assert_array_equal(again[1], held)


def test_raw_tokens_are_not_standardised() -> None:
    rng = np.random.default_rng(0)
    sequences = [rng.normal(3.0, 5.0, size=(4, 6)).astype(np.float32) for _ in range(3)]
    raw = Batches(sequences, None, None, torch.device("cpu"))
    x, mask = raw.batch(range(3))
    np.testing.assert_array_equal(x[0].numpy(), sequences[0])
    assert mask.all()
    probe = ProtoBinProbe(standardise=False, epochs=1).fit(sequences * 4, [0, 1, 2] * 4)
    assert probe.config()["params"]["standardise"] is False
    assert probe.config()["params"]["prototype_init"] == "raw training frames"


def test_attentive_probe_at_full_width(events: tuple[list[np.ndarray], np.ndarray]) -> None:
    sequences, y = events
    probe = AttentiveProbe(dim=None, num_heads=8, epochs=2).fit(sequences[:40], y[:40])
    params = probe.config()["params"]
    assert params["dim"] == 16 and params["full_width"] and params["num_heads"] == 8
    assert probe.module_.key.out_features == 16
    # A width that 8 does not divide gets the most heads that divide it.
    odd = [seq[:, :12] for seq in sequences[:40]]
    narrow = AttentiveProbe(dim=None, num_heads=8, epochs=1).fit(odd, y[:40])
    assert narrow.config()["params"]["num_heads"] == 6
    assert math.isfinite(float(narrow.predict_scores(odd[:2]).sum()))
