"""Keeping transformers away from the ``qid`` column and from category columns.

Without metadata routing, query ids travel inside ``X`` as a DataFrame column
named ``"qid"`` (see :func:`sklearn_ltr.datasets.to_frame`). A scaler or PCA in
front of a ranker would then transform the ids too; :func:`exclude_qid` wraps
such a transformer so that the ids pass through untouched, and so do the
category columns, which the ranker splits on by category.
"""

from sklearn.compose import ColumnTransformer

from ._utils.frames import categorical_positions

__all__ = ["exclude_qid"]

_CATEGORICAL = ("passthrough", "transform")


class _TransformedColumns:
    """The columns :func:`exclude_qid` hands to its transformer: all but the
    query id column and, with ``passthrough_categorical``, the category
    columns (pandas ``category``, polars ``Categorical`` and ``Enum``).

    Saved pipelines hold an instance under this name, and
    :func:`sklearn_ltr.load_model` trusts it by this name: do not rename it.

    Parameters
    ----------
    qid_column : str
        Name of the query id column.
    passthrough_categorical : bool
        Whether category columns are left out too.
    """

    def __init__(self, qid_column, passthrough_categorical):
        self.qid_column = qid_column
        self.passthrough_categorical = passthrough_categorical

    def __call__(self, X):
        if not hasattr(X, "columns"):
            raise ValueError(
                "exclude_qid needs X as a DataFrame (pandas or polars), whose columns "
                f"it tells apart by name; got {type(X).__name__}. Pass the frame with its "
                f"{self.qid_column!r} column, e.g. sklearn_ltr.datasets.to_frame(X, qid)."
            )
        names = list(X.columns)
        skipped = {self.qid_column}
        if self.passthrough_categorical:
            skipped.update(names[j] for j in categorical_positions(X))
        return [name for name in names if name not in skipped]

    def __repr__(self):
        return (f"{type(self).__name__}(qid_column={self.qid_column!r}, "
                f"passthrough_categorical={self.passthrough_categorical})")


def exclude_qid(transformer, qid_column="qid", *, categorical="passthrough"):
    """Apply ``transformer`` to every column except the query id column
    (and, by default, the category columns).

    Parameters
    ----------
    transformer : estimator
        A scikit-learn transformer (or ``"drop"`` / ``"passthrough"``).
    qid_column : str, default="qid"
        Name of the DataFrame column that carries query ids.
    categorical : {"passthrough", "transform"}, default="passthrough"
        What happens to the category columns: pandas ``category`` columns,
        polars ``Categorical`` and ``Enum`` columns. ``"passthrough"`` leaves
        them untouched, like the query ids, so a ranker after it still reads
        them as categorical (``categorical_features="from_dtype"``) and a
        numeric transformer such as ``StandardScaler`` never sees text.
        ``"transform"`` hands them to ``transformer`` with the other
        columns, for a transformer that encodes them itself (such as a
        ``ColumnTransformer`` with a ``OneHotEncoder``).

    Returns
    -------
    column_transformer : sklearn.compose.ColumnTransformer
        Transforms the other columns with ``transformer`` and passes
        ``qid_column`` (and the category columns) through unchanged. Output
        is a pandas DataFrame whose transformed columns keep the
        transformer's unprefixed names and come first, followed by the
        columns passed through in their input order, so a ranker later in
        the pipeline finds the ``qid_column``. Input must be a pandas or a
        polars DataFrame; for a polars DataFrame, call
        ``.set_output(transform="polars")`` on the result to get polars
        back (converted to pandas, polars category columns turn into text).

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn_ltr.compose import exclude_qid
    >>> X = pd.DataFrame({"qid": [1, 1, 2, 2], "f0": [0.0, 2.0, 4.0, 6.0]})
    >>> exclude_qid(StandardScaler()).fit_transform(X)
             f0  qid
    0 -1.341641    1
    1 -0.447214    1
    2  0.447214    2
    3  1.341641    2

    A category column passes through as it is, still of category dtype:

    >>> X["shop"] = pd.Categorical(["a", "b", "a", "c"])
    >>> out = exclude_qid(StandardScaler()).fit_transform(X)
    >>> list(out.columns), str(out["shop"].dtype)
    (['f0', 'qid', 'shop'], 'category')
    """
    if not isinstance(qid_column, str):
        raise ValueError(
            f"qid_column must be a column name (str); got {type(qid_column).__name__}."
        )
    if not isinstance(categorical, str) or categorical not in _CATEGORICAL:
        raise ValueError(
            f"categorical must be 'passthrough' (category columns skip the transformer) or "
            f"'transform' (the transformer gets them too); got {categorical!r}."
        )
    columns = _TransformedColumns(qid_column, categorical == "passthrough")
    return ColumnTransformer(
        [("features", transformer, columns)],
        remainder="passthrough",
        verbose_feature_names_out=False,
    ).set_output(transform="pandas")
