"""XGBoost's JSON model, as ``Booster.save_model("model.json")`` writes it.

XGBoost sends ``x`` left iff ``x < split_condition``, compares in float32
(it converts every input to float32 first) and sends missing values (NaN) to
the ``default_left`` side. For each of our thresholds ``t`` the exported
split condition is the float32 ``T`` with ``x < T`` exactly when ``x <= t``
for every float32 ``x`` (:func:`~sklearn_ltr.export._float32.strict_threshold32`),
so every float32 input takes our branch. A split whose threshold is ``+inf``
(every value left, only NaN right) has no such ``T``; it is written with its
children swapped and ``T`` the lowest finite float32, so every finite input
goes to our left child and NaN to our right one. XGBoost refuses infinite
inputs unless told they are missing.

Categorical splits are XGBoost's own (``split_type`` 1): its predictor sends
``x`` right iff ``int(x)`` is one of the split's ``categories``, and left if
``x`` is negative, not listed or at least 2**24 (NaN goes to the
``default_left`` side). The listed categories are the known categories of our
child that does not take missing values, written as XGBoost's right child,
and ``default_left`` is 1, so that XGBoost's left child is our missing side,
which takes every other value (:mod:`~sklearn_ltr.export._categorical`).
Categorical features are typed ``"c"`` when the model has feature names.
Feed the integer codes the ranker was fitted on, as numbers (a DMatrix of
floats needs no ``enable_categorical``); XGBoost truncates a fractional
value to an integer, which our model treats as missing. A split that lists
a category of 2**24 or more is refused: in float32 such codes are not all
distinct.

Leaf values, the baseline (``base_score``, a raw margin for the ``rank:ndcg``
objective) and the sums are float32 in XGBoost, so scores agree with ours to
float32 rounding (about 1e-7 relative per tree). ``sum_hessian`` holds our
training row counts (the cover XGBoost's ``pred_contribs`` uses), since our
trees keep no hessian sums; ``base_weights`` of a split is the count-weighted
mean of the leaves below it.
"""

import json

import numpy as np

from .._gbdt.ensemble import subtree_means
from ._categorical import check_float32_categories, listed_categories
from ._float32 import strict_threshold32

__all__ = ["booster", "model_json"]

_NO_PARENT = 2147483647
_LOWEST_FLOAT32 = float(np.finfo(np.float32).min)


def _floats(values):
    return [float(v) for v in np.asarray(values, dtype=np.float32)]


def xgboost_node_order(nodes):
    """Our node indices in XGBoost's numbering, and whether each split is
    written with its children swapped.

    XGBoost's predictor finds a right child at ``left + 1``, so nodes are
    numbered breadth first with each split's two children side by side. A
    split with an infinite threshold is swapped (see the module docstring),
    and so is a categorical split whose missing values go right (XGBoost's
    left child takes them).

    Returns
    -------
    order : ndarray of int64
        ``order[i]`` is our index of XGBoost's node ``i``.
    swapped : ndarray of bool
        Per our node: written with its children swapped.
    """
    categorical = nodes["is_categorical"] != 0
    swapped = (nodes["is_leaf"] == 0) & np.where(
        categorical, nodes["missing_go_to_left"] == 0, np.isposinf(nodes["num_threshold"]))
    order = [0]
    for k in order:  # grows while it is read: breadth first
        if not nodes["is_leaf"][k]:
            children = [int(nodes["left"][k]), int(nodes["right"][k])]
            order.extend(children[::-1] if swapped[k] else children)
    return np.asarray(order, dtype=np.int64), swapped


