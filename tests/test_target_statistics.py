"""Ordered target statistics of categorical features (``target_statistics``).

The statistic of each training row is checked against a row-by-row loop of
the paper's definition (Prokhorenkova et al. 2018, equation 5 over an order
of whole queries), and for leakage: changing a row's label never changes
its own statistic or that of any row of its query. Then the rankers: every
ranker fits with it; prediction reads the statistics over all training
rows; importances and TreeSHAP count a statistic for its categorical column
(TreeSHAP against a brute-force Shapley oracle with merged players); model
files round-trip and tampered ones are refused; exporters and Dask refuse
clearly; a warm start continues the same model; the statistic lifts
ranking quality where categories are too rare to split on.
"""

import io
import json
import zipfile

import numpy as np
import pytest
from _category_worlds import category_effect_world
from conftest import RANKER_IDS, RANKERS, fit_labels
from scipy import sparse
from sklearn.utils._param_validation import InvalidParameterError
from test_inspection import brute_force_shap

from sklearn_ltr import LambdaMARTRanker, load_model
from sklearn_ltr._rankers.target_statistics import PRIOR_WEIGHT, OrderedTargetStatistics
from sklearn_ltr.exceptions import CategoryPoolingWarning
from sklearn_ltr.export import export_model, to_lightgbm, to_xgboost
from sklearn_ltr.inspection import explain_pair, feature_contributions
from sklearn_ltr.metrics import ndcg_score

pytestmark = pytest.mark.filterwarnings("ignore", category=CategoryPoolingWarning)


class _FixedOrder:
    """A stand-in for numpy's Generator whose permutation is given."""

    def __init__(self, order):
        self.order = np.asarray(order)

    def permutation(self, n):
        assert n == self.order.shape[0]
        return self.order


def _loop_statistics(categories, y, w, query, query_rank, prior):
    """The paper's ordered statistic, one row at a time: the (weighted)
    labels of the rows of the same category in queries of a lower rank."""
    out = np.full(y.shape[0], prior)
    for i in range(y.shape[0]):
        if not (categories[i] >= 0 and categories[i] == int(categories[i])):
            continue  # NaN, negative, fractional: the prior
        earlier = (categories == categories[i]) & (query_rank[query] < query_rank[query[i]])
        out[i] = ((w[earlier] * y[earlier]).sum() + PRIOR_WEIGHT * prior) / (
            w[earlier].sum() + PRIOR_WEIGHT)
    return out


def test_hand_computed_statistics():
    # Three queries; the order puts query 2 first, then 0, then 1.
    #   query 0: categories 5, 7, 5 with labels 1, 2, 3
    #   query 1: categories 5, 9    with labels 4, 0
    #   query 2: categories 7, 5    with labels 2, 0
    X = np.array([[5.0], [7.0], [5.0], [5.0], [9.0], [7.0], [5.0]])
    y = np.array([1.0, 2.0, 3.0, 4.0, 0.0, 2.0, 0.0])
    offsets = np.array([0, 3, 5, 7])
    ts = OrderedTargetStatistics([0])
    # permutation()[q] is the rank of query q.
    got = ts.fit_ordered(X, y, np.arange(7), offsets, _FixedOrder([1, 2, 0]))[:, 0]
    p = 12 / 7
    expected = np.array([
        (0 + p) / (1 + 1),      # category 5 in query 0 sees query 2's 5 (label 0)
        (2 + p) / (1 + 1),      # category 7 sees query 2's 7 (label 2)
        (0 + p) / (1 + 1),      # its own query's other 5 is not seen
        (0 + 1 + 3 + p) / (3 + 1),  # query 1 (last) sees queries 2 and 0
        p,                      # 9 was never seen before
        p,                      # query 2 comes first: sees nothing
        p,
    ])
    np.testing.assert_allclose(got, expected)
    assert ts.prior_ == pytest.approx(p)
    # Prediction reads each category's statistic over all rows; an unseen
    # category and what categorical splits read as missing get the prior.
    full = ts.transform(np.array([[5.0], [7.0], [9.0], [11.0], [-1.0], [2.5], [np.nan]]))[:, 0]
    np.testing.assert_allclose(full, [(8 + p) / 5, (4 + p) / 3, (0 + p) / 2, p, p, p, p])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vectorised_statistics_equal_the_loop(seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 12, 40)
    query = np.repeat(np.arange(40), sizes)
    n = query.shape[0]
    X = np.column_stack([rng.integers(0, 15, n).astype(float), rng.normal(size=n),
                         rng.integers(0, 4, n).astype(float)])
    X[rng.random(n) < 0.1, 0] = np.nan
    X[rng.random(n) < 0.05, 0] = -1.0
    X[rng.random(n) < 0.05, 2] = 1.5
    y = rng.integers(0, 5, n).astype(float)
    w = rng.uniform(0.2, 3.0, n)
    # Training rows: a subset of whole queries, in a scrambled row order.
    keep = np.flatnonzero(np.isin(query, rng.choice(40, 30, replace=False)))
    kept_query = query[keep]
    _, kept_sizes = np.unique(kept_query, return_counts=True)
    offsets = np.concatenate(([0], np.cumsum(kept_sizes)))
    ts = OrderedTargetStatistics([0, 2])
    order = np.random.default_rng(seed + 10).permutation(30)
    rank_of_row = np.repeat(order, kept_sizes)
    for weights in (None, w):
        got = ts.fit_ordered(X, y, keep, offsets, _FixedOrder(order), sample_weight=weights)
        row_weights = np.ones(keep.shape[0]) if weights is None else weights[keep]
        prior = np.average(y[keep], weights=row_weights)
        assert ts.prior_ == pytest.approx(prior)
        for j, column in enumerate([0, 2]):
            expected = _loop_statistics(X[keep, column], y[keep], row_weights,
                                        np.arange(keep.shape[0]), rank_of_row, prior)
            np.testing.assert_allclose(got[:, j], expected, rtol=1e-12)


