"""The calibrated-ranking objectives (SigmoidCE, SoftmaxCE, their sum and RCR)
against a direct NumPy transcription of Bai et al. (CIKM 2023) eqs. 1, 3, 5,
12 and 20, finite differences, hand-computed two-document cases and the
ListNet objective."""

import numba
import numpy as np
import pytest
from scipy.special import expit, log_expit, logsumexp

from sklearn_ltr._objectives import OBJECTIVES, ListNetObjective
from sklearn_ltr._objectives.rcr import (
    RCRObjective,
    SigmoidCEObjective,
    SigmoidSoftmaxCEObjective,
    SoftmaxCEObjective,
)

CASES = [
    ("sigmoid", {}),
    ("softmax", {}),
    ("sigmoid+softmax", {"alpha": 0.3}),
    ("rcr", {"alpha": 0.3}),
    ("rcr", {"alpha": 1.0}),
]


# -- reference: the paper's formulas, written independently ------------------


def _reference_query_loss(s, y, name, alpha):
    """Eq. 20 / eq. 5 / eq. 1 / eq. 3 for one query, straight from the paper."""
    point = np.sum(-y * log_expit(s) - (1 - y) * log_expit(-s))  # eq. 1
    C = y.sum()
    if C > 0 and len(s) >= 2:
        if name in ("softmax", "sigmoid+softmax"):
            log_share = s - logsumexp(s)  # eq. 3
        else:
            log_share = log_expit(s) - logsumexp(log_expit(s))  # eq. 12, T = sigmoid
        listwise = -np.sum(y * log_share) / C
    else:
        listwise = 0.0
    if name == "sigmoid":
        return point
    if name == "softmax":
        return listwise
    return (1 - alpha) * point + alpha * listwise


def _reference_loss(s, y, offsets, name, alpha):
    return sum(
        _reference_query_loss(s[a:b], y[a:b], name, alpha)
        for a, b in zip(offsets[:-1], offsets[1:])
    )


def _grad_hess(objective, s):
    g = np.empty(len(s), dtype=np.float32)
    h = np.empty(len(s), dtype=np.float32)
    objective.gradient_hessian(np.ascontiguousarray(s, dtype=np.float64), g, h)
    return g.astype(np.float64), h.astype(np.float64)


def _random_queries(rng, fractional):
    sizes = np.array([6, 1, 4, 0, 9, 3, 2])
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    n = offsets[-1]
    y = rng.random(n) if fractional else (rng.random(n) < 0.4).astype(float)
    y[offsets[2] : offsets[3]] = 0.0  # a query without positives
    y[offsets[4]] = 1.0  # the big query has a positive
    s = rng.normal(scale=2.0, size=n)
    return s, y, offsets


def _fd_gradient(f, s, eps=1e-5):
    out = np.empty_like(s)
    for i in range(len(s)):
        e = np.zeros_like(s)
        e[i] = eps
        out[i] = (f(s + e) - f(s - e)) / (2 * eps)
    return out


def _fd_hessian_diagonal(f, s, eps=1e-4):
    out = np.empty_like(s)
    f0 = f(s)
    for i in range(len(s)):
        e = np.zeros_like(s)
        e[i] = eps
        out[i] = (f(s + e) - 2 * f0 + f(s - e)) / eps**2
    return out


# -- loss, gradient and hessian ------------------------------------------------


@pytest.mark.parametrize("fractional", [False, True], ids=["binary", "fractional"])
@pytest.mark.parametrize("name, params", CASES)
def test_loss_matches_paper_formula(name, params, fractional):
    s, y, offsets = _random_queries(np.random.default_rng(0), fractional)
    objective = OBJECTIVES[name](y, offsets, **params)
    expected = _reference_loss(s, y, offsets, name, params.get("alpha"))
    assert objective.loss(s) * objective.n_queries == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("fractional", [False, True], ids=["binary", "fractional"])
