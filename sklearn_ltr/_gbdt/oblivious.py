"""Prediction with symmetric (oblivious) trees: a leaf is an index built from
one comparison per level, not a walk.

In a tree whose split nodes of each level all share one split (``feature``,
``num_threshold``, ``missing_go_to_left``), as ``grow_policy="symmetric"``
grows them, the leaf of a row is the binary number whose ``l``-th digit
(from the top) says whether the row goes right at level ``l``. A block of
rows computes that number for every row, level by level, with the same
feature and threshold for all of them: no pointer chasing and no branch,
so the loop runs on SIMD lanes. A tree grown symmetric may stop a branch
early (a node whose shared split would break ``min_samples_leaf``); its leaf
table repeats that leaf's value for every index below it, which is what the
node walk gives.

The sums are the node walk's, bit for bit: each row adds its trees' values
in tree order from 0.0, and the caller adds the baseline.
"""

from collections import namedtuple

import numpy as np
from numba import njit

__all__ = ["ObliviousTrees", "oblivious_trees", "walk_oblivious_block"]

# A leaf table has 2**depth entries: deeper trees are walked instead.
MAX_OBLIVIOUS_DEPTH = 12

ObliviousTrees = namedtuple(
    "ObliviousTrees", ["level_offset", "level_threshold", "level_missing_right", "depths",
                       "leaf_starts", "leaf_values"])
ObliviousTrees.__doc__ = """Symmetric trees as level splits and leaf tables.

Attributes
----------
level_offset : ndarray of shape (n_trees, max_depth), dtype uint32
    Where a block of rows holds the values of level ``l``'s feature (its
    position among the ensemble's split columns times the block's rows).
level_threshold : ndarray of shape (n_trees, max_depth), dtype float64
    Go right iff ``x > threshold``.
level_missing_right : ndarray of shape (n_trees, max_depth), dtype uint8
    1 where NaN goes right.
depths : ndarray of shape (n_trees,), dtype int64
    Number of levels of each tree.
leaf_starts : ndarray of shape (n_trees,), dtype int64
    Offset of each tree's ``2**depth`` leaf values in ``leaf_values``.
leaf_values : ndarray of shape (n_values,), dtype float64
    The leaf tables, tree after tree.
"""


def oblivious_trees(nodes, tree_starts, depth, column_position, block_rows):
    """The :class:`ObliviousTrees` of an ensemble, or None if a tree is not
    symmetric (or too deep). The ensemble has no categorical split and no
    NaN threshold (the caller, :func:`~.predictor.compact_trees`, checks).

    Parameters
    ----------
    nodes : ndarray of shape (n_nodes,), dtype NODE_DTYPE
        Concatenated trees.
    tree_starts : ndarray of shape (n_trees,), dtype int64
        Offset of each tree's root.
    depth : ndarray of shape (n_nodes,), dtype int64
        Depth of each node.
    column_position : ndarray of shape (n_nodes,), dtype int64
        Position of each node's feature among the split columns.
    block_rows : int
        Rows of a block (the offsets' unit).
    """
    n_trees = tree_starts.shape[0]
    tree_stops = np.append(tree_starts[1:], nodes.shape[0])
    is_split = nodes["is_leaf"] == 0
    depths = np.zeros(n_trees, dtype=np.int64)
    for t in range(n_trees):
        leaves = depth[tree_starts[t]:tree_stops[t]][~is_split[tree_starts[t]:tree_stops[t]]]
        depths[t] = leaves.max()
    max_depth = int(depths.max(initial=0))
    if max_depth > MAX_OBLIVIOUS_DEPTH:
        return None
    width = max(max_depth, 1)
    level_offset = np.zeros((n_trees, width), dtype=np.uint32)
    level_threshold = np.zeros((n_trees, width))
    level_missing_right = np.zeros((n_trees, width), dtype=np.uint8)
    leaf_starts = np.zeros(n_trees, dtype=np.int64)
    leaf_starts[1:] = np.cumsum(2 ** depths[:-1])
    leaf_values = np.empty(int((2 ** depths).sum()))
    for t in range(n_trees):
        start, stop = tree_starts[t], tree_stops[t]
        tree = nodes[start:stop]
        split = is_split[start:stop]
        tree_depth = depth[start:stop]
        for level in range(depths[t]):
            at = np.flatnonzero(split & (tree_depth == level))
            keys = {(int(tree["feature_idx"][k]), float(tree["num_threshold"][k]),
                     int(tree["missing_go_to_left"][k])) for k in at}
            if len(keys) != 1:
                return None
            k = at[0]
            level_offset[t, level] = column_position[start + k] * block_rows
            level_threshold[t, level] = tree["num_threshold"][k]
            level_missing_right[t, level] = tree["missing_go_to_left"][k] == 0
        _fill_leaf_table(tree["left"], tree["right"], tree["is_leaf"], tree["value"],
                         int(depths[t]), leaf_values[leaf_starts[t]:leaf_starts[t]
                                                     + 2 ** depths[t]])
    trees = ObliviousTrees(level_offset, level_threshold, level_missing_right, depths,
                           leaf_starts, leaf_values)
    for array in trees:
        array.flags.writeable = False
    return trees


@njit(cache=True)
def _fill_leaf_table(left, right, is_leaf, value, n_levels, out):
    """``out[i]`` is the value of the leaf that the digits of ``i`` (the
    top one first, 1 for right) lead to from the root."""
    for i in range(out.shape[0]):
        k = 0
        for level in range(n_levels):
            if is_leaf[k]:
                break
            if (i >> (n_levels - 1 - level)) & 1:
                k = right[k]
            else:
                k = left[k]
        out[i] = value[k]


@njit(inline="always", cache=True)
def walk_oblivious_block(level_offset, level_threshold, level_missing_right, depths,
                         leaf_starts, leaf_values, n_trees, xb, n_lanes, with_nan, index, acc):
    """Set ``acc[:n_lanes]`` to the sums of the leaf values, tree by tree in
    order, of the rows of the feature-major block ``xb`` (as in the
    predictor's block walk)."""
    for r in range(n_lanes):
        acc[r] = 0.0
    for t in range(n_trees):
        for r in range(n_lanes):
            index[r] = 0
        for level in range(depths[t]):
            offset = level_offset[t, level]
            threshold = level_threshold[t, level]
            nan_right = level_missing_right[t, level] != 0
            for r in range(n_lanes):
                x = xb[offset + r]
                right = x > threshold
                if with_nan:
                    right |= (x != x) & nan_right
                index[r] = 2 * index[r] + right
        base = leaf_starts[t]
        for r in range(n_lanes):
            acc[r] += leaf_values[base + index[r]]

