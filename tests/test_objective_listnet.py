"""Tests for sklearn_ltr._objectives.listnet (softmax cross entropy)."""

import math

import numba
import numpy as np
import pytest
from _threads import assert_ran_in_parallel, needs_two_threads, parallel_kernels_only

from sklearn_ltr._objectives import OBJECTIVES, BaseObjective, ListNetObjective
from sklearn_ltr._utils.threads import numba_threads

DISTRIBUTIONS = ["linear", "exponential"]


def _random_data(seed, n_queries=30, max_size=20, max_label=4):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, max_size + 1, n_queries)
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    y = rng.integers(0, max_label + 1, offsets[-1]).astype(np.float64)
    y[offsets[:-1]] = 1.0  # every query has a positive label sum
    s = rng.normal(size=offsets[-1])
    w = rng.uniform(0.2, 3.0, offsets[-1])
    return y, s, offsets, w


def _compute(y, s, offsets, w=None, **params):
    obj = ListNetObjective(y, offsets, w, **params)
    grad = np.full(len(y), np.nan, dtype=np.float32)
    hess = np.full(len(y), np.nan, dtype=np.float32)
    obj.gradient_hessian(np.asarray(s, dtype=np.float64), grad, hess)
    return grad, hess


def _target(y, label_distribution):
    if label_distribution == "linear":
        return y / y.sum()
    e = np.exp(y - y.max())
    return e / e.sum()


def _cross_entropy(y, s, label_distribution):
    """ListNet's loss for one query, plainly in numpy."""
    rho = np.exp(s - s.max())
    rho /= rho.sum()
    return -np.sum(_target(y, label_distribution) * np.log(rho))


def test_hand_computed_two_documents():
    grad, hess = _compute(np.array([1.0, 0.0]), np.zeros(2), np.array([0, 2]))
    np.testing.assert_allclose(grad, [-0.5, 0.5])
    np.testing.assert_allclose(hess, [0.25, 0.25])
    obj = ListNetObjective(np.array([1.0, 0.0]), np.array([0, 2]))
    assert obj.loss(np.zeros(2)) == pytest.approx(math.log(2))


def test_hand_computed_three_documents():
    # Scores 0, log 2, 0 give rho = 1/4, 1/2, 1/4.
    y = np.array([2.0, 1.0, 0.0])
    s = np.array([0.0, math.log(2), 0.0])
    offsets = np.array([0, 3])
    grad, hess = _compute(y, s, offsets)
    np.testing.assert_allclose(grad, [1 / 4 - 2 / 3, 1 / 2 - 1 / 3, 1 / 4], rtol=1e-6)
    np.testing.assert_allclose(hess, [3 / 16, 1 / 4, 3 / 16], rtol=1e-6)
    loss = ListNetObjective(y, offsets).loss(s)
    assert loss == pytest.approx(2 / 3 * math.log(4) + 1 / 3 * math.log(2))
    # Original ListNet: P = exp(y) / sum(exp(y)).
    z = math.e**2 + math.e + 1
    grad, _ = _compute(y, s, offsets, label_distribution="exponential")
    expected = [1 / 4 - math.e**2 / z, 1 / 2 - math.e / z, 1 / 4 - 1 / z]
    np.testing.assert_allclose(grad, expected, rtol=1e-6)


