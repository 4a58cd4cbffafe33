"""Tests for the ONNX export (sklearn_ltr/export/_onnx.py), run by onnxruntime.

Oracles: the ranker's own ``predict``, and its leaves (``TreeEnsemble.apply``):
a variant of the exported model in which every leaf outputs its node index,
one output column per tree, must reach exactly our leaf in every tree on every
probe row (rows at, just above and below each threshold, NaN, +-inf). The
same variant with a wrong rule (``<``, NaN sent the other way, thresholds
rounded to nearest) must reach another leaf on some row, so the probes can
see the mistakes an exporter is likely to make.
"""

import io
import json
import sys
import textwrap

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import helper, numpy_helper  # noqa: E402

# Imported under another name so that pytest does not collect it as a test.
from _export_cases import COLUMNS_WITH_NAN, RANKERS, fitted, training_data  # noqa: E402
from _export_cases import probe_rows  # noqa: E402
from _export_cases import (HAND_ROWS, categorical_probe_rows, fitted_categorical,  # noqa: E402
                           one_categorical_split)
from sklearn_ltr.export._categorical import listed_categories  # noqa: E402
from sklearn_ltr import CalibratedRanker  # noqa: E402
from sklearn_ltr._gbdt.common import NODE_DTYPE  # noqa: E402
from sklearn_ltr._gbdt.ensemble import TreeEnsemble  # noqa: E402
from sklearn_ltr.export import _onnx, export_model  # noqa: E402
from sklearn_ltr.export._onnx import model_bytes  # noqa: E402

NAMES = list(RANKERS)
NUMPY_DTYPE = {"float32": np.float32, "float64": np.float64}


def _session(content):
    return ort.InferenceSession(content, providers=["CPUExecutionProvider"])


def _scores(content, X, dtype="float32"):
    out = _session(content).run(None, {"X": np.asarray(X, dtype=NUMPY_DTYPE[dtype])})[0]
    assert out.dtype == NUMPY_DTYPE[dtype] and out.shape == (X.shape[0], 1)
    return out[:, 0]


def _assert_scores_close(content, X, expected, dtype):
    """Relative to each score, and to the largest one for scores near 0 (the
    float32 model sums its trees in float32)."""
    tolerance = 1e-5 if dtype == "float32" else 1e-12
    assert_allclose(_scores(content, X, dtype), expected,
                    rtol=tolerance, atol=tolerance * np.abs(expected).max())


def _rows(name, dtype):
    """Probe rows: float32 values for the float32 model, float64 neighbours of
    every threshold for the float64 one."""
    return probe_rows(name, float32=dtype == "float32")


def _node_index_in_tree(ensemble):
    sizes = np.diff(np.append(ensemble.tree_starts, ensemble.nodes.shape[0]))
    tree_of_node = np.repeat(np.arange(ensemble.n_trees), sizes)
    return tree_of_node, np.arange(ensemble.nodes.shape[0]) - ensemble.tree_starts[tree_of_node]


def _leaves(content, ensemble, X, **changed_attributes):
    """Leaf reached in each tree by the exported model, shape (n_rows, n_trees).

    Rebuilds the exported operator with each leaf's weight set to its node
    index within its tree and one target per tree; ``changed_attributes``
    replace attributes of the operator (to build deliberately wrong models).
    """
    model = onnx.load_from_string(content)
    (node,) = model.graph.node
    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    n_trees = ensemble.n_trees
    if node.op_type == "TreeEnsembleRegressor":
        attributes.update(
            n_targets=n_trees,
            base_values=[0.0] * n_trees,
            target_ids=attributes["target_treeids"],
            target_weights=[float(i) for i in attributes["target_nodeids"]],
        )
        n_targets = n_trees
    else:
        # Opset 5 lists our leaves in node order, then the baseline's leaf.
        leaf = ensemble.nodes["is_leaf"] == 1
        tree_of_node, index_in_tree = _node_index_in_tree(ensemble)
        assert numpy_helper.to_array(attributes["leaf_weights"]).shape == (leaf.sum() + 1,)
        attributes.update(
            n_targets=n_trees + 1,
            leaf_targetids=tree_of_node[leaf].tolist() + [n_trees],
            leaf_weights=numpy_helper.from_array(
                np.append(index_in_tree[leaf], -1).astype(np.float64)
            ),
        )
        n_targets = n_trees + 1
    attributes.update(changed_attributes)
    variant = helper.make_node(node.op_type, ["X"], ["leaf"], domain="ai.onnx.ml", **attributes)
    element = model.graph.input[0].type.tensor_type.elem_type
    graph = helper.make_graph(
        [variant], "leaves", [model.graph.input[0]],
        [helper.make_tensor_value_info("leaf", element, [None, n_targets])],
    )
    variant_model = helper.make_model(
        graph, opset_imports=model.opset_import, ir_version=model.ir_version
    )
    X = X.astype(np.float32 if element == onnx.TensorProto.FLOAT else np.float64)
    out = _session(variant_model.SerializeToString()).run(None, {"X": X})[0]
    return out[:, :n_trees].astype(np.int64)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", NAMES)
