"""Tests for sklearn_ltr._objectives.multi_objective (Svore, Volkovs and
Burges, WWW 2011): lambda(C) against a brute-force pairwise implementation
whose |delta CNDCG| comes from the metric, lambda(S) against eqs. 14-16 and a
finite difference of O(S), the w_m schedules against hand-computed values,
and the std normalisation of gradient-descent leaves."""

import math

import numpy as np
import pytest
from _threads import assert_ran_in_parallel, needs_two_threads, parallel_kernels_only
from scipy.special import expit

from sklearn_ltr._objectives import OBJECTIVES, LambdaRankMultiObjective, LambdaRankObjective
from sklearn_ltr._objectives.multi_objective import schedule_weights
from sklearn_ltr._utils.threads import numba_threads
from sklearn_ltr.metrics import cndcg_score, ndcg_score

# Many reference metric values are single queries scored without qid on purpose; the warning
# that says so is tested in test_single_query.py.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn_ltr.exceptions.SingleQueryWarning")


def _swap_delta(metric, labels, s, a, b, k):
    """|metric(swap a, b) - metric| with the metric's own code (stable ties)."""
    swapped = s.copy()
    swapped[a], swapped[b] = s[b], s[a]
    kw = dict(k=k, ties="stable")
    return abs(metric(labels, swapped, **kw) - metric(labels, s, **kw))


def _click_reference(y, c, s, sigma, normalize):
    """lambda(C) of one query from section 4.2, pair by pair, for a
    truncation level at least the query size (so every pair counts and the
    weight is the full-list |delta CNDCG| of ``cndcg_score``)."""
    n = len(y)
    grad, hess = np.zeros(n), np.zeros(n)
    order = np.argsort(-s, kind="stable")
    divide = normalize and s[order[0]] != s[order[-1]]
    total = 0.0
    for a in range(n):
        for b in range(n):
            # a is the more-clicked document of the pair.
            if not (y[a] == y[b] and c[a] > c[b] > 0):
                continue
            delta = _swap_delta(cndcg_score, c, s, a, b, None)
            if divide:
                # LightGBM's constant 0.01f, as the lambdarank kernel uses it.
                delta /= float(np.float32(0.01)) + abs(s[a] - s[b])
            p = expit(-sigma * (s[a] - s[b]))
            grad[a] -= sigma * delta * p
            grad[b] += sigma * delta * p
            hess[a] += sigma**2 * delta * p * (1 - p)
            hess[b] += sigma**2 * delta * p * (1 - p)
            total += 2 * sigma * delta * p
    if normalize and total > 0:
        factor = math.log2(1 + total) / total
        grad *= factor
        hess *= factor
    return grad, hess


def _sigmoid_reference(y, s, mu, truncation):
    """lambda(S) of one query, eqs. 14-16: for y_h > y_l,
    |delta NDCG@T| * e^x / (1 + e^x)^2 with x = s_h - s_l + mu; the
    |delta NDCG@T| comes from ``ndcg_score``."""
    n = len(y)
    grad = np.zeros(n)
    for h in range(n):
        for lo in range(n):
            if y[h] <= y[lo]:
                continue
            delta = _swap_delta(ndcg_score, y, s, h, lo, truncation)
            x = s[h] - s[lo] + mu
            lam = delta * math.exp(x) / (1 + math.exp(x)) ** 2
            grad[h] -= lam
            grad[lo] += lam
    return grad


def _random_query(rng, n, n_labels=3, zero_clicks=0.3):
    y = rng.integers(0, n_labels, n).astype(float)
    c = np.round(rng.uniform(0, 1, n), 2) * (rng.random(n) > zero_clicks)
    s = rng.normal(size=n)  # distinct scores: the swap deltas are unambiguous
    return y, c, s


def _objective(y, offsets, w=None, **params):
    return LambdaRankMultiObjective(y, offsets, w, **params)


