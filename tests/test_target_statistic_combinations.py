"""Target statistics of combinations of columns (``target_statistics="combinations"``).

The ordered statistic of a combination is checked against a row-by-row loop
over (category, partner value) tuples, the partner bucketed by its quartiles
computed here: the key encoding is never read by the oracle. Then the
rankers: which combinations the short fit chooses; every ranker fits with
them; they lift ranking quality where a category's effect depends on a
numeric feature; importances and TreeSHAP share a combination equally
between its two columns (TreeSHAP against a brute-force Shapley oracle with
the combination as a player of its own); model files (format 6) round-trip,
are read as the persistence docstring documents them, and tampered ones are
refused; exporters refuse; a warm start keeps the combinations and their
quantile edges.
"""

import io
import json
import warnings
import zipfile

import numpy as np
import pytest
from conftest import RANKER_IDS, RANKERS, fit_labels
from test_inspection import brute_force_shap
from test_target_statistics import _FixedOrder, _loop_statistics, with_array_edited, zip_with

from sklearn_ltr import LambdaMARTRanker, YetiRankRanker, load_model
from sklearn_ltr._rankers import target_statistics
from sklearn_ltr._rankers.target_statistics import OrderedTargetStatistics
from sklearn_ltr.exceptions import CategoryPoolingWarning
from sklearn_ltr.export import to_lightgbm, to_xgboost
from sklearn_ltr.inspection import explain_pair, feature_contributions
from sklearn_ltr.metrics import ndcg_score

pytestmark = pytest.mark.filterwarnings("ignore", category=CategoryPoolingWarning)


def _tuple_keys(*parts):
    """One hashable key per row from its parts; None where a part is
    missing (NaN, or a negative or fractional category)."""
    keys = []
    for values in zip(*parts):
        keys.append(None if any(v is None for v in values) else values)
    return keys


def _category(values):
    return [v if v >= 0 and v == int(v) else None for v in values]


def _quartile(values, training):
    edges = np.unique(np.quantile(training[~np.isnan(training)], [0.25, 0.5, 0.75]))
    return [None if np.isnan(v) else int(np.sum(edges <= v)) for v in values]


def _loop_of_keys(keys, y, w, rank_of_row, prior):
    """``_loop_statistics`` over arbitrary keys: number them, -1 for None."""
    index = {k: i for i, k in enumerate(sorted({k for k in keys if k is not None}))}
    codes = np.array([-1.0 if k is None else float(index[k]) for k in keys])
    return _loop_statistics(codes, y, w, np.arange(len(keys)), rank_of_row, prior)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_combination_statistics_equal_the_loop_over_tuples(seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 12, 40)
    n = int(sizes.sum())
    X = np.column_stack([rng.integers(0, 6, n).astype(float), rng.normal(size=n),
                         rng.integers(0, 4, n).astype(float)])
    X[rng.random(n) < 0.1, 0] = np.nan
    X[rng.random(n) < 0.05, 1] = np.nan
    X[rng.random(n) < 0.05, 2] = -1.0
    y = rng.integers(0, 5, n).astype(float)
    w = rng.uniform(0.2, 3.0, n)
    keep = np.flatnonzero(np.isin(np.repeat(np.arange(40), sizes),
                                  rng.choice(40, 30, replace=False)))
    kept_sizes = np.unique(np.repeat(np.arange(40), sizes)[keep], return_counts=True)[1]
    offsets = np.concatenate(([0], np.cumsum(kept_sizes)))
    # Columns 0 and 2 alone, then 0 with 2 (categorical) and 0 with 1 (numeric).
    ts = OrderedTargetStatistics([0, 2, 0, 0], [-1, -1, 2, 1])
    ts.fit_edges(X, keep)
    order = np.random.default_rng(seed + 10).permutation(30)
    rank_of_row = np.repeat(order, kept_sizes)
    got = ts.fit_ordered(X, y, keep, offsets, _FixedOrder(order), sample_weight=w)
    prior = np.average(y[keep], weights=w[keep])
    Xk = X[keep]
    expected = {
        0: _tuple_keys(_category(Xk[:, 0])),
        1: _tuple_keys(_category(Xk[:, 2])),
        2: _tuple_keys(_category(Xk[:, 0]), _category(Xk[:, 2])),
        3: _tuple_keys(_category(Xk[:, 0]), _quartile(Xk[:, 1], Xk[:, 1])),
    }
    for k, keys in expected.items():
        np.testing.assert_allclose(got[:, k], _loop_of_keys(keys, y[keep], w[keep],
                                                            rank_of_row, prior), rtol=1e-12)
    # Prediction: each key's statistic over all training rows; the prior
    # for an unseen pair, a missing part or an unseen category.
    full = ts.transform(X)
    for k, keys in expected.items():
        every = _tuple_keys(*[
            _category(X[:, c]) if c != 1 else _quartile(X[:, 1], Xk[:, 1])
            for c in {0: [0], 1: [2], 2: [0, 2], 3: [0, 1]}[k]])
        for i in range(n):
            seen = [j for j, key in enumerate(keys) if key is not None and key == every[i]]
            want = (prior if every[i] is None or not seen else
                    (np.sum(w[keep][seen] * y[keep][seen]) + prior) / (np.sum(w[keep][seen]) + 1))
            assert full[i, k] == pytest.approx(want, rel=1e-12), (k, i)


