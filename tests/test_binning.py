"""Tests of the BinMapper (quantile thresholds, missing bin, sparse input)."""

import numpy as np
import pytest
from scipy import sparse

from sklearn_ltr._gbdt.binning import ZERO_BAND, BinMapper, out_of_the_zero_band
from sklearn_ltr._gbdt.category_bins import categories_by_block, category_codes


def _bins_by_searchsorted(X, mapper):
    """Oracle: bin = number of thresholds strictly below x; NaN -> missing bin."""
    out = np.empty(X.shape, dtype=np.int64)
    for f, thr in enumerate(mapper.bin_thresholds_):
        col = X[:, f]
        out[:, f] = np.searchsorted(thr, col, side="left")
        out[np.isnan(col), f] = mapper.missing_values_bin_idx_
    return out


def test_few_distinct_values_get_one_bin_each():
    rng = np.random.default_rng(0)
    values = np.array([-3.0, 0.0, 0.5, 2.0, 10.0])
    X = rng.choice(values, size=(500, 1))
    mapper = BinMapper(max_bins=255).fit(X)
    assert np.allclose(mapper.bin_thresholds_[0], (values[:-1] + values[1:]) / 2)
    assert mapper.n_bins_non_missing_[0] == 5
    Xb = mapper.transform(X)
    # Each distinct value maps to its rank among the distinct values.
    np.testing.assert_array_equal(Xb[:, 0], np.searchsorted(values, X[:, 0]))


@pytest.mark.parametrize("values, expected", [
    # Distinct values: the midpoints, those in [-ZERO_BAND, ZERO_BAND) moved
    # to the edge of the band on zero's side, duplicates dropped.
    ([-1.0, -1e-40, 0.0, 1e-40, 1e-36, 2e-35, 1.0],
     [-0.5, np.nextafter(-ZERO_BAND, -np.inf), ZERO_BAND, 1.05e-35, 0.5]),
    ([-2.0, 2.0], [ZERO_BAND]),  # the midpoint 0 itself
    ([-3e-35, -1e-35, 1.0], [-2e-35, 0.5]),  # below the band: kept
])
def test_no_threshold_falls_in_the_band_lightgbm_reads_as_zero(values, expected):
    X = np.array(values)[:, None]
    mapper = BinMapper(max_bins=255).fit(np.repeat(X, 3, axis=0))
    np.testing.assert_array_equal(mapper.bin_thresholds_[0], expected)
    # Every value LightGBM reads as 0 shares zero's bin.
    tiny = np.array([[-ZERO_BAND], [-1e-36], [-0.0], [0.0], [1e-40], [ZERO_BAND]])
    assert len(np.unique(mapper.transform(tiny))) == 1


def test_quantile_thresholds_at_zero_move_out_of_the_band():
    rng = np.random.default_rng(3)
    column = np.where(rng.random(5000) < 0.5, 0.0, rng.standard_normal(5000))
    mapper = BinMapper(max_bins=32, subsample=None).fit(column[:, None])
    thresholds = mapper.bin_thresholds_[0]
    assert ZERO_BAND in thresholds and not np.any(np.abs(thresholds) < ZERO_BAND)
    assert np.all(np.diff(thresholds) > 0)


def test_many_values_match_numpy_midpoint_percentiles():
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.standard_normal(5000), rng.exponential(size=5000),
                         np.round(rng.standard_normal(5000), 1)])
    max_bins = 32
    mapper = BinMapper(max_bins=max_bins, subsample=None).fit(X)
    q = np.linspace(0, 100, max_bins + 1)[1:-1]
    for f in range(X.shape[1]):
        col = X[:, f]
        if len(np.unique(col)) <= max_bins:
            u = np.unique(col)
            expected = (u[:-1] + u[1:]) / 2
        else:
            expected = np.unique(np.percentile(col, q, method="midpoint"))
        # No threshold in LightGBM's zero band (the rounded column has them).
        expected = np.unique(out_of_the_zero_band(expected))
        np.testing.assert_allclose(mapper.bin_thresholds_[f], expected, rtol=1e-12)
        assert mapper.n_bins_non_missing_[f] == len(expected) + 1
    # Continuous features: bins hold nearly equal counts.
    counts = np.bincount(mapper.transform(X)[:, 0], minlength=max_bins)
    assert counts.min() >= 0.9 * len(X) / max_bins
    assert counts.max() <= 1.1 * len(X) / max_bins


