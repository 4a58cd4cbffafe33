"""This module contains the njitted routines that predict with an ensemble of trees.

An ensemble is one flat ``NODE_DTYPE`` array, the concatenation of every
tree's nodes, plus ``tree_starts``: the offset of each tree's root. Child
indices (``left``/``right``) are relative to their own tree's start, so a
tree's node array is self-contained and can be concatenated as is.
Predicting with the first ``m`` trees only (``staged_predict``) is
``tree_starts[:m]``.

Prediction from raw values does not walk the ``NODE_DTYPE`` records: it
walks a compact copy of the trees (:class:`CompactTrees`: the fields it
reads, about 30 bytes a node, built once per fitted model and cached), a
block of rows at a time. Walking one row down one tree is a chain of
dependent loads and of branches that go either way at random, so a
row-by-row walk spends most of its time on mispredicted branches and on
waiting for loads. Here a block of rows goes down a tree together, one level
at a time: at every level each row of the block takes one step, chosen by
arithmetic on the comparison rather than by a branch, and a leaf is its own
child so that a row that reached it stays there. The steps of different rows
are independent, so the processor overlaps them; the tree (2 kB for 31
leaves) stays in the L1 cache while the block uses it; and the block's
values are copied feature-major, so that its rows' values of one feature are
contiguous. On 500 trees of 31 leaves this is about 3x the throughput of the
row-by-row walk, although a 64-row block takes about 7 steps a tree where a
row needs 3.8 on average (leaf-wise trees are lopsided): a block stops as
soon as all its rows are on leaves, not after the tree's deepest leaf.

Each row still adds its trees' values in tree order, starting from 0.0, and
adds the sum to the baseline at the end, as the row-by-row walk did, so the
scores are bit-identical to it and do not depend on the number of threads.

Two layouts replace the walk where they can, with the same scores bit for
bit: symmetric trees are scored from leaf tables (:mod:`.oblivious`), and
most other ensembles of trees of at most 64 leaves without categorical
splits by QuickScorer (:mod:`.quickscorer`), about 2.4 times as fast as
the walk on 500 trees of 31 leaves. The walk remains for the first
``n_trees`` trees of an ensemble, for ``staged_predict``'s single trees and
for the trees those cannot hold or would not score faster.

Categorical splits test the bit of a category in the node's bitset. The
kernels here read a categorical feature's value as its category's *code*,
its index among the feature's categories (NaN for missing and unknown
categories): :meth:`~.ensemble.TreeEnsemble.predict` encodes raw
categories before it calls them.
"""

import weakref
from collections import namedtuple

import numpy as np
from numba import njit, prange, uint32, uint64
from scipy import sparse

from .._utils.parallel import pick, serial_twin
from .common import BITSET_WORDS, NODE_DTYPE, X_DTYPE, in_bitset, readonly_view
from .oblivious import oblivious_trees, walk_oblivious_block
from .quickscorer import LANES, quickscorer_tables, score_quickscorer_block

# Sparse input is densified this many cells at a time (32 MB of float64).
_SPARSE_CHUNK_CELLS = 4_000_000

# Rows a thread scores by QuickScorer between two allocations of its work
# buffers (a multiple of LANES).
_QUICKSCORER_CHUNK_ROWS = 256

# Rows walked together down each tree (a multiple of 8). 32 to 128 are
# equally fast on Zen 4; 64 rows of 136 float64 features (70 kB) stay within
# the L2 cache.
_BLOCK_ROWS = 64


@njit(inline="always", cache=True)
def _leaf_of_row(nodes, base, X, i):
    """Index in ``nodes`` of the leaf that row ``i`` of raw ``X`` reaches in
    the tree rooted at ``base``: left iff ``x <= num_threshold`` (at a
    categorical split, iff the code ``x`` is in ``left_categories``), NaN to
    ``missing_go_to_left``'s side."""
    k = base
    while not nodes[k]["is_leaf"]:
        x = X[i, nodes[k]["feature_idx"]]
        if np.isnan(x):
            go_left = nodes[k]["missing_go_to_left"] != 0
        elif nodes[k]["is_categorical"]:
            go_left = in_bitset(nodes[k]["left_categories"], int(x))
        else:
            go_left = x <= nodes[k]["num_threshold"]
        k = base + (nodes[k]["left"] if go_left else nodes[k]["right"])
    return k


