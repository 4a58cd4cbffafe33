"""How :class:`~.binning.BinMapper` bins a categorical column: which
categories it keeps, and the bin of each raw value.

A categorical feature gets one bin per category, in increasing order of the
category values, so that the bin of a category is its index among them. A
column of at most ``max_bins`` categories is one feature of the binned
matrix. A *wide* column, with more categories, keeps its ``max_bins`` most
frequent categories and, beyond them, every category seen in at least
:data:`MIN_CATEGORY_ROWS` rows (LightGBM's binning drops categories
below the same count); the kept categories, most frequent first,
are cut into blocks of ``max_bins``, and each block is a feature of its own
whose missing bin also takes the categories of the other blocks. Binning,
prediction (:class:`~.ensemble.TreeEnsemble`) and model files read the
blocks through the functions here.
"""

import numpy as np

# Which categories of a wide categorical column (more than max_bins
# categories) are kept beyond its max_bins most frequent: those seen in at
# least MIN_CATEGORY_ROWS rows. A category of one or two rows can only be
# split off on noise, and each block of max_bins categories adds a feature
# to every split search. (LightGBM also stops at 99% of the rows covered,
# which under uniform usage pools categories of any size; we do not.)
MIN_CATEGORY_ROWS = 3


def category_blocks(column, max_bins, feature):
    """The categories of one categorical column, as
    :class:`~.binning.BinMapper` keeps them (see the module docstring).

    Returns
    -------
    blocks : list of ndarray of dtype float64
        The kept categories, most frequent first (the smaller value first
        among equal counts), cut into blocks of ``max_bins``; each block
        sorted by value. One block unless the column is wide.
    has_missing : bool
        Whether some rows go to the missing bin of the first block (NaN,
        negative, a pooled category, or, for a wide column, a category of
        another block).
    pooled : tuple or None
        If some categories were pooled with the missing values,
        ``(number of categories, number pooled, rows of the pooled ones,
        rows)``, else None.
    """
    known = column >= 0  # False for NaN too
    values = column[known]
    if values.size and (np.any(values != np.floor(values)) or values.max() >= 2**31):
        bad = values[(values != np.floor(values)) | (values >= 2**31)][0]
        raise ValueError(
            f"Categorical feature {feature} has the value {float(bad)!r}: categories must be "
            "integer codes in [0, 2**31) (negative values and NaN mean missing). Encode "
            "the column (e.g. with sklearn.preprocessing.OrdinalEncoder or a pandas "
            "'category' dtype), or leave the feature out of categorical_features."
        )
    categories, counts = np.unique(values, return_counts=True)
    has_missing = values.size < column.size
    if categories.size <= max_bins:
        return [categories.astype(np.float64)], bool(has_missing), None
    # Stable sort of the negated counts: among equal counts the smaller
    # category (first in np.unique's order) comes first.
    order = np.argsort(-counts, kind="stable")
    kept = order[(np.arange(order.size) < max_bins) | (counts[order] >= MIN_CATEGORY_ROWS)]
    pooled = None
    if kept.size < categories.size:
        pooled = (int(categories.size), int(categories.size - kept.size),
                  int(values.size - counts[kept].sum()), int(column.size))
    blocks = [np.sort(categories[kept[b : b + max_bins]]).astype(np.float64)
              for b in range(0, kept.size, max_bins)]
    return blocks, True, pooled


def first_binned_features(feature_columns):
    """The first binned feature of each input column, given the column of
    each binned feature (``BinMapper.feature_columns_``, increasing)."""
    return np.searchsorted(feature_columns, np.arange(feature_columns[-1] + 1))


def category_codes(values, categories):
    """Bin of each raw value of a categorical feature: its index in the
    sorted ``categories``, or -1 for NaN, negative values and values not
    among them.

    Parameters
    ----------
    values : ndarray of shape (n,), dtype float
        Raw values.
    categories : ndarray of shape (n_categories,), dtype float64
        The feature's categories, increasing (``BinMapper.bin_thresholds_[f]``).

    Returns
    -------
    codes : ndarray of shape (n,), dtype int64
    """
    values = np.asarray(values, dtype=np.float64)
    if categories.shape[0] == 0:
        return np.full(values.shape, -1, dtype=np.int64)
    codes = np.minimum(np.searchsorted(categories, values), categories.shape[0] - 1)
    return np.where(categories[codes] == values, codes, -1)


def categories_by_block(values, blocks):
    """For a column binned as several features, the blocks of a wide
    categorical column (see :func:`category_blocks`): the block each raw
    value is a category of and its :func:`category_codes` code there.

    One search among all the blocks' categories instead of one a block: a
    column of 3,000 categories has 12 blocks, one of 100,000 about 400.

    Parameters
    ----------
    values : ndarray of shape (n,), dtype float
        Raw values.
    blocks : sequence of ndarray of dtype float64
        Each block's categories, increasing; no category in two blocks.

    Returns
    -------
    block : ndarray of shape (n,), dtype int64
        Index of the value's block, -1 for NaN, negative values and values
        in no block.
    code : ndarray of shape (n,), dtype int64
        The value's index among its block's categories; 0 where ``block``
        is -1.
    """
    sizes = np.array([len(categories) for categories in blocks], dtype=np.int64)
    merged = np.concatenate(blocks).astype(np.float64, copy=False)
    if merged.size == 0:
        none = np.full(np.shape(values), -1, dtype=np.int64)
        return none, np.zeros_like(none)
    order = np.argsort(merged, kind="stable")
    index = category_codes(values, merged[order])
    found = index >= 0
    position = order[np.where(found, index, 0)]  # in the concatenated blocks
    block_of_position = np.repeat(np.arange(sizes.size), sizes)
    first_of_block = np.cumsum(sizes) - sizes
    block = np.where(found, block_of_position[position], -1)
    code = np.where(found, position - first_of_block[block_of_position[position]], 0)
    return block, code


def write_block_codes(values, blocks, out, features, absent):
    """Write each raw value's bin in every block of its column:
    ``out[:, features[k]]`` gets the value's code among ``blocks[k]``'s
    categories (see :func:`categories_by_block`), and ``absent`` where the
    value is not one of them. ``values`` is read before ``out`` is written,
    so it may be a column of ``out``."""
    block, code = categories_by_block(values, blocks)
    for k, f in enumerate(features.tolist()):
        out[:, f] = np.where(block == k, code, absent)