def test_transform_agrees_with_thresholds_and_missing_bin():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((3000, 4))
    X[:, 2] = rng.integers(0, 7, 3000)
    X[rng.random(X.shape) < 0.1] = np.nan
    X[0, 0], X[1, 0] = np.inf, -np.inf
    mapper = BinMapper(max_bins=64, random_state=0).fit(X)
    Xb = mapper.transform(X)
    assert Xb.dtype == np.uint8 and Xb.flags.f_contiguous
    np.testing.assert_array_equal(Xb, _bins_by_searchsorted(X, mapper))
    assert mapper.missing_values_bin_idx_ == 64
    assert mapper.has_missing_values_.all()
    assert Xb[0, 0] == mapper.n_bins_non_missing_[0] - 1  # +inf: last value bin
    assert Xb[1, 0] == 0  # -inf: first bin
    assert np.all(np.isfinite(np.concatenate(mapper.bin_thresholds_)))
    # x <= thresholds[b]  <=>  bin(x) <= b, the rule prediction relies on.
    for f, thr in enumerate(mapper.bin_thresholds_):
        ok = ~np.isnan(X[:, f])
        for b, t in enumerate(thr):
            np.testing.assert_array_equal(X[ok, f] <= t, Xb[ok, f] <= b)


def test_has_missing_values_per_feature_and_all_nan_column():
    X = np.array([[1.0, np.nan, np.nan], [2.0, 3.0, np.nan], [3.0, 4.0, np.nan]])
    mapper = BinMapper().fit(X)
    np.testing.assert_array_equal(mapper.has_missing_values_, [False, True, True])
    assert mapper.n_bins_non_missing_[2] == 1
    Xb = mapper.transform(X)
    assert np.all(Xb[:, 2] == 255)


def test_row_order_selects_rows_without_copying_first():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((400, 3))
    mapper = BinMapper(random_state=0).fit(X)
    order = rng.permutation(400)[:250].astype(np.int64)
    np.testing.assert_array_equal(mapper.transform(X, row_order=order),
                                  mapper.transform(X)[order])


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_matches_dense(fmt):
    rng = np.random.default_rng(4)
    dense = rng.standard_normal((600, 5))
    dense[rng.random(dense.shape) < 0.7] = 0.0
    dense[:, 4] = 0.0  # an all-zero column
    X = getattr(sparse, f"{fmt}_matrix")(dense)
    m_dense = BinMapper(subsample=None).fit(dense)
    m_sparse = BinMapper(subsample=None).fit(X)
    for a, b in zip(m_dense.bin_thresholds_, m_sparse.bin_thresholds_):
        np.testing.assert_array_equal(a, b)
    order = rng.permutation(600)
    np.testing.assert_array_equal(m_sparse.transform(X, row_order=order),
                                  m_dense.transform(dense, row_order=order))


def test_subsample_is_seeded_and_bounded():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((5000, 2))
    a = BinMapper(max_bins=16, subsample=1000, random_state=7).fit(X)
    b = BinMapper(max_bins=16, subsample=1000, random_state=7).fit(X)
    c = BinMapper(max_bins=16, subsample=None).fit(X)
    for ta, tb, tc in zip(a.bin_thresholds_, b.bin_thresholds_, c.bin_thresholds_):
        np.testing.assert_array_equal(ta, tb)
        assert len(ta) == 15
        assert not np.array_equal(ta, tc)  # computed from a subsample indeed
        # Each threshold is a midpoint-percentile of some 1000-row subsample:
        # it lies within the data range.
        assert X.min() <= ta.min() and ta.max() <= X.max()


def test_sample_rows_and_feature_blocks_give_the_thresholds_of_the_copied_rows(monkeypatch):
    from sklearn_ltr._gbdt import binning

    rng = np.random.default_rng(8)
    X = rng.standard_normal((3000, 11))
    X[rng.random(X.shape) < 0.05] = np.nan
    rows = np.sort(rng.choice(3000, 700, replace=False))
    expected = BinMapper(max_bins=32, subsample=None).fit(X[rows])
    # Blocks of 4 features (the minimum width) over 11 features: 4 + 4 + 3.
    monkeypatch.setattr(binning, "_SORT_BLOCK_BYTES", 1)
    got = BinMapper(max_bins=32, subsample=None).fit(X, sample_rows=rows)
    for t_got, t_expected in zip(got.bin_thresholds_, expected.bin_thresholds_):
        np.testing.assert_array_equal(t_got, t_expected)
    np.testing.assert_array_equal(got.has_missing_values_, expected.has_missing_values_)
    np.testing.assert_array_equal(got.transform(X), expected.transform(X))
    with pytest.raises(ValueError, match="sample_rows"):
        BinMapper().fit(X, sample_rows=np.array([0, 3000]))


