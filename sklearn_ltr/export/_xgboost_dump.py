"""The Elasticsearch/OpenSearch LTR plugin's ``model/xgboost+json`` definition.

The plugin reads XGBoost's JSON tree dump (``XGBoostJsonParser``, in
o19s/elasticsearch-learning-to-rank and
opensearch-project/opensearch-learning-to-rank-base, file
``src/main/java/com/o19s/es/ltr/ranker/parser/XGBoostJsonParser.java``):
a JSON array of trees (or an object whose ``splits`` holds them, with an
optional ``objective``), each node with ``nodeid``; a split with ``depth``,
``split`` (a feature *name* of the feature set, looked up with
``FeatureSet.featureOrdinal``), ``split_condition``, ``yes``, ``no``,
``missing`` and ``children`` = [yes child, no child]; a leaf with ``leaf``.
Numbers are read as Java floats. The trees are scored by
``NaiveAdditiveDecisionTree`` (``ranker/dectree/NaiveAdditiveDecisionTree.java``,
``Split.eval`` and ``score``): at a split a NaN feature goes to the ``missing``
child, else to ``yes`` iff ``split_condition > x`` (``x < T``, in float32);
the tree outputs are summed in float32 in tree order, each weighted by 1.

Written here: a plain array (every plugin version reads it; no objective, so
the output is our raw score). Each threshold is
:func:`~sklearn_ltr.export._float32.strict_threshold32` of ours, so every
float32 input takes our branch. A split whose threshold is ``+inf`` (every
value left, only NaN right) has no such ``T``: it is written with its
children swapped (``yes`` is our right child) and ``split_condition``
``-1e39``, which Java reads as ``-Infinity``, so that every value, infinite
ones included, fails ``x < T`` and goes to our left child. A threshold whose
``T`` is ``+inf`` is written ``1e39`` likewise. The baseline is a first tree
that is a single leaf. Leaf values and the sum are float32, so scores agree
with ours to float32 rounding (about 1e-7 relative per tree).

Missing values: a feature that does not match is NaN, routed by ``missing``,
in o19s plugin releases from v1.5.9 (``SparseFeatureVector``, commit d2bbe8b,
"Issue 481") and OpenSearch LTR from 3.7 (PR #379; 3.2 to 3.6 made it NaN but
sent it to ``no``); ``missing`` then gets our learned side, and scores equal
ours on NaN exactly. Older releases put 0.0 for a missing feature, as does
OpenSearch's ``missing_as_zero`` (3.8): for those pass ``missing_as=0.0``;
``missing`` then points where our model sends the value ``missing_as``, so
the exported model scores a missing value as ours scores ``missing_as``
under either behaviour.

The parser knows only threshold splits, so a model with categorical splits
is refused.
"""

import json

import numpy as np

from ._categorical import refuse_categorical_splits
from ._float32 import strict_threshold32
from ._walk import check_missing_as, fold_tree

__all__ = ["plugin_definition"]

# JSON has no infinity; Java reads a literal beyond the float range as one.
_BEYOND_FLOAT32 = 1e39


def _number(value):
    with np.errstate(over="ignore"):
        v = float(np.float32(value))
    return float(np.copysign(_BEYOND_FLOAT32, v)) if np.isinf(v) else v


def plugin_definition(ensemble, *, missing_as=None):
    """The model as the LTR plugin's ``model/xgboost+json`` definition.

    Parameters
    ----------
    ensemble : TreeEnsemble
    missing_as : float, default=None
        None: a missing feature (NaN) goes to our learned side at each split.
        A value ``v``: it goes where our model sends ``v``, for plugin
        versions that put ``v`` (0.0) in place of a missing feature.

    Returns
    -------
    str
        JSON: an array of trees, the first a single leaf holding the
        baseline.
    """
    refuse_categorical_splits(ensemble, "xgboost-dump")
    v = check_missing_as(missing_as, "xgboost-dump")
    names = ensemble.names()

    def leaf(row, node, depth):
        return {"nodeid": node, "leaf": _number(row["value"])}

    def split(row, node, depth, left, right):
        t = row["num_threshold"]
        nan_left = bool(row["missing_go_to_left"]) if v is None else bool(v <= t)
        if np.isposinf(t):
            yes, no, condition = right, left, -_BEYOND_FLOAT32
        else:
            yes, no, condition = left, right, _number(strict_threshold32(t))
        return {
            "nodeid": node, "depth": depth, "split": names[ensemble.column_of(row["feature_idx"])],
            "split_condition": condition, "yes": yes["nodeid"], "no": no["nodeid"],
            "missing": (left if nan_left else right)["nodeid"], "children": [yes, no],
        }

    trees = [{"nodeid": 0, "leaf": _number(ensemble.baseline)}]
    trees += [fold_tree(tree, leaf, split) for tree in ensemble.trees()]
    return json.dumps(trees, allow_nan=False)