def category_slopes(seed=0, n_queries=300, docs=30, n_categories=400):
    """Rows whose relevance is a category effect plus a category-specific
    slope on column 0 (what column 0 is worth depends on the category),
    with about 15 training rows per category: too few for native splits to
    learn 400 slopes. Columns 0-2 numeric (column 2 noise), 3 the category."""
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(n_queries), docs)
    n = qid.shape[0]
    effect, slope = rng.normal(size=n_categories), 2.0 * rng.normal(size=n_categories)
    category = rng.integers(0, n_categories, n)
    x = rng.normal(size=(n, 3))
    y = np.clip(np.round(effect[category] + slope[category] * x[:, 0] + 0.5 * x[:, 1]
                         + 0.5 * rng.normal(size=n) + 1.5), 0, 4)
    return np.column_stack([x, category.astype(float)]), y, qid


def _fit(cls, X, y, qid, **params):
    params = {**dict(n_estimators=15, max_leaf_nodes=8, min_samples_leaf=5, early_stopping=False,
                     categorical_features=[3], target_statistics="combinations",
                     random_state=0), **params}
    return cls(**params).fit(X, fit_labels(cls, y), qid=qid)


@pytest.fixture(scope="module")
def data():
    return category_slopes()


def test_the_short_fit_chooses_the_columns_the_trees_use(data, capsys):
    X, y, qid = data
    rng = np.random.default_rng(5)
    # Two more categorical columns (pure noise) and one more numeric one.
    wide = np.column_stack([X, rng.integers(0, 3, X.shape[0]), rng.integers(0, 50, X.shape[0]),
                            np.zeros(X.shape[0])])
    ranker = _fit(LambdaMARTRanker, wide, y, qid, categorical_features=[3, 4, 5], verbose=1)
    statistics = ranker._target_statistics
    # Each categorical column alone, then the three pairs, then each with the
    # numeric columns the trees split on (column 6 is constant: never).
    assert statistics.columns[:3].tolist() == [3, 4, 5]
    pairs = list(zip(statistics.columns[3:].tolist(), statistics.partners[3:].tolist()))
    assert pairs[:3] == [(3, 4), (3, 5), (4, 5)]
    numeric = sorted({b for a, b in pairs[3:]})
    assert 0 in numeric and 6 not in numeric and set(numeric) <= {0, 1, 2}
    assert len(pairs) == 3 + 3 * len(numeric)
    assert (f"{len(pairs)} combinations of categorical features [3, 4, 5] and numeric "
            f"features {numeric}") in capsys.readouterr().out
    # The numeric partners' quartile edges; none for the others.
    for k in range(statistics.columns.shape[0]):
        partner = statistics.partners[k]
        if partner in (0, 1, 2):
            assert statistics.edges_[k].shape == (3,)
        else:
            assert statistics.edges_[k].shape == (0,)


def test_fewer_columns_are_combined_than_the_limits(data, monkeypatch):
    X, y, qid = data
    monkeypatch.setattr(target_statistics, "COMBINED_NUMERIC", 1)
    ranker = _fit(LambdaMARTRanker, X, y, qid)
    # One categorical column: no pair of categories; one numeric partner,
    # the most important: column 0, whose slope depends on the category.
    assert ranker._target_statistics.partners.tolist() == [-1, 0]