def test_invalid_parameters_and_inputs():
    X = np.ones((5, 2))
    with pytest.raises(ValueError, match="max_bins"):
        BinMapper(max_bins=256).fit(X)
    with pytest.raises(ValueError, match="subsample"):
        BinMapper(subsample=0).fit(X)
    with pytest.raises(ValueError, match="2-dimensional"):
        BinMapper().fit(np.ones(5))
    with pytest.raises(ValueError, match="not fitted"):
        BinMapper().transform(X)
    with pytest.raises(ValueError, match="features"):
        BinMapper().fit(X).transform(np.ones((5, 3)))
    with pytest.raises(ValueError, match="row_order"):
        BinMapper().fit(X).transform(X, row_order=np.array([0, 7]))


@pytest.mark.parametrize("layout", ["+inf", "-inf", "both", "distinct"])
def test_many_infinite_values_give_finite_increasing_thresholds(layout, tmp_path):
    """Quantiles that fall among infinite values used to give NaN
    thresholds (inf - inf), which a model file refused to load; the
    infinite values must still get bins of their own, apart from the
    finite ones."""
    from sklearn_ltr import LambdaMARTRanker, load_model

    rng = np.random.default_rng(0)
    n = 3000
    X = rng.normal(size=(n, 1))
    if layout == "+inf":
        X[:2500, 0] = np.inf
    elif layout == "-inf":
        X[:2500, 0] = -np.inf
    elif layout == "both":
        X[:1200, 0], X[1200:2400, 0] = np.inf, -np.inf
    else:  # few distinct values: the midpoint branch
        X[:, 0] = rng.choice([-np.inf, -1.0, 2.0, np.inf], n)
    mapper = BinMapper(max_bins=255).fit(X)
    thresholds = mapper.bin_thresholds_[0]
    assert np.all(np.isfinite(thresholds)) and np.all(np.diff(thresholds) > 0)
    Xb = mapper.transform(X)[:, 0]
    finite = np.isfinite(X[:, 0])
    if np.any(X[:, 0] == np.inf):
        assert not np.isin(Xb[X[:, 0] == np.inf], Xb[finite]).any()
    if np.any(X[:, 0] == -np.inf):
        assert not np.isin(Xb[X[:, 0] == -np.inf], Xb[finite]).any()
    np.testing.assert_array_equal(Xb, _bins_by_searchsorted(X, mapper)[:, 0])
    qid = np.repeat(np.arange(100), 30)
    y = (X[:, 0] > 0).astype(float) + rng.integers(0, 2, n)
    ranker = LambdaMARTRanker(n_estimators=3, random_state=0).fit(X, y, qid=qid)
    ranker.save_model(tmp_path / "model.zip")
    np.testing.assert_array_equal(load_model(tmp_path / "model.zip").predict(X), ranker.predict(X))


@pytest.mark.parametrize("n_blocks", [1, 2, 5])
def test_one_search_finds_each_value_in_its_block(n_blocks):
    # The oracle: category_codes against each block alone, as binning did
    # before the blocks were searched together.
    rng = np.random.default_rng(n_blocks)
    categories = rng.choice(np.arange(0.0, 5000.0), size=40 * n_blocks, replace=False)
    blocks = [np.sort(part) for part in np.array_split(rng.permutation(categories), n_blocks)]
    values = np.concatenate([rng.choice(categories, 300), [np.nan, -1.0, -0.0, 0.5, 4999.0,
                                                           6000.0, np.inf, -np.inf]])
    values = values[rng.permutation(values.size)]
    block, code = categories_by_block(values, blocks)
    expected_block = np.full(values.size, -1)
    expected_code = np.zeros(values.size, dtype=np.int64)
    for k, categories in enumerate(blocks):
        codes = category_codes(values, categories)
        assert not np.any((codes >= 0) & (expected_block >= 0))  # one block at most
        expected_block[codes >= 0] = k
        expected_code[codes >= 0] = codes[codes >= 0]
    np.testing.assert_array_equal(block, expected_block)
    np.testing.assert_array_equal(code, expected_code)
    assert (block >= 0).sum() >= 300  # the categories drawn were found
    block, code = categories_by_block(values, [np.empty(0)])
    assert np.all(block == -1)
