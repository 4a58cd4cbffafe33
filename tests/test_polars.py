"""polars DataFrames are taken wherever pandas DataFrames are: the ``qid``
column (fit, predict, score, rank, the scorers' fallback), category columns
(polars ``Categorical`` and ``Enum``), the refusal of text, and
``exclude_qid``.

The oracle of every model is the ranker fitted on NumPy arrays with ``qid=``
(and category codes with ``categorical_features=`` indices), which no
DataFrame code touches; pandas runs beside polars to show both agree.
"""

import io

import numpy as np
import pytest
from conftest import RANKER_IDS, RANKERS, fit_labels
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_ltr import LambdaMARTRanker, load_model
from sklearn_ltr.compose import exclude_qid
from sklearn_ltr.metrics import map_scorer, ndcg_score, ndcg_scorer

pl = pytest.importorskip("polars")
pd = pytest.importorskip("pandas")

SMALL = dict(n_estimators=6, max_leaf_nodes=7, min_samples_leaf=3, random_state=0)


def _data(n_queries=30, size=8, seed=0):
    """Features, labels and query ids; the ids are not sorted, so rows of a
    query are not contiguous, and are strings in some tests."""
    rng = np.random.default_rng(seed)
    n = n_queries * size
    X = rng.normal(size=(n, 3))
    qid = rng.permutation(np.repeat(np.arange(n_queries), size))
    y = np.clip(np.round(X[:, 0] + rng.normal(scale=0.5, size=n) + 1), 0, 3)
    return X, y, qid


def _frame(library, X, qid=None, **extra):
    """A pandas or polars DataFrame of the features ``f0, f1, ...``, the
    ``extra`` columns, and a ``qid`` column last if given."""
    columns = {f"f{j}": X[:, j] for j in range(X.shape[1])}
    columns.update(extra)
    if qid is not None:
        columns["qid"] = qid
    return pl.DataFrame(columns) if library == "polars" else pd.DataFrame(columns)


def _assert_same_trees(got, expected):
    assert got.n_iter_ == expected.n_iter_
    for a, b in zip(got._booster.trees, expected._booster.trees):
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("library", ["pandas", "polars"])
@pytest.mark.parametrize("cls", RANKERS, ids=RANKER_IDS)
def test_the_qid_column_is_found_and_dropped_by_every_method(cls, library):
    X, y, qid = _data()
    y = fit_labels(cls, y)
    frame = _frame(library, X, qid)
    model = cls(**SMALL).fit(frame, y)
    oracle = cls(**SMALL).fit(X, y, qid=qid)
    _assert_same_trees(model, oracle)
    assert list(model.feature_names_in_) == ["f0", "f1", "f2"]
    assert model.predict(frame).tobytes() == oracle.predict(X).tobytes()
    np.testing.assert_array_equal(model.rank(frame), oracle.rank(X, qid=qid))
    assert model.score(frame, y) == oracle.score(X, y, qid=qid)
    assert model.score(frame, y) == ndcg_score(y, oracle.predict(X), qid=qid)
    # An explicit qid equal to the column is fine; a different one is refused.
    assert model.score(frame, y, qid=qid) == model.score(frame, y)
    with pytest.raises(ValueError, match="X also has a 'qid' column, and the two differ"):
        model.score(frame, y, qid=qid[::-1])


@pytest.mark.parametrize("library", ["pandas", "polars"])
def test_string_query_ids_in_a_column(library):
    X, y, qid = _data()
    names = np.array([f"q{q:03d}" for q in qid], dtype=object)
    model = LambdaMARTRanker(**SMALL).fit(_frame(library, X, names), y)
    _assert_same_trees(model, LambdaMARTRanker(**SMALL).fit(X, y, qid=qid))


@pytest.mark.parametrize("library", ["pandas", "polars"])
def test_scorers_read_the_qid_column(library):
    X, y, qid = _data()
    features = _frame(library, X)
    model = LambdaMARTRanker(**SMALL).fit(features, y, qid=qid)
    frame = _frame(library, X, qid)
    for scorer, metric in ((ndcg_scorer(5), ndcg_score), (map_scorer(threshold=2), None)):
        assert scorer(model, frame, y) == scorer(model, features, y, qid=qid)
        if metric is not None:
            assert scorer(model, frame, y) == metric(y, model.predict(features), qid=qid, k=5)
    with pytest.raises(ValueError, match="got no query ids"):
        ndcg_scorer(5)(model, features, y)


def _category_codes(values, categories):
    """Position of each value among ``categories``, NaN for None: the
    codes a ranker fitted on arrays is given."""
    where = {c: float(i) for i, c in enumerate(categories)}
    return np.array([np.nan if v is None else where[v] for v in values])