def _tree_json(tree_id, nodes, ensemble):
    order, swapped = xgboost_node_order(nodes)
    new_id = np.empty_like(order)
    new_id[order] = np.arange(order.shape[0])
    is_leaf = nodes["is_leaf"] != 0
    means = subtree_means(nodes, nodes["value"][is_leaf])
    nodes, swapped, means = nodes[order], swapped[order], means[order]
    is_leaf = nodes["is_leaf"] != 0
    categorical = ~is_leaf & (nodes["is_categorical"] != 0)
    n = nodes.shape[0]
    left = np.where(is_leaf, -1, new_id[nodes["left"]])
    right = np.where(is_leaf, -1, new_id[nodes["right"]])
    left[swapped], right[swapped] = right[swapped], left[swapped]
    default_left = np.where(is_leaf, 0, nodes["missing_go_to_left"]).astype(np.int64)
    default_left[swapped] = 1 - default_left[swapped]
    condition = np.where(is_leaf, nodes["value"], strict_threshold32(nodes["num_threshold"]))
    condition[swapped & ~categorical] = _LOWEST_FLOAT32
    condition[categorical] = 0.0
    # XGBoost's categorical splits: the listed categories of each, in node
    # order, concatenated; segments and sizes delimit them.
    listed = [listed_categories(ensemble, nodes[k]).astype(np.int64)
              for k in np.flatnonzero(categorical)]
    sizes = [c.shape[0] for c in listed]
    if 0 in sizes:
        # fit never makes one: the side without missing values has rows.
        raise ValueError(
            "format 'xgboost': XGBoost needs at least one category in a categorical split, "
            f"and a split of tree {tree_id} sends every category to the side of missing "
            "values. Export to 'lightgbm' or 'onnx'."
        )
    segments = np.cumsum([0] + sizes)[:-1]
    parents = np.full(n, _NO_PARENT, dtype=np.int64)
    splits = np.flatnonzero(~is_leaf)
    parents[left[splits]] = splits
    parents[right[splits]] = splits
    return {
        "base_weights": _floats(means),
        "categories": np.concatenate(listed).tolist() if listed else [],
        "categories_nodes": np.flatnonzero(categorical).tolist(),
        "categories_segments": segments.astype(np.int64).tolist(),
        "categories_sizes": sizes,
        "default_left": default_left.tolist(),
        "id": tree_id,
        "left_children": left.tolist(),
        "loss_changes": _floats(np.where(is_leaf, 0.0, nodes["gain"])),
        "parents": parents.tolist(),
        "right_children": right.tolist(),
        "split_conditions": _floats(condition),
        "split_indices": np.where(is_leaf, 0, ensemble.column_of(nodes["feature_idx"])).astype(
            np.int64).tolist(),
        "split_type": categorical.astype(np.int64).tolist(),
        "sum_hessian": _floats(nodes["count"]),
        "tree_param": {
            "num_deleted": "0",
            "num_feature": str(ensemble.n_features),
            "num_nodes": str(n),
            "size_leaf_vector": "1",
        },
    }


def model_dict(ensemble):
    """The model as the dict XGBoost's JSON model file holds."""
    check_float32_categories(
        ensemble, "xgboost", "Re-encode those features with smaller codes (e.g. 0, 1, 2, ...), "
        "or export to 'lightgbm' or to 'onnx' with dtype='float64'.")
    n_trees = ensemble.n_trees
    names = [] if ensemble.feature_names is None else list(ensemble.feature_names)
    types = np.where(ensemble.categorical_columns, "c", "float")
    trees = [_tree_json(t, nodes, ensemble) for t, nodes in enumerate(ensemble.trees())]
    return {
        "learner": {
            "attributes": {},
            # Without names XGBoost takes plain arrays, as for a model fitted
            # on one; with names it checks a DMatrix's names against them.
            "feature_names": names,
            "feature_types": types.tolist() if names else [],
            "gradient_booster": {
                "model": {
                    "gbtree_model_param": {"num_parallel_tree": "1", "num_trees": str(n_trees)},
                    "iteration_indptr": list(range(n_trees + 1)),
                    "tree_info": [0] * n_trees,
                    "trees": trees,
                },
                "name": "gbtree",
            },
            "learner_model_param": {
                "base_score": f"[{float(np.float32(ensemble.baseline))!r}]",
                "boost_from_average": "0",
                "num_class": "0",
                "num_feature": str(ensemble.n_features),
                "num_target": "1",
            },
            "objective": {"name": "rank:ndcg"},
        },
        "version": [2, 1, 0],
    }


def model_json(ensemble):
    """The model as XGBoost's JSON model text.

    Parameters
    ----------
    ensemble : TreeEnsemble

    Returns
    -------
    str
    """
    return json.dumps(model_dict(ensemble), separators=(",", ":"))


def booster(ensemble):
    """An ``xgboost.Booster`` of the model (XGBoost must be installed)."""
    try:
        import xgboost
    except ImportError:
        raise ImportError(
            "to_xgboost needs XGBoost: pip install xgboost-cpu (export_model(..., "
            "format='xgboost') writes the same model without it)."
        ) from None
    result = xgboost.Booster()
    result.load_model(bytearray(model_json(ensemble).encode("utf-8")))
    return result