CompactTrees = namedtuple(
    "CompactTrees", ["feature_offset", "threshold", "missing_right", "children", "value",
                     "categorical", "category_bits", "roots", "depths", "columns",
                     "n_features_split", "oblivious", "quickscorer"])
CompactTrees.__doc__ = """The trees of an ensemble in the layout that :func:`_predict_blocks` walks.

Node ``k`` is node ``k`` of the flat ``NODE_DTYPE`` array (so a leaf's
index within its tree is ``k - tree_start``). All indices are global.

Attributes
----------
feature_offset : ndarray of shape (n_nodes,), dtype uint32
    Where a block of rows holds the values of the split feature: its
    position in ``columns`` times ``_BLOCK_ROWS`` (a multiplication less per
    step); 0 for leaves (read, never used).
threshold : ndarray of shape (n_nodes,), dtype float64
    Go left iff ``x <= threshold``.
missing_right : ndarray of shape (n_nodes,), dtype uint8
    1 where NaN goes right.
children : ndarray of shape (2 * n_nodes,), dtype uint32
    ``children[2k]`` is the left child, ``children[2k + 1]`` the right one,
    both after ``k``; a leaf is its own two children, so that further steps
    leave a row on it.
value : ndarray of shape (n_nodes,), dtype float64
    Leaf values (0 for splits).
categorical : ndarray of shape (n_nodes,), dtype uint8
    1 at categorical splits.
category_bits : ndarray of shape (n_nodes, BITSET_WORDS), dtype uint32
    The codes that go left at categorical splits; shape (0, BITSET_WORDS)
    if the trees have none, which tells the kernel to skip the test.
roots : ndarray of shape (n_trees,), dtype uint32
    Each tree's root.
depths : ndarray of shape (n_trees,), dtype int64
    Depth of each tree's deepest leaf: after that many steps every row is
    on its leaf.
columns : ndarray of shape (n_columns,), dtype int64
    The features the trees split on, increasing: the only columns of X a
    block copies (a single tree of ``staged_predict`` uses a few).
n_features_split : int
    One more than the largest feature index of a split: the columns X needs.
oblivious : ObliviousTrees or None
    The same trees as level splits and leaf tables if every tree is
    symmetric (:mod:`.oblivious`), which predicts them faster; else None.
quickscorer : QuickScorerTables or None
    The same trees as QuickScorer's lists (:mod:`.quickscorer`), which
    score all of them faster than the walk; None for trees it cannot hold
    or would not score faster.
"""


