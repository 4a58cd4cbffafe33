"""The gradient-boosted rankers end to end, each test run for every ranker:
determinism, query order, warm start, early stopping, sparse input, staged
prediction, ranks and bad input."""

import numba
import numpy as np
import pytest
from scipy import sparse

from sklearn_ltr import CalibratedRanker, LambdaMARTRanker, ListNetRanker, XENDCGRanker
from sklearn_ltr.datasets import make_ranking
from sklearn_ltr.metrics import ndcg_score


@pytest.fixture(params=[LambdaMARTRanker, XENDCGRanker, ListNetRanker, CalibratedRanker], ids=lambda c: c.__name__)
def ranker_class(request):
    return request.param


@pytest.fixture(scope="module")
def graded_data():
    return make_ranking(n_queries=60, docs_per_query=30, n_features=12, random_state=0)


@pytest.fixture
def data(graded_data, ranker_class):
    X, y, qid = graded_data
    if ranker_class is CalibratedRanker:  # binary relevance, so metrics see its labels
        y = (y > 0).astype(float)
    return X, y, qid


def _assert_same_trees(a, b):
    assert a.n_iter_ == b.n_iter_
    for ta, tb in zip(a._booster.trees, b._booster.trees):
        # Field by field: leaves hold NaN thresholds, which compare equal only
        # in plain float arrays.
        for field in ta.dtype.names:
            np.testing.assert_array_equal(ta[field], tb[field], err_msg=field)


def _ranker(ranker_class, **params):
    base = dict(n_estimators=20, max_leaf_nodes=15, min_samples_leaf=5, random_state=0)
    if ranker_class is CalibratedRanker:
        base["binarize"] = True  # it takes binary labels; the shared data are graded
    base.update(params)
    return ranker_class(**base)


def test_learns_better_than_chance(ranker_class, data):
    X, y, qid = data
    train, test = qid < 45, qid >= 45
    ranker = _ranker(ranker_class, early_stopping=False).fit(X[train], y[train], qid=qid[train])
    learned = ndcg_score(y[test], ranker.predict(X[test]), qid=qid[test])
    constant = ndcg_score(y[test], np.zeros(test.sum()), qid=qid[test])
    assert learned > constant + 0.1
    # score() is the same metric: mean NDCG@10 with the package defaults.
    assert ranker.score(X[test], y[test], qid=qid[test]) == pytest.approx(learned)


@pytest.mark.parametrize("params", [{}, {"subsample": 0.5, "max_features": 0.5}])
def test_same_trees_on_one_and_two_threads(ranker_class, data, params):
    X, y, qid = data
    previous = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = _ranker(ranker_class, **params).fit(X, y, qid=qid)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = _ranker(ranker_class, **params).fit(X, y, qid=qid)
    finally:
        numba.set_num_threads(previous)
    _assert_same_trees(one, two)
    np.testing.assert_array_equal(one.predict(X), two.predict(X))


def test_random_state_matters_with_subsampling(ranker_class, data):
    X, y, qid = data
    a = _ranker(ranker_class, subsample=0.5, random_state=0).fit(X, y, qid=qid)
    b = _ranker(ranker_class, subsample=0.5, random_state=1).fit(X, y, qid=qid)
    assert not np.array_equal(a.predict(X), b.predict(X))


@pytest.mark.parametrize("params", [{}, {"subsample": 0.7, "early_stopping": True}])
def test_permuting_whole_queries_gives_identical_trees(ranker_class, data, params):
    X, y, qid = data
    rng = np.random.default_rng(1)
    # Interleave the queries at random, keeping the rows of each query in
    # their relative order (which the model may depend on through ties).
    shuffled = rng.permutation(len(y))
    for q in np.unique(qid):
        members = np.flatnonzero(qid[shuffled] == q)
        shuffled[members] = np.sort(shuffled[members])
    a = _ranker(ranker_class, **params).fit(X, y, qid=qid)
    b = _ranker(ranker_class, **params).fit(X[shuffled], y[shuffled], qid=qid[shuffled])
    _assert_same_trees(a, b)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_warm_start_equals_one_fit(ranker_class, data):
    X, y, qid = data
    full = _ranker(ranker_class, n_estimators=40, subsample=0.8, early_stopping=False).fit(X, y, qid=qid)
    warm = _ranker(ranker_class, n_estimators=20, subsample=0.8, early_stopping=False, warm_start=True)
    warm.fit(X, y, qid=qid)
    warm.set_params(n_estimators=40).fit(X, y, qid=qid)
    _assert_same_trees(full, warm)
    with pytest.raises(ValueError, match="n_estimators"):
        warm.set_params(n_estimators=10).fit(X, y, qid=qid)


def test_early_stopping_splits_by_query_and_keeps_best(ranker_class, data):
    X, y, qid = data
    rng = np.random.default_rng(0)
    noise_y = rng.integers(0, 3, size=len(y)).astype(float)  # nothing to learn
    ranker = _ranker(ranker_class, n_estimators=200, early_stopping=True, n_iter_no_change=5).fit(X, noise_y, qid=qid)
    assert ranker.do_early_stopping_
    assert ranker.n_iter_ < 200
    scores = ranker.validation_score_
    # The kept model is the best validation iteration (at least one tree).
    assert ranker.n_iter_ == max(1, int(np.argmax(scores)))
    assert len(scores) == len(ranker.train_score_)


