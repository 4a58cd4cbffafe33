"""Models and test rows shared by the export and inspection tests.

Every ranker is fitted on data with missing values in several columns, and
the test rows put each split's feature exactly at its threshold, one float
above and below, at NaN, at +-inf and at values within 1e-30 of zero, so
that an exported model that compares the wrong way (``<`` for ``<=``,
float32 for float64), routes missing values elsewhere or reads tiny values
as 0 (LightGBM) takes another branch on some row. One column is zero in
40% of the rows, so that some splits separate zero from the rest.
"""

import functools

import numpy as np
import pytest

import conftest
from sklearn_ltr import CalibratedRanker
from sklearn_ltr._gbdt.binning import ZERO_BAND
from sklearn_ltr._gbdt.common import NODE_DTYPE, bins_of, bitset_of
from sklearn_ltr._gbdt.ensemble import TreeEnsemble
from sklearn_ltr.datasets import make_ranking
from sklearn_ltr.export._float32 import floor32
from sklearn_ltr.export._solr import model_json, slack_compensated

N_FEATURES = 12
COLUMNS_WITH_NAN = (0, 3, 7)
MOSTLY_ZERO_COLUMN = 2
# Values at and around LightGBM's band of values it reads as 0, both signs.
NEAR_ZERO = (-1e-30, -ZERO_BAND, -1e-36, -1e-40, -0.0, 0.0, 1e-40, 1e-36, ZERO_BAND, 1e-30)
# Every ranker class by name (conftest takes them from the registry).
RANKERS = {cls.__name__: cls for cls in conftest.RANKERS}


@functools.lru_cache(maxsize=None)
def training_data():
    """Features with NaN in COLUMNS_WITH_NAN (15% of rows each), labels, qid."""
    X, y, qid = make_ranking(
        n_queries=80, docs_per_query=30, n_features=N_FEATURES, random_state=0
    )
    rng = np.random.default_rng(1)
    for column in COLUMNS_WITH_NAN:
        X[rng.random(X.shape[0]) < 0.15, column] = np.nan
    X[rng.random(X.shape[0]) < 0.4, MOSTLY_ZERO_COLUMN] = 0.0
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
    """One row per split node that reaches it: a base row whose columns on
    the node's path are moved inside the path's intervals (for a
    categorical column, into the path's set of categories, or to NaN) where
    needed.

    A categorical column may be split on through several features, each
    with a block of the column's categories; a value outside the block
    (another block's category, or one the column does not know) takes the
    missing side.

    Returns the rows and the split nodes' columns and thresholds (NaN for
    categorical splits)."""
    rows, columns, thresholds = [], [], []
    is_categorical = ensemble.categorical_columns
    known = {c: ensemble.column_categories(c) for c in np.flatnonzero(is_categorical)}
    for t, nodes in enumerate(ensemble.trees()):
        # (node, lower bounds (exclusive), upper bounds (inclusive) per
        # column, {categorical column: (known categories allowed, unknown
        # values allowed)})
        stack = [(0, np.full(ensemble.n_features, -np.inf), np.full(ensemble.n_features, np.inf),
                  {})]
        while stack:
            k, lo, hi, allowed = stack.pop()
            node = nodes[k]
            if node["is_leaf"]:
                continue
            row = X_base[len(rows) % X_base.shape[0]].copy()
            outside = (np.isnan(row) | (row <= lo) | (row > hi)) & ~is_categorical
            # Inside (lo, hi]: hi itself when finite, else just above lo.
            inside = np.where(np.isfinite(hi), hi, np.nextafter(lo, np.inf))
            inside = np.where(np.isneginf(lo) & np.isposinf(hi), 0.0, inside)
            row[outside] = inside[outside]
            for c, (categories, unknown_ok) in allowed.items():
                if not (np.isin(row[c], list(categories))
                        or (unknown_ok and not np.isin(row[c], known[c]))):
                    row[c] = min(categories) if categories else np.nan
            rows.append(row)
            f, thr = node["feature_idx"], node["num_threshold"]
            c = int(ensemble.column_of(f))
            columns.append(c)
            thresholds.append(thr)
            if node["is_categorical"]:
                categories, unknown_ok = allowed.get(c, (set(known[c]), True))
                block = set(ensemble.categories[f])
                left = set(ensemble.categories[f][bins_of(node["left_categories"])])
                missing = set(known[c]) - block  # other blocks' categories
                nan_left = bool(node["missing_go_to_left"])
                sides = [(node["left"], categories & (left | (missing if nan_left else set())),
                          unknown_ok and nan_left),
                         (node["right"], categories & ((block - left)
                                                       | (set() if nan_left else missing)),
                          unknown_ok and not nan_left)]
                for child, child_categories, child_unknown_ok in sides:
                    if child_categories or child_unknown_ok:  # else no row reaches it
                        stack.append((child, lo, hi,
                                      {**allowed, c: (child_categories, child_unknown_ok)}))
                continue
            left_hi = hi.copy()
            left_hi[c] = min(hi[c], thr)
            right_lo = lo.copy()
            right_lo[c] = max(lo[c], thr)
            stack.append((node["left"], lo, left_hi, allowed))
            stack.append((node["right"], right_lo, hi, allowed))
    return np.array(rows), np.array(columns), np.array(thresholds)


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
    # Near zero at numeric splits only: a categorical feature takes integer
    # codes (a fractional one is missing to us, its integer part to LightGBM).
    at_split = reaching[np.arange(n), features]
    probes += [np.where(np.isnan(thresholds), at_split, v) for v in NEAR_ZERO]
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


