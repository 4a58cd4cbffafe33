"""This module contains the BinMapper, which maps raw feature values to bins.

Each feature gets at most ``max_bins`` value bins, bounded by quantile
thresholds computed on a seeded subsample, plus one bin reserved for missing
values (NaN) at index ``max_bins``. No threshold lies within about 1e-35
of zero (:data:`ZERO_BAND`, LightGBM's band of values it reads as 0), so
values that small always share zero's bin and branch as LightGBM sends them.

A categorical feature gets one bin per category instead, in increasing
order of the category values. A column of more than ``max_bins``
categories, a *wide* one, is cut into blocks of categories, each a feature
of its own (``feature_columns_`` maps binned features to input columns);
:mod:`.category_bins` says which categories are kept and how. A split on
such a feature is a split on its column that sends the categories of one
block's chosen set one way and every other value the missing way, so trees
separate every kept category. The missing bin takes NaN, negative values
(missing, as in scikit-learn's HistGradientBoosting) and the pooled rare
categories; at prediction time, categories never seen in training join
them. The binned matrix is ``uint8`` and Fortran-ordered (one contiguous
column per feature), which is the layout the histogram kernels read.
"""

import numpy as np
from numba import njit, prange
from scipy import sparse

from .._utils.parallel import pick, serial_twin
from .category_bins import category_blocks, first_binned_features, write_block_codes
from .common import MAX_BINS, X_BINNED_DTYPE, X_DTYPE, readonly_view

# LightGBM's kZeroThreshold (the float 1e-35, as a double): LightGBM reads
# every input value of at most this magnitude as 0.
ZERO_BAND = 1.0000000180025095e-35
# Thresholds are clipped to this value so that +inf is never a threshold:
# +inf is a value like any other and must land in the last value bin.
_ALMOST_INF = 1e300
# Rows per block in the dense transform: reading a block of C-ordered rows
# feature by feature keeps the block in cache while writing contiguous
# runs into the Fortran-ordered output.
_ROW_BLOCK = 256


@njit(cache=True)
def _thresholds_from_sorted(values, max_bins, out):
    """Compute the bin thresholds of one feature from its sorted values.

    Parameters
    ----------
    values : ndarray of shape (n_values,), dtype float64
        Sorted non-missing values of the feature (may be empty).
    max_bins : int
        Maximum number of value bins.
    out : ndarray of shape (max_bins - 1,), dtype float64
        Buffer receiving the thresholds.

    Returns
    -------
    n_thresholds : int
        Number of thresholds written to ``out`` (``n_bins - 1``).
    """
    n = values.shape[0]
    if n == 0:
        return 0
    n_distinct = 1
    for i in range(1, n):
        if values[i] != values[i - 1]:
            n_distinct += 1
    k = 0
    if n_distinct <= max_bins:
        # One bin per distinct value, split at the midpoints. Halve before
        # adding so that two huge finite values do not overflow to inf.
        for i in range(1, n):
            if values[i] != values[i - 1]:
                out[k] = _between(values[i - 1], values[i], 0.5 * values[i - 1] + 0.5 * values[i])
                k += 1
    else:
        # Same as np.percentile(values, linspace(0, 100, max_bins + 1)[1:-1],
        # method="midpoint"), then duplicates dropped (ties in heavy values
        # would otherwise give empty bins).
        for j in range(1, max_bins):
            q = j / max_bins
            pos = q * (n - 1)
            lo = int(np.floor(pos))
            if pos == lo or values[lo + 1] == values[lo]:
                t = values[lo]
            else:
                t = _between(values[lo], values[lo + 1],
                             values[lo] + 0.5 * (values[lo + 1] - values[lo]))
            if k == 0 or t != out[k - 1]:
                out[k] = t
                k += 1
    # Infinite thresholds become +-_ALMOST_INF (they split the same rows off
    # but for finite values beyond 1e300), and ties that this makes are
    # dropped: thresholds stay increasing and finite, as model files and
    # exporters require.
    n_kept = 0
    for i in range(k):
        t = min(max(out[i], -_ALMOST_INF), _ALMOST_INF)
        if n_kept == 0 or t != out[n_kept - 1]:
            out[n_kept] = t
            n_kept += 1
    return _move_thresholds_out_of_the_zero_band(out, n_kept)


