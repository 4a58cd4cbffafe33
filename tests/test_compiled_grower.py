"""The compiled tree loops (``_gbdt/compiled_grower.py``, and
``_gbdt/compiled_symmetric.py`` for symmetric trees) against the Python
loops of TreeGrower, their oracle: the same trees, bit for bit, wherever
they apply, and the Python loops wherever they do not."""

import functools
import time
import types

import numba
import numpy as np
import pytest

from sklearn_ltr._gbdt import (
    booster,
    compiled_grower,
    compiled_symmetric,
    histogram,
    histogram_rows,
    loop_parallelism,
    splitting,
    wide_histogram,
)
from sklearn_ltr._gbdt.binning import BinMapper
from sklearn_ltr._gbdt.grower import TreeGrower
from sklearn_ltr._gbdt.node_rows import NodeRows
from sklearn_ltr._utils.clock import TICKS_PER_SECOND, ticks
from sklearn_ltr._utils.threads import numba_threads
from sklearn_ltr.datasets import make_ranking

from _threads import assert_ran_in_parallel, needs_two_threads, parallel_kernels_only
from conftest import fit_labels


def _data(n=2500, n_features=8, seed=0, categorical=False, missing=0.05, n_categories=40):
    # With more than 62 categories, column 6 is wide (several blocks of
    # max_bins - 1 categories).
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, n_features))
    X[:, 2] = rng.integers(0, 4, n)
    X[rng.random(n) < 0.6, 5] = 0.0  # sparse
    if categorical:
        X[:, 6] = rng.integers(0, n_categories, n)
    X[rng.random(X.shape) < missing] = np.nan
    is_categorical = np.zeros(n_features, dtype=bool)
    is_categorical[6] = categorical
    mapper = BinMapper(max_bins=63, is_categorical=is_categorical, random_state=0).fit(X)
    Xb = mapper.transform(X)
    signal = np.nan_to_num(X[:, 0]) + 2 * (np.nan_to_num(X[:, 1]) > 0.3)
    if categorical:
        signal += np.sin(np.nan_to_num(X[:, 6]))
    if categorical and n_categories > 62:
        # Few rows a category: a larger effect of some, for splits to use.
        signal += 3 * (np.nan_to_num(X[:, 6]) % 5 == 0)
    g = (0.2 * rng.standard_normal(n) - signal).astype(np.float32)
    h = rng.uniform(0.2, 1.5, n).astype(np.float32)
    return Xb, g, h, mapper, mapper.is_categorical_


def _grow_trees(compiled, Xb, g, h, mapper, is_categorical, n_trees=3, constant_hessian=None,
                sample=None, feature_mask=None, with_thresholds=True, **params):
    rows = NodeRows(Xb, mapper.missing_values_bin_idx_, mapper.n_bins_non_missing_,
                    constant_hessian=constant_hessian,
                    feature_columns=mapper.wide_feature_columns())
    grower = TreeGrower(rows, mapper.n_bins_non_missing_, mapper.missing_values_bin_idx_,
                        bin_thresholds=mapper.bin_thresholds_ if with_thresholds else None,
                        is_categorical=is_categorical, compiled_loop=compiled, **params)
    assert (grower._loop is not None) == compiled
    trees = []
    for t in range(n_trees):
        # Each tree on other gradients, through the same grower and buffers.
        shift = np.float32(0.3 * t)
        trees.append(grower.grow(g * (1 + shift) - shift, h, sample_indices=sample,
                                 feature_mask=feature_mask))
    return trees, grower


def _assert_same_tree(a, b):
    assert a.nodes.dtype == b.nodes.dtype and a.nodes.shape == b.nodes.shape
    for name in a.nodes.dtype.names:  # field by field, so NaN thresholds compare equal
        np.testing.assert_array_equal(a.nodes[name], b.nodes[name], err_msg=name)
    for field in ("partitioned_indices", "leaf_starts", "leaf_stops", "leaf_values",
                  "leaf_nodes"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)


def _same_trees_with_both_loops(*data, **params):
    """Grow trees with the compiled loop and with the Python loop, check
    they are the same, and return the compiled loop's."""
    compiled, _ = _grow_trees(True, *data, **params)
    python, _ = _grow_trees(False, *data, **params)
    for a, b in zip(compiled, python):
        _assert_same_tree(a, b)
    return compiled


