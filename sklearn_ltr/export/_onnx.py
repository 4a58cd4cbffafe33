"""ONNX export: the ranker as one ``ai.onnx.ml`` tree-ensemble operator.

The model reads an input ``"X"`` of shape ``[N, n_features]`` and writes
``"score"`` of shape ``[N, 1]`` (the operator's own output shape, one target),
the ranker's raw score, i.e. ``predict``. Feature names, in column order, are
the JSON list ``metadata_props["feature_names"]`` (onnxruntime:
``session.get_modelmeta().custom_metadata_map``); the producer is
``"sklearn-ltr"``.

``dtype="float32"`` (default)
    ``TreeEnsembleRegressor`` of ``ai.onnx.ml`` opset 3, the form most
    runtimes know (onnxruntime since 1.11). Input and output are float32.
    Each split is ``BRANCH_LEQ`` against ``floor32(threshold)``, the largest
    float32 not above our float64 threshold, so every float32 input takes the
    branch it takes in our model; a float64 value that is not a float32 is
    rounded when you cast ``X`` to float32 and may then take another branch.
    Leaf values and the baseline are stored, and summed by onnxruntime, in
    float32: the score agrees with ``predict`` to about 1e-6 relative (to the
    largest score).
``dtype="float64"``
    ``TreeEnsemble`` of ``ai.onnx.ml`` opset 5, the only tree operator with a
    double output (``TreeEnsembleRegressor`` takes double input but always
    returns float). Input, thresholds, leaf values and output are float64 and
    the thresholds are ours, so branches are exactly those of our model and
    the score equals ``predict`` up to the order of the float64 additions.
    Needs an onnxruntime that knows ``ai.onnx.ml`` opset 5 (tested with
    1.32). The operator has no base value; the baseline is one more tree, of
    a single leaf, after ours.

Comparison and missing values: a row goes to the true (left) branch iff
``x <= threshold``. NaN goes where our model sends it: to the true branch
through ``nodes_missing_value_tracks_true = 1`` where our split sends missing
values left, else to the false branch because ``NaN <= t`` is false. ``+inf``
and ``-inf`` are ordinary values, as in our model.

Probabilities of a :class:`~sklearn_ltr.CalibratedRanker`: the exported score
is the raw score; ``predict_proba`` gives ``sigmoid(score)``, or
``sigmoid(platt_coef_ * score + platt_intercept_)`` with Platt scaling. To have
the ONNX model return the probability, append the operators yourself::

    import onnx
    from onnx import TensorProto, helper
    from sklearn_ltr.export import export_model

    export_model(ranker, "ranker.onnx", "onnx")
    model = onnx.load("ranker.onnx")
    graph = model.graph
    a = getattr(ranker, "platt_coef_", 1.0)
    b = getattr(ranker, "platt_intercept_", 0.0)
    graph.initializer.extend([
        helper.make_tensor("platt_a", TensorProto.FLOAT, [], [a]),
        helper.make_tensor("platt_b", TensorProto.FLOAT, [], [b]),
    ])
    graph.node.extend([
        helper.make_node("Mul", ["score", "platt_a"], ["logit_scaled"]),
        helper.make_node("Add", ["logit_scaled", "platt_b"], ["logit"]),
        helper.make_node("Sigmoid", ["logit"], ["probability"]),
    ])
    graph.output.append(
        helper.make_tensor_value_info("probability", TensorProto.FLOAT, [None, 1]))
    onnx.save(model, "ranker_proba.onnx")

(use ``TensorProto.DOUBLE`` for a ``dtype="float64"`` model).
"""

import json

import numpy as np

from .._gbdt.common import NODE_DTYPE
from ._float32 import floor32

__all__ = ["model_bytes"]

# dtype -> (ai.onnx.ml opset, default-domain opset). The default domain is
# imported although the graph uses none of its operators so that users can
# append e.g. Sigmoid without touching the imports.
_OPSETS = {"float32": (3, 15), "float64": (5, 21)}


def model_bytes(ensemble, *, dtype="float32"):
    """The ensemble as a serialized ONNX model.

    Parameters
    ----------
    ensemble : TreeEnsemble
        The fitted model's trees.
    dtype : {"float32", "float64"}, default="float32"
        Element type of the input, thresholds, leaf values and output (see
        the module docstring for the operator each uses).

    Returns
    -------
    model : bytes
        A serialized ``onnx.ModelProto``.
    """
    if dtype not in _OPSETS:
        raise ValueError(f"format 'onnx': dtype must be 'float32' or 'float64'; got {dtype!r}.")
    try:
        import onnx
        from onnx import helper
    except ImportError as error:
        raise ImportError(
            "Exporting to ONNX needs the onnx package: pip install onnx"
        ) from error

    ml_opset, default_opset = _OPSETS[dtype]
    if dtype == "float32":
        element, node = onnx.TensorProto.FLOAT, _tree_ensemble_regressor(ensemble, helper)
    else:
        element, node = onnx.TensorProto.DOUBLE, _tree_ensemble(ensemble, helper)
    graph = helper.make_graph(
        [node],
        "sklearn_ltr_ranker",
        [helper.make_tensor_value_info("X", element, [None, ensemble.n_features])],
        [helper.make_tensor_value_info("score", element, [None, 1])],
    )
    from .. import __version__

    model = helper.make_model_gen_version(
        graph,
        opset_imports=[helper.make_opsetid("", default_opset),
                       helper.make_opsetid("ai.onnx.ml", ml_opset)],
        producer_name="sklearn-ltr",
        producer_version=__version__,
        doc_string=(
            f"Raw ranking score of a gradient-boosted ranker ({ensemble.objective or 'unknown'}"
            f" objective, {ensemble.n_trees} trees). A row goes left iff x <= threshold, NaN "
            "as nodes_missing_value_tracks_true says. A probability is sigmoid of the score."
        ),
    )
    helper.set_model_props(model, {
        "feature_names": json.dumps(ensemble.names()),
        "objective": ensemble.objective,
        "score": "raw score (predict); output 'score' of shape [N, 1]",
    })
    onnx.checker.check_model(model)
    return model.SerializeToString()


