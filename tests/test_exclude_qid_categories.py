"""exclude_qid in front of a ranker on a frame with category columns: the
documented pipeline without metadata routing works, the category columns
reach the ranker untouched and are split on by category.

The oracle is the ranker fitted on the same frame with the scaler applied
to its numeric columns by hand.
"""

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_ltr import LambdaMARTRanker
from sklearn_ltr.compose import exclude_qid

pd = pytest.importorskip("pandas")

SMALL = dict(n_estimators=8, max_leaf_nodes=7, min_samples_leaf=3, random_state=0)


def _data(seed=0, n_queries=40, size=8):
    rng = np.random.default_rng(seed)
    n = n_queries * size
    X = rng.normal(5.0, 3.0, size=(n, 2))
    shop = rng.choice(["c", "a", "b", "d"], size=n).astype(object)
    qid = np.repeat(np.arange(n_queries), size)
    y = np.clip(np.round((X[:, 0] - 5) / 6 + 2 * (shop == "b") + (shop == "d") + 0.5), 0, 4)
    return X, shop, qid, y


def _frame(X, shop, qid):
    # Numeric columns first, so the ranker sees the columns in the order
    # exclude_qid puts them (transformed first, passed-through after).
    return pd.DataFrame({"f0": X[:, 0], "f1": X[:, 1], "shop": pd.Categorical(shop),
                         "qid": qid})


def _assert_same_model(got, expected):
    assert got.n_iter_ == expected.n_iter_
    for a, b in zip(got._booster.trees, expected._booster.trees):
        assert a.tobytes() == b.tobytes()


def test_pipeline_with_category_column_equals_hand_scaled_frame():
    X, shop, qid, y = _data()
    frame = _frame(X, shop, qid)
    pipe = make_pipeline(exclude_qid(StandardScaler()), LambdaMARTRanker(**SMALL))
    pipe.fit(frame, y)

    scaled = frame.copy()
    scaler = StandardScaler().fit(frame[["f0", "f1"]])
    scaled[["f0", "f1"]] = scaler.transform(frame[["f0", "f1"]])
    oracle = LambdaMARTRanker(**SMALL).fit(scaled, y)

    ranker = pipe[-1]
    assert list(ranker.feature_names_in_) == ["f0", "f1", "shop"]
    np.testing.assert_array_equal(ranker.is_categorical_, [False, False, True])
    assert sum(int(t["is_categorical"].sum()) for t in oracle._booster.trees) > 0
    _assert_same_model(ranker, oracle)
    assert pipe.predict(frame).tobytes() == oracle.predict(scaled).tobytes()

    # New rows, with a category fit never saw: scaled with fit's statistics,
    # the unseen category missing in both.
    X_new, shop_new, qid_new, _ = _data(seed=1, n_queries=5)
    shop_new[:7] = "zz"
    new = _frame(X_new, shop_new, qid_new)
    new_scaled = new.copy()
    new_scaled[["f0", "f1"]] = scaler.transform(new[["f0", "f1"]])
    assert pipe.predict(new).tobytes() == oracle.predict(new_scaled).tobytes()


def test_category_columns_pass_through_with_their_dtype():
    X, shop, qid, _ = _data()
    frame = _frame(X, shop, qid).iloc[:, [2, 0, 3, 1]]  # shop, f0, qid, f1
    out = exclude_qid(StandardScaler()).fit_transform(frame)
    assert list(out.columns) == ["f0", "f1", "shop", "qid"]
    assert out["shop"].dtype == frame["shop"].dtype
    assert out["shop"].equals(frame["shop"])
    np.testing.assert_array_equal(out["qid"].to_numpy(), qid)


def test_categorical_transform_hands_category_columns_to_the_transformer():
    X, shop, qid, _ = _data()
    frame = _frame(X, shop, qid)
    # What a numeric transformer does with them: scikit-learn's own error.
    with pytest.raises(ValueError, match="could not convert string to float"):
        exclude_qid(StandardScaler(), categorical="transform").fit(frame)
    with pytest.raises(ValueError, match=r"categorical must be 'passthrough' .* or "
                       r"'transform' .*; got 'drop'"):
        exclude_qid(StandardScaler(), categorical="drop")


def test_polars_category_columns_pass_through_too():
    pl = pytest.importorskip("polars")
    X, shop, qid, y = _data()
    frame = pl.DataFrame({"f0": X[:, 0], "f1": X[:, 1],
                          "shop": pl.Series(list(shop)).cast(pl.Categorical), "qid": qid})
    step = exclude_qid(StandardScaler()).set_output(transform="polars")
    pipe = make_pipeline(step, LambdaMARTRanker(**SMALL)).fit(frame, y)
    pandas_pipe = make_pipeline(exclude_qid(StandardScaler()), LambdaMARTRanker(**SMALL))
    pandas_pipe.fit(_frame(X, shop, qid), y)
    np.testing.assert_array_equal(pipe[-1].is_categorical_, [False, False, True])
    _assert_same_model(pipe[-1], pandas_pipe[-1])
