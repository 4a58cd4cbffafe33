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

Categorical splits send the known categories of our child that does not
take missing values (the listed side) to that child, and every other value
to our other child, the missing side (:mod:`~sklearn_ltr.export._categorical`).

- ``dtype="float32"``: ``TreeEnsembleRegressor`` has no set test, so a
  categorical split becomes a chain of ``BRANCH_EQ`` nodes, one per listed
  category, each sending that category to the listed child; the last one's
  false branch leads to the missing side, which so takes NaN (``NaN == c``
  is false and ``nodes_missing_value_tracks_true`` is 0), negative,
  fractional, unseen and rare categories. The split's node id is the first
  test's; the others are numbered after the tree's nodes. Every float32
  input takes our branch. Category codes of 2**24 and more are not all
  distinct in float32: a split that lists one is refused.
- ``dtype="float64"``: one ``BRANCH_MEMBER`` node per split (opset 5's set
  test; onnxruntime does not accept the chain there, whose listed child has
  several parents), true branch to the listed child, with the listed
  categories in ``membership_values``. Integer values (codes, unseen ones
  and negative ones) and NaN take our branch. onnxruntime 1.32 tests a set
  with a code above 30 or with 31 codes or more on the integer part of the
  input, so there a value that is not an integer code may take the branch
  of its integer part.

Feed the integer codes the ranker was fitted on.

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
from ._categorical import check_float32_categories, listed_categories
from ._float32 import floor32

__all__ = ["model_bytes"]

# nodes_modes of ai.onnx.ml opset 5 (opset 3 spells them out).
_BRANCH_LEQ, _BRANCH_EQ, _BRANCH_MEMBER = 0, 4, 6

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

    if dtype == "float32":
        check_float32_categories(ensemble, "onnx", "Export with dtype='float64', which holds "
                                 "them exactly, or re-encode them with smaller codes.")
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
    from .._version import __version__

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


def _equality_chains(tree, ensemble):
    """One tree with each categorical split turned into a chain of equality
    tests (see the module docstring), as NODE_DTYPE records for the
    builders: at a node with ``is_categorical`` set a row goes to ``left``
    iff ``x == num_threshold``, else to ``right``, NaN included. Each chain
    starts at its split's node; its other nodes are appended to the tree, so
    every node keeps its index."""
    categorical = np.flatnonzero((tree["is_leaf"] == 0) & (tree["is_categorical"] != 0))
    if categorical.size == 0:
        return tree
    tree = tree.copy()
    appended = []
    for k in categorical:
        row = tree[k].copy()
        listed_child, missing_child = row["left"], row["right"]
        if row["missing_go_to_left"]:
            listed_child, missing_child = missing_child, listed_child
        values = listed_categories(ensemble, row)
        if values.size == 0:
            # NaN equals nothing: every value goes to the missing side.
            values = np.array([np.nan])
        first_appended = tree.shape[0] + len(appended)
        ids = [k] + list(range(first_appended, first_appended + values.size - 1))
        for i, value in enumerate(values):
            test = row.copy()
            test["num_threshold"] = value
            test["missing_go_to_left"] = 0
            test["left"] = listed_child
            test["right"] = ids[i + 1] if i + 1 < len(ids) else missing_child
            if i == 0:
                tree[k] = test
            else:
                appended.append(test)
    return np.concatenate([tree, np.array(appended, dtype=NODE_DTYPE)])


