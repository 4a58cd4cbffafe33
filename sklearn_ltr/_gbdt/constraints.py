"""Monotonic and interaction constraints of the trees, as in scikit-learn's
HistGradientBoosting (``monotonic_cst``, ``interaction_cst``).

Monotonic constraints. Feature ``f`` with constraint ``+1`` (``-1``) may only
split a node if the left child's value is not above (not below) the right
child's. Every node carries bounds ``[lower, upper]`` that its children's
values must respect; the root's are infinite. After a split on a constrained
feature, the mid-point ``(v_left + v_right) / 2`` of the children's values
becomes the upper bound of the subtree on the low side and the lower bound
of the subtree on the high side; a split on an unconstrained feature passes
the node's bounds on to both children. Values are Newton steps clipped to
the bounds (:func:`bounded_value`), before the learning rate. So every leaf
of a low-side subtree is at most the mid-point and every leaf of the
high-side subtree at least it, and two rows that differ only in a
constrained feature reach leaves ordered as the constraint says: each tree,
and so their sum, is monotonic in that feature.

With bounds, the gain of a split is computed from the clipped values, as
HistGradientBoosting's ``_loss_from_value``: a node with gradient sum ``G``
and value ``v`` has loss ``G * v`` (``-G**2 / (H + l2)`` when ``v`` is the
unclipped Newton step), and the gain is the parent's loss minus the
children's. Without clipping this is the gain of :mod:`.splitting`. The
parent's value is its own clipped value (unclipped at the root, where
HistGradientBoosting uses 0, which only shifts the root's gains).

Interaction constraints. The features form groups (features no group lists
form one more group together). A node may split on the features of the
groups that contain every feature split on between the root and the node:
the grower keeps the ids of those groups per node and gives the split search
their union, restricted to the tree's column sample, as its feature mask.
"""

import itertools
from numbers import Integral

import numpy as np
from numba import njit

from .categorical import best_categorical_split
from .scan_parts import first_best_threshold, left_sums, subtract_sibling

__all__ = [
    "InteractionGroups",
    "bounded_value",
    "check_interaction_cst",
    "check_monotonic_cst",
    "children_bounds",
]


# -- parameter checks ----------------------------------------------------------


def _is_index(value):
    return isinstance(value, Integral) and not isinstance(value, (bool, np.bool_))


def _feature_index(key, n_features, feature_names, parameter):
    """Column index of a feature given by index or by name; ValueError naming
    ``parameter`` otherwise."""
    if _is_index(key):
        if not 0 <= key < n_features:
            raise ValueError(
                f"{parameter} refers to feature index {key}, but X has {n_features} features "
                f"(indices 0 to {n_features - 1})."
            )
        return int(key)
    if isinstance(key, str):
        if feature_names is None:
            raise ValueError(
                f"{parameter} refers to feature {key!r} by name, but X had no feature names "
                "(fit on a DataFrame with string column names, or give column indices)."
            )
        where = np.flatnonzero(np.asarray(feature_names, dtype=object) == key)
        if where.size == 0:
            raise ValueError(
                f"{parameter} refers to feature {key!r}, which is not a column of X; its "
                f"features are {_few(feature_names)}."
            )
        return int(where[0])
    raise ValueError(
        f"{parameter} must refer to features by column index (int) or name (str), got "
        f"{key!r} of type {type(key).__name__}."
    )


def _few(names):
    names = list(names)
    shown = ", ".join(repr(n) for n in names[:8])
    return shown + (", ..." if len(names) > 8 else "")


