"""Messages a new user met (issue 27, part 4): each says what happened and
the fix, and none is preceded by a warning that does not help."""

import inspect
import warnings

import numpy as np
import pytest
import sklearn
from conftest import RANKER_IDS, RANKERS, fit_labels
from sklearn.linear_model import Ridge
from sklearn.model_selection import GroupKFold, cross_validate

import sklearn_ltr.metrics as metrics
from sklearn_ltr import CalibratedRanker, LambdaMARTRanker, load_model, save_model
from sklearn_ltr._rankers.registry import model_classes
from sklearn_ltr.exceptions import SingleQueryWarning
from sklearn_ltr.export import export_model, to_lightgbm, to_xgboost
from sklearn_ltr.inspection import explain_pair, feature_contributions
from sklearn_ltr.metrics import ndcg_score, ndcg_scorer

SMALL = dict(n_estimators=3, max_leaf_nodes=5, min_samples_leaf=2, random_state=0)


def _data(n_queries=6, size=10, n_features=1, seed=0):
    rng = np.random.default_rng(seed)
    n = n_queries * size
    # Values with many digits, which the messages must not print.
    X = rng.normal(size=(n, n_features)) + 0.123456789
    qid = np.repeat(np.arange(n_queries) * 3 + 1, size)
    y = rng.integers(0, 3, size=n).astype(float)
    return X, y, qid


# ----------------------------------------------------------------- (a) a 1-D X


@pytest.mark.parametrize("cls", RANKERS, ids=RANKER_IDS)
def test_a_1d_X_gives_its_shape_and_the_reshapes_not_its_values(cls):
    X, y, qid = _data()
    y = fit_labels(cls, y)
    column = X[:, 0]
    with pytest.raises(ValueError) as fit_error:
        cls(**SMALL).fit(column, y, qid=qid)
    message = str(fit_error.value)
    assert message.startswith("X is 1-D (shape (60,)), but the rankers take a 2-D X of shape "
                              "(n_samples, n_features).")
    assert "X.reshape(-1, 1)" in message and "X.reshape(1, -1)" in message
    assert "0.12" not in message and "[" not in message
    model = cls(**SMALL).fit(X, y, qid=qid)
    for method in (model.predict, model.rank):
        with pytest.raises(ValueError, match=r"^X is 1-D \(shape \(60,\)\).*X\.reshape\(-1, 1\)"):
            method(column)
    # What the message says to do works.
    np.testing.assert_array_equal(model.predict(column.reshape(-1, 1)), model.predict(X))


def test_the_reshape_advice_fits_lists_and_series():
    pd = pytest.importorskip("pandas")
    X, y, qid = _data()
    with pytest.raises(ValueError, match=r"^X is 1-D \(shape \(60,\)\).*Reshape your data: .*pass "
                       r"np\.reshape\(X, \(-1, 1\)\); .* pass np\.reshape\(X, \(1, -1\)\)\.$"):
        LambdaMARTRanker(**SMALL).fit(list(X[:, 0]), y, qid=qid)
    model = LambdaMARTRanker(**SMALL).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match=r"pass X\.to_frame\(\); .* pass X\.to_frame\(\)\.T\.$"):
        model.predict(pd.Series(X[:, 0]))
    with pytest.raises(ValueError, match=r"^X is a single value \(shape \(\)\)"):
        model.predict(np.float64(0.5))


# ------------------------------------------- (b) metrics: shapes before the warning


def _metrics_warning_without_qid():
    return [getattr(metrics, name) for name in metrics.__all__
            if hasattr(getattr(metrics, name), "__wrapped__")]


@pytest.mark.parametrize("metric", _metrics_warning_without_qid(), ids=lambda f: f.__name__)
def test_a_2d_y_true_raises_the_shape_error_alone(metric):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match=r"y_true must be a 1-D array .*got shape \(3, 2\)"):
            metric(np.ones((3, 2)), np.ones((3, 2)))
        with pytest.raises(ValueError, match="different lengths"):
            metric([1.0, 0.0, 1.0], [0.5, 0.5])
    assert [w for w in caught if issubclass(w.category, SingleQueryWarning)] == []
    # A call that scores still warns that all rows are one query.
    with pytest.warns(SingleQueryWarning, match="got no query ids, so all 4 rows"):
        metric(np.array([1.0, 0.0, 1.0, 0.0]), np.array([0.9, 0.2, 0.6, 0.4]))


