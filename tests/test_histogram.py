"""Tests of the histogram kernels against brute-force NumPy sums."""

import numpy as np
import pytest
from _threads import assert_ran_in_parallel, needs_two_threads, parallel_kernels_only

from sklearn_ltr._gbdt.histogram import (
    _build_histogram,
    _build_histogram_const,
    _build_histogram_root,
    _build_histogram_root_const,
    _build_histograms,
    _gather_gradients,
    allocate_histograms,
)
from sklearn_ltr._gbdt.histogram_rows import (
    NARROW_GROUP_MAX_ROWS,
    _feature_groups,
    histogram_bins,
    missing_bin_of,
)
from sklearn_ltr._utils.threads import numba_threads

N_BINS = 17  # 16 value bins + the missing bin


def _data(n=1000, n_features=11, seed=0):
    rng = np.random.default_rng(seed)
    X = np.asfortranarray(rng.integers(0, N_BINS, size=(n, n_features), dtype=np.uint8))
    g = rng.standard_normal(n).astype(np.float32)
    h = rng.uniform(0.1, 2, n).astype(np.float32)
    return X, g, h


def _brute_force(X, g, h, rows):
    """Oracle with np.add.at, in the kernels' (sum_g, sum_h, count, 0) layout,
    the padding bins after the missing one zero."""
    out = np.zeros((X.shape[1], histogram_bins(N_BINS), 4))
    for f in range(X.shape[1]):
        b = X[rows, f]
        np.add.at(out[f, :, 0], b, g[rows].astype(np.float64))
        np.add.at(out[f, :, 1], b, h[rows].astype(np.float64))
        np.add.at(out[f, :, 2], b, 1.0)
    return out


def _build(X, g, h, rows, mask=None):
    mask = np.ones(X.shape[1], np.uint8) if mask is None else mask
    og = np.empty(len(rows), np.float32)
    oh = np.empty(len(rows), np.float32)
    _gather_gradients(rows, g, h, og, oh)
    hist = allocate_histograms(1, X.shape[1], N_BINS)[0]
    _build_histogram(X, rows, og, oh, mask, hist)
    return hist


