"""Stability against the values MSEB's own code gave on the same outputs.

Pinned from ``StabilityTask.compute_scores`` (``mseb/tasks/stability.py``) over
``compute_continuous_edit_distance``, ``compute_dynamic_time_warping_distance``,
``compute_lp_norm`` and ``compute_unit_edit_distance`` (``mseb/metrics.py``, MSEB commit
``a88af49``; jiwer 4.0.0), run outside this repository on :mod:`tests.parity.mseb_inputs`,
with ``numba.njit`` replaced by the plain Python function (the same float64 additions and
minima, in the same order). Float32 outputs stay float32 in both, so every key is compared
exactly, for float32 and float64 outputs alike.
"""

from __future__ import annotations

import numpy as np
import pytest

from audiobench.metrics.stability import (
    continuous_edit_distance,
    continuous_stability,
    discrete_stability,
    padded_spectral_distance,
)
from tests.parity import mseb_inputs

MSEB_CONTINUOUS_FLOAT32 = {
    "Corpus_Mean_CED": 0.3361096592555786,
    "Mean_Local_IS_CED": 0.3949007935703746,
    "Mean_Local_IS_CED_std": 0.22995552944546782,
    "Corpus_Mean_DTW": 1.0415650331768496,
    "Mean_Local_IS_DTW": 1.1932817407236211,
    "Mean_Local_IS_DTW_std": 0.5169711762164712,
    "Corpus_Mean_L2": 0.3409767226926212,
    "Mean_Local_IS_L2": 0.40142102206510205,
    "Mean_Local_IS_L2_std": 0.16178859300551435,
}
MSEB_CONTINUOUS_FLOAT64 = {
    "Corpus_Mean_CED": 0.336109675202954,
    "Mean_Local_IS_CED": 0.3949008115132748,
    "Mean_Local_IS_CED_std": 0.22995553362466348,
    "Corpus_Mean_DTW": 1.0415650760136106,
    "Mean_Local_IS_DTW": 1.1932818333859987,
    "Mean_Local_IS_DTW_std": 0.516971274348813,
    "Corpus_Mean_L2": 0.34097672434666343,
    "Mean_Local_IS_L2": 0.4014210221811049,
    "Mean_Local_IS_L2_std": 0.1617885929763094,
}
#: Integer token arrays, one utterance of texts, and one empty reference (left out).
MSEB_DISCRETE = {
    "Corpus_Mean_UED": 0.13023255813953488,
    "Mean_Local_IS_UED": 0.1850340136054422,
    "Mean_Local_IS_UED_std": 0.13141939245339204,
}


def test_continuous_float32_equals_mseb_exactly() -> None:
    references, variants = mseb_inputs.stability_continuous()
    assert references[0].dtype == np.float32
    assert continuous_stability(references, variants).to_dict() == MSEB_CONTINUOUS_FLOAT32


def test_continuous_float64_equals_mseb_exactly() -> None:
    references, variants = mseb_inputs.stability_continuous()
    refs = [r.astype(np.float64) for r in references]
    outs = [[v.astype(np.float64) for v in vs] for vs in variants]
    assert continuous_stability(refs, outs).to_dict() == MSEB_CONTINUOUS_FLOAT64


def test_discrete_equals_mseb_exactly() -> None:
    assert discrete_stability(*mseb_inputs.stability_discrete()).to_dict() == MSEB_DISCRETE


def test_l2_is_the_matrix_two_norm_and_ced_a_hand_case_as_mseb() -> None:
    """MSEB: ``compute_lp_norm`` → raw 0.5 (the Frobenius norm would be √2/2);
    ``compute_continuous_edit_distance`` → raw 2.0 (one deletion)."""
    assert (
        padded_spectral_distance(
            np.array([[1.0, 0.0], [0.0, 0.0]]), np.array([[0.5, 0.0], [0.0, 0.5], [0.0, 0.0]])
        )
        == 0.5
    )
    ced = continuous_edit_distance(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[0.0, 1.0]]))
    assert ced == 2.0


#: MSEB's ``apply_specaugment_to_waveform`` (``mseb/utils.py``, real librosa 0.11.0) on
#: ``0.1 · default_rng(0).standard_normal(23456)`` as float32, variant i seeded by
#: ``get_deterministic_seed("utt", i)``: the energy Σy² and the samples at ``_SAMPLES``.
_SAMPLES = [0, 1, 511, 512, 4097, 11728, 20000, 23455]
MSEB_SPEC_AUGMENT = [
    (
        196.54697690042195,
        [-0.024615474045276642, 0.004424452781677246, 0.02818102389574051,
         -0.019182397052645683, 0.13392768800258636, 0.007367821875959635,
         0.030440138652920723, 0.034730009734630585],
    ),
    (
        195.58112091259812,
        [0.013060311786830425, 0.0012487770291045308, 0.029574833810329437,
         -0.07069604098796844, 0.08625394850969315, -0.05997307598590851,
         -0.018918512389063835, 0.07694660872220993],
    ),
    (
        194.81997147453222,
        [0.018306219950318336, -0.005954868160188198, -0.012033708393573761,
         -0.04639820381999016, 0.07487497478723526, -0.06992504000663757,
         0.06059389188885689, 0.07503899186849594],
    ),
]  # fmt: skip


def test_spec_augment_variants_equal_mseb_within_float32_rounding() -> None:
    """Same seeds, same masks, same inversion; the FFTs differ (NumPy's here, librosa's there)
    in float32's last bits: over 25 variants of 5 lengths the largest sample difference was
    8.9e-8 (3 ulp at the signal's peak), so samples are compared to 2e-7 and energies to 1e-6
    relative. A different mask would move both by orders of magnitude more."""
    from audiobench.families.spec_augment import SpecAugmentConfig, spec_augment, variant_seed

    x = (0.1 * np.random.default_rng(0).standard_normal(23456)).astype(np.float32)
    for i, (energy, samples) in enumerate(MSEB_SPEC_AUGMENT):
        y = spec_augment(x, SpecAugmentConfig(), np.random.default_rng(variant_seed("utt", i)))
        assert y.dtype == np.float32 and y.shape == x.shape
        assert float(np.sum(y.astype(np.float64) ** 2)) == pytest.approx(energy, rel=1e-6)
        np.testing.assert_allclose(y[_SAMPLES], samples, rtol=0, atol=2e-7)
