"""Pieces of a feature's split scan that the plain scan (:mod:`.splitting`),
the bounded one (:mod:`.constraints`) and the categorical one
(:mod:`.categorical`) share, inlined into them."""

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def leaf_term(g, h, l2):
    """Return ``g**2 / (h + l2)``, 0 when the denominator is not positive."""
    d = h + l2
    if d <= 0.0:
        return 0.0
    return g * g / d


@njit(cache=True, inline="always", error_model="numpy")
def threshold_gain(gl, hl, cl, sum_g, sum_h, count, parent_term, min_samples_leaf,
                   min_hessian_to_split, l2):
    """The gain of the split whose left child has sums ``gl``, ``hl`` and
    ``cl`` rows, or ``-inf`` if a child would have fewer rows than
    ``min_samples_leaf`` or a smaller sum of hessians than
    ``min_hessian_to_split``. The split scan computes it only where
    :func:`gain_cannot_beat` cannot rule the threshold out."""
    gr = sum_g - gl
    hr = sum_h - hl
    cr = count - cl
    dl = hl + l2
    dr = hr + l2
    term_l = gl * gl / dl
    term_r = gr * gr / dr
    gain = (term_l if dl > 0.0 else 0.0) + (term_r if dr > 0.0 else 0.0) - parent_term
    valid = ((cl >= min_samples_leaf) & (cr >= min_samples_leaf)
             & (hl >= min_hessian_to_split) & (hr >= min_hessian_to_split))
    return gain if valid else -np.inf


# How far below the best gain so far a threshold's gain must be shown to be
# by the screen of :func:`gain_cannot_beat`: its products and the gain's
# divisions each round by a few units in the last place (about 1e-16
# relative), so the margin leaves room ten thousand times over.
_SCREEN_MARGIN = 1e-12


@njit(cache=True, inline="always")
def screen_bound(best_gain, parent_term, sum_h, l2, min_hessian_to_split):
    """The bound :func:`gain_cannot_beat` compares with, in a scan of a node
    whose hessian sum is ``sum_h`` and whose best gain so far is
    ``best_gain``: ``best_gain + parent_term`` lowered by the relative
    margin. ``-inf`` screens out nothing: so it is for no gain yet, and for
    a node where a valid threshold's ``hl + l2`` or ``sum_h - hl + l2`` may
    lie outside ``[1e-100, 1e100]`` (``sum_h + l2 > 1e100``, or
    ``min_hessian_to_split + l2 < 1e-100``), where a product of the screen
    could overflow or underflow unnoticed, or where the sum itself
    overflows."""
    bound = (best_gain + parent_term) * (1.0 - _SCREEN_MARGIN)
    if not ((sum_h + l2 <= 1e100) & (min_hessian_to_split >= 0.0)
            & (min_hessian_to_split + l2 >= 1e-100) & (bound < np.inf)):
        return -np.inf
    return bound


@njit(cache=True, inline="always")
def gain_cannot_beat(gl, hl, sum_g, sum_h, l2, bound):
    """Whether the gain :func:`threshold_gain` would compute for this
    threshold is certainly not larger than the best so far (whose
    :func:`screen_bound` is ``bound``), found with multiplications only.

    A valid threshold (both hessian sums at least ``min_hessian_to_split``)
    has ``dl = hl + l2`` and ``dr = sum_h - hl + l2`` in ``[1e-100, 1e100]``
    wherever the bound is finite, and its gain plus the parent's term is
    ``(gl**2 * dr + gr**2 * dl) / (dl * dr)``. If that numerator is below
    ``bound * dl * dr``, the gain is below the best by the margin of
    :func:`screen_bound`, far more than the rounding of either computation,
    and rounding is monotonic: the gain computed cannot compare larger. A
    squared gradient sum that underflows moves the numerator by less than
    ``1e-207``, far inside the margin while ``bound * dl * dr`` exceeds
    ``1e-190``, which is asked; an infinite numerator is below nothing. An
    invalid threshold has gain ``-inf``, so whatever the screen says of it,
    skipping it changes nothing. A scan that skips the thresholds screened
    out finds the same split, bit for bit, with no division where it did
    two: along a rising gain curve most thresholds still need their gain,
    past its peak almost none do.
    """
    gr = sum_g - gl
    dl = hl + l2
    dr = (sum_h - hl) + l2
    limit = bound * (dl * dr)
    return (gl * gl * dr + gr * gr * dl < limit) & (limit > 1e-190)


