"""The permutation engine and the calibration statistics built on it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from audiobench.metrics.labels import encode_labels, filter_classes
from audiobench.vocsim import (
    gsr,
    gsr_details,
    kernels,
    precision_at_k,
    relabelling,
    zero_shot_similarity,
)
from audiobench.vocsim.calibration import (
    bootstrap_margin,
    bootstrap_means,
    label_permutation,
    summarize_null,
)
from audiobench.vocsim.relabelling import RelabellingEvaluator
from audiobench.vocsim.separation import mean_separation
from tests.metrics.data import clustered_embeddings, random_case


def _engine(D: np.ndarray, labels: list[object], ks=(1, 5), **kwargs):
    """An engine over the labelled clips, set up as the grid sets it up."""
    encoded = encode_labels(labels, len(labels))
    labelled = encoded.labelled
    kept = filter_classes(encoded, 2)
    positions = np.searchsorted(labelled, kept.members)
    matrix = torch.from_numpy(np.ascontiguousarray(D[np.ix_(labelled, labelled)], dtype=np.float32))
    engine = RelabellingEvaluator(
        matrix,
        precision_codes=torch.from_numpy(encoded.codes[labelled]),
        ks=ks,
        gsr_members=None
        if positions.shape[0] == labelled.shape[0]
        else torch.from_numpy(positions),
        gsr_codes=torch.from_numpy(kept.codes),
        gsr_sizes=torch.from_numpy(kept.class_sizes),
        **kwargs,
    )
    return engine, matrix.numpy(), encoded.codes[labelled], positions


def _cases():
    rng = np.random.default_rng(0)
    many = random_case(rng, 90, 25)
    with_gaps = random_case(rng, 70, 8, unlabelled=0.2)
    with_gaps[1][3] = "singleton"
    tied = random_case(rng, 60, 6, ties=True)
    few = random_case(rng, 64, 2)  # two big classes: matrix-product mode
    # Near-duplicates: distances far below their rows' largest leave fixed-point remainders.
    near = random_case(rng, 64, 3)
    for a, b, distance in [(0, 1, 3.1e-5), (2, 3, 1.23456e-6), (4, 9, 7e-9), (5, 6, 0.0)]:
        near[0][a, b] = near[0][b, a] = distance
    return {"many": many, "with_gaps": with_gaps, "tied": tied, "few": few, "near": near}


def _fake_rates(monkeypatch: pytest.MonkeyPatch, **rates: float | None) -> None:
    """Measured rates as given (multiply-adds per second), a pair at 10 ns."""
    values = {"float64": 1e10, "float32": 3e10, "int8": 1e9, **rates}
    monkeypatch.setattr(
        kernels, "measured_rates", lambda device: kernels.KernelRates(str(device), 2, **values)
    )
    monkeypatch.setattr(kernels, "pair_seconds", lambda D: 1e-8)


@pytest.mark.parametrize(
    ("rates", "many", "few"),
    [
        # int8 dot products: the integer product beats float64 by far.
        ({"int8": 1e11}, "pairs", "int8"),
        # AVX2 only: int8 is slow, float32 (nulls) the fastest product.
        ({"int8": 1e9}, "pairs", "float32"),
        # float32 no faster than float64: the exact float64 product.
        ({"int8": 1e9, "float32": 1e10}, "pairs", "float64"),
    ],
)
def test_measured_rates_pick_the_avg_id_kernel(
    monkeypatch: pytest.MonkeyPatch, rates: dict[str, float], many: str, few: str
) -> None:
    _fake_rates(monkeypatch, **rates)
    cases = _cases()
    # Tiny cases keep exact nulls (below); here the float32 kernel is judged by speed alone.
    monkeypatch.setattr(relabelling, "FLOAT32_MIN_SECONDS", 0.0)
    assert _engine(*cases["many"])[0].null_kernel == many
    engine = _engine(*cases["few"])[0]
    assert engine.null_kernel == few
    # The observed labelling always takes an exact kernel (here the float64 product: two
    # classes of 32 hold 992 pairs at 10 ns, 5 µs on 2 workers; the product 0.8 µs).
    assert engine.exact_kernel == (few if few != "float32" else "float64")


def test_float32_nulls_only_where_they_pay(monkeypatch: pytest.MonkeyPatch) -> None:
    D, labels = _cases()["few"]
    # float32 3x faster, but an exact labelling costs microseconds: exact nulls.
    _fake_rates(monkeypatch, int8=1e9)
    assert _engine(D, labels)[0].null_kernel == "float64"
    monkeypatch.setattr(relabelling, "FLOAT32_MIN_SECONDS", 0.0)
    assert _engine(D, labels)[0].null_kernel == "float32"
    # Less than FLOAT32_GAIN faster: exact nulls.
    _fake_rates(monkeypatch, int8=1e9, float32=1.4e10)
    assert _engine(D, labels)[0].null_kernel == "float64"


def test_a_forced_kernel_must_be_offered(monkeypatch: pytest.MonkeyPatch) -> None:
    D, labels = _cases()["few"]
    monkeypatch.setenv("AUDIOBENCH_SCORING_KERNEL", "float32")
    assert _engine(D, labels)[0].null_kernel == "float32"
    monkeypatch.setenv("AUDIOBENCH_SCORING_KERNEL", "fast")
    with pytest.raises(ValueError, match="'fast' is not a scoring kernel"):
        _engine(D, labels)
    monkeypatch.delenv("AUDIOBENCH_SCORING_KERNEL")
    # float32 sums are offered for a float32 matrix only.
    with pytest.raises(ValueError, match=r"'float32' is not offered for a torch\.float64 matrix"):
        RelabellingEvaluator(
            torch.from_numpy(D),
            gsr_codes=torch.tensor([0, 1] * 32),
            gsr_sizes=torch.tensor([32, 32]),
            kernel="float32",
        )


@pytest.mark.parametrize("case", ["few", "near", "with_gaps"])
def test_float32_nulls_stay_within_their_bound(case: str) -> None:
    """The float32 null kernel against the exact one on the same labellings: the observed
    values bit-identical, every null GSR within the stated bound (and far inside it)."""
    D, labels = _cases()[case]
    exact, _, codes, positions = _engine(D, labels, kernel="int8")
    rounded = _engine(D, labels, kernel="float32")[0]
    assert exact.null_bound() == 0.0
    bound = rounded.null_bound()
    assert bound == kernels.float32_sum_bound(int(rounded.gsr_sizes.max())) > 0
    identity = torch.arange(positions.shape[0])
    for a, b in zip(exact.gsr_scores(identity), rounded.gsr_scores(identity), strict=True):
        assert torch.equal(a, b)

    def permutations(index: int):
        return label_permutation(codes.shape[0], 5, 0, index), label_permutation(
            positions.shape[0], 5, 1, index
        )

    want = exact.null_values(40, permutations)
    got = rounded.null_values(40, permutations)
    for k in (1, 5):
        assert np.array_equal(want[f"p@{k}"], got[f"p@{k}"])
    difference = np.abs(want["gsr"] - got["gsr"]).max()
    assert difference <= bound
    assert difference <= 1e-6  # what float32 sums of ~30 terms give in practice


def test_float32_sum_bound_holds_for_adversarial_sums() -> None:
    # Many tiny terms after a large one: each addition rounds; the bound still holds.
    m = 4000
    values = np.full(m, 2.0**-24, dtype=np.float32)
    values[0] = 1.0
    total = float(np.sum(values.astype(np.float64)))
    running = np.float32(0.0)
    for v in values:  # sequential float32 summation: the worst order for this data
        running = np.float32(running + v)
    assert abs(float(running) - total) <= kernels.float32_sum_bound(m) * total
    assert kernels.float32_sum_bound(1) == 0.0
    assert kernels.float32_sum_bound(3) == pytest.approx(2 * 2.0**-24, rel=1e-6)


@pytest.mark.parametrize("case", ["many", "with_gaps", "tied", "few", "near"])
@pytest.mark.parametrize("list_length", [2, 32])
@pytest.mark.parametrize("mode", ["pairs", "int8", "float64", "float32"])
def test_fast_path_equals_recomputation(
    case: str, list_length: int, mode: str, small_blocks: None
) -> None:
    # Force each AvgID kernel regardless of the measured rates. The observed labelling is
    # exact with every one (a float32 null kernel leaves the observed one to an exact kernel).
    D, labels = _cases()[case]
    engine, matrix, codes, positions = _engine(D, labels, list_length=list_length, kernel=mode)
    assert engine.null_kernel == mode
    assert engine.uses_pairs == (mode == "pairs")
    if mode == "int8":
        # One class goes without a column: its sums are the rows' totals minus the others'.
        assert engine._n_columns == int(engine.gsr_sizes.shape[0]) - 1
    if mode == "int8" and case == "near":
        assert any(rows.remainder_values.numel() for rows in engine._operands)
    n_gsr = positions.shape[0]
    for index in range(4):
        # P@k under the permuted labels, exactly (integer hit counts).
        perm = label_permutation(codes.shape[0], 7, 0, index)
        hits = engine.precision_hits(torch.from_numpy(perm))
        for k in (1, 5):
            fast = int(hits[k].sum()) / (codes.shape[0] * k)
            assert fast == precision_at_k(matrix, codes[perm].tolist(), k)
        # GSR: shuffle the labels of the GSR clips only (excluded clips keep theirs).
        gsr_perm = label_permutation(n_gsr, 7, 1, index)
        scores, evaluated = engine.gsr_scores(torch.from_numpy(gsr_perm))
        raw, count = mean_separation(scores[None], evaluated[None])
        shuffled = codes.copy()
        shuffled[positions] = codes[positions][gsr_perm]
        scratch = gsr_details(matrix, shuffled.tolist())
        assert float((raw[0] + 1) / 2) == scratch.value
        assert int(count[0]) == scratch.n_evaluated


def test_short_lists_use_the_exact_fallback_and_agree() -> None:
    # Two classes of 30: with L = 2 the observed labelling resolves almost no clip from its
    # neighbour list (both neighbours share its class), so the exact fallback does the work.
    rng = np.random.default_rng(1)
    X, y = clustered_embeddings(rng, [30, 30, 5], dim=4, spread=0.05)
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    engine, matrix, codes, _ = _engine(D, y.tolist(), list_length=2)
    scores, evaluated = engine.gsr_scores(torch.arange(codes.shape[0]))
    raw, _ = mean_separation(scores[None], evaluated[None])
    assert float((raw[0] + 1) / 2) == pytest.approx(gsr(matrix, y.tolist()), abs=1e-12)


@pytest.mark.parametrize("mode", ["pairs", "products", "product passes"])
def test_null_values_match_one_by_one_evaluation(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUDIOBENCH_SCORING_KERNEL", "pairs" if mode == "pairs" else "int8")
    if mode == "product passes":
        # The digits are rebuilt for every pass over D; each pass covers several batches.
        monkeypatch.setattr(relabelling, "PRODUCT_OPERAND_BYTES", 0)
        monkeypatch.setattr(relabelling, "MAX_PRODUCT_BATCH", 4)
        monkeypatch.setattr(relabelling, "PRODUCT_PASS_BYTES", 70 * 8 * 11)
    D, labels = _cases()["with_gaps"]
    engine, _, codes, positions = _engine(D, labels)
    assert engine.uses_pairs == (mode == "pairs")
    if mode == "product passes":
        assert engine._product_pass() > engine._product_batch()

    def permutations(index: int):
        return label_permutation(codes.shape[0], 3, 0, index), label_permutation(
            positions.shape[0], 3, 1, index
        )

    advanced: list[int] = []
    nulls = engine.null_values(37, permutations, advanced.append)
    assert sum(advanced) == 37
    for index in (0, 17, 36):
        precision_perm, gsr_perm = permutations(index)
        hits = engine.precision_hits(torch.from_numpy(precision_perm))
        assert nulls["p@5"][index] == int(hits[5].sum()) / (codes.shape[0] * 5)
        scores, evaluated = engine.gsr_scores(torch.from_numpy(gsr_perm)[None])
        raw, _ = mean_separation(scores, evaluated)
        assert nulls["gsr"][index] == float((raw[0] + 1) / 2)


def _small_grid(X: np.ndarray, labels, **kwargs):
    options = {"distances": ("cosine",), "pca": (None,), "n_permutations": 199, "n_bootstrap": 50}
    options.update(kwargs)
    return zero_shot_similarity(X, labels, **options)


def test_random_embeddings_sit_in_the_null() -> None:
    # Embeddings unrelated to the labels: each observed value is one more draw from the null,
    # so lifts stay within the null's spread and p-values are spread over (0, 1].
    p_values = []
    for seed in range(8):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(240, 16))
        labels = rng.integers(0, 12, size=240)
        scores = _small_grid(X, labels).configs["raw/cosine"]
        for metric in ("p@1", "p@5", "gsr"):
            summary = scores[metric]
            assert abs(summary.lift) <= 2 * (summary.baseline_high - summary.baseline_low)
            assert summary.baseline_low <= summary.baseline_mean <= summary.baseline_high
            p_values.append(summary.p_value)
    assert min(p_values) > 0.005
    assert 0.3 < float(np.mean(p_values)) < 0.7


def test_separated_classes_reach_the_smallest_p_value() -> None:
    rng = np.random.default_rng(5)
    X, y = clustered_embeddings(rng, [12] * 8, dim=10, spread=0.01)
    report = _small_grid(X, y, distances=("cosine", "euclidean", "spearman"))
    for scores in report.configs.values():
        assert scores["p@1"].value == scores["p@5"].value == 1.0
        for metric in ("p@1", "p@5", "gsr"):
            assert scores[metric].p_value == pytest.approx(1 / 200)
            assert scores[metric].lift > 0.3


def test_permutations_are_reproducible() -> None:
    rng = np.random.default_rng(6)
    X, y = clustered_embeddings(rng, [6] * 10, dim=8, spread=1.0)
    first = _small_grid(X, y, seed=3).to_dict()
    assert first == _small_grid(X, y, seed=3).to_dict()
    other = _small_grid(X, y, seed=4).to_dict()
    assert (
        first["configs"]["raw/cosine"]["gsr"]["value"]
        == other["configs"]["raw/cosine"]["gsr"]["value"]
    )
    assert (
        first["configs"]["raw/cosine"]["gsr"]["baseline_mean"]
        != other["configs"]["raw/cosine"]["gsr"]["baseline_mean"]
    )
    # Permutation i does not depend on how many were drawn before it.
    assert np.array_equal(label_permutation(50, 3, 0, 9), label_permutation(50, 3, 0, 9))
    assert not np.array_equal(label_permutation(50, 3, 0, 9), label_permutation(50, 3, 0, 8))


def test_summarize_null() -> None:
    null = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    summary = summarize_null(null, 0.4)
    assert summary.baseline == pytest.approx(0.3)
    assert summary.lift == pytest.approx(0.1)
    assert summary.p_value == pytest.approx((1 + 2) / 6)  # 0.4 and 0.5 reach it
    assert (summary.low, summary.high) == pytest.approx(tuple(np.percentile(null, [2.5, 97.5])))
    assert summarize_null(null, 9.0).p_value == pytest.approx(1 / 6)


def test_bootstrap_margin() -> None:
    assert bootstrap_margin(np.full(40, 0.3), 100, 0) == 0.0
    rng = np.random.default_rng(0)
    values = rng.normal(size=2000)
    margin = bootstrap_margin(values, 300, (1, 2))
    # Close to the normal-theory half-width 1.96·sd/√n.
    assert margin == pytest.approx(1.96 * values.std() / np.sqrt(values.size), rel=0.15)
    assert margin == bootstrap_margin(values, 300, (1, 2))
    assert bootstrap_margin(values, 300, (1, 2), scale=0.5) == pytest.approx(margin / 2)
    assert bootstrap_means(values, 7, 0).shape == (7,)


def _reference_bootstrap_means(values: np.ndarray, n: int, seed: object) -> np.ndarray:
    """The plain loop the shared bootstrap replaced: one seeded resample at a time."""
    rng = np.random.default_rng(seed)  # type: ignore[arg-type]
    return np.array([values[rng.integers(0, values.size, values.size)].mean() for _ in range(n)])


@pytest.mark.parametrize("size", [2, 37, 5000])
def test_bootstrap_interval_reproduces_the_plain_resampling_loop(size: int) -> None:
    from audiobench.vocsim import calibration

    values = np.random.default_rng(size).normal(size=size)
    reference = _reference_bootstrap_means(values, 250, (4, 2))
    result = calibration.bootstrap_interval(values, 250, (4, 2))
    np.testing.assert_array_equal(result.means, reference)  # same draws, same means
    low, high = np.percentile(reference, [2.5, 97.5])
    assert (result.low, result.high) == pytest.approx((low, high), rel=1e-12, abs=1e-15)
    assert result.margin == pytest.approx((high - low) / 2, rel=1e-12, abs=1e-15)


def test_bootstrap_interval_does_not_depend_on_the_batch_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from audiobench.vocsim import calibration

    values = np.random.default_rng(3).random(300)
    whole = calibration.bootstrap_interval(values, 100, 7)
    monkeypatch.setattr(calibration, "BOOTSTRAP_BATCH_ELEMENTS", 700)  # batches of 2
    small = calibration.bootstrap_interval(values, 100, 7)
    np.testing.assert_array_equal(small.means, whole.means)
    assert (small.low, small.high) == (whole.low, whole.high)


def test_bootstrap_interval_edge_cases() -> None:
    from audiobench.vocsim.calibration import bootstrap_interval

    single = bootstrap_interval(np.array([0.25]), 10, 0)  # scipy refuses one value
    assert (single.low, single.high, single.margin) == (0.25, 0.25, 0.0)
    assert single.means.shape == (10,)
    empty = bootstrap_interval(np.array([]), 10, 0)
    assert np.isnan(empty.low) and np.isnan(empty.high) and np.isnan(bootstrap_margin([], 5, 0))
    with pytest.raises(ValueError, match="n_bootstrap"):
        bootstrap_interval(np.ones(3), 0, 0)


def test_shared_permutations_are_the_seeded_ones_and_respect_the_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from audiobench.vocsim import configuration_grid as grid

    monkeypatch.setattr(grid, "PERMUTATION_CACHE_BYTES", 3 * 50 * 8)
    draw = grid.SharedPermutations(5)
    for index in range(5):
        np.testing.assert_array_equal(draw(50, 1, index), label_permutation(50, 5, 1, index))
    assert draw(50, 1, 2) is draw(50, 1, 2)  # kept: the third fits the budget
    assert draw(50, 1, 4) is not draw(50, 1, 4)  # drawn again: past the budget


def test_neighbour_hit_totals_match_a_loop_and_the_per_query_hits() -> None:
    from audiobench.vocsim.precision import neighbour_hit_totals, neighbour_hits

    rng = np.random.default_rng(11)
    n, length = 30, 6
    neighbours = torch.from_numpy(np.stack([rng.permutation(n)[:length] for _ in range(n)]))
    codes = torch.from_numpy(rng.integers(0, 3, (4, n)))
    totals = neighbour_hit_totals(neighbours, codes, (1, 5))
    per_query = neighbour_hits(neighbours, codes, (1, 5))
    for k in (1, 5):
        expected = [
            sum(int(c[neighbours[i, r]] == c[i]) for i in range(n) for r in range(k)) for c in codes
        ]
        assert totals[k].tolist() == expected
        assert per_query[k].sum(dim=1).tolist() == expected