def compact_trees(nodes, tree_starts):
    """Build the :class:`CompactTrees` of an ensemble.

    Parameters
    ----------
    nodes : ndarray of shape (n_nodes,), dtype NODE_DTYPE
        Concatenated trees; tree ``t`` is ``nodes[tree_starts[t]:tree_starts[t + 1]]``.
    tree_starts : ndarray of shape (n_trees,), dtype int64
        Offset of each tree's root.

    Returns
    -------
    trees : CompactTrees

    Raises
    ------
    ValueError
        If a child index points outside its tree or not after its parent.
    """
    n_nodes = nodes.shape[0]
    if n_nodes >= 2**31 - 1 or nodes["feature_idx"].max(initial=0) >= 2**32 // _BLOCK_ROWS:
        raise ValueError("Too many nodes or features for the kernel's 32-bit indices.")
    tree_starts = np.asarray(tree_starts, dtype=np.int64)
    tree_stops = np.append(tree_starts[1:], n_nodes)
    sizes = tree_stops - tree_starts
    if np.any(sizes <= 0) or (tree_starts.shape[0] and tree_starts[0] != 0):
        raise ValueError("tree_starts must be increasing offsets into nodes, from 0.")
    tree_of_node = np.repeat(np.arange(tree_starts.shape[0]), sizes)
    is_leaf = nodes["is_leaf"] != 0
    own = np.arange(n_nodes, dtype=np.int64)
    base = tree_starts[tree_of_node]
    left = np.where(is_leaf, own, base + nodes["left"])
    right = np.where(is_leaf, own, base + nodes["right"])
    stop = tree_stops[tree_of_node]
    # The kernel's test for "no row moved" needs children after parents (as
    # the trees are grown), which also rules out cycles.
    if np.any(~is_leaf & ((left <= own) | (left >= stop) | (right <= own) | (right >= stop))):
        raise ValueError("A child index points outside its tree or not after its parent.")
    # A NaN threshold sends every number right (x <= NaN is false) but the
    # kernel's x > NaN is false too: such a split gets its children swapped
    # and its missing direction flipped, so that the step's "right" means
    # "NaN, and NaN goes left", exactly the rule.
    missing_left = nodes["missing_go_to_left"] != 0
    categorical = ~is_leaf & (nodes["is_categorical"] != 0)
    swap = ~is_leaf & ~categorical & np.isnan(nodes["num_threshold"])
    children = np.empty(2 * n_nodes, dtype=np.uint32)
    children[0::2] = np.where(swap, right, left)
    children[1::2] = np.where(swap, left, right)

    # Depth of each node, one level at a time from the roots.
    depth = np.full(n_nodes, -1, dtype=np.int64)
    level = tree_starts
    d = 0
    while level.shape[0]:
        depth[level] = d
        level = level[~is_leaf[level]]
        level = np.concatenate((left[level], right[level]))
        d += 1
    depths = np.zeros(tree_starts.shape[0], dtype=np.int64)
    np.maximum.at(depths, tree_of_node, depth)

    # Leaf tables and QuickScorer's lists hold numeric thresholds only.
    only_numeric_splits = not (categorical.any() or swap.any())

    columns = np.unique(nodes["feature_idx"][~is_leaf]).astype(np.int64)
    position = np.searchsorted(columns, nodes["feature_idx"])
    trees = CompactTrees(
        feature_offset=(np.where(is_leaf, 0, position).astype(np.uint32)
                        * np.uint32(_BLOCK_ROWS)),
        threshold=np.where(is_leaf | categorical, 0.0, nodes["num_threshold"]).astype(np.float64),
        missing_right=(~is_leaf & (missing_left == swap)).astype(np.uint8),
        children=children,
        value=np.where(is_leaf, nodes["value"], 0.0).astype(np.float64),
        categorical=categorical.astype(np.uint8),
        category_bits=(np.ascontiguousarray(nodes["left_categories"]) if categorical.any()
                       else np.zeros((0, BITSET_WORDS), dtype=np.uint32)),
        roots=tree_starts.astype(np.uint32),
        depths=depths,
        columns=columns,
        n_features_split=int(columns[-1]) + 1 if columns.shape[0] else 0,
        oblivious=(oblivious_trees(nodes, tree_starts, depth, position, _BLOCK_ROWS)
                   if only_numeric_splits else None),
        quickscorer=(quickscorer_tables(nodes, tree_starts, tree_of_node, is_leaf, left, right,
                                        depth, depths, position)
                     if only_numeric_splits else None),
    )
    # Read-only, as the kernel's arguments always are (one compiled
    # specialisation), and since a cached copy is shared by every call.
    for array in trees[:10]:
        array.flags.writeable = False
    return trees


# Compact trees of frozen (read-only) node arrays, by id(nodes): a fitted
# model's TreeEnsemble is made anew for every predict call, but its node
# array is the same object, so the compact copy is built once per fitted
# model. An entry goes when its node array does (weak reference callback).
_COMPACT_CACHE = {}


def _cached_compact_trees(nodes, tree_starts):
    """:func:`compact_trees`, cached for read-only node arrays (a fitted
    model's). A writeable array (a tree being grown, a hand-built one) may
    change between calls, so its compact copy is never cached."""
    if nodes.flags.writeable:
        return compact_trees(nodes, tree_starts)
    key = id(nodes)
    entry = _COMPACT_CACHE.get(key)
    if entry is not None:
        ref, starts, trees = entry
        if ref() is nodes and (starts is tree_starts or np.array_equal(starts, tree_starts)):
            return trees
    trees = compact_trees(nodes, tree_starts)
    ref = weakref.ref(nodes, lambda _, key=key: _COMPACT_CACHE.pop(key, None))
    # tree_starts itself when it is frozen too (a TreeEnsemble's), so that
    # the next call finds it by identity.
    starts = tree_starts if not tree_starts.flags.writeable else tree_starts.copy()
    _COMPACT_CACHE[key] = (ref, starts, trees)
    return trees