def test_a_row_never_sees_the_labels_of_its_own_query():
    rng = np.random.default_rng(3)
    query = np.repeat(np.arange(30), 8)
    X = rng.integers(0, 6, (query.shape[0], 1)).astype(float)
    y = rng.integers(1, 4, query.shape[0]).astype(float)
    offsets = np.arange(0, query.shape[0] + 1, 8)
    rows = np.arange(query.shape[0])

    def statistics(labels):
        return OrderedTargetStatistics([0]).fit_ordered(
            X, labels, rows, offsets, np.random.default_rng(0))[:, 0]

    # Move a unit of label between two rows of query 7 with different
    # categories: the mean label (the prior) stays, the rows' own labels change.
    own = np.flatnonzero(query == 7)
    a = own[0]
    b = next(i for i in own if X[i, 0] != X[a, 0])
    changed = y.copy()
    changed[a] += 1.0
    changed[b] -= 1.0
    before, after = statistics(y), statistics(changed)
    np.testing.assert_array_equal(after[own], before[own])
    # ... while rows of later queries with those categories see the change.
    assert not np.array_equal(after, before)


# -- the rankers ----------------------------------------------------------------


def rare_categories(seed=0, n_queries=240):
    """Rows whose relevance is mostly a category effect, with about two
    training rows per category: too few for a categorical split, enough
    for a statistic. Column 2 is the category; two numeric columns."""
    return category_effect_world(seed, n_queries, 20, 3000, effect=1.2, slope=0.6, noise=0.4)


def _fit(cls, X, y, qid, **params):
    params = {**dict(n_estimators=15, max_leaf_nodes=8, min_samples_leaf=5, early_stopping=False,
                     categorical_features=[2], random_state=0), **params}
    return cls(**params).fit(X, fit_labels(cls, y), qid=qid)


@pytest.fixture(scope="module")
def data():
    return rare_categories()


@pytest.mark.parametrize("cls", RANKERS, ids=RANKER_IDS)
def test_every_ranker_reads_the_statistics(cls, data):
    X, y, qid = data
    ranker = _fit(cls, X, y, qid, target_statistics="ordered")
    statistics = ranker._target_statistics
    assert statistics.columns.tolist() == [2]
    model_input = ranker._model_input(X)
    np.testing.assert_array_equal(model_input[:, :3], X)
    np.testing.assert_array_equal(model_input[:, 3], statistics.transform(X)[:, 0])
    # predict reads the statistics over all training rows.
    np.testing.assert_allclose(ranker.predict(X), ranker._booster.predict(model_input),
                               rtol=0, atol=0)
    importances = ranker.feature_importances_
    assert importances.shape == (3,)
    assert importances.sum() == pytest.approx(1.0)
    booster_importances = ranker._booster.feature_importances(ranker.importance_type)
    assert booster_importances[3] > 0  # the statistic was split on ...
    assert importances[2] == pytest.approx(booster_importances[2] + booster_importances[3])
    # ... and the statistic's splits were worth it.
    plain = _fit(cls, X, y, qid)
    assert ranker.score(X, fit_labels(cls, y), qid=qid) > plain.score(
        X, fit_labels(cls, y), qid=qid)


