"""Dtypes (and a small array helper) shared by the engine's modules, kept in one place."""

import numpy as np
from numba import njit

# Raw feature values as seen by binning and prediction.
X_DTYPE = np.float64
# Binned features: up to 255 value bins plus one bin for missing values.
X_BINNED_DTYPE = np.uint8
# Gradients and hessians. float32 halves the memory traffic of histogram
# building; histogram sums are accumulated in float64 (see histogram.py).
G_H_DTYPE = np.float32
# Labels and raw scores.
Y_DTYPE = np.float64

MAX_BINS = 255  # value bins at most; the missing-value bin comes on top
# A set of bins (0..255, the missing bin included) as a bitset of 8 words.
BITSET_WORDS = 8
BITSET_DTYPE = np.uint32

# One record per tree node. A fitted tree is a flat array of these, so a
# model is plain data: it pickles, and it can be written to JSON/npz.
NODE_DTYPE = np.dtype(
    [
        ("value", np.float64),  # leaf value (shrinkage applied); 0 for splits
        ("count", np.uint32),  # training rows that reached the node
        ("feature_idx", np.int32),  # split feature, -1 for leaves
        ("num_threshold", np.float64),  # go left iff x <= num_threshold
        ("bin_threshold", np.uint8),  # go left iff binned x <= bin_threshold
        ("missing_go_to_left", np.uint8),  # where NaN (the missing bin) goes
        ("left", np.int32),  # child node indices, -1 for leaves
        ("right", np.int32),
        ("gain", np.float64),  # split gain, for feature_importances_
        ("depth", np.int32),
        ("is_leaf", np.uint8),
        # Categorical splits: bin (category index) b goes left iff bit b of
        # left_categories is set; num_threshold and bin_threshold are unused
        # and the missing bin (NaN, unknown and rare categories) follows
        # missing_go_to_left.
        ("is_categorical", np.uint8),
        ("left_categories", np.uint32, (BITSET_WORDS,)),
    ]
)


def readonly_view(array):
    """A read-only view of ``array``, to pass to a numba kernel that only reads it.

    numba compiles a kernel again for every combination of writeable and
    read-only array arguments, and caches each separately. Kernels called
    with arrays that may be either (the user's X, a fitted model's frozen
    nodes, a tree being grown) get read-only views of all of them, so that
    one compiled specialisation serves every caller. A view costs no copy.
    """
    view = array.view()
    view.flags.writeable = False
    return view


@njit(cache=True, inline="always")
def in_bitset(bitset, b):
    """Whether bin ``b`` (0..255) is in ``bitset`` (BITSET_WORDS uint32 words)."""
    return ((bitset[b >> 5] >> (b & 31)) & 1) != 0


def bitset_of(bins):
    """The bitset (ndarray of BITSET_WORDS uint32) holding ``bins``."""
    bits = np.zeros(BITSET_WORDS * 32, dtype=bool)
    bits[np.asarray(bins, dtype=np.int64)] = True
    return np.packbits(bits, bitorder="little").view("<u4").astype(BITSET_DTYPE)


def bitset_below(n_bins):
    """The bitset of bins ``0 .. n_bins - 1``; what :func:`bitset_of`
    returns for ``range(n_bins)``, without building the range (a split's
    left bins are one, made for every split grown)."""
    bitset = np.zeros(BITSET_WORDS, dtype=BITSET_DTYPE)
    full, rest = divmod(int(n_bins), 32)
    bitset[:full] = np.iinfo(BITSET_DTYPE).max
    if rest:
        bitset[full] = (1 << rest) - 1
    return bitset


def bins_of(bitset):
    """The sorted bins (ndarray of int64) set in ``bitset``."""
    bits = np.unpackbits(np.asarray(bitset, dtype="<u4").view(np.uint8), bitorder="little")
    return np.flatnonzero(bits)
