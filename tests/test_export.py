"""export_model, to_lightgbm and to_xgboost against the real libraries.

LightGBM predicts in float64, so its scores must equal ours to 1e-12
(relative to the largest score: only the order of the float64 sum differs,
because our baseline is folded into LightGBM's first tree). XGBoost compares
and sums in float32: its leaves must be ours on float32 inputs and its scores
equal ours to 1e-5. The rows reach every split with its feature at the
threshold, one float above and below, NaN and +-inf (tests/_export_cases.py).
"""

import functools
import io
import json

import numpy as np
import pytest
from numpy.testing import assert_allclose

from _export_cases import (CATEGORICAL_COLUMNS, CATEGORICAL_MAX_BINS, HAND_ROWS, RANKERS,
                           categorical_probe_rows, categorical_training_data, fitted,
                           fitted_categorical, one_categorical_split, probe_rows,
                           training_data)
from sklearn_ltr import LambdaMARTRanker, load_model, save_model
from sklearn_ltr._gbdt.common import NODE_DTYPE
from sklearn_ltr._gbdt.ensemble import TreeEnsemble
from sklearn_ltr.export import FORMATS, export_model, to_lightgbm, to_xgboost
from sklearn_ltr.export._lightgbm import dump_model_json

lightgbm = pytest.importorskip("lightgbm")
xgboost = pytest.importorskip("xgboost")


def assert_scores_equal(theirs, ours, rtol):
    assert_allclose(theirs, ours, rtol=rtol, atol=rtol * np.abs(ours).max())


def leaf_numbers(ensemble, t):
    """LightGBM's number of each of our tree t's nodes that is a leaf."""
    is_leaf = ensemble.tree(t)["is_leaf"] != 0
    return np.cumsum(is_leaf) - 1


@pytest.mark.parametrize("name", RANKERS)
@pytest.mark.parametrize("source", ["file", "to_lightgbm"])
def test_lightgbm_predicts_our_scores_and_leaves(name, source, tmp_path):
    model = fitted(name)
    if source == "file":
        export_model(model, tmp_path / "model.txt", "lightgbm")
        booster = lightgbm.Booster(model_file=str(tmp_path / "model.txt"))
    else:
        booster = to_lightgbm(model)
    ensemble = model._tree_ensemble()
    for X in (probe_rows(name), probe_rows(name, float32=True)):
        assert_scores_equal(booster.predict(X, raw_score=True), model.predict(X), 1e-12)
        leaves = booster.predict(X, pred_leaf=True)
        ours = ensemble.apply(X)
        for t in range(ensemble.n_trees):
            np.testing.assert_array_equal(leaves[:, t], leaf_numbers(ensemble, t)[ours[:, t]])
    # Where the probes go: some rows at each side of a threshold and NaN.
    assert np.isnan(X).any() and np.isinf(X).any()


def test_lightgbm_file_is_what_lightgbm_writes_back(tmp_path):
    """LightGBM re-saves our file with the same trees, thresholds and leaf
    values (it adds the leaf weights we do not have, as zeros)."""
    model = fitted("CalibratedRanker")
    booster = to_lightgbm(model)
    again = lightgbm.Booster(model_str=booster.model_to_string())
    X = probe_rows("CalibratedRanker")
    np.testing.assert_array_equal(again.predict(X), booster.predict(X))
    text = booster.model_to_string()
    assert "tree_sizes=" in text and text.count("Tree=") == model.n_iter_
    # The baseline lives in the first tree: LightGBM's model has no other place.
    assert model._tree_ensemble().baseline != 0
    assert_allclose(booster.predict(X[:5]), model.predict(X[:5]), rtol=1e-12)


