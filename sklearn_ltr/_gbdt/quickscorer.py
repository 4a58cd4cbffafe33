"""Prediction by QuickScorer: each tree's leaf from bitvectors, one feature at
a time, for a block of rows in SIMD lanes.

QuickScorer (Lucchese, Nardini, Orlando, Perego, Tonellotto and Venturini,
"QuickScorer: a fast algorithm to rank documents with additive ensembles of
regression trees", SIGIR 2015; with SIMD lanes over documents as in their
V-QuickScorer, SIGIR 2016) never walks a tree. Number the leaves of a tree
from left to right. A split that a row does *not* take to the left (here
``x > threshold``, or NaN where NaN goes right) rules out every leaf of its
left subtree: its *mask* is all ones but for those leaves. The leaf a row
reaches is the leftmost leaf that no such split of its tree rules out, so
it is the lowest set bit of the AND of those masks, starting from all ones.
(Every leaf left of the row's leaf lies in the left subtree of a split on
the row's path that the row left to the right; the row's own leaf lies only
in left subtrees of splits it took to the left.)

The splits of all trees are listed feature by feature, by increasing
threshold. For one feature, the rows of a block go through that list in
order, each split applying its mask to the lanes whose value is above the
threshold, and the list ends for the block at the first threshold that no
lane's value exceeds (found by binary search). That inner loop is written
in LLVM IR on vectors of lanes (:func:`_clear_where_above`): one vector
comparison and one masked AND a split for a whole block. On 500 trees of 31
leaves it scores about 2.4 times as many rows a second as the block walk
of :mod:`.predictor`.

The scores are the walk's, bit for bit: the same comparison ``x >
threshold`` in float64 picks the same leaf, each row adds its trees' leaf
values in tree order from 0.0, and the caller adds the baseline. Models it
cannot hold (a tree of more than 64 leaves, a categorical split, a NaN
threshold: :func:`~.predictor.compact_trees` builds no lists for the last
two), and those where it gains nothing (fewer than ``MIN_TREES``
trees; trees of 33 to 64 leaves fewer than ``MIN_DEPTH_64`` levels deep
on average, such as depth-wise trees of depth 6), are walked instead
(:func:`quickscorer_tables` returns None).
"""

from collections import namedtuple

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["LANES", "MIN_DEPTH_64", "MIN_TREES", "QuickScorerTables", "quickscorer_tables",
           "score_quickscorer_block"]

# Rows scored together: 16 float64 values are two AVX-512 registers, their
# 32-bit leaf masks one. In a scratch version, 16 gave the lowest latency on
# one query of 100 rows (124 us against 149 for 32 lanes, 500 trees, Zen 4);
# 32 and 64 lanes scored 7% and 12% more rows a second.
LANES = 16

# The walk is as fast below these (500 trees, 60,000 rows or one query of
# 100, 1 thread; MSLR-shaped data and MQ2008): on fewer trees (2 to 5 trees
# of 31 leaves: 0.89 to 1.09 of the walk's time; 10 trees: 0.65 to 0.83),
# and with 64-bit masks on shallow trees (depth-wise trees of depth 6: 0.96
# to 1.10 of its time; leaf-wise trees of 48 to 63 leaves, 12.6 to 16 levels
# deep on average: 0.55 to 0.75). A one-tree ensemble (``staged_predict``)
# builds no lists.
MIN_TREES = 8
MIN_DEPTH_64 = 8

QuickScorerTables = namedtuple(
    "QuickScorerTables", ["feature_starts", "thresholds", "split_trees", "split_masks",
                          "missing_starts", "missing_trees", "missing_masks", "leaf_values"])
QuickScorerTables.__doc__ = """The splits of an ensemble as QuickScorer's lists.

Attributes
----------
feature_starts : ndarray of shape (n_columns + 1,), dtype int64
    The splits on the ``j``-th of the trees' split columns are
    ``feature_starts[j]:feature_starts[j + 1]`` of the next three arrays.
thresholds : ndarray of shape (n_splits,), dtype float64
    Increasing within each column's range.
split_trees : ndarray of shape (n_splits,), dtype uint32
    The tree of each split.
split_masks : ndarray of shape (n_splits,), dtype uint32 or uint64
    All ones but the bits of the leaves of the split's left subtree (32-bit
    if every tree has at most 32 leaves).
missing_starts, missing_trees, missing_masks : ndarray
    The same lists of the splits that send NaN right (no thresholds).
leaf_values : ndarray of shape (n_trees * bits,), dtype float64
    Leaf ``i`` (from the left) of tree ``t`` at ``t * bits + i``, where
    ``bits`` is the masks' width.
"""


