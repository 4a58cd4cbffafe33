"""Tests of split finding (against brute force) and of the partition kernel."""

import numpy as np
import pytest

from sklearn_ltr._gbdt.common import bitset_below, bitset_of, in_bitset
from sklearn_ltr._gbdt.histogram import _build_histogram, allocate_histograms
from sklearn_ltr._gbdt.scan_parts import any_threshold_leaves_enough_rows
from sklearn_ltr._gbdt.splitting import (
    _FEATURES_PER_ITEM,
    _best_split_of_each_feature_serial,
    _partition,
    find_best_splits,
    left_bins,
    scan_order,
    split_scratch,
)

from _engine_helpers import find_best_split

MISSING = 8  # max_bins = 8, missing bin index 8


def _make(seed, n=200, n_features=4, missing_features=(1, 3)):
    rng = np.random.default_rng(seed)
    n_bins_nm = rng.integers(2, MISSING + 1, size=n_features).astype(np.uint32)
    X = np.empty((n, n_features), dtype=np.uint8)
    for f in range(n_features):
        X[:, f] = rng.integers(0, n_bins_nm[f], n)
        if f in missing_features:
            X[rng.random(n) < 0.2, f] = MISSING
    X = np.asfortranarray(X)
    g = rng.standard_normal(n).astype(np.float32) + X[:, 0] * 0.3
    h = rng.uniform(0.2, 1.5, n).astype(np.float32)
    return X, g, h, n_bins_nm


def _hist(X, g, h, rows, mask):
    hist = allocate_histograms(1, X.shape[1], MISSING + 1)[0]
    _build_histogram(X, rows, g[rows], h[rows], mask, hist)
    return hist


def _brute_force(X, g, h, rows, n_bins_nm, mask, msl, min_hess, l2):
    """Every (feature, threshold, missing direction) with the gain formula."""
    g = g[rows].astype(np.float64)
    h = h[rows].astype(np.float64)
    G, H = g.sum(), h.sum()

    def term(a, b):
        return a * a / (b + l2)

    best = []
    for f in np.flatnonzero(mask):
        col = X[rows, f]
        missing = col == MISSING
        for b in range(int(n_bins_nm[f])):
            for mleft in ([False, True] if missing.any() else [False]):
                left = (col <= b) & ~missing
                if mleft:
                    left |= missing
                cl, cr = left.sum(), (~left).sum()
                hl, hr = h[left].sum(), h[~left].sum()
                if min(cl, cr) < msl or min(hl, hr) < min_hess or cl == 0 or cr == 0:
                    continue
                gl = g[left].sum()
                gain = term(gl, hl) + term(G - gl, hr) - term(G, H)
                if gain <= 0:  # min_gain_to_split = 0: strictly positive gain only
                    continue
                best.append((gain, f, b, mleft, gl, hl, cl))
    return max(best, key=lambda t: t[0]) if best else None


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("msl,min_hess,l2", [(1, 0.0, 0.0), (15, 1e-3, 0.0), (5, 20.0, 3.0)])
def test_best_split_equals_brute_force(seed, msl, min_hess, l2):
    X, g, h, nb = _make(seed)
    rng = np.random.default_rng(100 + seed)
    rows = np.sort(rng.choice(len(g), 150, replace=False)).astype(np.int32)
    mask = np.ones(X.shape[1], np.uint8)
    if seed % 2:
        mask[rng.integers(X.shape[1])] = 0
    hist = _hist(X, g, h, rows, mask)
    G = float(g[rows].astype(np.float64).sum())
    H = float(h[rows].astype(np.float64).sum())
    res = find_best_split(hist, G, H, len(rows), nb, MISSING, mask, msl, min_hess, 0.0, l2)
    expected = _brute_force(X, g, h, rows, nb, mask, msl, min_hess, l2)
    if expected is None:
        assert res[1] == -1
        return
    gain, f, b, mleft, gl, hl, cl, categories = res
    assert categories is None
    assert gain == pytest.approx(expected[0], rel=1e-9, abs=1e-9)
    assert mask[f]
    # The returned split really has that gain and those left statistics.
    col = X[rows, f]
    left = np.where(col == MISSING, bool(mleft), col <= b)
    assert cl == left.sum()
    assert gl == pytest.approx(g[rows][left].astype(np.float64).sum(), rel=1e-9, abs=1e-9)
    assert hl == pytest.approx(h[rows][left].astype(np.float64).sum(), rel=1e-9)
    assert min(cl, len(rows) - cl) >= msl
    assert min(hl, H - hl) >= min_hess


