"""Query-aware scorers in scikit-learn's model selection, with and without
metadata routing.

The oracle for every fold score is the metric computed by hand on that fold's
test rows with a model refitted on its training rows.
"""

import numpy as np
import pytest
import sklearn
from sklearn.compose import make_column_transformer
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_ltr.exceptions import SingleQueryWarning
from sklearn_ltr.metrics import (
    make_ranking_scorer,
    map_score,
    map_scorer,
    mrr_score,
    mrr_scorer,
    ndcg_score,
    ndcg_scorer,
)

pd = pytest.importorskip("pandas")


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def _interleaved_ranking_data(n_queries=30, docs=12, n_features=5, seed=0):
    """Rows of different queries interleaved, so that nothing can rely on
    query blocks being contiguous."""
    rng = np.random.default_rng(seed)
    n = n_queries * docs
    X = rng.normal(size=(n, n_features))
    latent = X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(scale=0.7, size=n)
    y = np.clip(np.floor(latent + 1), 0, 4)
    qid = np.repeat(np.arange(n_queries) * 7 + 3, docs)
    perm = rng.permutation(n)
    return X[perm], y[perm], qid[perm]


def _manual_fold_scores(make_model, X, y, qid, metric, metric_qid=None, **metric_kwargs):
    """Metric on each GroupKFold(3) test fold, by hand; ``metric_qid`` replaces
    the query ids given to the metric (not those used for splitting)."""
    metric_qid = qid if metric_qid is None else metric_qid
    scores = []
    for train, test in GroupKFold(3).split(X, y, groups=qid):
        model = make_model().fit(X[train], y[train])
        scores.append(
            metric(y[test], model.predict(X[test]), qid=metric_qid[test], **metric_kwargs)
        )
    return np.array(scores)


def _model():
    return make_pipeline(StandardScaler(), Ridge(alpha=1.0))


def test_cross_val_score_with_routing_matches_manual_folds(routing):
    X, y, qid = _interleaved_ranking_data()
    expected = _manual_fold_scores(_model, X, y, qid, ndcg_score, k=10)
    got = cross_val_score(
        _model(), X, y, scoring=ndcg_scorer(10), cv=GroupKFold(3), params={"qid": qid, "groups": qid}
    )
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    # The fold scores must differ from scoring each fold as one query; otherwise
    # this test could not tell the two apart.
    one_query = _manual_fold_scores(
        _model, X, y, qid, ndcg_score, metric_qid=np.zeros_like(qid), k=10
    )
    assert np.abs(one_query - expected).max() > 1e-3


@pytest.mark.parametrize(
    "scorer, metric, kwargs",
    [
        (ndcg_scorer(5), ndcg_score, {"k": 5}),
        (mrr_scorer(), mrr_score, {}),
        (map_scorer(), map_score, {}),
        (make_ranking_scorer(ndcg_score, k=3, gain="linear"), ndcg_score, {"k": 3, "gain": "linear"}),
    ],
)
def test_grid_search_with_routing_matches_manual_folds(routing, scorer, metric, kwargs):
    X, y, qid = _interleaved_ranking_data(seed=1)
    grid = GridSearchCV(
        _model(), {"ridge__alpha": [0.1, 100.0]}, scoring=scorer, cv=GroupKFold(3)
    ).fit(X, y, qid=qid, groups=qid)
    for i, alpha in enumerate([0.1, 100.0]):

        def make():
            return _model().set_params(ridge__alpha=alpha)

        expected = _manual_fold_scores(make, X, y, qid, metric, **kwargs)
        got = [grid.cv_results_[f"split{f}_test_score"][i] for f in range(3)]
        np.testing.assert_allclose(got, expected, rtol=1e-12)
    # The refitted model is scored with the routed qid as well.
    expected_refit = metric(y, grid.best_estimator_.predict(X), qid=qid, **kwargs)
    assert grid.score(X, y, qid=qid) == pytest.approx(expected_refit, rel=1e-12)


def test_grid_search_with_routing_in_parallel(routing):
    X, y, qid = _interleaved_ranking_data(seed=2)
    kwargs = dict(scoring=ndcg_scorer(10), cv=GroupKFold(3))
    grid = {"ridge__alpha": [0.1, 10.0]}
    serial = GridSearchCV(_model(), grid, n_jobs=1, **kwargs).fit(X, y, qid=qid, groups=qid)
    parallel = GridSearchCV(_model(), grid, n_jobs=2, **kwargs).fit(X, y, qid=qid, groups=qid)
    np.testing.assert_allclose(
        parallel.cv_results_["mean_test_score"], serial.cv_results_["mean_test_score"]
    )


def test_dataframe_qid_column_without_routing_gives_the_same_scores():
    X, y, qid = _interleaved_ranking_data(seed=3)
    with sklearn.config_context(enable_metadata_routing=True):
        routed = cross_val_score(
            _model(), X, y, scoring=ndcg_scorer(10), cv=GroupKFold(3),
            params={"qid": qid, "groups": qid},
        )
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    frame["qid"] = qid
    # The model must not see qid as a feature: drop it, scale the rest.
    model = make_pipeline(
        make_column_transformer(("drop", ["qid"]), remainder=StandardScaler()), Ridge(alpha=1.0)
    )
    assert not sklearn.get_config()["enable_metadata_routing"]
    plain = cross_val_score(model, frame, y, groups=qid, scoring=ndcg_scorer(10), cv=GroupKFold(3))
    np.testing.assert_allclose(plain, routed, rtol=1e-12)