@njit(cache=True, inline="always")
def _between(a, b, midpoint):
    """A threshold between the sorted values ``a < b``: their ``midpoint``
    as the caller computed it, unless that is NaN, which it is only when
    ``a`` is -inf: then -inf (clipped later), or 0 if ``b`` is inf, either
    of which separates them."""
    if midpoint == midpoint:
        return midpoint
    return 0.0 if b == np.inf else -np.inf


@njit(cache=True, inline="always")
def _outside_the_zero_band(t):
    """``t`` if it is outside ``[-ZERO_BAND, ZERO_BAND)``, else the edge of
    the band on zero's side of ``t``: ``ZERO_BAND`` for ``t`` in ``[0,
    ZERO_BAND)`` (0 itself, as quantiles of data with many zeros give), the
    double just below ``-ZERO_BAND`` for ``t`` in ``[-ZERO_BAND, 0)``.

    LightGBM reads every input value ``|x| <= ZERO_BAND`` as 0 (its
    ``kZeroThreshold``); with no threshold inside the band, ``x <=
    threshold`` sends every such value where it sends 0, so our models and
    their LightGBM export route every value alike. LightGBM writes
    ``ZERO_BAND`` for such splits too.
    """
    if 0.0 <= t < ZERO_BAND:
        return ZERO_BAND
    if -ZERO_BAND <= t < 0.0:
        return np.nextafter(-ZERO_BAND, -np.inf)
    return t


@njit(cache=True)
def _move_thresholds_out_of_the_zero_band(thresholds, k):
    """Apply :func:`_outside_the_zero_band` to ``thresholds[:k]`` (sorted)
    in place, drop the duplicates it makes, and return the new count; the
    thresholds stay sorted. Training rows get the same bins unless they
    hold values inside the band, which now share zero's bin."""
    kept = 0
    for i in range(k):
        t = _outside_the_zero_band(thresholds[i])
        if kept == 0 or t != thresholds[kept - 1]:
            thresholds[kept] = t
            kept += 1
    return kept


@njit(cache=True)
def _each_outside_the_zero_band(values, out):
    for i in range(values.shape[0]):
        out[i] = _outside_the_zero_band(values[i])


def out_of_the_zero_band(thresholds):
    """``thresholds`` (1-d) with :func:`_outside_the_zero_band` applied to
    each, as binning places them; for models fitted before it did."""
    thresholds = np.ascontiguousarray(thresholds, dtype=np.float64)
    out = np.empty_like(thresholds)
    _each_outside_the_zero_band(thresholds, out)
    return out


# Size of the sorted block of sampled values that BinMapper.fit holds at once.
_SORT_BLOCK_BYTES = 16 * 2**20
# Sampled rows gathered at once into that block (about 1 MB at 10 features).
_GATHER_ROWS = 16_384


@njit(cache=True)
def _find_thresholds_sorted(X_sorted, max_bins, thresholds, n_thresholds, has_missing):
    """Fill per-feature thresholds from sorted columns.

    Parameters
    ----------
    X_sorted : ndarray of shape (n_features, n_sub), dtype float64
        Each row is one feature's subsample, sorted ascending with NaN last
        (as ``np.sort`` orders them).
    max_bins : int
        Maximum number of value bins.
    thresholds : ndarray of shape (n_features, max_bins - 1), dtype float64
        Output buffer, row ``f`` receives the thresholds of feature ``f``.
    n_thresholds : ndarray of shape (n_features,), dtype int64
        Output, number of thresholds of each feature.
    has_missing : ndarray of shape (n_features,), dtype bool
        Output, whether the feature has NaN in the subsample.
    """
    # Serial: one linear pass over the sorted sample, a few milliseconds next
    # to NumPy's sort before it, while a parallel loop would add about 0.5 s
    # to the compile time of a fresh install.
    n_features, n_sub = X_sorted.shape
    for f in range(n_features):
        row = X_sorted[f]
        m = n_sub
        while m > 0 and np.isnan(row[m - 1]):
            m -= 1
        has_missing[f] = m < n_sub
        n_thresholds[f] = _thresholds_from_sorted(row[:m], max_bins, thresholds[f])