def _flat(trees):
    """All nodes of ``trees``, each node's tree and its tree's first node."""
    nodes = np.concatenate(trees)
    sizes = np.array([t.shape[0] for t in trees], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    tree_of_node = np.repeat(np.arange(len(trees), dtype=np.int64), sizes)
    return nodes, tree_of_node, starts


def _tree_ensemble_regressor(ensemble, helper):
    """``TreeEnsembleRegressor`` (ml opset 3): every node, leaves included,
    numbered within its tree as in our node arrays (chains' nodes after them)."""
    # The operator needs at least one node; a model without trees is its baseline.
    trees = [_equality_chains(t, ensemble) for t in ensemble.trees()]
    nodes, tree_of_node, starts = _flat(trees or [_single_leaf(0.0)])
    leaf = nodes["is_leaf"] == 1
    equal = ~leaf & (nodes["is_categorical"] != 0)
    node_ids = np.arange(nodes.shape[0]) - starts[tree_of_node]
    # Category codes below 2**24 (checked) are exact float32 values.
    values = np.where(equal, nodes["num_threshold"], floor32(nodes["num_threshold"]))

    def on_splits(values):
        return np.where(leaf, 0, values).tolist()

    return helper.make_node(
        "TreeEnsembleRegressor", ["X"], ["score"], domain="ai.onnx.ml",
        n_targets=1, aggregate_function="SUM", post_transform="NONE",
        base_values=[float(ensemble.baseline)],
        nodes_treeids=tree_of_node.tolist(),
        nodes_nodeids=node_ids.tolist(),
        nodes_modes=np.where(leaf, "LEAF", np.where(equal, "BRANCH_EQ", "BRANCH_LEQ")).tolist(),
        nodes_featureids=on_splits(ensemble.column_of(nodes["feature_idx"])),
        nodes_values=on_splits(values.astype(np.float64)),
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
    child addressed by its position in its list plus a flag saying which.
    A categorical split is one ``BRANCH_MEMBER`` node whose true branch is
    our child without missing values."""
    from onnx import numpy_helper

    trees = list(ensemble.trees()) + [_single_leaf(ensemble.baseline)]
    nodes, tree_of_node, starts = _flat(
        [_split_to_leaf(t) if t.shape[0] == 1 else t for t in trees]
    )
    leaf = nodes["is_leaf"] == 1
    split = ~leaf
    position = np.where(leaf, np.cumsum(leaf) - 1, np.cumsum(split) - 1)
    splits = nodes[split]
    categorical = splits["is_categorical"] != 0
    swap = categorical & (splits["missing_go_to_left"] != 0)
    split_start = starts[tree_of_node[split]]
    true = split_start + np.where(swap, splits["right"], splits["left"])
    false = split_start + np.where(swap, splits["left"], splits["right"])
    modes = np.where(categorical, _BRANCH_MEMBER, _BRANCH_LEQ)
    thresholds = splits["num_threshold"].astype(np.float64)
    members = []
    for k in np.flatnonzero(categorical):
        listed = listed_categories(ensemble, splits[k])
        if listed.size:
            members += [*listed, np.nan]  # each node's set ends with NaN
        else:
            # No member: NaN equals nothing, so every value goes to the missing side.
            modes[k], thresholds[k] = _BRANCH_EQ, np.nan
    sets = {}
    if members:
        sets["membership_values"] = numpy_helper.from_array(np.array(members, dtype=np.float64))

    return helper.make_node(
        "TreeEnsemble", ["X"], ["score"], domain="ai.onnx.ml",
        n_targets=1, aggregate_function=1, post_transform=0,  # SUM, NONE
        tree_roots=position[starts].tolist(),
        nodes_featureids=ensemble.column_of(splits["feature_idx"]).tolist(),
        nodes_modes=numpy_helper.from_array(modes.astype(np.uint8)),
        nodes_splits=numpy_helper.from_array(thresholds),
        nodes_truenodeids=position[true].tolist(),
        nodes_trueleafs=leaf[true].astype(np.int64).tolist(),
        nodes_falsenodeids=position[false].tolist(),
        nodes_falseleafs=leaf[false].astype(np.int64).tolist(),
        nodes_missing_value_tracks_true=np.where(
            categorical, 0, splits["missing_go_to_left"]).tolist(),
        leaf_targetids=[0] * int(leaf.sum()),
        leaf_weights=numpy_helper.from_array(nodes["value"][leaf].astype(np.float64)),
        **sets,
    )