@pytest.mark.parametrize("max_bins", [15, 31, 63, 127, 255])
def test_features_start_an_odd_number_of_cache_lines_apart(max_bins):
    # At a power of two bytes apart, every feature's first bins would fall
    # in the same cache sets (see the layout in sklearn_ltr._gbdt.histogram).
    hist = allocate_histograms(1, 3, max_bins + 1)[0]
    assert hist.strides[0] == 32 * histogram_bins(max_bins + 1)
    assert hist.strides[0] % 64 == 0 and (hist.strides[0] // 64) % 2 == 1
    assert missing_bin_of(hist) == max_bins


def test_node_histogram_equals_brute_force():
    X, g, h = _data()
    rows = np.sort(np.random.default_rng(1).choice(len(g), 300, replace=False)).astype(np.int32)
    np.testing.assert_allclose(_build(X, g, h, rows), _brute_force(X, g, h, rows), rtol=1e-12)


def test_root_histogram_equals_brute_force_and_node_build():
    X, g, h = _data()
    mask = np.ones(X.shape[1], np.uint8)
    hist = allocate_histograms(1, X.shape[1], N_BINS)[0]
    _build_histogram_root(X, g, h, mask, hist)
    rows = np.arange(len(g), dtype=np.int32)
    np.testing.assert_allclose(hist, _brute_force(X, g, h, rows), rtol=1e-12)
    # Same rows in the same order: bit-identical.
    np.testing.assert_array_equal(hist, _build(X, g, h, rows))


def test_histogram_is_independent_of_sample_order():
    X, g, h = _data(seed=2)
    rows = np.arange(0, len(g), 3, dtype=np.int32)
    shuffled = np.random.default_rng(3).permutation(rows).astype(np.int32)
    a, b = _build(X, g, h, rows), _build(X, g, h, shuffled)
    np.testing.assert_array_equal(a[..., 2], b[..., 2])
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_feature_mask_leaves_other_features_untouched():
    X, g, h = _data(seed=6)
    rows = np.arange(len(g), dtype=np.int32)
    mask = np.array([1, 0, 1, 0, 1, 1, 1, 1, 1, 1, 0], np.uint8)
    hist = allocate_histograms(1, X.shape[1], N_BINS)[0]
    hist[:] = -7.0
    og, oh = g.copy(), h.copy()
    _build_histogram(X, rows, og, oh, mask, hist)
    expected = _brute_force(X, g, h, rows)
    on, off = mask == 1, mask == 0
    np.testing.assert_allclose(hist[on][:, :N_BINS], expected[on][:, :N_BINS], rtol=1e-12)
    assert np.all(hist[off] == -7.0)
    hist[:] = -7.0
    _build_histogram_root(X, g, h, mask, hist)
    np.testing.assert_allclose(hist[on][:, :N_BINS], expected[on][:, :N_BINS], rtol=1e-12)
    assert np.all(hist[off] == -7.0)
    hist[:] = -7.0
    _build_histogram_root_const(X, g, 1.0, mask, hist)
    ones = np.ones_like(h)
    expected = _brute_force(X, g, ones, rows)
    np.testing.assert_allclose(hist[on][:, :N_BINS], expected[on][:, :N_BINS], rtol=1e-12)
    assert np.all(hist[off] == -7.0)


def test_narrow_features_of_small_data_are_grouped_by_eight():
    features = np.arange(20, dtype=np.int64)
    # 12 features of 16 value bins (8 of them: 136 bins with the missing
    # ones), then 4 of 255, then 4 of 2.
    value_bins = np.array([16] * 12 + [255] * 4 + [2] * 4, dtype=np.int64)
    small = _feature_groups(features, value_bins, NARROW_GROUP_MAX_ROWS)
    np.testing.assert_array_equal(small, [0, 8, 12, 16, 20])
    large = _feature_groups(features, value_bins, NARROW_GROUP_MAX_ROWS + 1)
    np.testing.assert_array_equal(large, [0, 4, 8, 12, 16, 20])
    # Wide features first: they stay a group of four, and the narrow ones
    # after them make two groups of eight (the last mixing 16 and 2 bins).
    wide_first = np.r_[12:16, 0:12, 16:20].astype(np.int64)
    np.testing.assert_array_equal(_feature_groups(wide_first, value_bins, 1000), [0, 4, 12, 20])


def test_groups_of_eight_equal_features_built_one_at_a_time():
    # Every feature has 16 value bins, so the 11 features make a group of
    # eight and three built alone; one at a time, each is built alone.
    X, g, h = _data(n=3000, seed=9)
    assert _feature_groups(np.arange(11, dtype=np.int64),
                           np.full(11, N_BINS - 1, dtype=np.int64), X.shape[0])[1] == 8
    rows = np.sort(np.random.default_rng(4).choice(len(g), 1200, replace=False)).astype(np.int32)
    together = _build(X, g, h, rows)
    for f in range(X.shape[1]):
        mask = np.zeros(X.shape[1], np.uint8)
        mask[f] = 1
        np.testing.assert_array_equal(_build(X, g, h, rows, mask)[f], together[f])
    root = allocate_histograms(1, X.shape[1], N_BINS)[0]
    _build_histogram_root(X, g, h, np.ones(X.shape[1], np.uint8), root)
    np.testing.assert_array_equal(root, _build(X, g, h, np.arange(len(g), dtype=np.int32)))


@needs_two_threads
def test_histogram_same_on_one_and_two_threads():
    X, g, h = _data(n=5000, n_features=8, seed=7)
    rows = np.arange(1, 5000, 2, dtype=np.int32)
    with numba_threads(1):  # the serial twin
        ref = _build(X, g, h, rows)
    # 20,000 cells: below the parallel kernel's threshold, so forced.
    with numba_threads(2), parallel_kernels_only() as picked:
        np.testing.assert_array_equal(_build(X, g, h, rows), ref)
    assert_ran_in_parallel(picked, "_build_histogram_of_rows")


@pytest.mark.parametrize("n_features", [3, 8, 13])
@pytest.mark.parametrize("hessian", [1.0, 0.25])
def test_constant_hessian_kernels_equal_brute_force(n_features, hessian):
    X, g, _, = _data(n_features=n_features, seed=8)[:3]
    h = np.full(len(g), hessian, np.float32)
    mask = np.ones(n_features, np.uint8)
    rows = np.arange(0, len(g), 2, dtype=np.int32)
    hist = allocate_histograms(1, n_features, N_BINS)[0]
    _build_histogram_const(X, rows, g[rows], hessian, mask, hist)
    np.testing.assert_allclose(hist, _brute_force(X, g, h, rows), rtol=1e-12)
    _build_histogram_root_const(X, g, hessian, mask, hist)
    np.testing.assert_allclose(hist, _brute_force(X, g, h, np.arange(len(g))), rtol=1e-12)


@pytest.mark.parametrize("hessian", [None, 0.5])
@pytest.mark.parametrize("n_node", [1, 31, 32, 33, 200])
def test_prefetching_node_builds_equal_brute_force(n_node, hessian):
    # Nodes under 1/16 of the rows are built with prefetch hints; the rows
    # near the end of the node (the last 32) have no row to prefetch.
    from sklearn_ltr._gbdt import histogram

    X, g, h = _data(n=5000, n_features=9, seed=3)
    rows = np.sort(np.random.default_rng(4).choice(len(g), n_node, replace=False)).astype(np.int32)
    assert histogram._prefetch_distance(n_node, len(g)) > 0
    hist = allocate_histograms(1, X.shape[1], N_BINS)[0]
    mask = np.ones(X.shape[1], np.uint8)
    if hessian is None:
        _build_histogram(X, rows, g[rows], h[rows], mask, hist)
    else:
        h = np.full(len(g), hessian, np.float32)
        _build_histogram_const(X, rows, g[rows], hessian, mask, hist)
    np.testing.assert_allclose(hist, _brute_force(X, g, h, rows), rtol=1e-12)


@pytest.mark.parametrize("n_features", [5, 8, 13])
@pytest.mark.parametrize("hessian", [None, 0.5])
def test_value_bins_write_the_used_bins_and_missing_and_nothing_else(n_features, hessian):
    # Narrow features: feature f takes values below value_bins[f] or the
    # missing bin. Those bins and the missing bin must equal the brute-force
    # sums over a dirty buffer (a histogram slot reused from another node),
    # and the bins in between must be left as they were.
    rng = np.random.default_rng(n_features)
    n = 700
    value_bins = rng.integers(1, N_BINS - 1, n_features).astype(np.int64)
    value_bins[0] = N_BINS - 1  # a feature using every value bin
    X = np.column_stack([rng.integers(0, v, n) for v in value_bins]).astype(np.uint8)
    X[rng.random(X.shape) < 0.1] = N_BINS - 1
    X = np.asfortranarray(X)
    g = rng.standard_normal(n).astype(np.float32)
    h = (rng.uniform(0.1, 2, n) if hessian is None else np.full(n, hessian)).astype(np.float32)
    mask = np.ones(n_features, np.uint8)
    rows = np.sort(rng.choice(n, 250, replace=False)).astype(np.int32)
    # The padding bins after the missing bin are never written either.
    written = np.zeros((n_features, histogram_bins(N_BINS)), dtype=bool)
    for f, v in enumerate(value_bins):
        written[f, :v] = written[f, N_BINS - 1] = True
    for name, rows_used in (("root", np.arange(n, dtype=np.int32)), ("node", rows)):
        hist = allocate_histograms(1, n_features, N_BINS)[0]
        hist[:] = -7.0
        if hessian is None and name == "root":
            _build_histogram_root(X, g, h, mask, hist, value_bins)
        elif hessian is None:
            _build_histogram(X, rows, g[rows], h[rows], mask, hist, value_bins)
        elif name == "root":
            _build_histogram_root_const(X, g, hessian, mask, hist, value_bins)
        else:
            _build_histogram_const(X, rows, g[rows], hessian, mask, hist, value_bins)
        expected = _brute_force(X, g, h, rows_used)
        np.testing.assert_allclose(hist[written], expected[written], rtol=1e-12)
        assert np.all(hist[~written] == -7.0), name


def _level(sizes=(40, 900, 1, 33, 600), n_features=9, seed=11):
    """Rows of disjoint nodes of the given sizes: ranges of one permutation
    of the rows, with rows of no node between them, each sorted as a
    partition leaves a node's rows."""
    gap = 50
    n = sum(sizes) + gap * (len(sizes) + 1)
    X, g, h = _data(n=n, n_features=n_features, seed=seed)
    rng = np.random.default_rng(seed)
    X[rng.random(X.shape) < 0.1] = N_BINS - 1  # missing values
    indices = rng.permutation(n).astype(np.int32)
    starts = gap * np.arange(1, len(sizes) + 1) + np.r_[0, np.cumsum(sizes)[:-1]]
    stops = starts + np.array(sizes)
    for lo, hi in zip(starts, stops):
        indices[lo:hi].sort()
    return X, g, h, indices, starts.astype(np.int64), stops.astype(np.int64)


@pytest.mark.parametrize("hessian", [None, 0.5])
@pytest.mark.parametrize("parallel", [False, pytest.param(True, marks=needs_two_threads)])
def test_one_pass_over_nodes_equals_brute_force_of_each_node(hessian, parallel):
    X, g, h, indices, starts, stops = _level()
    n_features = X.shape[1]
    if hessian is not None:
        h = np.full(len(g), hessian, np.float32)
    mask = np.ones(n_features, np.uint8)
    mask[3] = 0
    pool = allocate_histograms(8, n_features, N_BINS)
    pool[:] = -7.0
    slots = np.array([6, 0, 3, 1, 7], dtype=np.int64)
    og = np.full(len(g), np.nan, np.float32)
    oh = np.full(len(g), np.nan, np.float32)
    args = (X, indices, starts, stops, int((stops - starts).sum()), g, h, hessian, mask, pool,
            slots, None, og, oh)
    if parallel:
        # Below the parallel kernels' size threshold, so forced.
        with numba_threads(2), parallel_kernels_only() as picked:
            _build_histograms(*args)
        assert_ran_in_parallel(picked, ("_build_histograms_of_nodes",
                                        "_build_histograms_of_nodes_const"))
    else:
        with numba_threads(1):
            _build_histograms(*args)
    on = mask == 1
    for k, slot in enumerate(slots):
        rows = indices[starts[k]:stops[k]]
        # np.add.at adds in row order, as the kernels do: equal bit for bit.
        np.testing.assert_array_equal(pool[slot][on][:, :N_BINS, :3],
                                      _brute_force(X, g, h, rows)[on][:, :N_BINS, :3])
        assert np.all(pool[slot][~on] == -7.0)
        assert np.all(pool[slot][:, N_BINS:] == -7.0)  # the padding
    for slot in set(range(8)) - set(slots):
        assert np.all(pool[slot] == -7.0)


@pytest.mark.parametrize("hessian", [None, 0.5])
def test_one_pass_over_nodes_equals_the_node_by_node_builds(hessian):
    X, g, h, indices, starts, stops = _level((7, 2000, 120, 1, 64, 999, 300), 13, 12)
    mask = np.ones(X.shape[1], np.uint8)
    pool = allocate_histograms(7, X.shape[1], N_BINS)
    og, oh = np.empty_like(g), np.empty_like(h)
    _build_histograms(X, indices, starts, stops, int((stops - starts).sum()), g, h, hessian,
                      mask, pool, np.arange(7, dtype=np.int64), None, og, oh)
    for k in range(7):
        rows = indices[starts[k]:stops[k]]
        hist = allocate_histograms(1, X.shape[1], N_BINS)[0]
        if hessian is None:
            _build_histogram(X, rows, g[rows], h[rows], mask, hist)
        else:
            _build_histogram_const(X, rows, g[rows], hessian, mask, hist)
        np.testing.assert_array_equal(pool[k], hist)