def test_explicit_validation_set(ranker_class, data):
    X, y, qid = data
    train, val = qid < 45, qid >= 45
    ranker = _ranker(ranker_class, n_estimators=30).fit(
        X[train], y[train], qid=qid[train], X_val=X[val], y_val=y[val], qid_val=qid[val]
    )
    assert ranker.do_early_stopping_
    staged = list(ranker.staged_predict(X[val]))
    expected = [ndcg_score(y[val], s, qid=qid[val]) for s in staged]
    # validation_score_[i] is the model with i trees; the staged scores are
    # the models with 1, 2, ... trees.
    np.testing.assert_allclose(ranker.validation_score_[1 : len(expected) + 1], expected)


def test_staged_predict_ends_at_predict(ranker_class, data):
    X, y, qid = data
    ranker = _ranker(ranker_class, early_stopping=False).fit(X, y, qid=qid)
    staged = list(ranker.staged_predict(X))
    assert len(staged) == ranker.n_iter_
    np.testing.assert_allclose(staged[-1], ranker.predict(X), rtol=1e-12, atol=1e-12)


def test_sparse_equals_dense(ranker_class, data):
    X, y, qid = data
    X = X.copy()
    X[X < np.quantile(X, 0.4)] = 0.0
    dense = _ranker(ranker_class, early_stopping=False).fit(X, y, qid=qid)
    csr = _ranker(ranker_class, early_stopping=False).fit(sparse.csr_matrix(X), y, qid=qid)
    _assert_same_trees(dense, csr)
    np.testing.assert_array_equal(dense.predict(X), csr.predict(sparse.csr_matrix(X)))


def test_missing_values_are_accepted_and_used(ranker_class, data):
    X, y, qid = data
    X = X.copy()
    rng = np.random.default_rng(0)
    X[rng.random(X.shape) < 0.2] = np.nan
    ranker = _ranker(ranker_class, early_stopping=False).fit(X, y, qid=qid)
    pred = ranker.predict(X)
    assert np.all(np.isfinite(pred))
    assert ranker.score(X, y, qid=qid) > ndcg_score(y, np.zeros(len(y)), qid=qid)


def test_rank_within_queries(ranker_class):
    X, y, qid = make_ranking(n_queries=5, docs_per_query=8, n_features=4, random_state=3)
    perm = np.random.default_rng(0).permutation(len(y))
    X, y, qid = X[perm], y[perm], qid[perm]
    ranker = _ranker(ranker_class, early_stopping=False, min_samples_leaf=2).fit(X, y, qid=qid)
    ranks = ranker.rank(X, qid=qid)
    scores = ranker.predict(X)
    for q in np.unique(qid):
        rows = np.flatnonzero(qid == q)
        expected = np.empty(len(rows), dtype=int)
        expected[np.argsort(-scores[rows], kind="stable")] = np.arange(1, len(rows) + 1)
        np.testing.assert_array_equal(ranks[rows], expected)


def test_feature_importances(ranker_class, data):
    X, y, qid = data
    ranker = _ranker(ranker_class, early_stopping=False).fit(X, y, qid=qid)
    importances = ranker.feature_importances_
    assert importances.shape == (X.shape[1],)
    assert importances.sum() == pytest.approx(1.0)
    gains = np.zeros(X.shape[1])
    for tree in ranker._booster.trees:
        for node in tree[tree["is_leaf"] == 0]:
            gains[node["feature_idx"]] += node["gain"]
    np.testing.assert_allclose(importances, gains / gains.sum())


def test_verbose_prints_one_line_per_iteration(ranker_class, data, capsys):
    X, y, qid = data
    _ranker(ranker_class, n_estimators=5, verbose=1, early_stopping=False).fit(X, y, qid=qid)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("[")]
    assert len(lines) == 5
    assert "train NDCG" in lines[0] and "elapsed" in lines[0]


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda X, y, q: (X, y[:-1], q), "inconsistent numbers of samples"),
        (lambda X, y, q: (X, y, q[:-1]), "qid has"),
        (lambda X, y, q: (X, np.where(np.arange(len(y)) == 3, np.nan, y), q), r"y contains (NaN|infinity)"),
        (lambda X, y, q: (X, np.where(np.arange(len(y)) == 3, np.inf, y), q), r"y contains (NaN|infinity)"),
        (lambda X, y, q: (X, y - 1, q), "negative"),
        (lambda X, y, q: (X, y, np.where(np.arange(len(y)) == 3, np.nan, q.astype(float))), "qid contains NaN"),
        (lambda X, y, q: (X, y + 2000, q), "overflows"),
    ],
)
def test_bad_input_errors(ranker_class, data, change, message):
    X, y, qid = change(*data)
    with pytest.raises(ValueError, match=message):
        _ranker(ranker_class).fit(X, y, qid=qid)


def test_predict_with_wrong_number_of_features(ranker_class, data):
    X, y, qid = data
    ranker = _ranker(ranker_class, n_estimators=2).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="features"):
        ranker.predict(X[:, :-1])


def test_validation_set_needs_labels(ranker_class, data):
    X, y, qid = data
    with pytest.raises(ValueError, match="y_val"):
        _ranker(ranker_class).fit(X, y, qid=qid, X_val=X)
