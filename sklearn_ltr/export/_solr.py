"""Solr's ``MultipleAdditiveTreesModel`` JSON (the LTR module's model store).

Solr (apache/solr, file
``solr/modules/ltr/src/java/org/apache/solr/ltr/model/MultipleAdditiveTreesModel.java``)
reads ``{"class", "name", "features": [{"name"}], "params": {"trees":
[{"weight", "root"}]}}``, each node either ``{"value"}`` or ``{"feature",
"threshold", "left", "right"}`` plus, since Solr 9.2 (SOLR-16596),
``"missing": "left" | "right"``. Every key is applied by a setter
(``SolrPluginUtils.invokeSetters``, which rejects unknown keys); numbers are
strings read by ``Float.parseFloat``. ``RegressionTreeNode.setThreshold``
stores ``threshold + NODE_SPLIT_SLACK`` with the slack ``1e-6f``, in float
arithmetic, and ``scoreNode`` sends a row left iff ``x <= stored`` in
float32. ``RegressionTree.score`` is ``weight * value`` and
``MultipleAdditiveTreesModel.score`` sums the trees in float32, in order. A
feature is looked up by name in the model's ``features`` list, whose order is
that of the feature vector; a feature a document lacks gets the feature's
``defaultValue`` (0.0 unless the feature store says otherwise;
``LTRScoringQuery.ModelWeight.makeNormalizedFeaturesAndScore``).

Thresholds. A float32 input takes our branch iff the stored threshold is
``floor32(t)`` (:func:`~sklearn_ltr.export._float32.floor32`), so the file
holds the float32 ``S`` with ``float32(S + 1e-6f) == floor32(t)``
(:func:`slack_compensated`). Such an ``S`` exists for nearly every
threshold; the sum rounds past the others: most of those of magnitude below
``1e-6``, about half of those between ``1e-6`` and ``4e-6`` in magnitude,
and some within ``1e-6`` above a negative power of two of magnitude at most
32 (``-32`` itself among them). There the nearest reachable threshold is
written: within ``1.2e-13`` of ``floor32(t)`` for the small ones, one
float32 step from it for the others; the float32 inputs between the two
take the other branch, and a UserWarning gives how many thresholds are
affected and the largest distance. Of the two nearest, the one that sends
0.0 our way is written: for a threshold between 0 and a negative value
closer to 0 than ``1.2e-13``, that is the reachable threshold below 0, not
0 itself, so 0.0 goes right as in our model and the negative values above
``-1.2e-13`` go right too.

Missing values. If the model learned where missing values go, the file
gets ``"isNullSameAsZero": false`` and our side as ``missing`` at every
split (``scoreNodeWithNullSupport``: NaN fails both ``<=`` and ``>`` and
follows ``missing``); for missing values to be NaN, each feature that can
be missing needs ``"defaultValue": "NaN"`` in the feature store, and Solr
must be 9.2 or later (earlier ones reject the file). With ``missing_as=v``
the file is the plain form every Solr reads and a missing feature scores as
our model scores ``v``, which must then be the features' ``defaultValue``
(0.0 by default). The baseline is a first tree that is a single leaf; tree
weights are 1. Solr's nodes are thresholds only: a model with categorical
splits is refused.
"""

import json
import warnings

import numpy as np

from ._categorical import refuse_categorical_splits
from ._float32 import floor32
from ._walk import check_missing_as, fold_tree, java_float, learned_missing_features

__all__ = ["model_json", "slack_compensated", "NODE_SPLIT_SLACK"]

NODE_SPLIT_SLACK = np.float32(1e-6)
_CLASS = "org.apache.solr.ltr.model.MultipleAdditiveTreesModel"


def _ordered(f):
    """Float32 as integers in the floats' order (-0.0 and 0.0 are one)."""
    bits = np.asarray(f, dtype=np.float32).view(np.int32).astype(np.int64)
    return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)


def _float(k):
    """The float32 of each ordered integer (inverse of :func:`_ordered`)."""
    bits = np.where(k < 0, (-k) | 0x80000000, k)
    return bits.astype(np.uint32).view(np.float32)


def _stored(k):
    with np.errstate(over="ignore"):
        return _float(k) + NODE_SPLIT_SLACK


