"""The row loops of the histogram kernels (:mod:`.histogram`): one pass over
a node's rows adds each row to the bins of a *group* of features, reading
its gradient and hessian once for the group.

A group is 4 features with general hessians, 8 with a constant hessian,
and 8 features of few bins with general hessians on small data (see
``NARROW_GROUP_BINS``). Each feature's sums are accumulated in row order
whatever its group, so the grouping never changes a histogram: it only
decides how many features share one pass, and which features make one
parallel unit of the kernels.
"""

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["GROUP_FEATURES", "GROUP_FEATURES_CONST", "NARROW_GROUP_BINS", "NARROW_GROUP_FEATURES",
           "NARROW_GROUP_MAX_ROWS", "PADDING_BINS", "histogram_bins", "missing_bin_of",
           "n_feature_groups"]

# Each feature's histogram is allocated this many bins more than it uses,
# never written and never used (a whole-feature sum such as a symmetric
# level's adds their zeros), so that features do not start a power of two
# bytes apart (see the layout in :mod:`.histogram`). With 256 bins of 32
# bytes, every feature's first bins fell in the same few sets of the L1 and
# L2 caches: the bins a group of features of few values keeps updating
# evicted one another. Two bins more (8,256 bytes, 129 cache lines, an odd
# number) spread them over all sets.
PADDING_BINS = 2


def histogram_bins(n_bins):
    """The bins allocated for each feature of a histogram of ``n_bins``
    bins (``max_bins + 1``): its row stride, in bins."""
    return n_bins + PADDING_BINS


@njit(cache=True, inline="always")
def missing_bin_of(hist):
    """The missing bin of ``hist``, of shape ``(n_features,
    histogram_bins(n_bins), 4)``: the last bin before the padding."""
    return hist.shape[1] - 1 - PADDING_BINS


# Features per group, the kernels' unit of parallel work: general hessians,
# constant hessians. _hist_rows and _hist_rows_const unroll a full group.
GROUP_FEATURES = 4
GROUP_FEATURES_CONST = 8
# With general hessians and small data, eight features of few bins make one
# group instead of two: those whose histograms' bins (the value bins, plus
# the missing bin of each) add up to at most NARROW_GROUP_BINS, in data of at
# most NARROW_GROUP_MAX_ROWS rows. A feature of few values puts most
# consecutive rows in the same bin, where each update waits for the one
# before it; eight features in one pass over the rows keep twice as many of
# these chains going. On LightGBM's example (3,005 rows; 144 of its 218
# features fall in such groups) the root's histogram took 12 to 20% less
# time and the histograms of 500-tree LambdaMART fits 7% less (one thread,
# six alternations); MQ2008's were unchanged. On make_ranking's 120,000
# rows, where reading the rows' bins from memory costs more than the
# chains, the same groups made the histograms 7% slower, groups of up to
# 1,024 bins 10% slower, and groups of eight 255-bin features 20 to 25%
# slower in every node: large data keeps groups of four.
NARROW_GROUP_FEATURES = 8
NARROW_GROUP_BINS = 256
NARROW_GROUP_MAX_ROWS = 16_384