def _json_diff(a, b, path=""):
    """Paths where two JSON values differ (internal_value to 1e-15 relative:
    LightGBM reads it back with a parser that is not correctly rounded)."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = set(a) | set(b)
        return [d for k in keys for d in (
            _json_diff(a[k], b[k], f"{path}/{k}") if k in a and k in b else [f"{path}/{k}"]
        )]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [path]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _json_diff(x, y, f"{path}[{i}]")]
    if path.endswith("internal_value"):
        return [] if abs(a - b) <= 1e-15 * abs(b) else [path]
    return [] if a == b else [path]


@pytest.mark.parametrize("name", RANKERS)
def test_lightgbm_json_with_lightgbms_rule_is_lightgbms_dump(name, tmp_path):
    model = fitted(name)
    export_model(model, tmp_path / "model.json", "lightgbm-json", comparison="<=")
    ours = json.loads((tmp_path / "model.json").read_text())
    assert _json_diff(ours, to_lightgbm(model).dump_model()) == []


def vespa_scores(document, X):
    """Score rows as Vespa's LightGBM import does.

    The rule is LightGBMParser.nodeToRankingExpression (vespa-engine/vespa,
    model-integration/src/main/java/ai/vespa/rankingexpression/importer/
    lightgbm/LightGBMParser.java): a numerical split becomes
    ``if(!(x >= threshold), left, right)`` when ``default_left`` and
    ``if(x < threshold, left, right)`` otherwise, evaluated in double; the
    trees' outputs are added; objectives starting with "binary" get a
    sigmoid, ranking objectives nothing.

    A categorical split (``"=="``) becomes ``x in [listed values]``, with
    ``isNan(x) ||`` before it when ``default_left``: its threshold's
    ``"||"``-separated values, as strings (pandas_categorical is null), and
    Vespa's categorical features are strings; here the feature is the code,
    compared as the number the string spells.
    """
    names = document["feature_names"]
    assert not document["objective"].startswith("binary")

    def score(node, x):
        while "leaf_value" not in node:
            v = x[names.index(names[node["split_feature"]])]
            if node["decision_type"] == "==":
                listed = [float(c) for c in node["threshold"].split("||")]
                go_left = v in listed or (node["default_left"] and np.isnan(v))
            else:
                t = float(node["threshold"])
                go_left = not (v >= t) if node["default_left"] else v < t
            node = node["left_child"] if go_left else node["right_child"]
        return node["leaf_value"]

    return np.array([
        sum(score(tree["tree_structure"], x) for tree in document["tree_info"]) for x in X
    ])


@pytest.mark.parametrize("name", RANKERS)
def test_lightgbm_json_scores_in_vespa_as_ours(name, tmp_path):
    model = fitted(name)
    export_model(model, tmp_path / "model.json", "lightgbm-json")
    document = json.loads((tmp_path / "model.json").read_text())
    ensemble = model._tree_ensemble()
    X = probe_rows(name)[::3]
    # The documented exception: values above 1e300 (JSON's stand-in for an
    # infinite threshold) at a split that sends every value left.
    everything_left = ensemble.nodes[ensemble.splits & np.isposinf(ensemble.nodes["num_threshold"])]
    huge = (X[:, everything_left["feature_idx"]] > 1e300).any(axis=1)
    assert_scores_equal(vespa_scores(document, X[~huge]), model.predict(X[~huge]), 1e-12)
    if huge.any():  # the exception is real (test_json_infinity_is_vespas_exception)
        assert not np.allclose(vespa_scores(document, X[huge]), model.predict(X[huge]))
    # LightGBM's rule in Vespa would send a value equal to a threshold right.
    export_model(model, tmp_path / "lightgbm_rule.json", "lightgbm-json", comparison="<=")
    lightgbm_rule = json.loads((tmp_path / "lightgbm_rule.json").read_text())
    assert not np.allclose(vespa_scores(lightgbm_rule, X), model.predict(X), rtol=1e-12)


def test_json_infinity_is_vespas_exception(tmp_path):
    """A split that sends every value left and only NaN right has threshold
    +inf, written as 1e300: in Vespa a value above it goes right."""
    nodes = np.zeros(3, dtype=NODE_DTYPE)
    nodes[0] = (0.0, 10, 0, np.inf, 0, 0, 1, 2, 1.0, 0, 0, 0, 0)
    for k, value in ((1, 1.0), (2, -2.0)):
        nodes[k]["value"], nodes[k]["is_leaf"], nodes[k]["feature_idx"] = value, 1, -1
        nodes[k]["left"] = nodes[k]["right"] = -1
    ensemble = TreeEnsemble(nodes, np.array([0]), baseline=0.0, n_features=1)
    document = json.loads(dump_model_json(ensemble))
    X = np.array([[5.0], [1e299], [1e301], [np.inf], [np.nan]])
    np.testing.assert_array_equal(ensemble.predict(X), [1.0, 1.0, 1.0, 1.0, -2.0])
    np.testing.assert_array_equal(vespa_scores(document, X), [1.0, 1.0, -2.0, -2.0, -2.0])


@pytest.mark.parametrize("name", RANKERS)
@pytest.mark.parametrize("source", ["file", "to_xgboost"])
def test_xgboost_predicts_our_scores_and_leaves_on_float32(name, source, tmp_path):
    from sklearn_ltr.export._xgboost import xgboost_node_order

    model = fitted(name)
    if source == "file":
        export_model(model, tmp_path / "model.json", "xgboost")
        booster = xgboost.Booster(model_file=str(tmp_path / "model.json"))
    else:
        booster = to_xgboost(model)
    X = probe_rows(name, float32=True)
    X = X[~np.isinf(X).any(axis=1)]  # XGBoost refuses infinite values
    data = xgboost.DMatrix(X.astype(np.float32))
    assert_scores_equal(booster.predict(data, output_margin=True), model.predict(X), 1e-5)
    leaves = booster.predict(data, pred_leaf=True).astype(np.int64)
    ensemble = model._tree_ensemble()
    ours = ensemble.apply(X)
    for t in range(ensemble.n_trees):
        order, _ = xgboost_node_order(ensemble.tree(t))
        np.testing.assert_array_equal(order[leaves[:, t]], ours[:, t])


def test_float32_probes_catch_a_naive_xgboost_threshold():
    """XGBoost tests ``x < T`` in float32. Our thresholds rounded to the
    nearest float32 would send the probe at that float32 to the wrong side
    at some splits; the exported ``T`` sends it where we do."""
    from sklearn_ltr.export._float32 import strict_threshold32

    ensemble = fitted("LambdaMARTRanker")._tree_ensemble()
    t = ensemble.nodes[ensemble.splits]["num_threshold"]
    t = t[np.isfinite(t)]
    probe = t.astype(np.float32)  # one of the float32 probes of probe_rows
    ours_left = probe.astype(np.float64) <= t
    assert np.array_equal(probe < strict_threshold32(t), ours_left)
    assert not np.array_equal(probe < t.astype(np.float32), ours_left)


def test_feature_names_are_written_and_checked(tmp_path):
    pd = pytest.importorskip("pandas")
    X, y, qid = training_data()
    frame = pd.DataFrame(X, columns=[f"feat_{i}" for i in range(X.shape[1])])
    model = LambdaMARTRanker(n_estimators=3, random_state=0).fit(frame, y, qid=qid)
    assert to_lightgbm(model).feature_name() == list(frame.columns)
    assert to_xgboost(model).feature_names == list(frame.columns)
    names = [f"bm25_{i}" for i in range(X.shape[1])]
    assert to_lightgbm(model, feature_names=names).feature_name() == names
    with pytest.raises(ValueError, match="feature_names must be 12 strings"):
        export_model(model, tmp_path / "m.txt", "lightgbm", feature_names=names[:-1])
    with pytest.raises(ValueError, match="must be unique"):
        export_model(model, tmp_path / "m.txt", "lightgbm", feature_names=["a"] * 12)
    with pytest.raises(ValueError, match="whitespace"):
        export_model(model, tmp_path / "m.txt", "lightgbm",
                     feature_names=["title bm25"] + names[1:])


def test_bad_calls_name_the_problem(tmp_path):
    from sklearn.exceptions import NotFittedError
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    model = fitted("LambdaMARTRanker")
    with pytest.raises(ValueError, match="format must be one of 'lightgbm'"):
        export_model(model, tmp_path / "m", "pmml")
    with pytest.raises(ValueError, match=r"format 'lightgbm' takes the options none; got \['name'\]"):
        export_model(model, tmp_path / "m", "lightgbm", name="x")
    with pytest.raises(ValueError, match="comparison must be"):
        export_model(model, tmp_path / "m", "lightgbm-json", comparison="<<")
    with pytest.raises(TypeError, match="pipeline\\[-1\\]"):
        export_model(make_pipeline(StandardScaler(), model), tmp_path / "m", "lightgbm")
    with pytest.raises(NotFittedError):
        export_model(LambdaMARTRanker(), tmp_path / "m", "lightgbm")
    assert set(FORMATS) == {"lightgbm", "lightgbm-json", "xgboost", "xgboost-dump",
                            "ranklib", "solr", "onnx"}


@pytest.mark.parametrize("format", ["lightgbm", "lightgbm-json", "xgboost"])
def test_a_loaded_model_exports_the_same_bytes(format):
    model = fitted("CalibratedRanker")
    saved = io.BytesIO()
    save_model(model, saved)
    loaded = load_model(io.BytesIO(saved.getvalue()))
    first, second = io.BytesIO(), io.BytesIO()
    export_model(model, first, format)
    export_model(loaded, second, format)
    assert first.getvalue() == second.getvalue() and first.getvalue()


@functools.lru_cache(maxsize=None)
def categorical_frame_model():
    """A LambdaMARTRanker fitted on a DataFrame whose column 1 is a pandas
    category column of strings (the model reads its positions among the
    categories seen in fit) and whose column 5 holds codes."""
    pd = pytest.importorskip("pandas")
    X, y, qid = categorical_training_data()
    frame = pd.DataFrame(X, columns=[f"feat_{i}" for i in range(X.shape[1])])
    codes = X[:, 1]
    frame["feat_1"] = pd.Categorical(
        np.where(codes >= 0, np.char.add("c", np.nan_to_num(codes).astype(int).astype(str)), None))
    return LambdaMARTRanker(categorical_features=["feat_1", "feat_5"],
                            max_bins=CATEGORICAL_MAX_BINS, n_estimators=10,
                            random_state=0).fit(frame, y, qid=qid)


# What marks a categorical split in each format that writes them.
CATEGORICAL_SPLIT_MARK = {
    ("lightgbm", None): b"decision_type=9",
    ("lightgbm-json", None): b'"decision_type": "=="',
    ("xgboost", None): b'"categories_nodes"',
    ("onnx", "float32"): b"BRANCH_EQ",
    ("onnx", "float64"): b"membership_values",
}


@pytest.mark.parametrize("format, dtype", list(CATEGORICAL_SPLIT_MARK))
@pytest.mark.parametrize("source", ["codes", "frame"])
def test_a_loaded_categorical_model_exports_the_same_bytes(format, dtype, source):
    """Saved and loaded (format_version 3), a model with categorical splits
    (with Platt scaling, or read from a pandas category column) writes the
    same bytes in every format that has categorical splits."""
    if format == "onnx":
        pytest.importorskip("onnx")
    model = (fitted_categorical("CalibratedRanker") if source == "codes"
             else categorical_frame_model())
    options = {} if dtype is None else {"dtype": dtype}
    saved = io.BytesIO()
    save_model(model, saved)
    loaded = load_model(io.BytesIO(saved.getvalue()))
    first, second = io.BytesIO(), io.BytesIO()
    export_model(model, first, format, **options)
    export_model(loaded, second, format, **options)
    assert CATEGORICAL_SPLIT_MARK[format, dtype] in first.getvalue()
    assert first.getvalue() == second.getvalue()


# -- categorical splits ----------------------------------------------------------


def categorical_splits(ensemble):
    return ensemble.nodes[ensemble.splits & (ensemble.nodes["is_categorical"] != 0)]


def test_the_categorical_model_exercises_both_missing_sides():
    """Categorical splits whose missing side is left and right, on both
    features, column 1 split on through both of its blocks of categories;
    training data with NaN and negative codes, and categories too rare to
    be kept (so merged with missing values)."""
    ensemble = fitted_categorical()._tree_ensemble()
    splits = categorical_splits(ensemble)
    assert set(splits["missing_go_to_left"]) == {0, 1}
    assert set(ensemble.column_of(splits["feature_idx"])) == set(CATEGORICAL_COLUMNS)
    assert np.sum(ensemble.feature_columns[np.unique(splits["feature_idx"])] == 1) == 2
    X, _, _ = categorical_training_data()
    for f in CATEGORICAL_COLUMNS:
        assert np.isnan(X[:, f]).any() and (X[:, f] < 0).any()
    seen = np.unique(X[:, 1][X[:, 1] >= 0])
    assert not np.isin(seen, ensemble.column_categories(1)).all()
    assert ensemble.column_categories(5).max() >= 1000  # several bitset words in LightGBM


def _naive_categorical_ensemble(ensemble):
    """The model as an exporter that ignores our missing side would write
    it: the engine's own default for every value not listed (NaN and
    unknown categories to the right of a LightGBM split)."""
    from dataclasses import replace

    nodes = ensemble.nodes.copy()
    nodes["missing_go_to_left"][nodes["is_categorical"] != 0] = 0
    return replace(ensemble, nodes=nodes)


@pytest.mark.parametrize("source", ["file", "to_lightgbm"])
def test_lightgbm_routes_categories_as_ours(source, tmp_path):
    """NaN, negative, unseen and rare categories go to our missing side,
    known ones where our split sends them: LightGBM's scores equal ours to
    float64 rounding and it reaches our leaves, on integer codes."""
    model = fitted_categorical()
    if source == "file":
        export_model(model, tmp_path / "model.txt", "lightgbm")
        booster = lightgbm.Booster(model_file=str(tmp_path / "model.txt"))
    else:
        booster = to_lightgbm(model)
    ensemble = model._tree_ensemble()
    X = categorical_probe_rows()
    assert_scores_equal(booster.predict(X, raw_score=True), model.predict(X), 1e-12)
    leaves = booster.predict(X, pred_leaf=True)
    ours = ensemble.apply(X)
    for t in range(ensemble.n_trees):
        np.testing.assert_array_equal(leaves[:, t], leaf_numbers(ensemble, t)[ours[:, t]])
    assert "decision_type=9" in booster.model_to_string()  # categorical, NaN missing type


def test_lightgbm_probes_catch_unknown_categories_sent_to_lightgbms_default():
    """Written with LightGBM's own default (every value not in the bitset
    goes right), the model scores some rows differently, among them rows
    whose category is not NaN but unknown (rare, unseen or negative)."""
    from sklearn_ltr.export._lightgbm import booster as lightgbm_booster

    model = fitted_categorical()
    ensemble = model._tree_ensemble()
    X = categorical_probe_rows()
    naive = lightgbm_booster(_naive_categorical_ensemble(ensemble)).predict(X)
    differs = ~np.isclose(naive, model.predict(X), rtol=1e-12, atol=1e-12)
    unknown = np.zeros(X.shape[0], dtype=bool)
    for f in CATEGORICAL_COLUMNS:
        unknown |= ~np.isnan(X[:, f]) & ~np.isin(X[:, f], ensemble.column_categories(f))
    assert (differs & unknown).any() and (differs & ~unknown).any()


def test_lightgbm_reads_a_fractional_category_as_its_integer_part():
    """The documented difference: our model sends 2.5 to the missing side,
    LightGBM reads it as category 2."""
    model = fitted_categorical()
    ensemble = model._tree_ensemble()
    X = categorical_probe_rows()
    truncated = X.copy()
    for f in CATEGORICAL_COLUMNS:
        known = np.isin(X[:, f], ensemble.column_categories(f))
        truncated[known, f] += 0.5
    booster = to_lightgbm(model)
    assert_scores_equal(booster.predict(truncated), model.predict(X), 1e-12)
    assert not np.allclose(model.predict(truncated), model.predict(X))


def test_lightgbm_json_of_a_categorical_model_is_lightgbms_dump(tmp_path):
    model = fitted_categorical()
    export_model(model, tmp_path / "model.json", "lightgbm-json", comparison="<=")
    ours = json.loads((tmp_path / "model.json").read_text())
    assert _json_diff(ours, to_lightgbm(model).dump_model()) == []
    assert any(t["num_cat"] > 0 for t in ours["tree_info"])


def test_lightgbm_json_of_a_categorical_model_scores_in_vespa_as_ours(tmp_path):
    model = fitted_categorical()
    export_model(model, tmp_path / "model.json", "lightgbm-json")
    document = json.loads((tmp_path / "model.json").read_text())
    X = categorical_probe_rows()[::4]
    X = X[~(np.abs(np.nan_to_num(X)) > 1e300).any(axis=1)]
    assert_scores_equal(vespa_scores(document, X), model.predict(X), 1e-12)


@pytest.mark.parametrize("source", ["file", "to_xgboost"])
def test_xgboost_routes_categories_as_ours(source, tmp_path):
    from sklearn_ltr.export._xgboost import xgboost_node_order

    model = fitted_categorical()
    if source == "file":
        export_model(model, tmp_path / "model.json", "xgboost")
        booster = xgboost.Booster(model_file=str(tmp_path / "model.json"))
    else:
        booster = to_xgboost(model)
    X = categorical_probe_rows(float32=True)
    X = X[~np.isinf(X).any(axis=1)]  # XGBoost refuses infinite values
    data = xgboost.DMatrix(X.astype(np.float32))
    assert_scores_equal(booster.predict(data, output_margin=True), model.predict(X), 1e-5)
    leaves = booster.predict(data, pred_leaf=True).astype(np.int64)
    ensemble = model._tree_ensemble()
    ours = ensemble.apply(X)
    for t in range(ensemble.n_trees):
        order, _ = xgboost_node_order(ensemble.tree(t))
        np.testing.assert_array_equal(order[leaves[:, t]], ours[:, t])


def test_xgboost_types_categorical_features_and_reads_pandas_codes():
    """A ranker fitted on a pandas category column: its codes (``cat.codes``,
    -1 for a missing value) are what the exported models read."""
    pd = pytest.importorskip("pandas")
    X, y, qid = categorical_training_data()
    frame = pd.DataFrame(X, columns=[f"feat_{i}" for i in range(X.shape[1])])
    codes = X[:, 1]
    labels = np.array([f"c{i:02d}" for i in range(int(np.nanmax(codes)) + 1)])
    frame["feat_1"] = pd.Categorical(
        np.where(codes >= 0, labels[np.where(codes >= 0, codes, 0).astype(int)], None))
    model = LambdaMARTRanker(n_estimators=5, random_state=0).fit(frame, y, qid=qid)
    assert model.is_categorical_.tolist() == [j == 1 for j in range(X.shape[1])]
    assert len(categorical_splits(model._tree_ensemble()))
    booster = to_xgboost(model)
    assert booster.feature_types == ["float", "c"] + ["float"] * (X.shape[1] - 2)
    as_codes = frame.assign(feat_1=frame["feat_1"].cat.codes.astype(np.float64))
    # XGBoost reads float32: compare with our scores of the rounded values.
    numeric = [c for c in frame.columns if c != "feat_1"]
    expected = model.predict(frame.assign(
        **{c: frame[c].astype(np.float32).astype(np.float64) for c in numeric}))
    assert_scores_equal(
        booster.predict(xgboost.DMatrix(as_codes.to_numpy(np.float32),
                                        feature_names=list(frame.columns)),
                        output_margin=True), expected, 1e-5)
    assert_scores_equal(to_lightgbm(model).predict(as_codes.to_numpy()), model.predict(frame),
                        1e-12)


@pytest.mark.parametrize("missing_left", [0, 1])
def test_hand_made_categorical_splits(missing_left):
    """Scores written by hand: category 2 listed on the side without
    missing values, every other value on the other side."""
    from sklearn_ltr.export._lightgbm import booster as lightgbm_booster
    from sklearn_ltr.export._xgboost import booster as xgboost_booster

    ensemble = one_categorical_split([2.0], missing_left)
    listed, other = (-2.0, 1.0) if missing_left else (1.0, -2.0)
    expected = np.array([other, listed] + [other] * 7)
    np.testing.assert_array_equal(ensemble.predict(HAND_ROWS), expected)
    np.testing.assert_array_equal(lightgbm_booster(ensemble).predict(HAND_ROWS), expected)
    data = xgboost.DMatrix(HAND_ROWS.astype(np.float32))
    np.testing.assert_array_equal(
        xgboost_booster(ensemble).predict(data, output_margin=True), expected)


def test_large_category_codes_refused_by_xgboost_but_not_lightgbm():
    from sklearn_ltr.export._lightgbm import booster as lightgbm_booster
    from sklearn_ltr.export._xgboost import model_json

    ensemble = one_categorical_split([2.0**24 + 3], 0)
    expected = np.array([-2.0] * 3 + [1.0] + [-2.0] * 5)
    np.testing.assert_array_equal(lightgbm_booster(ensemble).predict(HAND_ROWS), expected)
    with pytest.raises(ValueError, match=r"'xgboost'.*2\*\*24.*\['f0'\].*'lightgbm'"):
        model_json(ensemble)
    # Listed on the missing side, such codes are not a problem.
    model_json(one_categorical_split([2.0], 1))


def test_lightgbm_refuses_bitsets_of_codes_near_2_to_31():
    # One bit per category value up to the largest listed: a code near 2**31
    # (a hashed id) takes 67 million words in one split. The export says so
    # at once instead of writing gigabytes of text.
    from sklearn_ltr.export._lightgbm import MAX_BITSET_WORDS, dump_model_json, model_text

    hashed = (1.0, 2.0, 2.0**31 - 5)
    ensemble = one_categorical_split([2.0**31 - 5], 0, hashed)
    for write in (model_text, dump_model_json):
        with pytest.raises(ValueError, match=r"'f0' up to 2,147,483,643.*67,108,864 32-bit words"):
            write(ensemble)
    assert (2**24 + 3) // 32 + 1 <= MAX_BITSET_WORDS  # the test above exports that code
    # On the missing side, such a code costs nothing.
    assert "cat_threshold=" in model_text(one_categorical_split([1.0], 0, hashed))


def test_a_split_listing_no_category():
    """Every value on the missing side: LightGBM writes an empty bitset,
    XGBoost (which needs a category) refuses."""
    from sklearn_ltr.export._lightgbm import booster as lightgbm_booster
    from sklearn_ltr.export._xgboost import model_json

    ensemble = one_categorical_split([], 1)
    np.testing.assert_array_equal(lightgbm_booster(ensemble).predict(HAND_ROWS), np.ones(9))
    with pytest.raises(ValueError, match="'xgboost'.*at least one category"):
        model_json(ensemble)