# --------------------------------------- (c) scorers when routing is already on


def test_a_scorer_without_qid_under_routing_says_how_to_pass_it():
    X, y, qid = _data(n_queries=9)
    with sklearn.config_context(enable_metadata_routing=True):
        with pytest.raises(ValueError) as error:
            cross_validate(Ridge(), X, y, cv=GroupKFold(3), params={"groups": qid},
                           scoring=ndcg_scorer(5), error_score="raise")
        message = str(error.value)
        assert "metadata routing is on and the scorer requests qid, but no qid reached it" in message
        assert "params={'qid': qid}" in message and "fit(X, y, qid=qid)" in message
        assert "enable_metadata_routing" not in message
        # The advice works.
        scores = cross_validate(Ridge(), X, y, cv=GroupKFold(3), scoring=ndcg_scorer(5),
                                params={"groups": qid, "qid": qid})["test_score"]
        assert scores.shape == (3,)

        model = Ridge().fit(X, y)
        with pytest.raises(ValueError, match=r"scorer\(estimator, X, y, qid=qid\)"):
            ndcg_scorer(5)(model, X, y)
        declined = ndcg_scorer(5).set_score_request(qid=False)
        with pytest.raises(ValueError, match=r"does not request qid \(its request is False\)\. "
                           r"Call set_score_request\(qid=True\)"):
            declined(model, X, y)
    # Routing off: enabling it is one way to fix it, and the message says so.
    with pytest.raises(ValueError, match="enable_metadata_routing=True"):
        ndcg_scorer(5)(model, X, y)


# -------------------------------------------------- (d) one weight per query


@pytest.mark.parametrize("cls", RANKERS, ids=RANKER_IDS)
def test_per_query_weights_are_refused_with_the_expansion(cls):
    X, y, qid = _data(n_features=2)
    y = fit_labels(cls, y)
    # Rows not grouped by query: the expansion must follow qid, not row order.
    order = np.random.default_rng(1).permutation(len(y))
    X, y, qid = X[order], y[order], qid[order]
    per_query = np.array([1.0, 2.0, 0.5, 3.0, 1.5, 4.0])
    params = [SMALL] + ([dict(SMALL, calibration="platt")] if cls is CalibratedRanker else [])
    for kwargs in params:
        with pytest.raises(ValueError) as error:
            cls(**kwargs).fit(X, y, qid=qid, sample_weight=per_query)
        message = str(error.value)
        assert message.startswith("sample_weight has 6 entries, one per query, but weights are "
                                  "per row and there are 60 rows.")
        code = "np.asarray(sample_weight)[np.unique(qid, return_inverse=True)[1]]"
        assert f"sample_weight = {code}" in message
        # The one-liner gives each row the weight of its query (in sorted
        # query id order), as a loop does.
        expanded = eval(code, {"np": np, "sample_weight": per_query, "qid": qid})
        by_loop = np.array([per_query[sorted(set(qid)).index(q)] for q in qid])
        np.testing.assert_array_equal(expanded, by_loop)
        cls(**kwargs).fit(X, y, qid=qid, sample_weight=expanded)


# ---------------------------------- (e) export and inspection name every ranker


def test_export_and_inspection_name_every_ranker():
    names = sorted(model_classes())
    assert "YetiRankRanker" in names
    for call in (lambda: export_model(Ridge(), "unused.txt", "lightgbm"),
                 lambda: to_lightgbm(Ridge()),
                 lambda: feature_contributions(Ridge(), np.zeros((1, 1)))):
        with pytest.raises(TypeError) as error:
            call()
        message = str(error.value)
        assert f"{', '.join(names[:-1])} or {names[-1]}" in message
        assert message.endswith("got Ridge.")
    for function in (export_model, to_lightgbm, to_xgboost, feature_contributions,
                     explain_pair, save_model, load_model):
        doc = inspect.getdoc(function)
        missing = [name for name in names if name not in doc]
        assert missing == [], f"{function.__name__}'s docstring leaves out {missing}"
