"""Split search on categorical features.

A categorical split sends a set of categories left and the rest right. The
best of the 2**(k-1) partitions of k categories is found as LightGBM and
scikit-learn's HistGradientBoosting find it: sort the categories by their
smoothed mean gradient, ``sum_g / (sum_h + CATEGORY_SMOOTHING)``, and scan
that order for the best prefix, from either end. For least squares this is
exact (Fisher, 1958); for other losses it is the usual approximation.

Regularisation, with LightGBM's default values (scikit-learn's
HistGradientBoosting has the first three; none is a parameter here):

- only categories with at least ``MIN_CATEGORY_SUPPORT`` rows in the node
  are sorted and can go left; the others stay right with the categories
  not taken;
- a category's sort key is smoothed by ``CATEGORY_SMOOTHING`` added to its
  hessian sum, so that a small category does not jump to an end of the
  order on a few rows (LightGBM's ``cat_smooth``);
- the scanned side holds at most ``MAX_CATEGORIES_LEFT`` categories (and at
  most half of the candidates, since the scan runs from both ends;
  ``max_cat_threshold``);
- a set is a candidate only once ``MIN_ROWS_PER_GROUP`` more rows have
  joined it since the last candidate, and the other side keeps at least as
  many (``min_data_per_group``);
- the children's terms of the gain have ``CATEGORY_L2`` added to the L2
  regularization (``cat_l2``), the parent's does not: a categorical split,
  which can fit noise in many small categories, must gain more than a
  numeric one to be chosen; and the children's values are shrunk by the
  same extra L2 (the grower's part).

On ``make_ranking`` data with 4 categorical columns of 20 to 1,000
categories (``benchmarks/bench_categorical.py``, 1,500 queries, 5 seeds), the
last rule's two parts raised LambdaMART's mean test NDCG@10 from 0.5868 to
0.5903, LightGBM's being 0.5900; the groups and the gain's extra L2 had
raised it by about 0.01 on another synthetic set.

The missing bin (NaN, negative values, rare and, at prediction time,
unseen categories) takes part as one more category when the node has
enough rows in it, and goes where the scan puts it; otherwise it goes right
if it has rows, or to the child with more rows if it has none, as for a
numeric feature.

Bins are category indices: bin ``b`` of a categorical feature is its
``b``-th category (see :class:`~.binning.BinMapper`). A split is stored as
the bitset of the bins that go left (``left_categories`` of NODE_DTYPE).
"""

import numpy as np
from numba import njit

from .common import BITSET_WORDS, BITSET_DTYPE
from .scan_parts import leaf_term

MIN_CATEGORY_SUPPORT = 10
CATEGORY_SMOOTHING = 10.0
MAX_CATEGORIES_LEFT = 32
CATEGORY_L2 = 10.0
MIN_ROWS_PER_GROUP = 100


@njit(cache=True)
def candidates_in_order(h, n_categories, missing_bin):
    """The bins of the node's categories with enough rows (the missing bin
    among them if it has enough), sorted by smoothed mean gradient, ties by
    bin."""
    n = 0
    bins = np.empty(n_categories + 1, dtype=np.int64)
    for b in range(n_categories):
        if h[b, 2] >= MIN_CATEGORY_SUPPORT:
            bins[n] = b
            n += 1
    if h[missing_bin, 2] >= MIN_CATEGORY_SUPPORT:
        bins[n] = missing_bin
        n += 1
    keys = np.empty(n)
    for i in range(n):
        b = bins[i]
        keys[i] = h[b, 0] / (h[b, 1] + CATEGORY_SMOOTHING)
    # Stable: equal keys keep bin order, so the result is reproducible.
    order = np.argsort(keys, kind="mergesort")
    return bins[:n][order]


@njit(cache=True, inline="always")
def _child_term(g, h, l2, lower, upper):
    """A child's term of the gain: ``g**2 / (h + l2)``, or, when its value
    must lie in ``[lower, upper]`` (monotonic constraints elsewhere in the
    tree), ``-g * v`` of its clipped value ``v``, as in :mod:`.constraints`."""
    if lower == -np.inf and upper == np.inf:
        return leaf_term(g, h, l2)
    d = h + l2
    v = min(max(-g / d if d > 0.0 else 0.0, lower), upper)
    return -g * v