def test_learned_missing_direction():
    # Missing rows have the gradients of the high bins: they must go right.
    n = 400
    x = np.repeat(np.arange(4, dtype=np.uint8), n // 4)
    g = np.where(x < 2, -1.0, 1.0).astype(np.float32)
    x[::10] = MISSING
    g[::10] = 1.0
    X = np.asfortranarray(x[:, None])
    h = np.ones(n, np.float32)
    rows = np.arange(n, dtype=np.int32)
    mask = np.ones(1, np.uint8)
    hist = _hist(X, g, h, rows, mask)
    nb = np.array([4], np.uint32)
    res = find_best_split(hist, float(g.sum()), float(n), n, nb, MISSING, mask, 1, 0.0, 0.0, 0.0)
    assert (res[1], res[2], res[3]) == (0, 1, 0)
    # Flip the missing rows' gradients: now missing goes left.
    g[::10] = -1.0
    hist = _hist(X, g, h, rows, mask)
    res = find_best_split(hist, float(g.sum()), float(n), n, nb, MISSING, mask, 1, 0.0, 0.0, 0.0)
    assert (res[1], res[2], res[3]) == (0, 1, 1)


def test_no_missing_in_node_sends_nan_to_larger_child():
    n = 100
    x = np.zeros(n, np.uint8)
    x[:30] = 1  # right child: 30 rows
    g = np.where(x == 1, 1.0, -1.0).astype(np.float32)
    X = np.asfortranarray(x[:, None])
    h = np.ones(n, np.float32)
    rows = np.arange(n, dtype=np.int32)
    mask = np.ones(1, np.uint8)
    nb = np.array([2], np.uint32)
    res = find_best_split(_hist(X, g, h, rows, mask), float(g.sum()), float(n), n, nb,
                          MISSING, mask, 1, 0.0, 0.0, 0.0)
    assert res[1] == 0 and res[3] == 1  # 70 rows left
    x[:] = 1 - x  # now 70 rows right
    X = np.asfortranarray(x[:, None])
    g = -g
    res = find_best_split(_hist(X, g, h, rows, mask), float(g.sum()), float(n), n, nb,
                          MISSING, mask, 1, 0.0, 0.0, 0.0)
    assert res[1] == 0 and res[3] == 0


def test_min_gain_to_split_and_constant_feature():
    X, g, h, nb = _make(0, missing_features=())
    rows = np.arange(len(g), dtype=np.int32)
    mask = np.ones(X.shape[1], np.uint8)
    hist = _hist(X, g, h, rows, mask)
    G, H = float(g.sum(dtype=np.float64)), float(h.sum(dtype=np.float64))
    best = find_best_split(hist, G, H, len(g), nb, MISSING, mask, 1, 0.0, 0.0, 0.0)
    assert best[1] >= 0
    none = find_best_split(hist, G, H, len(g), nb, MISSING, mask, 1, 0.0, best[0], 0.0)
    assert none[1] == -1
    # A single-bin feature without missing values cannot be split.
    one = np.array([1, 1, 1, 1], np.uint32)
    X1 = np.asfortranarray(np.zeros_like(X))
    hist = _hist(X1, g, h, rows, mask)
    assert find_best_split(hist, G, H, len(g), one, MISSING, mask, 1, 0.0, 0.0, 0.0)[1] == -1


@pytest.mark.parametrize("mleft", [0, 1])
@pytest.mark.parametrize("n, n_rows", [(200, 120), (5000, 5000)])
def test_partition_is_stable_and_matches_mask(mleft, n, n_rows):
    X, _, _, _ = _make(3, n=n)
    rng = np.random.default_rng(9)
    rows = np.sort(rng.choice(len(X), n_rows, replace=False)).astype(np.int32)
    work = rows.copy()
    buf = np.empty(len(X), np.int32)
    n_left = _partition(work, X, 1, left_bins(3, mleft, None, MISSING), buf)
    col = X[rows, 1]
    go_left = np.where(col == MISSING, bool(mleft), col <= 3)
    assert n_left == go_left.sum()
    np.testing.assert_array_equal(work[:n_left], rows[go_left])
    np.testing.assert_array_equal(work[n_left:], rows[~go_left])


@pytest.mark.parametrize("masked_out", [(), (2,)])
def test_split_search_with_sibling_subtracts_then_searches(masked_out):
    # The grower gives the larger child the parent's histogram and the
    # smaller child's; the search turns it into the larger child's and
    # finds its split, as if that histogram had been built from its rows.
    X, g, h, nb = _make(3, n=400)
    mask = np.ones(X.shape[1], np.uint8)
    mask[list(masked_out)] = 0
    rows = np.arange(len(g), dtype=np.int32)
    small = np.sort(np.random.default_rng(0).choice(rows, 120, replace=False)).astype(np.int32)
    large = np.setdiff1d(rows, small).astype(np.int32)
    parent, hist_small, hist_large = (_hist(X, g, h, r, mask) for r in (rows, small, large))
    G = float(g[large].sum(dtype=np.float64))
    H = float(h[large].sum(dtype=np.float64))
    derived = find_best_split(parent.copy(), G, H, len(large), nb, MISSING, mask, 5, 0.0, 0.0,
                              0.1, sibling=hist_small)
    direct = find_best_split(hist_large, G, H, len(large), nb, MISSING, mask, 5, 0.0, 0.0, 0.1)
    assert derived[1:4] == direct[1:4] and derived[6] == direct[6]
    np.testing.assert_allclose(derived[0], direct[0], rtol=1e-9)
    in_place = parent.copy()
    find_best_split(in_place, G, H, len(large), nb, MISSING, mask, 5, 0.0, 0.0, 0.1,
                    sibling=hist_small)
    # Only the bins that scans read are subtracted: value bins and missing bin.
    for f in range(X.shape[1]):
        read = np.r_[np.arange(nb[f]), MISSING]
        expected = parent[f, read] - hist_small[f, read] if mask[f] else parent[f, read]
        np.testing.assert_array_equal(in_place[f, read], expected)
    # Both children in one call, as the grower makes it, give the same splits.
    Gs, Hs = float(g[small].sum(dtype=np.float64)), float(h[small].sum(dtype=np.float64))
    both = find_best_splits(
        [(parent.copy(), hist_small, G, H, len(large)), (hist_small, None, Gs, Hs, len(small))],
        nb, MISSING, mask, 5, 0.0, 0.0, 0.1)
    alone = find_best_split(hist_small, Gs, Hs, len(small), nb, MISSING, mask, 5, 0.0, 0.0, 0.1)
    assert both == [derived, alone]


@pytest.mark.parametrize("n_bins", [0, 1, 31, 32, 33, 200, 255, 256])
def test_bitsets_hold_exactly_their_bins(n_bins):
    # Oracle: the bits read back one by one with the scan's own in_bitset.
    below = bitset_below(n_bins)
    assert below.dtype == np.uint32 and below.shape == (8,)
    assert [b for b in range(256) if in_bitset(below, b)] == list(range(n_bins))
    np.testing.assert_array_equal(bitset_of(range(n_bins)), below)
    chosen = np.random.default_rng(n_bins).choice(256, size=min(n_bins, 40), replace=False)
    assert [b for b in range(256) if in_bitset(bitset_of(chosen), b)] == sorted(chosen)
    # A split's left bins: its value bins <= threshold, and the missing bin
    # (here 255 or 8) if missing values go left.
    if 1 <= n_bins <= 255:
        for missing_bin in (255, 8):
            for missing_left in (0, 1):
                bins = left_bins(n_bins - 1, missing_left, None, missing_bin)
                expected = set(range(n_bins)) | ({missing_bin} if missing_left else set())
                assert {b for b in range(256) if in_bitset(bins, b)} == expected


def _every_threshold_best(h, n_bins, missing_bin, has_missing, sum_g, sum_h, count,
                          parent_term, min_samples_leaf, min_hessian_to_split, l2):
    # Oracle of the one-pass scan: the gain of every threshold of both
    # directions, left sums accumulated in bin order, the first strictly
    # largest kept (lowest bin, then missing right before missing left).
    from sklearn_ltr._gbdt.scan_parts import threshold_gain

    best = (-np.inf, 0, 0, 0.0, 0.0, 0.0)
    for d in range(2 if has_missing else 1):
        gl, hl, cl = (h[missing_bin, 0], h[missing_bin, 1], h[missing_bin, 2]) if d else (0.0,) * 3
        last = n_bins if has_missing and d == 0 else n_bins - 1
        for b in range(last):
            gl, hl, cl = gl + h[b, 0], hl + h[b, 1], cl + h[b, 2]
            gain = threshold_gain(gl, hl, cl, sum_g, sum_h, count, parent_term,
                                  min_samples_leaf, min_hessian_to_split, l2)
            if gain > best[0]:
                best = (gain, b, d, gl, hl, cl)
    return best


@pytest.mark.parametrize("n_bins", [1, 2, 5, 31, 32, 33, 64, 255])
@pytest.mark.parametrize("with_missing", [False, True])
def test_one_pass_scan_equals_every_threshold_oracle(n_bins, with_missing):
    # The one-pass scan computes a gain only where both children may hold
    # min_samples_leaf rows and the screen cannot rule it out, yet finds the
    # oracle's split bit for bit: gain, bin, direction and sums, ties and
    # invalid thresholds included. With a floor (a gain another feature
    # reached), the same split whenever its gain reaches the floor, and
    # otherwise a lower gain of one of its own thresholds, or -inf.
    from sklearn_ltr._gbdt.splitting import _best_threshold_one_pass

    rng = np.random.default_rng(n_bins)
    missing_bin = 255
    for trial in range(50):
        h = np.zeros((256, 4))
        counts = rng.integers(0, 6, n_bins + 1).astype(float)
        if trial % 5 == 0:
            counts[: n_bins // 2] = 0  # empty bins: repeated left sums, tied gains
        h[:n_bins, 2] = counts[:n_bins]
        h[:n_bins, 1] = counts[:n_bins] * rng.choice([0.25, 1.0], n_bins)
        h[:n_bins, 0] = np.round(rng.standard_normal(n_bins), 1) * counts[:n_bins]
        if trial % 3 == 0:  # a rising trend: gains rising over most thresholds
            h[:n_bins, 0] += np.linspace(-2.0, 2.0, n_bins) * counts[:n_bins]
        if with_missing:
            h[missing_bin] = (rng.standard_normal(), counts[-1] * 0.5, counts[-1], 0.0)
        has_missing = h[missing_bin, 2] > 0
        sum_g, sum_h, count = h[:, 0].sum(), h[:, 1].sum(), h[:, 2].sum()
        l2 = 0.5 if trial % 2 else 0.0
        for min_samples_leaf in (1, 3, 12, 40):
            args = (h, n_bins, missing_bin, has_missing, sum_g, sum_h, count,
                    sum_g ** 2 / (sum_h + l2) if sum_h + l2 > 0 else 0.0, min_samples_leaf,
                    1e-3, l2)
            oracle = _every_threshold_best(*args)
            assert _best_threshold_one_pass(*args, -np.inf) == oracle
            if oracle[0] == -np.inf:
                continue
            for floor in (oracle[0], np.nextafter(oracle[0], -np.inf), oracle[0] - 1.0,
                          np.nextafter(oracle[0], np.inf), oracle[0] + 0.5):
                found = _best_threshold_one_pass(*args, floor)
                if floor <= oracle[0]:
                    assert found == oracle
                else:
                    assert found[0] <= oracle[0]


# Sums of every scale overflow numpy's reference computations at times.
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_gain_screen_rules_out_only_lower_gains():
    # gain_cannot_beat(..., screen_bound(best, ...)) may be True only where
    # the gain threshold_gain computes is not larger than best: checked
    # against bests just below, at and just above each gain (one unit in the
    # last place), over sums of every scale. And it does rule out gains well
    # below the best, or the scan would save nothing.
    from sklearn_ltr._gbdt.scan_parts import gain_cannot_beat, screen_bound, threshold_gain

    rng = np.random.default_rng(7)
    ruled_out = 0
    for trial in range(20000):
        # Gradient sums down to where their squares underflow.
        g_scale = 10.0 ** rng.integers(-170, 150)
        scale = 10.0 ** rng.integers(-150, 150)
        sum_g = rng.standard_normal() * g_scale
        sum_h = rng.uniform(0.5, 50.0) * scale
        gl = rng.standard_normal() * g_scale
        hl = rng.uniform(-0.1, 1.1) * sum_h  # some invalid thresholds
        l2 = (0.0, 1e-3, 1.0)[trial % 3] * scale
        min_hessian = (0.0, 1e-3 * scale)[trial % 2]
        parent = sum_g ** 2 / (sum_h + l2)
        gain = threshold_gain(gl, hl, 50.0, sum_g, sum_h, 100.0, parent, 1, min_hessian, l2)
        for best in (np.nextafter(gain, -np.inf), gain, np.nextafter(gain, np.inf),
                     gain * 2.0 + abs(parent), gain - abs(gain) * 1e-9):
            if not np.isfinite(best):
                continue
            bound = screen_bound(best, parent, sum_h, l2, min_hessian)
            if gain_cannot_beat(gl, hl, sum_g, sum_h, l2, bound):
                assert not gain > best
        if np.isfinite(gain):
            ruled_out += gain_cannot_beat(
                gl, hl, sum_g, sum_h, l2,
                screen_bound(gain * 2.0 + abs(parent), parent, sum_h, l2, min_hessian))
    assert ruled_out > 1000
    # No screen where a valid threshold's denominators may leave [1e-100,
    # 1e100], or before any gain.
    for sum_h, l2, min_hessian in [(1e101, 0.0, 1.0), (1.0, 0.0, 0.0), (1.0, 1e-101, 1e-101),
                                   (1.0, 1.0, -0.5)]:
        assert screen_bound(5.0, 1.0, sum_h, l2, min_hessian) == -np.inf
    assert screen_bound(-np.inf, 1.0, 10.0, 1.0, 1e-3) == -np.inf
    assert screen_bound(5.0, 1.0, 10.0, 0.0, 1e-3) == pytest.approx(6.0)


@pytest.mark.parametrize("n_threads", [1, 2, 3, 4])
@pytest.mark.parametrize("categorical", [[], [3], [20, 21, 22, 23, 24, 25, 26, 27], [0, 5, 9, 26]],
                         ids=["none", "one", "last_eight", "spread"])
def test_scan_order_shares_the_categorical_features_between_the_threads(n_threads, categorical):
    n_features = 28
    is_categorical = np.zeros(n_features, dtype=np.uint8)
    is_categorical[categorical] = 1
    order = scan_order(is_categorical, n_threads)
    # Every feature once, in items of _FEATURES_PER_ITEM slots.
    assert order.shape[0] % _FEATURES_PER_ITEM == 0
    np.testing.assert_array_equal(np.sort(order[order >= 0]), np.arange(n_features))
    if not categorical or n_threads == 1:
        np.testing.assert_array_equal(order[:n_features], np.arange(n_features))
        return
    # n_threads shares of equal length, the t-th holding the t-th contiguous
    # share of the numeric features, then of the categorical ones.
    shares = order.reshape(n_threads, -1)
    numeric = np.flatnonzero(is_categorical == 0)
    for share, numeric_part, categorical_part in zip(
            shares, np.array_split(numeric, n_threads), np.array_split(categorical, n_threads)):
        share = share[share >= 0]
        np.testing.assert_array_equal(share, np.concatenate([numeric_part, categorical_part]))


@pytest.mark.parametrize("n_threads", [1, 2])
def test_scan_in_the_shared_order_finds_the_splits_of_the_plain_order(n_threads):
    # The order changes only which thread scans a feature: every feature's
    # result and the best feature are those of the order 0, 1, 2, ...
    rng = np.random.default_rng(5)
    n_features, missing = 13, 63
    is_categorical = np.zeros(n_features, dtype=np.uint8)
    is_categorical[[9, 10, 11, 12]] = 1
    hist = np.zeros((n_features, missing + 1, 4))
    counts = rng.integers(0, 60, (n_features, 40)).astype(float)
    hist[:, :40, 0] = rng.normal(size=(n_features, 40)) * counts
    hist[:, :40, 1] = counts
    hist[:, :40, 2] = counts
    totals = np.array([hist[0, :, 0].sum(), hist[0, :, 1].sum(), hist[0, :, 2].sum()])
    n_bins_nm = np.full(n_features, 40, dtype=np.int64)
    mask = np.ones(n_features, dtype=np.uint8)
    results = []
    for order in (np.arange(16), scan_order(is_categorical, n_threads)):
        per_feature, best = np.empty((1, n_features, 6)), np.empty(2, dtype=np.int64)
        work = split_scratch(n_features, missing + 1)[1]
        _best_split_of_each_feature_serial(
            hist, hist, hist, hist, np.zeros(1, dtype=np.uint8), totals[None], n_bins_nm, missing,
            mask, is_categorical, 5, 0.0, 0.0, per_feature, work,
            np.where(order < n_features, order, -1), None, None, best, None)
        results.append((per_feature.copy(), best[0]))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    assert results[0][1] == results[1][1]


def _thresholds_leaving_enough_rows_by_rows(bins, n_bins_nm, missing_bin, min_samples_leaf):
    """The oracle: every threshold the scans try, its children counted row by row."""
    has_missing = np.any(bins == missing_bin)
    for missing_left in ([False, True] if has_missing else [False]):
        last = n_bins_nm if has_missing and not missing_left else n_bins_nm - 1
        for b in range(last):
            left = (bins <= b) & (bins != missing_bin)
            if missing_left:
                left |= bins == missing_bin
            if left.sum() >= min_samples_leaf and (~left).sum() >= min_samples_leaf:
                return True
    return False


@pytest.mark.parametrize("seed", range(40))
def test_any_threshold_leaves_enough_rows_matches_a_count_of_the_rows(seed):
    rng = np.random.default_rng(seed)
    n_bins_nm, missing_bin = int(rng.integers(1, 6)), 7
    n = int(rng.integers(1, 60))
    # Few value bins, a dominant one, and sometimes missing values: the
    # cases where only one direction of the missing bin has a threshold.
    weights = rng.dirichlet(np.full(n_bins_nm + 1, 0.4))
    weights[-1] *= rng.random() < 0.6
    weights /= weights.sum()
    bins = rng.choice(np.r_[np.arange(n_bins_nm), missing_bin], size=n, p=weights)
    hist = np.zeros((missing_bin + 1, 4))
    np.add.at(hist[:, 2], bins, 1.0)
    for min_samples_leaf in (1, 3, 8, 20):
        expected = _thresholds_leaving_enough_rows_by_rows(bins, n_bins_nm, missing_bin,
                                                           min_samples_leaf)
        assert any_threshold_leaves_enough_rows(hist, n_bins_nm, missing_bin, float(n),
                                                min_samples_leaf) == expected


def test_only_the_missing_left_direction_leaves_enough_rows():
    # 10 rows in bin 0, 30 in bin 1, 15 missing, 20 rows a child: missing
    # right, no threshold works; missing left, bin 0 and the missing rows
    # against bin 1 does.
    hist = np.zeros((8, 4))
    hist[0, 2], hist[1, 2], hist[7, 2] = 10, 30, 15
    assert any_threshold_leaves_enough_rows(hist, 2, 7, 55.0, 20)
    hist[7, 2] = 0
    assert not any_threshold_leaves_enough_rows(hist, 2, 7, 40.0, 20)