@pytest.mark.parametrize("kind", ["Categorical", "Enum"])
def test_polars_category_columns_are_categorical_like_pandas_ones(kind):
    X, y, qid = _data(n_queries=40)
    rng = np.random.default_rng(1)
    shop = rng.choice(["d", "a", "c", "b"], size=len(y)).astype(object)
    shop[::17] = None
    y = y + (shop == "b")
    # Categorical: the sorted values (as pandas sorts them); Enum: its list.
    categories = ["a", "b", "c", "d"] if kind == "Categorical" else ["c", "a", "d", "b"]
    dtype = pl.Categorical if kind == "Categorical" else pl.Enum(categories)
    frame = _frame("polars", X, qid, shop=pl.Series(list(shop), dtype=pl.String).cast(dtype))
    pandas_frame = _frame("pandas", X, qid,
                          shop=pd.Categorical(shop, categories=categories))
    model = LambdaMARTRanker(**SMALL).fit(frame, y)
    codes = np.column_stack([X, _category_codes(shop, categories)])
    oracle = LambdaMARTRanker(**SMALL, categorical_features=[3]).fit(codes, y, qid=qid)
    np.testing.assert_array_equal(model.is_categorical_, [False, False, False, True])
    assert sum(int(t["is_categorical"].sum()) for t in oracle._booster.trees) > 0
    _assert_same_trees(model, oracle)
    _assert_same_trees(LambdaMARTRanker(**SMALL).fit(pandas_frame, y), oracle)
    assert model.predict(frame).tobytes() == oracle.predict(codes).tobytes()
    # A pandas frame predicts as the polars one it stands for, and back.
    assert model.predict(pandas_frame).tobytes() == oracle.predict(codes).tobytes()
    # Unseen values are missing, as categories never seen in training.
    unseen = frame.with_columns(pl.Series("shop", ["zz"] * len(y)).cast(pl.Categorical))
    missing = np.column_stack([X, np.full(len(y), np.nan)])
    assert model.predict(unseen).tobytes() == oracle.predict(missing).tobytes()
    # Saved and loaded, it still reads the polars column by its categories.
    buffer = io.BytesIO()
    model.save_model(buffer)
    buffer.seek(0)
    assert load_model(buffer).predict(frame).tobytes() == oracle.predict(codes).tobytes()


def test_a_category_column_of_fit_must_stay_one():
    X, y, qid = _data()
    shop = pl.Series(["a", "b"] * (len(y) // 2)).cast(pl.Categorical)
    model = LambdaMARTRanker(**SMALL).fit(_frame("polars", X, qid, shop=shop), y)
    with pytest.raises(ValueError, match=r"Column 'shop' of X has dtype String, but it was a "
                       r"category column in fit; convert it with X\.with_columns\("
                       r"pl\.col\('shop'\)\.cast\(pl\.Categorical\)\)"):
        model.predict(_frame("polars", X, qid, shop=shop.cast(pl.String)))


def test_polars_text_columns_are_refused_with_their_name_row_and_value():
    X, y, qid = _data()
    text = [None, "x"] + ["1.5"] * (len(y) - 2)
    with pytest.raises(ValueError, match=r"X has non-numeric columns 'note' \(String; 'x' at "
                       r"row 1\); .*Encode categories and text first"):
        LambdaMARTRanker(**SMALL).fit(_frame("polars", X, qid, note=text), y)
    with pytest.raises(ValueError, match=r"'note' \(String; '1\.5' at row 0\).*convert first, "
                       r"e\.g\. X\.with_columns\(pl\.col\('note'\)\.cast\(pl\.Float64\)\)"):
        LambdaMARTRanker(**SMALL).fit(_frame("polars", X, qid, note=["1.5"] * len(y)), y)


def test_exclude_qid_takes_polars_frames():
    X, y, qid = _data()
    frame = _frame("polars", X, qid)
    # The scaler on the frame's feature columns (on an array it may round
    # differently in the last bit, from another memory layout).
    scaled = StandardScaler().fit_transform(frame.drop("qid"))
    oracle = LambdaMARTRanker(**SMALL).fit(scaled, y, qid=qid)
    # pandas out by default, polars out when asked: the qid column reaches
    # the ranker either way.
    for step in (exclude_qid(StandardScaler()),
                 exclude_qid(StandardScaler()).set_output(transform="polars")):
        pipe = make_pipeline(step, LambdaMARTRanker(**SMALL)).fit(frame, y)
        _assert_same_trees(pipe[-1], oracle)
        assert pipe.predict(frame).tobytes() == oracle.predict(scaled).tobytes()
        assert list(pipe[-1].feature_names_in_) == ["f0", "f1", "f2"]
    with pytest.raises(ValueError, match="exclude_qid needs X as a DataFrame"):
        exclude_qid(StandardScaler()).fit(X)
