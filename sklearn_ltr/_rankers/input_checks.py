"""Checks of what rankers are given: numeric features, numeric and
non-negative labels whose gains cannot overflow (integers indexing the gain
table, with ``label_gain``); text is refused, never converted."""

from numbers import Real

import numpy as np
from scipy import sparse

from .._gbdt.common import Y_DTYPE
from .._utils.frames import is_polars_frame
from ..metrics._checks import label_gains, max_exponential_label

__all__ = [
    "check_2d",
    "check_labels",
    "check_largest_label",
    "check_no_text_cells",
    "check_no_text_labels",
    "check_numeric_columns",
]

_ENCODE = (
    "Encode categories and text first (e.g. sklearn.preprocessing.OrdinalEncoder or "
    "OneHotEncoder in a ColumnTransformer)."
)


def _is_text(value):
    return isinstance(value, (str, bytes))


def _looks_numeric(value):
    """True for numbers and for text that ``float()`` reads (numbers stored
    as text)."""
    if isinstance(value, (Real, np.number)) and not isinstance(value, bool):
        return True
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return _is_text(value)


def _conversion_advice(values, convert):
    """How to fix non-numeric ``values``: ``convert`` them when all are
    numbers (stored as text, or in an object column), else encode them."""
    numeric = [v for v in values if _looks_numeric(v)]
    if not numeric:
        return _ENCODE
    advice = (
        f"Numbers stored as text or in object columns are never converted, so that a "
        f"column read as text is not used by mistake: convert first, e.g. {convert}."
    )
    return advice if len(numeric) == len(values) else f"{advice} {_ENCODE}"


def _first_text(values):
    """``(index, value)`` of the first str or bytes of an array, in row
    order, or None."""
    if values.size == 0:
        return None
    if values.dtype.kind in "US":
        index = 0
    else:
        is_text = np.frompyfunc(_is_text, 1, 1)(values).astype(bool).ravel()
        if not is_text.any():
            return None
        index = int(np.argmax(is_text))
    return np.unravel_index(index, values.shape), values.flat[index]


def check_2d(X, name):
    """Refuse a 1-D ``X`` (or a single value) with its shape and the reshape
    that fixes it; scikit-learn's own message prints every value.

    Lists of rows, DataFrames, sparse matrices and arrays of other
    dimensions are left to ``validate_data``.
    """
    if sparse.issparse(X):
        return
    shape = getattr(X, "shape", None)
    if shape is None:
        if not isinstance(X, (list, tuple)):
            return
        # A row is a sequence; text and numbers are cells.
        if any(hasattr(v, "__len__") and not isinstance(v, (str, bytes)) for v in X):
            return
        shape = (len(X),)
    if len(shape) > 1:
        return
    if hasattr(X, "to_frame"):  # a pandas or polars Series
        as_column, as_row = f"{name}.to_frame()", f"{name}.to_frame().T"
    elif isinstance(X, np.ndarray):
        as_column, as_row = f"{name}.reshape(-1, 1)", f"{name}.reshape(1, -1)"
    else:
        as_column, as_row = f"np.reshape({name}, (-1, 1))", f"np.reshape({name}, (1, -1))"
    if len(shape) == 0:
        raise ValueError(
            f"{name} is a single value (shape ()), but the rankers take a 2-D {name} of "
            f"shape (n_samples, n_features): pass {as_row} for one row of one feature."
        )
    n = shape[0]
    # "Reshape your data" as in scikit-learn's message, which its estimator
    # checks look for.
    raise ValueError(
        f"{name} is 1-D (shape ({n},)), but the rankers take a 2-D {name} of shape "
        f"(n_samples, n_features). Reshape your data: if it holds one feature of {n} rows, "
        f"pass {as_column}; if it is one row of {n} features, pass {as_row}."
    )


def check_numeric_columns(X, name):
    """Refuse text in ``X``: DataFrame columns that would be cast to numbers
    silently or with an error that names no column (categories, strings,
    objects), and str or bytes cells of arrays and lists, numbers stored as
    text ("1.5") included."""
    if is_polars_frame(X):
        _check_numeric_polars_columns(X, name)
        return
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(dtypes, "items"):
        check_no_text_cells(X, name)
        return
    # pandas' nullable Int64/Float64/boolean dtypes have numeric kinds too;
    # categories and strings have kind "O".
    bad, columns, examples = [], [], []
    for j, (column, dtype) in enumerate(dtypes.items()):
        if getattr(dtype, "kind", "O") in "biuf":
            continue
        columns.append(column)
        example = _example_value(X.iloc[:, j])
        if example is None:  # no rows (a dask DataFrame's meta) or all missing
            bad.append(f"{column!r} ({dtype})")
        else:
            label, value = example
            bad.append(f"{column!r} ({dtype}; {value!r} at index {label!r})")
            examples.append(value)
    if bad:
        _refuse_non_numeric(name, bad, examples,
                            f"{name}[{columns[0]!r}] = pd.to_numeric({name}[{columns[0]!r}])")


