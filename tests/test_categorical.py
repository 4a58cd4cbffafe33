"""Native categorical features: binning, the split search, prediction, and
the rankers' ``categorical_features`` parameter."""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

from conftest import RANKER_IDS, RANKERS, fit_labels
from sklearn_ltr import LambdaMARTRanker
from sklearn_ltr._gbdt.binning import BinMapper
from sklearn_ltr._gbdt.categorical import (
    CATEGORY_L2,
    CATEGORY_SMOOTHING,
    MAX_CATEGORIES_LEFT,
    MIN_CATEGORY_SUPPORT,
    MIN_ROWS_PER_GROUP,
    best_categorical_split,
    candidates_at_the_ends,
    left_categories,
)
from sklearn_ltr._gbdt.common import bins_of
from sklearn_ltr.metrics import ndcg_score

from _engine_helpers import grow_tree, predict_binned

MISSING = 255


# -- binning ---------------------------------------------------------------


def test_bin_mapper_keeps_the_most_frequent_categories_as_bins():
    rng = np.random.default_rng(0)
    # Category c appears c + 1 times: with max_bins=4 the kept ones are the
    # four most frequent, 6..9, and their bins follow their values.
    col = np.concatenate([np.full(c + 1, float(c)) for c in range(10)])
    col = np.concatenate([col, [np.nan, -1.0, -7.0]])
    X = np.column_stack([rng.normal(size=col.size), rng.permutation(col)])
    mapper = BinMapper(max_bins=4, is_categorical=[False, True]).fit(X)
    np.testing.assert_array_equal(mapper.bin_thresholds_[1], [6.0, 7.0, 8.0, 9.0])
    assert mapper.n_bins_non_missing_[1] == 4
    assert mapper.has_missing_values_[1]
    assert mapper.feature_categories()[0] is None
    binned = mapper.transform(X)[:, 1]
    expected = np.full(col.size, 4)  # the missing bin is max_bins
    for b, c in enumerate([6.0, 7.0, 8.0, 9.0]):
        expected[X[:, 1] == c] = b
    np.testing.assert_array_equal(binned, expected)


def test_bin_mapper_records_the_categories_and_rows_it_pools():
    # Category c appears c + 1 times, 10 categories, max_bins=4: the two
    # seen in fewer than 3 rows (1, and 0 with its extra row) are pooled,
    # 4 of the 55 + 3 rows (tests/test_wide_categorical.py has the rule).
    col = np.concatenate([np.full(c + 1, float(c)) for c in range(10)] + [[np.nan, -1.0, 0.0]])
    mapper = BinMapper(max_bins=4, is_categorical=[True]).fit(col[:, None])
    assert mapper.pooled_categories_ == {0: (10, 2, 4, col.size)}
    assert BinMapper(max_bins=10, is_categorical=[True]).fit(col[:, None]).pooled_categories_ == {}


@pytest.mark.parametrize("cls", RANKERS, ids=RANKER_IDS)
def test_rankers_warn_when_a_feature_has_more_categories_than_max_bins(cls):
    from sklearn_ltr.exceptions import CategoryPoolingWarning

    rng = np.random.default_rng(0)
    n = 600
    # 12 frequent categories and 8 seen once: with max_bins=8 the 8 most
    # frequent and the 4 other frequent ones are kept, the 8 rare pooled.
    codes = np.concatenate([rng.integers(0, 12, n - 8), np.arange(12, 20)]).astype(float)
    X = np.column_stack([rng.normal(size=n), codes])
    qid = np.repeat(np.arange(30), 20)
    y = fit_labels(cls, rng.integers(0, 4, n).astype(float))
    params = dict(n_estimators=2, categorical_features=[1], random_state=0)
    with pytest.warns(CategoryPoolingWarning) as caught:
        cls(**params, max_bins=8).fit(X, y, qid=qid)
    message = str(caught[0].message)
    assert ("Categorical feature 1 has 20 categories; 8 of them (8 of the 600 rows binned, "
            "1.3%) are treated as missing values") in message
    assert "beyond its max_bins=8 most frequent that were seen in fewer than 3 rows" in message
    assert caught[0].filename == __file__  # points at the fit call, past every wrapper
    with warnings.catch_warnings():
        warnings.simplefilter("error", CategoryPoolingWarning)
        cls(**params, max_bins=20).fit(X, y, qid=qid)


