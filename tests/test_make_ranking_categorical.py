"""make_ranking's categorical columns (n_categorical, n_categories), and that
the option leaves the output without it unchanged."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from sklearn_ltr.datasets import make_ranking
from sklearn_ltr.datasets import _synthetic
from sklearn_ltr.metrics import ndcg_score


def _fingerprint(X, y, qid):
    """What identifies a draw without depending on the last bits of its
    floats, which move with the CPU and the BLAS: the integer outputs
    exactly (labels, query ids and where the NaN are, as digit strings and
    index sums) and three sums of X, the last weighted by row and column so
    that values moved between cells show."""
    X = np.asarray(X, dtype=np.float64)
    rows, columns = np.indices(X.shape)
    nan = np.isnan(X)
    values = np.where(nan, 0.0, X)
    weights = (rows + 1.0) * (columns + 1.0) / X.size
    return dict(
        shape=X.shape,
        labels="".join(str(int(v)) for v in y),
        qid="".join(str(int(q)) for q in qid),
        nan=(int(nan.sum()), int(np.flatnonzero(nan).sum())),
        sums=(values.sum(), (values**2).sum(), (values * weights).sum()),
    )


# Fingerprints of draws made by make_ranking at commit 5061855, before the
# categorical option existed. Should a NumPy upgrade move them, recompute
# them with _fingerprint at that commit, not with today's code.
OLD_DRAWS = [
    (dict(n_queries=7, docs_per_query=9, n_features=12, random_state=0),
     dict(shape=(58, 12), labels="0302123120000003200102304402332141112410100000000000101000",
          qid="0000000001111112222222223333333333333344444445555555666666", nan=(0, 0),
          sums=(3408.668970379422, 212711.64629280416, 977.3831179511085))),
    (dict(n_queries=5, docs_per_query=6, n_features=40, n_informative=5, noise=0.5,
          missing_rate=0.1, dtype=np.float32, shuffle_rows=True, random_state=123),
     dict(shape=(32, 40), labels="01101300400000200400030020220112",
          qid="23041433030321042433043100443010", nan=(130, 83329),
          sums=(4888.796900671063, 394390.89389909036, 1249.920750222226))),
    (dict(n_queries=3, docs_per_query=4, random_state=2024),
     dict(shape=(15, 136), labels="000000142110100", qid="000000111112222", nan=(0, 0),
          sums=(8410.92840470891, 550324.5485160017, 2309.1171544663507))),
]


@pytest.mark.parametrize("kwargs, old", OLD_DRAWS)
def test_without_categorical_columns_output_is_the_old_one(kwargs, old):
    X, y, qid = make_ranking(**kwargs)
    assert X.dtype == kwargs.get("dtype", np.float64)
    new = _fingerprint(X, y, qid)
    # Integers exactly; the sums to far less than a changed draw would move them.
    np.testing.assert_allclose(new.pop("sums"), old["sums"], rtol=1e-6)
    assert new == {k: v for k, v in old.items() if k != "sums"}
    # n_categories means nothing without categorical columns: the same draw.
    for a, b in zip(make_ranking(**kwargs, n_categorical=0, n_categories=7), (X, y, qid),
                    strict=True):
        assert_array_equal(a, b)


def _codes(X, n_categorical):
    return X[:, X.shape[1] - n_categorical:]


def test_shape_and_codes():
    X, y, qid = make_ranking(60, docs_per_query=30, n_features=10, n_categorical=3,
                             n_categories=[2, 50, 300], random_state=0)
    assert X.shape == (y.shape[0], 10) and X.dtype == np.float64
    codes = _codes(X, 3)
    assert_array_equal(codes, np.round(codes))
    for j, m in enumerate([2, 50, 300]):
        assert codes[:, j].min() >= 0 and codes[:, j].max() <= m - 1
    assert np.unique(codes[:, 0]).size == 2 and np.unique(codes[:, 1]).size == 50
    # The numeric columns are not codes: continuous columns remain.
    assert max(np.unique(col).size for col in X[:, :7].T) > 1000
    assert set(np.unique(y)) <= {0.0, 1.0, 2.0, 3.0, 4.0}

    X32, _, _ = make_ranking(20, docs_per_query=10, n_features=5, n_categorical=1,
                             n_categories=1000, dtype=np.float32, random_state=0)
    codes32 = _codes(X32, 1)
    assert X32.dtype == np.float32 and codes32.max() < 1000
    assert_array_equal(codes32, np.round(codes32))


def test_deterministic_and_the_default_informative_count_excludes_categories():
    a = make_ranking(20, docs_per_query=10, n_features=25, n_categorical=10, random_state=4)
    b = make_ranking(20, docs_per_query=10, n_features=25, n_categorical=10, random_state=4)
    for u, v in zip(a, b):
        assert_array_equal(u, v)
    # Default n_informative = min(20, 15): accepted although 20 > 15 numeric columns.
    assert a[0].shape[1] == 25


@pytest.mark.parametrize("shuffle_rows", [False, True])
def test_numeric_columns_are_those_drawn_without_categories(shuffle_rows):
    kwargs = dict(n_queries=80, docs_per_query=30, shuffle_rows=shuffle_rows, random_state=6)
    X, y, qid = make_ranking(n_features=24, n_categorical=4, **kwargs)
    X0, y0, qid0 = make_ranking(n_features=20, **kwargs)
    assert_array_equal(X[:, :20], X0)
    assert_array_equal(qid, qid0)
    assert np.mean(y != y0) > 0.2  # the categories move the labels


def test_frequencies_follow_zipf_with_codes_in_random_order():
    m = 100
    X, _, _ = make_ranking(300, docs_per_query=60, n_features=12, n_categorical=4,
                           n_categories=m, random_state=1)
    harmonic = np.sum(1.0 / np.arange(1, m + 1))
    for col in _codes(X, 4).T:
        counts = np.bincount(col.astype(int), minlength=m)
        share = np.sort(counts)[::-1] / counts.sum()
        # Zipf's law: the r-th most frequent has share 1 / (r * H_m); the top
        # one about 19%, the top ten about 56%, the last half about 13%.
        assert abs(share[0] - 1 / harmonic) < 0.015, share[0]
        assert abs(share[:10].sum() - np.sum(1.0 / np.arange(1, 11)) / harmonic) < 0.02
        assert abs(share[50:].sum() - np.sum(1.0 / np.arange(51, 101)) / harmonic) < 0.02
        # Codes are not ranked by frequency (a random permutation: rank
        # correlation about 0 +- 0.1).
        code_rank = np.argsort(np.argsort(-counts, kind="stable"))
        assert abs(np.corrcoef(code_rank, np.arange(m))[0, 1]) < 0.35


def test_uniform_frequencies_use_every_category_alike_at_high_cardinality():
    m = 1000
    X, _, _ = make_ranking(200, docs_per_query=60, n_features=8, n_categorical=2,
                           n_categories=m, category_frequencies="uniform", random_state=2)
    zipf, _, _ = make_ranking(200, docs_per_query=60, n_features=8, n_categorical=2,
                              n_categories=m, random_state=2)
    for col, zipf_col in zip(_codes(X, 2).T, _codes(zipf, 2).T):
        counts = np.bincount(col.astype(int), minlength=m)
        expected = col.size / m  # about 12 rows a category
        # Multinomial counts: the top category near the mean, not Zipf's 13%.
        assert counts.max() < expected + 6 * np.sqrt(expected)
        assert (counts > 0).mean() > 0.99
        assert np.bincount(zipf_col.astype(int)).max() / zipf_col.size > 0.1
    # Only the frequencies change: the numeric columns are the same.
    assert_array_equal(X[:, :6], zipf[:, :6])


def _between_category_variance(col, y):
    """Variance of y explained by the category means (row-weighted)."""
    _, inverse, counts = np.unique(col, return_inverse=True, return_counts=True)
    means = np.bincount(inverse, y) / counts
    return np.sum(counts * (means - y.mean()) ** 2) / y.size


def test_categories_shift_the_labels():
    X, y, _ = make_ranking(300, docs_per_query=60, n_features=30, n_categorical=4,
                           random_state=0)
    rng = np.random.default_rng(0)
    for col in _codes(X, 4).T:
        real = _between_category_variance(col, y)
        # A shuffled column has the same categories and sizes, no effect:
        # what remains is the sampling noise of 100 means.
        shuffled = max(_between_category_variance(rng.permutation(col), y) for _ in range(5))
        assert real > 3 * shuffled, (real, shuffled)


def _largest_slope_spread(X, y, col, n_numeric, n_top=6):
    """Largest range, over numeric columns, of their correlation with y
    within each of the ``n_top`` most frequent categories of ``col``."""
    values, counts = np.unique(col, return_counts=True)
    top = values[np.argsort(-counts)[:n_top]]
    corr = np.array([[np.corrcoef(X[col == c, f], y[col == c])[0, 1] for f in range(n_numeric)]
                     for c in top])
    return float(np.max(corr.max(axis=0) - corr.min(axis=0)))


@pytest.mark.parametrize("seed", [0, 1])
def test_first_categorical_column_changes_a_factors_effect(seed):
    X, y, _ = make_ranking(300, docs_per_query=60, n_features=20, n_categorical=2,
                           n_categories=20, random_state=seed)
    first, second = _codes(X, 2).T
    interacting = _largest_slope_spread(X, y, first, 18)
    shift_only = _largest_slope_spread(X, y, second, 18)
    shuffled = _largest_slope_spread(X, y, np.random.default_rng(0).permutation(first), 18)
    assert interacting > 2.5 * max(shift_only, shuffled), (interacting, shift_only, shuffled)


def test_categorical_share_of_the_signal_is_about_40_percent():
    """The documented share, on a fresh sample of the same structure."""
    rng = np.random.default_rng(0)
    structure = _synthetic._Structure(rng, 20, 10)
    categories = _synthetic._Categories(rng, np.array([100, 30, 500]), structure.k)
    structure.calibrate(rng, 1.0, categories, rng)
    sizes = np.full(500, 100)
    u = structure.factors(rng, sizes)
    numeric = structure.relevance(u)
    categorical = categories.effect(categories.draw(rng, u.shape[0]), u)
    share = np.var(categorical) / np.var(numeric + categorical)
    assert 0.37 < share < 0.43, share


def test_missing_values_and_shuffled_rows_reach_the_categorical_columns():
    kwargs = dict(n_queries=30, docs_per_query=20, n_features=8, n_categorical=2, random_state=5)
    X, y, qid = make_ranking(**kwargs)
    Xm, ym, _ = make_ranking(**kwargs, missing_rate=0.2)
    nan = np.isnan(_codes(Xm, 2))
    assert 0.15 < nan.mean() < 0.25
    assert_array_equal(ym, y)
    assert_array_equal(Xm[~np.isnan(Xm)], X[~np.isnan(Xm)])
    Xs, ys, qs = make_ranking(**kwargs, shuffle_rows=True)
    rows = np.column_stack([X, y, qid])
    rows_s = np.column_stack([Xs, ys, qs])
    assert_array_equal(rows[np.lexsort(rows.T)], rows_s[np.lexsort(rows_s.T)])


def test_using_the_categories_pays_and_the_numeric_features_still_matter():
    lightgbm = pytest.importorskip("lightgbm", reason="LightGBM is the reference model here")
    n_features, n_categorical = 30, 4
    X, y, qid = make_ranking(400, docs_per_query=40, n_features=n_features,
                             n_categorical=n_categorical, random_state=0)
    train, test = qid < 300, qid >= 300
    group = np.unique(qid[train], return_counts=True)[1]
    categorical = list(range(n_features - n_categorical, n_features))

    def ndcg(columns, categorical_feature):
        model = lightgbm.LGBMRanker(n_estimators=100, verbose=-1, n_jobs=1, random_state=0)
        model.fit(X[train][:, columns], y[train], group=group,
                  categorical_feature=categorical_feature)
        return ndcg_score(y[test], model.predict(X[test][:, columns]), qid=qid[test], k=10)

    everything = ndcg(list(range(n_features)), categorical)
    numeric_only = ndcg(list(range(n_features - n_categorical)), "auto")
    categories_only = ndcg(categorical, list(range(n_categorical)))
    assert everything > numeric_only + 0.03, (everything, numeric_only)
    assert everything > categories_only + 0.1, (everything, categories_only)


@pytest.mark.parametrize(
    "kwargs, match",
    [({"n_features": 5, "n_categorical": 5}, "n_categorical=5 leaves no numeric column"),
     ({"n_features": 5, "n_categorical": -1}, "n_categorical must be an integer >= 0"),
     ({"n_features": 5, "n_categorical": 2, "n_informative": 4}, "n_informative=4 exceeds the 3"),
     ({"n_features": 5, "n_categorical": 2, "n_categories": 1}, "n_categories must be"),
     ({"n_features": 5, "n_categorical": 2, "n_categories": 2**24 + 1}, "n_categories must be"),
     ({"n_features": 5, "n_categorical": 2, "n_categories": 10.0}, "n_categories must be"),
     ({"n_features": 5, "n_categorical": 2, "n_categories": True}, "n_categories must be"),
     ({"n_features": 5, "n_categorical": 2, "n_categories": [10]}, "n_categories must be"),
     ({"n_features": 5, "n_categorical": 2, "n_categories": [10, 2.5]}, "n_categories must be"),
     ({"n_features": 5, "n_categorical": 2, "n_categories": "many"}, "n_categories must be"),
     ({"n_features": 5, "n_categorical": 2, "category_frequencies": "pareto"},
      "category_frequencies must be 'zipf' or 'uniform'")],
)
def test_rejects_bad_categorical_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_ranking(**kwargs)
