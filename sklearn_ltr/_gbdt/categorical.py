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


@njit(cache=True, inline="always")
def _key_before(a, b):
    """Whether sort key ``a`` comes before ``b`` in NumPy's order (NaN last)."""
    return a < b or (b != b and a == a)


# Up to this many candidates all are sorted (by insertion); beyond, only
# the ends the scans read (see candidates_at_the_ends).
_SORT_ALL_CANDIDATES = 3 * MAX_CATEGORIES_LEFT


@njit(cache=True, inline="always")
def _insert(key, item, keys, items, n_kept, size, ascending):
    """Insert ``(key, item)`` into the first ``n_kept`` entries of
    ``keys``/``items``, sorted ascending (descending if not
    ``ascending``), keeping at most ``size``; an equal key goes after the
    kept ones if ascending, before them if not. Return the new count."""
    if n_kept == size and _key_before(key, keys[size - 1]) != ascending:
        return n_kept
    i = min(n_kept, size - 1)
    while i > 0 and _key_before(key, keys[i - 1]) == ascending:
        keys[i] = keys[i - 1]
        items[i] = items[i - 1]
        i -= 1
    keys[i] = key
    items[i] = item
    return min(n_kept + 1, size)


@njit(cache=True)
def candidates_at_the_ends(h, n_categories, missing_bin):
    """The ends of the candidates' order: the bins of the node's categories
    with enough rows (the missing bin among them if it has enough), sorted
    by smoothed mean gradient, ties by bin, as a stable sort orders them.

    The scans read at most ``max_left = min(MAX_CATEGORIES_LEFT, (n + 1)
    // 2)`` of the ``n`` candidates from each end. Of many candidates only
    those are put in order, each end kept sorted by insertion as the
    candidates are read; a few are all sorted by insertion. In split
    finding of 150 LambdaMART trees on 1,000 ``make_ranking`` queries with
    8 columns of 500 categories (1 thread), this took 1.34 to 1.39 s
    against 1.69 to 1.76 s with NumPy's merge sort of every candidate.

    Returns
    -------
    front : ndarray of shape (max_left,), dtype int64
        ``front[i]`` is the ``i``-th candidate of the order.
    back : ndarray of shape (max_left,), dtype int64
        ``back[i]`` is the ``i``-th from the end: ``order[n - 1 - i]``.
    """
    bins = np.empty(n_categories + 1, dtype=np.int64)
    keys = np.empty(n_categories + 1)
    n = 0
    # Bins in increasing order, the missing bin (the last) last: that is
    # the order equal keys keep.
    for b in range(n_categories + 1):
        if b == n_categories:
            b = missing_bin
        if h[b, 2] >= MIN_CATEGORY_SUPPORT:
            bins[n] = b
            keys[n] = h[b, 0] / (h[b, 1] + CATEGORY_SMOOTHING)
            n += 1
    size = min(MAX_CATEGORIES_LEFT, (n + 1) // 2)
    front = np.empty(size, dtype=np.int64)
    back = np.empty(size, dtype=np.int64)
    if n <= _SORT_ALL_CANDIDATES:
        for i in range(1, n):
            _insert(keys[i], bins[i], keys, bins, i, i + 1, True)
        for i in range(size):
            front[i] = bins[i]
            back[i] = bins[n - 1 - i]
        return front, back
    front_keys = np.empty(size)
    back_keys = np.empty(size)
    n_front = 0
    n_back = 0
    for c in range(n):
        n_front = _insert(keys[c], bins[c], front_keys, front, n_front, size, True)
        n_back = _insert(keys[c], bins[c], back_keys, back, n_back, size, False)
    return front, back


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
    front, back = candidates_at_the_ends(h, n_categories, missing_bin)
    max_left = front.shape[0]
    l2 = l2 + CATEGORY_L2
    for direction in (1, -1):
        gl = 0.0
        hl = 0.0
        cl = 0.0
        group = 0.0
        missing_left = 0
        for i in range(max_left):
            b = front[i] if direction == 1 else back[i]
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
    front, back = candidates_at_the_ends(h, n_categories, missing_bin)
    for w in range(out.shape[0]):
        out[w] = 0
    for i in range(abs(n_left)):
        b = front[i] if n_left > 0 else back[i]
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
