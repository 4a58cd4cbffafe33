"""Property-based tests over random small ranking problems, for every
registered objective and every ranker:

- listwise and pairwise gradients sum to zero within each query;
- no gradient crosses a query boundary (another query's labels do not change
  this query's gradients);
- shifting one query's scores by a constant leaves the ranking objectives'
  gradients unchanged;
- fitting never produces NaN or inf predictions.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import RANKER_IDS, RANKERS, fit_labels

from sklearn_ltr._gbdt.common import G_H_DTYPE
from sklearn_ltr._objectives import OBJECTIVES

# Objectives whose loss depends on score differences within a query only,
# hence zero-sum gradients and invariance to a per-query shift. The sigmoid
# (pointwise) and calibrated mixtures depend on absolute scores.
RANKING = ["lambdarank", "lambdarank_multi", "lambdarank_pairwise", "lambdarank_unbiased",
           "lambdarank_ipw", "lambdarank_additive", "xendcg", "listnet", "softmax", "yetirank"]
CALIBRATED = ["sigmoid", "sigmoid+softmax", "rcr"]
SETTINGS = settings(
    max_examples=40, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)


@st.composite
def problems(draw, binary=False):
    """Queries of 1-8 documents, labels 0-4 (or 0/1), scores in [-5, 5]."""
    sizes = draw(st.lists(st.integers(1, 8), min_size=2, max_size=6))
    n = sum(sizes)
    top = 1 if binary else 4
    y = np.array(draw(st.lists(st.integers(0, top), min_size=n, max_size=n)), dtype=float)
    # Multiples of 1/64: a per-query shift by an integer is then exact, so
    # it cannot merge or split ties by rounding.
    scores = np.array(draw(st.lists(st.integers(-320, 320), min_size=n, max_size=n))) / 64.0
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    return y, scores, offsets


def _labels_for(name, y):
    # The calibrated family (softmax included) takes labels in [0, 1].
    return y / 4.0 if name in CALIBRATED + ["softmax"] else y


def _objective(name, y, offsets):
    params = {}
    if name == "lambdarank_multi":
        # Tiered lambdas and the iteration-dependent sigmoid term, both on.
        secondary = (np.arange(y.shape[0]) % 3) / 2.0
        params = dict(
            y_secondary=secondary, secondary_weight=0.3, lambda_schedule="linear",
            schedule_eta=0.1, leaf_estimation="gradient",
        )
    elif name == "lambdarank_unbiased":
        # Each document shown at its place in the query; position biases
        # other than 1, so that the lambdas are really divided by them.
        position = np.concatenate([np.arange(1, size + 1) for size in np.diff(offsets)])
        top = np.arange(1.0, 9.0)
        params = dict(position=position, initial_position_bias=(top**-0.5, top**-0.25))
    elif name == "lambdarank_ipw":
        # Propensities below 1, one of them clipped, so that the lambdas are
        # really weighted.
        position = np.concatenate([np.arange(1, size + 1) for size in np.diff(offsets)])
        params = dict(position=position, propensity=np.arange(1.0, 9.0) ** -1.5,
                      propensity_clip=0.05)
    elif name == "lambdarank_additive":
        # Offsets other than 0, so that the lambdas are really taken at
        # shifted scores.
        position = np.concatenate([np.arange(1, size + 1) for size in np.diff(offsets)])
        params = dict(position=position, learning_rate=0.1,
                      initial_position_offset=np.linspace(0.5, -0.5, 8))
    return OBJECTIVES[name](y, offsets, **params)


def _gradients(objective, scores, seed=0):
    n = scores.shape[0]
    grad = np.empty(n, dtype=G_H_DTYPE)
    hess = np.empty(n, dtype=G_H_DTYPE)
    if hasattr(objective, "set_iteration"):
        objective.set_iteration(3)
    objective.prepare_iteration(np.random.default_rng(seed))
    objective.gradient_hessian(scores, grad, hess)
    return grad.astype(float), hess.astype(float)


def test_every_registered_objective_is_tested():
    assert sorted(RANKING + CALIBRATED) == sorted(OBJECTIVES)


@pytest.mark.parametrize("name", RANKING)
@SETTINGS
@given(problem=problems())
def test_ranking_gradients_sum_to_zero_within_each_query(name, problem):
    y, scores, offsets = problem
    y = _labels_for(name, y)
    grad, hess = _gradients(_objective(name, y, offsets), scores)
    assert np.all(np.isfinite(grad)) and np.all(hess >= 0)
    for q in range(offsets.shape[0] - 1):
        g = grad[offsets[q] : offsets[q + 1]]
        assert abs(g.sum()) <= 1e-5 * max(1.0, np.abs(g).sum())


@pytest.mark.parametrize("name", RANKING + CALIBRATED)
@SETTINGS
@given(problem=problems(binary=True), data=st.data())
def test_no_gradient_crosses_a_query_boundary(name, problem, data):
    y, scores, offsets = problem
    grad, _ = _gradients(_objective(name, y, offsets), scores)
    # New labels for the first query only.
    first = slice(offsets[0], offsets[1])
    changed = y.copy()
    size = int(offsets[1])
    changed[first] = data.draw(st.lists(st.integers(0, 1), min_size=size, max_size=size))
    grad_changed, _ = _gradients(_objective(name, changed, offsets), scores)
    np.testing.assert_array_equal(grad_changed[offsets[1] :], grad[offsets[1] :])


@pytest.mark.parametrize("name", RANKING)
@SETTINGS
@given(problem=problems(), shift=st.integers(-20, 20))
def test_a_per_query_shift_of_the_scores_leaves_gradients_unchanged(name, problem, shift):
    y, scores, offsets = problem
    y = _labels_for(name, y)
    grad, hess = _gradients(_objective(name, y, offsets), scores)
    shifted = scores.copy()
    shifted[offsets[1] : offsets[2]] += shift  # the second query only
    grad_s, hess_s = _gradients(_objective(name, y, offsets), shifted)
    np.testing.assert_allclose(grad_s, grad, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(hess_s, hess, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("ranker_class", RANKERS, ids=RANKER_IDS)
@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(problem=problems(), data=st.data())
def test_fitting_never_gives_nan_or_inf_predictions(ranker_class, problem, data):
    y, _, offsets = problem
    n = y.shape[0]
    qid = np.repeat(np.arange(offsets.shape[0] - 1), np.diff(offsets))
    # Features with NaN, +-inf, huge and tiny magnitudes and constant columns.
    values = st.one_of(
        st.floats(-1e300, 1e300, allow_nan=False),
        st.sampled_from([np.nan, np.inf, -np.inf, 0.0, 1e-300]),
    )
    X = np.array(data.draw(st.lists(values, min_size=3 * n, max_size=3 * n))).reshape(n, 3)
    params = dict(n_estimators=3, min_samples_leaf=1, early_stopping=False, random_state=0)
    model = ranker_class(**params).fit(X, fit_labels(ranker_class, y), qid=qid)
    assert np.all(np.isfinite(model.predict(X)))
