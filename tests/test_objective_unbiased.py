"""Unbiased LambdaMART (Hu, Wang, Peng, Li, WWW 2019): the debiased lambdas
and the position-bias estimates against direct formulas, and the estimator
option ``LambdaMARTRanker(position_debiasing="unbiased_lambdamart")``."""

import io
import warnings

import numpy as np
import pytest
from _debiased_lambdas import debiased_lambdas_by_pair
from _threads import assert_ran_in_parallel, needs_two_threads, parallel_kernels_only
from numpy.testing import assert_allclose, assert_array_equal
from scipy.stats import spearmanr
from sklearn import config_context
from sklearn.model_selection import GridSearchCV, GroupKFold

from sklearn_ltr import LambdaMARTRanker, load_model
from sklearn_ltr._objectives import OBJECTIVES
from sklearn_ltr._objectives.unbiased_lambdarank import position_bias_from_costs
from sklearn_ltr.datasets import make_ranking
from sklearn_ltr.metrics import ndcg_score, ndcg_scorer


def _clicks_data(seed, n_queries=6, max_docs=9):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_docs + 1, n_queries)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    n = offsets[-1]
    y = (rng.random(n) < 0.35).astype(float)
    position = np.concatenate([rng.permutation(s) + 1 for s in sizes])
    scores = np.round(rng.normal(size=n), 1)  # ties
    return y, scores, position, offsets


def _objective(y, offsets, position, **kwargs):
    return OBJECTIVES["lambdarank_unbiased"](y, offsets, position=position, **kwargs)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("normalize", [True, False])
def test_lambdas_and_costs_equal_the_pair_by_pair_formulas(seed, normalize):
    y, scores, position, offsets = _clicks_data(seed)
    weights = np.random.default_rng(seed + 10).uniform(0.5, 2, y.shape[0])
    rng = np.random.default_rng(seed + 20)
    n_positions = position.max()
    t_plus = np.concatenate([[1.0], rng.uniform(0.2, 1.0, n_positions - 1)])
    t_minus = np.concatenate([[1.0], rng.uniform(0.5, 1.5, n_positions - 1)])
    objective = _objective(y, offsets, position, sample_weight=weights, sigma=1.5,
                           normalize_lambdas=normalize, truncation_level=4,
                           initial_position_bias=(t_plus, t_minus))
    grad = np.empty(y.shape[0], dtype=np.float32)
    hess = np.empty(y.shape[0], dtype=np.float32)
    objective.gradient_hessian(scores, grad, hess)
    expected_grad, expected_hess, expected_costs = debiased_lambdas_by_pair(
        y, scores, position, offsets, t_plus, t_minus, sigma=1.5, truncation=4,
        normalize=normalize, weights=weights)
    assert np.any(expected_grad != 0)
    assert_allclose(grad, expected_grad, rtol=1e-6, atol=1e-7)
    assert_allclose(hess, expected_hess, rtol=1e-6, atol=1e-7)
    assert_allclose(objective.iteration_statistics(), expected_costs, rtol=1e-12, atol=1e-15)