def check_monotonic_cst(monotonic_cst, n_features, feature_names=None):
    """The monotonic constraint of every feature, or None if there is none.

    Parameters
    ----------
    monotonic_cst : array-like of int of shape (n_features,), dict or None
        -1, 0 or 1 per feature; or a dict mapping features, by name (needs
        ``feature_names``) or column index, to -1, 0 or 1 (the others get 0).
    n_features : int
        Number of features of X.
    feature_names : array-like of str or None, default=None
        Column names of X (``feature_names_in_``).

    Returns
    -------
    cst : ndarray of shape (n_features,), dtype int8, or None
        None if no feature is constrained.

    Raises
    ------
    ValueError
        Naming ``monotonic_cst``, for a wrong length, a value other than
        -1, 0 and 1, or an unknown feature.
    """
    if monotonic_cst is None:
        return None
    cst = np.zeros(n_features, dtype=np.int8)
    if isinstance(monotonic_cst, dict):
        seen = {}
        for key, value in monotonic_cst.items():
            index = _feature_index(key, n_features, feature_names, "monotonic_cst")
            if index in seen:
                raise ValueError(
                    f"monotonic_cst gives feature {index} twice, as {seen[index]!r} and {key!r}."
                )
            seen[index] = key
            if not (_is_index(value) and value in (-1, 0, 1)):
                raise ValueError(
                    f"monotonic_cst[{key!r}] must be -1, 0 or 1, got {value!r}."
                )
            cst[index] = value
    else:
        values = np.asarray(monotonic_cst)
        if values.ndim != 1 or values.dtype.kind not in "iuf":
            raise ValueError(
                "monotonic_cst must be a 1-d array-like of -1, 0 or 1 (one per feature) or a "
                f"dict of feature name or index to -1, 0 or 1; got {monotonic_cst!r}."
            )
        unexpected = np.setdiff1d(values, [-1, 0, 1])
        if unexpected.size:
            raise ValueError(
                "monotonic_cst must contain only -1, 0 or 1; got the values "
                f"{unexpected.tolist()}."
            )
        if values.shape[0] != n_features:
            raise ValueError(
                f"monotonic_cst has {values.shape[0]} values but X has {n_features} "
                "features; give one per feature (0 for no constraint), or a dict."
            )
        cst[:] = values
    return cst if np.any(cst != 0) else None


def check_interaction_cst(interaction_cst, n_features, feature_names=None):
    """The interaction groups as column indices, or None without constraints.

    Parameters
    ----------
    interaction_cst : {"pairwise", "no_interactions"}, sequence of sequences or None
        Groups of features (by column index, or by name with
        ``feature_names``) that may interact. ``"pairwise"`` is every pair
        of features, ``"no_interactions"`` every feature alone.
    n_features : int
        Number of features of X.
    feature_names : array-like of str or None, default=None
        Column names of X (``feature_names_in_``).

    Returns
    -------
    groups : list of frozenset of int, or None
        The groups, and the features no group lists as one more group.

    Raises
    ------
    ValueError
        Naming ``interaction_cst``, for a group that is not a list, tuple
        or set, or an unknown feature.
    """
    if interaction_cst is None:
        return None
    if isinstance(interaction_cst, str):
        if interaction_cst == "no_interactions":
            given = [[f] for f in range(n_features)]
        elif interaction_cst == "pairwise":
            given = itertools.combinations(range(n_features), 2)
        else:
            raise ValueError(
                "interaction_cst must be 'pairwise', 'no_interactions' or a list of groups "
                f"of features; got {interaction_cst!r}."
            )
    else:
        given = interaction_cst
    groups = []
    for group in given:
        if isinstance(group, (str, bytes)) or not isinstance(
            group, (list, tuple, set, frozenset, np.ndarray)
        ):
            raise ValueError(
                "interaction_cst must be a list of groups, each a list, tuple or set of "
                f"feature indices or names; got the group {group!r} in {interaction_cst!r}."
            )
        groups.append(frozenset(
            _feature_index(key, n_features, feature_names, "interaction_cst") for key in group
        ))
    rest = frozenset(range(n_features)).difference(*groups)
    if rest:
        groups.append(rest)
    return groups


# -- the grower's side -----------------------------------------------------------


def bounded_value(sum_g, sum_h, l2, lower, upper):
    """A node's Newton step ``-sum_g / (sum_h + l2)`` (0 if the denominator
    is not positive) clipped to ``[lower, upper]``, without the learning
    rate. The split scan computes the same expression."""
    den = sum_h + l2
    value = -sum_g / den if den > 0.0 else 0.0
    return min(max(value, lower), upper)


def children_bounds(direction, lower, upper, value_left, value_right):
    """Bounds ``((lower, upper) of the left child, (lower, upper) of the
    right child)`` for the children's own children, after a split on a
    feature with monotonic constraint ``direction`` of a node whose
    children's values had to lie in ``[lower, upper]``."""
    if direction == 0:
        return (lower, upper), (lower, upper)
    mid = (value_left + value_right) / 2
    if direction > 0:
        return (lower, mid), (mid, upper)
    return (mid, upper), (lower, mid)