def _gradient(obj, s):
    grad = np.full(len(s), np.nan, dtype=np.float32)
    hess = np.full(len(s), np.nan, dtype=np.float32)
    obj.gradient_hessian(np.asarray(s, dtype=np.float64), grad, hess)
    return grad, hess


# -- lambda(C) ---------------------------------------------------------------


@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("sigma", [1.0, 2.0])
def test_click_lambdas_match_brute_force(normalize, sigma):
    rng = np.random.default_rng(0)
    sizes = [12, 7, 15, 2, 9]
    parts = [_random_query(rng, n) for n in sizes]
    y, c, s = (np.concatenate(p) for p in zip(*parts))
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    obj = _objective(
        y, offsets, y_secondary=c, secondary_weight=0.5, sigma=sigma,
        truncation_level=max(sizes), normalize_lambdas=normalize,
    )
    grad, hess = obj.click_lambdas(s)
    assert np.any(grad != 0)
    for q in range(len(sizes)):
        sl = slice(offsets[q], offsets[q + 1])
        ref_grad, ref_hess = _click_reference(y[sl], c[sl], s[sl], sigma, normalize)
        np.testing.assert_allclose(grad[sl], ref_grad, rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(hess[sl], ref_hess, rtol=1e-10, atol=1e-13)


def test_click_lambdas_single_pair_weight_is_delta_cndcg():
    # Only rows 1 and 3 share a label with both click rates non-zero and
    # different; the other rows are unclicked or alone in their label.
    y = np.array([2.0, 1.0, 0.0, 1.0, 0.0, 1.0])
    c = np.array([0.9, 0.2, 0.4, 0.7, 0.0, 0.0])
    s = np.array([0.5, 1.2, -0.3, 0.1, 0.8, 0.0])
    obj = _objective(
        y, np.array([0, 6]), y_secondary=c, secondary_weight=1.0,
        normalize_lambdas=False,
    )
    grad, hess = obj.click_lambdas(s)
    delta = _swap_delta(cndcg_score, c, s, 1, 3, None)
    p = expit(-(s[3] - s[1]))  # row 3 is clicked more but ranked lower
    expected = np.zeros(6)
    expected[3], expected[1] = -delta * p, delta * p
    np.testing.assert_allclose(grad, expected, rtol=1e-12)
    np.testing.assert_allclose(hess[[1, 3]], delta * p * (1 - p), rtol=1e-12)
    assert np.all(hess[[0, 2, 4, 5]] == 0)


def test_click_lambdas_zero_across_primary_labels_and_without_clicks():
    # Query 0: every primary label distinct, so no pair qualifies.
    # Query 1: the equal-label documents all have zero clicks except one.
    # Query 2: equal labels, equal non-zero clicks: nothing to order.
    y = np.array([0.0, 1.0, 2.0, 3.0, 1.0, 1.0, 1.0, 0.0, 2.0, 2.0])
    c = np.array([0.1, 0.5, 0.2, 0.9, 0.6, 0.0, 0.0, 0.3, 0.4, 0.4])
    s = np.linspace(1.0, -1.0, 10)
    offsets = np.array([0, 4, 8, 10])
    obj = _objective(y, offsets, y_secondary=c, secondary_weight=0.5)
    grad, hess = obj.click_lambdas(s)
    assert np.all(grad == 0) and np.all(hess == 0)
    # The blend is then exactly (1 - w) times the primary lambdas.
    primary = LambdaRankObjective(y, offsets)
    g_plain, h_plain = _gradient(primary, s)
    g_mix, h_mix = _gradient(obj, s)
    np.testing.assert_allclose(g_mix, 0.5 * g_plain, rtol=1e-6)
    np.testing.assert_allclose(h_mix, 0.5 * h_plain, rtol=1e-6)


def test_click_lambdas_respect_truncation_level():
    # As lambda(L) (LightGBM's truncation): with truncation_level=2 only the
    # pairs whose better-ranked document is in the top 2 count, and the
    # normaliser is the maximum CDCG@2. Rows are in rank order, one label.
    y = np.zeros(5)
    c = np.array([0.5, 0.6, 0.2, 0.8, 0.3])
    s = np.array([4.0, 3.0, 2.0, 1.0, 0.0])
    gain = np.exp2(4 * c) - 1
    disc = 1 / np.log2(np.arange(5) + 2)
    max2 = np.sum(np.sort(gain)[::-1][:2] * disc[:2])
    expected = np.zeros(5)
    for i in range(2):
        for j in range(i + 1, 5):
            hi, lo = (i, j) if c[i] > c[j] else (j, i)
            lam = (gain[hi] - gain[lo]) * (disc[i] - disc[j]) / max2 * expit(-(s[hi] - s[lo]))
            expected[hi] -= lam
            expected[lo] += lam
    cut = _objective(y, np.array([0, 5]), y_secondary=c, secondary_weight=0.5,
                     truncation_level=2, normalize_lambdas=False).click_lambdas(s)[0]
    np.testing.assert_allclose(cut, expected, rtol=1e-12)


def test_secondary_weight_zero_is_plain_lambdarank_exactly():
    rng = np.random.default_rng(3)
    sizes = [20, 11, 30]
    parts = [_random_query(rng, n) for n in sizes]
    y, c, s = (np.concatenate(p) for p in zip(*parts))
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    plain = _gradient(LambdaRankObjective(y, offsets, truncation_level=10), s)
    for kwargs in (dict(), dict(y_secondary=c)):
        multi = _gradient(_objective(y, offsets, truncation_level=10, **kwargs), s)
        np.testing.assert_array_equal(multi[0], plain[0])
        np.testing.assert_array_equal(multi[1], plain[1])


def test_blend_of_primary_and_click_lambdas():
    rng = np.random.default_rng(5)
    y, c, s = _random_query(rng, 25)
    offsets = np.array([0, 25])
    w = rng.uniform(0.5, 2.0, 25)
    obj = _objective(y, offsets, w, y_secondary=c, secondary_weight=0.3)
    g_plain, h_plain = _gradient(LambdaRankObjective(y, offsets, w), s)
    g_c, h_c = obj.click_lambdas(s)
    grad, hess = _gradient(obj, s)
    np.testing.assert_allclose(grad, 0.7 * g_plain + 0.3 * g_c * w, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(hess, 0.7 * h_plain + 0.3 * h_c * w, rtol=1e-5, atol=1e-7)


# -- lambda(S) ---------------------------------------------------------------


@pytest.mark.parametrize("mu", [0.0, 1.5, -0.7])
@pytest.mark.parametrize("truncation", [None, 3])
def test_sigmoid_lambdas_match_pairwise_formula(mu, truncation):
    rng = np.random.default_rng(7)
    sizes = [10, 6, 13]
    parts = [_random_query(rng, n, n_labels=4) for n in sizes]
    y, _, s = (np.concatenate(p) for p in zip(*parts))
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    obj = _objective(
        y, offsets, lambda_schedule="linear", schedule_eta=0.1,
        leaf_estimation="gradient", sigmoid_mu=mu, sigmoid_truncation=truncation,
    )
    grad = obj.sigmoid_lambdas(s)
    for q in range(len(sizes)):
        sl = slice(offsets[q], offsets[q + 1])
        np.testing.assert_allclose(
            grad[sl], _sigmoid_reference(y[sl], s[sl], mu, truncation),
            rtol=1e-10, atol=1e-14,
        )
    if truncation is not None:
        # Pairs of two documents both ranked >= T add nothing (eq. 16): row 3
        # (rank 3) differs in label only from rows 4 and 5, also below T.
        y2 = np.array([0.0, 0.0, 0.0, 0.0, 1.0, 2.0])
        s2 = np.array([6.0, 5.0, 4.0, 3.0, 2.0, 1.0])
        obj2 = _objective(y2, np.array([0, 6]), lambda_schedule="linear", schedule_eta=0.1,
                          leaf_estimation="gradient", sigmoid_truncation=3, sigmoid_mu=mu)
        g2 = obj2.sigmoid_lambdas(s2)
        assert g2[3] == 0.0
        assert g2[4] != 0.0 and g2[5] != 0.0


def test_sigmoid_lambdas_are_the_gradient_of_the_sigmoid_cost():
    """With |delta NDCG| held at its value for the current ranking, lambda(S)
    is the gradient of sum over pairs |delta| * O(S), O(S) = 1 / (1 + exp(s_h
    - s_l + mu)) (eq. 13)."""
    rng = np.random.default_rng(11)
    n, mu = 11, 0.4
    y = rng.integers(0, 3, n).astype(float)
    s = rng.normal(size=n)
    pairs = [
        (h, lo, _swap_delta(ndcg_score, y, s, h, lo, None))
        for h in range(n) for lo in range(n) if y[h] > y[lo]
    ]

    def cost(x):
        return sum(d * expit(-(x[h] - x[lo] + mu)) for h, lo, d in pairs)

    obj = _objective(y, np.array([0, n]), lambda_schedule="exponential", schedule_eta=1.0,
                     leaf_estimation="gradient", sigmoid_mu=mu)
    grad = obj.sigmoid_lambdas(s)
    eps = 1e-5
    numeric = np.empty(n)
    for r in range(n):
        e = np.zeros(n)
        e[r] = eps
        numeric[r] = (cost(s + e) - cost(s - e)) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-10)


def test_sigmoid_lambdas_vanish_far_from_the_centre():
    # "Give up on lost causes" and "don't fix what isn't broken": a pair far
    # on either side of s_l - s_h = mu gets (almost) no gradient, the
    # logistic RankNet gradient does not vanish for the misordered one.
    y = np.array([1.0, 0.0])
    obj = _objective(y, np.array([0, 2]), lambda_schedule="linear", schedule_eta=0.1,
                     leaf_estimation="gradient")
    near = np.abs(obj.sigmoid_lambdas(np.array([0.0, 0.0]))).max()
    for gap in (30.0, -30.0):
        far = np.abs(obj.sigmoid_lambdas(np.array([gap, 0.0]))).max()
        assert far < 1e-10 * near


# -- schedules and iteration dependence ---------------------------------------


def test_schedule_weights_hand_computed():
    np.testing.assert_allclose(
        schedule_weights("linear", 0.2, 0.3, 6), [0.2, 0.5, 0.8, 1.0, 1.0, 1.0]
    )
    # w_1 = 0.1 + e^-2, w_2 = w_1 + e^-1, w_3 = w_2 + e^(-2/3) > 1 -> 1.
    w1 = 0.1 + 0.1353352832366127
    w2 = w1 + 0.36787944117144233
    np.testing.assert_allclose(
        schedule_weights("exponential", 0.1, 2.0, 5), [0.1, w1, w2, 1.0, 1.0], rtol=1e-15
    )
    # Slow growth: eta = 10 adds e^-10, e^-5, e^-10/3 ...
    w = schedule_weights("exponential", 0.0, 10.0, 4)
    np.testing.assert_allclose(
        w, np.cumsum([0.0, math.exp(-10), math.exp(-5), math.exp(-10 / 3)]), rtol=1e-14
    )


def test_schedule_weights_paper_eta_saturates_early():
    # The note in the docstring: eta = 100 from w0 = 0.25 reaches 1 at m = 39.
    w = schedule_weights("exponential", 0.25, 100.0, 1000)
    assert w[38] < 1.0 and w[39] == 1.0
    assert np.all(np.diff(w) >= 0)


def test_noncumulative_schedule_is_exp_of_minus_eta_over_m():
    # Figure 6's curve, not a running sum: w_m = exp(-eta / m) once above w0.
    np.testing.assert_allclose(
        schedule_weights("exponential_noncumulative", 0.1, 2.0, 6),
        [0.1, math.exp(-2), math.exp(-1), math.exp(-2 / 3), math.exp(-0.5), math.exp(-0.4)],
        rtol=1e-15,
    )
    # w0 = 0: the plain curve from m = 1 on (and its limit 0 at m = 0).
    w = schedule_weights("exponential_noncumulative", 0.0, 10.0, 50)
    assert w[0] == 0.0
    np.testing.assert_allclose(w[1:], [math.exp(-10 / m) for m in range(1, 50)], rtol=1e-15)


def test_noncumulative_schedule_keeps_w0_as_a_floor():
    # The docstring's numbers for the paper's eta = 100 and w0 = 0.25:
    # exp(-100 / 72) < 0.25 < exp(-100 / 73); 0.37 at m = 100, 0.90 at 1000.
    w = schedule_weights("exponential_noncumulative", 0.25, 100.0, 1001)
    assert np.all(w[:73] == 0.25)
    assert w[73] == math.exp(-100 / 73) > 0.25
    assert w[100] == pytest.approx(math.exp(-1), rel=1e-15)
    assert w[1000] == pytest.approx(math.exp(-0.1), rel=1e-15)
    assert np.all(np.diff(w) >= 0) and w.max() < 1.0
    # Only m / eta matters: eta = M / 10 over M = 100 trees follows the
    # paper's eta = 100 over 1000 trees.
    small = schedule_weights("exponential_noncumulative", 0.25, 10.0, 101)
    np.testing.assert_allclose(small, w[::10], rtol=1e-14)


@pytest.mark.parametrize("schedule", ["exponential", "linear"])
def test_noncumulative_option_leaves_the_other_schedules_alone(schedule):
    # The recursions of the text, summed here by hand.
    w0, eta, n = 0.05, 4.0 if schedule == "exponential" else 0.07, 30
    expected, w = [], w0
    for m in range(n):
        if m:
            w = min(1.0, w + (math.exp(-eta / m) if schedule == "exponential" else eta))
        expected.append(w)
    np.testing.assert_allclose(schedule_weights(schedule, w0, eta, n), expected, rtol=1e-14)


@pytest.mark.parametrize("schedule, eta", [("linear", 0.15), ("exponential", 3.0),
                                           ("exponential_noncumulative", 3.0)])
def test_iteration_m_uses_w_m(schedule, eta):
    rng = np.random.default_rng(13)
    sizes = [9, 14]
    parts = [_random_query(rng, n) for n in sizes]
    y, _, s = (np.concatenate(p) for p in zip(*parts))
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    obj = _objective(y, offsets, lambda_schedule=schedule, schedule_w0=0.1,
                     schedule_eta=eta, leaf_estimation="gradient")
    plain, _ = _gradient(LambdaRankObjective(y, offsets), s)
    weights = schedule_weights(schedule, 0.1, eta, 8)
    for m in (0, 3, 7, 2):
        obj.set_iteration(m)
        assert obj.current_weight() == weights[m]
        grad, hess = _gradient(obj, s)
        blend = (1 - weights[m]) * plain.astype(float) + weights[m] * obj.sigmoid_lambdas(s)
        for q in range(len(sizes)):
            sl = slice(offsets[q], offsets[q + 1])
            np.testing.assert_allclose(grad[sl], blend[sl] / blend[sl].std(), rtol=2e-5, atol=1e-6)
        assert np.all(hess == 1)


# -- gradient-descent leaves ---------------------------------------------------


def test_gradient_leaves_normalise_each_query_by_its_std():
    rng = np.random.default_rng(17)
    sizes = [8, 1, 15, 6]
    parts = [_random_query(rng, n) for n in sizes]
    y, _, s = (np.concatenate(p) for p in zip(*parts))
    offsets_zero = slice(sizes[0] + 1, sizes[0] + 1 + sizes[2])
    y[offsets_zero] = 0.0  # a query without relevant documents
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    w = rng.uniform(0.5, 2.0, len(y))
    plain, _ = _gradient(LambdaRankObjective(y, offsets), s)
    grad, hess = _gradient(_objective(y, offsets, leaf_estimation="gradient"), s)
    grad_w, hess_w = _gradient(_objective(y, offsets, w, leaf_estimation="gradient"), s)
    for q in (0, 3):
        sl = slice(offsets[q], offsets[q + 1])
        g = plain[sl].astype(float)
        np.testing.assert_allclose(grad[sl], g / g.std(), rtol=1e-5)
        assert grad[sl].astype(float).std() == pytest.approx(1.0, rel=1e-5)
    assert np.all(grad[offsets_zero] == 0) and grad[sizes[0]] == 0  # nothing to order
    assert np.all(hess == 1)
    np.testing.assert_allclose(grad_w, grad * w, rtol=1e-6)
    np.testing.assert_allclose(hess_w, w.astype(np.float32))


# -- misc ------------------------------------------------------------------------


@needs_two_threads
def test_same_result_on_one_and_two_threads():
    rng = np.random.default_rng(19)
    sizes = rng.integers(1, 40, 120)
    parts = [_random_query(rng, n) for n in sizes]
    y, c, s = (np.concatenate(p) for p in zip(*parts))
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    obj = _objective(y, offsets, y_secondary=c, secondary_weight=0.3,
                     lambda_schedule="linear", schedule_eta=0.1, leaf_estimation="gradient")
    obj.set_iteration(2)
    with numba_threads(1):  # the serial twin of the lambdarank kernel
        one = _gradient(obj, s)
    with numba_threads(2), parallel_kernels_only() as picked:
        two = _gradient(obj, s)
    assert_ran_in_parallel(picked, "_lambdarank_gradient_hessian")
    np.testing.assert_array_equal(one[0], two[0])
    np.testing.assert_array_equal(one[1], two[1])


def test_registry_and_name():
    assert OBJECTIVES["lambdarank_multi"] is LambdaRankMultiObjective
    obj = _objective(np.array([1.0, 0.0]), np.array([0, 2]))
    assert obj.name == "lambdarank_multi"
    assert obj.current_weight() == 0.0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(secondary_weight=0.5), "needs secondary labels"),
        (dict(secondary_weight=1.5, y_secondary=[0.1, 0.2]), "secondary_weight must lie in"),
        (dict(y_secondary=[0.1, 1.2]), r"y_secondary must lie in \[0, 1\]"),
        (dict(y_secondary=[0.1, -0.2]), r"y_secondary must lie in \[0, 1\]"),
        (dict(y_secondary=[0.1, np.nan]), "y_secondary contains NaN"),
        (dict(y_secondary=[0.1]), r"y_secondary must have shape \(2,\)"),
        (dict(lambda_schedule="cosine"), "lambda_schedule must be one of"),
        (dict(lambda_schedule="linear", leaf_estimation="gradient"), "schedule_eta must be given"),
        (dict(lambda_schedule="linear", schedule_eta=0.1), "leaf_estimation='gradient'"),
        (dict(lambda_schedule="linear", schedule_eta=-1.0, leaf_estimation="gradient"),
         "schedule_eta must be a positive"),
        (dict(schedule_w0=2.0), "schedule_w0 must lie in"),
        (dict(leaf_estimation="line_search"), "leaf_estimation must be one of"),
        (dict(sigmoid_truncation=0), "sigmoid_truncation must be a positive integer"),
        (dict(sigmoid_mu=np.inf), "sigmoid_mu must be a finite"),
        (dict(sigmoid=1.0), "Unknown parameters"),
    ],
)
def test_invalid_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        LambdaRankMultiObjective(np.array([1.0, 0.0]), np.array([0, 2]), **kwargs)


def test_schedule_weights_invalid():
    with pytest.raises(ValueError, match="schedule must be one of"):
        schedule_weights("step", 0.1, 1.0, 3)
    with pytest.raises(ValueError, match="w0 must lie in"):
        schedule_weights("linear", -0.1, 1.0, 3)
