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
    split with an infinite threshold is swapped (see the module docstring).

    Returns
    -------
    order : ndarray of int64
        ``order[i]`` is our index of XGBoost's node ``i``.
    swapped : ndarray of bool
        Per our node: written with its children swapped.
    """
    swapped = (nodes["is_leaf"] == 0) & np.isposinf(nodes["num_threshold"])
    order = [0]
    for k in order:  # grows while it is read: breadth first
        if not nodes["is_leaf"][k]:
            children = [int(nodes["left"][k]), int(nodes["right"][k])]
            order.extend(children[::-1] if swapped[k] else children)
    return np.asarray(order, dtype=np.int64), swapped


def _tree_json(tree_id, nodes, n_features):
    order, swapped = xgboost_node_order(nodes)
    new_id = np.empty_like(order)
    new_id[order] = np.arange(order.shape[0])
    is_leaf = nodes["is_leaf"] != 0
    means = subtree_means(nodes, nodes["value"][is_leaf])
    nodes, swapped, means = nodes[order], swapped[order], means[order]
    is_leaf = nodes["is_leaf"] != 0
    n = nodes.shape[0]
    left = np.where(is_leaf, -1, new_id[nodes["left"]])
    right = np.where(is_leaf, -1, new_id[nodes["right"]])
    left[swapped], right[swapped] = right[swapped], left[swapped]
    default_left = np.where(is_leaf, 0, nodes["missing_go_to_left"]).astype(np.int64)
    default_left[swapped] = 1 - default_left[swapped]
    condition = np.where(is_leaf, nodes["value"], strict_threshold32(nodes["num_threshold"]))
    condition[swapped] = _LOWEST_FLOAT32
    parents = np.full(n, _NO_PARENT, dtype=np.int64)
    splits = np.flatnonzero(~is_leaf)
    parents[left[splits]] = splits
    parents[right[splits]] = splits
    return {
        "base_weights": _floats(means),
        "categories": [],
        "categories_nodes": [],
        "categories_segments": [],
        "categories_sizes": [],
        "default_left": default_left.tolist(),
        "id": tree_id,
        "left_children": left.tolist(),
        "loss_changes": _floats(np.where(is_leaf, 0.0, nodes["gain"])),
        "parents": parents.tolist(),
        "right_children": right.tolist(),
        "split_conditions": _floats(condition),
        "split_indices": np.where(is_leaf, 0, nodes["feature_idx"]).astype(np.int64).tolist(),
        "split_type": [0] * n,
        "sum_hessian": _floats(nodes["count"]),
        "tree_param": {
            "num_deleted": "0",
            "num_feature": str(n_features),
            "num_nodes": str(n),
            "size_leaf_vector": "1",
        },
    }


def model_dict(ensemble):
    """The model as the dict XGBoost's JSON model file holds."""
    n_trees = ensemble.n_trees
    names = [] if ensemble.feature_names is None else list(ensemble.feature_names)
    trees = [_tree_json(t, nodes, ensemble.n_features) for t, nodes in enumerate(ensemble.trees())]
    return {
        "learner": {
            "attributes": {},
            # Without names XGBoost takes plain arrays, as for a model fitted
            # on one; with names it checks a DMatrix's names against them.
            "feature_names": names,
            "feature_types": ["float"] * len(names),
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