@njit(cache=True, inline="always")
def _bin_one(x, table, missing_bin):
    """Return the bin of a value: the number of thresholds strictly below it.

    With this rule ``x <= thresholds[b]`` if and only if ``bin(x) <= b``, so
    raw and binned predictions agree. ``table`` holds the sorted thresholds
    padded with +inf to 255 entries. The search is 8 unrolled halvings
    without data-dependent branches: about 6 ns per value, against about
    36 ns for a branchy binary search (which mispredicts every other step
    on continuous data) or a loop over a per-feature number of steps.
    """
    pos = 0
    pos += 128 * (table[pos + 127] < x)
    pos += 64 * (table[pos + 63] < x)
    pos += 32 * (table[pos + 31] < x)
    pos += 16 * (table[pos + 15] < x)
    pos += 8 * (table[pos + 7] < x)
    pos += 4 * (table[pos + 3] < x)
    pos += 2 * (table[pos + 1] < x)
    pos += table[pos] < x
    return missing_bin if np.isnan(x) else pos


def _search_tables(thresholds, n_thresholds):
    """Pad every feature's thresholds to 255 entries with +inf.

    Parameters
    ----------
    thresholds : ndarray of shape (n_features, max_bins - 1), dtype float64
        Thresholds, row ``f`` valid up to ``n_thresholds[f]``.
    n_thresholds : ndarray of shape (n_features,), dtype int64
        Number of thresholds per feature.

    Returns
    -------
    tables : ndarray of shape (n_features, 255), dtype float64
        Search tables for :func:`_bin_one`.
    """
    tables = np.full((thresholds.shape[0], 255), np.inf)
    for f in range(thresholds.shape[0]):
        tables[f, : n_thresholds[f]] = thresholds[f, : n_thresholds[f]]
    return tables


@njit(parallel=True, cache=True)
def _map_dense_to_bins(X, row_order, tables, missing_bin, out):
    """Bin a dense matrix into a Fortran-ordered uint8 matrix.

    Parameters
    ----------
    X : ndarray of shape (n_rows_in, n_features)
        Raw values (any float dtype, C or F order).
    row_order : ndarray of shape (n_rows,), dtype int64
        Output row ``r`` is input row ``row_order[r]``.
    tables : ndarray of shape (n_features, 255), dtype float64
        Per-feature thresholds padded with +inf.
    missing_bin : int
        Bin index of missing values.
    out : ndarray of shape (n_rows, n_features), dtype uint8, Fortran order
        Output buffer.
    """
    n_rows = row_order.shape[0]
    n_features = X.shape[1]
    n_blocks = (n_rows + _ROW_BLOCK - 1) // _ROW_BLOCK
    for blk in prange(n_blocks):
        start = blk * _ROW_BLOCK
        stop = min(start + _ROW_BLOCK, n_rows)
        for f in range(n_features):
            table = tables[f]
            for r in range(start, stop):
                out[r, f] = _bin_one(X[row_order[r], f], table, missing_bin)