def test_scores_and_leaves_equal_ours(name, dtype):
    model = fitted(name)
    ensemble = model._tree_ensemble()
    content = model_bytes(ensemble, dtype=dtype)
    onnx.checker.check_model(onnx.load_from_string(content), full_check=True)
    X = _rows(name, dtype)

    _assert_scores_close(content, X, model.predict(X), dtype)
    assert_array_equal(_leaves(content, ensemble, X), ensemble.apply(X))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", NAMES)
def test_missing_and_infinite_values(name, dtype):
    model = fitted(name)
    ensemble = model._tree_ensemble()
    splits = ensemble.nodes[ensemble.splits]
    on_nan_columns = np.isin(splits["feature_idx"], COLUMNS_WITH_NAN)
    # Both NaN directions must occur, or NaN rows could not tell them apart.
    assert set(splits["missing_go_to_left"][on_nan_columns]) == {0, 1}

    X_train, _, _ = training_data()
    X = [np.full(ensemble.n_features, v) for v in (np.nan, np.inf, -np.inf)]
    for column in COLUMNS_WITH_NAN:
        for value in (np.nan, np.inf, -np.inf):
            rows = X_train[:50].astype(np.float32).astype(np.float64)
            rows[:, column] = value
            X.extend(rows)
    X = np.vstack(X)
    content = model_bytes(ensemble, dtype=dtype)
    _assert_scores_close(content, X, model.predict(X), dtype)
    assert_array_equal(_leaves(content, ensemble, X), ensemble.apply(X))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_probe_rows_catch_wrong_rules(dtype):
    name = "LambdaMARTRanker"
    ensemble = fitted(name)._tree_ensemble()
    content = model_bytes(ensemble, dtype=dtype)
    X = _rows(name, dtype)
    attributes = {
        a.name: helper.get_attribute_value(a)
        for a in onnx.load_from_string(content).graph.node[0].attribute
    }
    tracks = np.asarray(attributes["nodes_missing_value_tracks_true"])
    if dtype == "float32":
        split = np.asarray(attributes["nodes_modes"]) != b"LEAF"
        nearest = np.where(split, ensemble.nodes["num_threshold"].astype(np.float32), 0)
        wrong_rules = {
            "x < t": dict(nodes_modes=[b"BRANCH_LT" if s else b"LEAF" for s in split]),
            "NaN the other way": dict(nodes_missing_value_tracks_true=(split - tracks).tolist()),
            "nearest float32 threshold": dict(nodes_values=nearest.astype(float).tolist()),
        }
    else:
        wrong_rules = {
            "x < t": dict(nodes_modes=numpy_helper.from_array(np.ones(tracks.size, np.uint8))),
            "NaN the other way": dict(nodes_missing_value_tracks_true=(1 - tracks).tolist()),
        }
    ours = ensemble.apply(X)
    assert_array_equal(_leaves(content, ensemble, X), ours)
    for rule, changes in wrong_rules.items():
        assert (_leaves(content, ensemble, X, **changes) != ours).any(), rule