CASES = {
    "lossguide": {},
    "depthwise": {"grow_policy": "depthwise", "max_depth": 4},
    "max_depth": {"max_depth": 3, "max_leaf_nodes": 63},
    "two_leaves": {"max_leaf_nodes": 2},
    "small_leaves": {"min_samples_leaf": 1, "max_leaf_nodes": 40},
    "large_leaves": {"min_samples_leaf": 300},
    "regularised": {"l2_regularization": 2.0, "min_gain_to_split": 5.0, "shrinkage": 0.1},
    "min_hessian": {"min_hessian_to_split": 40.0},
    "symmetric": {"grow_policy": "symmetric", "max_depth": 4},
    "symmetric_deep": {"grow_policy": "symmetric", "max_depth": 7, "min_samples_leaf": 1},
    "symmetric_large_leaves": {"grow_policy": "symmetric", "max_depth": 5,
                               "min_samples_leaf": 200},
    "symmetric_regularised": {"grow_policy": "symmetric", "max_depth": 5,
                              "l2_regularization": 2.0, "min_gain_to_split": 5.0,
                              "min_hessian_to_split": 40.0, "shrinkage": 0.1},
}


@pytest.mark.parametrize("params", CASES.values(), ids=CASES.keys())
@pytest.mark.parametrize("categorical", [False, True], ids=["numeric", "categorical"])
def test_same_trees_as_the_python_loop(params, categorical):
    compiled = _same_trees_with_both_loops(*_data(categorical=categorical), **params)
    assert sum((t.nodes["is_leaf"] == 0).sum() for t in compiled) >= 3
    if categorical and "max_leaf_nodes" not in params and "min_gain_to_split" not in params:
        # The data make a categorical split worth it: the loop made its set.
        assert any(t.nodes["is_categorical"].any() for t in compiled)


@pytest.mark.parametrize("with_thresholds", [True, False])
def test_raw_thresholds_of_the_loops_trees(with_thresholds):
    # The compiled loop's trees are made from its node tables in one call
    # (loop_tree.tree_of_tables): a split on the last value bin sends every
    # value left (threshold inf), and without the bin mapper's thresholds
    # every threshold stays NaN, as the Python loop makes them.
    data = _data(missing=0.3, seed=2)
    compiled = _same_trees_with_both_loops(*data, with_thresholds=with_thresholds,
                                           min_samples_leaf=1, max_leaf_nodes=63)
    mapper = data[3]
    splits = np.concatenate([t.nodes[t.nodes["is_leaf"] == 0] for t in compiled])
    if not with_thresholds:
        assert np.isnan(splits["num_threshold"]).all()
        return
    last_bin = mapper.n_bins_non_missing_[splits["feature_idx"]] - 1
    all_left = splits["bin_threshold"] == last_bin
    assert all_left.any() and (~all_left).any()
    assert np.isposinf(splits["num_threshold"][all_left]).all()
    for node in splits[~all_left]:
        expected = mapper.bin_thresholds_[node["feature_idx"]][node["bin_threshold"]]
        assert node["num_threshold"] == expected


@pytest.mark.parametrize("shape", [{}, {"grow_policy": "symmetric", "max_depth": 5}],
                         ids=["lossguide", "symmetric"])
@pytest.mark.parametrize("constant_hessian", [None, 0.5])
def test_same_trees_with_sampled_rows_masked_features_and_constant_hessians(constant_hessian,
                                                                           shape):
    Xb, g, h, mapper, is_cat = _data(seed=4, categorical=True)
    if constant_hessian is not None:
        h = np.full_like(h, constant_hessian)
    sample = np.flatnonzero(np.random.default_rng(1).random(len(g)) < 0.6)
    mask = np.ones(Xb.shape[1], dtype=bool)
    mask[1] = False
    for kw in ({"sample": sample}, {"feature_mask": mask}, {}):
        compiled = _same_trees_with_both_loops(Xb, g, h, mapper, is_cat,
                                               constant_hessian=constant_hessian, **kw, **shape)
        if "feature_mask" in kw:
            assert 1 not in compiled[0].nodes["feature_idx"]


@pytest.mark.parametrize("shape", [{}, {"grow_policy": "symmetric", "max_depth": 5}],
                         ids=["lossguide", "symmetric"])