@njit(parallel=True, cache=True)
def _map_csr_to_bins(data, indices, indptr, row_order, tables, missing_bin, zero_bins,
                     out):
    """Bin a CSR matrix (implicit entries are 0.0) into a uint8 matrix.

    Parameters
    ----------
    data, indices, indptr : ndarray
        CSR arrays of the input.
    row_order : ndarray of shape (n_rows,), dtype int64
        Output row ``r`` is input row ``row_order[r]``.
    tables, missing_bin
        As in :func:`_map_dense_to_bins`.
    zero_bins : ndarray of shape (n_features,), dtype uint8
        Bin of the value 0.0 for each feature.
    out : ndarray of shape (n_rows, n_features), dtype uint8, Fortran order
        Output buffer.
    """
    n_rows = row_order.shape[0]
    n_features = out.shape[1]
    n_blocks = (n_rows + _ROW_BLOCK - 1) // _ROW_BLOCK
    for blk in prange(n_blocks):
        start = blk * _ROW_BLOCK
        stop = min(start + _ROW_BLOCK, n_rows)
        for f in range(n_features):
            z = zero_bins[f]
            for r in range(start, stop):
                out[r, f] = z
        for r in range(start, stop):
            src = row_order[r]
            for k in range(indptr[src], indptr[src + 1]):
                f = indices[k]
                out[r, f] = _bin_one(data[k], tables[f], missing_bin)


_map_dense_to_bins_serial = serial_twin(_map_dense_to_bins)
_map_csr_to_bins_serial = serial_twin(_map_csr_to_bins)

# Fewer (rows x features) than this are binned by the serial twins of the
# kernels (see sklearn_ltr._utils.parallel): about 7 ns per value, so under 0.35 ms
# of work, once per fit, where threads save a fraction of a millisecond; and
# a small fit then compiles no parallel binning kernel.
_MIN_PARALLEL_CELLS = 50_000


def _column(X, f):
    """Column ``f`` of dense or sparse ``X`` as a float64 array."""
    if sparse.issparse(X):
        return X[:, [f]].toarray().ravel().astype(np.float64, copy=False)
    return np.asarray(X[:, f], dtype=np.float64)