class InteractionGroups:
    """Interaction groups as a membership matrix, for the grower.

    Parameters
    ----------
    groups : list of frozenset of int
        From :func:`check_interaction_cst`.
    n_features : int
    """

    def __init__(self, groups, n_features):
        member = np.zeros((len(groups), n_features), dtype=np.uint8)
        for i, group in enumerate(groups):
            for f in group:
                if not 0 <= f < n_features:
                    raise ValueError(
                        f"interaction_cst has feature index {f}, outside [0, {n_features - 1}]."
                    )
                member[i, f] = 1
        self._member = member
        self.all_groups = np.arange(len(groups))

    def after_split(self, group_ids, feature):
        """The groups still open below a split on ``feature`` of a node with
        ``group_ids`` open, and the features they allow (a uint8 mask)."""
        kept = group_ids[self._member[group_ids, feature] != 0]
        return kept, self._member[kept].max(axis=0, initial=0).astype(np.uint8)


# -- the split scan's side -------------------------------------------------------


# error_model="numpy": as _best_split_one_feature in splitting.py.
@njit(cache=True, error_model="numpy")
def _best_split_one_feature_bounded(h, n_bins_nm, missing_bin, sum_g, sum_h, count, direction,
                                    lower, upper, node_value, min_samples_leaf,
                                    min_hessian_to_split, l2, scratch):
    """:func:`~.splitting._best_split_one_feature` with the children's values
    clipped to ``[lower, upper]``, the gain computed from the clipped values
    (the parent's being ``node_value``), and, for ``direction`` +1 (-1),
    splits whose left value is above (below) the right one refused. Same
    parameters otherwise, same result tuple, same order of the scan and
    same tie-breaking."""
    best = (-np.inf, 0, 0, 0.0, 0.0, 0.0)
    has_missing = h[missing_bin, 2] > 0
    n_dirs = 2 if has_missing else 1
    parent_loss = sum_g * node_value
    sign = float(direction)
    left = scratch[:3]
    gains = scratch[3]
    for d in range(n_dirs):
        last = left_sums(h, n_bins_nm, missing_bin, d == 1, has_missing, left)
        # Branch-free: selects and min/max, no early exit.
        for b in range(last):
            gl = left[0, b]
            hl = left[1, b]
            cl = left[2, b]
            gr = sum_g - gl
            hr = sum_h - hl
            cr = count - cl
            dl = hl + l2
            dr = hr + l2
            vl = -gl / dl
            vr = -gr / dr
            vl = min(max(vl if dl > 0.0 else 0.0, lower), upper)
            vr = min(max(vr if dr > 0.0 else 0.0, lower), upper)
            gain = parent_loss - gl * vl - gr * vr
            valid = ((cl >= min_samples_leaf) & (cr >= min_samples_leaf)
                     & (hl >= min_hessian_to_split) & (hr >= min_hessian_to_split)
                     & (sign * (vr - vl) >= 0.0))
            gains[b] = gain if valid else -np.inf
        best = first_best_threshold(gains, left, last, d, best)
    best_gain, best_bin, best_mleft, best_gl, best_hl, best_cl = best
    if not has_missing:
        best_mleft = 1 if best_cl >= count - best_cl else 0
    return best_gain, best_bin, best_mleft, best_gl, best_hl, best_cl


@njit(cache=True, inline="always")
def _scan_feature_bounded(hf, sf, subtract, n_bins_nm, missing_bin, categorical, sum_g, sum_h,
                          count, direction, lower, upper, node_value, min_samples_leaf,
                          min_hessian_to_split, l2_regularization, out, work):
    """:func:`~.splitting._scan_feature` with the bounded scan (a categorical
    feature, which has no constraint of its own, with its children's values
    clipped to the node's bounds)."""
    if subtract:
        subtract_sibling(hf, sf, n_bins_nm, missing_bin)
    if categorical:
        gain, bin_, mleft, gl, hl, cl = best_categorical_split(
            hf, n_bins_nm, missing_bin, sum_g, sum_h, count, -sum_g * node_value,
            min_samples_leaf, min_hessian_to_split, l2_regularization, lower, upper)
    else:
        gain, bin_, mleft, gl, hl, cl = _best_split_one_feature_bounded(
            hf, n_bins_nm, missing_bin, sum_g, sum_h, count, direction, lower, upper,
            node_value, min_samples_leaf, min_hessian_to_split, l2_regularization, work)
    out[0] = gain
    out[1] = bin_
    out[2] = mleft
    out[3] = gl
    out[4] = hl
    out[5] = cl
