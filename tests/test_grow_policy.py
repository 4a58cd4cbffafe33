"""grow_policy: depth-wise trees against XGBoost's, symmetric trees against a
brute-force search of each level's shared split, and both through every
layer that reads trees (persistence, exporters, TreeSHAP, Dask)."""

import io

import warnings

import numpy as np
import pytest

from sklearn_ltr import LambdaMARTRanker, YetiRankRanker, load_model
from sklearn_ltr._gbdt.binning import BinMapper
from sklearn_ltr.datasets import make_ranking

from _engine_helpers import grow_tree
from conftest import RANKERS, fit_labels

MISSING = 255


def _regression_data(n, seed, nan_rate=0.0):
    rng = np.random.default_rng(seed)
    levels = rng.integers(2, 30, size=6)
    X = rng.integers(0, levels, size=(n, 6)).astype(np.float64)
    y = (X[:, 0] / levels[0] + np.sin(X[:, 1]) + 0.5 * (X[:, 2] > levels[2] / 2) * X[:, 3]
         / levels[3] + 0.5 * rng.standard_normal(n))
    if nan_rate:
        X[rng.random(X.shape) < nan_rate] = np.nan
    return X, y


def _tree_of(X, y, **params):
    mapper = BinMapper().fit(X)
    Xb = mapper.transform(X)
    g = (0.0 - y).astype(np.float32)
    h = np.ones_like(g)
    tree = grow_tree(Xb, g, h, mapper.n_bins_non_missing_, mapper.missing_values_bin_idx_,
                     bin_thresholds=mapper.bin_thresholds_, **params)
    leaf_of_row = np.empty(len(y), dtype=np.int64)
    values = np.empty(len(y))
    for k, (a, b) in enumerate(zip(tree.leaf_starts, tree.leaf_stops)):
        leaf_of_row[tree.partitioned_indices[a:b]] = k
        values[tree.partitioned_indices[a:b]] = tree.leaf_values[k]
    return tree, Xb, g, h, leaf_of_row, values


def _same_partition(a, b):
    """Whether two labelings put the rows in the same groups."""
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


# ------------------------------------------------------------------ depth-wise


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("max_depth,max_leaves,min_child_weight,reg_lambda",
                         [(3, None, 1.0, 0.0), (4, None, 20.0, 1.0), (5, 12, 1.0, 0.0)])
def test_one_depthwise_tree_matches_xgboost(seed, max_depth, max_leaves, min_child_weight,
                                            reg_lambda):
    """Least-squares gradients at prediction 0 (h = 1): XGBoost's hist
    depth-wise tree on features with few distinct values (each value its own
    bin in both libraries) and ours group the rows into the same leaves with
    the same values. XGBoost's min_child_weight is our min_hessian_to_split;
    it has no row minimum, so ours is 1."""
    xgboost = pytest.importorskip("xgboost")
    X, y = _regression_data(3000, seed)
    _, _, _, _, leaf_ours, ours = _tree_of(
        X, y, grow_policy="depthwise", max_depth=max_depth, max_leaf_nodes=max_leaves,
        min_samples_leaf=1, min_hessian_to_split=min_child_weight, l2_regularization=reg_lambda)
    model = xgboost.XGBRegressor(
        n_estimators=1, learning_rate=1.0, tree_method="hist", grow_policy="depthwise",
        max_depth=max_depth, max_leaves=max_leaves or 0, min_child_weight=min_child_weight,
        reg_lambda=reg_lambda, reg_alpha=0.0, gamma=0.0, max_bin=256, base_score=0.0,
        n_jobs=1)
    model.fit(X, y)
    leaf_theirs = model.get_booster().predict(xgboost.DMatrix(X), pred_leaf=True).ravel()
    assert _same_partition(leaf_ours, leaf_theirs)
    np.testing.assert_allclose(ours, model.predict(X), rtol=1e-5, atol=1e-5)


def test_depthwise_splits_a_whole_level_before_the_next():
    X, y = _regression_data(2000, 3)
    tree, *_ = _tree_of(X, y, grow_policy="depthwise", max_leaf_nodes=6, max_depth=None,
                        min_samples_leaf=5)
    nodes = tree.nodes
    depths = nodes["depth"]
    # Six leaves level by level: the root's two children are both split
    # before any grandchild is.
    split_depths = np.sort(depths[nodes["is_leaf"] == 0])
    assert split_depths.tolist() == [0, 1, 1, 2, 2]


# ------------------------------------------------------------------ symmetric


