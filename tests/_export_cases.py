"""Models and test rows shared by the export and inspection tests.

Every ranker is fitted on data with missing values in several columns, and
the test rows put each split's feature exactly at its threshold, one float
above and below, at NaN and at +-inf, so that an exported model that compares
the wrong way (``<`` for ``<=``, float32 for float64) or routes missing
values elsewhere takes another branch on some row.
"""

import functools

import numpy as np

from sklearn_ltr import CalibratedRanker, LambdaMARTRanker, ListNetRanker, XENDCGRanker
from sklearn_ltr.datasets import make_ranking
from sklearn_ltr.export._float32 import floor32

N_FEATURES = 12
COLUMNS_WITH_NAN = (0, 3, 7)
RANKERS = {
    "LambdaMARTRanker": LambdaMARTRanker,
    "XENDCGRanker": XENDCGRanker,
    "ListNetRanker": ListNetRanker,
    "CalibratedRanker": CalibratedRanker,
}


@functools.lru_cache(maxsize=None)
def training_data():
    """Features with NaN in COLUMNS_WITH_NAN (15% of rows each), labels, qid."""
    X, y, qid = make_ranking(
        n_queries=80, docs_per_query=30, n_features=N_FEATURES, random_state=0
    )
    rng = np.random.default_rng(1)
    for column in COLUMNS_WITH_NAN:
        X[rng.random(X.shape[0]) < 0.15, column] = np.nan
    return X, y, qid


@functools.lru_cache(maxsize=None)
def fitted(name, n_estimators=30):
    """A fitted ranker of the named class (cached: treat it as read-only)."""
    X, y, qid = training_data()
    params = dict(n_estimators=n_estimators, early_stopping=False, random_state=0)
    if name == "CalibratedRanker":
        return CalibratedRanker(**params).fit(X, (y >= 2).astype(float), qid=qid)
    return RANKERS[name](**params).fit(X, y, qid=qid)


def _rows_reaching_splits(ensemble, X_base):
    """One row per split node that reaches it: a base row whose features on
    the node's path are moved inside the path's intervals where needed.

    Returns the rows and the split nodes' features and thresholds."""
    rows, features, thresholds = [], [], []
    for t, nodes in enumerate(ensemble.trees()):
        # (node, lower bounds (exclusive), upper bounds (inclusive)) per feature
        stack = [(0, np.full(ensemble.n_features, -np.inf), np.full(ensemble.n_features, np.inf))]
        while stack:
            k, lo, hi = stack.pop()
            node = nodes[k]
            if node["is_leaf"]:
                continue
            row = X_base[len(rows) % X_base.shape[0]].copy()
            outside = np.isnan(row) | (row <= lo) | (row > hi)
            # Inside (lo, hi]: hi itself when finite, else just above lo.
            inside = np.where(np.isfinite(hi), hi, np.nextafter(lo, np.inf))
            inside = np.where(np.isneginf(lo) & np.isposinf(hi), 0.0, inside)
            row[outside] = inside[outside]
            rows.append(row)
            f, thr = node["feature_idx"], node["num_threshold"]
            features.append(f)
            thresholds.append(thr)
            left_hi = hi.copy()
            left_hi[f] = min(hi[f], thr)
            right_lo = lo.copy()
            right_lo[f] = max(lo[f], thr)
            stack.append((node["left"], lo, left_hi))
            stack.append((node["right"], right_lo, hi))
    return np.array(rows), np.array(features), np.array(thresholds)


def edge_rows(ensemble, X_base, *, float32=False):
    """Rows that reach every split node with the split's feature at and
    around the threshold, at NaN and at +-inf.

    Parameters
    ----------
    ensemble : TreeEnsemble
        The model whose splits the rows probe.
    X_base : ndarray of shape (n, n_features)
        Rows the probes start from (cycled); columns off a probe's path keep
        their values, so the other trees see ordinary rows.
    float32 : bool, default=False
        If True, every value is a float32 (the probes are ``floor32(t)`` and
        its float32 neighbours, and all values are rounded to float32), for
        engines that compare in float32.

    Returns
    -------
    X : ndarray of shape (n_rows, n_features), dtype float64
    """
    reaching, features, thresholds = _rows_reaching_splits(ensemble, X_base)
    if float32:
        t32 = floor32(thresholds)
        with np.errstate(over="ignore"):
            probes = [
                t32,
                np.nextafter(t32, np.float32(np.inf)),
                np.nextafter(t32, np.float32(-np.inf)),
                thresholds.astype(np.float32),
            ]
    else:
        probes = [thresholds, np.nextafter(thresholds, np.inf), np.nextafter(thresholds, -np.inf)]
    n = features.shape[0]
    probes += [np.full(n, v) for v in (np.nan, np.inf, -np.inf)]
    rows = []
    for values in probes:
        probe = reaching.copy()
        probe[np.arange(n), features] = np.asarray(values, dtype=np.float64)
        rows.append(probe)
    X = np.vstack(rows + [reaching, X_base])
    if float32:
        with np.errstate(over="ignore"):
            X = X.astype(np.float32).astype(np.float64)
    return X


def probe_rows(name, *, float32=False):
    """The edge rows of the named fitted ranker, on held-out base rows."""
    X_base, _, _ = make_ranking(
        n_queries=10, docs_per_query=20, n_features=N_FEATURES, random_state=7
    )
    rng = np.random.default_rng(2)
    for column in COLUMNS_WITH_NAN:
        X_base[rng.random(X_base.shape[0]) < 0.15, column] = np.nan
    return edge_rows(fitted(name)._tree_ensemble(), X_base, float32=float32)