@pytest.mark.parametrize("cls", RANKERS, ids=RANKER_IDS)
def test_every_ranker_reads_the_combinations(cls, data):
    X, y, qid = data
    ranker = _fit(cls, X, y, qid, n_estimators=4)
    n_statistics = ranker._target_statistics.columns.shape[0]
    assert n_statistics >= 2
    assert ranker._booster.n_features == X.shape[1] + n_statistics
    assert ranker.feature_importances_.shape == (X.shape[1],)
    scores = ranker.predict(X[:40])
    assert scores.shape == (40,) and np.all(np.isfinite(scores))


def test_combinations_rank_category_slopes_better_on_held_out_queries():
    X, y, qid = category_slopes(seed=1)
    train = qid < 200
    scores = {}
    for ts in (None, "ordered", "combinations"):
        ranker = LambdaMARTRanker(n_estimators=60, categorical_features=[3], target_statistics=ts,
                                  early_stopping=False, random_state=0)
        ranker.fit(X[train], y[train], qid=qid[train])
        scores[ts] = ndcg_score(y[~train], ranker.predict(X[~train]), qid=qid[~train], k=10)
    assert scores["combinations"] > max(scores[None], scores["ordered"]) + 0.05, scores


def test_importances_and_contributions_share_a_combination_between_its_columns(data):
    X, y, qid = data
    ranker = _fit(LambdaMARTRanker, X, y, qid, max_leaf_nodes=5, n_estimators=4)
    statistics = ranker._target_statistics
    n = X.shape[1]
    booster_importances = ranker._booster.feature_importances("gain")
    expected = booster_importances[:n].copy()
    for k, (column, partner) in enumerate(zip(statistics.columns, statistics.partners)):
        share = booster_importances[n + k] / (1 if partner < 0 else 2)
        expected[column] += share
        if partner >= 0:
            expected[partner] += share
    np.testing.assert_allclose(ranker.feature_importances_, expected / expected.sum())

    ensemble = ranker._tree_ensemble()
    players = ranker._explanation_players(ensemble)
    split_columns = ensemble.column_of(np.arange(ensemble.n_split_features))
    assert np.any(split_columns >= n + 1), "no tree splits on a combination"
    rows = X[:6].copy()
    rows[1, 3] = 99_999.0  # unseen category: the prior in every statistic
    rows[2, 0] = np.nan
    phi = feature_contributions(ranker, rows)
    assert phi.shape == (6, n + 1)
    np.testing.assert_allclose(phi.sum(axis=1), ranker.predict(rows), rtol=0, atol=1e-10)
    # The oracle: Shapley values with each combination as a player of its
    # own, then its value shared equally by its two columns.
    per_feature = ranker._model_input(rows)[:, ensemble.feature_columns]
    categories = ensemble.categories or [None] * ensemble.n_split_features
    n_players = int(players.max()) + 1
    for i in range(rows.shape[0]):
        raw = brute_force_shap(list(ensemble.trees()), ensemble.baseline, per_feature[i],
                               n_players, categories=categories, players=players)
        expected = raw[:n].copy()
        for k in range(statistics.columns.shape[0]):
            if statistics.partners[k] >= 0:
                expected[statistics.columns[k]] += raw[n + k] / 2
                expected[statistics.partners[k]] += raw[n + k] / 2
        np.testing.assert_allclose(phi[i, :-1], expected, rtol=0, atol=1e-10)
        assert phi[i, -1] == pytest.approx(raw[-1], abs=1e-10)
    pair = explain_pair(ranker, rows[0], rows[3])
    np.testing.assert_allclose(pair[:-1].sum(), ranker.predict(rows[[0]])[0]
                               - ranker.predict(rows[[3]])[0], atol=1e-10)


def _members(path):
    with zipfile.ZipFile(path) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def _array(members, name):
    return np.lib.format.read_array(io.BytesIO(members[name + ".npy"]), allow_pickle=False)