def test_statistics_rank_rare_categories_better_on_held_out_queries():
    X, y, qid = rare_categories(seed=1, n_queries=600)
    train = qid < 400
    scores = {}
    for ts in (None, "ordered"):
        ranker = LambdaMARTRanker(n_estimators=60, categorical_features=[2], target_statistics=ts,
                                  early_stopping=False, random_state=0)
        ranker.fit(X[train], y[train], qid=qid[train])
        scores[ts] = ndcg_score(y[~train], ranker.predict(X[~train]), qid=qid[~train], k=10)
    assert scores["ordered"] > scores[None] + 0.05, scores


def test_feature_contributions_count_a_statistic_for_its_column(data):
    X, y, qid = data
    ranker = _fit(LambdaMARTRanker, X, y, qid, target_statistics="ordered", max_leaf_nodes=5,
                  n_estimators=4)
    ensemble = ranker._tree_ensemble()
    players = ranker._explanation_players(ensemble)
    # Columns 0 and 1, the blocks of the wide column 2, then its statistic.
    assert players.tolist() == [0, 1] + [2] * (ensemble.n_split_features - 2)
    assert ensemble.column_of(ensemble.n_split_features - 1) == 3
    rows = X[:6].copy()
    rows[1, 2] = 99_999.0  # unseen: the prior
    rows[2, 2] = np.nan
    phi = feature_contributions(ranker, rows)
    assert phi.shape == (6, 4)
    np.testing.assert_allclose(phi.sum(axis=1), ranker.predict(rows), rtol=0, atol=1e-10)
    per_feature = ranker._model_input(rows)[:, ensemble.feature_columns]
    categories = ensemble.categories or [None] * ensemble.n_split_features
    for i in range(rows.shape[0]):
        expected = brute_force_shap(list(ensemble.trees()), ensemble.baseline, per_feature[i],
                                    3, categories=categories, players=players)
        np.testing.assert_allclose(phi[i], expected, rtol=0, atol=1e-10)
    pair = explain_pair(ranker, rows[0], rows[3])
    np.testing.assert_allclose(pair[:-1].sum(), ranker.predict(rows[[0]])[0]
                               - ranker.predict(rows[[3]])[0], atol=1e-10)


