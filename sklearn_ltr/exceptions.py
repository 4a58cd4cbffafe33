"""Warnings of sklearn-ltr."""

__all__ = ["SingleQueryWarning"]


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
