"""Tests for sklearn_ltr.compose.exclude_qid."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.decomposition import PCA
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_ltr.compose import exclude_qid

pd = pytest.importorskip("pandas")


def _frame(qid_column="qid"):
    rng = np.random.default_rng(0)
    X = rng.normal(5.0, 3.0, size=(40, 3))
    qid = np.repeat([10, 20, 30, 40], 10)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df.insert(1, qid_column, qid)  # not the last column on input
    return df, X, qid


def test_scales_features_and_keeps_qid():
    df, X, qid = _frame()
    out = exclude_qid(StandardScaler()).fit_transform(df)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == ["a", "b", "c", "qid"]  # unprefixed names
    # Oracle: StandardScaler on the feature columns alone.
    assert_allclose(out[["a", "b", "c"]].to_numpy(), StandardScaler().fit_transform(X))
    assert_array_equal(out["qid"].to_numpy(), qid)
    assert out["qid"].dtype == df["qid"].dtype


def test_transform_uses_fitted_statistics():
    df, X, _ = _frame()
    ct = exclude_qid(StandardScaler()).fit(df.iloc[:20])
    out = ct.transform(df.iloc[20:])
    expected = StandardScaler().fit(X[:20]).transform(X[20:])
    assert_allclose(out[["a", "b", "c"]].to_numpy(), expected)
    assert_array_equal(out["qid"].to_numpy(), df["qid"].to_numpy()[20:])


def test_transformer_that_renames_columns():
    df, X, qid = _frame()
    out = exclude_qid(PCA(n_components=2, random_state=0)).fit_transform(df)
    assert list(out.columns) == ["pca0", "pca1", "qid"]
    assert_allclose(
        np.abs(out[["pca0", "pca1"]].to_numpy()),
        np.abs(PCA(n_components=2, random_state=0).fit_transform(X)),
    )
    assert_array_equal(out["qid"].to_numpy(), qid)


def test_inside_a_pipeline():
    df, X, qid = _frame()
    y = X @ np.array([1.0, -2.0, 0.5])
    pipe = make_pipeline(exclude_qid(StandardScaler()), Ridge(alpha=1.0)).fit(df, y)
    # Oracle: the same model on [scaled features, raw qid] without the wrapper.
    Z = np.column_stack([StandardScaler().fit_transform(X), qid])
    expected = Ridge(alpha=1.0).fit(Z, y).predict(Z)
    assert_allclose(pipe.predict(df), expected)
    assert list(pipe[0].get_feature_names_out()) == ["a", "b", "c", "qid"]
    clone(pipe).fit(df, y)  # clonable, as GridSearchCV needs


def test_custom_qid_column_name_is_escaped():
    # "q.id" as a regex would also match "qxid"; it must only exclude itself.
    df, X, qid = _frame(qid_column="q.id")
    df["qxid"] = np.arange(len(df), dtype=float)
    out = exclude_qid(StandardScaler(), qid_column="q.id").fit_transform(df)
    assert_array_equal(out["q.id"].to_numpy(), qid)
    assert_allclose(out["qxid"].mean(), 0.0, atol=1e-12)  # scaled, so selected
    # The default name leaves a "q.id" column scaled (it is just a feature).
    out2 = exclude_qid(StandardScaler()).fit_transform(df.rename(columns={"q.id": "qid2"}))
    assert_allclose(out2["qid2"].mean(), 0.0, atol=1e-12)


def test_bad_qid_column_raises():
    with pytest.raises(ValueError, match="qid_column must be a column name"):
        exclude_qid(StandardScaler(), qid_column=3)
