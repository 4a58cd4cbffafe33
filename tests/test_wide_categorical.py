"""Wide categorical columns: more categories than ``max_bins``, binned as
several features of up to ``max_bins`` categories each (see
:mod:`sklearn_ltr._gbdt.binning`), through prediction, persistence,
constraints, the exporters and TreeSHAP."""

import io
import warnings

import numpy as np
import pytest

from conftest import RANKER_IDS, RANKERS, fit_labels
from sklearn_ltr import LambdaMARTRanker, load_model
from sklearn_ltr._gbdt.binning import BinMapper
from sklearn_ltr._gbdt.category_bins import MIN_CATEGORY_ROWS
from sklearn_ltr.exceptions import CategoryPoolingWarning
from sklearn_ltr.export import to_lightgbm, to_xgboost
from sklearn_ltr.inspection import feature_contributions
from sklearn_ltr.metrics import ndcg_score

from _engine_helpers import predict_binned


def _wide_data(n_queries=150, docs=40, n_categories=700, seed=0):
    """A numeric feature, a categorical column of ``n_categories`` uniformly
    used categories whose effects decide most of the relevance, and another
    numeric feature; 5% of the category values missing."""
    rng = np.random.default_rng(seed)
    n = n_queries * docs
    qid = np.repeat(np.arange(n_queries), docs)
    cat = rng.integers(0, n_categories, n)
    effect = rng.normal(scale=1.5, size=n_categories)
    x = rng.normal(size=(n, 2))
    signal = effect[cat] + 0.5 * x[:, 0] + rng.normal(scale=0.3, size=n)
    y = np.digitize(signal, np.quantile(signal, [0.5, 0.75, 0.9, 0.97])).astype(float)
    X = np.column_stack([x[:, 0], cat.astype(float), x[:, 1]])
    X[rng.random(n) < 0.05, 1] = np.nan
    return X, y, qid


def _fit(X, y, qid, **params):
    params = dict(dict(n_estimators=30, categorical_features=[1], early_stopping=False,
                       random_state=0), **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CategoryPoolingWarning)
        return LambdaMARTRanker(**params).fit(X, y, qid=qid)


@pytest.fixture(scope="module")
def wide():
    X, y, qid = _wide_data()
    return _fit(X, y, qid), X, y, qid


# -- binning ---------------------------------------------------------------


def test_a_wide_column_is_binned_as_blocks_of_its_most_frequent_categories():
    # Category c appears 20 - c times (c < 12), so the frequency order is
    # 0, 1, ..., 11; with max_bins=4 the blocks are {0..3}, {4..7}, {8..11}.
    col = np.concatenate([np.full(20 - c, float(c)) for c in range(12)] + [[np.nan, -2.0]])
    X = np.column_stack([np.arange(col.size, dtype=float), np.random.default_rng(0).permutation(col)])
    mapper = BinMapper(max_bins=4, is_categorical=[False, True]).fit(X)
    np.testing.assert_array_equal(mapper.feature_columns_, [0, 1, 1, 1])
    assert mapper.n_binned_features_ == 4 and mapper.has_wide_columns()
    for f, block in zip((1, 2, 3), ([0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11])):
        np.testing.assert_array_equal(mapper.bin_thresholds_[f], block)
        assert mapper.is_categorical_[f] and mapper.has_missing_values_[f]
    assert mapper.pooled_categories_ == {}
    binned = mapper.transform(X)
    assert binned.shape == (X.shape[0], 4)
    # Each category has a bin in its block's feature and the missing bin in
    # the others; NaN and negative values are missing everywhere.
    for row in range(X.shape[0]):
        value = X[row, 1]
        for f in (1, 2, 3):
            block = mapper.bin_thresholds_[f]
            expected = int(np.searchsorted(block, value)) if value in block else 4
            assert binned[row, f] == expected


def test_only_rare_categories_are_pooled_and_counted():
    # Category c appears c + 1 times (c < 10), category 0 once more; with
    # max_bins=4 the four most frequent (6..9) are kept whatever their
    # counts, then 5, 4, 3, 2 (seen at least MIN_CATEGORY_ROWS = 3 times),
    # and 1 and 0 (2 rows each) are pooled.
    assert MIN_CATEGORY_ROWS == 3
    col = np.concatenate([np.full(c + 1, float(c)) for c in range(10)] + [[np.nan, -1.0, 0.0]])
    mapper = BinMapper(max_bins=4, is_categorical=[True]).fit(col[:, None])
    np.testing.assert_array_equal(mapper.bin_thresholds_[0], [6, 7, 8, 9])
    np.testing.assert_array_equal(mapper.bin_thresholds_[1], [2, 3, 4, 5])
    # 10 categories, 2 pooled, holding 4 of the 58 rows.
    assert mapper.pooled_categories_ == {0: (10, 2, 4, col.size)}


