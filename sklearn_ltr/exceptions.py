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
    """A categorical feature had rare categories pooled with missing values.

    A categorical feature keeps its ``max_bins`` most frequent categories
    and every other category seen in at least 3 of the rows binning samples
    (all of them up to 200,000 training rows); a feature with more than
    ``max_bins`` of them is split on through several blocks of categories
    (see :ref:`categorical`). The categories seen once or twice beyond the
    ``max_bins`` most frequent are pooled with missing values, so trees
    cannot tell them apart. The warning names the feature and says how many
    categories and training rows were pooled. Group the rare categories
    yourself if you want another rule.
    """