def quickscorer_tables(nodes, tree_starts, tree_of_node, is_leaf, left, right, depth,
                       tree_depths, column_position):
    """The :class:`QuickScorerTables` of an ensemble, or None if a tree has
    more than 64 leaves or if the walk is as fast (see ``MIN_TREES`` and
    ``MIN_DEPTH_64``). The ensemble has no categorical split and no NaN
    threshold (the caller, :func:`~.predictor.compact_trees`, checks).

    Parameters
    ----------
    nodes : ndarray of shape (n_nodes,), dtype NODE_DTYPE
        Concatenated trees.
    tree_starts : ndarray of shape (n_trees,), dtype int64
        Offset of each tree's root.
    tree_of_node : ndarray of shape (n_nodes,), dtype int64
        The tree of each node.
    is_leaf : ndarray of shape (n_nodes,), dtype bool
    left, right : ndarray of shape (n_nodes,), dtype int64
        Global indices of each split's children (anything for leaves).
    depth : ndarray of shape (n_nodes,), dtype int64
        Depth of each node.
    tree_depths : ndarray of shape (n_trees,), dtype int64
        Depth of each tree's deepest leaf.
    column_position : ndarray of shape (n_nodes,), dtype int64
        Position of each node's feature among the split columns.
    """
    is_split = ~is_leaf
    if tree_starts.shape[0] < MIN_TREES:
        return None
    n_nodes = nodes.shape[0]
    levels = [np.flatnonzero(is_split & (depth == d)) for d in range(int(depth.max()) + 1)]
    # Leaves below each node, from the deepest splits up; then the position
    # of each node's leftmost leaf among its tree's leaves, from the roots down.
    n_leaves = np.ones(n_nodes, dtype=np.int64)
    for splits in reversed(levels):
        n_leaves[splits] = n_leaves[left[splits]] + n_leaves[right[splits]]
    most_leaves = n_leaves[tree_starts].max(initial=1)
    if most_leaves > 64:
        return None
    first_leaf = np.zeros(n_nodes, dtype=np.int64)
    for splits in levels:
        first_leaf[left[splits]] = first_leaf[splits]
        first_leaf[right[splits]] = first_leaf[splits] + n_leaves[left[splits]]
    bits = 32 if most_leaves <= 32 else 64
    if bits == 64 and tree_depths.mean() < MIN_DEPTH_64:
        return None
    mask_dtype = np.uint32 if bits == 32 else np.uint64

    splits = np.flatnonzero(is_split)
    left_leaves = n_leaves[left[splits]].astype(np.uint64)
    ones = (np.uint64(1) << left_leaves) - np.uint64(1)  # at most 63 leaves on a left side
    masks = (~(ones << first_leaf[left[splits]].astype(np.uint64))).astype(mask_dtype)
    columns = column_position[splits]
    thresholds = nodes["num_threshold"][splits].astype(np.float64)
    n_columns = int(columns.max()) + 1 if splits.shape[0] else 0
    order = np.lexsort((thresholds, columns))
    missing = np.flatnonzero(nodes["missing_go_to_left"][splits] == 0)
    missing = missing[np.argsort(columns[missing], kind="stable")]

    leaves = np.flatnonzero(is_leaf)
    leaf_values = np.zeros(tree_starts.shape[0] * bits)
    leaf_values[tree_of_node[leaves] * bits + first_leaf[leaves]] = nodes["value"][leaves]
    tables = QuickScorerTables(
        feature_starts=np.searchsorted(columns[order], np.arange(n_columns + 1)).astype(np.int64),
        thresholds=thresholds[order],
        split_trees=tree_of_node[splits][order].astype(np.uint32),
        split_masks=masks[order],
        missing_starts=np.searchsorted(columns[missing], np.arange(n_columns + 1)).astype(
            np.int64),
        missing_trees=tree_of_node[splits][missing].astype(np.uint32),
        missing_masks=masks[missing],
        leaf_values=leaf_values,
    )
    for array in tables:
        array.flags.writeable = False
    return tables


def _array_data(context, builder, array_type, array):
    return context.make_array(array_type)(context, builder, array).data


