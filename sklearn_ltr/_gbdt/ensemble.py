"""A fitted ensemble as plain data: the one view of a model that prediction,
persistence, the exporters and inspection all read.

A :class:`TreeEnsemble` holds every tree's nodes in one flat ``NODE_DTYPE``
array, the offset of each tree's root, the baseline score and the feature
names. It knows nothing of estimators or file formats; an exporter walks its
trees and writes them in its own format, so adding a format never touches
the engine.

The decision rule, which every exporter must reproduce: at a split node a row
goes to ``left`` iff ``x <= num_threshold`` (float64 comparison), and to
``missing_go_to_left``'s side iff ``x`` is NaN. ``+inf`` and ``-inf`` are
ordinary values. At a categorical split (``is_categorical``), a row goes
left iff its category is one of the split's left categories:
``categories[f][b]`` for every bit ``b`` set in ``left_categories``
(``categories[f][bins_of(left_categories)]``, :func:`~.common.bins_of`).
Every other value (NaN, negative, fractional, or a category not among
``categories[f]``) goes to ``missing_go_to_left``'s side. The score is
``baseline + sum of the leaf values``, the trees' values added in tree order.

The nodes' ``feature_idx`` names a *split feature*. Usually these are the
input columns; but a categorical column with more categories than a
feature's 255 bins is split on through several features, each with its own
block of the column's categories (``feature_columns`` maps each to its
column). Every one of them reads the column's raw value, and by the rule
above a category of another block goes to the missing side: a split on
such a feature is a set split on its column whose listed side holds
categories of one block.
"""

from dataclasses import dataclass

import numpy as np

from scipy import sparse

from .category_bins import write_block_codes
from .common import NODE_DTYPE, X_DTYPE
from .predictor import _check_ensemble, _predict_leaf_nodes, predict_raw

__all__ = ["TreeEnsemble", "subtree_means"]


def subtree_means(tree, leaf_values):
    """Count-weighted mean leaf value below every node of one tree: a
    split's expected output over the training rows that reached it (what
    LightGBM calls internal_value and XGBoost base_weights).

    Parameters
    ----------
    tree : ndarray of NODE_DTYPE
        One tree's nodes (children come after their parents, so one backward
        pass sums each subtree).
    leaf_values : ndarray
        The value of each leaf, in node order.

    Returns
    -------
    means : ndarray of shape (n_nodes,), dtype float64
        0 for a node no training row reached.
    """
    is_leaf = tree["is_leaf"] != 0
    weighted = np.zeros(tree.shape[0])
    weighted[is_leaf] = leaf_values * tree["count"][is_leaf]
    for k in range(tree.shape[0] - 1, -1, -1):
        if not is_leaf[k]:
            weighted[k] = weighted[tree["left"][k]] + weighted[tree["right"][k]]
    counts = tree["count"].astype(np.float64)
    return np.divide(weighted, counts, out=np.zeros_like(weighted), where=counts > 0)


