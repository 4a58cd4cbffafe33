"""The rankers as scikit-learn estimators: check_estimator, Pipeline,
GridSearchCV and cross_val_score with query-aware scoring, with and without
metadata routing."""

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from conftest import RANKERS
from sklearn_ltr import CalibratedRanker
from sklearn_ltr.compose import exclude_qid
from sklearn_ltr.datasets import make_ranking, to_frame
from sklearn_ltr.metrics import ndcg_score, ndcg_scorer

# Why each listed check is expected to fail.
_EXPECTED_FAILED_CHECKS = {
    # Listwise and pairwise losses are defined per query: a row given weight 2
    # is not the same as the row repeated twice, because the copy adds pairs
    # with its twin and shifts the other documents' ranks. LightGBM lists the
    # same two checks as expected failures for its estimators.
    "check_sample_weight_equivalence_on_dense_data": (
        "per-query ranking losses are not equivalent to repeating rows"
    ),
    "check_sample_weight_equivalence_on_sparse_data": (
        "per-query ranking losses are not equivalent to repeating rows"
    ),
}


def _small(ranker_class, **params):
    if ranker_class is CalibratedRanker:
        params.setdefault("binarize", True)  # it takes binary labels; these are graded
    return ranker_class(n_estimators=10, random_state=0, **params)


def _as_list(parametrize):
    """The same parametrize mark with its cases in a list: scikit-learn 1.6
    hands pytest a generator, which pytest deprecates."""
    mark = parametrize.mark
    names, cases = mark.args
    return pytest.mark.parametrize(names, list(cases), **mark.kwargs)


@_as_list(parametrize_with_checks(
    [_small(cls) for cls in RANKERS],
    expected_failed_checks=lambda est: _EXPECTED_FAILED_CHECKS,
))
# scikit-learn's checks call fit(X, y) without query ids by design: all rows
# are one query, and the rankers say so with a SingleQueryWarning.
@pytest.mark.filterwarnings("ignore::sklearn_ltr.exceptions.SingleQueryWarning")
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(n_queries=40, docs_per_query=25, n_features=8, random_state=0)
    perm = np.random.default_rng(0).permutation(len(y))  # interleave queries
    return X[perm], y[perm], qid[perm]


def _manual_fold_scores(model, X, y, qid, k=10):
    scores = []
    for train, test in GroupKFold(3).split(X, y, groups=qid):
        fitted = clone(model).fit(X[train], y[train], **_fit_qid(model, qid[train]))
        scores.append(ndcg_score(y[test], fitted.predict(X[test]), qid=qid[test], k=k))
    return np.array(scores)


def _fit_qid(model, qid):
    name = model.steps[-1][0] if hasattr(model, "steps") else None
    return {f"{name}__qid" if name else "qid": qid}


def test_grid_search_pipeline_with_routing(ranker_class, data):
    X, y, qid = data
    pipe = make_pipeline(StandardScaler(), _small(ranker_class))
    step = pipe.steps[-1][0]
    grid = {f"{step}__max_leaf_nodes": [3, 7]}
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(pipe, grid, scoring=ndcg_scorer(10), cv=GroupKFold(3))
        search.fit(X, y, qid=qid, groups=qid)
        parallel = GridSearchCV(pipe, grid, scoring=ndcg_scorer(10), cv=GroupKFold(3), n_jobs=2)
        parallel.fit(X, y, qid=qid, groups=qid)
    for i, leaves in enumerate([3, 7]):
        model = clone(pipe).set_params(**{f"{step}__max_leaf_nodes": leaves})
        expected = _manual_fold_scores(model, X, y, qid)
        got = [search.cv_results_[f"split{f}_test_score"][i] for f in range(3)]
        np.testing.assert_allclose(got, expected, rtol=1e-12)
    np.testing.assert_allclose(
        parallel.cv_results_["mean_test_score"], search.cv_results_["mean_test_score"], rtol=1e-12
    )


def test_cross_val_score_routing_and_qid_column_agree(ranker_class, data):
    X, y, qid = data
    model = make_pipeline(StandardScaler(), _small(ranker_class))
    expected = _manual_fold_scores(model, X, y, qid)
    with sklearn.config_context(enable_metadata_routing=True):
        routed = cross_val_score(
            model, X, y, scoring=ndcg_scorer(10), cv=GroupKFold(3),
            params={"qid": qid, "groups": qid},
        )
    np.testing.assert_allclose(routed, expected, rtol=1e-12)

    # Routing off: qid travels as a DataFrame column; the scaler skips it and
    # the ranker takes it as query ids, never as a feature.
    frame = to_frame(X, qid)
    plain_model = make_pipeline(exclude_qid(StandardScaler()), _small(ranker_class))
    plain = cross_val_score(plain_model, frame, y, groups=qid, scoring=ndcg_scorer(10), cv=GroupKFold(3))
    np.testing.assert_allclose(plain, expected, rtol=1e-12)


def test_qid_column_is_not_a_feature(ranker_class, data):
    X, y, qid = data
    frame = to_frame(X, qid, feature_names=[f"f{i}" for i in range(X.shape[1])])
    from_column = _small(ranker_class).fit(frame, y)
    explicit = _small(ranker_class).fit(X, y, qid=qid)
    assert from_column.n_features_in_ == X.shape[1]
    assert "qid" not in from_column.feature_names_in_
    np.testing.assert_array_equal(from_column.predict(frame), explicit.predict(X))
    assert from_column.score(frame, y) == pytest.approx(explicit.score(X, y, qid=qid))
    with pytest.raises(ValueError, match="differ"):
        _small(ranker_class).fit(frame, y, qid=qid[::-1])


def test_tags_and_metadata_requests(ranker_class):
    ranker = ranker_class()
    tags = ranker.__sklearn_tags__()
    assert tags.estimator_type == "ranker"
    assert tags.target_tags.required
    assert tags.input_tags.sparse and tags.input_tags.allow_nan
    assert not sklearn.base.is_regressor(ranker)
    with sklearn.config_context(enable_metadata_routing=True):
        routing = ranker.get_metadata_routing()
        assert routing.fit.requests["qid"] is True
        assert routing.score.requests["qid"] is True
