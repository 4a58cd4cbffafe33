"""Tests for sklearn_ltr._objectives.xendcg (XE-NDCG gradients and Newton terms)."""

import contextlib

import numpy as np
import pytest
from _threads import assert_ran_in_parallel, needs_two_threads, parallel_kernels_only

from sklearn_ltr._objectives import OBJECTIVES, BaseObjective, XENDCGObjective
from sklearn_ltr._utils.threads import numba_threads


def _random_data(seed, n_queries=30, min_size=2, max_size=20, max_label=4):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(min_size, max_size + 1, n_queries)
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    y = rng.integers(0, max_label + 1, offsets[-1]).astype(np.float64)
    for q in range(n_queries):
        # Every query needs two distinct labels to contribute.
        y[offsets[q]] = 0.0
        y[offsets[q] + 1] = 1.0 + rng.integers(0, max_label)
    s = rng.normal(size=offsets[-1])
    w = rng.uniform(0.2, 3.0, offsets[-1])
    return y, s, offsets, w


def _compute(obj, s):
    grad = np.full(len(s), np.nan, dtype=np.float32)
    hess = np.full(len(s), np.nan, dtype=np.float32)
    obj.gradient_hessian(np.asarray(s, dtype=np.float64), grad, hess)
    return grad, hess


def _with_gamma(y, offsets, gamma, w=None, **params):
    """An objective whose gamma is set by hand instead of drawn."""
    obj = XENDCGObjective(y, offsets, w, **params)
    obj._gamma[:] = gamma
    return obj


def _softmax(s):
    e = np.exp(s - s.max())
    return e / e.sum()


def _phi(y, gamma):
    a = 2.0**y - gamma
    return a / a.sum()


def _cross_entropy(y, s, gamma):
    """The paper's loss for one query, plainly in numpy."""
    return -np.sum(_phi(y, gamma) * np.log(_softmax(s)))


def _neumann_direction(y, s, gamma, k):
    """sum_{m <= k} S^m D^-1 g with dense matrices (paper, section 4.4)."""
    rho = _softmax(s)
    g = rho - _phi(y, gamma)
    d = rho * (1 - rho)
    S = np.outer(1 / (1 - rho), rho)
    np.fill_diagonal(S, 0.0)
    u = g / d
    total = u.copy()
    for _ in range(k):
        u = S @ u
        total += u
    return total


def _exact_newton_direction(y, s, gamma):
    """Exact solution of H v = g, normalised to sum(D v) = 0 (the Neumann
    limit's normalisation; H is singular along the all-ones vector)."""
    rho = _softmax(s)
    g = rho - _phi(y, gamma)
    H = np.diag(rho) - np.outer(rho, rho)
    v = np.linalg.lstsq(H, g, rcond=None)[0]
    d = rho * (1 - rho)
    return v - (d @ v) / d.sum()


def _epsilon_newton_direction(y, s, gamma, eps):
    """Newton direction of the paper's epsilon-adjusted loss (eq. 14), solved
    exactly, with its component along the all-ones vector removed."""
    e = np.exp(s - s.max())
    rho = e / (e.sum() + eps * e.sum())
    g = rho - _phi(y, gamma)
    H = np.diag(rho) - np.outer(rho, rho)
    v = np.linalg.solve(H, g)
    d = rho * (1 - rho)
    return v - (d @ v) / d.sum()


