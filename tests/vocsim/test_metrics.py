"""P@k, GSR, CSR, CS, CSCF and silhouette: hand-computed cases and brute-force references."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn.metrics
import torch

from audiobench.metrics import InsufficientClassesError
from audiobench.vocsim import (
    class_statistics,
    cs,
    cscf,
    csr,
    gsr,
    gsr_details,
    precision_at_k,
    precision_at_k_details,
    silhouette,
)
from tests.metrics.data import LINE_D, LINE_LABELS, random_case

from . import reference


def test_precision_hand_computed() -> None:
    # Nearest other clip: 0→1, 1→0, 2→1, 3→4, 4→3: all same class, P@1 = 5/5.
    assert precision_at_k(LINE_D, LINE_LABELS, 1) == 1.0
    # Two nearest: 0→{1,2} 2 hits, 1→{0,2} 2, 2→{1,0} 2, 3→{4,2} 1, 4→{3,2} 1: 8 / (5·2).
    assert precision_at_k(LINE_D, LINE_LABELS, 2) == pytest.approx(0.8)


def test_precision_ties_go_to_lower_index() -> None:
    # Clip 0 is at distance 1 from clips 1, 2 and 3; only clip 2 shares its class. With the
    # lower index winning ties, P@1 of clip 0 uses clip 1 (miss) and P@2 clips 1, 2 (one hit).
    D = np.array(
        [
            [0, 1, 1, 1],
            [1, 0, 5, 5],
            [1, 5, 0, 5],
            [1, 5, 5, 0],
        ],
        dtype=float,
    )
    labels = ["a", "b", "a", "c"]
    result = precision_at_k_details(D, labels, 1)
    # Queries: 0→1 (miss); 1→0 (miss); 2→0 (hit); 3→0 (miss).
    assert result.per_clip.tolist() == [0.0, 0.0, 1.0, 0.0]
    assert precision_at_k_details(D, labels, 2).per_clip[0] == 0.5


def test_precision_skips_unlabelled_and_keeps_singletons() -> None:
    # Add an unlabelled clip 5 right next to clip 0 and a singleton class "c" far away.
    x = np.array([0.0, 1.0, 3.0, 10.0, 12.0, 0.1, 20.0])
    D = np.abs(x[:, None] - x[None, :])
    labels = [*LINE_LABELS, None, "c"]
    # Clips 0-4 keep their neighbours (clip 5 is no neighbour); clip 6's nearest is clip 4.
    result = precision_at_k_details(D, labels, 1)
    assert result.value == pytest.approx(5 / 6)
    assert result.n_evaluated == 6


def test_gsr_hand_computed() -> None:
    # AvgID / NID / s_i per clip:
    #   0: (1+3)/2 = 2,   min(10,12) = 10, s = 8/12
    #   1: (1+2)/2 = 1.5, min(9,11)  = 9,  s = 7.5/10.5
    #   2: (3+2)/2 = 2.5, min(7,9)   = 7,  s = 4.5/9.5
    #   3: 2,             min(10,9,7) = 7, s = 5/9
    #   4: 2,             min(12,11,9) = 9, s = 7/11
    # raw = mean s = 0.6091109, GSR = (raw + 1)/2 = 0.8045554.
    raw = (8 / 12 + 7.5 / 10.5 + 4.5 / 9.5 + 5 / 9 + 7 / 11) / 5
    result = gsr_details(LINE_D, LINE_LABELS)
    assert result.raw == pytest.approx(raw, abs=1e-9)
    assert result.value == pytest.approx((raw + 1) / 2, abs=1e-9)
    assert (result.n_evaluated, result.n_skipped) == (5, 0)
    assert gsr(LINE_D, LINE_LABELS) == result.value


def test_gsr_excludes_small_classes_and_unlabelled() -> None:
    x = np.array([0.0, 1.0, 3.0, 10.0, 12.0, 0.1, 20.0])
    D = np.abs(x[:, None] - x[None, :])
    labels = [*LINE_LABELS, None, "c"]
    result = gsr_details(D, labels)
    assert result.value == pytest.approx(gsr(LINE_D, LINE_LABELS), abs=1e-12)
    assert (result.n_excluded_classes, result.n_excluded_clips) == (1, 1)
    # With min_class_size=3 only class "a" survives: an error, not a NaN.
    with pytest.raises(InsufficientClassesError, match="1 class"):
        gsr(D, labels, min_class_size=3)


def test_gsr_skips_degenerate_clips() -> None:
    # Clips 0 and 1 coincide with each other and with clip 2 of another class: AvgID = NID = 0.
    D = np.array(
        [
            [0, 0, 0, 4],
            [0, 0, 0, 4],
            [0, 0, 0, 1],
            [4, 4, 1, 0],
        ],
        dtype=float,
    )
    result = gsr_details(D, ["a", "a", "b", "b"])
    # Clips 0, 1: AvgID 0, NID 0 -> denominator ε: skipped.
    # Clip 2: AvgID 1, NID 0 -> s = −1/(1+ε); clip 3: AvgID 1, NID 4 -> s = 3/5.
    assert (result.n_evaluated, result.n_skipped) == (2, 2)
    assert result.raw == pytest.approx((-1 + 0.6) / 2, abs=1e-8)


def test_csr_hand_computed() -> None:
    # MID (max intra): 3, 2, 3 | 2, 2. NID: 10, 9, 7 | 7, 9.
    # class a: mean NID 26/3, mean MID 8/3 -> sep = 18/34; class b: 8 vs 2 -> 6/10.
    # CSR = ((3·18/34 + 2·0.6)/5 + 1)/2 = 0.7788235.
    expected = ((3 * 18 / 34 + 2 * 0.6) / 5 + 1) / 2
    assert csr(LINE_D, LINE_LABELS) == pytest.approx(expected, abs=1e-9)


def test_cs_and_cscf_hand_computed() -> None:
    # intra_a = mean(1,3,2) = 2, intra_b = 2; inter(a,b) = inter(b,a) = 58/6.
    # t = 1/(1 + (58/6)/2) = 6/35 for both ordered pairs; no inter < intra.
    assert cs(LINE_D, LINE_LABELS) == pytest.approx(6 / 35, abs=1e-12)
    assert cscf(LINE_D, LINE_LABELS) == 0.0


def test_cs_special_cases() -> None:
    # Class a: two identical clips (intra 0); class b: two clips 1 apart; a and b 2 apart;
    # class c coincides with class a's clips (inter(a, c) = 0 and intra_c = 0).
    x = np.array([0.0, 0.0, 2.0, 3.0, 0.0, 0.0])
    D = np.abs(x[:, None] - x[None, :])
    labels = ["a", "a", "b", "b", "c", "c"]
    # intra: a 0, b 1, c 0. inter: (a,b) 2.5, (a,c) 0, (b,a) 2.5, (b,c) 2.5, (c,a) 0, (c,b) 2.5.
    # t: (a,b) intra≈0 -> 0; (a,c) both≈0 -> 0.5; (b,a) 1/(1+2.5); (b,c) 1/(1+2.5);
    #    (c,a) 0.5; (c,b) 0.  CS = (0 + 0.5 + 2/3.5 + 0.5 + 0)/6.
    assert cs(D, labels) == pytest.approx((1 + 2 / 3.5) / 6, abs=1e-12)
    # inter < intra only for (b, ·)? intra_b = 1 < 2.5: none; so CSCF = 0.
    assert cscf(D, labels) == 0.0
    # Shrink class b's spread above the a-b distance: intra_b = 4 > inter(b,a) = 3.
    y = np.array([0.0, 0.0, 1.0, 5.0, 0.0, 0.0])
    E = np.abs(y[:, None] - y[None, :])
    # inter(b,a) = (1+1+5+5)/4 = 3 < 4 and inter(b,c) = 3 < 4: 2 of 6 ordered pairs.
    assert cscf(E, labels) == pytest.approx(2 / 6)


def test_silhouette_hand_computed_and_sklearn() -> None:
    # a(i) = AvgID, b(i) = mean distance to the other class:
    #   0: 2 vs 11 -> 9/11;  1: 1.5 vs 10 -> 0.85;  2: 2.5 vs 8 -> 5.5/8;
    #   3: 2 vs 26/3 -> (26/3-2)/(26/3);  4: 2 vs 32/3 -> (32/3-2)/(32/3).
    expected = (9 / 11 + 0.85 + 5.5 / 8 + (20 / 3) / (26 / 3) + (26 / 3) / (32 / 3)) / 5
    assert silhouette(LINE_D, LINE_LABELS) == pytest.approx(expected, abs=1e-12)
    assert expected == pytest.approx(
        sklearn.metrics.silhouette_score(LINE_D, LINE_LABELS, metric="precomputed")
    )


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("own_class", ["lists", "masks"])
def test_against_brute_force(
    seed: int, own_class: str, small_blocks: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Both ways of handling a clip's own class: pair lists (many small classes) and masks.
    if own_class == "masks":
        monkeypatch.setattr(class_statistics, "MAX_LISTED_ENTRIES", 0)
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 40))
    D, labels = random_case(rng, n, int(rng.integers(2, 7)), ties=seed % 2 == 0, unlabelled=0.15)
    if seed >= 4:
        # The metric functions read row i for clip i and do not assume symmetry.
        D = D + rng.uniform(0, 0.3, size=D.shape) * (1 - np.eye(n))
    if len({label for label in labels if label is not None}) < 2:
        labels[0], labels[1] = "x", "y"
    labels[2] = "singleton"  # a class below min_class_size
    k_max = len(reference.labelled(labels)) - 1
    for k in (1, 2, 5):
        if k <= k_max:
            assert precision_at_k(D, labels, k) == pytest.approx(
                reference.precision_at_k(D, labels, k), abs=1e-12
            )
    for min_size in (2, 3):
        try:
            expected = reference.gsr(D, labels, min_size)
        except (ValueError, ZeroDivisionError):
            continue
        kept = {labels[i] for i in reference.kept_clips(labels, min_size)}
        if len(kept) < 2:
            continue
        result = gsr_details(D, labels, min_size)
        assert result.value == pytest.approx(expected[0], abs=1e-6)
        assert result.raw == pytest.approx(expected[1], abs=1e-6)
        assert (result.n_evaluated, result.n_skipped) == expected[2:]
        assert csr(D, labels, min_size) == pytest.approx(
            reference.csr(D, labels, min_size), abs=1e-6
        )
        assert cs(D, labels, min_size) == pytest.approx(reference.cs(D, labels, min_size), abs=1e-6)
        assert cscf(D, labels, min_size) == pytest.approx(
            reference.cscf(D, labels, min_size), abs=1e-12
        )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_torch_and_float32_inputs(dtype: type) -> None:
    rng = np.random.default_rng(11)
    D, labels = random_case(rng, 30, 4)
    expected = reference.gsr(D.astype(dtype), labels)[0]
    assert gsr(torch.from_numpy(D.astype(dtype)), labels) == pytest.approx(expected, abs=1e-6)


def test_silhouette_matches_sklearn_with_sampling() -> None:
    rng = np.random.default_rng(5)
    D, labels = random_case(rng, 80, 5, unlabelled=0.1)
    labels[0] = "singleton"
    keep = reference.kept_clips(labels, 2)
    sub = D[np.ix_(keep, keep)]
    sub_labels = [labels[i] for i in keep]
    assert silhouette(D, labels) == pytest.approx(
        sklearn.metrics.silhouette_score(sub, sub_labels, metric="precomputed"), abs=1e-12
    )
    # Sampled: same clips as scikit-learn draws (RandomState(seed).permutation(n)[:size]).
    # The exact sample may hold a class of one clip; both then score it 0.
    assert silhouette(D, labels, sample_size=30, seed=4) == pytest.approx(
        sklearn.metrics.silhouette_score(
            sub, sub_labels, metric="precomputed", sample_size=30, random_state=4
        ),
        abs=1e-12,
    )


def test_metric_input_errors() -> None:
    with pytest.raises(ValueError, match="square"):
        gsr(np.ones((3, 4)), ["a", "b", "a"])
    with pytest.raises(ValueError, match="labels"):
        gsr(LINE_D, ["a", "b"])
    with pytest.raises(ValueError, match="NaN"):
        D = LINE_D.copy()
        D[1, 2] = np.nan
        gsr(D, LINE_LABELS)
    with pytest.raises(InsufficientClassesError):
        gsr(LINE_D, ["a"] * 5)
    with pytest.raises(ValueError, match="P@5"):
        precision_at_k(LINE_D, LINE_LABELS, 5)
    with pytest.raises(ValueError, match="positive"):
        precision_at_k(LINE_D, LINE_LABELS, 0)
    with pytest.raises(ValueError, match="min_class_size"):
        gsr(LINE_D, LINE_LABELS, min_class_size=1)


def test_scalar_functions_are_the_value_of_their_details_twins() -> None:
    from audiobench.vocsim import cs_details, cscf_details, csr_details, silhouette_details

    D, labels = LINE_D, LINE_LABELS
    assert precision_at_k(D, labels, 1) == precision_at_k_details(D, labels, 1).value
    assert gsr(D, labels) == gsr_details(D, labels).value
    assert csr(D, labels) == csr_details(D, labels).value
    assert cs(D, labels) == cs_details(D, labels).value
    assert cscf(D, labels) == cscf_details(D, labels).value
    details = silhouette_details(D, labels)
    assert silhouette(D, labels) == details.value
    assert details.per_clip is not None and details.per_clip.shape == (len(labels),)


def test_one_check_ks_for_neighbour_counts_and_cut_offs() -> None:
    from audiobench.metrics.validation import check_ks

    assert check_ks([5, 1, 5]) == (5, 1, 5)
    assert check_ks(np.array([1, 3]), 4) == (1, 3)
    with pytest.raises(ValueError, match="ks must not be empty"):
        check_ks([])
    with pytest.raises(ValueError, match=r"k_values must not be empty.*non-empty"):
        check_ks([], name="k_values")
    for bad in ([0], [True], [1.0]):
        with pytest.raises(ValueError, match="k must be a positive integer"):
            check_ks(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="sequence of positive integers"):
        check_ks(5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="P@4 needs more than 4 labelled clips, got 4"):
        check_ks([1, 4], 4)


def test_describe_clips_names_any_ids() -> None:
    from audiobench.metrics.validation import describe_clips

    assert describe_clips(["a", 3, np.int64(4), 1.5, ("x", 1)]) == "'a', 3, 4, '1.5', \"('x', 1)\""
    assert describe_clips(list(range(12))) == "0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 2 more"
