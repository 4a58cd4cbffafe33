"""Keeping transformers away from the ``qid`` column.

Without metadata routing, query ids travel inside ``X`` as a DataFrame column
named ``"qid"`` (see :func:`sklearn_ltr.datasets.to_frame`). A scaler or PCA in
front of a ranker would then transform the ids too; :func:`exclude_qid` wraps
such a transformer so that the ids pass through untouched.
"""

import re

from sklearn.compose import ColumnTransformer, make_column_selector

__all__ = ["exclude_qid"]


def exclude_qid(transformer, qid_column="qid"):
    """Apply ``transformer`` to every column except the query id column.

    Parameters
    ----------
    transformer : estimator
        A scikit-learn transformer (or ``"drop"`` / ``"passthrough"``).
    qid_column : str, default="qid"
        Name of the DataFrame column that carries query ids.

    Returns
    -------
    column_transformer : sklearn.compose.ColumnTransformer
        Transforms the other columns with ``transformer`` and passes
        ``qid_column`` through unchanged. Output is a pandas DataFrame whose
        feature columns keep the transformer's unprefixed names, followed by
        the ``qid_column`` column, so a ranker later in the pipeline finds
        it. Input must be a DataFrame.

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
    """
    if not isinstance(qid_column, str):
        raise ValueError(
            f"qid_column must be a column name (str); got {type(qid_column).__name__}."
        )
    # Every column whose whole name is not qid_column; the name is escaped so
    # that names with regex characters (e.g. "q.id") match only themselves.
    pattern = rf"^(?!{re.escape(qid_column)}\Z)"
    return ColumnTransformer(
        [("features", transformer, make_column_selector(pattern=pattern))],
        remainder="passthrough",
        verbose_feature_names_out=False,
    ).set_output(transform="pandas")