def test_lambdas_are_the_gradient_of_the_debiased_pairwise_loss():
    # Without the per-query normalisation, a pair's debiased lambda is the
    # derivative of its weighted RankNet loss c / (t+ t-) (Hu et al., eq.
    # 23) with the |delta NDCG| weights held fixed: check by finite
    # differences, with steps too small to change the ranking.
    y, scores, position, offsets = _clicks_data(3, n_queries=3)
    scores = scores + np.arange(scores.shape[0]) * 1e-3  # no ties
    n_positions = position.max()
    rng = np.random.default_rng(0)
    t_plus = np.concatenate([[1.0], rng.uniform(0.2, 1.0, n_positions - 1)])
    t_minus = np.concatenate([[1.0], rng.uniform(0.5, 1.5, n_positions - 1)])
    kwargs = dict(normalize_lambdas=False, initial_position_bias=(t_plus, t_minus), sigma=2.0)

    def loss(s):
        # Sum over pairs of c / (t+ t-), the weights w taken from the
        # ranking at ``scores``.
        total = 0.0
        for q in range(offsets.shape[0] - 1):
            rows = np.arange(offsets[q], offsets[q + 1])
            order = rows[np.argsort(-scores[rows], kind="stable")]
            gains = 2.0 ** y[rows] - 1
            ideal = np.sort(gains)[::-1]
            max_dcg = np.sum(ideal / np.log2(np.arange(2, ideal.shape[0] + 2)))
            if max_dcg == 0:
                continue
            for i in range(order.shape[0]):
                for j in range(i + 1, order.shape[0]):
                    a, b = order[i], order[j]
                    if y[a] == y[b]:
                        continue
                    h, low = (a, b) if y[a] > y[b] else (b, a)
                    w = abs(2.0 ** y[a] - 2.0 ** y[b]) * (
                        1 / np.log2(i + 2) - 1 / np.log2(j + 2)) / max_dcg
                    c = w * np.log1p(np.exp(-2.0 * (s[h] - s[low])))
                    total += c / (t_plus[position[h] - 1] * t_minus[position[low] - 1])
        return total

    objective = _objective(y, offsets, position, **kwargs)
    grad = np.empty(y.shape[0], dtype=np.float32)
    hess = np.empty(y.shape[0], dtype=np.float32)
    objective.gradient_hessian(scores, grad, hess)
    step = 1e-6
    numeric = np.array([
        (loss(scores + step * e) - loss(scores - step * e)) / (2 * step)
        for e in np.eye(scores.shape[0])
    ])
    assert np.any(numeric != 0)
    assert_allclose(grad, numeric, rtol=1e-5, atol=1e-6)


def test_biases_are_the_normalised_costs_to_the_power():
    # Eqs. 30-31: t[r] = (C[r] / C[1]) ** (1 / (p + 1)), by hand.
    costs = np.array([[4.0, 1.0, 0.25, 0.0], [2.0, 2.0, 8.0, 0.5]])
    t_plus, t_minus = position_bias_from_costs(costs, 1.0)
    assert_allclose(t_plus, [1.0, 0.5, 0.25, 0.0])
    assert_allclose(t_minus, [1.0, 1.0, 2.0, 0.5])
    t_plus, _ = position_bias_from_costs(costs, 0.0)
    assert_allclose(t_plus, [1.0, 0.25, 0.0625, 0.0])
    # Nothing at position 1 to normalise by: no estimate.
    t_plus, t_minus = position_bias_from_costs(np.array([[0.0, 1.0], [1.0, 1.0]]), 1.0)
    assert t_plus is None and t_minus is not None


def test_an_iteration_reestimates_the_biases_from_its_own_costs():
    y, scores, position, offsets = _clicks_data(7, n_queries=20)
    objective = _objective(y, offsets, position, position_bias_norm=0.5)
    grad = np.empty(y.shape[0], dtype=np.float32)
    hess = np.empty(y.shape[0], dtype=np.float32)
    assert_array_equal(objective.t_plus, 1.0)
    objective.gradient_hessian(scores, grad, hess)
    costs = objective.iteration_statistics()
    _, _, expected = debiased_lambdas_by_pair(y, scores, position, offsets, objective.t_plus,
                                              objective.t_minus)
    assert_allclose(costs, expected, rtol=1e-12)
    objective.end_iteration(costs)
    assert_allclose(objective.t_plus, (costs[0] / costs[0, 0]) ** (1 / 1.5))
    assert_allclose(objective.t_minus, (costs[1] / costs[1, 0]) ** (1 / 1.5))
    attributes = objective.fitted_attributes()
    assert_array_equal(attributes["position_bias_"], objective.t_plus)
    assert_array_equal(attributes["position_bias_unclicked_"], objective.t_minus)


@pytest.mark.parametrize("bad, match", [
    (dict(position=np.array([0, 1, 2])), "1-based"),
    (dict(position=np.array([1.5, 1, 2])), "integers"),
    (dict(position=np.array([1, 2])), "one value per row"),
    (dict(position=np.array([1, 2, 3]), position_bias_norm=-1.0), "position_bias_norm"),
])
def test_bad_positions_and_norms_are_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        OBJECTIVES["lambdarank_unbiased"](np.array([1.0, 0, 0]), np.array([0, 3]), **bad)


# -- the estimator -------------------------------------------------------------

PARAMS = dict(n_estimators=15, max_leaf_nodes=7, min_samples_leaf=5, early_stopping=False,
              random_state=0)


