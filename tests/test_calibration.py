"""CalibratedRanker: probabilities, Platt scaling against scikit-learn's
LogisticRegression, label handling, wiring of objectives and alpha, and a
calibration sanity check on synthetic click-through rates."""

import numpy as np
import pytest
from scipy.special import expit, logit
from sklearn.linear_model import LogisticRegression
from sklearn.utils import check_random_state

from sklearn_ltr import LambdaMARTRanker
from sklearn_ltr._utils.queries import group_queries, split_queries
from sklearn_ltr.calibration import CalibratedRanker
from sklearn_ltr._rankers.calibrated import fit_platt
from sklearn_ltr.datasets import make_ranking, to_frame
from sklearn_ltr.metrics import ndcg_score, query_ece


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(n_queries=40, docs_per_query=20, n_features=8, random_state=0)
    return X, (y > 0).astype(float), qid


def _ranker(**params):
    base = dict(n_estimators=15, max_leaf_nodes=7, min_samples_leaf=5, random_state=0)
    base.update(params)
    return CalibratedRanker(**base)


def _assert_same_predictions(a, b, X):
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


# -- probabilities -------------------------------------------------------------


@pytest.mark.parametrize("objective", ["rcr", "sigmoid", "sigmoid+softmax"])
def test_predict_proba_is_sigmoid_of_score(data, objective):
    X, y, qid = data
    ranker = _ranker(objective=objective, early_stopping=False).fit(X, y, qid=qid)
    proba = ranker.predict_proba(X)
    assert proba.shape == (len(y), 2)
    assert np.all((proba >= 0) & (proba <= 1))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    np.testing.assert_allclose(proba[:, 1], expit(ranker.predict(X)), rtol=1e-15)


def test_predict_proba_extreme_scores_keep_both_columns():
    X = np.repeat(np.array([[0.0], [1.0]]), 30, axis=0)
    y = X[:, 0].copy()
    ranker = CalibratedRanker(objective="sigmoid", n_estimators=30, learning_rate=1.0,
                              min_samples_leaf=1, min_hessian_to_split=0.0, early_stopping=False)
    proba = ranker.fit(X, y, qid=np.zeros(len(y))).predict_proba(X)
    assert np.all(proba[:30, 1] < 1e-3) and np.all(proba[30:, 1] > 1 - 1e-3)
    np.testing.assert_allclose(proba[:, 0], expit(-ranker.predict(X)), rtol=1e-12)


def test_softmax_without_platt_has_no_predict_proba(data):
    X, y, qid = data
    ranker = _ranker(objective="softmax", early_stopping=False).fit(X, y, qid=qid)
    assert not hasattr(ranker, "predict_proba")
    with pytest.raises(AttributeError, match="predict_proba") as excinfo:
        ranker.predict_proba(X)
    # The reason travels as the cause, shown in the traceback.
    assert "calibration='platt'" in str(excinfo.value.__cause__)
    assert hasattr(_ranker(objective="softmax", calibration="platt"), "predict_proba")


def test_predict_proba_follows_the_fit_not_later_parameters(data):
    X, y, qid = data
    platt = _ranker(objective="softmax", calibration="platt", early_stopping=False)
    platt.fit(X, y, qid=qid)
    expected = platt.predict_proba(X)
    platt.set_params(objective="rcr", calibration=None)
    np.testing.assert_array_equal(platt.predict_proba(X), expected)
    # A softmax model without Platt scaling stays without probabilities.
    softmax = _ranker(objective="softmax", early_stopping=False).fit(X, y, qid=qid)
    softmax.set_params(objective="rcr")
    assert not hasattr(softmax, "predict_proba")
    # Refitting without Platt scaling drops the old one.
    platt.set_params(objective="sigmoid").fit(X, y, qid=qid)
    assert not hasattr(platt, "platt_coef_")
    np.testing.assert_allclose(platt.predict_proba(X)[:, 1], expit(platt.predict(X)), rtol=1e-15)


def test_baseline_is_log_odds_of_mean_label(data):
    X, y, qid = data
    for objective, expected in [("rcr", logit(y.mean())), ("sigmoid", logit(y.mean())), ("softmax", 0.0)]:
        ranker = _ranker(objective=objective, n_estimators=1, early_stopping=False).fit(X, y, qid=qid)
        assert ranker._booster.baseline == pytest.approx(expected, rel=1e-12)


# -- objectives and parameters -------------------------------------------------