@pytest.mark.parametrize("constant_hessian", [None, 0.5])
def test_same_trees_with_wide_categorical_columns(shape, constant_hessian):
    # 25 rows a category: enough for categorical splits (10 a category).
    Xb, g, h, mapper, is_cat = _data(n=7500, seed=2, categorical=True, n_categories=300)
    assert mapper.has_wide_columns()
    if constant_hessian is not None:
        h = np.full_like(h, constant_hessian)
    blocks = np.flatnonzero(mapper.feature_columns_ == 6)
    sample = np.flatnonzero(np.random.default_rng(1).random(len(g)) < 0.6)
    without_a_block = np.ones(Xb.shape[1], dtype=bool)
    without_a_block[blocks[0]] = False
    blocks_used = False
    for kw in ({}, {"sample": sample}, {"feature_mask": without_a_block}):
        compiled = _same_trees_with_both_loops(Xb, g, h, mapper, is_cat,
                                               constant_hessian=constant_hessian, **kw, **shape)
        split_on = np.concatenate([t.nodes["feature_idx"][t.nodes["is_leaf"] == 0]
                                   for t in compiled])
        if "feature_mask" in kw:
            assert blocks[0] not in split_on
        else:
            blocks_used |= np.isin(split_on, blocks).any()
    assert blocks_used  # the blocks' histograms were built and scanned