@pytest.fixture(scope="module")
def clicks():
    """A position-biased click log: 8 sessions per query, each showing the
    top 10 of a noisy relevance order, clicked with probability
    ``(1 / r) * attractiveness`` (the position-based model, eta = 1)."""
    X, y, qid = make_ranking(n_queries=150, docs_per_query=20, n_features=8, random_state=0)
    rng = np.random.default_rng(0)
    attractive = 0.1 + 0.9 * (2.0 ** y - 1) / 15
    rows, sessions, positions = [], [], []
    for q in np.unique(qid):
        query_rows = np.flatnonzero(qid == q)
        for _ in range(8):
            noisy = y[query_rows] + rng.normal(0, 1.5, query_rows.shape[0])
            shown = query_rows[np.argsort(-noisy)][:10]
            rows.append(shown)
            sessions.append(np.full(shown.shape[0], len(sessions)))
            positions.append(np.arange(1, shown.shape[0] + 1))
    rows, session, position = map(np.concatenate, (rows, sessions, positions))
    click = (rng.random(rows.shape[0]) < attractive[rows] / position).astype(float)
    return X[rows], click, session, position


def test_without_debiasing_or_positions_it_is_plain_lambdamart(clicks):
    X, click, qid, position = clicks
    plain = LambdaMARTRanker(**PARAMS).fit(X, click, qid=qid)
    ignored = LambdaMARTRanker(**PARAMS).fit(X, click, qid=qid, position=position)
    for a, b in zip(plain._booster.trees, ignored._booster.trees):
        assert a.tobytes() == b.tobytes()
    assert not hasattr(ignored, "position_bias_")
    with pytest.warns(UserWarning, match="position=") as record:
        unpositioned = LambdaMARTRanker(**PARAMS, position_debiasing="unbiased_lambdamart").fit(
            X, click, qid=qid)
    assert record[0].filename == __file__
    assert unpositioned.objective_ == "lambdarank"
    for a, b in zip(plain._booster.trees, unpositioned._booster.trees):
        assert a.tobytes() == b.tobytes()


def test_debiasing_learns_decreasing_biases_and_a_different_model(clicks):
    X, click, qid, position = clicks
    ranker = LambdaMARTRanker(**PARAMS, position_debiasing="unbiased_lambdamart").fit(
        X, click, qid=qid, position=position)
    assert ranker.objective_ == "lambdarank_unbiased"
    assert ranker.position_bias_.shape == ranker.position_bias_unclicked_.shape == (
        position.max(),)
    assert ranker.position_bias_[0] == 1.0
    # The examination curve 1 / r decreases: so must the learned biases.
    examination = 1.0 / np.arange(1, position.max() + 1)
    assert spearmanr(ranker.position_bias_, examination).statistic >= 0.9
    plain = LambdaMARTRanker(**PARAMS).fit(X, click, qid=qid)
    assert not np.allclose(plain.predict(X), ranker.predict(X))


def test_debiasing_refuses_the_multiple_objective_options(clicks):
    X, click, qid, position = clicks
    ranker = LambdaMARTRanker(position_debiasing="unbiased_lambdamart", secondary_weight=0.5)
    with pytest.raises(ValueError, match="cannot be combined"):
        ranker.fit(X, click, qid=qid, position=position, y_secondary=click)


def test_warm_start_continues_the_trees_and_the_biases(clicks):
    X, click, qid, position = clicks
    params = dict(PARAMS, position_debiasing="unbiased_lambdamart")
    whole = LambdaMARTRanker(**params).fit(X, click, qid=qid, position=position)
    warm = LambdaMARTRanker(**dict(params, n_estimators=8, warm_start=True))
    warm.fit(X, click, qid=qid, position=position)
    warm.set_params(n_estimators=15).fit(X, click, qid=qid, position=position)
    for a, b in zip(whole._booster.trees, warm._booster.trees):
        assert a.tobytes() == b.tobytes()
    assert_array_equal(warm.position_bias_, whole.position_bias_)
    # A fit without debiasing drops the biases of the last one.
    warm.set_params(position_debiasing=None, warm_start=False).fit(X, click, qid=qid)
    assert not hasattr(warm, "position_bias_")


