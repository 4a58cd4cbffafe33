"""Tests for sklearn_ltr._objectives.lambdarank (LambdaMART gradients)."""

import math

import numba
import numpy as np
import pytest
from _threads import assert_ran_in_parallel, needs_two_threads, parallel_kernels_only
from scipy.special import expit

from sklearn_ltr._objectives import OBJECTIVES, BaseObjective, LambdaRankObjective
from sklearn_ltr._objectives._lambda_pairs import _pairs_of_lowest_gain_rank, _pairs_of_rank
from sklearn_ltr._objectives.lambdarank import _sort_ranks, lambdarank_scratch
from sklearn_ltr._utils.threads import numba_threads


def _reference_one_query(y, s, k, sigma, normalize, w=None):
    """LightGBM's LambdarankNDCG per-query loop, written plainly in Python."""
    n = len(y)
    grad = np.zeros(n)
    hess = np.zeros(n)
    if n == 0:
        return grad, hess
    gain = 2.0 ** np.asarray(y, dtype=float) - 1.0
    ideal = np.sort(gain)[::-1][: min(k, n)]
    max_dcg = sum(g / math.log2(2 + r) for r, g in enumerate(ideal))
    inv = 1.0 / max_dcg if max_dcg > 0 else 0.0
    order = np.argsort(-s, kind="stable")
    divide = normalize and s[order[0]] != s[order[-1]]
    total = 0.0
    for i in range(min(n - 1, k)):
        for j in range(i + 1, n):
            a, b = order[i], order[j]
            if y[a] == y[b]:
                continue
            hi, lo, r_hi, r_lo = (a, b, i, j) if y[a] > y[b] else (b, a, j, i)
            delta = abs(gain[hi] - gain[lo]) * inv
            delta *= abs(1 / math.log2(2 + r_hi) - 1 / math.log2(2 + r_lo))
            if divide:
                delta /= 0.01 + abs(s[hi] - s[lo])
            p = expit(-sigma * (s[hi] - s[lo]))
            grad[hi] -= sigma * delta * p
            grad[lo] += sigma * delta * p
            hess[hi] += sigma**2 * delta * p * (1 - p)
            hess[lo] += sigma**2 * delta * p * (1 - p)
            total += 2 * sigma * delta * p
    if normalize and total > 0:
        factor = math.log2(1 + total) / total
        grad *= factor
        hess *= factor
    if w is not None:
        grad *= w
        hess *= w
    return grad, hess


def _reference(y, s, offsets, k, sigma, normalize, w=None):
    grad = np.zeros(len(y))
    hess = np.zeros(len(y))
    for q in range(len(offsets) - 1):
        sl = slice(offsets[q], offsets[q + 1])
        grad[sl], hess[sl] = _reference_one_query(
            y[sl], s[sl], k, sigma, normalize, None if w is None else w[sl]
        )
    return grad, hess


def _compute(y, s, offsets, w=None, obj=None, **params):
    if obj is None:
        obj = LambdaRankObjective(y, offsets, w, **params)
    grad = np.full(len(y), np.nan, dtype=np.float32)
    hess = np.full(len(y), np.nan, dtype=np.float32)
    obj.gradient_hessian(np.asarray(s, dtype=np.float64), grad, hess)
    return grad, hess


def _random_data(seed, n_queries=30, max_size=20, max_label=3, decimals=1):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_size + 1, n_queries)
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    y = rng.integers(0, max_label + 1, offsets[-1]).astype(np.float64)
    # Rounding creates ties in scores; few label values create ties in labels.
    s = np.round(rng.normal(size=offsets[-1]), decimals)
    w = rng.uniform(0.2, 3.0, offsets[-1])
    return y, s, offsets, w


def _assert_close(actual, expected):
    # float32 outputs: compare relative to the scale of the query data.
    scale = max(np.abs(expected).max(), 1e-30)
    np.testing.assert_allclose(actual, expected, rtol=2e-6, atol=2e-7 * scale)


@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.parametrize("k", [1, 3, 30])
@pytest.mark.parametrize("sigma", [1.0, 2.5])
@pytest.mark.parametrize("weighted", [False, True])
def test_matches_pairwise_reference(normalize, k, sigma, weighted):
    y, s, offsets, w = _random_data(seed=k + 10 * int(normalize))
    w = w if weighted else None
    grad, hess = _compute(
        y, s, offsets, w, sigma=sigma, truncation_level=k, normalize_lambdas=normalize
    )
    ref_grad, ref_hess = _reference(y, s, offsets, k, sigma, normalize, w)
    _assert_close(grad, ref_grad)
    _assert_close(hess, ref_hess)
    assert np.any(grad != 0) and np.all(hess >= 0)