def _documented_statistics(members, rows):
    """The statistic columns of ``rows`` computed from a format 6 file as
    the persistence docstring describes them."""
    document = json.loads(members["model.json"])
    prior = document["fitted"]["target_statistic_prior"]
    columns, partners = (_array(members, "target_statistic_" + a) for a in ("columns", "partners"))
    sizes = _array(members, "target_statistic_n_categories")
    keys = np.split(_array(members, "target_statistic_categories"), np.cumsum(sizes)[:-1])
    values = np.split(_array(members, "target_statistic_values"), np.cumsum(sizes)[:-1])
    edges = np.split(_array(members, "target_statistic_edges"),
                     np.cumsum(_array(members, "target_statistic_n_edges"))[:-1])
    own = {int(c): k for k, (c, p) in enumerate(zip(columns, partners)) if p < 0}
    out = np.full((rows.shape[0], columns.shape[0]), float(prior))
    for i, row in enumerate(rows):
        for j, (column, partner) in enumerate(zip(columns, partners)):
            value = row[column]
            if partner < 0:
                key = value
            else:
                first = keys[own[int(column)]].tolist()
                if value not in first:
                    continue
                if int(partner) in own:
                    second = keys[own[int(partner)]].tolist()
                    if row[partner] not in second:
                        continue
                    b, n = second.index(row[partner]), len(second)
                else:
                    if np.isnan(row[partner]):
                        continue
                    b, n = int(np.sum(edges[j] <= row[partner])), edges[j].shape[0] + 1
                key = first.index(value) * n + b
            table = keys[j].tolist()
            if key in table:
                out[i, j] = values[j][table.index(key)]
    return out


def test_model_file_round_trip_documented_format_and_tampering(data, tmp_path):
    X, y, qid = data
    ranker = _fit(LambdaMARTRanker, X, y, qid)
    path = tmp_path / "model.zip"
    ranker.save_model(path)
    members = _members(path)
    assert json.loads(members["model.json"])["format_version"] == 6
    loaded = load_model(path)
    rows = np.vstack([X[:50], [[0.0, 0.0, 0.0, 123_456.0], [np.nan, 0.0, 0.0, 7.0],
                               [0.0, 0.0, 0.0, np.nan]]])
    np.testing.assert_array_equal(loaded.predict(rows), ranker.predict(rows))
    np.testing.assert_array_equal(loaded.feature_importances_, ranker.feature_importances_)
    assert loaded.target_statistics == "combinations"
    np.testing.assert_array_equal(_documented_statistics(members, rows),
                                  ranker._target_statistics.transform(rows))

    def with_itself(a):
        a[-1] = 3
        return a

    def single_last(a):
        a[-1] = -1
        return a

    def unsorted(a):
        a[[0, 1]] = a[[1, 0]]
        return a

    def edges_on_a_single(a):
        a[0] = 1
        return a

    for name, edit, message in (
        ("target_statistic_partners", with_itself, "other input columns"),
        ("target_statistic_partners", single_last, "then the first column of each combination"),
        ("target_statistic_edges", unsorted, "increasing"),
        ("target_statistic_n_edges", edges_on_a_single, "numeric partners"),
    ):
        with pytest.raises(ValueError, match=message):
            load_model(with_array_edited(members, name, edit))
    document = json.loads(members["model.json"])
    document["params"]["target_statistics"] = "ordered"
    with pytest.raises(ValueError, match="arrays are those of 'combinations'"):
        load_model(zip_with(members, {"model.json": json.dumps(document)}))


def test_exporters_and_interaction_constraints_refuse(data):
    X, y, qid = data
    ranker = _fit(LambdaMARTRanker, X, y, qid, n_estimators=3)
    for call in (lambda: to_lightgbm(ranker), lambda: to_xgboost(ranker)):
        with pytest.raises(ValueError, match="target_statistics='combinations'.*no serving"):
            call()
    with pytest.raises(ValueError, match="combinations.*interaction_cst"):
        _fit(LambdaMARTRanker, X, y, qid, interaction_cst=[[0, 3], [1, 2]])


def test_a_warm_start_keeps_the_combinations_and_their_edges(data):
    X, y, qid = data
    first, second = qid < 150, qid >= 150
    ranker = _fit(LambdaMARTRanker, X[first], y[first], qid[first], warm_start=True,
                  n_estimators=5)
    statistics = ranker._target_statistics
    kept = ([e.copy() for e in statistics.edges_], statistics.partners.copy(),
            [v.copy() for v in statistics.values_])
    before = ranker.predict(X)
    ranker.set_params(n_estimators=6).fit(X[second], y[second], qid=qid[second])
    assert ranker._target_statistics is statistics
    for old, new in zip(kept[0], statistics.edges_):
        np.testing.assert_array_equal(old, new)
    np.testing.assert_array_equal(kept[1], statistics.partners)
    for old, new in zip(kept[2], statistics.values_):
        np.testing.assert_array_equal(old, new)
    *_, five, six = ranker.staged_predict(X)
    np.testing.assert_array_equal(five, before)
    assert not np.array_equal(six, before)
    with pytest.raises(ValueError, match="grown with target_statistics='combinations'"):
        ranker.set_params(n_estimators=7, target_statistics="ordered").fit(X, y, qid=qid)
    # On the same data, a warm start gives the model of one fit.
    warm = _fit(LambdaMARTRanker, X, y, qid, warm_start=True, n_estimators=3)
    warm.set_params(n_estimators=6).fit(X, y, qid=qid)
    cold = _fit(LambdaMARTRanker, X, y, qid, n_estimators=6)
    np.testing.assert_array_equal(warm.predict(X), cold.predict(X))