def test_alpha_reaches_the_objective(data):
    X, y, qid = data
    rcr0 = _ranker(objective="rcr", alpha=0.0, early_stopping=False).fit(X, y, qid=qid)
    sigmoid = _ranker(objective="sigmoid", alpha=0.7, early_stopping=False).fit(X, y, qid=qid)
    _assert_same_predictions(rcr0, sigmoid, X)  # alpha is ignored by "sigmoid"
    rcr1 = _ranker(objective="rcr", alpha=1.0, early_stopping=False).fit(X, y, qid=qid)
    assert not np.array_equal(rcr0.predict(X), rcr1.predict(X))
    mix1 = _ranker(objective="sigmoid+softmax", alpha=1.0, early_stopping=False).fit(X, y, qid=qid)
    softmax = _ranker(objective="softmax", early_stopping=False).fit(X, y, qid=qid)
    # Same gradients and hessians; only the baseline differs (log-odds vs 0)
    # and a softmax loss is blind to it.
    np.testing.assert_allclose(
        mix1.predict(X) - mix1._booster.baseline, softmax.predict(X), rtol=1e-6, atol=1e-6
    )
    assert rcr1.objective_ == "rcr" and softmax.objective_ == "softmax"


@pytest.mark.parametrize(
    "params", [{"alpha": 1.5}, {"alpha": -0.1}, {"objective": "lambdarank"}, {"calibration": "isotonic"}]
)
def test_bad_parameters(data, params):
    X, y, qid = data
    with pytest.raises(ValueError, match=next(iter(params))):
        _ranker(**params).fit(X, y, qid=qid)


# -- labels ----------------------------------------------------------------------


def test_graded_labels_raise_and_suggest_binarize():
    X, y, qid = make_ranking(n_queries=10, docs_per_query=10, n_features=4, random_state=1)
    assert y.max() > 1
    with pytest.raises(ValueError, match=r"y must be binary or lie in \[0, 1\].*binarize=True"):
        _ranker().fit(X, y, qid=qid)
    with pytest.raises(ValueError, match=r"y_val must be binary"):
        _ranker().fit(X, y > 0, qid=qid, X_val=X, y_val=y, qid_val=qid)
    with pytest.raises(ValueError, match="negative"):
        _ranker(binarize=True).fit(X, y - 1, qid=qid)


@pytest.mark.parametrize("calibration", [None, "platt"])
def test_binarize_equals_fitting_on_binary_labels(calibration):
    X, y, qid = make_ranking(n_queries=30, docs_per_query=15, n_features=6, random_state=2)
    graded = _ranker(binarize=True, calibration=calibration).fit(X, y, qid=qid)
    binary = _ranker(calibration=calibration).fit(X, (y > 0).astype(float), qid=qid)
    _assert_same_predictions(graded, binary, X)
    np.testing.assert_array_equal(graded.predict_proba(X), binary.predict_proba(X))


def test_fractional_labels_are_accepted(data):
    X, _, qid = data
    ctr = np.random.default_rng(0).random(len(qid))
    proba = _ranker(early_stopping=False).fit(X, ctr, qid=qid).predict_proba(X)
    assert np.all(np.isfinite(proba))


# -- Platt scaling ----------------------------------------------------------------


def _sklearn_platt(s, y, sample_weight=None):
    lr = LogisticRegression(C=1e12, tol=1e-12, max_iter=10_000)
    lr.fit(s.reshape(-1, 1), y, sample_weight=sample_weight)
    return lr.coef_[0, 0], lr.intercept_[0]


def test_fit_platt_matches_logistic_regression():
    rng = np.random.default_rng(0)
    s = rng.normal(scale=3, size=400)
    y = (rng.random(400) < expit(0.7 * s - 1.2)).astype(float)
    w = rng.uniform(0.5, 2.0, size=400)
    np.testing.assert_allclose(fit_platt(s, y), _sklearn_platt(s, y), rtol=1e-5)
    np.testing.assert_allclose(fit_platt(s, y, w), _sklearn_platt(s, y, w), rtol=1e-5)
    # A fractional label y is a row that is positive with weight y and
    # negative with weight 1 - y.
    ctr = expit(0.5 * s + 0.3) * rng.uniform(0.8, 1.0, size=400)
    doubled = _sklearn_platt(np.r_[s, s], np.r_[np.ones(400), np.zeros(400)], np.r_[ctr, 1 - ctr])
    np.testing.assert_allclose(fit_platt(s, ctr), doubled, rtol=1e-5)


def test_platt_on_explicit_validation_set(data):
    X, y, qid = data
    train, val = qid < 30, qid >= 30
    ranker = _ranker(objective="softmax", calibration="platt").fit(
        X[train], y[train], qid=qid[train], X_val=X[val], y_val=y[val], qid_val=qid[val]
    )
    a, b = _sklearn_platt(ranker.predict(X[val]), y[val])
    assert ranker.platt_coef_ == pytest.approx(a, rel=1e-5)
    assert ranker.platt_intercept_ == pytest.approx(b, rel=1e-5, abs=1e-8)
    np.testing.assert_allclose(
        ranker.predict_proba(X)[:, 1], expit(a * ranker.predict(X) + b), rtol=1e-5
    )
    # The trees are those of the uncalibrated model with the same validation set.
    plain = _ranker(objective="softmax").fit(
        X[train], y[train], qid=qid[train], X_val=X[val], y_val=y[val], qid_val=qid[val]
    )
    _assert_same_predictions(ranker, plain, X)


