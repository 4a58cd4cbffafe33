"""Histograms of the blocks of a wide categorical column in one pass.

A categorical column with more categories than one feature's bins is binned
as several features, *blocks*, each holding some of its categories and
sending every other value to its missing bin (see :mod:`.binning`). Built
feature by feature, a column of ``B`` blocks would be scanned ``B`` times,
though each row falls in a value bin of one block at most. Here each row is
read once: its *block code* ``block * stride + bin`` (-1 if it is in no
block's value bins; ``stride`` is the histogram's bins per feature,
:func:`~.histogram_rows.histogram_bins`), added to the offset of the
column's first block in the flattened histogram, says which block's bin it
adds to, and each block's missing bin is then the node's totals minus the
block's value bins. The value bins are summed in row order, as the
feature-by-feature kernels sum them, so they are the same bit for bit; a
missing bin, found by subtraction, may differ from a row-by-row sum in the
last bits (and is set to exactly zero when no row is in it).
"""

import numpy as np
from numba import njit, prange

from .._utils.parallel import pick, serial_twin
from .histogram import COUNT, SUM_G, SUM_H, _value_bins
from .histogram_rows import _add_ghc, histogram_bins, missing_bin_of

# A stand-in of the same dtype for the unused rows of a root histogram, so
# that both cases share one compiled specialisation.
_NO_ROWS = np.zeros(0, dtype=np.int32)

__all__ = ["WideColumns", "n_wide_groups"]


@njit(cache=True)
def _block_codes(X_binned, first, n_blocks, missing_bin, stride, out):
    """Block code of every row of the column whose blocks are the features
    ``first .. first + n_blocks - 1`` of ``X_binned``, written to ``out``:
    ``block * stride + bin``, or -1."""
    out[:] = -1
    for b in range(n_blocks):
        column = X_binned[:, first + b]
        for i in range(column.shape[0]):
            v = column[i]
            if v != missing_bin:
                out[i] = b * stride + v


# Wide columns built in one pass over the rows: each row's gradient and
# hessian are read once for the group, as the feature kernels group features.
_GROUP = 4


@njit(cache=True, inline="always")
def _group_histograms(codes, rows, use_rows, gradients, hessians, hessian, firsts, n_blocks,
                      columns, hist, value_bins):
    """The histograms of the blocks of the wide ``columns`` (at most
    ``_GROUP``) from their rows' block ``codes``.

    Rows and gradients are read as the feature kernels read them: with
    ``use_rows``, row ``rows[i]`` has gradient ``gradients[i]`` (gathered);
    without, row ``i`` has ``gradients[i]``. ``hessian`` >= 0 is the
    constant hessian of every row (``hessians`` unread), < 0 reads them.
    """
    stride = hist.shape[1]
    missing_bin = missing_bin_of(hist)
    const = hessian >= 0.0
    # Each row adds (g, h, 1, 0) to one bin of the flattened histogram, at
    # the offset of its column's first block plus its block code.
    flat = hist.reshape(hist.shape[0] * stride, hist.shape[2])
    base = np.empty(columns.shape[0], dtype=np.int64)
    for k in range(columns.shape[0]):
        w = columns[k]
        base[k] = firsts[w] * stride
        for b in range(n_blocks[w]):
            f = firsts[w] + b
            hist[f, :value_bins[f]] = 0.0
            hist[f, missing_bin] = 0.0
    n = rows.shape[0] if use_rows else gradients.shape[0]
    zero = np.float32(0.0)
    total_g = 0.0
    total_h = 0.0
    for i in range(n):
        j = rows[i] if use_rows else i
        g = gradients[i]
        h = zero if const else hessians[i]
        total_g += g
        total_h += h
        for k in range(columns.shape[0]):
            c = codes[j, columns[k]]
            if c >= 0:
                _add_ghc(flat, base[k] + c, g, h)
    for k in range(columns.shape[0]):
        w = columns[k]
        for block in range(n_blocks[w]):
            f = firsts[w] + block
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


@njit(parallel=True, cache=True)
def _wide_columns_histograms(codes, rows, use_rows, gradients, hessians, hessian, firsts,
                             n_blocks, active, hist, value_bins):
    """:func:`_group_histograms` of the ``active`` wide columns (indices),
    ``_GROUP`` at a time, the groups in parallel: each writes its own
    features."""
    n_groups = (active.shape[0] + _GROUP - 1) // _GROUP
    for grp in prange(n_groups):
        _group_histograms(codes, rows, use_rows, gradients, hessians, hessian, firsts, n_blocks,
                          active[grp * _GROUP:min(grp * _GROUP + _GROUP, active.shape[0])],
                          hist, value_bins)


def n_wide_groups(n_columns):
    """How many groups (parallel units of the wide kernel) ``n_columns``
    wide columns make."""
    return -(-n_columns // _GROUP)


_wide_columns_histograms_serial = serial_twin(_wide_columns_histograms)
# As the feature kernels: below this many (rows x wide columns) two threads
# save less than waking them costs.
_MIN_PARALLEL_CELLS = 200_000


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
            _block_codes(X_binned, start, n, missing_bin, histogram_bins(missing_bin + 1),
                         self._codes[:, w])

    def active(self, feature_mask):
        """The wide columns with a block in ``feature_mask`` (their indices,
        int64): those :meth:`build` builds."""
        return np.array([w for w, (start, n) in enumerate(zip(self._first, self._n_blocks))
                         if np.any(feature_mask[start:start + n])], dtype=np.int64)

    def arrays(self, active):
        """What the compiled tree loops take for the wide columns:
        ``(codes, first_blocks, n_blocks, active)``, of the block codes
        (one column per wide column), the feature of each one's first block
        and its number of blocks, and the ``active`` columns (:meth:`active`)."""
        return self._codes, self._first, self._n_blocks, active

    def build(self, active, rows, gradients, hessians, hessian, hist, value_bins):
        """Fill ``hist`` for the blocks of the wide columns that are
        ``active`` (:meth:`active`); ``rows`` None for all rows (then the
        gradients are not gathered), ``hessian`` None to read ``hessians``,
        ``value_bins`` None if every bin but the missing one holds values."""
        use_rows = rows is not None
        n_rows = rows.shape[0] if use_rows else gradients.shape[0]
        rows = rows if use_rows else _NO_ROWS
        hessian = -1.0 if hessian is None else float(hessian)
        kernel = pick(_wide_columns_histograms, _wide_columns_histograms_serial,
                      n_rows * self._first.shape[0], _MIN_PARALLEL_CELLS)
        kernel(self._codes, rows, use_rows, gradients, hessians, hessian, self._first,
               self._n_blocks, active, hist, _value_bins(value_bins, hist))
