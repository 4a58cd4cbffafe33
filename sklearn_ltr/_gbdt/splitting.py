"""This module contains the njitted routines that find and apply node splits.

The gain of splitting a node into left (L) and right (R) children is the
usual second-order gain without the 1/2 factor, as in LightGBM::

    gain = G_L**2 / (H_L + l2) + G_R**2 / (H_R + l2) - G**2 / (H + l2)

and a split is kept only if ``gain > min_gain_to_split`` (LightGBM's
``min_gain_to_split`` has the same meaning). Each child must hold at least
``min_samples_leaf`` rows and a sum of hessians of at least
``min_hessian_to_split``.

A split on feature ``f`` at bin ``b`` sends value bins ``<= b`` left. If the
node has rows with missing values for ``f``, both directions of the missing
bin are tried at every threshold, plus "all values left, missing right"
(``b`` is the last value bin); otherwise missing values (at predict time)
go to the child with more training rows.

The scan over features is serial (see :func:`_find_best_split`); it is a
small fraction of the time spent building histograms.

Ties in gain are broken deterministically: lowest feature index, then lowest
bin, then missing-right before missing-left.
"""

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def _leaf_term(g, h, l2):
    """Return ``g**2 / (h + l2)``, 0 when the denominator is not positive."""
    d = h + l2
    if d <= 0.0:
        return 0.0
    return g * g / d


@njit(cache=True)
def _best_split_one_feature(h, n_bins_nm, missing_bin, sum_g, sum_h, count,
                            parent_term, min_samples_leaf, min_hessian_to_split, l2):
    """Scan the histogram of one feature for its best split.

    Parameters
    ----------
    h : ndarray of shape (n_bins, 3), dtype float64
        Histogram of the feature in the node.
    n_bins_nm : int
        Number of value (non-missing) bins of the feature.
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

    Returns
    -------
    best : tuple
        ``(gain, bin, missing_go_to_left, g_left, h_left, c_left)``; gain is
        ``-inf`` if no split satisfies the constraints.
    """
    best_gain = -np.inf
    best_bin = 0
    best_mleft = 0
    best_gl = 0.0
    best_hl = 0.0
    best_cl = 0.0
    mg = h[missing_bin, 0]
    mh = h[missing_bin, 1]
    mc = h[missing_bin, 2]
    has_missing = mc > 0
    n_dirs = 2 if has_missing else 1
    for d in range(n_dirs):
        # d == 0: missing (if any) goes right; d == 1: missing goes left.
        gl = 0.0
        hl = 0.0
        cl = 0.0
        if d == 1:
            gl = mg
            hl = mh
            cl = mc
        last = n_bins_nm - 1
        if has_missing and d == 0:
            # "all values left, missing right" is a valid split too.
            last = n_bins_nm
        for b in range(last):
            gl += h[b, 0]
            hl += h[b, 1]
            cl += h[b, 2]
            cr = count - cl
            if cl < min_samples_leaf:
                continue
            if cr < min_samples_leaf:
                break
            hr = sum_h - hl
            if hl < min_hessian_to_split or hr < min_hessian_to_split:
                continue
            gr = sum_g - gl
            gain = _leaf_term(gl, hl, l2) + _leaf_term(gr, hr, l2) - parent_term
            if gain > best_gain:
                best_gain = gain
                best_bin = b
                best_mleft = d
                best_gl = gl
                best_hl = hl
                best_cl = cl
    if not has_missing:
        # No missing value seen here: send NaN to the child with more rows.
        best_mleft = 1 if best_cl >= count - best_cl else 0
    return best_gain, best_bin, best_mleft, best_gl, best_hl, best_cl