def _single_leaf(value):
    leaf = np.zeros(1, dtype=NODE_DTYPE)
    leaf["value"], leaf["is_leaf"], leaf["feature_idx"] = value, 1, -1
    leaf["left"] = leaf["right"] = -1
    return leaf


def _flat(trees):
    """All nodes of ``trees``, each node's tree and its tree's first node."""
    nodes = np.concatenate(trees)
    sizes = np.array([t.shape[0] for t in trees], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    tree_of_node = np.repeat(np.arange(len(trees), dtype=np.int64), sizes)
    return nodes, tree_of_node, starts


def _tree_ensemble_regressor(ensemble, helper):
    """``TreeEnsembleRegressor`` (ml opset 3): every node, leaves included,
    numbered within its tree as in our node arrays."""
    # The operator needs at least one node; a model without trees is its baseline.
    nodes, tree_of_node, starts = _flat(list(ensemble.trees()) or [_single_leaf(0.0)])
    leaf = nodes["is_leaf"] == 1
    node_ids = np.arange(nodes.shape[0]) - starts[tree_of_node]

    def on_splits(values):
        return np.where(leaf, 0, values).tolist()

    return helper.make_node(
        "TreeEnsembleRegressor", ["X"], ["score"], domain="ai.onnx.ml",
        n_targets=1, aggregate_function="SUM", post_transform="NONE",
        base_values=[float(ensemble.baseline)],
        nodes_treeids=tree_of_node.tolist(),
        nodes_nodeids=node_ids.tolist(),
        nodes_modes=np.where(leaf, "LEAF", "BRANCH_LEQ").tolist(),
        nodes_featureids=on_splits(nodes["feature_idx"]),
        nodes_values=on_splits(floor32(nodes["num_threshold"]).astype(np.float64)),
        nodes_truenodeids=on_splits(nodes["left"]),
        nodes_falsenodeids=on_splits(nodes["right"]),
        nodes_missing_value_tracks_true=on_splits(nodes["missing_go_to_left"]),
        target_treeids=tree_of_node[leaf].tolist(),
        target_nodeids=node_ids[leaf].tolist(),
        target_ids=[0] * int(leaf.sum()),
        target_weights=nodes["value"][leaf].tolist(),
    )


def _split_to_leaf(tree):
    """A one-leaf tree as a split whose both sides lead to the leaf: the
    opset 5 operator starts every tree at a split node."""
    split = _single_leaf(0.0)
    split["is_leaf"], split["feature_idx"], split["left"], split["right"] = 0, 0, 1, 1
    return np.concatenate([split, tree])


def _tree_ensemble(ensemble, helper):
    """``TreeEnsemble`` (ml opset 5): splits and leaves in separate lists, a
    child addressed by its position in its list plus a flag saying which."""
    from onnx import numpy_helper

    trees = list(ensemble.trees()) + [_single_leaf(ensemble.baseline)]
    nodes, tree_of_node, starts = _flat(
        [_split_to_leaf(t) if t.shape[0] == 1 else t for t in trees]
    )
    leaf = nodes["is_leaf"] == 1
    split = ~leaf
    position = np.where(leaf, np.cumsum(leaf) - 1, np.cumsum(split) - 1)
    split_start = starts[tree_of_node[split]]
    left, right = split_start + nodes["left"][split], split_start + nodes["right"][split]

    return helper.make_node(
        "TreeEnsemble", ["X"], ["score"], domain="ai.onnx.ml",
        n_targets=1, aggregate_function=1, post_transform=0,  # SUM, NONE
        tree_roots=position[starts].tolist(),
        nodes_featureids=nodes["feature_idx"][split].tolist(),
        nodes_modes=numpy_helper.from_array(np.zeros(int(split.sum()), np.uint8)),  # BRANCH_LEQ
        nodes_splits=numpy_helper.from_array(nodes["num_threshold"][split].astype(np.float64)),
        nodes_truenodeids=position[left].tolist(),
        nodes_trueleafs=leaf[left].astype(np.int64).tolist(),
        nodes_falsenodeids=position[right].tolist(),
        nodes_falseleafs=leaf[right].astype(np.int64).tolist(),
        nodes_missing_value_tracks_true=nodes["missing_go_to_left"][split].tolist(),
        leaf_targetids=[0] * int(leaf.sum()),
        leaf_weights=numpy_helper.from_array(nodes["value"][leaf].astype(np.float64)),
    )