def test_first_order_gradient_and_hessian_are_finite_differences():
    y, s, offsets, _ = _random_data(seed=0, n_queries=6)
    gamma = np.random.default_rng(1).random(len(y))
    grad, hess = _compute(_with_gamma(y, offsets, gamma, hessian_terms=0), s)
    eps = 1e-4
    for q in range(len(offsets) - 1):
        rows = slice(offsets[q], offsets[q + 1])
        yq, sq, gq = y[rows], s[rows], gamma[rows]
        n = len(yq)
        num_grad = np.empty(n)
        num_hess = np.empty(n)
        for r in range(n):
            e = np.zeros(n)
            e[r] = eps
            plus = _cross_entropy(yq, sq + e, gq)
            minus = _cross_entropy(yq, sq - e, gq)
            num_grad[r] = (plus - minus) / (2 * eps)
            num_hess[r] = (plus - 2 * _cross_entropy(yq, sq, gq) + minus) / eps**2
        np.testing.assert_allclose(grad[rows], num_grad, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(hess[rows], num_hess, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("k", [0, 1, 2, 5])
def test_hessian_is_softmax_diagonal(k):
    y, s, offsets, _ = _random_data(seed=2)
    obj = XENDCGObjective(y, offsets, hessian_terms=k)
    obj.prepare_iteration(np.random.default_rng(3))
    _, hess = _compute(obj, s)
    for q in range(len(offsets) - 1):
        rows = slice(offsets[q], offsets[q + 1])
        rho = _softmax(s[rows])
        np.testing.assert_allclose(hess[rows], rho * (1 - rho), rtol=1e-6)


@pytest.mark.parametrize("k", [0, 1, 2, 3, 6])
def test_per_row_step_is_the_truncated_neumann_series(k):
    # -G/H of a row is the paper's Newton step with (I + S + ... + S^k).
    y, s, offsets, w = _random_data(seed=4, max_size=15)
    gamma = np.random.default_rng(5).random(len(y))
    for weights in (None, w):
        grad, hess = _compute(_with_gamma(y, offsets, gamma, weights, hessian_terms=k), s)
        step = grad.astype(np.float64) / hess
        for q in range(len(offsets) - 1):
            rows = slice(offsets[q], offsets[q + 1])
            expected = _neumann_direction(y[rows], s[rows], gamma[rows], k)
            # Two-document queries give exactly 0 for odd k: use the
            # first-order step as the scale.
            scale = np.abs(_neumann_direction(y[rows], s[rows], gamma[rows], 0)).max()
            np.testing.assert_allclose(step[rows], expected, rtol=1e-5, atol=1e-6 * scale)


def test_default_is_the_papers_three_terms():
    assert XENDCGObjective(np.array([1.0, 0.0]), np.array([0, 2])).hessian_terms == 2


def test_more_terms_approach_the_exact_newton_step():
    rng = np.random.default_rng(6)
    for _ in range(20):
        n = int(rng.integers(5, 30))
        y = rng.integers(0, 5, n).astype(float)
        y[:2] = [0.0, 3.0]
        s = rng.normal(size=n)
        gamma = rng.random(n)
        offsets = np.array([0, n])
        exact = _exact_newton_direction(y, s, gamma)
        # The truncation error decays like r**k, r the largest modulus among
        # the eigenvalues of S other than the 1 of the all-ones vector.
        rho = _softmax(s)
        S = np.outer(1 / (1 - rho), rho)
        np.fill_diagonal(S, 0.0)
        r = np.sort(np.abs(np.linalg.eigvals(S)))[-2]
        assert r < 1
        errors = []
        for k in range(8):
            grad, hess = _compute(_with_gamma(y, offsets, gamma, hessian_terms=k), s)
            errors.append(np.abs(grad.astype(np.float64) / hess - exact).max())
        errors = np.array(errors) / np.abs(exact).max()
        for k in range(7):
            # Strictly closer with each term until float32 rounding (~1e-6).
            assert errors[k + 1] < errors[k] or errors[k] < 1e-5
        for k in range(8):
            assert errors[k] <= max(1e-5, 2 * r**k * errors[0])


def test_exact_step_is_the_papers_epsilon_limit():
    # The class uses epsilon -> 0; the paper's invertible epsilon-adjusted
    # Hessian gives the same Newton step up to a constant shift per query.
    rng = np.random.default_rng(7)
    n = 12
    y = rng.integers(0, 5, n).astype(float)
    y[:2] = [0.0, 2.0]
    s = rng.normal(size=n)
    gamma = rng.random(n)
    exact = _exact_newton_direction(y, s, gamma)
    previous = np.inf
    for eps in (1e-3, 1e-5, 1e-7):
        diff = np.abs(_epsilon_newton_direction(y, s, gamma, eps) - exact).max()
        assert diff < previous
        previous = diff
    assert previous < 1e-5 * np.abs(exact).max()
    grad, hess = _compute(_with_gamma(y, np.array([0, n]), gamma, hessian_terms=40), s)
    np.testing.assert_allclose(grad / hess, exact, rtol=1e-4, atol=1e-5 * np.abs(exact).max())


def test_two_documents_oscillate_as_documented():
    # For n = 2, S swaps the two entries (eigenvalues +1 and -1): even numbers
    # of terms give D^-1 g, odd numbers give 0.
    y = np.array([2.0, 0.0])
    s = np.array([0.3, -0.2])
    gamma = np.array([0.25, 0.5])
    offsets = np.array([0, 2])
    rho = _softmax(s)
    first_order = (rho - _phi(y, gamma)) / (rho * (1 - rho))
    for k in range(5):
        grad, hess = _compute(_with_gamma(y, offsets, gamma, hessian_terms=k), s)
        expected = first_order if k % 2 == 0 else np.zeros(2)
        np.testing.assert_allclose(grad / hess, expected, rtol=1e-6, atol=1e-7)


def test_sign_convention_pushes_relevant_up():
    y = np.array([0.0, 3.0, 1.0])
    offsets = np.array([0, 3])
    obj = XENDCGObjective(y, offsets)
    obj.prepare_iteration(np.random.default_rng(0))
    grad, hess = _compute(obj, np.zeros(3))
    assert grad[1] < 0 < grad[0]
    assert np.all(hess > 0)


@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_gradients_sum_to_zero_per_query(k):
    y, s, offsets, _ = _random_data(seed=8)
    obj = XENDCGObjective(y, offsets, hessian_terms=k)
    obj.prepare_iteration(np.random.default_rng(9))
    grad, _ = _compute(obj, s)
    first_order = XENDCGObjective(y, offsets, hessian_terms=0)
    first_order._gamma[:] = obj._gamma
    scale, _ = _compute(first_order, s)
    for q in range(len(offsets) - 1):
        rows = slice(offsets[q], offsets[q + 1])
        g = grad[rows].astype(np.float64)
        # Relative to rho - phi: two-document queries cancel to 0 for odd k.
        assert abs(g.sum()) <= 1e-6 * np.abs(scale[rows]).sum()


def test_degenerate_queries_give_zeros():
    # One document; all labels equal (non-zero, then zero); an empty query;
    # then a normal query so that something is computed.
    y = np.array([3.0, 2.0, 2.0, 2.0, 0.0, 0.0, 1.0, 0.0])
    offsets = np.array([0, 1, 4, 6, 6, 8])
    s = np.array([0.5, 0.1, -0.4, 0.9, 0.2, 0.3, 0.0, 1.0])
    obj = XENDCGObjective(y, offsets)
    obj.prepare_iteration(np.random.default_rng(0))
    grad, hess = _compute(obj, s)
    assert np.all(grad[:6] == 0) and np.all(hess[:6] == 0)
    assert np.all(grad[6:] != 0) and np.all(hess[6:] > 0)


def test_queries_are_independent():
    y, s, offsets, _ = _random_data(seed=10, n_queries=4)
    first = slice(offsets[0], offsets[1])
    others = slice(offsets[1], None)
    y2, s2 = y.copy(), s.copy()
    y2[others] = (y2[others] + 1) % 4
    s2[others] = s2[others][::-1] * 3
    results = []
    for labels, scores in ((y, s), (y2, s2)):
        obj = XENDCGObjective(labels, offsets)
        obj.prepare_iteration(np.random.default_rng(11))
        results.append(_compute(obj, scores))
    np.testing.assert_array_equal(results[0][0][first], results[1][0][first])
    np.testing.assert_array_equal(results[0][1][first], results[1][1][first])
    assert not np.array_equal(results[0][0][others], results[1][0][others])


def test_invariant_to_shifting_a_query():
    y, s, offsets, _ = _random_data(seed=12)
    gamma = np.random.default_rng(13).random(len(y))
    grad, hess = _compute(_with_gamma(y, offsets, gamma), s)
    shifted = s.copy()
    shifted[offsets[2] : offsets[3]] += 4.0
    grad2, hess2 = _compute(_with_gamma(y, offsets, gamma), shifted)
    np.testing.assert_allclose(grad2, grad, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(hess2, hess, rtol=1e-5, atol=1e-8)


def test_sample_weights_scale_rows():
    y, s, offsets, w = _random_data(seed=14)
    gamma = np.random.default_rng(15).random(len(y))
    grad, hess = _compute(_with_gamma(y, offsets, gamma), s)
    grad_w, hess_w = _compute(_with_gamma(y, offsets, gamma, w), s)
    np.testing.assert_allclose(grad_w, grad * w, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(hess_w, hess * w, rtol=1e-6, atol=1e-9)


def test_gamma_is_redrawn_from_the_generator():
    y, s, offsets, _ = _random_data(seed=16)
    obj = XENDCGObjective(y, offsets)
    rng = np.random.default_rng(17)
    obj.prepare_iteration(rng)
    # One draw of n_samples doubles, in row order.
    np.testing.assert_array_equal(obj._gamma, np.random.default_rng(17).random(len(y)))
    first = _compute(obj, s)
    obj.prepare_iteration(rng)
    second = _compute(obj, s)
    assert not np.array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])  # hessians ignore gamma
    again = XENDCGObjective(y, offsets)
    again.prepare_iteration(np.random.default_rng(17))
    np.testing.assert_array_equal(_compute(again, s)[0], first[0])
    # The gradients are those of phi built from exactly these draws.
    expected = _with_gamma(y, offsets, np.random.default_rng(17).random(len(y)))
    np.testing.assert_array_equal(_compute(expected, s)[0], first[0])


@needs_two_threads
def test_same_result_on_one_and_two_threads():
    y, s, offsets, w = _random_data(seed=18, n_queries=300, max_size=60)
    results = []
    # The serial twin, then the parallel kernel on two threads (about 9,000
    # rows: below the kernel's threshold).
    for threads, context in ((1, contextlib.nullcontext()), (2, parallel_kernels_only())):
        with numba_threads(threads), context as picked:
            obj = XENDCGObjective(y, offsets, w)
            obj.prepare_iteration(np.random.default_rng(19))
            results.append(_compute(obj, s))
    assert_ran_in_parallel(picked, "_xendcg_gradient_hessian")
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


def test_widely_spread_scores_match_high_precision_reference():
    # The top document's 1 - rho is ~4e-18 here, below float64's resolution
    # next to 1: a naive 1 - rho would be 0 and divide by 0.
    mpmath = pytest.importorskip("mpmath", reason="high-precision reference")
    mpmath.mp.dps = 60
    y = np.array([0.0, 2.0, 1.0, 3.0, 0.0])
    s = np.array([0.0, -50.0, -40.0, -60.0, -45.0])
    gamma = np.array([0.1, 0.7, 0.3, 0.9, 0.5])
    e = [mpmath.exp(mpmath.mpf(x)) for x in s]
    rho = [x / sum(e) for x in e]
    a = [mpmath.mpf(2) ** int(l) - mpmath.mpf(float(g)) for l, g in zip(y, gamma)]
    phi = [x / sum(a) for x in a]
    term = [r - p for r, p in zip(rho, phi)]
    expected = list(term)
    for _ in range(2):
        p = [t / (1 - r) for t, r in zip(term, rho)]
        term = [rho[k] * (sum(p) - p[k]) for k in range(5)]
        expected = [x + t for x, t in zip(expected, term)]
    expected_hess = np.array([float(r * (1 - r)) for r in rho])
    grad, hess = _compute(_with_gamma(y, np.array([0, 5]), gamma), s)
    np.testing.assert_allclose(grad, np.array([float(x) for x in expected]), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(hess, expected_hess, rtol=1e-6)
    # So far apart that the other exponentials underflow: still finite.
    grad, hess = _compute(_with_gamma(y, np.array([0, 5]), gamma), s * 30)
    assert np.all(np.isfinite(grad)) and np.all(np.isfinite(hess))


def _lightgbm_gamma(sizes, seed):
    """LightGBM's rank_xendcg draws: one Random(seed + q) per query (an LCG,
    include/LightGBM/utils/random.h), NextFloat() per document in row order,
    queries of one document skipped."""
    out = []
    for q, size in enumerate(sizes):
        x = (seed + q) & 0xFFFFFFFF
        g = np.zeros(size)
        if size > 1:
            for i in range(size):
                x = (214013 * x + 2531011) & 0xFFFFFFFF
                g[i] = float(np.float32((x >> 16) & 0x7FFF) / np.float32(32768.0))
        out.append(g)
    return np.concatenate(out)


def test_matches_lightgbm_leaf_values():
    """One LightGBM rank_xendcg tree (no regularisation, learning rate 1) has
    leaves -sum(G)/sum(H) of our rows, with LightGBM's gamma draws replayed."""
    lgb = pytest.importorskip("lightgbm", reason="LightGBM is the reference")
    rng = np.random.default_rng(23)
    n_queries, size = 60, 25
    n = n_queries * size
    X = rng.normal(size=(n, 3))
    y = rng.integers(0, 4, n).astype(float)
    init = rng.normal(size=n)
    w = rng.uniform(0.5, 2.0, n)
    offsets = np.arange(0, n + 1, size, dtype=np.int64)
    gamma = _lightgbm_gamma([size] * n_queries, seed=7)
    for weights in (None, w):
        params = dict(
            objective="rank_xendcg", objective_seed=7, num_leaves=6,
            learning_rate=1.0, min_data_in_leaf=1, min_sum_hessian_in_leaf=0.0,
            lambda_l2=0.0, min_data_in_bin=1, verbose=-1, num_threads=1,
            deterministic=True,
        )
        data = lgb.Dataset(X, y, group=[size] * n_queries, init_score=init, weight=weights)
        booster = lgb.train(params, data, num_boost_round=1)
        leaf = booster.predict(X, pred_leaf=True).ravel()
        value = booster.predict(X, raw_score=True)
        grad, hess = _compute(_with_gamma(y, offsets, gamma, weights), init)
        for leaf_id in np.unique(leaf):
            rows = leaf == leaf_id
            ours = -grad[rows].sum(dtype=np.float64) / hess[rows].sum(dtype=np.float64)
            np.testing.assert_allclose(value[rows], ours, rtol=1e-5, atol=1e-7)
        assert len(np.unique(leaf)) > 2


def test_loss_is_cross_entropy_with_half_gamma():
    y = np.array([0.0, 2.0, 1.0, 1.0, 0.0, 3.0, 3.0, 4.0])
    offsets = np.array([0, 3, 5, 7, 8])
    s = np.array([0.3, 0.1, 0.2, 0.0, 1.0, 0.5, 0.2, 0.7])
    half = np.full(len(y), 0.5)
    ce0 = _cross_entropy(y[0:3], s[0:3], half[0:3])
    ce1 = _cross_entropy(y[3:5], s[3:5], half[3:5])
    # Queries 2 (equal labels) and 3 (one document) do not contribute.
    obj = XENDCGObjective(y, offsets)
    assert obj.loss(s) == pytest.approx((ce0 + ce1) / 2, rel=1e-12)
    obj.prepare_iteration(np.random.default_rng(0))  # does not affect loss()
    assert obj.loss(s) == pytest.approx((ce0 + ce1) / 2, rel=1e-12)
    w = np.array([1.0, 1.0, 1.0, 3.0, 3.0, 5.0, 5.0, 5.0])
    weighted = XENDCGObjective(y, offsets, w)
    assert weighted.loss(s) == pytest.approx((ce0 + 3 * ce1) / 4, rel=1e-12)
    assert XENDCGObjective(y[5:], np.array([0, 2, 3])).loss(s[5:]) == 0.0


def test_interface_and_registry():
    assert OBJECTIVES["xendcg"] is XENDCGObjective
    assert issubclass(XENDCGObjective, BaseObjective)
    obj = XENDCGObjective(np.array([1.0, 0.0]), np.array([0, 2]), hessian_terms=0)
    assert obj.name == "xendcg"
    assert obj.init_score() == 0.0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(y=[1.0, -1.0]), "y must be non-negative"),
        (dict(y=[1.0, np.inf]), "y must not contain NaN"),
        (dict(y=[2000.0, 0.0]), "sums of the gains 2\\*\\*y overflow"),
        (dict(offsets=[0, 1]), "offsets must start at 0 and end"),
        (dict(sample_weight=[1.0, -2.0]), "sample_weight must be finite"),
        (dict(hessian_terms=-1), "hessian_terms must be a non-negative integer"),
        (dict(hessian_terms=1.5), "hessian_terms must be a non-negative integer"),
        (dict(hessian_terms=True), "hessian_terms must be a non-negative integer"),
        (dict(gamma=0.5), "Unknown parameters"),
    ],
)
def test_invalid_input(kwargs, match):
    args = dict(y=[1.0, 0.0], offsets=[0, 2])
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        XENDCGObjective(**args)


def test_invalid_buffers():
    obj = XENDCGObjective(np.array([1.0, 0.0]), np.array([0, 2]))
    good = np.zeros(2, dtype=np.float32)
    with pytest.raises(ValueError, match="hess_out must be a float32"):
        obj.gradient_hessian(np.zeros(2), good, np.zeros(2))
    with pytest.raises(ValueError, match="raw_scores must be a float64"):
        obj.gradient_hessian(np.zeros(3), good, good.copy())