@njit(cache=True)
def _find_best_split(hist, sum_g, sum_h, count, n_bins_non_missing, missing_bin,
                     feature_mask, min_samples_leaf, min_hessian_to_split,
                     min_gain_to_split, l2_regularization):
    """Find the best split of a node over all allowed features.

    Parameters
    ----------
    hist : ndarray of shape (n_features, n_bins, 3), dtype float64
        Histogram of the node (see :mod:`.histogram`).
    sum_g, sum_h : float
        Sums of gradients and hessians of the node.
    count : int
        Number of rows of the node.
    n_bins_non_missing : ndarray of shape (n_features,), dtype uint32
        Number of value bins of each feature.
    missing_bin : int
        Index of the missing-value bin.
    feature_mask : ndarray of shape (n_features,), dtype uint8
        Features allowed for this tree (non-zero).
    min_samples_leaf : int
        Minimum rows per child.
    min_hessian_to_split : float
        Minimum sum of hessians per child.
    min_gain_to_split : float
        A split is valid only if its gain is strictly larger.
    l2_regularization : float
        L2 regularization of leaf values.

    Returns
    -------
    gain : float
        Gain of the best split, ``-inf`` if there is no valid split.
    feature_idx : int
        Feature of the best split, -1 if none.
    bin_threshold : int
        Value bins ``<= bin_threshold`` go left.
    missing_go_to_left : int
        1 if missing values go left.
    sum_g_left, sum_h_left : float
        Sums of the left child.
    count_left : int
        Rows of the left child.
    """
    n_features = hist.shape[0]
    parent_term = _leaf_term(sum_g, sum_h, l2_regularization)
    fcount = float(count)
    # The best split so far; features are scanned in increasing order and
    # only a strictly larger gain replaces it, so ties go to the lowest
    # feature. Kept in scalars rather than per-feature arrays: allocating
    # and filling those arrays made up a third of this kernel's compile time.
    best = -1
    best_gain = -np.inf
    best_bin = 0
    best_mleft = 0
    best_gl = 0.0
    best_hl = 0.0
    best_cl = 0.0
    # Serial on purpose: the scan is ~0.1 ms per node, and launching a
    # parallel region costs as much on an idle machine and far more when
    # the cores are shared.
    for f in range(n_features):
        if not feature_mask[f]:
            continue
        res = _best_split_one_feature(
            hist[f], n_bins_non_missing[f], missing_bin, sum_g, sum_h, fcount,
            parent_term, min_samples_leaf, min_hessian_to_split, l2_regularization)
        if res[0] > best_gain:
            best = f
            best_gain, best_bin, best_mleft, best_gl, best_hl, best_cl = res
    if best < 0 or not best_gain > min_gain_to_split:
        return -np.inf, -1, 0, 0, 0.0, 0.0, 0
    return (best_gain, best, best_bin, best_mleft, best_gl, best_hl,
            int(best_cl + 0.5))


@njit(cache=True, inline="always")
def _goes_left(b, bin_threshold, missing_go_to_left, missing_bin):
    """Whether a row with bin ``b`` goes to the left child."""
    # Bitwise, not short-circuit, operators: no branches.
    return ((b <= bin_threshold) & (b != missing_bin)) | ((b == missing_bin) & missing_go_to_left)


@njit(cache=True)
def _partition(sample_indices, X_binned, feature_idx, bin_threshold, missing_go_to_left,
               missing_bin, buffer):
    """Stable in-place partition of a node's rows into left then right.

    Keeping the relative order makes every child's rows ascending if the
    parent's were, which keeps later gathers cache friendly, and makes the
    result deterministic.

    The loop is branch-free: every row is written at the next left position
    and only that position advances when the row goes left; a second pass
    does the same for the right rows. About 2.5 ns per row, so serial: a
    parallel two-pass version was slower on 2 cores and much slower when
    the cores are shared.

    Parameters
    ----------
    sample_indices : ndarray of shape (n_node,), dtype int32
        Rows of the node; reordered in place so that the left child's rows
        come first.
    X_binned : ndarray of shape (n_samples, n_features), dtype uint8, Fortran order
        Binned data.
    feature_idx : int
        Split feature.
    bin_threshold : int
        Value bins ``<= bin_threshold`` go left.
    missing_go_to_left : int
        1 if the missing bin goes left.
    missing_bin : int
        Index of the missing bin.
    buffer : ndarray of shape (>= n_node,), dtype int32
        Scratch space.

    Returns
    -------
    n_left : int
        Number of rows that went left.
    """
    col = X_binned[:, feature_idx]
    mleft = missing_go_to_left != 0
    n = sample_indices.shape[0]
    n_left = 0
    for i in range(n):
        j = sample_indices[i]
        buffer[n_left] = j
        n_left += _goes_left(col[j], bin_threshold, mleft, missing_bin)
    # Right rows. Stop once the last one is placed, so that the throw-away
    # writes of left rows never land past the end of the node.
    pos = n_left
    if pos < n:
        for i in range(n):
            j = sample_indices[i]
            buffer[pos] = j
            pos += not _goes_left(col[j], bin_threshold, mleft, missing_bin)
            if pos == n:
                break
    # An explicit loop, not ``sample_indices[:] = buffer[:n]``: numba
    # compiles a slice assignment with a shape check whose error message
    # formatting took 2.5 s of a 3 s compile.
    for i in range(n):
        sample_indices[i] = buffer[i]
    return n_left
