"""Warnings of sklearn-ltr."""

__all__ = ["CategoryPoolingWarning", "SingleQueryWarning"]


class SingleQueryWarning(UserWarning):
    """All rows were treated as one query because no query ids were given.

    Rankers, ``rank`` and every metric fall back to one query when they get
    no ``qid`` (and, where a DataFrame is accepted, no ``qid`` column), so
    that scikit-learn's generic estimator checks can call ``fit(X, y)``. For
    a whole data set this is almost always a mistake that gives a plausible
    but wrong number, so it warns. Pass ``qid=np.zeros(n_rows)`` to treat the
    rows as one query on purpose, or filter the warning::

        import warnings
        from sklearn_ltr.exceptions import SingleQueryWarning
        warnings.simplefilter("ignore", SingleQueryWarning)
    """


class CategoryPoolingWarning(UserWarning):
    """A categorical feature has more categories than ``max_bins``.

    Each categorical feature keeps its ``max_bins`` most frequent categories
    (counted on the rows binning samples, all of them up to 200,000 training
    rows); the rarer ones are pooled with missing values, so trees cannot
    tell them apart. The warning names the feature, how many categories and
    training rows were pooled. Group the rare categories yourself, raise
    ``max_bins`` (at most 255), or give the column as numbers, if that is
    not what you want.
    """