@pytest.mark.parametrize("name, params", CASES)
def test_gradient_is_finite_difference_of_reference_loss(name, params, fractional):
    for seed in range(3):
        s, y, offsets = _random_queries(np.random.default_rng(seed), fractional)
        objective = OBJECTIVES[name](y, offsets, **params)
        g, _ = _grad_hess(objective, s)
        fd = _fd_gradient(lambda x: _reference_loss(x, y, offsets, name, params.get("alpha")), s)
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fractional", [False, True], ids=["binary", "fractional"])
@pytest.mark.parametrize("name, params", CASES[:3])
def test_hessian_is_exact_diagonal_for_sigmoid_and_softmax(name, params, fractional):
    s, y, offsets = _random_queries(np.random.default_rng(1), fractional)
    objective = OBJECTIVES[name](y, offsets, **params)
    _, h = _grad_hess(objective, s)
    fd = _fd_hessian_diagonal(lambda x: _reference_loss(x, y, offsets, name, params.get("alpha")), s)
    np.testing.assert_allclose(h, fd, rtol=1e-4, atol=1e-5)


def _gauss_newton_diagonal(s, y, offsets):
    """diag(J^T (diag(p) - p p^T) J) with J = d log sigmoid(s) / ds, by matrices."""
    out = np.zeros_like(s)
    for a, b in zip(offsets[:-1], offsets[1:]):
        if b - a < 2 or y[a:b].sum() == 0:
            continue
        z = log_expit(s[a:b])
        p = np.exp(z - logsumexp(z))
        J = np.diag(expit(-s[a:b]))
        out[a:b] = np.diag(J.T @ (np.diag(p) - np.outer(p, p)) @ J)
    return out


@pytest.mark.parametrize("fractional", [False, True], ids=["binary", "fractional"])
@pytest.mark.parametrize("alpha", [0.3, 1.0])
def test_rcr_hessian_is_max_of_exact_and_gauss_newton(alpha, fractional):
    s, y, offsets = _random_queries(np.random.default_rng(2), fractional)
    _, h = _grad_hess(RCRObjective(y, offsets, alpha=alpha), s)
    exact_list = _fd_hessian_diagonal(lambda x: _reference_loss(x, y, offsets, "rcr", 1.0), s)
    gauss_newton = _gauss_newton_diagonal(s, y, offsets)
    sig = expit(s)
    expected = (1 - alpha) * sig * (1 - sig) + alpha * np.maximum(exact_list, gauss_newton)
    np.testing.assert_allclose(h, expected, rtol=1e-4, atol=1e-5)
    # The exact diagonal really is negative somewhere in these queries, so the
    # choice matters, and the hessians used are positive wherever a listwise
    # or pointwise term exists.
    assert exact_list.min() < -1e-3
    sizes = np.diff(offsets)
    has_list = (sizes >= 2) & (np.add.reduceat(y, offsets[:-1]) * (sizes > 0) > 0)
    active = np.repeat(has_list, sizes) | (alpha < 1)
    assert np.all(h[active] > 0)


def test_two_documents_by_hand():
    # s = (0, 0), y = (1, 0): sigmoid = p = (1/2, 1/2), t = (1, 0), a = 1/2.
    s = np.zeros(2)
    y = np.array([1.0, 0.0])
    offsets = np.array([0, 2])
    g, h = _grad_hess(SigmoidCEObjective(y, offsets), s)
    np.testing.assert_allclose(g, [-0.5, 0.5])
    np.testing.assert_allclose(h, [0.25, 0.25])
    g, h = _grad_hess(SoftmaxCEObjective(y, offsets), s)
    np.testing.assert_allclose(g, [-0.5, 0.5])
    np.testing.assert_allclose(h, [0.25, 0.25])
    # ListCE(sigmoid): g = a (p - t) = (-1/4, 1/4). Gauss-Newton a^2 p (1-p) =
    # 1/16; the first document adds (t - p) sig a = 1/8 (exact 3/16), the
    # second's exact diagonal 1/16 - 1/8 = -1/16 is replaced by 1/16.
    g, h = _grad_hess(RCRObjective(y, offsets, alpha=1.0), s)
    np.testing.assert_allclose(g, [-0.25, 0.25])
    np.testing.assert_allclose(h, [3 / 16, 1 / 16])
    g, h = _grad_hess(RCRObjective(y, offsets, alpha=0.5), s)
    np.testing.assert_allclose(g, [0.5 * -0.5 + 0.5 * -0.25, 0.5 * 0.5 + 0.5 * 0.25])
    np.testing.assert_allclose(h, [0.5 * 0.25 + 0.5 * 3 / 16, 0.5 * 0.25 + 0.5 * 1 / 16])