def n_feature_groups(features, value_bins, n_samples, constant_hessian):
    """How many groups (parallel units) the kernels split ``features``
    (int64) of data of ``n_samples`` rows into, with or without a constant
    hessian (``value_bins``: see :func:`_feature_groups`)."""
    if constant_hessian:
        return -(-features.shape[0] // GROUP_FEATURES_CONST)
    return _feature_groups(features, value_bins, n_samples).shape[0] - 1


@intrinsic
def _add_ghc(typingctx, hist, b, g, h):
    """Add ``(g, h, 1, 0)`` to ``hist[b, :4]`` as one 4-wide vector operation.

    numba does not SLP-vectorize by default, so the three scalar updates
    would otherwise stay three loads, adds and stores. ``hist`` must be a
    C-contiguous ``(n_bins, 4)`` float64 array and ``b < n_bins`` (not
    checked).
    """
    sig = types.void(hist, b, g, h)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        i64 = ir.IntType(64)
        offset = builder.mul(builder.zext(args[1], i64), ir.Constant(i64, 4))
        vec_t = ir.VectorType(ir.DoubleType(), 4)
        ptr = builder.bitcast(builder.gep(ary.data, [offset]), vec_t.as_pointer())
        add = ir.Constant(vec_t, [0.0, 0.0, 1.0, 0.0])
        i32 = ir.IntType(32)
        add = builder.insert_element(add, builder.fpext(args[2], ir.DoubleType()), ir.Constant(i32, 0))
        add = builder.insert_element(add, builder.fpext(args[3], ir.DoubleType()), ir.Constant(i32, 1))
        # align=8: numba only guarantees element alignment for its arrays.
        builder.store(builder.fadd(builder.load(ptr, align=8), add), ptr, align=8)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def _add_gc(typingctx, acc, b, g):
    """Add ``(g, 1)`` to ``acc[b, :2]`` as one 2-wide vector operation.

    Used with constant hessians; ``acc`` must be a C-contiguous
    ``(n_bins, 2)`` float64 array and ``b < n_bins`` (not checked).
    """
    sig = types.void(acc, b, g)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        i64 = ir.IntType(64)
        offset = builder.mul(builder.zext(args[1], i64), ir.Constant(i64, 2))
        vec_t = ir.VectorType(ir.DoubleType(), 2)
        ptr = builder.bitcast(builder.gep(ary.data, [offset]), vec_t.as_pointer())
        add = ir.Constant(vec_t, [0.0, 1.0])
        add = builder.insert_element(add, builder.fpext(args[2], ir.DoubleType()),
                                     ir.Constant(ir.IntType(32), 0))
        builder.store(builder.fadd(builder.load(ptr, align=8), add), ptr, align=8)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def _prefetch(typingctx, column, j):
    """Ask the CPU to start loading ``column[j]`` into cache (a hint: it
    never faults and changes no result). ``column`` is a 1-d uint8 array."""
    sig = types.void(column, j)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        index = builder.zext(args[1], ir.IntType(64))
        byte_ptr = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_ptr, i32, i32, i32]),
            "llvm.prefetch.p0")
        # (address, read, high temporal locality, data cache)
        address = builder.bitcast(builder.gep(ary.data, [index]), byte_ptr)
        builder.call(fn, [address, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True)
def _hist_rows(X_binned, sample_indices, use_indices, gradients, hessians, features,
               start, stop, hist, value_bins, ahead):
    """Accumulate features[start:stop] (at most 4, or a narrow group of 8,
    see :func:`_feature_groups`) into ``hist``, general hessians; with
    ``use_indices``, prefetch the columns ``ahead`` rows ahead (0: none).
    Only the bins a feature's rows can fall in, its first ``value_bins[f]``
    and the missing bin (the last), are cleared first."""
    n = gradients.shape[0] if not use_indices else sample_indices.shape[0]
    n_hinted = max(0, n - ahead) if ahead > 0 else 0
    missing_bin = missing_bin_of(hist)
    for k in range(start, stop):
        f = features[k]
        hist[f, :value_bins[f]] = 0.0
        hist[f, missing_bin] = 0.0
    if stop - start == NARROW_GROUP_FEATURES:
        _hist_rows_eight(X_binned, sample_indices, use_indices, gradients, hessians, features,
                         start, hist, n, n_hinted, ahead)
    elif stop - start == GROUP_FEATURES:
        c0 = X_binned[:, features[start]]
        c1 = X_binned[:, features[start + 1]]
        c2 = X_binned[:, features[start + 2]]
        c3 = X_binned[:, features[start + 3]]
        h0 = hist[features[start]]
        h1 = hist[features[start + 1]]
        h2 = hist[features[start + 2]]
        h3 = hist[features[start + 3]]
        if use_indices:
            for i in range(n):
                if i < n_hinted:
                    k = np.uint32(sample_indices[i + ahead])
                    _prefetch(c0, k)
                    _prefetch(c1, k)
                    _prefetch(c2, k)
                    _prefetch(c3, k)
                # uint32 index: no negative-index wraparound check.
                j = np.uint32(sample_indices[i])
                g = gradients[i]
                h = hessians[i]
                _add_ghc(h0, c0[j], g, h)
                _add_ghc(h1, c1[j], g, h)
                _add_ghc(h2, c2[j], g, h)
                _add_ghc(h3, c3[j], g, h)
        else:
            for i in range(n):
                g = gradients[i]
                h = hessians[i]
                _add_ghc(h0, c0[i], g, h)
                _add_ghc(h1, c1[i], g, h)
                _add_ghc(h2, c2[i], g, h)
                _add_ghc(h3, c3[i], g, h)
    else:
        for k in range(start, stop):
            col = X_binned[:, features[k]]
            hf = hist[features[k]]
            if use_indices:
                for i in range(n):
                    _add_ghc(hf, col[np.uint32(sample_indices[i])], gradients[i], hessians[i])
            else:
                for i in range(n):
                    _add_ghc(hf, col[i], gradients[i], hessians[i])


@njit(cache=True, inline="always")
def _hist_rows_eight(X_binned, sample_indices, use_indices, gradients, hessians, features,
                     start, hist, n, n_hinted, ahead):
    """The row loop of :func:`_hist_rows` for a narrow group of eight
    features, ``features[start:start + 8]`` (their bins cleared)."""
    c0 = X_binned[:, features[start]]
    c1 = X_binned[:, features[start + 1]]
    c2 = X_binned[:, features[start + 2]]
    c3 = X_binned[:, features[start + 3]]
    c4 = X_binned[:, features[start + 4]]
    c5 = X_binned[:, features[start + 5]]
    c6 = X_binned[:, features[start + 6]]
    c7 = X_binned[:, features[start + 7]]
    h0 = hist[features[start]]
    h1 = hist[features[start + 1]]
    h2 = hist[features[start + 2]]
    h3 = hist[features[start + 3]]
    h4 = hist[features[start + 4]]
    h5 = hist[features[start + 5]]
    h6 = hist[features[start + 6]]
    h7 = hist[features[start + 7]]
    if use_indices:
        for i in range(n):
            if i < n_hinted:
                k = np.uint32(sample_indices[i + ahead])
                _prefetch(c0, k)
                _prefetch(c1, k)
                _prefetch(c2, k)
                _prefetch(c3, k)
                _prefetch(c4, k)
                _prefetch(c5, k)
                _prefetch(c6, k)
                _prefetch(c7, k)
            j = np.uint32(sample_indices[i])
            g = gradients[i]
            h = hessians[i]
            _add_ghc(h0, c0[j], g, h)
            _add_ghc(h1, c1[j], g, h)
            _add_ghc(h2, c2[j], g, h)
            _add_ghc(h3, c3[j], g, h)
            _add_ghc(h4, c4[j], g, h)
            _add_ghc(h5, c5[j], g, h)
            _add_ghc(h6, c6[j], g, h)
            _add_ghc(h7, c7[j], g, h)
    else:
        for i in range(n):
            g = gradients[i]
            h = hessians[i]
            _add_ghc(h0, c0[i], g, h)
            _add_ghc(h1, c1[i], g, h)
            _add_ghc(h2, c2[i], g, h)
            _add_ghc(h3, c3[i], g, h)
            _add_ghc(h4, c4[i], g, h)
            _add_ghc(h5, c5[i], g, h)
            _add_ghc(h6, c6[i], g, h)
            _add_ghc(h7, c7[i], g, h)


@njit(cache=True)
def _feature_groups(features, value_bins, n_samples):
    """Cut ``features`` into the groups of :func:`_hist_rows` with general
    hessians, in order: with at most ``NARROW_GROUP_MAX_ROWS`` rows in the
    data (``n_samples``), eight features if their bins fit in
    ``NARROW_GROUP_BINS``; otherwise four (fewer for the last).

    Returns
    -------
    starts : ndarray of shape (n_groups + 1,), dtype int64
        Group ``k`` is ``features[starts[k]:starts[k + 1]]``.
    """
    n = features.shape[0]
    starts = np.empty(n // GROUP_FEATURES + 2, dtype=np.int64)
    n_groups = 0
    s = 0
    while s < n:
        starts[n_groups] = s
        n_groups += 1
        size = GROUP_FEATURES
        if n_samples <= NARROW_GROUP_MAX_ROWS and s + NARROW_GROUP_FEATURES <= n:
            bins = 0
            for k in range(s, s + NARROW_GROUP_FEATURES):
                bins += value_bins[features[k]] + 1
            if bins <= NARROW_GROUP_BINS:
                size = NARROW_GROUP_FEATURES
        s = min(s + size, n)
    starts[n_groups] = n
    return starts[:n_groups + 1]


@njit(cache=True)
def _hist_rows_const(X_binned, sample_indices, use_indices, gradients, hessian, features,
                     start, stop, hist, value_bins, ahead):
    """Accumulate features[start:stop] (at most 8) into ``hist``, constant
    hessian; ``value_bins`` and ``ahead`` as in :func:`_hist_rows`."""
    n = gradients.shape[0] if not use_indices else sample_indices.shape[0]
    n_hinted = max(0, n - ahead) if ahead > 0 else 0
    n_bins = hist.shape[1]
    missing_bin = missing_bin_of(hist)
    acc = np.empty((GROUP_FEATURES_CONST, n_bins, 2))
    for k in range(start, stop):
        acc[k - start, :value_bins[features[k]]] = 0.0
        acc[k - start, missing_bin] = 0.0
    if stop - start == GROUP_FEATURES_CONST:
        c0 = X_binned[:, features[start]]
        c1 = X_binned[:, features[start + 1]]
        c2 = X_binned[:, features[start + 2]]
        c3 = X_binned[:, features[start + 3]]
        c4 = X_binned[:, features[start + 4]]
        c5 = X_binned[:, features[start + 5]]
        c6 = X_binned[:, features[start + 6]]
        c7 = X_binned[:, features[start + 7]]
        a0, a1, a2, a3 = acc[0], acc[1], acc[2], acc[3]
        a4, a5, a6, a7 = acc[4], acc[5], acc[6], acc[7]
        if use_indices:
            for i in range(n):
                if i < n_hinted:
                    k = np.uint32(sample_indices[i + ahead])
                    _prefetch(c0, k)
                    _prefetch(c1, k)
                    _prefetch(c2, k)
                    _prefetch(c3, k)
                    _prefetch(c4, k)
                    _prefetch(c5, k)
                    _prefetch(c6, k)
                    _prefetch(c7, k)
                j = np.uint32(sample_indices[i])
                g = gradients[i]
                _add_gc(a0, c0[j], g)
                _add_gc(a1, c1[j], g)
                _add_gc(a2, c2[j], g)
                _add_gc(a3, c3[j], g)
                _add_gc(a4, c4[j], g)
                _add_gc(a5, c5[j], g)
                _add_gc(a6, c6[j], g)
                _add_gc(a7, c7[j], g)
        else:
            for i in range(n):
                g = gradients[i]
                _add_gc(a0, c0[i], g)
                _add_gc(a1, c1[i], g)
                _add_gc(a2, c2[i], g)
                _add_gc(a3, c3[i], g)
                _add_gc(a4, c4[i], g)
                _add_gc(a5, c5[i], g)
                _add_gc(a6, c6[i], g)
                _add_gc(a7, c7[i], g)
    else:
        for k in range(start, stop):
            col = X_binned[:, features[k]]
            a = acc[k - start]
            if use_indices:
                for i in range(n):
                    _add_gc(a, col[np.uint32(sample_indices[i])], gradients[i])
            else:
                for i in range(n):
                    _add_gc(a, col[i], gradients[i])
    for k in range(start, stop):
        hf = hist[features[k]]
        a = acc[k - start]
        for b in range(value_bins[features[k]]):
            _store_const(hf, a, b, hessian)
        _store_const(hf, a, missing_bin, hessian)


@njit(cache=True, inline="always")
def _store_const(hf, a, b, hessian):
    """Bin ``b`` of a constant-hessian accumulator as a histogram bin."""
    hf[b, 0] = a[b, 0]
    hf[b, 1] = a[b, 1] * hessian
    hf[b, 2] = a[b, 1]
    hf[b, 3] = 0.0