@pytest.mark.parametrize("label_distribution", DISTRIBUTIONS)
def test_gradient_and_hessian_are_finite_differences(label_distribution):
    y, s, offsets, _ = _random_data(seed=0, n_queries=6)
    grad, hess = _compute(y, s, offsets, label_distribution=label_distribution)
    eps = 1e-4
    for q in range(len(offsets) - 1):
        rows = slice(offsets[q], offsets[q + 1])
        yq, sq = y[rows], s[rows]
        n = len(yq)
        num_grad = np.empty(n)
        num_hess = np.empty(n)
        for r in range(n):
            e = np.zeros(n)
            e[r] = eps
            plus = _cross_entropy(yq, sq + e, label_distribution)
            minus = _cross_entropy(yq, sq - e, label_distribution)
            centre = _cross_entropy(yq, sq, label_distribution)
            num_grad[r] = (plus - minus) / (2 * eps)
            num_hess[r] = (plus - 2 * centre + minus) / eps**2
        np.testing.assert_allclose(grad[rows], num_grad, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(hess[rows], num_hess, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("label_distribution", DISTRIBUTIONS)
def test_loss_is_mean_cross_entropy(label_distribution):
    y, s, offsets, w = _random_data(seed=1, n_queries=8)
    per_query = np.array([
        _cross_entropy(y[a:b], s[a:b], label_distribution)
        for a, b in zip(offsets[:-1], offsets[1:])
    ])
    obj = ListNetObjective(y, offsets, label_distribution=label_distribution)
    assert obj.loss(s) == pytest.approx(per_query.mean(), rel=1e-12)
    weighted = ListNetObjective(y, offsets, w, label_distribution=label_distribution)
    query_weights = np.array([w[a:b].mean() for a, b in zip(offsets[:-1], offsets[1:])])
    expected = np.dot(query_weights, per_query) / query_weights.sum()
    assert weighted.loss(s) == pytest.approx(expected, rel=1e-12)


def test_degenerate_queries_give_zeros():
    # One document; labels summing to 0; an empty query; then a query of
    # equal non-zero labels, which does contribute (uniform target).
    y = np.array([3.0, 0.0, 0.0, 0.0, 2.0, 2.0, 2.0])
    offsets = np.array([0, 1, 4, 4, 7])
    s = np.array([0.5, 0.1, -0.4, 0.9, 0.2, 0.3, 0.0])
    grad, hess = _compute(y, s, offsets)
    assert np.all(grad[:4] == 0) and np.all(hess[:4] == 0)
    rho = np.exp(s[4:]) / np.exp(s[4:]).sum()
    np.testing.assert_allclose(grad[4:], rho - 1 / 3, rtol=1e-6)
    loss = ListNetObjective(y, offsets).loss(s)
    assert loss == pytest.approx(_cross_entropy(y[4:], s[4:], "linear"))
    # Under "exponential" all-zero labels give a uniform target.
    grad, _ = _compute(y, s, offsets, label_distribution="exponential")
    assert np.all(grad[:1] == 0) and np.all(grad[1:] != 0)
    rho = np.exp(s[1:4]) / np.exp(s[1:4]).sum()
    np.testing.assert_allclose(grad[1:4], rho - 1 / 3, rtol=1e-6)
    assert ListNetObjective(y[:4], np.array([0, 1, 4])).loss(s[:4]) == 0.0


def test_sign_convention_pushes_relevant_up():
    grad, _ = _compute(np.array([0.0, 3.0, 1.0]), np.zeros(3), np.array([0, 3]))
    assert grad[1] < 0 < grad[0]


@pytest.mark.parametrize("label_distribution", DISTRIBUTIONS)
def test_queries_are_independent(label_distribution):
    y, s, offsets, _ = _random_data(seed=3, n_queries=4)
    grad, hess = _compute(y, s, offsets, label_distribution=label_distribution)
    first = slice(offsets[0], offsets[1])
    others = slice(offsets[1], None)
    y2, s2 = y.copy(), s.copy()
    y2[others] = (y2[others] + 1) % 4
    s2[others] = s2[others][::-1] * 3
    grad2, hess2 = _compute(y2, s2, offsets, label_distribution=label_distribution)
    np.testing.assert_array_equal(grad2[first], grad[first])
    np.testing.assert_array_equal(hess2[first], hess[first])
    assert not np.array_equal(grad2[others], grad[others])


@pytest.mark.parametrize("label_distribution", DISTRIBUTIONS)
def test_invariant_to_shifting_a_query(label_distribution):
    y, s, offsets, _ = _random_data(seed=5)
    grad, hess = _compute(y, s, offsets, label_distribution=label_distribution)
    shifted = s.copy()
    shifted[offsets[2] : offsets[3]] += 4.0
    grad2, hess2 = _compute(y, shifted, offsets, label_distribution=label_distribution)
    np.testing.assert_allclose(grad2, grad, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(hess2, hess, rtol=1e-5, atol=1e-8)
    # Shifting the labels changes only the linear target.
    grad3, _ = _compute(y + 1.0, s, offsets, label_distribution=label_distribution)
    if label_distribution == "exponential":
        np.testing.assert_allclose(grad3, grad, rtol=1e-5, atol=1e-7)
    else:
        assert not np.allclose(grad3, grad)


@pytest.mark.parametrize("label_distribution", DISTRIBUTIONS)
def test_gradients_sum_to_zero_per_query(label_distribution):
    y, s, offsets, _ = _random_data(seed=11)
    grad, _ = _compute(y, s, offsets, label_distribution=label_distribution)
    for q in range(len(offsets) - 1):
        g = grad[offsets[q] : offsets[q + 1]].astype(np.float64)
        assert abs(g.sum()) <= 1e-6 * np.abs(g).sum()


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
    # The parallel kernel on two threads (about 9,000 rows: below the kernel's threshold).
    with numba_threads(2), parallel_kernels_only() as picked:
        grad2, hess2 = _compute(y, s, offsets, w)
    assert_ran_in_parallel(picked, "_listnet_gradient_hessian")
    np.testing.assert_array_equal(grad1, grad2)
    np.testing.assert_array_equal(hess1, hess2)


def test_widely_spread_scores():
    # 1 - rho of the top document is ~2e-22: computed from the other
    # exponentials, not as 1 - rho (which would be 0).
    y = np.array([1.0, 2.0, 0.0])
    s = np.array([0.0, -50.0, -60.0])
    grad, hess = _compute(y, s, np.array([0, 3]))
    rest = math.exp(-50) + math.exp(-60)
    np.testing.assert_allclose(hess[0], rest / (1 + rest), rtol=1e-6)
    np.testing.assert_allclose(grad, [1 - 1 / 3, -2 / 3, 0.0], rtol=1e-6, atol=1e-12)
    loss = ListNetObjective(y, np.array([0, 3])).loss(s * 100)
    assert np.isfinite(loss) and loss == pytest.approx(2 / 3 * 5000, rel=1e-9)


def test_interface_and_registry():
    assert OBJECTIVES["listnet"] is ListNetObjective
    assert issubclass(ListNetObjective, BaseObjective)
    obj = ListNetObjective(np.array([1.0, 0.0]), np.array([0, 2]))
    assert obj.name == "listnet"
    assert obj.label_distribution == "linear"
    assert obj.init_score() == 0.0
    assert obj.prepare_iteration(np.random.default_rng(0)) is None


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(y=[1.0, -1.0]), "y must be non-negative"),
        (dict(y=[1.0, np.nan]), "y must not contain NaN"),
        (dict(offsets=[0, 2, 1, 2]), "offsets must be non-decreasing"),
        (dict(sample_weight=[1.0]), "sample_weight must have shape"),
        (dict(label_distribution="softmax"), "label_distribution must be one of"),
        (dict(label_distribution=None), "label_distribution must be one of"),
        (dict(hessian_terms=-1), "hessian_terms must be a non-negative integer"),
        (dict(hessian_terms=1.5), "hessian_terms must be a non-negative integer"),
        (dict(hessian_terms=True), "hessian_terms must be a non-negative integer"),
        (dict(hessian_terms=None), "hessian_terms must be a non-negative integer"),
        (dict(gamma=2), "Unknown parameters"),
    ],
)
def test_invalid_input(kwargs, match):
    args = dict(y=[1.0, 0.0], offsets=[0, 2])
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        ListNetObjective(**args)