class BinMapper:
    """Map raw feature values to integer bins.

    Parameters
    ----------
    max_bins : int, default=255
        Maximum number of value bins per feature, in ``[2, 255]``. The
        missing-value bin (index ``max_bins``) comes on top.
    subsample : int or None, default=200_000
        Number of rows, drawn without replacement, used to compute the
        thresholds. ``None`` uses all rows.
    random_state : int, numpy Generator or None, default=None
        Seed of the subsampling.
    is_categorical : array-like of bool of shape (n_features,), default=None
        Which features are categorical: their values are category codes,
        non-negative integers below 2**31 (negative values and NaN are
        missing). None means none is.

    Attributes
    ----------
    The binned matrix has a feature per input column, and one more for
    each block of a wide categorical column beyond its first (see the module
    docstring): the attributes below that describe features have one entry
    per *binned* feature, ``n_binned_features_`` of them.

    bin_thresholds_ : list of ndarray of dtype float64
        For each numeric feature, the upper bound (inclusive) of each value
        bin but the last: value ``x`` goes to bin ``b`` with
        ``bin_thresholds_[f][b - 1] < x <= bin_thresholds_[f][b]``. For a
        categorical feature, its categories: category ``bin_thresholds_[f][b]``
        goes to bin ``b``.
    feature_columns_ : ndarray of shape (n_binned_features_,), dtype int64
        The input column of each binned feature (increasing; ``arange`` if
        no column is wide).
    is_categorical_ : ndarray of shape (n_binned_features_,), dtype bool
        Which features are categorical.
    pooled_categories_ : dict
        Input column -> ``(categories, pooled categories, pooled rows,
        rows)`` for each categorical column of more than ``max_bins``
        categories that had some pooled with missing values: its number of categories, how many of them were
        pooled, and how many of the rows fitted on hold one of those. Empty
        if none.
    n_bins_non_missing_ : ndarray of shape (n_binned_features_,), dtype uint32
        Number of value bins of each feature (``len(bin_thresholds_[f]) + 1``
        for a numeric one, its number of categories for a categorical one).
    missing_values_bin_idx_ : int
        Bin of missing values, equal to ``max_bins``.
    has_missing_values_ : ndarray of shape (n_binned_features_,), dtype bool
        Whether rows of the subsample used for fitting go to the feature's
        missing bin.
    n_features_in_ : int
        Number of input columns seen in ``fit``.
    """

    def __init__(self, max_bins=MAX_BINS, subsample=200_000, random_state=None,
                 is_categorical=None):
        self.max_bins = max_bins
        self.subsample = subsample
        self.random_state = random_state
        self.is_categorical = is_categorical

    def _validate(self):
        if not (isinstance(self.max_bins, (int, np.integer)) and 2 <= self.max_bins <= MAX_BINS):
            raise ValueError(f"max_bins must be an integer in [2, {MAX_BINS}], got {self.max_bins!r}.")
        if self.subsample is not None and not (
            isinstance(self.subsample, (int, np.integer)) and self.subsample >= 1
        ):
            raise ValueError(f"subsample must be a positive integer or None, got {self.subsample!r}.")

    @staticmethod
    def _check_X(X):
        if sparse.issparse(X):
            if X.ndim != 2:
                raise ValueError("X must be 2-dimensional.")
            return X
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional, got shape {X.shape}.")
        if X.dtype.kind not in "fiub":
            raise ValueError(f"X must be numeric, got dtype {X.dtype}.")
        if X.dtype.kind != "f":
            X = X.astype(X_DTYPE)
        return X

    def _checked_is_categorical(self, n_features):
        if self.is_categorical is None:
            return np.zeros(n_features, dtype=bool)
        is_categorical = np.asarray(self.is_categorical)
        if is_categorical.shape != (n_features,) or is_categorical.dtype != bool:
            raise ValueError(
                f"is_categorical must be a boolean array of shape ({n_features},), got "
                f"{is_categorical.dtype} of shape {is_categorical.shape}."
            )
        return is_categorical.copy()

    def fit(self, X, sample_rows=None):
        """Compute the bin thresholds of every feature.

        Parameters
        ----------
        X : ndarray or scipy sparse matrix of shape (n_samples, n_features)
            Raw values. NaN means missing; in sparse input implicit entries
            are 0.0.
        sample_rows : ndarray of shape (n_sample_rows,), dtype int, default=None
            If given, thresholds come from these rows of X only, and
            ``subsample`` is not applied. Passing the rows instead of
            ``X[sample_rows]`` saves a copy of the sampled rows.

        Returns
        -------
        self : BinMapper
            The fitted mapper.
        """
        self._validate()
        X = self._check_X(X)
        n_samples, n_features = X.shape
        if n_samples == 0:
            raise ValueError("X must have at least one row.")
        rows = None
        if sample_rows is not None:
            rows = np.asarray(sample_rows)
            if rows.ndim != 1 or rows.dtype.kind not in "iu" or rows.size == 0:
                raise ValueError("sample_rows must be a non-empty 1-d integer array.")
            if rows.min() < 0 or rows.max() >= n_samples:
                raise ValueError("sample_rows has indices out of range [0, n_samples).")
        elif self.subsample is not None and n_samples > self.subsample:
            rng = np.random.default_rng(self.random_state)
            rows = np.sort(rng.choice(n_samples, self.subsample, replace=False))
        max_bins = int(self.max_bins)
        thresholds = np.zeros((n_features, max_bins - 1), dtype=np.float64)
        n_thr = np.zeros(n_features, dtype=np.int64)
        has_missing = np.zeros(n_features, dtype=np.bool_)
        if sparse.issparse(X):
            X_sub = X.tocsr() if rows is None else X.tocsr()[rows]
            X_sub = X_sub.tocsc()
            n_sub = X_sub.shape[0]
            for f in range(n_features):
                lo, hi = X_sub.indptr[f], X_sub.indptr[f + 1]
                col = np.asarray(X_sub.data[lo:hi], dtype=np.float64)
                nan = np.isnan(col)
                has_missing[f] = nan.any()
                col = np.concatenate([col[~nan], np.zeros(n_sub - (hi - lo))])
                n_thr[f] = _thresholds_from_sorted(np.sort(col), max_bins, thresholds[f])
        else:
            n_sub = n_samples if rows is None else rows.shape[0]
            # A few features at a time, so that the sorted copy stays near
            # _SORT_BLOCK_BYTES instead of the size of the whole sample (218 MB
            # at 200,000 rows x 136 features), on top of X itself.
            width = max(4, _SORT_BLOCK_BYTES // (8 * n_sub))
            # One buffer for every block, filled in place: a fancy-indexed
            # block, its transposed copy and the previous block's would
            # otherwise be alive at once (three times the block size).
            buffer = np.empty((min(width, n_features), n_sub), dtype=np.float64)
            for start in range(0, n_features, width):
                cols = slice(start, min(start + width, n_features))
                # NumPy's sort (SIMD-accelerated on x86) is several times faster
                # than numba's quicksort; one contiguous row per feature. The
                # values are copied into C-ordered rows before sorting them in
                # place: np.sort of the transposed block kept its Fortran
                # order, so the rows were strided, and _thresholds_from_sorted
                # was compiled a second time for them besides the contiguous
                # columns of sparse input.
                X_sorted = buffer[: cols.stop - start]
                if rows is None:
                    X_sorted[...] = X[:, cols].T
                else:
                    # The sampled rows a chunk at a time, so that the gathered
                    # copy stays small instead of the size of the block.
                    for lo in range(0, n_sub, _GATHER_ROWS):
                        hi = min(lo + _GATHER_ROWS, n_sub)
                        X_sorted[:, lo:hi] = X[rows[lo:hi], cols].T
                X_sorted.sort(axis=1)
                _find_thresholds_sorted(
                    X_sorted, max_bins, thresholds[cols], n_thr[cols], has_missing[cols]
                )
        # The numeric thresholds of every input column: transform bins the
        # numeric columns by them. Categorical columns are binned by category;
        # their rows of the table stay empty, as in a mapper read from a model
        # file, which has no quantiles of the codes.
        is_categorical = self._checked_is_categorical(n_features)
        n_thr[is_categorical] = 0
        self._tables = _search_tables(thresholds, n_thr)
        columns, bin_thresholds, n_bins, categorical, missing = [], [], [], [], []
        self.pooled_categories_ = {}
        for f in range(n_features):
            if not is_categorical[f]:
                columns.append(f)
                bin_thresholds.append(thresholds[f, : n_thr[f]].copy())
                n_bins.append(n_thr[f] + 1)
                categorical.append(False)
                missing.append(has_missing[f])
                continue
            column = _column(X, f) if rows is None else _column(X, f)[rows]
            blocks, block_missing, pooled = category_blocks(column, max_bins, f)
            if pooled is not None:
                self.pooled_categories_[int(f)] = pooled
            for block in blocks:
                columns.append(f)
                bin_thresholds.append(block)
                n_bins.append(block.shape[0])
                categorical.append(True)
                missing.append(block_missing)
        self.bin_thresholds_ = bin_thresholds
        self.n_bins_non_missing_ = np.array(n_bins, dtype=np.uint32)
        self.is_categorical_ = np.array(categorical, dtype=bool)
        self.has_missing_values_ = np.array(missing, dtype=bool)
        self.feature_columns_ = np.array(columns, dtype=np.int64)
        self.missing_values_bin_idx_ = max_bins
        self.n_features_in_ = n_features
        return self

    @property
    def n_binned_features_(self):
        """Number of features of the binned matrix (``n_features_in_`` plus
        one per block of a wide categorical column beyond its first)."""
        return int(self.feature_columns_.shape[0])

    def has_wide_columns(self):
        """True if a wide categorical column is binned as several features."""
        return self.n_binned_features_ != self.n_features_in_

    def wide_feature_columns(self):
        """``feature_columns_`` if a column is wide, else None: what the row
        stores take to build a wide column's blocks in one pass."""
        return self.feature_columns_ if self.has_wide_columns() else None

    def feature_categories(self):
        """For each feature, its categories (``bin_thresholds_[f]``) if it is
        categorical, else None: :class:`~.ensemble.TreeEnsemble`'s
        ``categories``."""
        return tuple(t if c else None for t, c in zip(self.bin_thresholds_, self.is_categorical_))

    def transform(self, X, row_order=None):
        """Bin X.

        Parameters
        ----------
        X : ndarray or scipy sparse matrix of shape (n_samples, n_features)
            Raw values, as in :meth:`fit`.
        row_order : ndarray of shape (n_rows,), dtype int64, default=None
            If given, output row ``r`` is row ``row_order[r]`` of X, so the
            caller gets reordered (or subsampled) rows without first copying
            the float matrix. None means all rows in their order.

        Returns
        -------
        X_binned : ndarray of shape (n_rows, n_binned_features_), dtype uint8
            Fortran-ordered (column-major) binned matrix: value bins are in
            ``[0, n_bins_non_missing_[f])`` and NaN maps to
            ``missing_values_bin_idx_``.
        """
        if not hasattr(self, "bin_thresholds_"):
            raise ValueError("This BinMapper is not fitted yet: call fit first.")
        X = self._check_X(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but the BinMapper was fitted with "
                f"{self.n_features_in_} features."
            )
        n_samples = X.shape[0]
        if row_order is None:
            row_order = np.arange(n_samples, dtype=np.int64)
        else:
            row_order = np.asarray(row_order)
            if row_order.ndim != 1 or row_order.dtype.kind not in "iu":
                raise ValueError("row_order must be a 1-d integer array.")
            if row_order.size and (row_order.min() < 0 or row_order.max() >= n_samples):
                raise ValueError("row_order has indices out of range [0, n_samples).")
            row_order = row_order.astype(np.int64, copy=False)
        out = np.empty((row_order.shape[0], self.n_features_in_), dtype=X_BINNED_DTYPE, order="F")
        missing_bin = self.missing_values_bin_idx_
        if sparse.issparse(X):
            X = X.tocsr()
            # The bin of 0.0 in each column, by its first binned feature (a
            # categorical column's is overwritten below).
            zero_bins = np.array(
                [np.searchsorted(self.bin_thresholds_[f], 0.0, side="left")
                 for f in first_binned_features(self.feature_columns_)],
                dtype=X_BINNED_DTYPE,
            )
            data = np.asarray(X.data, dtype=np.float64)
            map_to_bins = pick(_map_csr_to_bins, _map_csr_to_bins_serial, out.size,
                               _MIN_PARALLEL_CELLS)
            map_to_bins(data, X.indices, X.indptr, row_order, self._tables, missing_bin,
                        zero_bins, out)
        else:
            # Read-only whether or not the user's X is: one compiled
            # specialisation per dtype and memory order instead of two.
            map_to_bins = pick(_map_dense_to_bins, _map_dense_to_bins_serial, out.size,
                               _MIN_PARALLEL_CELLS)
            map_to_bins(readonly_view(X), row_order, self._tables, missing_bin, out)
        if self.has_wide_columns():
            # A column's bins in each of its binned features; categorical
            # ones are overwritten below.
            out = np.asfortranarray(out[:, self.feature_columns_])
        # Categorical columns were binned by their (unused) thresholds above,
        # a few wasted nanoseconds a value; their bins are their codes, in
        # the block each value is a category of (one block unless the
        # column is wide).
        categorical_columns = np.unique(self.feature_columns_[self.is_categorical_])
        for column in categorical_columns.tolist():
            features = np.flatnonzero(self.feature_columns_ == column)
            write_block_codes(_column(X, column)[row_order],
                              [self.bin_thresholds_[f] for f in features], out, features,
                              missing_bin)
        return out