def test_the_most_frequent_categories_are_kept_whatever_their_counts():
    # 200 categories of 10 rows, 100 of 2 rows and 50 of 1 row, max_bins=255:
    # the 255 most frequent are the 200 and the 55 smallest codes of two
    # rows; the other 45 of two rows and the 50 of one are pooled.
    col = np.concatenate([np.repeat(np.arange(200.0), 10), np.repeat(np.arange(200.0, 300.0), 2),
                          np.arange(300.0, 350.0)])
    mapper = BinMapper(is_categorical=[True]).fit(col[:, None])
    assert not mapper.has_wide_columns()
    np.testing.assert_array_equal(mapper.bin_thresholds_[0], np.arange(255.0))
    assert mapper.pooled_categories_ == {0: (350, 95, 140, col.size)}


def test_columns_of_at_most_max_bins_categories_stay_one_feature():
    col = np.repeat(np.arange(255.0), 2)
    mapper = BinMapper(is_categorical=[True]).fit(col[:, None])
    assert not mapper.has_wide_columns()
    np.testing.assert_array_equal(mapper.feature_columns_, [0])


# -- fitting and predicting --------------------------------------------------


def test_every_frequent_category_is_separable():
    # 600 categories of 30 rows, relevance a function of the category
    # alone, in queries of 20 random rows (short enough that NDCG's
    # truncation leaves no pair out). With the 255 most frequent categories
    # kept and the rest pooled as missing, the 345 others would all score
    # the same; every category must get a score of its own group's order.
    rng = np.random.default_rng(0)
    n_categories = 600
    cat = np.repeat(np.arange(n_categories), 30)
    label = rng.permutation(np.arange(n_categories) % 3).astype(float)
    X = np.column_stack([cat.astype(float), rng.normal(size=cat.size)])
    y = label[cat]
    qid = rng.permutation(cat.size) // 20
    model = _fit(X, y, qid, categorical_features=[0], n_estimators=60, max_leaf_nodes=63,
                 min_samples_leaf=5)
    assert model._bin_mapper.n_binned_features_ == 4  # 3 blocks and the numeric feature
    score = model.predict(np.column_stack([np.arange(n_categories, dtype=float),
                                           np.zeros(n_categories)]))
    # Every category of label 2 above every category of label 1, and those
    # above every category of label 0, beyond the first block too.
    assert score[label == 2].min() > score[label == 1].max()
    assert score[label == 1].min() > score[label == 0].max()


def test_wide_columns_rank_better_than_pooling_them():
    X, y, qid = _wide_data(n_queries=300, n_categories=400)
    train, test = qid < 200, qid >= 200
    wide_model = _fit(X[train], y[train], qid[train], n_estimators=60)
    # What binning did before: the 255 most frequent categories, the others missing.
    kept = np.unique(X[train, 1][~np.isnan(X[train, 1])], return_counts=True)
    top = kept[0][np.argsort(-kept[1], kind="stable")[:255]]
    pooled = X.copy()
    pooled[~np.isin(pooled[:, 1], top), 1] = np.nan
    pooled_model = _fit(pooled[train], y[train], qid[train], n_estimators=60)
    ndcg_wide = ndcg_score(y[test], wide_model.predict(X[test]), qid=qid[test])
    ndcg_pooled = ndcg_score(y[test], pooled_model.predict(pooled[test]), qid=qid[test])
    assert ndcg_wide > ndcg_pooled + 0.05, (ndcg_wide, ndcg_pooled)


def test_predict_equals_the_binned_prediction_of_training(wide):
    model, X, _, _ = wide
    ensemble = model._tree_ensemble()
    features = np.unique(ensemble.nodes["feature_idx"][ensemble.splits])
    assert np.sum(model._bin_mapper.feature_columns_[features] == 1) >= 2  # blocks used
    binned = model._bin_mapper.transform(X)
    expected = predict_binned(ensemble.nodes, ensemble.tree_starts, binned,
                              model._bin_mapper.missing_values_bin_idx_, init=ensemble.baseline)
    np.testing.assert_array_equal(model.predict(X), expected)
    *_, last = model.staged_predict(X)
    np.testing.assert_allclose(last, model.predict(X), rtol=1e-12)