def test_negative_labels_allowed_for_exponential():
    grad, _ = _compute(np.array([-1.0, 1.0]), np.zeros(2), np.array([0, 2]),
                       label_distribution="exponential")
    p = math.exp(1) / (math.exp(1) + math.exp(-1))
    np.testing.assert_allclose(grad, [0.5 - (1 - p), 0.5 - p], rtol=1e-6)


def test_invalid_buffers():
    obj = ListNetObjective(np.array([1.0, 0.0]), np.array([0, 2]))
    good = np.zeros(2, dtype=np.float32)
    with pytest.raises(ValueError, match="grad_out must be a float32"):
        obj.gradient_hessian(np.zeros(2), np.zeros(2), good)
    with pytest.raises(ValueError, match="raw_scores must have shape"):
        obj.loss(np.zeros(3))


# -- the softmax-of-labels target and the Neumann step (Bruch, WWW 2020) ------


def test_exponential_target_is_the_papers_eq3():
    # phi_ListNet(y_i) = e^{y_i} / sum_j e^{y_j} (WWW 2020, eq. 3), written
    # without the max shift the objective uses; the gradient is rho - phi.
    y = np.array([4.0, 0.0, 2.0, 1.0, 0.0])
    s = np.array([0.3, -1.0, 0.8, 0.0, 0.1])
    grad, _ = _compute(y, s, np.array([0, 5]), label_distribution="exponential")
    phi = np.array([math.exp(v) for v in y]) / sum(math.exp(v) for v in y)
    rho = np.array([math.exp(v) for v in s]) / sum(math.exp(v) for v in s)
    np.testing.assert_allclose(grad, rho - phi, rtol=1e-6)


def _dense_neumann_direction(y, s, k, label_distribution):
    """sum_{m <= k} S^m D^-1 g with dense matrices (WWW 2020, section 4.4)."""
    rho = np.exp(s - s.max())
    rho /= rho.sum()
    g = rho - _target(y, label_distribution)
    d = rho * (1 - rho)
    S = np.outer(1 / (1 - rho), rho)
    np.fill_diagonal(S, 0.0)
    u = g / d
    total = u.copy()
    for _ in range(k):
        u = S @ u
        total += u
    return total


def test_default_is_the_plain_diagonal_step():
    y, s, offsets, w = _random_data(seed=19)
    assert ListNetObjective(y, offsets).hessian_terms == 0
    for distribution in DISTRIBUTIONS:
        default = _compute(y, s, offsets, w, label_distribution=distribution)
        explicit = _compute(y, s, offsets, w, label_distribution=distribution,
                            hessian_terms=0)
        np.testing.assert_array_equal(default[0], explicit[0])
        np.testing.assert_array_equal(default[1], explicit[1])