def test_hand_computed_two_documents():
    # Tied scores keep row order: the relevant row 1 sits at rank 1.
    y = np.array([0.0, 1.0])
    grad, hess = _compute(y, [0.0, 0.0], np.array([0, 2]))
    delta = 1.0 - 1.0 / math.log2(3.0)  # |1 - 0| * |D(0) - D(1)| / maxDCG(=1)
    lam = 0.5 * delta  # p = 1 / (1 + exp(0)); scores tied: no gap division
    factor = math.log2(1.0 + 2 * lam) / (2 * lam)
    np.testing.assert_allclose(grad, [lam * factor, -lam * factor], rtol=1e-6)
    np.testing.assert_allclose(hess, [0.25 * delta * factor] * 2, rtol=1e-6)


def test_sign_convention_pushes_relevant_up():
    y = np.array([0.0, 2.0, 1.0, 0.0])
    grad, _ = _compute(y, [0.3, -0.2, 0.1, 0.0], np.array([0, 4]))
    # Gradients are d(loss)/d(score): the booster steps against them.
    assert grad[1] < 0 and grad[0] > 0 and grad[3] > 0


@pytest.mark.parametrize("k", [2, 30])
def test_finite_difference_of_weighted_ranknet(k):
    """With normalisation off and |delta NDCG| held at its value for the
    current ranking, lambdas are the gradient of the weighted RankNet loss and
    hessians its diagonal second derivative."""
    rng = np.random.default_rng(7)
    n, sigma = 12, 1.7
    y = rng.integers(0, 4, n).astype(float)
    s = rng.normal(size=n)  # distinct scores: small steps keep the ranking
    gain = 2.0**y - 1
    order = np.argsort(-s, kind="stable")
    rank = np.empty(n, dtype=int)
    rank[order] = np.arange(n)
    ideal = np.sort(gain)[::-1][:k]
    max_dcg = np.sum(ideal / np.log2(np.arange(len(ideal)) + 2))
    pairs = []
    for a in range(n):
        for b in range(n):
            if y[a] > y[b] and min(rank[a], rank[b]) < min(n - 1, k):
                d = abs(1 / np.log2(2 + rank[a]) - 1 / np.log2(2 + rank[b]))
                pairs.append((a, b, (gain[a] - gain[b]) * d / max_dcg))

    def loss(x):
        return sum(
            delta * np.logaddexp(0.0, -sigma * (x[a] - x[b])) for a, b, delta in pairs
        )

    grad, hess = _compute(
        y, s, np.array([0, n]), sigma=sigma, truncation_level=k, normalize_lambdas=False
    )
    eps = 1e-4
    num_grad = np.empty(n)
    num_hess = np.empty(n)
    for r in range(n):
        e = np.zeros(n)
        e[r] = eps
        num_grad[r] = (loss(s + e) - loss(s - e)) / (2 * eps)
        num_hess[r] = (loss(s + e) - 2 * loss(s) + loss(s - e)) / eps**2
    np.testing.assert_allclose(grad, num_grad, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(hess, num_hess, rtol=1e-4, atol=1e-6)


def test_degenerate_queries_give_zeros():
    # One document; one distinct label (non-zero); all labels zero; then a
    # normal query so that something is computed.
    y = np.array([3.0, 2.0, 2.0, 2.0, 0.0, 0.0, 1.0, 0.0])
    offsets = np.array([0, 1, 4, 6, 8])
    s = np.array([0.5, 0.1, -0.4, 0.9, 0.2, 0.3, 0.0, 1.0])
    grad, hess = _compute(y, s, offsets)
    assert np.all(grad[:6] == 0) and np.all(hess[:6] == 0)
    assert np.all(grad[6:] != 0)


def test_queries_are_independent():
    y, s, offsets, _ = _random_data(seed=3, n_queries=4)
    grad, hess = _compute(y, s, offsets)
    first = slice(offsets[0], offsets[1])
    others = slice(offsets[1], None)
    y2, s2 = y.copy(), s.copy()
    y2[others] = (y2[others] + 1) % 4
    s2[others] = s2[others][::-1] * 3
    grad2, hess2 = _compute(y2, s2, offsets)
    np.testing.assert_array_equal(grad2[first], grad[first])
    np.testing.assert_array_equal(hess2[first], hess[first])
    assert not np.array_equal(grad2[others], grad[others])


@pytest.mark.parametrize("normalize", [True, False])
def test_invariant_to_shifting_a_query(normalize):
    y, s, offsets, _ = _random_data(seed=5, decimals=3)
    grad, hess = _compute(y, s, offsets, normalize_lambdas=normalize)
    shifted = s.copy()
    shifted[offsets[2] : offsets[3]] += 4.0
    grad2, hess2 = _compute(y, shifted, offsets, normalize_lambdas=normalize)
    np.testing.assert_allclose(grad2, grad, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(hess2, hess, rtol=1e-5, atol=1e-8)


def test_gradients_sum_to_zero_per_query():
    y, s, offsets, _ = _random_data(seed=11)
    grad, _ = _compute(y, s, offsets)
    for q in range(len(offsets) - 1):
        g = grad[offsets[q] : offsets[q + 1]].astype(np.float64)
        assert abs(g.sum()) <= 1e-6 * max(np.abs(g).sum(), 1e-30)


def test_sample_weights_scale_rows():
    y, s, offsets, w = _random_data(seed=13)
    grad, hess = _compute(y, s, offsets)
    grad_w, hess_w = _compute(y, s, offsets, w)
    np.testing.assert_allclose(grad_w, grad * w, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(hess_w, hess * w, rtol=1e-6, atol=1e-9)


@needs_two_threads
def test_same_result_on_one_and_two_threads():
    y, s, offsets, w = _random_data(seed=17, n_queries=300, max_size=60)
    with numba_threads(1):  # the serial twin
        grad1, hess1 = _compute(y, s, offsets, w)
    # The parallel kernel on two threads (about 9,000 rows: above the kernel's threshold, forced anyway).
    with numba_threads(2), parallel_kernels_only() as picked:
        grad2, hess2 = _compute(y, s, offsets, w)
    assert_ran_in_parallel(picked, "_lambdarank_gradient_hessian")
    np.testing.assert_array_equal(grad1, grad2)
    np.testing.assert_array_equal(hess1, hess2)


def test_previous_ranking_does_not_change_results():
    # The objective starts each sort from the previous call's ranking; the
    # outcome must be the same as from a fresh objective.
    y, s, offsets, _ = _random_data(seed=19, max_size=40)
    rng = np.random.default_rng(0)
    obj = LambdaRankObjective(y, offsets)
    for scale in (1.0, 0.01, 10.0):
        _compute(y, s, offsets, obj=obj)
        s = np.round(s + scale * rng.normal(size=s.shape), 2)
        grad, hess = _compute(y, s, offsets, obj=obj)
        fresh_grad, fresh_hess = _compute(y, s, offsets)
        np.testing.assert_array_equal(grad, fresh_grad)
        np.testing.assert_array_equal(hess, fresh_hess)


@pytest.mark.parametrize("n", [0, 1, 2, 7, 64, 500])
def test_sort_ranks_is_the_stable_descending_argsort(n):
    rng = np.random.default_rng(n)
    scores = np.round(rng.normal(size=n), 1)  # ties
    for start in (np.arange(n), rng.permutation(n), np.arange(n)[::-1]):
        order = np.ascontiguousarray(start, dtype=np.int32)
        sorted_scores = np.empty(n)
        _sort_ranks(scores, order, sorted_scores)
        expected = np.argsort(-scores, kind="stable")
        np.testing.assert_array_equal(order, expected)
        np.testing.assert_array_equal(sorted_scores, scores[expected])


@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.parametrize("lowest_gain", [0.0, 1.0])
def test_lowest_gain_ranks_give_the_bits_of_every_pair(normalize, lowest_gain):
    # A rank with its query's lowest gain computes only its pairs with
    # higher gains and must leave every float64 sum as the vectorised loop
    # over all pairs does, to the bit (the float32 gradients would hide a
    # difference in the last bits).
    rng = np.random.default_rng(31)
    n_checked = 0
    for n in (2, 3, 5, 9, 17, 40, 121):
        for share_higher in (0.05, 0.3, 0.7):
            gains = np.where(rng.random(n) < share_higher, rng.choice([1.0, 3.0, 7.0], n), 0.0)
            gains = gains + lowest_gain
            scores = np.sort(np.round(rng.normal(scale=3.0, size=n), 1))[::-1].copy()
            sigma = 1.3
            x = sigma * (scores - scores[0])
            e, e_inv = np.exp(x), np.exp(-x)
            discounts = 1.0 / np.log2(2.0 + np.arange(n))
            gap_eps, gap_scale = (0.01, 1.0) if normalize else (1.0, 0.0)
            lowest = gains.min()
            higher = np.flatnonzero(gains > lowest)
            for i in np.flatnonzero(gains[:-1] == lowest):
                lam = rng.normal(size=n)
                hess = rng.random(n)
                lam_all, hess_all = lam.copy(), hess.copy()
                abs_all = _pairs_of_rank(
                    i, scores, gains, e, e_inv, e[i], e_inv[i], discounts, 0.2, sigma,
                    gap_eps, gap_scale, lam_all, hess_all, np.empty(n), np.empty(n))
                abs_few = _pairs_of_lowest_gain_rank(
                    i, scores, gains, e, e_inv[i], discounts, 0.2, sigma, gap_eps, gap_scale,
                    higher[higher > i], lam, hess)
                assert np.float64(abs_few).view(np.int64) == np.float64(abs_all).view(np.int64)
                np.testing.assert_array_equal(lam.view(np.int64), lam_all.view(np.int64))
                np.testing.assert_array_equal(hess.view(np.int64), hess_all.view(np.int64))
                n_checked += np.count_nonzero(higher > i) >= 8
    assert n_checked > 20  # ranks with several pairs in each partial sum


def test_widely_spread_scores():
    # Scores spanning more than exp's range take the per-rank fallback path.
    y = np.array([0.0, 2.0, 1.0, 0.0, 1.0, 3.0])
    s = np.array([900.0, -400.0, 0.5, 0.0, -1.0, 300.0])
    offsets = np.array([0, 6])
    for normalize in (True, False):
        grad, hess = _compute(y, s, offsets, sigma=1.0, normalize_lambdas=normalize)
        ref_grad, ref_hess = _reference(y, s, offsets, 30, 1.0, normalize)
        assert np.all(np.isfinite(grad)) and np.all(np.isfinite(hess))
        _assert_close(grad, ref_grad)
        _assert_close(hess, ref_hess)


def test_matches_lightgbm_leaf_values():
    """One LightGBM lambdarank tree with Newton leaves -sum(g)/sum(h) (no
    regularisation, learning rate 1) must agree with our per-leaf sums.
    LightGBM reads the sigmoid from a table, hence the loose tolerance."""
    lgb = pytest.importorskip("lightgbm", reason="LightGBM is the reference")
    rng = np.random.default_rng(23)
    n_queries, size = 60, 25
    n = n_queries * size
    X = rng.normal(size=(n, 3))
    y = rng.integers(0, 4, n).astype(float)
    init = rng.normal(size=n)  # non-constant starting scores
    w = rng.uniform(0.5, 2.0, n)
    offsets = np.arange(0, n + 1, size, dtype=np.int64)
    for k, norm, weights in [(30, True, None), (5, False, w), (10, True, w)]:
        params = dict(
            objective="lambdarank", lambdarank_truncation_level=k,
            lambdarank_norm=norm, sigmoid=1.3, num_leaves=6, learning_rate=1.0,
            min_data_in_leaf=1, min_sum_hessian_in_leaf=0.0, lambda_l2=0.0,
            min_data_in_bin=1, verbose=-1, num_threads=1, deterministic=True,
        )
        data = lgb.Dataset(
            X, y, group=[size] * n_queries, init_score=init, weight=weights
        )
        booster = lgb.train(params, data, num_boost_round=1)
        leaf = booster.predict(X, pred_leaf=True).ravel()
        value = booster.predict(X, raw_score=True)
        grad, hess = _compute(
            y, init, offsets, weights, sigma=1.3, truncation_level=k,
            normalize_lambdas=norm,
        )
        for leaf_id in np.unique(leaf):
            rows = leaf == leaf_id
            ours = -grad[rows].sum(dtype=np.float64) / hess[rows].sum(dtype=np.float64)
            np.testing.assert_allclose(value[rows], ours, rtol=2e-3, atol=1e-6)
        assert len(np.unique(leaf)) > 2


def test_loss_is_one_minus_mean_ndcg():
    y = np.array([0.0, 2.0, 1.0, 1.0, 0.0, 0.0, 0.0])
    offsets = np.array([0, 3, 5, 7])
    obj = LambdaRankObjective(y, offsets, truncation_level=2)
    s = np.array([0.3, 0.1, 0.2, 0.0, 1.0, 0.5, 0.2])
    # Query 0 ranks labels 0, 1 in its top 2: DCG = 1/log2(3); ideal 3 + 1/log2(3).
    ndcg0 = (1 / np.log2(3)) / (3 + 1 / np.log2(3))
    ndcg1 = (1 / np.log2(3)) / 1.0  # labels 1, 0 ranked 0 then 1
    ndcg2 = 1.0  # no relevant document
    assert obj.loss(s) == pytest.approx(1 - (ndcg0 + ndcg1 + ndcg2) / 3)
    ideal = np.array([0.0, 2.0, 1.0, 1.0, 0.0, 0.0, 0.0]) * 10
    assert obj.loss(ideal) == pytest.approx(0.0)
    weighted = LambdaRankObjective(y, offsets, np.array([1, 1, 1, 3, 3, 0, 0.0]),
                                   truncation_level=2)
    # Query weights are mean row weights: 1, 3, 0.
    assert weighted.loss(s) == pytest.approx(1 - (ndcg0 + 3 * ndcg1) / 4)


def test_interface_and_registry():
    assert OBJECTIVES["lambdarank"] is LambdaRankObjective
    assert issubclass(LambdaRankObjective, BaseObjective)
    obj = LambdaRankObjective(np.array([1.0, 0.0]), np.array([0, 2]))
    assert obj.name == "lambdarank"
    assert obj.init_score() == 0.0
    assert obj.prepare_iteration(np.random.default_rng(0)) is None


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(y=[1.0, -1.0]), "y must be non-negative"),
        (dict(y=[1.0, np.nan]), "y must not contain NaN"),
        (dict(offsets=[0, 1]), "offsets must start at 0 and end"),
        (dict(offsets=[0, 2, 1, 2]), "offsets must be non-decreasing"),
        (dict(offsets=[0.0, 2.0]), "offsets must hold integers"),
        (dict(sample_weight=[1.0]), "sample_weight must have shape"),
        (dict(sample_weight=[1.0, -2.0]), "sample_weight must be finite"),
        (dict(sigma=0.0), "sigma must be a positive"),
        (dict(truncation_level=0), "truncation_level must be >= 1"),
        (dict(truncation_level=2.5), "truncation_level must be an integer"),
        (dict(normalize_lambdas="yes"), "normalize_lambdas must be a bool"),
        (dict(sigmoid=1.0), "Unknown parameters"),
        (dict(y=[2000.0, 0.0]), "sums of the gains 2\\*\\*y - 1 overflow"),
    ],
)
def test_invalid_input(kwargs, match):
    args = dict(y=[1.0, 0.0], offsets=[0, 2])
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        LambdaRankObjective(**args)


def test_invalid_buffers():
    obj = LambdaRankObjective(np.array([1.0, 0.0]), np.array([0, 2]))
    good = np.zeros(2, dtype=np.float32)
    with pytest.raises(ValueError, match="grad_out must be a float32"):
        obj.gradient_hessian(np.zeros(2), np.zeros(2), good)
    with pytest.raises(ValueError, match="raw_scores must be a float64"):
        obj.gradient_hessian(np.zeros(3), good, good.copy())


@needs_two_threads
def test_work_space_too_small_for_the_threads_is_made_again():
    # As in an objective pickled by a process that may start fewer threads:
    # the kernel indexes the work space by thread id, so it must be remade.
    y, s, offsets, w = _random_data(seed=23, n_queries=300, max_size=60)
    expected = _compute(y, s, offsets, w)
    obj = LambdaRankObjective(y, offsets, w)
    obj._scratch = lambdarank_scratch(offsets)[:1]
    with numba_threads(2), parallel_kernels_only() as picked:
        got = _compute(y, s, offsets, obj=obj)
    assert_ran_in_parallel(picked, "_lambdarank_gradient_hessian")
    assert obj._scratch.shape[0] == numba.config.NUMBA_NUM_THREADS >= 2
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])
