"""Groups of contiguous rows described by offsets.

Rows are often kept in groups: group ``g`` is rows ``offsets[g]:offsets[g +
1]``. The boosting engine samples and scores whole groups without knowing
what they stand for; the estimators' groups are queries
(:mod:`sklearn_ltr._utils.queries`).
"""

import numpy as np

__all__ = ["rows_of_groups"]


def rows_of_groups(offsets, groups, order=None):
    """Rows of some groups, group after group, and the offsets among them.

    Parameters
    ----------
    offsets : ndarray of shape (n_groups + 1,)
        Group boundaries: group ``g`` is positions ``offsets[g]:offsets[g + 1]``.
    groups : ndarray of int
        Indices of the groups to take, in the order wanted.
    order : ndarray of shape (n_samples,) or None, default=None
        Row index at each position (rows grouped by an argsort, as
        :func:`~sklearn_ltr._utils.queries.group_queries` gives them); None
        when rows are already grouped, position and row being the same.

    Returns
    -------
    rows : ndarray of int64
        Row indices of the selected groups.
    new_offsets : ndarray of shape (len(groups) + 1,)
        Offsets of the selected groups within ``rows``.
    """
    groups = np.asarray(groups, dtype=np.int64)
    sizes = offsets[groups + 1] - offsets[groups]
    new_offsets = np.zeros(groups.shape[0] + 1, dtype=np.int64)
    np.cumsum(sizes, out=new_offsets[1:])
    positions = np.repeat(offsets[groups] - new_offsets[:-1], sizes) + np.arange(new_offsets[-1])
    rows = positions if order is None else order[positions]
    return rows.astype(np.int64), new_offsets