@njit(inline="always", cache=True)
def _walk_block(feature_offset, threshold, missing_right, children, value, categorical,
                category_bits, roots, depths, xb, n_lanes, with_nan, index, acc):
    """Set ``acc[:n_lanes]`` to the sums of the leaf values, tree by tree in
    order, of the rows whose values are in the feature-major block ``xb``
    (row ``r``'s value of the ``j``-th of the trees' ``columns`` at
    ``xb[j * _BLOCK_ROWS + r]``).

    ``with_nan`` says whether the block has NaN: without, ``x > threshold``
    alone decides, in a step that takes about a third less time than one
    that also tests NaN. Trees without categorical splits (an empty
    ``category_bits``) skip their test the same way.
    """
    with_categorical = category_bits.shape[0] > 0
    for r in range(n_lanes):
        acc[r] = 0.0
    for t in range(roots.shape[0]):
        root = roots[t]
        for r in range(n_lanes):
            index[r] = root
        # Stop when no row moved (all are on leaves): on 500 trees of 31
        # leaves (10 levels deep at most, a row's leaf 3.8 on average),
        # 64-row blocks take 30% fewer steps, and a few rows far fewer. A
        # child comes after its parent, so the sum of the rows' nodes grows
        # iff a row moved: one addition a step.
        total = uint64(0)
        for _ in range(depths[t]):
            previous = total
            total = uint64(0)
            for r in range(n_lanes):
                k = index[r]
                x = xb[feature_offset[k] + uint32(r)]
                right = x > threshold[k]
                if with_nan:  # hoisted by the compiler: NaN-free blocks pay nothing
                    right |= (x != x) & (missing_right[k] != 0)
                if with_categorical and categorical[k] and x == x:
                    right = not in_bitset(category_bits[k], int(x))
                step = children[(k << uint32(1)) + uint32(right)]
                total += step
                index[r] = step
            if total == previous:
                break
        for r in range(n_lanes):
            acc[r] += value[index[r]]


@njit(inline="always", cache=True)
def _copy_block(X, start, n_in_block, n_lanes, columns, xb):
    """Copy the ``n_in_block`` rows of ``X`` from ``start``, their values of
    ``columns``, into the feature-major block ``xb`` (row ``r``'s value of
    the ``j``-th column at ``xb[j * _BLOCK_ROWS + r]``), with zeros in the
    lanes from ``n_in_block`` to ``n_lanes``; return whether any is NaN."""
    n_columns = columns.shape[0]
    for j in range(n_columns):
        for r in range(n_in_block, n_lanes):
            xb[j * _BLOCK_ROWS + r] = 0.0
    if n_columns == 0:  # only leaves: their offset 0 is read, never used
        xb[:] = 0.0
    with_nan = False
    for r in range(n_in_block):
        for j in range(n_columns):
            x = X[start + r, columns[j]]
            xb[j * _BLOCK_ROWS + r] = x
            with_nan |= x != x
    return with_nan