def _level_brute_force(Xb, g, h, node_rows, n_bins_nm, min_leaf, min_hess, l2):
    def term(gs, hs):
        return gs * gs / (hs + l2) if hs + l2 > 0 else 0.0

    best, best_gain = None, None
    for f in range(Xb.shape[1]):
        any_missing = any((Xb[rows, f] == MISSING).any() for rows in node_rows)
        for d in ((0, 1) if any_missing else (0,)):
            last = n_bins_nm[f] if (any_missing and d == 0) else n_bins_nm[f] - 1
            for b in range(last):
                total = 0.0
                for rows in node_rows:
                    col = Xb[rows, f]
                    left = ((col <= b) & (col != MISSING)) | ((col == MISSING) & (d == 1))
                    gl, hl = g[rows][left].sum(), h[rows][left].sum()
                    gr, hr = g[rows][~left].sum(), h[rows][~left].sum()
                    if min(left.sum(), (~left).sum()) >= min_leaf and min(hl, hr) >= min_hess:
                        total += term(gl, hl) + term(gr, hr) - term(gl + gr, hl + hr)
                if best is None or total > best_gain + 1e-9 * max(1.0, abs(best_gain)):
                    best, best_gain = (f, b), total
    return best


@pytest.mark.parametrize("nan_rate", [0.0, 0.1])
@pytest.mark.parametrize("min_samples_leaf", [1, 40])
def test_symmetric_levels_share_the_brute_force_best_split(nan_rate, min_samples_leaf):
    X, y = _regression_data(1500, 4, nan_rate)
    tree, Xb, g, h, _, _ = _tree_of(X, y, grow_policy="symmetric", max_depth=4,
                                    min_samples_leaf=min_samples_leaf, l2_regularization=0.5)
    nodes = tree.nodes
    n_bins_nm = BinMapper().fit(X).n_bins_non_missing_
    g64, h64 = g.astype(np.float64), h.astype(np.float64)
    # The rows of every node, by walking the tree.
    rows_of = {0: np.arange(len(y))}
    for k in range(len(nodes)):
        if nodes[k]["is_leaf"]:
            continue
        rows = rows_of[k]
        col = Xb[rows, nodes[k]["feature_idx"]]
        left = ((col <= nodes[k]["bin_threshold"]) & (col != MISSING)) | (
            (col == MISSING) & (nodes[k]["missing_go_to_left"] == 1))
        rows_of[nodes[k]["left"]], rows_of[nodes[k]["right"]] = rows[left], rows[~left]
    n_levels = nodes["depth"].max()
    assert n_levels == 4
    for depth in range(n_levels):
        split = nodes[(nodes["depth"] == depth) & (nodes["is_leaf"] == 0)]
        shared = set(zip(split["feature_idx"].tolist(), split["bin_threshold"].tolist(),
                         split["missing_go_to_left"].tolist()))
        assert len(shared) == 1, depth
        # The level's candidates: every node of this depth that may split.
        candidates = [rows_of[k] for k in np.flatnonzero(nodes["depth"] == depth)
                      if len(rows_of[k]) >= 2 * min_samples_leaf]
        expected = _level_brute_force(Xb, g64, h64, candidates, n_bins_nm, min_samples_leaf,
                                      1e-3, 0.5)
        assert next(iter(shared))[:2] == expected, depth
    # No leaf holds fewer rows than min_samples_leaf.
    assert nodes["count"][nodes["is_leaf"] == 1].min() >= min_samples_leaf


def test_symmetric_leaf_values_are_newton_steps_of_their_rows():
    X, y = _regression_data(1200, 5)
    tree, _, g, h, leaf_of_row, values = _tree_of(X, y, grow_policy="symmetric", max_depth=3,
                                                  min_samples_leaf=10, l2_regularization=1.0)
    for k in np.unique(leaf_of_row):
        rows = leaf_of_row == k
        expected = -g[rows].astype(np.float64).sum() / (h[rows].astype(np.float64).sum() + 1.0)
        np.testing.assert_allclose(values[rows], expected, rtol=1e-6)


# ------------------------------------------------------------------ estimators


@pytest.fixture(scope="module")
def ranking_data():
    X, y, qid = make_ranking(n_queries=60, docs_per_query=20, n_features=8, missing_rate=0.05,
                             random_state=0)
    return X, y, qid


POLICIES = [dict(grow_policy="depthwise", max_depth=4), dict(grow_policy="symmetric",
                                                                  max_depth=4)]