def _leaf(value):
    leaf = np.zeros(1, dtype=NODE_DTYPE)
    leaf["value"], leaf["is_leaf"], leaf["feature_idx"] = value, 1, -1
    leaf["left"] = leaf["right"] = -1
    return leaf


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_single_leaf_trees_and_no_trees(dtype):
    stump = np.zeros(3, dtype=NODE_DTYPE)
    stump[0] = (0.0, 10, 1, 0.25, 3, 1, 1, 2, 1.0, 0, 0, 0, 0)
    stump[1:] = np.concatenate([_leaf(1.0), _leaf(-2.0)])
    nodes = np.concatenate([_leaf(0.5), stump, _leaf(0.125)])
    ensemble = TreeEnsemble(nodes, np.array([0, 1, 4]), baseline=0.75, n_features=3)
    X = np.array([[0, 0.25, 0], [0, 0.5, 0], [0, np.nan, 0], [0, np.inf, 0], [0, -np.inf, 0]])
    content = model_bytes(ensemble, dtype=dtype)
    onnx.checker.check_model(onnx.load_from_string(content), full_check=True)
    # x1 <= 0.25 or NaN goes left (1.0), else right (-2.0); the other trees
    # and the baseline add 1.375. Short binary fractions: the sums are exact.
    expected = 1.375 + np.array([1.0, -2.0, 1.0, -2.0, 1.0])
    assert_array_equal(ensemble.predict(X), expected)
    assert_array_equal(_scores(content, X, dtype), expected)

    no_trees = TreeEnsemble(np.zeros(0, NODE_DTYPE), np.zeros(0, np.int64), 0.75, n_features=3)
    assert_array_equal(_scores(model_bytes(no_trees, dtype=dtype), X, dtype), np.full(5, 0.75))


