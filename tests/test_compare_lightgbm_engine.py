"""Compare one tree of our grower with one LightGBM tree on pre-binned data.

The features take few distinct integer values, so both libraries put each
value in its own bin and see the same candidate splits. With least-squares
gradients (g = pred - y with pred = 0, h = 1), learning rate 1 and no init
score, both trees are the same greedy leaf-wise tree, so predictions match
to float rounding. LightGBM estimates leaf counts from hessians; with h = 1
that estimate is exact. Targets are continuous, so ties in gain (which the
two libraries could break differently) do not occur in practice.
"""

import numpy as np
import pytest

from sklearn_ltr._gbdt.binning import BinMapper

from _engine_helpers import grow_tree

lightgbm = pytest.importorskip("lightgbm")


def _data(n, seed):
    rng = np.random.default_rng(seed)
    levels = rng.integers(2, 30, size=8)
    X = rng.integers(0, levels, size=(n, 8)).astype(np.float64)
    y = (X[:, 0] / levels[0] + np.sin(X[:, 1]) + 0.5 * (X[:, 2] > levels[2] / 2) * X[:, 3] / levels[3]
         + 0.5 * rng.standard_normal(n))
    return X, y


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize(
    "num_leaves,min_child_samples,min_hess,reg_lambda,max_depth",
    [(31, 20, 1e-3, 0.0, None), (8, 5, 1e-3, 0.0, None), (15, 50, 80.0, 10.0, None),
     (63, 10, 1e-3, 1.0, 4)],
)
def test_one_tree_matches_lightgbm(seed, num_leaves, min_child_samples, min_hess, reg_lambda,
                                   max_depth):
    X, y = _data(3000, seed)
    mapper = BinMapper().fit(X)
    Xb = mapper.transform(X)
    g = (0.0 - y).astype(np.float32)
    h = np.ones_like(g)
    tree = grow_tree(Xb, g, h, mapper.n_bins_non_missing_,
                     mapper.missing_values_bin_idx_, bin_thresholds=mapper.bin_thresholds_,
                     max_leaf_nodes=num_leaves, min_samples_leaf=min_child_samples,
                     min_hessian_to_split=min_hess, l2_regularization=reg_lambda,
                     max_depth=max_depth)
    ours = np.zeros(len(y))
    for a, b, v in zip(tree.leaf_starts, tree.leaf_stops, tree.leaf_values):
        ours[tree.partitioned_indices[a:b]] = v

    model = lightgbm.LGBMRegressor(
        n_estimators=1, learning_rate=1.0, num_leaves=num_leaves,
        min_child_samples=min_child_samples, min_child_weight=min_hess, reg_lambda=reg_lambda,
        max_depth=-1 if max_depth is None else max_depth, max_bin=255, min_data_in_bin=1,
        boost_from_average=False, n_jobs=1, deterministic=True, verbose=-1)
    model.fit(X, y)
    theirs = model.predict(X)
    n_leaves_theirs = model.booster_.dump_model()["tree_info"][0]["num_leaves"]
    assert tree.nodes["is_leaf"].sum() == n_leaves_theirs
    # float32 gradients on our side, float32 gradients summed in float64 on
    # LightGBM's: leaf values agree to ~1e-6 relative.
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