@njit(cache=True, inline="always")
def subtract_sibling(hf, sf, n_bins_nm, missing_bin):
    """Turn a feature's histogram ``hf``, its parent's, into the node's by
    subtracting the sibling's ``sf``: only the bins a scan reads, the value
    bins and the missing bin. ``hf`` and ``sf`` are C-contiguous."""
    # The value bins as one flat run, which LLVM vectorises: 25% faster
    # than bin by bin (22 bins a feature).
    h = hf.reshape(-1)
    s = sf.reshape(-1)
    for i in range(n_bins_nm * hf.shape[1]):
        h[i] -= s[i]
    for c in range(hf.shape[1]):
        hf[missing_bin, c] -= sf[missing_bin, c]


@njit(cache=True, inline="always")
def start_of_left_sums(h, missing_bin, missing_left):
    """The left child's gradient, hessian and row sums before any value bin
    joins it: the missing bin's if it goes left, else zeros. Every scan adds
    the value bins to these in bin order."""
    if missing_left:
        return h[missing_bin, 0], h[missing_bin, 1], h[missing_bin, 2]
    return 0.0, 0.0, 0.0


@njit(cache=True, inline="always")
def any_threshold_leaves_enough_rows(h, n_bins_nm, missing_bin, count, min_samples_leaf):
    """Whether some threshold a scan of this feature tries leaves both
    children at least ``min_samples_leaf`` rows, whatever their hessians;
    the same thresholds and the same float sums of rows as the scans.

    A node's rows in a bin are a subset of its parent's, so a child's row
    count on either side of any threshold is at most the parent's: a
    feature for which this is False can split no descendant of the node
    either (its missing rows too are a subset, so a descendant tries no
    threshold its ancestor did not)."""
    has_missing = h[missing_bin, 2] > 0
    for d in range(2 if has_missing else 1):
        cl = start_of_left_sums(h, missing_bin, d == 1)[2]
        last = n_bins_nm if has_missing and d == 0 else n_bins_nm - 1
        for b in range(last):
            cl += h[b, 2]
            if (cl >= min_samples_leaf) & (count - cl >= min_samples_leaf):
                return True
    return False


@njit(cache=True, inline="always")
def left_sums(h, n_bins_nm, missing_bin, missing_left, has_missing, left):
    """Write the gradient, hessian and row sums of the left child of every
    threshold of one scan direction into ``left[:, b]`` (value bins ``<= b``
    left, plus the missing bin if ``missing_left``), accumulated in bin
    order; return the number of thresholds. With missing values and the
    missing bin right, "all values left" is a threshold too."""
    gl, hl, cl = start_of_left_sums(h, missing_bin, missing_left)
    last = n_bins_nm - 1
    if has_missing and not missing_left:
        last = n_bins_nm
    for b in range(last):
        gl += h[b, 0]
        hl += h[b, 1]
        cl += h[b, 2]
        left[0, b] = gl
        left[1, b] = hl
        left[2, b] = cl
    return last


@njit(cache=True, inline="always")
def first_best_threshold(gains, left, last, missing_left, best):
    """``best``, a split ``(gain, bin, missing_go_to_left, g_left, h_left,
    c_left)``, replaced by the first threshold of one scan direction whose
    gain in ``gains[:last]`` is strictly larger (sums from ``left``), so that
    ties keep the lower bin and the earlier direction."""
    best_gain, best_bin, best_mleft, best_gl, best_hl, best_cl = best
    for b in range(last):
        if gains[b] > best_gain:
            best_gain = gains[b]
            best_bin = b
            best_mleft = missing_left
            best_gl = left[0, b]
            best_hl = left[1, b]
            best_cl = left[2, b]
    return best_gain, best_bin, best_mleft, best_gl, best_hl, best_cl