def _categorical_rows(dtype):
    """Every float32 value for the float32 model, fractional ones included;
    integer codes for the float64 one (onnxruntime reads a large set's input
    by its integer part, see the module docstring)."""
    if dtype == "float32":
        return categorical_probe_rows(fractional=True, float32=True)
    return categorical_probe_rows()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_categorical_scores_and_leaves_equal_ours(dtype):
    model = fitted_categorical()
    ensemble = model._tree_ensemble()
    content = model_bytes(ensemble, dtype=dtype)
    onnx.checker.check_model(onnx.load_from_string(content), full_check=True)
    X = _categorical_rows(dtype)
    _assert_scores_close(content, X, model.predict(X), dtype)
    assert_array_equal(_leaves(content, ensemble, X), ensemble.apply(X))

    (node,) = onnx.load_from_string(content).graph.node
    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    categorical = ensemble.nodes[ensemble.splits & (ensemble.nodes["is_categorical"] != 0)]
    listed = [listed_categories(ensemble, row) for row in categorical]
    if dtype == "float32":
        # One BRANCH_EQ per listed category.
        assert attributes["nodes_modes"].count(b"BRANCH_EQ") == sum(c.size for c in listed)
    else:
        members = numpy_helper.to_array(attributes["membership_values"])
        assert_array_equal(members, np.concatenate([np.append(c, np.nan) for c in listed]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_categorical_probe_rows_catch_wrong_rules(dtype):
    ensemble = fitted_categorical()._tree_ensemble()
    content = model_bytes(ensemble, dtype=dtype)
    X = _categorical_rows(dtype)
    attributes = {
        a.name: helper.get_attribute_value(a)
        for a in onnx.load_from_string(content).graph.node[0].attribute
    }
    if dtype == "float32":
        modes = np.asarray(attributes["nodes_modes"])
        equal = modes == b"BRANCH_EQ"
        tracks = np.asarray(attributes["nodes_missing_value_tracks_true"])
        wrong_rules = {
            "NaN to the listed side": dict(
                nodes_missing_value_tracks_true=np.where(equal, 1, tracks).tolist()),
            "x <= c for x == c": dict(
                nodes_modes=np.where(equal, b"BRANCH_LEQ", modes).tolist()),
        }
    else:
        modes = numpy_helper.to_array(attributes["nodes_modes"])
        member = modes == 6
        tracks = np.asarray(attributes["nodes_missing_value_tracks_true"])
        wrong_rules = {
            "NaN to the listed side": dict(
                nodes_missing_value_tracks_true=np.where(member, 1, tracks).tolist()),
        }
    ours = ensemble.apply(X)
    for rule, changes in wrong_rules.items():
        assert (_leaves(content, ensemble, X, **changes) != ours).any(), rule


@pytest.mark.parametrize("missing_left", [0, 1])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_hand_made_categorical_splits(dtype, missing_left):
    """Scores written by hand: category 2 on the side without missing
    values; the other categories, unseen codes, -1 and NaN on the other."""
    ensemble = one_categorical_split([2.0], missing_left)
    listed, other = (-2.0, 1.0) if missing_left else (1.0, -2.0)
    expected = np.array([other, listed] + [other] * 7)
    assert_array_equal(ensemble.predict(HAND_ROWS), expected)
    assert_array_equal(_scores(model_bytes(ensemble, dtype=dtype), HAND_ROWS, dtype), expected)
    # A split that lists no category sends every value to the missing side.
    nothing = model_bytes(one_categorical_split([], 1), dtype=dtype)
    assert_array_equal(_scores(nothing, HAND_ROWS, dtype), np.ones(9))


def test_large_category_codes_need_float64():
    ensemble = one_categorical_split([2.0**24 + 3], 0)
    with pytest.raises(ValueError, match=r"'onnx'.*2\*\*24.*\['f0'\].*dtype='float64'"):
        model_bytes(ensemble, dtype="float32")
    # 2**24 + 2 and 2**24 + 3 are told apart in float64.
    expected = np.array([-2.0] * 3 + [1.0] + [-2.0] * 5)
    assert_array_equal(_scores(model_bytes(ensemble, dtype="float64"), HAND_ROWS, "float64"),
                       expected)


def test_export_model_file_round_trip(tmp_path):
    model = fitted("XENDCGRanker")
    X = probe_rows("XENDCGRanker", float32=True)
    path = tmp_path / "ranker.onnx"
    export_model(model, path, "onnx")
    loaded = onnx.load(path)
    onnx.checker.check_model(loaded, full_check=True)
    assert loaded.producer_name == "sklearn-ltr"
    metadata = {p.key: p.value for p in loaded.metadata_props}
    assert json.loads(metadata["feature_names"]) == model._tree_ensemble().names()
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["X"]
    assert [o.name for o in session.get_outputs()] == ["score"]
    custom_metadata = session.get_modelmeta().custom_metadata_map
    assert custom_metadata["feature_names"] == metadata["feature_names"]
    expected = model.predict(X)
    score = session.run(None, {"X": X.astype(np.float32)})[0][:, 0]
    assert_allclose(score, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())

    buffer = io.BytesIO()
    names = [f"feature {i}, quoted \"{i}\"" for i in range(model.n_features_in_)]
    export_model(model, buffer, "onnx", feature_names=names, dtype="float64")
    content = buffer.getvalue()
    metadata = {p.key: p.value for p in onnx.load_from_string(content).metadata_props}
    assert json.loads(metadata["feature_names"]) == names
    _assert_scores_close(content, X, expected, "float64")


@pytest.mark.parametrize("calibration", [None, "platt"])
def test_documented_probability_recipe(calibration, tmp_path, monkeypatch):
    X, y, qid = training_data()
    if calibration is None:
        ranker = fitted("CalibratedRanker")
    else:
        ranker = CalibratedRanker(
            objective="softmax", calibration="platt", n_estimators=10, random_state=0
        ).fit(X, (y >= 2).astype(float), qid=qid)
    recipe = _onnx.__doc__.split("append the operators yourself::")[1].split("(use ``")[0]
    monkeypatch.chdir(tmp_path)
    exec(textwrap.dedent(recipe), {"ranker": ranker})
    session = ort.InferenceSession("ranker_proba.onnx", providers=["CPUExecutionProvider"])
    rows = X[:300].astype(np.float32)
    score, probability = session.run(["score", "probability"], {"X": rows})
    assert_allclose(probability[:, 0], ranker.predict_proba(rows)[:, 1], rtol=1e-5, atol=1e-6)


def test_errors(monkeypatch):
    model = fitted("LambdaMARTRanker")
    with pytest.raises(ValueError, match="'onnx'.*missing_as"):
        export_model(model, io.BytesIO(), "onnx", missing_as=0.0)
    with pytest.raises(ValueError, match="'onnx'.*dtype.*float16"):
        export_model(model, io.BytesIO(), "onnx", dtype="float16")
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ImportError, match="pip install onnx"):
        export_model(model, io.BytesIO(), "onnx")