@njit(cache=True, error_model="numpy")
def best_categorical_split(h, n_categories, missing_bin, sum_g, sum_h, count, parent_term,
                           min_samples_leaf, min_hessian_to_split, l2, lower, upper):
    """Scan the histogram of one categorical feature for its best split.

    Parameters
    ----------
    h : ndarray of shape (n_bins, 4), dtype float64
        Histogram of the feature in the node (bin ``b < n_categories`` is
        category ``b``).
    n_categories : int
        Number of categories (value bins) of the feature.
    missing_bin : int
        Index of the missing bin.
    sum_g, sum_h, count : float
        Totals of the node.
    parent_term : float
        ``sum_g**2 / (sum_h + l2)``.
    min_samples_leaf : int
        Minimum rows per child.
    min_hessian_to_split : float
        Minimum sum of hessians per child.
    l2 : float
        L2 regularization.
    lower, upper : float
        Bounds of the children's values (``-inf``, ``inf`` without monotonic
        constraints; a categorical feature has none of its own, but a node
        below a constrained split has bounds).

    Returns
    -------
    best : tuple
        ``(gain, n_left, missing_go_to_left, g_left, h_left, c_left)``: the
        left child is the first ``n_left`` candidates of the sorted order if
        ``n_left > 0``, the last ``-n_left`` if it is negative (rebuild the
        set with :func:`left_categories`); gain is ``-inf`` if no split
        satisfies the constraints.
    """
    best_gain = -np.inf
    best_n_left = 0
    best_mleft = 0
    best_gl = 0.0
    best_hl = 0.0
    best_cl = 0.0
    order = candidates_in_order(h, n_categories, missing_bin)
    n = order.shape[0]
    max_left = min(MAX_CATEGORIES_LEFT, (n + 1) // 2)
    l2 = l2 + CATEGORY_L2
    for direction in (1, -1):
        gl = 0.0
        hl = 0.0
        cl = 0.0
        group = 0.0
        missing_left = 0
        for i in range(max_left):
            b = order[i] if direction == 1 else order[n - 1 - i]
            gl += h[b, 0]
            hl += h[b, 1]
            cl += h[b, 2]
            group += h[b, 2]
            if b == missing_bin:
                missing_left = 1
            cr = count - cl
            hr = sum_h - hl
            if cl < min_samples_leaf or hl < min_hessian_to_split:
                continue
            if cr < min_samples_leaf or hr < min_hessian_to_split or cr < MIN_ROWS_PER_GROUP:
                break
            if group < MIN_ROWS_PER_GROUP:
                continue
            group = 0.0
            gain = (_child_term(gl, hl, l2, lower, upper)
                    + _child_term(sum_g - gl, hr, l2, lower, upper) - parent_term)
            if gain > best_gain:
                best_gain = gain
                best_n_left = (i + 1) * direction
                best_mleft = missing_left
                best_gl = gl
                best_hl = hl
                best_cl = cl
    if h[missing_bin, 2] == 0:
        # No missing value seen here: send NaN to the child with more rows.
        best_mleft = 1 if best_cl >= count - best_cl else 0
    return best_gain, best_n_left, best_mleft, best_gl, best_hl, best_cl


@njit(cache=True)
def _fill_left_categories(h, n_categories, missing_bin, n_left, out):
    order = candidates_in_order(h, n_categories, missing_bin)
    n = order.shape[0]
    for w in range(out.shape[0]):
        out[w] = 0
    for i in range(abs(n_left)):
        b = order[i] if n_left > 0 else order[n - 1 - i]
        if b != missing_bin:
            out[b >> 5] |= BITSET_DTYPE(1) << BITSET_DTYPE(b & 31)


def left_categories(h, n_categories, missing_bin, n_left):
    """The bitset of the categories that go left in the split found by
    :func:`best_categorical_split` (``n_left`` as it returned; the missing
    bin is left out: it follows ``missing_go_to_left``).

    Returns
    -------
    bitset : ndarray of shape (BITSET_WORDS,), dtype uint32
    """
    out = np.zeros(BITSET_WORDS, dtype=BITSET_DTYPE)
    _fill_left_categories(h, int(n_categories), int(missing_bin), int(n_left), out)
    return out