def slack_compensated(t):
    """Float32 thresholds that Solr turns into ``floor32(t)``.

    Parameters
    ----------
    t : ndarray of float64
        Our thresholds.

    Returns
    -------
    S : ndarray of float32
        ``float32(S + 1e-6f) == floor32(t)`` where such an ``S`` exists,
        else the ``S`` whose stored threshold is nearest to ``floor32(t)``
        among those that send 0.0 the way ``t`` does.
    gap : ndarray of float64
        Distance from the stored threshold to ``floor32(t)``: 0 where exact;
        the float32 inputs within it take the other branch.
    """
    target = floor32(np.atleast_1d(np.asarray(t, dtype=np.float64)))
    lowest = _ordered(np.float32(-np.inf))
    # float32(S + slack) never decreases as S grows, so the S that reach the
    # target are consecutive floats: bisect for the first one at or above.
    lo = np.full(target.shape, lowest, dtype=np.int64)
    hi = np.full(target.shape, _ordered(np.float32(np.inf)), dtype=np.int64)
    while np.any(lo < hi):
        mid = (lo + hi) // 2
        reached = _stored(mid) >= target
        hi, lo = np.where(reached, mid, hi), np.where(reached, lo, mid + 1)
    candidates = [hi, np.maximum(hi - 1, lowest)]
    stored = [_stored(k) for k in candidates]
    with np.errstate(invalid="ignore"):  # inf - inf where both are inf
        gaps = [np.nan_to_num(np.abs(v.astype(np.float64) - target), nan=0.0) for v in stored]
    # 0.0 goes left in Solr iff 0 <= stored, in our model iff 0 <= t. Where
    # only one of the two candidates sends it our way (a threshold between a
    # tiny negative value and 0, whose nearest reachable threshold is 0
    # itself), that one is taken though it is farther: 0.0 is the commonest
    # value of many features, and the inputs it costs lie within 1.2e-13
    # below 0.
    zero_ours = [(v >= 0) == (target >= 0) for v in stored]
    below = np.where(zero_ours[0] != zero_ours[1], zero_ours[1], gaps[1] < gaps[0])
    return _float(np.where(below, candidates[1], candidates[0])), np.where(below, *gaps[::-1])


def model_json(ensemble, *, name="sklearn-ltr-model", missing_as=None):
    """The model as Solr's ``MultipleAdditiveTreesModel`` JSON.

    Parameters
    ----------
    ensemble : TreeEnsemble
    name : str, default="sklearn-ltr-model"
        The model's name in Solr's model store.
    missing_as : float, default=None
        None: missing values go to our learned sides (Solr 9.2+, features
        with ``"defaultValue": "NaN"``). A value ``v``: the plain form, in
        which a missing feature is its ``defaultValue``, which must be ``v``.

    Returns
    -------
    str

    Warns
    -----
    UserWarning
        If some thresholds cannot survive Solr's slack exactly (the message
        gives how many).
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"format 'solr': name must be a non-empty string; got {name!r}.")
    refuse_categorical_splits(ensemble, "solr")
    v = check_missing_as(missing_as, "solr")
    route_missing = v is None and bool(learned_missing_features(ensemble))
    names = ensemble.names()
    splits = ensemble.splits
    stored, gap = slack_compensated(ensemble.nodes["num_threshold"][splits])
    thresholds = np.zeros(ensemble.nodes.shape[0], dtype=np.float32)
    thresholds[splits] = stored
    if gap.any():
        warnings.warn(
            f"format 'solr': {np.count_nonzero(gap)} of {gap.size} thresholds cannot be "
            f"written so that Solr's added slack of 1e-6 gives back the exact threshold; "
            f"float32 inputs within {gap.max():.3g} of those thresholds may take the other "
            f"branch.", UserWarning, stacklevel=3,  # the caller of export_model
        )

    def leaf(row, node, depth):
        return {"value": java_float(row["value"])}

    def root(start, tree):
        def split(row, node, depth, left, right):
            out = {"feature": names[ensemble.column_of(row["feature_idx"])],
                   "threshold": java_float(thresholds[start + node])}
            if route_missing:
                out["missing"] = "left" if row["missing_go_to_left"] else "right"
            return dict(out, left=left, right=right)

        return fold_tree(tree, leaf, split)

    trees = [{"weight": "1.0", "root": {"value": java_float(ensemble.baseline)}}]
    trees += [{"weight": "1.0", "root": root(start, tree)}
              for start, tree in zip(ensemble.tree_starts, ensemble.trees())]
    params = {"trees": trees}
    if route_missing:
        params["isNullSameAsZero"] = False
    model = {"class": _CLASS, "name": name, "features": [{"name": n} for n in names],
             "params": params}
    return json.dumps(model, indent=1, allow_nan=False)