def test_two_documents_by_hand_unequal_scores():
    # s = (log 3, 0): sigmoid = (3/4, 1/2), p = (3/5, 2/5); y = (0.5, 0.5),
    # t = (1/2, 1/2); a = (1/4, 1/2).
    s = np.array([np.log(3.0), 0.0])
    y = np.array([0.5, 0.5])
    g, h = _grad_hess(RCRObjective(y, np.array([0, 2]), alpha=1.0), s)
    np.testing.assert_allclose(g, [0.25 * 0.1, 0.5 * -0.1], rtol=1e-6)
    gn = np.array([0.25**2 * 0.6 * 0.4, 0.5**2 * 0.4 * 0.6])
    np.testing.assert_allclose(h, gn + [0.0, 0.1 * 0.5 * 0.5], rtol=1e-6)


def test_alpha_endpoints():
    s, y, offsets = _random_queries(np.random.default_rng(3), fractional=True)
    g0, h0 = _grad_hess(RCRObjective(y, offsets, alpha=0.0), s)
    gs, hs = _grad_hess(SigmoidCEObjective(y, offsets), s)
    np.testing.assert_array_equal(g0, gs)
    np.testing.assert_array_equal(h0, hs)
    # sigmoid+softmax at alpha=1 is SoftmaxCE, which is ListNet's linear target.
    g1, h1 = _grad_hess(SigmoidSoftmaxCEObjective(y, offsets, alpha=1.0), s)
    gm, hm = _grad_hess(SoftmaxCEObjective(y, offsets), s)
    gl, hl = _grad_hess(ListNetObjective(y, offsets), s)
    np.testing.assert_array_equal(g1, gm)
    np.testing.assert_allclose(gm, gl, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(hm, hl, rtol=1e-6, atol=1e-7)
    # rcr at alpha=1 is pure ListCE(sigmoid) (the pointwise part vanishes).
    g1, _ = _grad_hess(RCRObjective(y, offsets, alpha=1.0), s)
    fd = _fd_gradient(lambda x: _reference_loss(x, y, offsets, "rcr", 1.0), s)
    np.testing.assert_allclose(g1, fd, rtol=1e-5, atol=1e-6)
    assert RCRObjective(y, offsets, alpha=1.0).loss(s) * 7 == pytest.approx(
        _reference_loss(s, y, offsets, "rcr", 1.0)
    )


@pytest.mark.parametrize("name, params", CASES)
def test_degenerate_queries_have_only_the_pointwise_part(name, params):
    # One document, no positive label, and an empty query.
    y = np.array([1.0, 0.0, 0.0, 0.0])
    offsets = np.array([0, 1, 1, 4])
    s = np.array([0.3, -1.0, 2.0, 0.5])
    g, h = _grad_hess(OBJECTIVES[name](y, offsets, **params), s)
    point_weight = {"sigmoid": 1.0, "softmax": 0.0}.get(name, 1 - params.get("alpha", 0))
    sig = expit(s)
    np.testing.assert_allclose(g, point_weight * (sig - y), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(h, point_weight * sig * (1 - sig), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name, params", CASES)
def test_queries_are_independent(name, params):
    s, y, offsets = _random_queries(np.random.default_rng(4), fractional=False)
    g, h = _grad_hess(OBJECTIVES[name](y, offsets, **params), s)
    for a, b in zip(offsets[:-1], offsets[1:]):
        gq, hq = _grad_hess(OBJECTIVES[name](y[a:b], np.array([0, b - a]), **params), s[a:b])
        np.testing.assert_array_equal(g[a:b], gq)
        np.testing.assert_array_equal(h[a:b], hq)


@pytest.mark.parametrize("name, params", CASES)
def test_sample_weights_multiply_rows(name, params):
    s, y, offsets = _random_queries(np.random.default_rng(5), fractional=True)
    w = np.random.default_rng(6).uniform(0, 3, size=len(y))
    g, h = _grad_hess(OBJECTIVES[name](y, offsets, **params), s)
    gw, hw = _grad_hess(OBJECTIVES[name](y, offsets, sample_weight=w, **params), s)
    np.testing.assert_allclose(gw, (g * w).astype(np.float32), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(hw, (h * w).astype(np.float32), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name, params", CASES)
def test_same_result_on_one_and_two_threads(name, params):
    rng = np.random.default_rng(7)
    sizes = rng.integers(1, 40, size=300)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    y = (rng.random(offsets[-1]) < 0.3).astype(float)
    s = rng.normal(size=offsets[-1])
    objective = OBJECTIVES[name](y, offsets, **params)
    previous = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = _grad_hess(objective, s), objective.loss(s)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = _grad_hess(objective, s), objective.loss(s)
    finally:
        numba.set_num_threads(previous)
    np.testing.assert_array_equal(one[0][0], two[0][0])
    np.testing.assert_array_equal(one[0][1], two[0][1])
    assert one[1] == two[1]


@pytest.mark.parametrize("name, params", CASES)
def test_extreme_scores_stay_finite(name, params):
    y = np.array([1.0, 0.0, 1.0, 0.0])
    offsets = np.array([0, 4])
    for s in ([800.0, -800.0, -800.0, 800.0], [-800.0] * 4, [40.0, 39.0, -40.0, -41.0]):
        s = np.array(s)
        objective = OBJECTIVES[name](y, offsets, **params)
        g, h = _grad_hess(objective, s)
        assert np.all(np.isfinite(g)) and np.all(np.isfinite(h)) and np.all(h >= 0)
        assert np.isfinite(objective.loss(s))
        assert objective.loss(s) == pytest.approx(_reference_loss(s, y, offsets, name, params.get("alpha")))


def test_init_score():
    y = np.array([1.0, 0.0, 0.0, 0.0, 0.5])
    offsets = np.array([0, 2, 5])
    for cls in (SigmoidCEObjective, SigmoidSoftmaxCEObjective, RCRObjective):
        assert cls(y, offsets).init_score() == pytest.approx(np.log(0.3 / 0.7))
        w = np.array([3.0, 1.0, 1.0, 1.0, 0.0])  # weighted mean 3/6
        assert cls(y, offsets, sample_weight=w).init_score() == pytest.approx(0.0, abs=1e-12)
        # The log-odds of the mean minimise the pointwise loss of a constant.
        c = cls(y, offsets).init_score()
        assert np.mean(expit(c) - y) == pytest.approx(0.0, abs=1e-12)
        assert np.isfinite(cls(np.zeros(5), offsets).init_score())
    assert SoftmaxCEObjective(y, offsets).init_score() == 0.0


@pytest.mark.parametrize("weighted", [False, True])
def test_init_score_from_statistics_of_parts(weighted):
    # A distributed fit adds the statistics of each worker's queries; the
    # baseline must be that of all rows, not of any one part.
    rng = np.random.default_rng(0)
    y = (rng.random(40) < 0.3).astype(float)
    w = rng.uniform(0.5, 2.0, size=40) if weighted else None
    offsets = np.arange(0, 41, 5)
    whole = SigmoidCEObjective(y, offsets, sample_weight=w)
    parts = [
        SigmoidCEObjective(y[a:b], offsets[:4] if a == 0 else offsets[3:] - 15,
                           sample_weight=None if w is None else w[a:b])
        for a, b in ((0, 15), (15, 40))
    ]
    total = sum(part.init_score_statistics() for part in parts)
    assert SigmoidCEObjective.init_score_from(total) == pytest.approx(whole.init_score(), abs=1e-14)
    assert parts[0].init_score() != pytest.approx(whole.init_score())
    # Weights summing to zero fall back to the plain mean, as a single fit does.
    zero = SigmoidCEObjective(y, offsets, sample_weight=np.zeros(40))
    assert zero.init_score() == pytest.approx(np.log(y.mean() / (1 - y.mean())))
    assert SoftmaxCEObjective.init_score_from(total) == 0.0


@pytest.mark.parametrize("name", ["sigmoid", "softmax", "sigmoid+softmax", "rcr"])
@pytest.mark.parametrize("bad", [[0.0, 2.0], [-0.5, 1.0]])
def test_labels_outside_unit_interval_raise(name, bad):
    with pytest.raises(ValueError, match=r"y must be binary or lie in \[0, 1\]"):
        OBJECTIVES[name](np.array(bad), np.array([0, 2]))


def test_bad_alpha_raises():
    y, offsets = np.array([1.0, 0.0]), np.array([0, 2])
    for alpha in (-0.1, 1.5, "a", True):
        with pytest.raises(ValueError, match="alpha"):
            RCRObjective(y, offsets, alpha=alpha)
    with pytest.raises(ValueError, match="takes no alpha"):
        SigmoidCEObjective(y, offsets, alpha=0.5)
    with pytest.raises(ValueError, match="Unknown parameters"):
        RCRObjective(y, offsets, beta=1)