@njit(parallel=True, cache=True)
def _predict_blocks(feature_offset, threshold, missing_right, children, value, categorical,
                    category_bits, roots, depths, columns, X, out):
    """Add the ensemble's prediction for raw values to ``out``.

    A row goes left at a split iff ``x <= threshold``; NaN goes right iff
    ``missing_right``. Blocks of ``_BLOCK_ROWS`` rows are independent, and
    each row sums its trees in order, so the result does not depend on the
    number of threads.

    Parameters
    ----------
    feature_offset, threshold, missing_right, children, value, categorical, category_bits, roots, depths, columns : ndarray
        The fields of :class:`CompactTrees` (``roots`` and ``depths`` may be
        the first trees' only).
    X : ndarray of shape (n_rows, n_features), dtype float64
        Raw values, C order.
    out : ndarray of shape (n_rows,), dtype float64
        Predictions, updated in place.
    """
    n_rows = X.shape[0]
    n_columns = columns.shape[0]
    n_blocks = (n_rows + _BLOCK_ROWS - 1) // _BLOCK_ROWS
    for b in prange(n_blocks):
        start = b * _BLOCK_ROWS
        n_in_block = n_rows - start if n_rows - start < _BLOCK_ROWS else _BLOCK_ROWS
        # Lanes past the block's rows walk zeros and are dropped; whole
        # groups of 8 lanes keep the step loop regular, but a block of a
        # few rows (one query's, one request's) walks only its rows.
        n_lanes = n_in_block if n_in_block < 8 else (n_in_block + 7) // 8 * 8
        xb = np.empty((n_columns if n_columns else 1) * _BLOCK_ROWS)
        with_nan = _copy_block(X, start, n_in_block, n_lanes, columns, xb)
        index = np.empty(_BLOCK_ROWS, dtype=np.uint32)
        acc = np.empty(_BLOCK_ROWS)
        _walk_block(feature_offset, threshold, missing_right, children, value, categorical,
                    category_bits, roots, depths, xb, n_lanes, with_nan, index, acc)
        for r in range(n_in_block):
            out[start + r] += acc[r]


@njit(parallel=True, cache=True)
def _predict_oblivious_blocks(level_offset, level_threshold, level_missing_right, depths,
                              leaf_starts, leaf_values, n_trees, columns, X, out):
    """Add the symmetric ensemble's prediction for raw values to ``out``: the
    blocks of :func:`_predict_blocks`, each through
    :func:`~.oblivious.walk_oblivious_block`. Each row sums its trees in
    order, so the result does not depend on the number of threads."""
    n_rows = X.shape[0]
    n_columns = columns.shape[0]
    n_blocks = (n_rows + _BLOCK_ROWS - 1) // _BLOCK_ROWS
    for b in prange(n_blocks):
        start = b * _BLOCK_ROWS
        n_in_block = n_rows - start if n_rows - start < _BLOCK_ROWS else _BLOCK_ROWS
        n_lanes = n_in_block if n_in_block < 8 else (n_in_block + 7) // 8 * 8
        xb = np.empty((n_columns if n_columns else 1) * _BLOCK_ROWS)
        with_nan = _copy_block(X, start, n_in_block, n_lanes, columns, xb)
        index = np.empty(_BLOCK_ROWS, dtype=np.int64)
        acc = np.empty(_BLOCK_ROWS)
        walk_oblivious_block(level_offset, level_threshold, level_missing_right, depths,
                             leaf_starts, leaf_values, n_trees, xb, n_lanes, with_nan, index,
                             acc)
        for r in range(n_in_block):
            out[start + r] += acc[r]


@njit(parallel=True, cache=True)
def _predict_quickscorer_blocks(feature_starts, thresholds, split_trees, split_masks,
                                missing_starts, missing_trees, missing_masks, leaf_values,
                                n_trees, columns, X, out):
    """Add the ensemble's prediction for raw values to ``out``, by
    :func:`~.quickscorer.score_quickscorer_block` on blocks of ``LANES``
    rows. Each row sums its trees in order, so the result does not depend
    on the number of threads."""
    n_rows = X.shape[0]
    n_columns = columns.shape[0]
    n_chunks = (n_rows + _QUICKSCORER_CHUNK_ROWS - 1) // _QUICKSCORER_CHUNK_ROWS
    for c in prange(n_chunks):
        lane_values = np.empty(max(n_columns, 1) * LANES)
        leaf_masks = np.empty(n_trees * LANES, dtype=split_masks.dtype)
        acc = np.empty(LANES)
        stop = min(n_rows, (c + 1) * _QUICKSCORER_CHUNK_ROWS)
        for start in range(c * _QUICKSCORER_CHUNK_ROWS, stop, LANES):
            n_in_block = min(LANES, stop - start)
            score_quickscorer_block(feature_starts, thresholds, split_trees, split_masks,
                                    missing_starts, missing_trees, missing_masks, leaf_values,
                                    columns, X, start, n_in_block, lane_values, leaf_masks, acc)
            for r in range(n_in_block):
                out[start + r] += acc[r]