def test_same_symmetric_trees_when_a_split_halves_every_node():
    # A balanced binary column that decides the gradient splits the root
    # into children of exactly equal size, without missing values: the
    # loop must break both ties as the Python loop does (the left child
    # counts as the smaller one; missing values go left).
    rng = np.random.default_rng(7)
    n = 2048
    X = rng.standard_normal((n, 4))
    X[:, 0] = np.repeat([0.0, 1.0], n // 2)[rng.permutation(n)]
    mapper = BinMapper(max_bins=63, random_state=0).fit(X)
    Xb = mapper.transform(X)
    g = (3.0 * X[:, 0] + X[:, 1] + 0.1 * rng.standard_normal(n)).astype(np.float32)
    h = rng.uniform(0.5, 1.5, n).astype(np.float32)
    is_cat = np.zeros(4, dtype=bool)
    compiled = _same_trees_with_both_loops(Xb, g, h, mapper, is_cat, grow_policy="symmetric",
                                           max_depth=4)
    root = compiled[0].nodes[0]
    assert root["feature_idx"] == 0 and root["missing_go_to_left"] == 1
    assert compiled[0].nodes[root["left"]]["count"] == compiled[0].nodes[root["right"]]["count"]


def _sparse_data(n=3000, n_features=24, seed=0):
    """Features of few values, mostly one of them, some of them missing:
    many lose every threshold with enough rows a side in small nodes. A
    tenth of the hessians are negative, so a node's sum of hessians is not
    bounded by its parent's; only its rows are."""
    rng = np.random.default_rng(seed)
    X = rng.integers(1, 5, (n, n_features)).astype(float)
    X[rng.random((n, n_features)) < rng.uniform(0.6, 0.97, n_features)] = 0.0
    X[rng.random((n, n_features)) < rng.uniform(0.0, 0.1, n_features)] = np.nan
    X[:, 0] = rng.standard_normal(n)
    mapper = BinMapper(max_bins=63, random_state=0).fit(X)
    Xb = mapper.transform(X)
    Xz = np.nan_to_num(X)
    signal = Xz[:, 0] + Xz[:, 1:8].sum(axis=1) - 2 * np.isnan(X[:, 3])
    g = (0.5 * rng.standard_normal(n) - signal).astype(np.float32)
    h = rng.uniform(0.2, 1.5, n).astype(np.float32)
    h[rng.random(n) < 0.1] = -0.4
    return Xb, g, h, mapper, mapper.is_categorical_


@pytest.mark.parametrize("params", [{"min_samples_leaf": 20}, {"min_samples_leaf": 5},
                                    {"min_samples_leaf": 20, "min_hessian_to_split": 8.0},
                                    {"grow_policy": "depthwise", "max_depth": 6,
                                     "max_leaf_nodes": 63, "min_samples_leaf": 10}])
def test_features_without_enough_rows_a_side_leave_the_nodes_below(params):
    # The compiled loop drops, below a node, the features that have no
    # threshold there with min_samples_leaf rows a side; the Python loop
    # scans every feature in every node. Same trees.
    data = _sparse_data()
    params = {"max_leaf_nodes": 31, **params}
    compiled = _same_trees_with_both_loops(*data, n_trees=4, **params)
    _, grower = _grow_trees(True, *data, n_trees=1, **params)
    split = np.flatnonzero(compiled[0].nodes["is_leaf"] == 0)
    assert split.shape[0] >= 10
    # What each split node's scan left for the nodes below it: fewer
    # features than the tree's in many.
    n_kept = grower._loop.node_masks[split].sum(axis=1)
    assert (n_kept < data[0].shape[1]).sum() >= split.shape[0] // 3


def test_a_feature_short_of_hessian_in_a_node_may_split_a_node_below():
    # Only rows decide which features leave the nodes below: with negative
    # hessians, a child's sum of hessians may exceed its parent's. x1 = 0
    # holds hessians summing to -4 at the root, under min_hessian_to_split;
    # in the child x2 = 0, whose hessians are all 1, it holds 500, and x1
    # splits that child.
    x2 = np.repeat([0, 1], 1000)
    x1 = np.r_[np.tile([0, 1], 500), np.repeat([0, 1], [560, 440])]
    h = np.where(x2 == 0, 1.0, np.where(x1 == 0, -0.9, 1.5)).astype(np.float32)
    g = (-3.0 * x2 - 2.0 * x1 * (1 - x2)).astype(np.float32)
    X = np.column_stack([x1, x2]).astype(float)
    mapper = BinMapper(max_bins=63, random_state=0).fit(X)
    data = (mapper.transform(X), g, h, mapper, mapper.is_categorical_)
    compiled = _same_trees_with_both_loops(*data, n_trees=1, min_hessian_to_split=8.0,
                                           min_samples_leaf=20, max_leaf_nodes=4)
    nodes = compiled[0].nodes
    assert nodes["feature_idx"][0] == 1
    assert 0 in nodes["feature_idx"][1:]


def test_the_python_loop_grows_what_the_compiled_one_cannot():
    Xb, g, h, mapper, is_cat = _data()
    n_features = Xb.shape[1]
    too_deep = compiled_symmetric.MAX_COMPILED_DEPTH + 1
    for params in ({"grow_policy": "symmetric", "max_depth": too_deep, "min_samples_leaf": 200},
                   {"max_leaf_nodes": None, "max_depth": 4},
                   {"monotonic_cst": [1] + [0] * (n_features - 1)},
                   {"interaction_cst": [{0, 1}, set(range(2, n_features))]}):
        rows = NodeRows(Xb, mapper.missing_values_bin_idx_, mapper.n_bins_non_missing_)
        grower = TreeGrower(rows, mapper.n_bins_non_missing_, mapper.missing_values_bin_idx_,
                            **params)
        assert grower._loop is None, params
        assert (grower.grow(g, h).nodes["is_leaf"] == 0).sum() >= 1


def test_phase_times_come_from_the_compiled_loop():
    Xb, g, h, mapper, is_cat = _data()
    _, grower = _grow_trees(True, Xb, g, h, mapper, is_cat, n_trees=2)
    assert grower.time_histograms > 0
    assert grower.time_find_split > 0
    assert grower.time_partition > 0


@needs_two_threads
@pytest.mark.parametrize("shape, kernels", [
    ({}, ("_build_histogram_of_rows", "_best_split_of_each_feature")),
    ({"grow_policy": "symmetric", "max_depth": 5},
     ("_build_histogram_of_rows", "_summed_gains_of_each_feature", "_build_histograms_of_nodes")),
], ids=["lossguide", "symmetric"])
@pytest.mark.parametrize("n_categories", [40, 300], ids=["narrow", "wide"])
def test_parallel_kernels_in_the_loop_give_the_same_trees(shape, kernels, n_categories):
    Xb, g, h, mapper, is_cat = _data(n=25 * n_categories, categorical=True,
                                     n_categories=n_categories)
    if n_categories > 62:
        kernels += ("_wide_columns_histograms",)
    serial, _ = _grow_trees(True, Xb, g, h, mapper, is_cat, **shape)
    with parallel_kernels_only() as picked:
        parallel, _ = _grow_trees(True, Xb, g, h, mapper, is_cat, **shape)
    assert_ran_in_parallel(picked, *kernels, n_threads=numba.get_num_threads())
    for a, b in zip(serial, parallel):
        _assert_same_tree(a, b)


@pytest.mark.parametrize("shape", [{}, {"grow_policy": "symmetric", "max_depth": 4},
                                   {"max_bins": 15}],
                         ids=["default", "symmetric", "wide_column"])
def test_every_ranker_fits_the_same_model_with_either_loop(ranker_class, shape, monkeypatch):
    X, y, qid = make_ranking(40, n_features=12, docs_per_query=25, n_categorical=1,
                             n_categories=30, missing_rate=0.05, random_state=3)
    y = fit_labels(ranker_class, y)
    params = dict(n_estimators=8, random_state=0, subsample=0.8, categorical_features=[11],
                  **shape)
    compiled = ranker_class(**params).fit(X, y, qid=qid)
    monkeypatch.setattr(booster, "TreeGrower", functools.partial(TreeGrower, compiled_loop=False))
    python = ranker_class(**params).fit(X, y, qid=qid)
    np.testing.assert_array_equal(compiled.predict(X), python.predict(X))
    for a, b in zip(compiled._booster.trees, python._booster.trees):
        for name in a.dtype.names:
            np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def test_clock_counts_forward():
    first = ticks()
    time.sleep(0.02)  # sleeps at least this long
    second = ticks()
    assert isinstance(first, (int, np.integer))
    assert (second - first) / TICKS_PER_SECOND >= 0.02
    assert compiled_grower.LoopState(7, 4, 3).phase_seconds().tolist() == [0.0, 0.0, 0.0]


@needs_two_threads
def test_nodes_run_in_parallel_from_little_work_only_in_trees_that_can_share_it():
    # A root large enough for pick() to build in parallel, and at least two
    # feature groups (4 features, 8 with constant hessians or of few bins in
    # small data) per thread; otherwise the loops keep pick()'s thresholds.
    assert loop_parallelism.LOOP_MIN_PARALLEL_CELLS < histogram._MIN_PARALLEL_CELLS
    assert loop_parallelism.LOOP_MIN_PARALLEL_BINS < splitting._MIN_PARALLEL_BINS
    lowered = loop_parallelism.parallel_from_little_work

    def rows(n_features, const_hessian=None, value_bins=255, n_samples=10**6):
        return types.SimpleNamespace(
            features=np.arange(n_features, dtype=np.int64), const_hessian=const_hessian,
            value_bins=np.full(n_features, value_bins, dtype=np.int64),
            X_binned=types.SimpleNamespace(shape=(n_samples, n_features)))

    # A root of at least pick()'s cells with 16 features.
    root_rows = -(-histogram._MIN_PARALLEL_CELLS // 16)
    with numba_threads(2):
        assert lowered(rows(16), root_rows)  # 4 groups
        assert not lowered(rows(16), root_rows - 1)  # small root
        assert not lowered(rows(12), 10 * root_rows)  # 3 groups
        assert lowered(rows(32, 1.0), root_rows)  # 4 groups of 8
        assert not lowered(rows(24, 1.0), 10 * root_rows)
        # 16 features of 2 bins: 4 groups in large data, 2 groups of 8 in small.
        assert lowered(rows(16, value_bins=2), root_rows)
        small = histogram_rows.NARROW_GROUP_MAX_ROWS
        assert lowered(rows(16, n_samples=small), root_rows)
        assert not lowered(rows(16, value_bins=2, n_samples=small), root_rows)
    with numba_threads(1):
        assert not lowered(rows(16), 10 * root_rows)


@needs_two_threads
def test_wide_columns_run_in_parallel_from_little_work_when_each_thread_has_a_group():
    # Wide columns are built _GROUP at a time; the loops lower their
    # threshold with the features' only if there is a group for every thread.
    group = wide_histogram._GROUP
    low = loop_parallelism.min_parallel_wide_cells
    assert loop_parallelism.LOOP_MIN_PARALLEL_CELLS < wide_histogram._MIN_PARALLEL_CELLS

    def rows(n_wide):
        return types.SimpleNamespace(n_wide_columns=n_wide)

    with numba_threads(2):
        assert low(rows(group + 1), True) == loop_parallelism.LOOP_MIN_PARALLEL_CELLS
        assert low(rows(group), True) == wide_histogram._MIN_PARALLEL_CELLS
        assert low(rows(2 * group), False) == wide_histogram._MIN_PARALLEL_CELLS
    with numba_threads(1):
        assert low(rows(1), True) == loop_parallelism.LOOP_MIN_PARALLEL_CELLS