def test_bin_mapper_ties_in_frequency_keep_the_smaller_category():
    col = np.array([5.0, 5.0, 3.0, 3.0, 9.0, 9.0, 1.0])
    mapper = BinMapper(max_bins=2, is_categorical=[True]).fit(col[:, None])
    np.testing.assert_array_equal(mapper.bin_thresholds_[0], [3.0, 5.0])


def test_bin_mapper_categories_without_missing_values():
    col = np.array([2.0, 0.0, 2.0, 7.0])
    mapper = BinMapper(is_categorical=[True]).fit(col[:, None])
    assert not mapper.has_missing_values_[0]
    np.testing.assert_array_equal(mapper.transform(col[:, None])[:, 0], [1, 0, 1, 2])


@pytest.mark.parametrize("bad", [1.5, 2.0**31, np.inf])
def test_bin_mapper_refuses_categories_that_are_not_integer_codes(bad):
    col = np.array([0.0, 1.0, bad])
    with pytest.raises(ValueError, match="integer codes"):
        BinMapper(is_categorical=[True]).fit(col[:, None])


# -- split search ----------------------------------------------------------


def _histogram(g_by_category, n_rows_by_category, missing=(0.0, 0)):
    """A one-feature histogram with constant hessian 1 per row."""
    h = np.zeros((256, 4))
    for b, (g, n) in enumerate(zip(g_by_category, n_rows_by_category)):
        h[b] = (g, n, n, 0)
    h[MISSING] = (missing[0], missing[1], missing[1], 0)
    return h


def _gain(gl, hl, g, h):
    """The gain of a categorical split: the children's terms with the extra
    L2 of categorical splits (LightGBM's cat_l2), the parent's without."""
    return gl**2 / (hl + CATEGORY_L2) + (g - gl) ** 2 / (h - hl + CATEGORY_L2) - g**2 / h


def test_categorical_split_on_a_hand_computed_case():
    # Three categories of 200 rows with mean gradients +1, -1, +1: the best
    # split sends category 1 alone to one side.
    h = _histogram([200.0, -200.0, 200.0], [200, 200, 200])
    gain, n_left, mleft, gl, hl, cl = best_categorical_split(
        h, 3, MISSING, 200.0, 600.0, 600.0, 200.0**2 / 600.0, 1, 0.0, 0.0, -np.inf, np.inf)
    assert gain == pytest.approx(200**2 / 210 + 400**2 / 410 - 200**2 / 600)
    assert (gl, hl, cl) == (-200.0, 200.0, 200.0)
    assert bins_of(left_categories(h, 3, MISSING, n_left)).tolist() == [1]
    # No missing value in the node: NaN goes to the larger child (right).
    assert mleft == 0