def _check_numeric_polars_columns(X, name):
    """:func:`check_numeric_columns` of a polars DataFrame."""
    import polars as pl

    bad, columns, examples = [], [], []
    for column, dtype in X.schema.items():
        if dtype.is_numeric() or dtype == pl.Boolean:
            continue
        columns.append(column)
        values = X.get_column(column)
        present = values.drop_nulls().to_list()
        if not present:
            bad.append(f"{column!r} ({dtype})")
            continue
        # As for pandas: the first value that is not a number, else the first.
        value = next((v for v in present if not _looks_numeric(v)), present[0])
        row = int(values.is_not_null().arg_true()[present.index(value)])
        bad.append(f"{column!r} ({dtype}; {value!r} at row {row})")
        examples.append(value)
    if bad:
        _refuse_non_numeric(name, bad, examples,
                            f"{name}.with_columns(pl.col({columns[0]!r}).cast(pl.Float64))")


def _refuse_non_numeric(name, bad, examples, convert):
    """Raise the error of both column checks: the ``bad`` columns and how to
    convert them (``convert``, the frame library's own call)."""
    raise ValueError(
        f"{name} has non-numeric columns {', '.join(bad)}; the rankers take numbers "
        f"only. {_conversion_advice(examples, convert)}"
    )


def _example_value(column):
    """``(index label, value)`` that shows why a non-numeric column is
    refused: its first value that is not a number (stored as text or not),
    else its first text, else its first non-missing value; None if it has
    none."""
    present = column[column.notna()]
    if present.shape[0] == 0:
        return None
    for keep in (lambda v: not _looks_numeric(v), _is_text, lambda v: True):
        chosen = present[present.map(keep).to_numpy(dtype=bool)]
        if chosen.shape[0]:
            break
    label, value = chosen.index[0], chosen.iloc[0]
    label = label.item() if isinstance(label, np.generic) else label
    return label, value.item() if isinstance(value, np.generic) else value


def check_no_text_cells(X, name):
    """Refuse str or bytes cells of an array or a list of rows, naming the
    first one's column, row and value."""
    if hasattr(X, "dtype"):
        if getattr(X.dtype, "kind", None) not in ("O", "U", "S") or not hasattr(X, "shape"):
            return
        values = np.asarray(X)
    elif isinstance(X, (list, tuple)):
        try:
            kind = np.asarray(X).dtype.kind
            # Read back as objects: np.asarray turns [[1.0, "a"]] into strings
            # throughout, and the first string would then be the 1.0.
            values = np.asarray(X, dtype=object) if kind in "OUS" else None
        except ValueError:  # ragged rows: validate_data names the problem
            return
        if values is None:
            return
    else:
        return
    found = _first_text(values)
    if found is None:
        return
    index, value = found
    value = value.item() if isinstance(value, np.generic) else value
    where = f"column {index[1]} (row {index[0]})" if len(index) == 2 else f"row {index[0]}"
    raise ValueError(
        f"{name} has the text {value!r} in {where}; the rankers take numbers only. "
        f"{_conversion_advice([value], f'{name}.astype(float)')}"
    )


def check_no_text_labels(y, name="y"):
    """Refuse str or bytes labels, numbers stored as text ("1") included:
    scikit-learn would convert those silently."""
    kind = getattr(getattr(y, "dtype", None), "kind", None)
    if kind is None:
        if not isinstance(y, (list, tuple)):
            return
        try:
            kind = np.asarray(y).dtype.kind
        except ValueError:
            return
    if kind not in ("O", "U", "S"):
        return
    values = np.asarray(y, dtype=object).reshape(-1)
    found = _first_text(values)
    if found is None:
        return
    (row,), value = found
    if _looks_numeric(value):
        advice = (
            f"Numbers stored as text are never converted: convert {name} first, e.g. "
            f"np.asarray({name}, dtype=float) or pd.to_numeric({name})."
        )
    else:
        advice = "Relevance labels are graded numbers (e.g. 0-4); map text grades to them first."
    raise ValueError(
        f"{name} has the text {value!r} at row {row}; labels must be numbers. {advice}"
    )


def check_labels(y, name="y", label_gain=None):
    """Finite labels whose gains can be summed: non-negative with gains
    ``2**y - 1``, integers in ``[0, len(label_gain))`` with a gain table
    (the output of ``check_label_gain``)."""
    check_no_text_labels(y, name)
    y = np.asarray(y, dtype=Y_DTYPE)
    if not np.all(np.isfinite(y)):
        raise ValueError(f"{name} contains NaN or infinity; relevance labels must be finite.")
    if label_gain is not None:
        label_gains(y.reshape(-1), label_gain, name)
        return y
    if np.any(y < 0):
        raise ValueError(
            f"{name} contains negative values; relevance labels must be non-negative "
            "(gains are 2**y - 1)."
        )
    if y.size:
        check_largest_label(y.max(), y.size, name)
    return y


def check_largest_label(largest, n_rows, name="y", label_gain=None):
    """Refuse labels whose gains, summed over ``n_rows`` rows, overflow (or,
    with a gain table, that do not index it)."""
    if label_gain is not None:
        label_gains(np.array([largest], dtype=Y_DTYPE), label_gain, name, n_rows=n_rows)
        return
    if largest > max_exponential_label(n_rows):
        raise ValueError(
            f"{name} has a label of {largest:g}; over {n_rows} rows, sums of gains "
            f"2**y - 1 overflow float64 for labels above {max_exponential_label(n_rows)}. "
            "Labels are relevance grades (typically 0-4); for more grades, "
            "LambdaMARTRanker(label_gain=...) sets the gain of each."
        )
