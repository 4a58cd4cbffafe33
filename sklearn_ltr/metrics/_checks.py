"""Input validation and query grouping shared by the query-aware metrics.

Every error is a ValueError whose message names the offending argument, so a
wrong call fails loudly instead of returning a plausible number.
"""

import functools
import numbers

import numpy as np

from .._utils.queries import check_qid, group_queries, warn_one_query
from .._utils.sums import fixed_order_dot


def check_column(y, name):
    """Return ``y`` as a 1-D float64 array, or raise naming ``name``."""
    if hasattr(y, "to_numpy"):  # pandas Series
        y = y.to_numpy()
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(
            f"{name} must be a 1-D array with one value per row (queries are given by "
            f"qid, not by rows of a 2-D array); got shape {y.shape}."
        )
    if y.dtype.kind == "O":  # e.g. mixed Python numbers, pandas nullable columns
        try:
            return y.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must hold real numbers; got non-numeric values.") from None
    if y.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold real numbers; got dtype {y.dtype}.")
    return y.astype(np.float64, copy=False)


def check_inputs(y_true, y_score, qid, *, score_name="y_score"):
    """Validate the per-row arrays of a metric call.

    Returns
    -------
    y_true, y_score : ndarray of shape (n_samples,), float64
    qid : ndarray of shape (n_samples,) or None
    """
    y_true = check_column(y_true, "y_true")
    y_score = check_column(y_score, score_name)
    if y_true.shape[0] == 0:
        raise ValueError("y_true is empty; a ranking metric needs at least one row.")
    if y_score.shape[0] != y_true.shape[0]:
        raise ValueError(
            f"y_true and {score_name} have different lengths ({y_true.shape[0]} and "
            f"{y_score.shape[0]}); they need one value per row."
        )
    if not np.all(np.isfinite(y_true)):
        raise ValueError("y_true contains NaN or infinite values.")
    if np.isnan(y_score).any():
        # +-inf scores rank fine; NaN has no place in an order.
        raise ValueError(f"{score_name} contains NaN; every row needs a comparable score.")
    if qid is not None:
        qid = check_qid(qid, y_true.shape[0])
    return y_true, y_score, qid


def group_rows(qid, n_samples):
    """``group_queries`` that also covers ``qid=None`` (one query, id 0)."""
    if qid is None:
        order = np.arange(n_samples, dtype=np.int64)
        return order, np.array([0, n_samples], dtype=np.int64), np.zeros(1, dtype=np.int64)
    return group_queries(qid)


def max_exponential_label(n_rows):
    """The largest label whose gains ``2**y - 1``, summed over ``n_rows``
    rows, stay finite in float64 (any DCG or softmax of gains is such a sum).

    Parameters
    ----------
    n_rows : int

    Returns
    -------
    label : int
    """
    return 1023 - int(np.ceil(np.log2(max(n_rows, 1))))


def check_label_gain(label_gain, name="label_gain"):
    """A gain table as a float64 array: ``label_gain[i]`` is the gain of
    label ``i`` (LightGBM's ``label_gain``).

    Parameters
    ----------
    label_gain : array-like of shape (n_labels,)
        Finite, non-negative, non-decreasing numbers, at least one.
    name : str, default="label_gain"
        Name used in error messages.

    Returns
    -------
    label_gain : ndarray of shape (n_labels,), dtype float64
    """
    values = np.asarray(label_gain)
    # Text is never read as numbers, and True is not a gain.
    if values.dtype.kind not in "iuf":
        raise ValueError(
            f"{name} must be a 1-d array of numbers, the gain of label 0, 1, 2, ...; got "
            f"{label_gain!r}."
        )
    gains = values.astype(np.float64)
    if gains.ndim != 1 or gains.shape[0] == 0:
        raise ValueError(
            f"{name} must be a non-empty 1-d array, the gain of label 0, 1, 2, ...; got "
            f"shape {gains.shape}."
        )
    if not np.all(np.isfinite(gains)):
        raise ValueError(f"{name} contains NaN or infinity; gains must be finite.")
    if np.any(gains < 0):
        raise ValueError(f"{name} contains negative gains; gains must be >= 0.")
    drops = np.flatnonzero(np.diff(gains) < 0)
    if drops.size:
        i = int(drops[0])
        # LightGBM takes the ideal ranking to be by decreasing label, which is
        # the best ranking only if gains do not decrease; refuse rather than
        # give an NDCG that differs from LightGBM's or exceeds 1.
        raise ValueError(
            f"{name} must be non-decreasing (a higher label may not be worth less), but "
            f"label {i + 1} has the gain {gains[i + 1]:g}, below the {gains[i]:g} of label "
            f"{i}. Renumber the labels so that gains grow with them."
        )
    return gains