@pytest.mark.parametrize("label_distribution", DISTRIBUTIONS)
@pytest.mark.parametrize("k", [1, 2, 3, 6])
def test_per_row_step_is_the_truncated_neumann_series(label_distribution, k):
    # -G/H of a row is the paper's Newton step with (I + S + ... + S^k); the
    # hessian stays the diagonal rho * (1 - rho); weights scale both.
    y, s, offsets, w = _random_data(seed=21, max_size=15)
    plain_grad, plain_hess = _compute(y, s, offsets, label_distribution=label_distribution)
    for weights in (None, w):
        grad, hess = _compute(y, s, offsets, weights, hessian_terms=k,
                              label_distribution=label_distribution)
        scale = 1.0 if weights is None else weights
        np.testing.assert_allclose(hess, plain_hess * scale, rtol=1e-6)
        step = grad.astype(np.float64) / hess
        for q in range(len(offsets) - 1):
            rows = slice(offsets[q], offsets[q + 1])
            expected = _dense_neumann_direction(y[rows], s[rows], k, label_distribution)
            # Two-document queries give exactly 0 for odd k: use the
            # first-order step as the scale.
            first = _dense_neumann_direction(y[rows], s[rows], 0, label_distribution)
            np.testing.assert_allclose(step[rows], expected, rtol=1e-5,
                                       atol=1e-6 * np.abs(first).max())
    # The corrections change the gradient (queries of more than 2 documents).
    assert not np.allclose(grad, plain_grad * w)


@pytest.mark.parametrize("label_distribution", DISTRIBUTIONS)
@pytest.mark.parametrize("k", [0, 2, 5])
def test_neumann_step_equals_xendcgs_on_the_same_target(label_distribution, k):
    # XE-NDCG with gamma = 2**y' - P_y has the target P_y: both objectives
    # then run the same softmax and Neumann helper on the same inputs.
    from sklearn_ltr._objectives import XENDCGObjective

    y, s, offsets, w = _random_data(seed=23)
    listnet = ListNetObjective(y, offsets, w, label_distribution=label_distribution,
                               hessian_terms=k)
    y_xe = np.zeros_like(y)
    y_xe[offsets[:-1]] = 1.0  # two distinct labels per query: all queries contribute
    xendcg = XENDCGObjective(y_xe, offsets, w, hessian_terms=k)
    xendcg._gamma[:] = 2.0**y_xe - listnet._target
    grad, hess = _compute(y, s, offsets, w, label_distribution=label_distribution,
                          hessian_terms=k)
    grad_xe = np.full(len(y), np.nan, dtype=np.float32)
    hess_xe = np.full(len(y), np.nan, dtype=np.float32)
    xendcg.gradient_hessian(s, grad_xe, hess_xe)
    np.testing.assert_array_equal(hess, hess_xe)
    np.testing.assert_allclose(grad, grad_xe, rtol=1e-5, atol=1e-7 * np.abs(grad).max())


@pytest.mark.parametrize("k", [1, 2])
def test_neumann_step_on_one_and_two_threads_and_wide_scores(k):
    y, s, offsets, w = _random_data(seed=29, n_queries=300, max_size=60)
    s[offsets[1]] += 800.0  # 1 - rho of that query's top underflows
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        grad1, hess1 = _compute(y, s, offsets, w, hessian_terms=k)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        grad2, hess2 = _compute(y, s, offsets, w, hessian_terms=k)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(grad1, grad2)
    np.testing.assert_array_equal(hess1, hess2)
    assert np.all(np.isfinite(grad1)) and np.all(np.isfinite(hess1))


def test_ranker_option_flows_to_the_objective():
    from sklearn.utils._param_validation import InvalidParameterError

    from sklearn_ltr import ListNetRanker
    from sklearn_ltr.datasets import make_ranking

    X, y, qid = make_ranking(n_queries=40, docs_per_query=10, n_features=5, random_state=0)
    small = dict(n_estimators=5, max_leaf_nodes=4, random_state=0)
    default = ListNetRanker(**small).fit(X, y, qid=qid).predict(X)
    zero = ListNetRanker(hessian_terms=0, **small).fit(X, y, qid=qid).predict(X)
    two = ListNetRanker(hessian_terms=2, **small).fit(X, y, qid=qid).predict(X)
    np.testing.assert_array_equal(default, zero)
    assert not np.allclose(default, two)
    for bad in (-1, 1.5, "2"):
        with pytest.raises(InvalidParameterError, match="hessian_terms"):
            ListNetRanker(hessian_terms=bad, **small).fit(X, y, qid=qid)