def test_auto_grows_symmetric_trees_with_combinations(data):
    X, y, qid = data
    auto = _fit(YetiRankRanker, X, y, qid, max_leaf_nodes=31, n_estimators=3)
    symmetric = _fit(YetiRankRanker, X, y, qid, max_leaf_nodes=31, n_estimators=3,
                     grow_policy="symmetric")
    assert auto.grow_policy_ == "symmetric"
    np.testing.assert_array_equal(auto.predict(X), symmetric.predict(X))
    # The statistics of single columns alone leave categorical data to
    # leaf-wise trees, as without statistics.
    ordered = _fit(YetiRankRanker, X, y, qid, max_leaf_nodes=31, n_estimators=3,
                   target_statistics="ordered")
    assert ordered.grow_policy_ == "lossguide"


@pytest.mark.parametrize("debiasing", ["ipw", "unbiased_lambdamart", "additive"])
def test_position_debiasing_fits_with_combinations_without_a_warning(data, debiasing):
    X, y, qid = data
    clicks = (y >= 3).astype(float)
    position = np.tile(np.arange(1, 31), qid.shape[0] // 30)
    extra = {"propensity": 1 / np.arange(1, 31)} if debiasing == "ipw" else {}
    ranker = LambdaMARTRanker(n_estimators=3, max_leaf_nodes=8, min_samples_leaf=5,
                              early_stopping=False, categorical_features=[3],
                              target_statistics="combinations", random_state=0,
                              position_debiasing=debiasing, **extra)
    with warnings.catch_warnings():
        # The first fit runs without the positions; its warning stays inside.
        warnings.simplefilter("error")
        ranker.fit(X, clicks, qid=qid, position=position)
    assert ranker._target_statistics.partners.tolist()[:2] == [-1, 0]
    assert np.all(np.isfinite(ranker.predict(X[:20])))


def test_verbose_names_the_features_and_nothing_to_combine_warns(data, capsys):
    pd = pytest.importorskip("pandas")
    X, y, qid = data
    frame = pd.DataFrame(X[:, :3], columns=["price", "bm25", "noise"])
    frame["merchant"] = pd.Categorical(X[:, 3].astype(int))
    _fit(LambdaMARTRanker, frame, y, qid, categorical_features="from_dtype", verbose=1,
         n_estimators=2)
    assert "categorical features ['merchant'] and numeric features ['price'" in (
        capsys.readouterr().out)
    # One categorical feature and no numeric one: nothing to combine.
    with pytest.warns(UserWarning, match="nothing to combine.*'merchant'") as caught:
        ranker = _fit(LambdaMARTRanker, frame[["merchant"]], y, qid,
                      categorical_features="from_dtype", n_estimators=2)
    assert caught[0].filename == __file__
    assert ranker._target_statistics.partners.tolist() == [-1]


def test_quartile_edges_of_a_partner_with_infinite_values_are_finite(data, tmp_path):
    X, y, qid = data
    X = X.copy()
    X[: int(0.8 * X.shape[0]), 0] = np.inf  # most of column 0, the slope's column
    ranker = _fit(LambdaMARTRanker, X, y, qid, n_estimators=3)
    statistics = ranker._target_statistics
    numeric = statistics.partners == 0
    assert numeric.any()
    for k in np.flatnonzero(numeric):
        assert np.all(np.isfinite(statistics.edges_[k])) and statistics.edges_[k].shape[0] > 0
    ranker.save_model(tmp_path / "model.zip")
    np.testing.assert_array_equal(load_model(tmp_path / "model.zip").predict(X), ranker.predict(X))