@pytest.mark.parametrize("cls", RANKERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p["grow_policy"])
def test_every_ranker_grows_every_policy_and_round_trips(cls, policy, ranking_data):
    X, y, qid = ranking_data
    model = cls(n_estimators=8, random_state=0, min_samples_leaf=5, **policy)
    model.fit(X, fit_labels(cls, y), qid=qid)
    trees = model._booster.trees
    assert max(t["depth"].max() for t in trees) <= policy["max_depth"]
    if policy["grow_policy"] == "symmetric":
        for t in trees:
            for depth in range(t["depth"].max()):
                split = t[(t["depth"] == depth) & (t["is_leaf"] == 0)]
                assert len(set(zip(split["feature_idx"], split["bin_threshold"]))) == 1
    buffer = io.BytesIO()
    model.save_model(buffer)
    loaded = load_model(io.BytesIO(buffer.getvalue()))
    assert loaded.grow_policy == policy["grow_policy"]
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p["grow_policy"])
def test_exporters_and_treeshap_agree_with_predict(policy, ranking_data, tmp_path):
    from sklearn_ltr.export import to_lightgbm, to_xgboost
    from sklearn_ltr.inspection import feature_contributions

    X, y, qid = ranking_data
    model = LambdaMARTRanker(n_estimators=10, random_state=0, min_samples_leaf=5,
                             **policy).fit(X, y, qid=qid)
    ours = model.predict(X)
    contributions = feature_contributions(model, X)
    np.testing.assert_allclose(contributions.sum(axis=1), ours, rtol=1e-9, atol=1e-9)
    pytest.importorskip("lightgbm")
    np.testing.assert_allclose(to_lightgbm(model).predict(X), ours, rtol=1e-6, atol=1e-6)
    xgboost = pytest.importorskip("xgboost")
    np.testing.assert_allclose(to_xgboost(model).predict(xgboost.DMatrix(X)), ours,
                               rtol=1e-5, atol=1e-5)


def test_symmetric_trees_take_catboosts_depth_when_max_depth_is_none(ranking_data):
    X, y, qid = ranking_data
    params = dict(grow_policy="symmetric", n_estimators=3, min_samples_leaf=1, random_state=0)
    default = LambdaMARTRanker(**params).fit(X, y, qid=qid)
    six = LambdaMARTRanker(max_depth=6, **params).fit(X, y, qid=qid)
    np.testing.assert_array_equal(default.predict(X), six.predict(X))
    assert max(t["depth"].max() for t in default._booster.trees) == 6


def test_symmetric_refuses_what_it_cannot_honour(ranking_data):
    X, y, qid = ranking_data
    with pytest.raises(ValueError, match="monotonic_cst") as refused:
        LambdaMARTRanker(grow_policy="symmetric", max_depth=3, monotonic_cst=[1] + [0] * 7,
                         n_estimators=2).fit(X, y, qid=qid)
    assert "set monotonic_cst=None" in str(refused.value)
    assert "categor" not in str(refused.value)
    with pytest.raises(ValueError, match="grow_policy"):
        LambdaMARTRanker(grow_policy="oblivious").fit(X, y, qid=qid)


@pytest.mark.parametrize("cls", [c for c in RANKERS if c is not YetiRankRanker])
def test_lossguide_is_the_default_and_depthwise_differs(cls, ranking_data):
    X, y, qid = ranking_data
    y = fit_labels(cls, y)
    default = cls(n_estimators=5, random_state=0).fit(X, y, qid=qid)
    explicit = cls(n_estimators=5, random_state=0, grow_policy="lossguide").fit(X, y, qid=qid)
    np.testing.assert_array_equal(default.predict(X), explicit.predict(X))
    assert default.grow_policy_ == "lossguide"
    depthwise = cls(n_estimators=5, random_state=0, grow_policy="depthwise",
                    max_depth=3).fit(X, y, qid=qid)
    assert not np.array_equal(depthwise.predict(X), default.predict(X))


def test_yetirank_grows_symmetric_depth_6_trees_by_default(ranking_data):
    X, y, qid = ranking_data
    default = YetiRankRanker(n_estimators=5, random_state=0).fit(X, y, qid=qid)
    explicit = YetiRankRanker(n_estimators=5, random_state=0, grow_policy="symmetric",
                              max_depth=6).fit(X, y, qid=qid)
    np.testing.assert_array_equal(default.predict(X), explicit.predict(X))
    assert default.grow_policy_ == "symmetric"
    for t in default._booster.trees:
        assert t["depth"].max() == 6
        for depth in range(6):
            split = t[(t["depth"] == depth) & (t["is_leaf"] == 0)]
            assert len(set(zip(split["feature_idx"], split["bin_threshold"]))) == 1


