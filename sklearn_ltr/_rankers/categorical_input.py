"""Which input columns are categorical, and DataFrame category columns as codes.

The rankers take ``categorical_features`` as scikit-learn's
HistGradientBoosting does. The engine reads a categorical column as integer
category codes (see :mod:`sklearn_ltr._gbdt.binning`). A pandas
``category`` column, or a polars ``Categorical`` or ``Enum`` column, is
turned into such codes here: the position of each value among the
categories the column had in ``fit``, so that a frame whose column lists its
categories in another order, or has more of them, is encoded as in training;
values that were not categories in ``fit`` become NaN (missing, like
categories never seen in training). A polars ``Categorical`` column's
categories are the distinct values it holds in ``fit``, sorted (see
:func:`~sklearn_ltr._utils.frames.polars_categories`).
"""

import numpy as np

from .._utils.frames import categorical_positions, is_polars_frame, polars_categories

__all__ = ["categorical_mask", "encode_pandas_categories", "pandas_categories"]


def pandas_categories(X):
    """The categories of each category column of ``X`` (pandas ``category``,
    polars ``Categorical`` or ``Enum``), by position: ``{j: ndarray of the
    category values}`` (empty if X is not a DataFrame)."""
    positions = categorical_positions(X)
    if not positions:
        return {}
    if is_polars_frame(X):
        return {j: polars_categories(X.to_series(j)) for j in positions}
    dtypes = list(X.dtypes)
    return {j: np.asarray(dtypes[j].categories) for j in positions}


def encode_pandas_categories(X, categories, name="X"):
    """``X`` with its category columns (``categories`` as returned by
    :func:`pandas_categories` in ``fit``) replaced by float codes.

    Raises
    ------
    ValueError
        If ``X`` is not a DataFrame, or one of those columns is not of
        category dtype, while ``fit`` saw category columns.
    """
    if not categories:
        return X
    if is_polars_frame(X):
        return _encode_polars_categories(X, categories, name)
    if not hasattr(X, "iloc"):
        raise ValueError(
            f"{name} is not a DataFrame, but the ranker was fitted on a DataFrame with "
            f"category columns (positions {sorted(categories)}): pass a DataFrame with the "
            "same columns, so that their values are read as the categories they were in fit."
        )
    import pandas as pd

    X = X.copy(deep=False)
    for j, known in categories.items():
        column = X.iloc[:, j]
        if getattr(column.dtype, "name", None) != "category":
            raise ValueError(
                f"Column {X.columns[j]!r} of {name} has dtype {column.dtype}, but it was a "
                f"category column in fit; convert it with {name}[{X.columns[j]!r}]."
                "astype('category')."
            )
        _check_category_kind(column.cat.categories, known, X.columns[j], name)
        # The position of each value among the categories of fit; -1 for
        # NaN and for values that were not categories then.
        codes = pd.Index(known).get_indexer(np.asarray(column, dtype=object)).astype(np.float64)
        codes[codes < 0] = np.nan
        X[X.columns[j]] = codes
    return X


_PLURAL = {"text": "text", "number": "numbers"}


def _kind_of_categories(values):
    """``"text"`` if every category is a string, ``"number"`` if every one
    is a number (not a bool), else None. pandas' type inference reads a
    numeric dtype without scanning the values."""
    import pandas as pd

    kind = pd.api.types.infer_dtype(values, skipna=True)
    if kind == "string":
        return "text"
    if kind in ("integer", "floating", "mixed-integer-float", "decimal"):
        return "number"
    return None


def _check_category_kind(categories, known, column, name):
    """Refuse a pandas category column whose categories are text where
    they were numbers in ``fit``, or the other way round: not one value
    would match a category of ``fit``, and every row would be read as
    missing (a column of integer categories written to CSV and read back
    as text, for instance). A category column may have new categories;
    it may not have only categories of another type."""
    now, then = _kind_of_categories(categories), _kind_of_categories(known)
    if now is None or then is None or now == then:
        return
    fix = ("astype(int).astype('category')" if then == "number"
           else "astype(str).astype('category')")
    raise ValueError(
        f"Column {column!r} of {name} has {now} categories ({categories[:3].tolist()}...), "
        f"but its categories in fit were {_PLURAL[then]} ({np.asarray(known[:3]).tolist()}...): "
        f"not one value would match a category of fit, and every row would be read as "
        f"missing. Convert it, e.g. {name}[{column!r}].{fix}."
    )