@dataclass(frozen=True, eq=False)
class TreeEnsemble:
    """The trees of a fitted model, read-only.

    Parameters
    ----------
    nodes : ndarray of shape (n_nodes,), dtype NODE_DTYPE
        Every tree's nodes, concatenated. Child indices are relative to their
        tree's root, and a child always comes after its parent.
    tree_starts : ndarray of shape (n_trees,), dtype int64
        Offset of each tree's root in ``nodes``.
    baseline : float
        Raw score of the model with no trees.
    n_features : int
        Number of input columns.
    feature_names : tuple of str or None
        The column names seen in fit, or None if X had none.
    objective : str
        Name of the training objective (for the record; it does not change
        the raw score).
    missing_in_training : ndarray of shape (n_split_features,), dtype bool, or None
        Whether the training data had missing values in each feature, so
        that the learned ``missing_go_to_left`` of its splits means
        something; None if unknown (then every direction counts as
        learned).
    categories : tuple or None
        For each split feature, None if it is numeric, or the increasing
        ndarray of its categories (float64 integer codes) if it is
        categorical: bit ``b`` of a split's ``left_categories`` stands for
        ``categories[f][b]``. None if no feature is categorical.
    feature_columns : ndarray of shape (n_split_features,), dtype int64, or None
        The input column each split feature reads (increasing), or None if
        split feature ``f`` is column ``f`` (then ``n_split_features`` is
        ``n_features``).
    """

    nodes: np.ndarray
    tree_starts: np.ndarray
    baseline: float
    n_features: int
    feature_names: tuple = None
    objective: str = ""
    missing_in_training: np.ndarray = None
    categories: tuple = None
    feature_columns: np.ndarray = None

    def __post_init__(self):
        if self.nodes.dtype != NODE_DTYPE:
            raise ValueError("nodes must have dtype NODE_DTYPE.")
        if self.feature_names is not None and len(self.feature_names) != self.n_features:
            raise ValueError(
                f"feature_names has {len(self.feature_names)} names for "
                f"{self.n_features} features."
            )
        if self.feature_columns is not None:
            columns = np.asarray(self.feature_columns, dtype=np.int64)
            if (columns.ndim != 1 or np.any(np.diff(columns) < 0)
                    or not np.array_equal(np.unique(columns), np.arange(self.n_features))):
                raise ValueError(
                    "feature_columns must list, in increasing order, every column in "
                    f"[0, {self.n_features}) at least once."
                )
            object.__setattr__(self, "feature_columns", columns)
            columns.setflags(write=False)
        if self.missing_in_training is None:
            object.__setattr__(self, "missing_in_training",
                               np.ones(self.n_split_features, dtype=bool))
        if self.categories is not None:
            if len(self.categories) != self.n_split_features:
                raise ValueError(
                    f"categories has {len(self.categories)} entries for "
                    f"{self.n_split_features} split features."
                )
            if all(c is None for c in self.categories):
                object.__setattr__(self, "categories", None)
        categorical_splits = (self.nodes["is_categorical"] != 0) & (self.nodes["is_leaf"] == 0)
        if any(self.categories is None or self.categories[f] is None
               for f in np.unique(self.nodes["feature_idx"][categorical_splits])):
            raise ValueError("A categorical split's feature has no categories.")
        for array in (self.nodes, self.tree_starts, self.missing_in_training):
            array.setflags(write=False)

    @property
    def n_split_features(self):
        """Number of features the nodes' ``feature_idx`` ranges over."""
        if self.feature_columns is None:
            return self.n_features
        return int(self.feature_columns.shape[0])

    def column_of(self, features):
        """The input column of each split feature in ``features`` (an int
        or an integer array)."""
        if self.feature_columns is None:
            return features
        return self.feature_columns[features]

    @property
    def n_trees(self):
        return int(self.tree_starts.shape[0])

    @property
    def tree_stops(self):
        """One past each tree's last node."""
        return np.append(self.tree_starts[1:], self.nodes.shape[0]).astype(np.int64)

    def tree(self, t):
        """Node array of tree ``t`` (child indices are relative to it)."""
        return self.nodes[self.tree_starts[t] : self.tree_stops[t]]

    def trees(self):
        """Yield each tree's node array, in order."""
        for t in range(self.n_trees):
            yield self.tree(t)

    def names(self, default="f{}"):
        """Feature names: those seen in fit, else ``default.format(i)``."""
        if self.feature_names is not None:
            return list(self.feature_names)
        return [default.format(i) for i in range(self.n_features)]

    @property
    def splits(self):
        """Boolean mask of the split (non-leaf) nodes."""
        return self.nodes["is_leaf"] == 0

    def splits_with_learned_missing_direction(self):
        """Boolean mask of the split nodes whose feature had missing values
        in training: where the model's NaN direction was learned, and a
        format without missing values cannot reproduce it."""
        splits = self.splits
        learned = np.zeros(self.nodes.shape[0], dtype=bool)
        learned[splits] = self.missing_in_training[self.nodes["feature_idx"][splits]]
        return learned

    @property
    def is_categorical(self):
        """Boolean mask of the categorical split features."""
        if self.categories is None:
            return np.zeros(self.n_split_features, dtype=bool)
        return np.array([c is not None for c in self.categories])

    @property
    def categorical_columns(self):
        """Boolean mask of the categorical input columns."""
        mask = np.zeros(self.n_features, dtype=bool)
        mask[self.column_of(np.flatnonzero(self.is_categorical))] = True
        return mask

    def column_categories(self, column):
        """The increasing categories of input column ``column`` over all its
        split features, or None if it is numeric."""
        features = np.flatnonzero(self.column_of(np.arange(self.n_split_features)) == column)
        if self.categories is None or self.categories[features[0]] is None:
            return None
        return np.unique(np.concatenate([self.categories[f] for f in features]))

    def encode(self, X):
        """``X`` as the prediction kernels read it: each categorical
        feature's values replaced by their index among its categories, NaN
        for any value that is not one of them; one column per split feature.
        ``X`` itself is returned if no feature is categorical; sparse input
        with categorical features is made dense.
        """
        if self.categories is None:
            return X
        X = X.toarray() if sparse.issparse(X) else X
        if self.feature_columns is not None:
            X = np.asarray(X)[:, self.feature_columns]
        encoded = np.array(X, dtype=X_DTYPE, order="C")
        columns = self.column_of(np.arange(len(self.categories)))
        categorical = np.array([c is not None for c in self.categories])
        for column in np.unique(columns[categorical]).tolist():
            # The split features of one input column: its blocks if it is wide.
            features = np.flatnonzero(columns == column)
            write_block_codes(encoded[:, features[0]], [self.categories[f] for f in features],
                              encoded, features, np.nan)
        return encoded

    def predict(self, X, n_trees=None):
        """Raw scores of unbinned ``X`` (dense or sparse) from the first
        ``n_trees`` trees (all if None).

        The compact copy of the trees that prediction walks is built on the
        first call and cached with the node array, which is read-only: a
        fitted model makes a new TreeEnsemble for every call, on the same
        node array, so the copy is made once per fitted model.
        """
        return predict_raw(self.nodes, self.tree_starts, self.encode(X), n_trees=n_trees,
                           init=self.baseline)

    def apply(self, X):
        """Leaf reached by each row in each tree.

        Parameters
        ----------
        X : ndarray of shape (n_rows, n_features)
            Raw values, NaN for missing.

        Returns
        -------
        leaves : ndarray of shape (n_rows, n_trees), dtype int32
            Index of the leaf node within its tree's node array.
        """
        X = np.ascontiguousarray(self.encode(X), dtype=np.float64)
        tree_starts = _check_ensemble(self.nodes, self.tree_starts, None)
        out = np.zeros((X.shape[0], tree_starts.shape[0]), dtype=np.int32)
        _predict_leaf_nodes(self.nodes, tree_starts, X, out)
        return out