@pytest.mark.parametrize("blocker", ["categorical", "monotonic_cst", "interaction_cst",
                                     "max_leaf_nodes"])
def test_auto_grows_leafwise_trees_where_symmetric_ones_cannot_honour_the_data(
        blocker, ranking_data):
    X, y, qid = ranking_data
    extra = {}
    if blocker == "categorical":
        X = X.copy()
        X[:, 0] = np.arange(len(y)) % 5
        extra["categorical_features"] = [0]
    elif blocker == "monotonic_cst":
        extra["monotonic_cst"] = [1] + [0] * (X.shape[1] - 1)
    elif blocker == "interaction_cst":
        extra["interaction_cst"] = [[0, 1], [2, 3, 4, 5, 6, 7]]
    else:
        extra["max_leaf_nodes"] = 7
    auto = YetiRankRanker(n_estimators=4, random_state=0, **extra).fit(X, y, qid=qid)
    leafwise = YetiRankRanker(n_estimators=4, random_state=0, grow_policy="lossguide",
                              **extra).fit(X, y, qid=qid)
    assert auto.grow_policy_ == "lossguide"
    np.testing.assert_array_equal(auto.predict(X), leafwise.predict(X))
    if blocker == "max_leaf_nodes":
        assert max(int(t["is_leaf"].sum()) for t in auto._booster.trees) <= 7


def test_symmetric_trees_refuse_a_leaf_count_they_would_not_grow(ranking_data):
    X, y, qid = ranking_data
    with pytest.raises(ValueError, match="max_leaf_nodes=63, but symmetric trees take their"):
        LambdaMARTRanker(grow_policy="symmetric", max_leaf_nodes=63,
                         n_estimators=2).fit(X, y, qid=qid)