def _encode_polars_categories(X, categories, name):
    """:func:`encode_pandas_categories` of a polars DataFrame."""
    import polars as pl

    replaced = []
    for j, known in categories.items():
        column = X.to_series(j)
        if not isinstance(column.dtype, (pl.Categorical, pl.Enum)):
            raise ValueError(
                f"Column {column.name!r} of {name} has dtype {column.dtype}, but it was a "
                f"category column in fit; convert it with {name}.with_columns("
                f"pl.col({column.name!r}).cast(pl.Categorical))."
            )
        if not all(isinstance(v, str) for v in known):
            raise ValueError(
                f"Column {column.name!r} of {name} is a polars category column, whose "
                f"categories are text, but its categories in fit were not all text "
                f"({list(known[:5])}): pass the column as it was in fit."
            )
        # The position of each value among the categories of fit; null for
        # missing values and for values that were not categories then.
        codes = column.cast(pl.String).replace_strict(
            list(known), np.arange(len(known), dtype=np.float64), default=None,
            return_dtype=pl.Float64)
        replaced.append(codes.alias(column.name))
    return X.with_columns(replaced)


def categorical_mask(categorical_features, n_features, feature_names, category_columns):
    """The boolean mask of the categorical features, or None if there are
    none, from ``categorical_features`` as HistGradientBoosting takes it.

    Parameters
    ----------
    categorical_features : "from_dtype", None, array-like of int, of str or of bool
        The estimator's parameter.
    n_features : int
        Number of features of X.
    feature_names : ndarray of str or None
        ``feature_names_in_``.
    category_columns : collection of int
        Positions of the pandas category columns of X.

    Returns
    -------
    mask : ndarray of shape (n_features,), dtype bool, or None
    """
    mask = np.zeros(n_features, dtype=bool)
    if isinstance(categorical_features, str):  # "from_dtype"
        mask[list(category_columns)] = True
    elif categorical_features is None and category_columns:
        j = min(category_columns)
        name = feature_names[j] if feature_names is not None else j
        raise ValueError(
            f"Column {name!r} has a category dtype, but categorical_features=None: its "
            "values cannot be read as numbers. Leave categorical_features at 'from_dtype' "
            "to split on its categories, or encode it yourself."
        )
    elif categorical_features is not None:
        values = np.asarray(categorical_features)
        if values.ndim != 1:
            raise ValueError(
                "categorical_features must be 'from_dtype', None, or a 1-d array-like of "
                f"indices, feature names or booleans; got shape {values.shape}."
            )
        if values.dtype.kind == "b":
            if values.shape[0] != n_features:
                raise ValueError(
                    f"categorical_features is a boolean mask of {values.shape[0]} entries, "
                    f"but X has {n_features} features."
                )
            mask = values.copy()
        elif values.dtype.kind in "iu":
            bad = values[(values < 0) | (values >= n_features)]
            if bad.size:
                raise ValueError(
                    f"categorical_features has the index {bad[0]}, out of range for X's "
                    f"{n_features} features [0, {n_features - 1}]."
                )
            mask[values] = True
        elif values.dtype.kind in "UO" and values.size:
            if feature_names is None:
                raise ValueError(
                    "categorical_features names features, but X has no feature names: pass "
                    "a DataFrame, or give the features by index."
                )
            names = list(feature_names)
            missing = [v for v in values if v not in names]
            if missing:
                raise ValueError(
                    f"categorical_features names {missing[0]!r}, which is not a feature of X "
                    f"(its features are {names[:10]}{' ...' if len(names) > 10 else ''})."
                )
            mask[[names.index(v) for v in values]] = True
        elif values.size:
            raise ValueError(
                "categorical_features must hold integer indices, feature names or booleans; "
                f"got dtype {values.dtype}."
            )
        unmarked = [j for j in category_columns if not mask[j]]
        if unmarked:
            name = feature_names[unmarked[0]] if feature_names is not None else unmarked[0]
            raise ValueError(
                f"Column {name!r} has a category dtype but is not among categorical_features; "
                "add it, or convert it to numbers yourself."
            )
    return mask if mask.any() else None