# -- a model with categorical splits -------------------------------------------

CATEGORICAL_COLUMNS = (1, 5)
# Fewer bins than column 1's 30 codes, so that it is a wide column, split on
# through two features of up to 16 categories each.
CATEGORICAL_MAX_BINS = 16
# Column 1 also holds these codes once each: too rare to be kept, so merged
# into the missing bin.
RARE_CODES = np.array([40.0, 41.0, 42.0, 43.0])
# Column 5's codes: gaps between them, and codes that need several words of a
# 32-bit bitset.
SPARSE_CODES = np.array([0, 3, 7, 31, 32, 64, 100, 1000, 70000])


def _with_categories(X, y, rng):
    """X with CATEGORICAL_COLUMNS replaced by category codes that carry
    signal in no order: column 1 one of 30 codes per label (the codes of
    the rare high labels are rare) and RARE_CODES once each, column 5 one
    of SPARSE_CODES per ninth of column 2's range, each with NaN and
    negative values."""
    X = X.copy()
    n = X.shape[0]
    by_label = rng.permutation(30)[np.minimum(y.astype(int) * 6 + rng.integers(0, 6, n), 29)]
    rank = np.argsort(np.argsort(X[:, 2]))
    by_rank = SPARSE_CODES[rng.permutation(SPARSE_CODES.size)][rank * SPARSE_CODES.size // n]
    for column, codes, negative in ((1, by_label, -1.0), (5, by_rank, -2.0)):
        codes = codes.astype(np.float64)
        codes[rng.random(n) < 0.05] = np.nan
        codes[rng.random(n) < 0.03] = negative
        X[:, column] = codes
    X[rng.choice(n, RARE_CODES.size, replace=False), 1] = RARE_CODES
    return X


@functools.lru_cache(maxsize=None)
def categorical_training_data():
    """training_data() with CATEGORICAL_COLUMNS holding category codes."""
    X, y, qid = training_data()
    return _with_categories(X, y, np.random.default_rng(3)), y, qid


def fitted_categorical(name="LambdaMARTRanker"):
    """A ranker of the named class with categorical splits on
    CATEGORICAL_COLUMNS (cached: treat it as read-only)."""
    return _fitted_categorical(name)


@functools.lru_cache(maxsize=None)
def _fitted_categorical(name):
    X, y, qid = categorical_training_data()
    if name == "CalibratedRanker":
        y = (y >= 2).astype(float)
    return RANKERS[name](
        categorical_features=list(CATEGORICAL_COLUMNS), max_bins=CATEGORICAL_MAX_BINS,
        n_estimators=30, early_stopping=False, random_state=0,
    ).fit(X, y, qid=qid)


def category_probes(ensemble, f, *, fractional=False):
    """Values of categorical feature ``f`` that a split on it must route:
    its known categories, the training categories too rare to be kept, NaN,
    negative codes, codes never seen (between, above and far above the
    known ones, below 2**31) and, if ``fractional``, values that are not
    integers."""
    X_train, _, _ = categorical_training_data()
    seen = np.unique(X_train[:, f][X_train[:, f] >= 0])
    known = ensemble.column_categories(f)
    unseen = np.setdiff1d(np.arange(known.max() + 3), seen)[:12]
    values = [known, np.setdiff1d(seen, known), unseen,
              [np.nan, -1.0, -3.0, 2.0**24 + 1, 2.0**30]]
    if fractional:
        values.append(np.r_[known + 0.5, known[known > 0] - 0.25, -0.5])
    return np.concatenate([np.asarray(v, dtype=np.float64) for v in values])


def categorical_probe_rows(*, fractional=False, float32=False, name="LambdaMARTRanker"):
    """Rows that reach every categorical split of fitted_categorical(name)
    with its feature at each of its category_probes, then the edge rows of
    its numeric splits, on held-out base rows."""
    ensemble = fitted_categorical(name)._tree_ensemble()
    X_base, y_base, _ = make_ranking(
        n_queries=10, docs_per_query=20, n_features=N_FEATURES, random_state=7
    )
    X_base = _with_categories(X_base, y_base, np.random.default_rng(8))
    reaching, columns, thresholds = _rows_reaching_splits(ensemble, X_base)
    rows = []
    for f in CATEGORICAL_COLUMNS:
        at_split = reaching[columns == f]
        for value in category_probes(ensemble, f, fractional=fractional):
            probe = at_split.copy()
            probe[:, f] = value
            rows.append(probe)
    rows.append(edge_rows(ensemble, X_base, float32=float32))
    X = np.vstack(rows)
    if float32:
        X = X.astype(np.float32).astype(np.float64)
    return X


def one_categorical_split(listed, missing_left, categories=(1.0, 2.0, 3.0, 2.0**24 + 3)):
    """A one-split ensemble on feature 0 (of ``categories``, by default 1, 2,
    3 and 2**24 + 3): ``listed`` go to the side without missing values,
    leaf values 1 (left) and -2 (right)."""
    categories = np.array(categories, dtype=np.float64)
    bins = np.flatnonzero(np.isin(categories, listed))
    left_bins = np.setdiff1d(np.arange(categories.shape[0]), bins) if missing_left else bins
    nodes = np.zeros(3, dtype=NODE_DTYPE)
    nodes[0] = (0.0, 10, 0, np.nan, 0, missing_left, 1, 2, 1.0, 0, 0, 1, bitset_of(left_bins))
    for k, value in ((1, 1.0), (2, -2.0)):
        nodes[k]["value"], nodes[k]["is_leaf"], nodes[k]["feature_idx"] = value, 1, -1
        nodes[k]["left"] = nodes[k]["right"] = -1
    return TreeEnsemble(nodes, np.array([0]), baseline=0.0, n_features=2,
                        categories=(categories, None))


# Rows for one_categorical_split: each category, a code next to the large
# one, 0 and 4 (unseen), -1 and NaN.
HAND_ROWS = np.array([[v, 0.0] for v in (1, 2, 3, 2**24 + 3, 2**24 + 2, 0, 4, -1, np.nan)])


def solr_reachable(ensemble, X):
    """``X`` without the rows with a value between a threshold and the
    nearest one Solr's added slack can store (the UserWarning's float32
    inputs that take the other branch: thresholds of magnitude below 1e-6,
    such as LightGBM's zero band edge 1e-35, among them)."""
    splits = ensemble.nodes[ensemble.splits]
    stored, gap = slack_compensated(splits["num_threshold"])
    if gap.any():
        with pytest.warns(UserWarning, match="cannot be written so that Solr's added slack"):
            model_json(ensemble)  # users are told
    keep = np.ones(X.shape[0], dtype=bool)
    for f, target, written in zip(splits["feature_idx"][gap > 0],
                                  floor32(splits["num_threshold"][gap > 0]), stored[gap > 0]):
        low, high = sorted((float(target), float(written)))
        keep &= ~((X[:, f] >= low) & (X[:, f] <= high))
    assert keep.mean() > 0.9  # the exception is small
    return X[keep]