@njit(parallel=True, cache=True)
def _predict_leaf_nodes(nodes, tree_starts, X, out):
    """Write the leaf each row reaches in each tree, by the rule of
    :func:`_predict_blocks`, as the leaf's index within its tree, into
    ``out`` of shape (n_rows, n_trees)."""
    n_rows = X.shape[0]
    n_trees = tree_starts.shape[0]
    for i in prange(n_rows):
        for t in range(n_trees):
            out[i, t] = _leaf_of_row(nodes, tree_starts[t], X, i) - tree_starts[t]


@njit(parallel=True, cache=True)
def _predict_binned_rows(nodes, tree_starts, X_binned, out, missing_values_bin_idx):
    """Add the ensemble's prediction for binned values to ``out``.

    A row goes left at a split iff its bin is ``<= bin_threshold``; the
    missing bin follows ``missing_go_to_left``.

    Parameters
    ----------
    nodes : ndarray of shape (n_nodes,), dtype NODE_DTYPE
        Concatenated trees.
    tree_starts : ndarray of shape (n_trees,), dtype int64
        Index of each tree's root in ``nodes``.
    X_binned : ndarray of shape (n_rows, n_features), dtype uint8
        Binned values, binned with the mapper used in training.
    out : ndarray of shape (n_rows,), dtype float64
        Predictions, updated in place.
    missing_values_bin_idx : int
        Bin of missing values.
    """
    n_rows = X_binned.shape[0]
    n_trees = tree_starts.shape[0]
    for i in prange(n_rows):
        acc = 0.0
        for t in range(n_trees):
            base = tree_starts[t]
            k = base
            while not nodes[k]["is_leaf"]:
                b = X_binned[i, nodes[k]["feature_idx"]]
                if b == missing_values_bin_idx:
                    go_left = nodes[k]["missing_go_to_left"] != 0
                elif nodes[k]["is_categorical"]:
                    go_left = in_bitset(nodes[k]["left_categories"], b)
                else:
                    go_left = b <= nodes[k]["bin_threshold"]
                if go_left:
                    k = base + nodes[k]["left"]
                else:
                    k = base + nodes[k]["right"]
            acc += nodes[k]["value"]
        out[i] += acc


_predict_blocks_serial = serial_twin(_predict_blocks)
_predict_oblivious_blocks_serial = serial_twin(_predict_oblivious_blocks)
_predict_quickscorer_blocks_serial = serial_twin(_predict_quickscorer_blocks)
_predict_binned_rows_serial = serial_twin(_predict_binned_rows)

# Predictions of fewer (rows x trees) than this run in the serial twin of
# the kernels (see sklearn_ltr._utils.parallel): under 0.4 ms of work (about 20 ns
# per row and tree of 31 leaves for binned rows, 5 ns for the blocks of raw
# rows), where threads save a fraction of a millisecond; and a small fit's
# first predict compiles no parallel kernel.
_MIN_PARALLEL_ROW_TREES = 20_000
_MIN_PARALLEL_BLOCK_ROW_TREES = 80_000


def _predict_binned(nodes, tree_starts, X_binned, out, missing_values_bin_idx):
    """:func:`_predict_binned_rows` in its parallel or serial version (by the
    size of the work, as in :func:`predict_raw`), on read-only views of the
    trees: one compiled specialisation serves the booster's growing trees
    and a fitted model's frozen ones."""
    predict = pick(_predict_binned_rows, _predict_binned_rows_serial,
                   X_binned.shape[0] * tree_starts.shape[0], _MIN_PARALLEL_ROW_TREES)
    predict(readonly_view(nodes), readonly_view(tree_starts), X_binned, out,
            missing_values_bin_idx)


def concatenate_trees(trees):
    """Concatenate node arrays of several trees into one ensemble.

    Parameters
    ----------
    trees : list of ndarray of dtype NODE_DTYPE
        Node arrays, one per tree (e.g. ``GrownTree.nodes``).

    Returns
    -------
    nodes : ndarray of shape (n_nodes,), dtype NODE_DTYPE
        All nodes.
    tree_starts : ndarray of shape (n_trees,), dtype int64
        Offset of each tree's root in ``nodes``.
    """
    sizes = np.array([len(t) for t in trees], dtype=np.int64)
    tree_starts = np.zeros(len(trees), dtype=np.int64)
    if len(trees) > 1:
        tree_starts[1:] = np.cumsum(sizes[:-1])
    if len(trees):
        nodes = np.concatenate(trees).astype(NODE_DTYPE, copy=False)
    else:
        nodes = np.zeros(0, dtype=NODE_DTYPE)
    return nodes, tree_starts