def test_platt_holds_out_whole_queries(data):
    X, y, qid = data
    perm = np.random.default_rng(0).permutation(len(y))  # interleaved queries
    X, y, qid = X[perm], y[perm], qid[perm]
    w = np.random.default_rng(1).uniform(0.5, 2, size=len(y))
    ranker = _ranker(objective="softmax", calibration="platt", validation_fraction=0.25)
    ranker.fit(X, y, qid=qid, sample_weight=w)
    # The documented split: split_queries with validation_fraction, seeded
    # from random_state.
    seed = check_random_state(0).randint(np.iinfo(np.int32).max)
    order, offsets, unique = group_queries(qid)
    _, held_queries = split_queries(offsets, 0.25, np.random.default_rng([seed, 3]))
    held = np.isin(qid, unique[held_queries])
    assert len(held_queries) == 10
    # Trees come from the other queries only ...
    plain = _ranker(objective="softmax").fit(X[~held], y[~held], qid=qid[~held], sample_weight=w[~held])
    _assert_same_predictions(ranker, plain, X)
    # ... and the Platt fit from the held-out ones.
    a, b = _sklearn_platt(ranker.predict(X[held]), y[held], w[held])
    assert ranker.platt_coef_ == pytest.approx(a, rel=1e-5)
    assert ranker.platt_intercept_ == pytest.approx(b, rel=1e-5, abs=1e-8)
    # A DataFrame qid column gives the same model.
    framed = _ranker(objective="softmax", calibration="platt", validation_fraction=0.25)
    framed.fit(to_frame(X, qid), y, sample_weight=w)
    np.testing.assert_array_equal(framed.predict(to_frame(X, qid)), ranker.predict(X))
    assert framed.platt_coef_ == ranker.platt_coef_


def test_platt_warm_start_keeps_the_held_out_queries(data):
    X, y, qid = data
    params = dict(objective="softmax", calibration="platt", early_stopping=False, random_state=None)
    np.random.seed(0)
    warm = _ranker(n_estimators=10, warm_start=True, **params).fit(X, y, qid=qid)
    warm.set_params(n_estimators=20).fit(X, y, qid=qid)
    seed = warm._platt_seed
    full = _ranker(n_estimators=20, **params)
    full._platt_seed, full.warm_start = seed, True  # same split, fresh model
    full.fit(X, y, qid=qid)
    _assert_same_predictions(warm, full, X)
    assert warm.platt_coef_ == full.platt_coef_


def test_platt_needs_two_queries(data):
    X, y, _ = data
    with pytest.raises(ValueError, match="at least 2 queries"):
        _ranker(calibration="platt").fit(X, y)


# -- calibration sanity check on click-through rates --------------------------------


def test_rcr_is_better_calibrated_than_softmax_on_click_rates():
    rng = np.random.default_rng(0)
    n_queries, docs = 60, 20
    X = rng.normal(size=(n_queries * docs, 5))
    qid = np.repeat(np.arange(n_queries), docs)
    hidden = 1.5 * X[:, 0] - X[:, 1] + 0.5 * X[:, 2] * X[:, 3] - 1.0
    ctr = rng.binomial(20, expit(hidden)) / 20.0  # 20 impressions per document
    train, test = qid < 40, qid >= 40
    params = dict(n_estimators=40, early_stopping=False, random_state=0)
    rcr = CalibratedRanker(**params).fit(X[train], ctr[train], qid=qid[train])
    softmax = CalibratedRanker(objective="softmax", **params).fit(X[train], ctr[train], qid=qid[train])
    ece_rcr = query_ece(ctr[test], rcr.predict_proba(X[test])[:, 1], qid=qid[test])
    ece_softmax = query_ece(ctr[test], expit(softmax.predict(X[test])), qid=qid[test])
    assert ece_rcr < 0.7 * ece_softmax  # about 0.06 vs 0.12-0.15 over seeds
    assert ece_rcr < 0.1
    # and it still ranks: better than the true probabilities' noise floor allows
    # a random order to.
    ndcg_rcr = ndcg_score(ctr[test], rcr.predict(X[test]), qid=qid[test], gain="linear")
    ndcg_random = ndcg_score(ctr[test], rng.random(test.sum()), qid=qid[test], gain="linear")
    assert ndcg_rcr > ndcg_random + 0.1


def test_is_a_ranker_not_a_classifier():
    ranker = CalibratedRanker()
    assert ranker.__sklearn_tags__().estimator_type == "ranker"
    assert not hasattr(ranker, "classes_")
    assert isinstance(ranker, type(LambdaMARTRanker()).__mro__[1])  # BaseGBRanker