def test_scorer_without_qid_raises():
    X, y, qid = _interleaved_ranking_data(seed=4)
    model = _model().fit(X, y)
    with pytest.raises(ValueError, match="no query ids"):
        ndcg_scorer(10)(model, X, y)
    # ... also inside cross-validation without routing, instead of scoring
    # each fold as one query.
    with pytest.raises(ValueError, match="no query ids"):
        cross_val_score(
            _model(), X, y, groups=qid, scoring=ndcg_scorer(10), cv=GroupKFold(3),
            error_score="raise",
        )


def test_ranker_score_without_qid_raises_once_fitted_on_queries():
    # GridSearchCV with scoring=None and routing off passes qid to fit but
    # not to score; score() must not answer for one query made of the fold.
    from sklearn_ltr import LambdaMARTRanker

    X, y, qid = _interleaved_ranking_data(seed=8)
    assert not sklearn.get_config()["enable_metadata_routing"]
    search = GridSearchCV(LambdaMARTRanker(n_estimators=5, random_state=0),
                          {"max_leaf_nodes": [3, 7]}, cv=GroupKFold(3), error_score="raise")
    with pytest.raises(ValueError, match="score\\(\\) got no qid, but this ranker was fitted on"):
        search.fit(X, y, qid=qid, groups=qid)
    model = LambdaMARTRanker(n_estimators=5, random_state=0).fit(X, y, qid=qid)
    assert model.score(X, y, qid=qid) == pytest.approx(
        ndcg_score(y, model.predict(X), qid=qid, k=10))
    one_query = np.zeros(len(y))
    assert model.score(X, y, qid=one_query) == pytest.approx(
        ndcg_score(y, model.predict(X), qid=one_query, k=10))
    # Fitted on one query (as scikit-learn's estimator checks do): one query.
    with pytest.warns(SingleQueryWarning, match="fit got no query ids"):
        single = LambdaMARTRanker(n_estimators=5, random_state=0).fit(X, y)
    with pytest.warns(SingleQueryWarning, match="LambdaMARTRanker.score got no query ids"):
        scored = single.score(X, y)
    assert scored == pytest.approx(single.score(X, y, qid=one_query))


def test_search_without_qid_anywhere_says_it_scores_one_query():
    # Routing off and qid passed to neither fit nor score (only to the
    # splitter): every fold is fitted and scored as one query. The fits
    # said so; the scoring must say so too, not return a one-list NDCG.
    from sklearn_ltr import LambdaMARTRanker

    X, y, qid = _interleaved_ranking_data(seed=8)
    assert not sklearn.get_config()["enable_metadata_routing"]
    search = GridSearchCV(LambdaMARTRanker(n_estimators=5, random_state=0),
                          {"max_leaf_nodes": [3, 7]}, cv=GroupKFold(3), error_score="raise")
    with pytest.warns(SingleQueryWarning) as record:
        search.fit(X, y, groups=qid)
    said = [str(w.message) for w in record if issubclass(w.category, SingleQueryWarning)]
    assert any(m.startswith("LambdaMARTRanker.score got no query ids") for m in said)


def test_ranker_score_with_routing_in_grid_search(routing):
    from sklearn_ltr import LambdaMARTRanker

    X, y, qid = _interleaved_ranking_data(seed=8)
    search = GridSearchCV(LambdaMARTRanker(n_estimators=5, random_state=0),
                          {"max_leaf_nodes": [3, 7]}, cv=GroupKFold(3), error_score="raise")
    search.fit(X, y, qid=qid, groups=qid)
    train, test = next(GroupKFold(3).split(X, y, groups=qid))
    model = LambdaMARTRanker(n_estimators=5, random_state=0, max_leaf_nodes=3)
    model.fit(X[train], y[train], qid=qid[train])
    expected = ndcg_score(y[test], model.predict(X[test]), qid=qid[test], k=10)
    assert search.cv_results_["split0_test_score"][0] == pytest.approx(expected, rel=1e-12)


def test_scorer_direct_call_and_sign():
    X, y, qid = _interleaved_ranking_data(seed=5)
    model = _model().fit(X, y)
    expected = ndcg_score(y, model.predict(X), qid=qid, k=5)
    assert ndcg_scorer(5)(model, X, y, qid=qid) == pytest.approx(expected)
    negated = make_ranking_scorer(ndcg_score, greater_is_better=False, k=5)
    assert negated(model, X, y, qid=qid) == pytest.approx(-expected)


def test_routed_qid_and_conflicting_column_raise():
    X, y, qid = _interleaved_ranking_data(seed=6)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    frame["qid"] = qid
    model = make_pipeline(make_column_transformer(("drop", ["qid"]), remainder="passthrough"), Ridge())
    model.fit(frame, y)
    with pytest.raises(ValueError, match="differ"):
        ndcg_scorer(10)(model, frame, y, qid=qid[::-1])


def test_set_score_request_alias(routing):
    X, y, qid = _interleaved_ranking_data(seed=7)
    scorer = ndcg_scorer(10).set_score_request(qid="query_id")
    expected = cross_val_score(
        _model(), X, y, scoring=ndcg_scorer(10), cv=GroupKFold(3), params={"qid": qid, "groups": qid}
    )
    got = cross_val_score(
        _model(), X, y, scoring=scorer, cv=GroupKFold(3), params={"query_id": qid, "groups": qid}
    )
    np.testing.assert_allclose(got, expected)


def test_set_score_request_keeps_what_it_is_not_asked_to_change(routing):
    scorer = ndcg_scorer(10).set_score_request(qid="query_id")
    scorer.set_score_request(sample_weight=True)
    requests = scorer.get_metadata_routing().score.requests
    assert requests == {"qid": "query_id", "sample_weight": True}
    scorer.set_score_request(sample_weight=False)
    assert scorer.get_metadata_routing().score.requests["qid"] == "query_id"


def test_set_score_request_needs_routing():
    with pytest.raises(RuntimeError, match="routing"):
        ndcg_scorer(10).set_score_request(qid=True)