def zip_with(members, replaced):
    """A model file (in memory) of ``members`` (name -> bytes), some of them
    ``replaced``."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for member, blob in members.items():
            zf.writestr(member, replaced.get(member, blob))
    out.seek(0)
    return out


def with_array_edited(members, name, edit):
    """A model file of ``members`` whose array ``name`` is ``edit(array)``."""
    array = np.lib.format.read_array(io.BytesIO(members[name + ".npy"]), allow_pickle=False)
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, edit(array.copy()))
    return zip_with(members, {name + ".npy": buffer.getvalue()})


def test_model_file_round_trip_and_tampering(data, tmp_path):
    X, y, qid = data
    ranker = _fit(LambdaMARTRanker, X, y, qid, target_statistics="ordered")
    path = tmp_path / "model.zip"
    ranker.save_model(path)
    with zipfile.ZipFile(path) as zf:
        document = json.loads(zf.read("model.json"))
        members = {name: zf.read(name) for name in zf.namelist()}
    assert document["format_version"] == 5
    loaded = load_model(path)
    rows = np.vstack([X[:50], [[0.0, 0.0, 123_456.0], [0.0, 0.0, np.nan]]])
    np.testing.assert_array_equal(loaded.predict(rows), ranker.predict(rows))
    np.testing.assert_array_equal(loaded.feature_importances_, ranker.feature_importances_)
    assert loaded.is_categorical_.tolist() == [False, False, True]

    def tampered(name, edit):
        return with_array_edited(members, name, edit)

    def point_at_numeric_column(a):
        a[0] = 0
        return a

    def unsort(a):
        a[[0, 1]] = a[[1, 0]]
        return a

    def infinite(a):
        a[0] = np.inf
        return a

    for name, edit, message in (
        ("target_statistic_columns", point_at_numeric_column, "increasing categorical"),
        ("target_statistic_categories", unsort, "increasing"),
        ("target_statistic_values", infinite, "finite"),
    ):
        with pytest.raises(ValueError, match=message):
            load_model(tampered(name, edit))


def test_exporters_refuse(data, tmp_path):
    X, y, qid = data
    ranker = _fit(LambdaMARTRanker, X, y, qid, target_statistics="ordered")
    for call in (lambda: to_lightgbm(ranker), lambda: to_xgboost(ranker),
                 lambda: export_model(ranker, tmp_path / "m.json", "lightgbm-json")):
        with pytest.raises(ValueError, match="target_statistics='ordered'.*no serving format"):
            call()


def test_parameter_errors(data):
    X, y, qid = data
    with pytest.raises(ValueError, match="target_statistics='ordered'.*categorical_features"):
        LambdaMARTRanker(target_statistics="ordered", n_estimators=2).fit(X, y, qid=qid)
    with pytest.raises(InvalidParameterError, match="target_statistics"):
        LambdaMARTRanker(target_statistics="kfold", categorical_features=[2]).fit(X, y, qid=qid)


def test_warm_start_continues_the_same_model(data):
    X, y, qid = data
    warm = _fit(LambdaMARTRanker, X, y, qid, target_statistics="ordered", warm_start=True)
    warm.set_params(n_estimators=25).fit(X, y, qid=qid)
    cold = _fit(LambdaMARTRanker, X, y, qid, target_statistics="ordered", n_estimators=25)
    np.testing.assert_array_equal(warm.predict(X), cold.predict(X))


def test_sparse_input_and_row_order_give_the_same_model(data):
    X, y, qid = data
    dense = _fit(LambdaMARTRanker, X, y, qid, target_statistics="ordered")
    sparse_fit = _fit(LambdaMARTRanker, sparse.csr_matrix(X), y, qid,
                      target_statistics="ordered")
    np.testing.assert_array_equal(sparse_fit.predict(sparse.csr_matrix(X[:200])),
                                  dense.predict(X[:200]))
    # Whole queries in another order: the queries are ordered by id, so the
    # statistics, and the model, are the same.
    queries = np.random.default_rng(0).permutation(np.unique(qid))
    rows = np.concatenate([np.flatnonzero(qid == q) for q in queries])
    shuffled = _fit(LambdaMARTRanker, X[rows], y[rows], qid[rows], target_statistics="ordered")
    np.testing.assert_array_equal(shuffled.predict(X), dense.predict(X))


def test_held_out_validation_queries_read_the_full_statistics(data):
    X, y, qid = data
    ranker = LambdaMARTRanker(n_estimators=3, categorical_features=[2], early_stopping=True,
                              validation_fraction=0.25, target_statistics="ordered",
                              random_state=0)
    captured = {}
    original = ranker._with_target_statistics

    def spy(X_, y_, train_rows, train_offsets, sample_weight):
        out = original(X_, y_, train_rows, train_offsets, sample_weight)
        captured.update(out=out, train_rows=train_rows)
        return out

    ranker._with_target_statistics = spy
    ranker.fit(X, y, qid=qid)
    held_out = np.setdiff1d(np.arange(X.shape[0]), captured["train_rows"])
    assert 0 < held_out.shape[0] < X.shape[0]
    full = ranker._target_statistics.transform(X)[:, 0]
    np.testing.assert_array_equal(captured["out"][held_out, 3], full[held_out])
    # The training rows' ordered statistics differ from the full ones.
    assert not np.array_equal(captured["out"][captured["train_rows"], 3],
                              full[captured["train_rows"]])


def test_interaction_constraints_hold_the_statistic_with_its_column(data):
    X, y, qid = data
    ranker = _fit(LambdaMARTRanker, X, y, qid, target_statistics="ordered",
                  interaction_cst=[[0], [1, 2]], n_estimators=20)
    ensemble = ranker._tree_ensemble()
    players = ranker._explanation_players(ensemble)
    used_statistic = False
    for tree in ensemble.trees():
        features = tree["feature_idx"][tree["is_leaf"] == 0]
        columns = set(players[features].tolist())
        assert columns <= {0} or columns <= {1, 2}, columns
        used_statistic |= bool(np.any(ensemble.column_of(features) == 3))
    assert used_statistic


def test_missing_values_negative_codes_and_pandas_categories_agree(data):
    X, y, qid = data
    pd = pytest.importorskip("pandas")
    with_nan = X.copy()
    with_nan[::7, 2] = np.nan
    with_negative = with_nan.copy()
    with_negative[::7, 2] = -1.0
    a = _fit(LambdaMARTRanker, with_nan, y, qid, target_statistics="ordered")
    b = _fit(LambdaMARTRanker, with_negative, y, qid, target_statistics="ordered")
    rows = np.vstack([X[:40], [[0.0, 0.0, -7.0], [0.0, 0.0, np.nan], [0.0, 0.0, 99_999.0]]])
    np.testing.assert_array_equal(a.predict(rows), b.predict(rows))
    scores = a.predict(rows[-3:])
    assert scores[0] == scores[1]  # -7 and NaN: missing for both parts of the model
    # The same codes as a pandas category column: unseen categories arrive
    # as NaN there, and get the prior, as an unseen code does in NumPy.
    def frame(A):
        return pd.DataFrame({"a": A[:, 0], "b": A[:, 1],
                             "c": pd.Categorical(A[:, 2], categories=np.unique(X[:, 2]))})
    c = _fit(LambdaMARTRanker, frame(X), y, qid, target_statistics="ordered")
    numeric = _fit(LambdaMARTRanker, X, y, qid, target_statistics="ordered")
    probe = np.vstack([X[:40], [[0.0, 0.0, 99_999.0]]])
    np.testing.assert_allclose(c.predict(frame(probe)), numeric.predict(
        np.column_stack([probe[:, :2], np.where(probe[:, 2] == 99_999.0, np.nan, probe[:, 2])])))


def test_the_pooling_warning_mentions_the_statistics(data):
    X, y, qid = data
    with pytest.warns(CategoryPoolingWarning, match="target statistics .* still tell them apart"):
        LambdaMARTRanker(n_estimators=2, categorical_features=[2], target_statistics="ordered",
                         random_state=0).fit(X, y, qid=qid)


def test_a_warm_start_keeps_the_fitted_statistics_and_refuses_a_change(data):
    X, y, qid = data
    first, second = qid < 120, qid >= 120
    ranker = _fit(LambdaMARTRanker, X[first], y[first], qid[first],
                  target_statistics="ordered", warm_start=True, n_estimators=5)
    tables = [v.copy() for v in ranker._target_statistics.values_]
    before = ranker.predict(X)
    ranker.set_params(n_estimators=6).fit(X[second], y[second], qid=qid[second])
    # New data: the fitted trees still read the first fit's statistics.
    for old, new in zip(tables, ranker._target_statistics.values_):
        np.testing.assert_array_equal(old, new)
    *_, five, six = ranker.staged_predict(X)
    np.testing.assert_array_equal(five, before)
    assert not np.array_equal(six, before)
    for other in (None, "combinations"):
        with pytest.raises(ValueError, match="grown with target_statistics='ordered'.*"
                                             "warm_start=False"):
            ranker.set_params(n_estimators=7, target_statistics=other).fit(X, y, qid=qid)
    plain = _fit(LambdaMARTRanker, X, y, qid, warm_start=True, n_estimators=2)
    with pytest.raises(ValueError, match="grown with target_statistics=None"):
        plain.set_params(n_estimators=3, target_statistics="ordered").fit(X, y, qid=qid)
    assert plain.n_iter_ == 2 and plain._fitted_statistics() is None


def test_a_skops_file_loads_with_the_trusted_types(data):
    skops_io = pytest.importorskip("skops.io")
    from sklearn_ltr.persistence import SKOPS_TRUSTED_TYPES

    X, y, qid = data
    ranker = _fit(LambdaMARTRanker, X, y, qid, target_statistics="ordered")
    blob = skops_io.dumps(ranker)
    assert set(skops_io.get_untrusted_types(data=blob)) <= set(SKOPS_TRUSTED_TYPES)
    loaded = skops_io.loads(blob, trusted=SKOPS_TRUSTED_TYPES)
    np.testing.assert_array_equal(loaded.predict(X), ranker.predict(X))