def _check_ensemble(nodes, tree_starts, n_trees):
    if nodes.dtype != NODE_DTYPE:
        raise ValueError("nodes must have dtype NODE_DTYPE.")
    tree_starts = np.asarray(tree_starts, dtype=np.int64)
    if n_trees is not None:
        if not 0 <= n_trees <= tree_starts.shape[0]:
            raise ValueError(
                f"n_trees must be in [0, {tree_starts.shape[0]}], got {n_trees}."
            )
        tree_starts = tree_starts[:n_trees]
    return tree_starts


def predict_raw(nodes, tree_starts, X, n_trees=None, init=0.0):
    """Predict raw scores from raw feature values.

    Parameters
    ----------
    nodes : ndarray of shape (n_nodes,), dtype NODE_DTYPE
        Concatenated trees (see :func:`concatenate_trees`).
    tree_starts : ndarray of shape (n_trees_total,), dtype int64
        Offset of each tree's root.
    X : ndarray or scipy sparse matrix of shape (n_rows, n_features)
        Raw values; NaN is missing, sparse implicit entries are 0.0. Sparse
        input is densified a bounded number of rows at a time.
    n_trees : int, default=None
        Use only the first ``n_trees`` trees; None uses all.
    init : float, default=0.0
        Baseline added to every prediction.

    Returns
    -------
    raw : ndarray of shape (n_rows,), dtype float64
        Raw scores.
    """
    all_starts = _check_ensemble(nodes, tree_starts, None)
    n_used = all_starts.shape[0] if n_trees is None else _check_ensemble(
        nodes, tree_starts, n_trees).shape[0]
    n_rows = X.shape[0]
    out = np.full(n_rows, init, dtype=np.float64)
    if not sparse.issparse(X):
        X = np.ascontiguousarray(X, dtype=X_DTYPE)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional, got shape {X.shape}.")
    if n_rows == 0 or n_used == 0:
        return out
    trees = _cached_compact_trees(nodes, all_starts)
    if trees.n_features_split > X.shape[1]:
        raise ValueError(
            f"X has {X.shape[1]} features, but the trees split on feature "
            f"{trees.n_features_split - 1}."
        )
    # One block of rows has nothing to share between threads.
    work = n_rows * n_used if n_rows > _BLOCK_ROWS else 0
    if trees.oblivious is not None:
        args = trees.oblivious + (n_used, trees.columns)
        predict = pick(_predict_oblivious_blocks, _predict_oblivious_blocks_serial, work,
                       _MIN_PARALLEL_BLOCK_ROW_TREES)
    elif trees.quickscorer is not None and n_used == all_starts.shape[0]:
        # Its lists hold every tree: the first trees only are walked.
        args = trees.quickscorer + (n_used, trees.columns)
        work = work if n_rows > _QUICKSCORER_CHUNK_ROWS else 0
        predict = pick(_predict_quickscorer_blocks, _predict_quickscorer_blocks_serial, work,
                       _MIN_PARALLEL_BLOCK_ROW_TREES)
    else:
        args = trees[:7] + (trees.roots[:n_used], trees.depths[:n_used], trees.columns)
        predict = pick(_predict_blocks, _predict_blocks_serial, work,
                       _MIN_PARALLEL_BLOCK_ROW_TREES)
    if sparse.issparse(X):
        X = X.tocsr()
        chunk = max(1, _SPARSE_CHUNK_CELLS // max(1, X.shape[1]))
        for start in range(0, n_rows, chunk):
            stop = min(start + chunk, n_rows)
            dense = X[start:stop].toarray().astype(X_DTYPE, copy=False)
            predict(*args, readonly_view(np.ascontiguousarray(dense)), out[start:stop])
    else:
        predict(*args, readonly_view(X), out)
    return out