def test_the_shape_grown_survives_save_and_load(ranking_data, tmp_path):
    from sklearn_ltr.persistence import load_model

    X, y, qid = ranking_data
    for params in ({}, {"grow_policy": "lossguide"}):
        model = YetiRankRanker(n_estimators=3, random_state=0, **params).fit(X, y, qid=qid)
        model.save_model(tmp_path / "m")
        loaded = load_model(tmp_path / "m")
        assert loaded.grow_policy_ == model.grow_policy_
        assert loaded.get_params()["grow_policy"] == model.grow_policy


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p["grow_policy"])
def test_dask_training_gives_the_single_process_trees(policy, ranking_data):
    pytest.importorskip("distributed")
    dd = pytest.importorskip("dask.dataframe")
    from _dask_cluster import local_cluster

    from sklearn_ltr.dask import DaskLambdaMARTRanker, repartition_by_query
    from sklearn_ltr.datasets import to_frame

    X, y, qid = ranking_data
    params = dict(n_estimators=6, random_state=0, min_samples_leaf=5, early_stopping=False,
                  **policy)
    local = LambdaMARTRanker(**params).fit(X, y, qid=qid)
    frame = to_frame(X, qid).assign(label=y)
    ddf = repartition_by_query(dd.from_pandas(frame, npartitions=4, sort=False))
    with local_cluster() as client:  # noqa: F841 (the default client of the fit)
        distributed = DaskLambdaMARTRanker(**params).fit(ddf.drop(columns="label"), ddf["label"])
    for got, expected in zip(distributed._booster.trees, local._booster.trees):
        for field in ("feature_idx", "bin_threshold", "missing_go_to_left", "left", "count"):
            np.testing.assert_array_equal(got[field], expected[field], err_msg=field)
        np.testing.assert_allclose(got["value"], expected["value"], rtol=0, atol=1e-12)


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p["grow_policy"])
def test_every_serving_format_reaches_our_scores(policy, tmp_path):
    """The LTR plugin, RankLib and Solr texts scored by the engines' rules
    (tests/_engine_rules.py), and the ONNX model in onnxruntime, on rows at
    and around every threshold, with NaN and infinities (float32 values:
    the engines compare in float32)."""
    import _engine_rules as rules
    from _export_cases import COLUMNS_WITH_NAN, edge_rows, solr_reachable, training_data

    from sklearn_ltr.export import _ranklib, _solr, _xgboost_dump, export_model

    X, y, qid = training_data()
    model = LambdaMARTRanker(n_estimators=15, random_state=0, min_samples_leaf=5,
                             early_stopping=False, **policy).fit(X, y, qid=qid)
    ensemble = model._tree_ensemble()
    X_base, _, _ = make_ranking(n_queries=10, docs_per_query=20, n_features=X.shape[1],
                                random_state=7)
    rng = np.random.default_rng(2)
    for column in COLUMNS_WITH_NAN:
        X_base[rng.random(X_base.shape[0]) < 0.15, column] = np.nan
    probes = edge_rows(ensemble, X_base, float32=True)
    assert np.isnan(probes).any() and np.isinf(probes).any()
    zeroed = np.where(np.isnan(probes), 0.0, probes)

    def close(theirs, ours):
        np.testing.assert_allclose(theirs, ours, rtol=1e-5, atol=1e-5 * np.abs(ours).max())

    text = _xgboost_dump.plugin_definition(ensemble, missing_as=None)
    rules.check_xgboost_plugin(text, ensemble.names())
    close(rules.xgboost_plugin_scores(text, ensemble.names(), probes)[0], model.predict(probes))
    text = _ranklib.ensemble_text(ensemble, missing_as=0.0)
    rules.check_ranklib(text, ensemble.n_features)
    close(rules.ranklib_scores(text, zeroed)[0], model.predict(zeroed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # solr_reachable checks it
        text = _solr.model_json(ensemble, missing_as=None)
    rules.check_solr(text)
    reachable = solr_reachable(ensemble, probes)
    close(rules.solr_scores(text, reachable, default_value=np.nan)[0], model.predict(reachable))
    ort = pytest.importorskip("onnxruntime")
    export_model(model, tmp_path / "model.onnx", "onnx")
    session = ort.InferenceSession(str(tmp_path / "model.onnx"),
                                   providers=["CPUExecutionProvider"])
    onnx_scores = session.run(None, {"X": probes.astype(np.float32)})[0][:, 0]
    close(onnx_scores, model.predict(probes))


@pytest.mark.parametrize("catboost_name, ours", [("SymmetricTree", "symmetric"),
                                                 ("Depthwise", "depthwise"),
                                                 ("Lossguide", "lossguide")])
def test_catboosts_spellings_get_ours_in_the_error(catboost_name, ours, ranking_data):
    X, y, qid = ranking_data
    with pytest.raises(ValueError, match=f"CatBoost's grow_policy='{catboost_name}' is "
                                         f"grow_policy='{ours}' here"):
        LambdaMARTRanker(grow_policy=catboost_name).fit(X, y, qid=qid)


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p["grow_policy"])
def test_warm_start_and_early_stopping_work_with_every_shape(policy, ranking_data):
    X, y, qid = ranking_data
    params = dict(random_state=0, min_samples_leaf=5, early_stopping=False, **policy)
    straight = LambdaMARTRanker(n_estimators=10, **params).fit(X, y, qid=qid)
    warm = LambdaMARTRanker(n_estimators=4, warm_start=True, **params).fit(X, y, qid=qid)
    warm.set_params(n_estimators=10).fit(X, y, qid=qid)
    np.testing.assert_array_equal(warm.predict(X), straight.predict(X))
    stopped = LambdaMARTRanker(n_estimators=200, random_state=0, min_samples_leaf=5,
                               early_stopping=True, n_iter_no_change=3, **policy)
    stopped.fit(X, y, qid=qid)
    # Stopped long before 200 trees, keeping the best iteration's trees.
    assert stopped.n_iter_ + 3 < len(stopped.validation_score_) < 200
    assert len(stopped._booster.trees) == stopped.n_iter_


@pytest.mark.parametrize("change", [dict(monotonic_cst=[1] + [0] * 7),
                                    dict(interaction_cst=[[0, 1], [2, 3, 4, 5, 6, 7]])],
                         ids=["monotonic_cst", "interaction_cst"])
@pytest.mark.parametrize("through_file", [False, True])
def test_a_warm_start_refuses_constraints_the_earlier_trees_do_not_keep(
        change, through_file, ranking_data, tmp_path):
    X, y, qid = ranking_data
    model = LambdaMARTRanker(n_estimators=3, warm_start=True, early_stopping=False,
                             random_state=0).fit(X, y, qid=qid)
    if through_file:
        model.save_model(tmp_path / "m")
        model = load_model(tmp_path / "m")
    name = next(iter(change))
    with pytest.raises(ValueError, match=f"warm_start=True adds trees to a model grown with "
                                         f"other {name}"):
        model.set_params(n_estimators=6, **change).fit(X, y, qid=qid)
    # Fitted with the constraint from the start, a warm start keeps it.
    constrained = LambdaMARTRanker(n_estimators=3, warm_start=True, early_stopping=False,
                                   random_state=0, **change).fit(X, y, qid=qid)
    constrained.set_params(n_estimators=6).fit(X, y, qid=qid)
    assert constrained.n_iter_ == 6