def _splat(builder, value, width):
    vector = ir.Constant(ir.VectorType(value.type, width), ir.Undefined)
    vector = builder.insert_element(vector, value, ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(vector, vector,
                                  ir.Constant(ir.VectorType(ir.IntType(32), width), [0] * width))


def _clear_loop(on_nan):
    """The intrinsic that applies the masks of splits ``start:stop`` to the
    lanes whose value is above the split's threshold (``on_nan``: whose
    value is NaN; thresholds are then not read)."""

    @intrinsic
    def clear(typingctx, leaf_masks, lane_values, lane_start, thresholds, split_trees,
              split_masks, start, stop):
        signature = types.void(leaf_masks, lane_values, lane_start, thresholds, split_trees,
                               split_masks, start, stop)
        bits = leaf_masks.dtype.bitwidth

        def codegen(context, builder, sig, args):
            (masks_arg, values_arg, lane_start_arg, thresholds_arg, trees_arg, split_masks_arg,
             start_arg, stop_arg) = args
            mask_type = ir.IntType(bits)
            i64 = ir.IntType(64)
            masks_data = _array_data(context, builder, sig.args[0], masks_arg)
            values_data = _array_data(context, builder, sig.args[1], values_arg)
            thresholds_data = _array_data(context, builder, sig.args[3], thresholds_arg)
            trees_data = _array_data(context, builder, sig.args[4], trees_arg)
            split_masks_data = _array_data(context, builder, sig.args[5], split_masks_arg)
            # The lanes' values, read once for all the splits.
            values_pointer = builder.bitcast(
                builder.gep(values_data, [lane_start_arg]),
                ir.VectorType(ir.DoubleType(), LANES).as_pointer())
            values = builder.load(values_pointer, align=8)
            if on_nan:
                cleared_lanes = builder.fcmp_unordered("uno", values, values)
            with cgutils.for_range(builder, stop_arg, start=start_arg) as loop:
                split = loop.index
                tree = builder.zext(builder.load(builder.gep(trees_data, [split])), i64)
                mask = builder.load(builder.gep(split_masks_data, [split]))
                pointer = builder.bitcast(
                    builder.gep(masks_data, [builder.mul(tree, i64(LANES))]),
                    ir.VectorType(mask_type, LANES).as_pointer())
                if not on_nan:
                    threshold = builder.load(builder.gep(thresholds_data, [split]))
                    cleared_lanes = builder.fcmp_ordered(">", values,
                                                         _splat(builder, threshold, LANES))
                old = builder.load(pointer, align=bits // 8)
                new = builder.select(cleared_lanes, builder.and_(old, _splat(builder, mask, LANES)),
                                     old)
                builder.store(new, pointer, align=bits // 8)
            return context.get_dummy_value()

        return signature, codegen

    return clear


_clear_where_above = _clear_loop(on_nan=False)
_clear_where_nan = _clear_loop(on_nan=True)


@intrinsic
def _lowest_set_bit(typingctx, word):
    """Index of the lowest set bit of a nonzero unsigned integer (LLVM's cttz)."""
    def codegen(context, builder, sig, args):
        return builder.zext(builder.cttz(args[0], ir.Constant(ir.IntType(1), 1)),
                            ir.IntType(64))
    return types.int64(word), codegen


@njit(inline="always", cache=True)
def score_quickscorer_block(feature_starts, thresholds, split_trees, split_masks,
                            missing_starts, missing_trees, missing_masks, leaf_values, columns,
                            X, start, n_in_block, lane_values, leaf_masks, acc):
    """Set ``acc[:n_in_block]`` to the sums of the leaf values, tree by tree
    in order, of rows ``start:start + n_in_block`` (at most ``LANES``) of X.

    ``lane_values`` (``len(columns) * LANES`` float64) and ``leaf_masks``
    (``n_trees * LANES`` of the masks' type) are work buffers.
    """
    n_columns = columns.shape[0]
    n_trees = leaf_masks.shape[0] // LANES
    leaf_masks[:] = -1  # all ones, whatever the masks' width
    # Row by row, as X is laid out; unused lanes hold -inf, above no threshold.
    for r in range(LANES):
        if r < n_in_block:
            for j in range(n_columns):
                lane_values[j * LANES + r] = X[start + r, columns[j]]
        else:
            for j in range(n_columns):
                lane_values[j * LANES + r] = -np.inf
    for j in range(n_columns):
        highest = -np.inf
        with_nan = False
        for r in range(LANES):
            x = lane_values[j * LANES + r]
            if x > highest:
                highest = x
            with_nan |= x != x
        lo = feature_starts[j]
        hi = feature_starts[j + 1]
        # The splits whose threshold is below some lane's value.
        stop = lo + np.searchsorted(thresholds[lo:hi], highest)
        _clear_where_above(leaf_masks, lane_values, j * LANES, thresholds, split_trees,
                           split_masks, lo, stop)
        if with_nan:
            _clear_where_nan(leaf_masks, lane_values, j * LANES, thresholds, missing_trees,
                             missing_masks, missing_starts[j], missing_starts[j + 1])
    bits = leaf_values.shape[0] // n_trees
    # All lanes, a fixed count the compiler unrolls (unused ones read leaf 0).
    for r in range(LANES):
        acc[r] = 0.0
    for t in range(n_trees):
        for r in range(LANES):
            acc[r] += leaf_values[t * bits + _lowest_set_bit(leaf_masks[t * LANES + r])]