def test_pooled_unseen_negative_fractional_and_nan_categories_take_the_missing_side(wide):
    model, X, _, _ = wide
    mapper = model._bin_mapper
    kept = np.concatenate([mapper.bin_thresholds_[f] for f in np.flatnonzero(
        mapper.feature_columns_ == 1)])
    pooled = np.setdiff1d(X[~np.isnan(X[:, 1]), 1], kept)
    assert pooled.size == mapper.pooled_categories_[1][1] > 0
    rows = np.repeat(X[:5], 5, axis=0)
    rows[0::5, 1] = np.nan
    rows[1::5, 1] = 10_000.0  # never seen
    rows[2::5, 1] = -3.0
    rows[3::5, 1] = 2.5  # not an integer code
    rows[4::5, 1] = pooled[0]  # seen in fewer than MIN_CATEGORY_ROWS rows
    scores = model.predict(rows).reshape(5, 5)
    np.testing.assert_array_equal(scores, scores[:, :1].repeat(5, axis=1))


def test_feature_importances_are_per_column(wide):
    model, *_ = wide
    importances = model.feature_importances_
    assert importances.shape == (3,)
    gains = np.zeros(3)
    for tree in model._booster.trees:
        splits = tree[tree["is_leaf"] == 0]
        np.add.at(gains, model._bin_mapper.feature_columns_[splits["feature_idx"]],
                  np.maximum(splits["gain"], 0))
    np.testing.assert_allclose(importances, gains / gains.sum())
    assert importances[1] == importances.max()


def test_max_features_samples_columns_with_all_their_blocks():
    X, y, qid = _wide_data(n_queries=60)
    # One of three columns per tree: each tree splits on one column only.
    model = _fit(X, y, qid, max_features=0.3, n_estimators=20)
    columns = model._bin_mapper.feature_columns_
    used_blocks = 0
    for tree in model._booster.trees:
        features = np.unique(tree["feature_idx"][tree["is_leaf"] == 0])
        assert np.unique(columns[features]).size <= 1
        used_blocks = max(used_blocks, features.size if columns[features[:1]].tolist() == [1]
                          else 0)
    assert used_blocks >= 2


def test_interaction_constraints_hold_for_the_columns():
    X, y, qid = _wide_data(n_queries=60)
    model = _fit(X, y, qid, interaction_cst=[[0, 1], [2]], n_estimators=20)
    columns = model._bin_mapper.feature_columns_
    for tree in model._booster.trees:
        # Every root-to-leaf path uses columns of one group only.
        stack = [(0, frozenset())]
        while stack:
            node, used = stack.pop()
            if tree["is_leaf"][node]:
                assert used <= {0, 1} or used <= {2}, used
                continue
            used = used | {int(columns[tree["feature_idx"][node]])}
            stack += [(tree["left"][node], used), (tree["right"][node], used)]


@pytest.mark.parametrize("cls", RANKERS, ids=RANKER_IDS)
def test_every_ranker_fits_a_wide_column(cls):
    X, y, qid = _wide_data(n_queries=40, n_categories=400)
    y = fit_labels(cls, y)
    model = cls(n_estimators=5, categorical_features=[1], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CategoryPoolingWarning)
        model.fit(X, y, qid=qid)
    assert model._bin_mapper.has_wide_columns()
    assert np.all(np.isfinite(model.predict(X)))


# -- persistence, exporters and TreeSHAP --------------------------------------


def test_model_files_keep_the_blocks(wide):
    model, X, _, _ = wide
    buffer = io.BytesIO()
    model.save_model(buffer)
    buffer.seek(0)
    loaded = load_model(buffer)
    np.testing.assert_array_equal(loaded._bin_mapper.feature_columns_,
                                  model._bin_mapper.feature_columns_)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    np.testing.assert_array_equal(loaded.feature_importances_, model.feature_importances_)
    np.testing.assert_array_equal(loaded._bin_mapper.transform(X), model._bin_mapper.transform(X))


def test_lightgbm_and_xgboost_exports_predict_as_we_do(wide):
    xgboost = pytest.importorskip("xgboost")
    pytest.importorskip("lightgbm")
    model, X, _, _ = wide
    rows = X.copy()
    rows[:20, 1] = 5000.0  # unseen
    expected = model.predict(rows)
    np.testing.assert_allclose(to_lightgbm(model).predict(rows), expected, rtol=0, atol=1e-12)
    got = to_xgboost(model).predict(xgboost.DMatrix(rows))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)  # XGBoost sums in float32


def test_contributions_count_each_column_once_as_lightgbm_does(wide):
    # LightGBM's TreeSHAP of the exported model, where every block's split is
    # a split on the column itself, is the oracle: the column is one player.
    pytest.importorskip("lightgbm")
    model, X, _, _ = wide
    rows = X[:300]
    ours = feature_contributions(model, rows)
    assert ours.shape == (300, 4)
    np.testing.assert_allclose(ours.sum(axis=1), model.predict(rows), rtol=0, atol=1e-10)
    theirs = to_lightgbm(model).predict(rows, pred_contrib=True)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-10)


