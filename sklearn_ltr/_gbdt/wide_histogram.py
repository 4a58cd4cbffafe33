"""Histograms of the blocks of a wide categorical column in one pass.

A categorical column with more categories than one feature's bins is binned
as several features, *blocks*, each holding some of its categories and
sending every other value to its missing bin (see :mod:`.binning`). Built
feature by feature, a column of ``B`` blocks would be scanned ``B`` times,
though each row falls in a value bin of one block at most. Here each row is
read once: its *block code* ``block * missing_bin + bin`` (-1 if it is in no
block's value bins) says which block's bin it adds to, and each block's
missing bin is then the node's totals minus the block's value bins. The
value bins are summed in row order, as the feature-by-feature kernels sum
them, so they are the same bit for bit; a missing bin, found by
subtraction, may differ from a row-by-row sum in the last bits (and is set
to exactly zero when no row is in it).
"""

import numpy as np
from numba import njit

from .histogram import COUNT, SUM_G, SUM_H

__all__ = ["WideColumns"]


@njit(cache=True)
def _block_codes(X_binned, first, n_blocks, missing_bin, out):
    """Block code of every row of the column whose blocks are the features
    ``first .. first + n_blocks - 1`` of ``X_binned``, written to ``out``."""
    out[:] = -1
    for b in range(n_blocks):
        column = X_binned[:, first + b]
        for i in range(column.shape[0]):
            v = column[i]
            if v != missing_bin:
                out[i] = b * missing_bin + v


@njit(cache=True)
def _blocks_histogram(codes, rows, use_rows, gradients, hessians, hessian, first, n_blocks,
                      hist, value_bins):
    """The histograms of features ``first .. first + n_blocks - 1`` (one
    wide column) from its rows' block ``codes``.

    Rows and gradients are read as the feature kernels read them: with
    ``use_rows``, row ``rows[i]`` has gradient ``gradients[i]`` (gathered);
    without, row ``i`` has ``gradients[i]``. ``hessian`` >= 0 is the
    constant hessian of every row (``hessians`` unread), < 0 reads them.
    """
    missing_bin = hist.shape[1] - 1
    const = hessian >= 0.0
    for b in range(n_blocks):
        f = first + b
        hist[f, :value_bins[f]] = 0.0
        hist[f, missing_bin] = 0.0
    n = rows.shape[0] if use_rows else gradients.shape[0]
    total_g = 0.0
    total_h = 0.0
    for i in range(n):
        j = rows[i] if use_rows else i
        g = np.float64(gradients[i])
        h = 0.0 if const else np.float64(hessians[i])
        total_g += g
        total_h += h
        c = codes[j]
        if c >= 0:
            f = first + c // missing_bin
            b = c % missing_bin
            hist[f, b, SUM_G] += g
            hist[f, b, SUM_H] += h
            hist[f, b, COUNT] += 1.0
    for k in range(n_blocks):
        f = first + k
        sum_g = 0.0
        sum_h = 0.0
        count = 0.0
        for b in range(value_bins[f]):
            if const:
                hist[f, b, SUM_H] = hist[f, b, COUNT] * hessian
            sum_g += hist[f, b, SUM_G]
            sum_h += hist[f, b, SUM_H]
            count += hist[f, b, COUNT]
        rest = n - count
        hist[f, missing_bin, COUNT] = rest
        if rest > 0.0:
            hist[f, missing_bin, SUM_G] = total_g - sum_g
            hist[f, missing_bin, SUM_H] = rest * hessian if const else total_h - sum_h


class WideColumns:
    """The wide categorical columns of a binned matrix, for a row store.

    Parameters
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype uint8
        Binned data.
    feature_columns : ndarray of shape (n_features,), dtype int64
        The input column of each feature (``BinMapper.feature_columns_``):
        the features of a column read more than once are its blocks.
    missing_bin : int
        The missing-value bin.

    Attributes
    ----------
    is_block : ndarray of shape (n_features,), dtype bool
        The features built here rather than by the feature kernels.
    """

    def __init__(self, X_binned, feature_columns, missing_bin):
        columns, first, counts = np.unique(feature_columns, return_index=True, return_counts=True)
        wide = counts > 1
        self._first = first[wide].astype(np.int64)
        self._n_blocks = counts[wide].astype(np.int64)
        self.is_block = np.zeros(feature_columns.shape[0], dtype=bool)
        for start, n in zip(self._first, self._n_blocks):
            self.is_block[start:start + n] = True
        self._codes = np.empty((X_binned.shape[0], self._first.shape[0]), dtype=np.int32,
                               order="F")
        for w, (start, n) in enumerate(zip(self._first, self._n_blocks)):
            _block_codes(X_binned, start, n, missing_bin, self._codes[:, w])

    def build(self, feature_mask, rows, gradients, hessians, hessian, hist, value_bins):
        """Fill ``hist`` for the blocks of every wide column with a block in
        ``feature_mask``; ``rows`` None for all rows (then the gradients are
        not gathered), ``hessian`` None to read ``hessians``."""
        use_rows = rows is not None
        rows = rows if use_rows else np.zeros(0, dtype=np.int32)
        hessian = -1.0 if hessian is None else float(hessian)
        for w, (start, n) in enumerate(zip(self._first, self._n_blocks)):
            if np.any(feature_mask[start:start + n]):
                _blocks_histogram(self._codes[:, w], rows, use_rows, gradients, hessians, hessian,
                                  start, n, hist, value_bins)