def _documented_candidates(g, n):
    """The sets the documented rules scan: prefixes of the order by
    ``g / (n + 10)`` from either end, at most 32 and half of the categories,
    a new candidate only once MIN_ROWS_PER_GROUP more rows joined the left
    side, and MIN_ROWS_PER_GROUP rows at least on the right."""
    order = np.argsort(g / (n + 10.0), kind="stable")
    max_left = min(32, (len(g) + 1) // 2)
    sets = []
    for direction in (order, order[::-1]):
        group = 0
        for i in range(max_left):
            group += n[direction[i]]
            if n.sum() - n[direction[: i + 1]].sum() < MIN_ROWS_PER_GROUP:
                break
            if group >= MIN_ROWS_PER_GROUP:
                sets.append(direction[: i + 1])
                group = 0
    return sets


def test_categorical_split_is_the_best_of_the_documented_candidates():
    # Oracle: the documented rules written out again (above); the search
    # must return the best of their candidate sets, and for least squares no
    # other subset may do better (Fisher: the best partition is a prefix of
    # the order by mean, up to the smoothing of the keys).
    rng = np.random.default_rng(3)
    for _ in range(20):
        k = rng.integers(2, 9)
        n = rng.integers(MIN_CATEGORY_SUPPORT, 300, size=k)
        g = rng.normal(size=k) * n
        h = _histogram(g, n)
        G, H = g.sum(), float(n.sum())
        gain, n_left, _, gl, hl, cl = best_categorical_split(
            h, k, MISSING, G, H, H, G**2 / H, 1, 0.0, 0.0, -np.inf, np.inf)
        left = bins_of(left_categories(h, k, MISSING, n_left))
        assert gl == pytest.approx(g[left].sum()) and cl == n[left].sum()
        assert gain == pytest.approx(_gain(g[left].sum(), n[left].sum(), G, H))
        candidates = _documented_candidates(g, n)
        if not candidates:
            assert gain == -np.inf
            continue
        assert gain == pytest.approx(max(_gain(g[s].sum(), n[s].sum(), G, H)
                                         for s in candidates))
        best_subset = max(
            _gain(g[list(s)].sum(), n[list(s)].sum(), G, H)
            for r in range(1, k) for s in itertools.combinations(range(k), r)
        )
        assert gain <= best_subset + 1e-9


@pytest.mark.parametrize("n_categories", [0, 1, 2, 5, 63, 64, 65, 66, 130, 200, 255])
@pytest.mark.parametrize("keys", ["distinct", "tied", "with_nan"])
def test_ends_of_the_candidates_are_those_of_a_stable_sort(n_categories, keys):
    # Oracle: NumPy's stable argsort of every candidate's smoothed key (NaN
    # last, equal keys by bin), of which the scans read the first and last
    # min(MAX_CATEGORIES_LEFT, (n + 1) // 2).
    rng = np.random.default_rng(n_categories)
    for _ in range(20):
        h = np.zeros((256, 4))
        h[:, 2] = rng.integers(0, 3 * MIN_CATEGORY_SUPPORT, 256)
        h[:, 1] = rng.integers(0, 3, 256)
        h[:, 0] = (rng.integers(-2, 3, 256) if keys == "tied" else rng.normal(size=256))
        if keys == "with_nan":
            h[rng.integers(0, 256, 4), 0] = np.nan
        candidates = np.array(
            [b for b in range(n_categories) if h[b, 2] >= MIN_CATEGORY_SUPPORT]
            + ([MISSING] if h[MISSING, 2] >= MIN_CATEGORY_SUPPORT else []), dtype=np.int64)
        order = candidates[np.argsort(h[candidates, 0] / (h[candidates, 1] + CATEGORY_SMOOTHING),
                                      kind="stable")]
        n_read = min(MAX_CATEGORIES_LEFT, (len(order) + 1) // 2)
        front, back = candidates_at_the_ends(h, n_categories, MISSING)
        np.testing.assert_array_equal(front, order[:n_read])
        np.testing.assert_array_equal(back, order[::-1][:n_read])


def test_categories_with_too_few_rows_stay_right():
    # Category 1 has the most extreme gradient but too few rows to be sorted.
    h = _histogram([300.0, -50.0, -300.0], [300, MIN_CATEGORY_SUPPORT - 1, 300])
    G, H = -50.0, 300.0 + 300.0 + MIN_CATEGORY_SUPPORT - 1
    _, n_left, _, _, _, _ = best_categorical_split(
        h, 3, MISSING, G, H, H, G**2 / H, 1, 0.0, 0.0, -np.inf, np.inf)
    assert 1 not in bins_of(left_categories(h, 3, MISSING, n_left))


def test_missing_bin_takes_part_as_a_category():
    # Missing rows behave like category 1 (negative gradients): they join it.
    h = _histogram([300.0, -300.0, 300.0], [300, 300, 300], missing=(-300.0, 300))
    G, H = 0.0, 1200.0
    gain, n_left, mleft, gl, hl, cl = best_categorical_split(
        h, 3, MISSING, G, H, H, 0.0, 1, 0.0, 0.0, -np.inf, np.inf)
    left = bins_of(left_categories(h, 3, MISSING, n_left)).tolist()
    if mleft:
        assert left == [1] and (gl, cl) == (-600.0, 600.0)
    else:
        assert left == [0, 2] and (gl, cl) == (600.0, 600.0)


def test_grower_finds_the_set_of_categories_that_matters():
    rng = np.random.default_rng(0)
    n = 3000
    cat = rng.integers(0, 12, size=n)
    good = np.isin(cat, [1, 4, 5, 10])
    X = np.column_stack([rng.normal(size=n), cat.astype(float)])
    mapper = BinMapper(is_categorical=[False, True]).fit(X)
    X_binned = mapper.transform(X)
    g = np.where(good, -1.0, 1.0).astype(np.float32) + rng.normal(0, 0.1, n).astype(np.float32)
    h = np.ones(n, dtype=np.float32)
    tree = grow_tree(X_binned, g, h, mapper.n_bins_non_missing_,
                     mapper.missing_values_bin_idx_, bin_thresholds=mapper.bin_thresholds_,
                     is_categorical=mapper.is_categorical_, max_leaf_nodes=2)
    root = tree.nodes[0]
    assert root["is_categorical"] == 1 and root["feature_idx"] == 1
    left = set(mapper.bin_thresholds_[1][bins_of(root["left_categories"])])
    assert left in ({1.0, 4.0, 5.0, 10.0}, set(range(12)) - {1.0, 4.0, 5.0, 10.0})
    # The rows were partitioned by the same rule.
    left_rows = tree.partitioned_indices[tree.leaf_starts[0]:tree.leaf_stops[0]]
    assert set(np.unique(cat[left_rows]).astype(float)) == left
    # The leaves of a categorical split carry its extra L2 (cat_l2).
    g_left = g[left_rows].astype(np.float64).sum()
    assert tree.leaf_values[0] == pytest.approx(-g_left / (len(left_rows) + CATEGORY_L2))


# -- the rankers -----------------------------------------------------------


def _category_data(n_queries=120, docs=30, n_categories=40, seed=0):
    """Two numeric features and a categorical one whose effect on relevance
    depends on the category (codes carry no order)."""
    rng = np.random.default_rng(seed)
    n = n_queries * docs
    qid = np.repeat(np.arange(n_queries), docs)
    x = rng.normal(size=(n, 2))
    cat = rng.integers(0, n_categories, size=n)
    effect = rng.normal(scale=1.5, size=n_categories)
    signal = x[:, 0] + effect[cat] + rng.normal(scale=0.5, size=n)
    y = np.digitize(signal, np.quantile(signal, [0.5, 0.75, 0.9, 0.97])).astype(float)
    X = np.column_stack([x, cat.astype(float)])
    return X, y, qid


@pytest.mark.parametrize("Ranker", RANKERS, ids=RANKER_IDS)
def test_native_categories_rank_better_than_ordinal_codes(Ranker):
    X, y, qid = _category_data()
    y = fit_labels(Ranker, y)
    train, test = qid < 80, qid >= 80
    scores = {}
    for name, cf in (("native", [2]), ("ordinal", None)):
        model = Ranker(n_estimators=40, max_leaf_nodes=8, categorical_features=cf,
                       early_stopping=False, random_state=0)
        model.fit(X[train], y[train], qid=qid[train])
        scores[name] = ndcg_score(y[test], model.predict(X[test]), qid=qid[test], k=10)
    assert scores["native"] > scores["ordinal"] + 0.01, scores


@pytest.fixture(scope="module")
def fitted():
    X, y, qid = _category_data()
    # Categories 30..39 seen twice each (their other rows moved to 0..9):
    # with max_bins=30 they are pooled with the missing values.
    for c in range(30, 40):
        rows = np.flatnonzero(X[:, 2] == c)
        X[rows[2:], 2] = c - 30
    X[::17, 2] = np.nan
    model = LambdaMARTRanker(n_estimators=20, categorical_features=[2], max_bins=30,
                             early_stopping=False, random_state=0).fit(X, y, qid=qid)
    return model, X


def test_predict_equals_the_binned_prediction_of_training(fitted):
    model, X = fitted
    ensemble = model._tree_ensemble()
    assert ensemble.nodes["is_categorical"].any()
    binned = model._bin_mapper.transform(X)
    expected = predict_binned(ensemble.nodes, ensemble.tree_starts, binned,
                              model._bin_mapper.missing_values_bin_idx_, init=ensemble.baseline)
    np.testing.assert_array_equal(model.predict(X), expected)
    # apply walks the same way: summing the leaves reached gives predict.
    leaves = ensemble.apply(X)
    values = sum(ensemble.tree(t)["value"][leaves[:, t]] for t in range(ensemble.n_trees))
    np.testing.assert_allclose(ensemble.baseline + values, model.predict(X), rtol=1e-12)


def test_unseen_rare_negative_and_nan_categories_all_take_the_missing_side(fitted):
    model, X = fitted
    # max_bins=30 of 40 categories: the 10 rare ones were merged into missing.
    known = model._bin_mapper.bin_thresholds_[2]
    rare = sorted(set(range(40)) - set(known))
    assert len(known) == 30 and len(rare) == 10 and not model._bin_mapper.has_wide_columns()
    rows = np.repeat(X[:5], 5, axis=0)
    rows[0::5, 2] = np.nan
    rows[1::5, 2] = 1000.0  # never seen
    rows[2::5, 2] = rare[0]
    rows[3::5, 2] = -3.0
    rows[4::5, 2] = 2.5  # not an integer code
    scores = model.predict(rows).reshape(5, 5)
    np.testing.assert_array_equal(scores, scores[:, :1].repeat(5, axis=1))


def test_staged_predict_ends_at_predict(fitted):
    model, X = fitted
    *_, last = model.staged_predict(X)
    np.testing.assert_allclose(last, model.predict(X), rtol=1e-12)


@pytest.mark.parametrize("spec", [[2], [-0 + 2], np.array([False, False, True]), ["c"]])
def test_categorical_features_forms_give_the_same_model(spec):
    X, y, qid = _category_data(n_queries=40)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    ref = LambdaMARTRanker(n_estimators=5, categorical_features=[2], random_state=0,
                           early_stopping=False).fit(X, y, qid=qid)
    model = LambdaMARTRanker(n_estimators=5, categorical_features=spec, random_state=0,
                             early_stopping=False).fit(df, y, qid=qid)
    np.testing.assert_array_equal(model.is_categorical_, [False, False, True])
    np.testing.assert_array_equal(model.predict(df), ref.predict(X))


def test_pandas_category_columns_are_read_by_their_categories():
    X, y, qid = _category_data(n_queries=40)
    names = np.array([f"brand-{i}" for i in range(40)])
    df = pd.DataFrame(X[:, :2], columns=["a", "b"])
    df["brand"] = pd.Categorical(names[X[:, 2].astype(int)])
    model = LambdaMARTRanker(n_estimators=5, random_state=0, early_stopping=False)
    model.fit(df, y, qid=qid)
    np.testing.assert_array_equal(model.is_categorical_, [False, False, True])
    # The same model as with the codes of the sorted category names.
    codes = pd.Categorical(names[X[:, 2].astype(int)]).codes.astype(float)
    ref = LambdaMARTRanker(n_estimators=5, categorical_features=[2], random_state=0,
                           early_stopping=False).fit(np.column_stack([X[:, :2], codes]), y, qid=qid)
    np.testing.assert_array_equal(model.predict(df), ref.predict(np.column_stack([X[:, :2], codes])))
    # At predict time the column may list its categories in another order or
    # have new ones; a new one is treated as missing.
    shuffled = df.copy()
    shuffled["brand"] = shuffled["brand"].cat.reorder_categories(
        shuffled["brand"].cat.categories[::-1])
    np.testing.assert_array_equal(model.predict(shuffled), model.predict(df))
    new = df.head(3).copy()
    new["brand"] = pd.Categorical(["brand-new"] * 3)
    missing = df.head(3).copy()
    missing["brand"] = pd.Categorical([None] * 3, categories=["brand-0"])
    np.testing.assert_array_equal(model.predict(new), model.predict(missing))
    with pytest.raises(ValueError, match="category column in fit"):
        model.predict(df.assign(brand=codes))


@pytest.mark.parametrize("columns", [["a", "brand"], ["brand", "a", "b"], ["b", "a", "brand"]])
def test_missing_or_moved_columns_get_the_feature_names_error(columns):
    # The category columns are read by position, so the names are checked
    # first: a missing or moved column gets scikit-learn's error, not an
    # IndexError or advice about another column (an outside check).
    X, y, qid = _category_data(n_queries=40)
    df = pd.DataFrame(X[:, :2], columns=["a", "b"])
    df["brand"] = pd.Categorical(X[:, 2].astype(int))
    model = LambdaMARTRanker(n_estimators=3, random_state=0, early_stopping=False)
    model.fit(df, y, qid=qid)
    with pytest.raises(ValueError, match="feature names should match"):
        model.predict(df[columns])
    with pytest.raises(ValueError, match="feature names should match"):
        model.set_params(warm_start=True, n_estimators=4).fit(df[columns], y, qid=qid)


def test_category_columns_of_another_type_than_in_fit_are_refused():
    # Integer categories in fit, the same numbers as text at predict time
    # (a CSV round trip): not one value matches, and every row would be
    # read as missing without a word. The other way round too.
    X, y, qid = _category_data(n_queries=40)
    df = pd.DataFrame(X[:, :2], columns=["a", "b"])
    df["brand"] = pd.Categorical(X[:, 2].astype(int) * 10 + 100)
    model = LambdaMARTRanker(n_estimators=5, random_state=0, early_stopping=False)
    model.fit(df, y, qid=qid)
    as_text = df.assign(brand=df["brand"].astype(int).astype(str).astype("category"))
    with pytest.raises(ValueError, match=r"'brand' of X has text categories .* were numbers"):
        model.predict(as_text)
    back = as_text.assign(brand=as_text["brand"].astype(int).astype("category"))
    np.testing.assert_array_equal(model.predict(back), model.predict(df))
    # Float categories of the same numbers are the same categories.
    as_float = df.assign(brand=df["brand"].astype(float).astype("category"))
    np.testing.assert_array_equal(model.predict(as_float), model.predict(df))
    text_model = LambdaMARTRanker(n_estimators=5, random_state=0, early_stopping=False)
    text_model.fit(as_text, y, qid=qid)
    with pytest.raises(ValueError, match=r"has number categories .* were text "):
        text_model.predict(df)
    with pytest.raises(ValueError, match="not a DataFrame"):
        model.predict(df.to_numpy()[:, :2])


@pytest.mark.parametrize("spec, match", [
    ([3], "out of range"),
    (["zz"], "not a feature"),
    (np.array([True, False]), "boolean mask of 2"),
    ([[0, 1]], "1-d"),
    ([0.5], "integer indices, feature names or booleans"),
])
def test_bad_categorical_features_are_refused(spec, match):
    X, y, qid = _category_data(n_queries=10)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    with pytest.raises(ValueError, match=match):
        LambdaMARTRanker(n_estimators=2, categorical_features=spec).fit(df, y, qid=qid)


def test_names_need_a_dataframe_and_category_columns_must_be_listed():
    X, y, qid = _category_data(n_queries=10)
    with pytest.raises(ValueError, match="no feature names"):
        LambdaMARTRanker(n_estimators=2, categorical_features=["c"]).fit(X, y, qid=qid)
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(c=lambda d: d["c"].astype("category"))
    with pytest.raises(ValueError, match="category dtype but is not among"):
        LambdaMARTRanker(n_estimators=2, categorical_features=[0]).fit(df, y, qid=qid)


def test_none_and_from_dtype_on_arrays_mean_no_categorical_feature():
    X, y, qid = _category_data(n_queries=10)
    for spec in (None, "from_dtype"):
        model = LambdaMARTRanker(n_estimators=2, categorical_features=spec).fit(X, y, qid=qid)
        assert model.is_categorical_ is None
        assert not model._tree_ensemble().nodes["is_categorical"].any()


def test_warm_start_with_categories_equals_one_fit():
    X, y, qid = _category_data(n_queries=60)
    params = dict(categorical_features=[2], random_state=0, early_stopping=False)
    once = LambdaMARTRanker(n_estimators=10, **params).fit(X, y, qid=qid)
    twice = LambdaMARTRanker(n_estimators=5, warm_start=True, **params).fit(X, y, qid=qid)
    twice.set_params(n_estimators=10).fit(X, y, qid=qid)
    assert once._tree_ensemble().nodes["is_categorical"].any()
    np.testing.assert_array_equal(twice.predict(X), once.predict(X))


def test_calibrated_ranker_splits_on_categories():
    from sklearn_ltr import CalibratedRanker

    X, y, qid = _category_data(n_queries=60)
    model = CalibratedRanker(n_estimators=10, categorical_features=[2], binarize=True,
                             random_state=0).fit(X, y, qid=qid)
    np.testing.assert_array_equal(model.is_categorical_, [False, False, True])
    assert model._tree_ensemble().nodes["is_categorical"].any()


def test_monotonic_constraint_on_a_categorical_feature_is_refused():
    X, y, qid = _category_data(n_queries=10)
    with pytest.raises(ValueError, match="monotonic_cst constrains feature 2, which is categ"):
        LambdaMARTRanker(n_estimators=2, categorical_features=[2],
                         monotonic_cst=[0, 1, 1]).fit(X, y, qid=qid)


def test_categories_below_a_monotonic_split_keep_the_trees_monotonic():
    # Monotonic in feature 0 while categorical splits (scanned with the
    # node's bounds) happen below the constrained splits.
    X, y, qid = _category_data(n_queries=80)
    X[:, 1] = np.sin(3 * X[:, 0]) + 0.1 * X[:, 1]  # a non-monotonic pull on relevance
    y = np.clip(y + (X[:, 1] > 0.5), 0, 4)
    model = LambdaMARTRanker(n_estimators=20, categorical_features=[2], monotonic_cst=[1, 0, 0],
                             early_stopping=False, random_state=0).fit(X, y, qid=qid)
    nodes = model._tree_ensemble().nodes
    assert nodes["is_categorical"].any() and (nodes["feature_idx"] == 0).any()
    rows = np.repeat(X[:30], 41, axis=0)
    rows[:, 0] = np.tile(np.linspace(-3, 3, 41), 30)
    scores = model.predict(rows).reshape(30, 41)
    assert np.all(np.diff(scores, axis=1) >= 0)
    free = LambdaMARTRanker(n_estimators=20, categorical_features=[2], early_stopping=False,
                            random_state=0).fit(X, y, qid=qid)
    assert np.any(np.diff(free.predict(rows).reshape(30, 41), axis=1) < 0)


def test_interaction_groups_hold_with_categorical_features():
    X, y, qid = _category_data(n_queries=60)
    model = LambdaMARTRanker(n_estimators=10, categorical_features=[2],
                             interaction_cst=[[0, 1], [2]], early_stopping=False,
                             random_state=0).fit(X, y, qid=qid)
    ensemble = model._tree_ensemble()
    assert ensemble.nodes["is_categorical"].any()
    for tree in ensemble.trees():
        def features_on_paths(k, used):
            if tree[k]["is_leaf"]:
                assert used <= {0, 1} or used <= {2}, used
                return
            used = used | {int(tree[k]["feature_idx"])}
            features_on_paths(tree[k]["left"], used)
            features_on_paths(tree[k]["right"], used)
        features_on_paths(0, set())