def test_a_wide_ranker_is_a_format_4_file_and_narrow_ones_are_not(wide, tmp_path):
    import json
    import zipfile

    model, X, y, qid = wide
    narrow = _fit(X, y, qid, max_bins=255, categorical_features=None, n_estimators=2)
    for ranker, version in ((model, 4), (narrow, 1)):
        buffer = io.BytesIO()
        ranker.save_model(buffer)
        with zipfile.ZipFile(buffer) as zf:
            assert json.loads(zf.read("model.json"))["format_version"] == version
            assert ("bin_feature_columns.npy" in zf.namelist()) == (version == 4)


def _tampered_columns(columns):
    if columns.size < 4:
        raise AssertionError(columns)
    decreasing, numeric_twice, column_missing = columns.copy(), columns.copy(), columns.copy()
    decreasing[[1, -1]] = decreasing[[-1, 1]]
    numeric_twice[-2] = numeric_twice[-1]  # the last column is numeric
    column_missing[0] = 1
    return {"decreasing": (decreasing, "every column .* in increasing order"),
            "a numeric column twice": (numeric_twice, "are not all categorical or all numeric"
                                       "|more than one binned feature"),
            "a column missing": (column_missing, "every column .* in increasing order")}


@pytest.mark.parametrize("case", ["decreasing", "a numeric column twice", "a column missing"])
def test_inconsistent_feature_columns_are_refused(wide, case, tmp_path):
    from test_persistence import _members, _npy, _write_members

    model, *_ = wide
    path = tmp_path / "m.npz"
    model.save_model(path)
    members = _members(path)
    columns = np.lib.format.read_array(io.BytesIO(members["bin_feature_columns.npy"]))
    edited, problem = _tampered_columns(columns)[case]
    members["bin_feature_columns.npy"] = _npy(edited)
    _write_members(path, members)
    with pytest.raises(ValueError, match=rf"^Cannot load model file {path}: .*({problem})"):
        load_model(path)


# -- histograms of a wide column's blocks, built in one pass ------------------


@pytest.mark.parametrize("constant_hessian", [None, 0.5])
@pytest.mark.parametrize("sampled", [False, True])
def test_blocks_built_in_one_pass_equal_the_feature_by_feature_histograms(constant_hessian,
                                                                          sampled):
    # The oracle: the same row store without feature_columns builds every
    # block as a feature of its own. Value bins must be equal bit for bit;
    # missing bins (totals minus value bins) to rounding, and exactly 0 where
    # no row is missing.
    from sklearn_ltr._gbdt.common import bitset_of
    from sklearn_ltr._gbdt.histogram import allocate_histograms
    from sklearn_ltr._gbdt.node_rows import NodeRows

    X, _, _ = _wide_data(n_queries=150, n_categories=700)
    mapper = BinMapper(is_categorical=[False, True, False])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CategoryPoolingWarning)
        mapper.fit(X)
    assert mapper.n_binned_features_ == 5  # three blocks
    X_binned = mapper.transform(X)
    rng = np.random.default_rng(1)
    g = rng.normal(size=X.shape[0]).astype(np.float32)
    h = (np.full(X.shape[0], constant_hessian) if constant_hessian is not None
         else rng.uniform(0.1, 1, X.shape[0])).astype(np.float32)
    sample = np.sort(rng.choice(X.shape[0], X.shape[0] // 2, replace=False)) if sampled else None
    mask = np.ones(5, dtype=np.uint8)
    mask[0] = 0  # a masked-out feature is left alone
    built = {}
    for name, columns in (("one pass", mapper.feature_columns_), ("per feature", None)):
        rows = NodeRows(X_binned, 255, mapper.n_bins_non_missing_,
                        constant_hessian=constant_hessian, feature_columns=columns)
        hists = allocate_histograms(4, 5, 256)
        rows.start(g, h, sample, mask)
        rows.root_histogram(hists[0])
        # A split on the second block, then one level of two nodes.
        rows.split(0, 2, bitset_of(np.arange(0, 255, 3)), 1, 2, histogram_of=1, hist=hists[1])
        rows.split_level([1, 2], [4, 1], [bitset_of([0, 5]), bitset_of(np.arange(100))],
                         [3, 5], [4, 6], [3, 6], hists, [2, 3])
        built[name] = hists
    for k in range(4):
        one, per = built["one pass"][k], built["per feature"][k]
        for f in range(1, 5):
            n = mapper.n_bins_non_missing_[f]
            np.testing.assert_array_equal(one[f, :n], per[f, :n])
            np.testing.assert_allclose(one[f, 255], per[f, 255], rtol=1e-12, atol=1e-9)
            if per[f, 255, 2] == 0:
                np.testing.assert_array_equal(one[f, 255], 0.0)
        np.testing.assert_array_equal(one[0], per[0])  # untouched (masked out)
