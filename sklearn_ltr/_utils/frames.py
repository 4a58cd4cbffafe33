"""DataFrames of pandas and of polars, handled alike.

The package takes pandas DataFrames (and frames with pandas' interface, such
as dask's partitions) and polars DataFrames wherever it takes a DataFrame.
Neither library is a dependency: a frame of a library that is not imported
cannot exist, so each check looks the library up in ``sys.modules`` only, as
scikit-learn's own checks do.
"""

import sys

import numpy as np

__all__ = [
    "categorical_positions",
    "column_values",
    "drop_column",
    "is_polars_frame",
    "polars_categories",
]


def is_polars_frame(X):
    """True if ``X`` is a polars DataFrame.

    Parameters
    ----------
    X : object

    Returns
    -------
    is_polars : bool
    """
    polars = sys.modules.get("polars")
    return polars is not None and isinstance(X, polars.DataFrame)


def _is_polars_categorical(dtype):
    polars = sys.modules["polars"]
    return isinstance(dtype, (polars.Categorical, polars.Enum))


def column_values(X, name):
    """The values of the column ``name`` of a DataFrame, as a NumPy array.

    Parameters
    ----------
    X : pandas or polars DataFrame
    name : str

    Returns
    -------
    values : ndarray of shape (n_samples,)
        Missing values are NaN in float columns and None in others.
    """
    if is_polars_frame(X):
        return X.get_column(name).to_numpy()
    return np.asarray(X[name])


def drop_column(X, name):
    """``X`` without its column ``name`` (a new frame; ``X`` is unchanged).

    Parameters
    ----------
    X : pandas or polars DataFrame
    name : str

    Returns
    -------
    X : DataFrame of the same library
    """
    if is_polars_frame(X):
        return X.drop(name)
    return X.drop(columns=[name])


def categorical_positions(X):
    """Positions of the categorical columns of a DataFrame: pandas
    ``category`` columns, polars ``Categorical`` and ``Enum`` columns.

    Parameters
    ----------
    X : object
        Anything; only DataFrames have categorical columns.

    Returns
    -------
    positions : list of int
    """
    if is_polars_frame(X):
        return [j for j, dtype in enumerate(X.dtypes) if _is_polars_categorical(dtype)]
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(dtypes, "items"):
        return []
    return [j for j, (_, dtype) in enumerate(dtypes.items())
            if getattr(dtype, "name", None) == "category"]


def polars_categories(column):
    """The categories of a polars ``Categorical`` or ``Enum`` column, as an
    object array of str.

    An Enum's categories are its dtype's fixed list, in its order. A
    Categorical column has no list of its own (its dtype maps strings of the
    whole process), so its categories are the distinct values it holds,
    sorted: the same for the same values, whatever else the process did.

    Parameters
    ----------
    column : polars.Series

    Returns
    -------
    categories : ndarray of str objects
    """
    polars = sys.modules["polars"]
    if isinstance(column.dtype, polars.Enum):
        values = column.dtype.categories.to_list()
    else:
        values = column.drop_nulls().unique().cast(polars.String).sort().to_list()
    return np.array(values, dtype=object)

