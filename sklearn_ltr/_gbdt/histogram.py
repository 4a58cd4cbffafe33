"""This module contains the njitted routines that build gradient histograms.

A node's histogram holds, for every feature and bin, the sum of gradients,
the sum of hessians and the number of rows. It is a plain float64 array of
shape ``(n_features, n_bins, 3)``, C-ordered, where the last axis is
``(sum_gradients, sum_hessians, count)``:

- one bin is 24 contiguous bytes, so the three read-modify-writes of a row
  hit one cache line, and one feature's histogram (6 KB for 256 bins) stays
  in L1 while its column is scanned;
- plain float arrays compile in numba to bare pointer arithmetic and let
  NumPy do whole-array operations (subtraction, zeroing) without record
  dtypes. Counts are exact in float64 up to 2**53 rows.

The kernels run ``prange`` over features, and each feature's sums are
accumulated serially in row order, so results are bit-identical for any
number of threads. Features whose ``feature_mask`` entry is 0 are skipped
and their histogram is left untouched.
"""

import numpy as np
from numba import njit, prange

# Indices along the last histogram axis.
SUM_G = 0
SUM_H = 1
COUNT = 2


def allocate_histograms(n_histograms, n_features, n_bins):
    """Allocate a stack of histograms.

    Parameters
    ----------
    n_histograms : int
        Number of histograms.
    n_features : int
        Number of features.
    n_bins : int
        Bins per feature, ``max_bins + 1`` (the last is the missing bin).

    Returns
    -------
    histograms : ndarray of shape (n_histograms, n_features, n_bins, 3), dtype float64
        Zero-filled buffer.
    """
    return np.zeros((n_histograms, n_features, n_bins, 3), dtype=np.float64)


@njit(parallel=True, cache=True)
def _build_histogram_root(X_binned, gradients, hessians, feature_mask, hist):
    """Build the histogram of all rows, without gathering.

    Parameters
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype uint8, Fortran order
        Binned data.
    gradients : ndarray of shape (n_samples,), dtype float32
        Gradients of all rows.
    hessians : ndarray of shape (n_samples,), dtype float32
        Hessians of all rows.
    feature_mask : ndarray of shape (n_features,), dtype uint8
        Features to build (non-zero).
    hist : ndarray of shape (n_features, n_bins, 3), dtype float64
        Output histogram, overwritten for masked-in features.
    """
    n_samples, n_features = X_binned.shape
    for f in prange(n_features):
        if not feature_mask[f]:
            continue
        h = hist[f]
        h[:] = 0.0
        col = X_binned[:, f]
        for i in range(n_samples):
            b = col[i]
            h[b, 0] += gradients[i]
            h[b, 1] += hessians[i]
            h[b, 2] += 1.0


@njit(parallel=True, cache=True)
def _build_histogram(X_binned, sample_indices, ordered_gradients, ordered_hessians,
                     feature_mask, hist):
    """Build the histogram of a node from its rows.

    Parameters
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype uint8, Fortran order
        Binned data.
    sample_indices : ndarray of shape (n_node,), dtype int32
        Rows of the node.
    ordered_gradients : ndarray of shape (n_node,), dtype float32
        ``gradients[sample_indices]``, gathered once for all features.
    ordered_hessians : ndarray of shape (n_node,), dtype float32
        ``hessians[sample_indices]``.
    feature_mask : ndarray of shape (n_features,), dtype uint8
        Features to build (non-zero).
    hist : ndarray of shape (n_features, n_bins, 3), dtype float64
        Output histogram, overwritten for masked-in features.
    """
    n_node = sample_indices.shape[0]
    n_features = X_binned.shape[1]
    for f in prange(n_features):
        if not feature_mask[f]:
            continue
        h = hist[f]
        h[:] = 0.0
        col = X_binned[:, f]
        for i in range(n_node):
            b = col[sample_indices[i]]
            h[b, 0] += ordered_gradients[i]
            h[b, 1] += ordered_hessians[i]
            h[b, 2] += 1.0


@njit(cache=True)
def _subtract_histograms(parent, sibling, out):
    """Compute ``out = parent - sibling`` (the histogram subtraction trick).

    Parameters
    ----------
    parent : ndarray of shape (n_features, n_bins, 3), dtype float64
        Histogram of the parent node.
    sibling : ndarray of shape (n_features, n_bins, 3), dtype float64
        Histogram of one child.
    out : ndarray of shape (n_features, n_bins, 3), dtype float64
        Output: histogram of the other child. May be ``parent`` itself.
    """
    # Serial: it is a short, memory-bound loop, not worth a parallel region.
    n_features, n_bins, _ = parent.shape
    for f in range(n_features):
        for b in range(n_bins):
            out[f, b, 0] = parent[f, b, 0] - sibling[f, b, 0]
            out[f, b, 1] = parent[f, b, 1] - sibling[f, b, 1]
            out[f, b, 2] = parent[f, b, 2] - sibling[f, b, 2]


@njit(cache=True)
def _gather_gradients(sample_indices, gradients, hessians, ordered_gradients,
                      ordered_hessians):
    """Gather the gradients and hessians of a node's rows into contiguous buffers.

    Parameters
    ----------
    sample_indices : ndarray of shape (n_node,), dtype int32
        Rows of the node.
    gradients, hessians : ndarray of shape (n_samples,), dtype float32
        Gradients and hessians of all rows.
    ordered_gradients, ordered_hessians : ndarray of shape (>= n_node,), dtype float32
        Output buffers; the first ``n_node`` entries are written.
    """
    for i in range(sample_indices.shape[0]):
        j = sample_indices[i]
        ordered_gradients[i] = gradients[j]
        ordered_hessians[i] = hessians[j]