def label_gains(y, label_gain, name="y", n_rows=None):
    """The gain ``label_gain[y]`` of every row.

    Parameters
    ----------
    y : ndarray of shape (n_samples,), dtype float64
        Labels; they must be integers in ``[0, len(label_gain))``.
    label_gain : ndarray of shape (n_labels,), dtype float64
        Output of :func:`check_label_gain`.
    name : str, default="y"
        Name of ``y`` in error messages.
    n_rows : int, default=None
        Number of rows whose gains are summed (by default ``y``'s); the
        sums must stay finite.

    Returns
    -------
    gains : ndarray of shape (n_samples,), dtype float64
    """
    n_labels = label_gain.shape[0]
    outside = (y < 0) | (y >= n_labels) | (y != np.floor(y))
    if np.any(outside):
        value = y[np.argmax(outside)]
        raise ValueError(
            f"{name} has a label of {value:g}, but with label_gain (of length {n_labels}) "
            f"labels must be integers in [0, {n_labels}): label_gain[i] is the gain of label "
            f"i. Give label_gain one gain for every label up to the largest."
        )
    gains = label_gain[y.astype(np.intp)]
    n_rows = y.shape[0] if n_rows is None else n_rows
    largest = float(gains.max()) if gains.size else 0.0
    if not np.isfinite(largest * max(n_rows, 1)):
        raise ValueError(
            f"label_gain gives {name} a gain of {largest:g}; over {n_rows} rows, sums of "
            "gains overflow float64. Scale label_gain down: NDCG does not change when all "
            "gains are multiplied by the same factor."
        )
    return gains


def check_k(k, *, name="k"):
    """Validate a cutoff: a positive integer or None (no cutoff)."""
    if k is None:
        return None
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral):
        raise ValueError(f"{name} must be a positive integer or None; got {k!r}.")
    if k < 1:
        raise ValueError(f"{name} must be a positive integer or None; got {k}.")
    return int(k)


def effective_k(k, offsets):
    """The cutoff the kernels use: ``k``, or the largest query size for None."""
    if k is not None:
        return k
    return max(int(np.max(np.diff(offsets))), 1)


def check_choice(value, name, options):
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {options}; got {value!r}.")
    return value


def check_no_relevant(value):
    """``no_relevant`` is a finite real number or the string "skip"."""
    if isinstance(value, str):
        if value != "skip":
            raise ValueError(
                f'no_relevant must be a number (such as 0.0 or 1.0) or "skip"; got {value!r}.'
            )
        return value
    if (
        isinstance(value, (bool, np.bool_))
        or not isinstance(value, numbers.Real)
        or not np.isfinite(value)
    ):
        raise ValueError(
            f'no_relevant must be a number (such as 0.0 or 1.0) or "skip"; got {value!r}.'
        )
    return float(value)


def check_real(value, name):
    if (
        isinstance(value, (bool, np.bool_))
        or not isinstance(value, numbers.Real)
        or not np.isfinite(value)
    ):
        raise ValueError(f"{name} must be a finite real number; got {value!r}.")
    return float(value)


def check_sample_weight(sample_weight, n_samples):
    if sample_weight is None:
        return None
    sample_weight = check_column(sample_weight, "sample_weight")
    if sample_weight.shape[0] != n_samples:
        raise ValueError(
            f"sample_weight has {sample_weight.shape[0]} entries but there are "
            f"{n_samples} rows; give one weight per row (equal values on a query's rows "
            "for per-query weights)."
        )
    if not np.all(np.isfinite(sample_weight)):
        raise ValueError("sample_weight contains NaN or infinite values.")
    if np.any(sample_weight < 0):
        raise ValueError("sample_weight contains negative values.")
    return sample_weight


def query_weights(sample_weight, order, offsets):
    """Mean row weight of every query (None when unweighted)."""
    if sample_weight is None:
        return None
    sums = np.add.reduceat(sample_weight[order], offsets[:-1])
    return sums / np.diff(offsets)


def apply_no_relevant(values, has_relevant, no_relevant):
    """Replace the values of queries without relevant documents."""
    values = values.copy()
    values[~has_relevant] = np.nan if no_relevant == "skip" else no_relevant
    return values


def weighted_mean(values, weights, metric):
    """Mean of the per-query ``values`` over the non-skipped (non-NaN) ones."""
    kept = ~np.isnan(values)
    if not kept.any():
        raise ValueError(
            f"{metric}: every query has no relevant document and no_relevant='skip', so "
            "there is nothing to average. Use no_relevant=0.0 or 1.0, or check y_true "
            "and threshold."
        )
    if weights is None:
        return float(np.mean(values[kept]))
    w = weights[kept]
    total = w.sum()
    if total <= 0:
        raise ValueError(
            f"{metric}: sample_weight is zero on every scored query, so the weighted "
            "mean is undefined."
        )
    return fixed_order_dot(w, values[kept]) / float(total)



def warns_without_qid(metric):
    """Make a metric warn (:class:`~sklearn_ltr.exceptions.SingleQueryWarning`)
    when it is called without ``qid`` and so scores all rows as one query."""

    @functools.wraps(metric)
    def checked(*args, **kwargs):
        # The metric runs first: a call that its checks refuse (a 2-D y_true,
        # lengths that differ) raises that error alone, without a warning
        # about query ids that would not have helped.
        result = metric(*args, **kwargs)
        if kwargs.get("qid") is None:
            y_true = args[0] if args else kwargs.get("y_true")
            warn_one_query(metric.__name__, np.shape(y_true)[0])
        return result

    return checked