def test_save_and_load_keep_the_biases_and_a_warm_start_continues(clicks):
    X, click, qid, position = clicks
    params = dict(PARAMS, position_debiasing="unbiased_lambdamart")
    first = LambdaMARTRanker(**dict(params, n_estimators=8, warm_start=True)).fit(
        X, click, qid=qid, position=position)
    buffer = io.BytesIO()
    first.save_model(buffer)
    buffer.seek(0)
    loaded = load_model(buffer)
    assert_array_equal(loaded.position_bias_, first.position_bias_)
    assert_array_equal(loaded.position_bias_unclicked_, first.position_bias_unclicked_)
    assert_array_equal(loaded.predict(X), first.predict(X))
    loaded.set_params(n_estimators=15).fit(X, click, qid=qid, position=position)
    whole = LambdaMARTRanker(**params).fit(X, click, qid=qid, position=position)
    assert_array_equal(loaded.predict(X), whole.predict(X))


def test_early_stopping_with_debiasing(clicks):
    X, click, qid, position = clicks
    ranker = LambdaMARTRanker(**dict(PARAMS, n_estimators=200, early_stopping=True,
                                     n_iter_no_change=3, validation_fraction=0.3),
                              position_debiasing="unbiased_lambdamart")
    ranker.fit(X, click, qid=qid, position=position)
    assert ranker.n_iter_ < 200
    assert ranker.validation_score_.shape[0] > ranker.n_iter_
    assert ranker.position_bias_[0] == 1.0


@needs_two_threads
def test_same_model_on_one_and_two_threads(clicks):
    X, click, qid, position = clicks
    X, click, qid, position = (np.concatenate([a] * 3) for a in (X, click, qid, position))
    qid = qid + np.repeat(np.arange(3), qid.shape[0] // 3) * 1000  # 450 queries, 4.5k rows
    params = dict(PARAMS, position_debiasing="unbiased_lambdamart")
    one = LambdaMARTRanker(**params, n_jobs=1).fit(X, click, qid=qid, position=position)
    # Every kernel parallel, also those this data is too small for.
    with parallel_kernels_only() as picked:
        two = LambdaMARTRanker(**params, n_jobs=2).fit(X, click, qid=qid, position=position)
    assert_ran_in_parallel(picked, "_unbiased_lambdarank_gradient_hessian",
                           "_build_histogram_of_rows", "_best_split_of_each_feature")
    for a, b in zip(one._booster.trees, two._booster.trees):
        assert a.tobytes() == b.tobytes()
    assert_array_equal(one.position_bias_, two.position_bias_)


def test_grid_search_routes_positions_to_fit(clicks):
    X, click, qid, position = clicks
    search = GridSearchCV(
        LambdaMARTRanker(**PARAMS),
        {"position_debiasing": [None, "unbiased_lambdamart"]},
        scoring=ndcg_scorer(10), cv=GroupKFold(3), refit=True,
    )
    with config_context(enable_metadata_routing=True):
        search.fit(X, click, qid=qid, groups=qid, position=position)
        best = search.best_estimator_
    # Each candidate was scored on its folds' models: refit the debiased
    # candidate's first fold by hand to check that the positions got there.
    train, test = next(GroupKFold(3).split(X, click, groups=qid))
    by_hand = LambdaMARTRanker(**PARAMS, position_debiasing="unbiased_lambdamart").fit(
        X[train], click[train], qid=qid[train], position=position[train])
    expected = ndcg_score(click[test], by_hand.predict(X[test]), qid=qid[test], k=10)
    debiased = search.cv_results_["params"].index({"position_debiasing": "unbiased_lambdamart"})
    assert search.cv_results_["split0_test_score"][debiased] == pytest.approx(expected, abs=1e-12)
    assert (best.position_debiasing is None) != hasattr(best, "position_bias_")


def test_bad_position_in_fit_is_refused(clicks):
    X, click, qid, position = clicks
    ranker = LambdaMARTRanker(**PARAMS, position_debiasing="unbiased_lambdamart")
    with pytest.raises(ValueError, match="1-based"):
        ranker.fit(X, click, qid=qid, position=position - 1)
    with pytest.raises(ValueError, match="one value per row"):
        ranker.fit(X, click, qid=qid, position=position[:-1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="position_bias_norm"):
            LambdaMARTRanker(position_bias_norm=-1).fit(X, click, qid=qid)

