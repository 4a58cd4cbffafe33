"""Exact path-dependent TreeSHAP for a :class:`TreeEnsemble`.

The algorithm is Algorithm 2 of

    S. M. Lundberg, G. Erion, H. Chen, A. DeGrave, J. M. Prutkin, B. Nair,
    R. Katz, J. Himmelfarb, N. Bansal and S.-I. Lee, "From local
    explanations to global understanding with explainable AI for trees",
    Nature Machine Intelligence 2, 56-67 (2020).

It gives, for one row ``x`` and one tree, the exact Shapley values of the
set function ``v(S) = E[f(x) | x_S]``, where the conditional expectation is
the *path-dependent* one: at a split on a feature in ``S`` the row follows
its own branch; at a split on a feature outside ``S`` both branches are
followed, weighted by the share of training rows (the node ``count``, the
"cover") that went each way. Instead of enumerating the ``2^M`` subsets it
walks the tree once, keeping for the path from the root to the current node
the features met (each once: the "unique path"), for each the fraction of
subsets in which the path continues (``one``: 1 if the row itself goes this
way, else 0; ``zero``: the share of training rows that go this way), and the
weights ``w`` of the subsets of each size, which EXTEND updates when a
feature is added and UNWIND undoes. At a leaf, the contribution of a path
feature is the sum of the weights with that feature unwound, times
``(one - zero) * leaf value``. The cost is ``O(leaves * depth^2)`` per row
and tree.

Missing values are routed as prediction routes them: a row's branch at a
split ("hot") is the one it takes in :func:`~.predictor._predict_raw`, NaN
included (``missing_go_to_left``); the other branch is "cold". So the
contribution of a NaN feature is that of the branch its missing direction
sends it to. At a categorical split the hot branch is the left one iff the
row's category code is in the split's ``left_categories``; the kernels read
categorical features as codes (:meth:`~.ensemble.TreeEnsemble.encode`), in
which NaN stands for missing, unseen and rare categories alike, so those
follow the missing direction too.

The kernels are plain ``@njit`` functions. The row loop is a ``prange`` over
blocks of rows; each block owns a set of scratch buffers (the per-depth path
segments and the DFS stack) allocated once per call, and every row is
computed by the same sequence of float64 operations whatever the block or
thread, so results do not depend on the number of threads.
"""

import numpy as np
import numba
from numba import njit, prange
from scipy import sparse

from .common import NODE_DTYPE, X_DTYPE, in_bitset
from .predictor import _SPARSE_CHUNK_CELLS

__all__ = ["tree_shap"]


# -- preparation (once per call) -----------------------------------------


@njit(cache=True)
def _prepare(nodes, tree_starts):
    """Per-node arrays the kernel reads, with absolute child indices.

    Returns the nodes' fields as separate arrays, the fraction of its parent's training rows that reach each node
    (``count / (count_left + count_right)`` of the parent's two children, so
    that a split's two fractions always sum to one; 1/2 each if both counts
    are 0), the expected value of each tree under those fractions (the
    count-weighted mean of its leaf values) and the largest depth of any
    leaf.
    """
    n_nodes = nodes.shape[0]
    n_trees = tree_starts.shape[0]
    left = np.full(n_nodes, -1, dtype=np.int64)
    right = np.full(n_nodes, -1, dtype=np.int64)
    frac = np.ones(n_nodes, dtype=np.float64)
    reach = np.zeros(n_nodes, dtype=np.float64)
    depth = np.zeros(n_nodes, dtype=np.int64)
    tree_expected = np.zeros(n_trees, dtype=np.float64)
    max_depth = 0
    for t in range(n_trees):
        base = tree_starts[t]
        stop = tree_starts[t + 1] if t + 1 < n_trees else n_nodes
        reach[base] = 1.0
        depth[base] = 0
        # A child comes after its parent, so one forward pass sees every
        # parent before its children.
        for k in range(base, stop):
            if nodes[k]["is_leaf"]:
                tree_expected[t] += reach[k] * nodes[k]["value"]
                if depth[k] > max_depth:
                    max_depth = depth[k]
                continue
            a = base + nodes[k]["left"]
            b = base + nodes[k]["right"]
            left[k] = a
            right[k] = b
            n_a = float(nodes[a]["count"])
            n_b = float(nodes[b]["count"])
            if n_a + n_b > 0.0:
                frac[a] = n_a / (n_a + n_b)
                frac[b] = n_b / (n_a + n_b)
            else:
                frac[a] = 0.5
                frac[b] = 0.5
            reach[a] = reach[k] * frac[a]
            reach[b] = reach[k] * frac[b]
            depth[a] = depth[k] + 1
            depth[b] = depth[k] + 1
    feature = nodes["feature_idx"].astype(np.int64)
    threshold = nodes["num_threshold"].copy()
    default_left = nodes["missing_go_to_left"] != 0
    is_leaf = nodes["is_leaf"] != 0
    value = nodes["value"].copy()
    arrays = (feature, threshold, default_left, is_leaf, value, left, right, frac)
    return arrays, tree_expected, max_depth


# -- the unique-path operations of Algorithm 2 -----------------------------
#
# A path of length ``n`` lives in ``[s, s + n)`` of the four arrays ``pd``
# (feature), ``pz`` (zero fraction), ``po`` (one fraction) and ``pw``
# (subset weights). Element 0 is the root's placeholder (feature -1).


@njit(inline="always", cache=True)
def _extend(pd, pz, po, pw, s, n, p_zero, p_one, feature, inv):
    """EXTEND: append ``feature`` with its fractions to the path of length
    ``n`` and update the subset-size weights. Returns the new length."""
    pd[s + n] = feature
    pz[s + n] = p_zero
    po[s + n] = p_one
    pw[s + n] = 1.0 if n == 0 else 0.0
    one_n = p_one * inv[n + 1]
    zero_n = p_zero * inv[n + 1]
    for i in range(n - 1, -1, -1):
        pw[s + i + 1] += pw[s + i] * (one_n * (i + 1))
        pw[s + i] = pw[s + i] * (zero_n * (n - i))
    return n + 1


@njit(inline="always", cache=True)
def _unwind(pd, pz, po, pw, s, n, k, inv):
    """UNWIND: remove element ``k`` from the path of length ``n``, undoing
    its EXTEND on the weights. Returns the new length. ``inv[i]`` is
    ``1 / i``: the loops multiply, keeping divisions off the chain of
    dependent operations."""
    last = n - 1
    p_one = po[s + k]
    p_zero = pz[s + k]
    if p_one != 0.0:
        # p_one is 1 (a "one" fraction is 0 or 1), so only p_zero scales.
        carry = pw[s + last]
        zero_n = p_zero / n
        for j in range(last - 1, -1, -1):
            previous = pw[s + j]
            w = carry * (n * inv[j + 1])
            pw[s + j] = w
            carry = previous - w * (zero_n * (last - j))
    else:
        n_zero = n / p_zero
        for j in range(last - 1, -1, -1):
            pw[s + j] = pw[s + j] * (n_zero * inv[last - j])
    for j in range(k, last):
        pd[s + j] = pd[s + j + 1]
        pz[s + j] = pz[s + j + 1]
        po[s + j] = po[s + j + 1]
    return last


@njit(inline="always", cache=True)
def _unwound_sum(pz, po, pw, s, n, k, inv):
    """Sum of the weights the path of length ``n`` would have after
    UNWIND of element ``k`` (see :func:`_unwind`), without changing it."""
    last = n - 1
    p_one = po[s + k]
    p_zero = pz[s + k]
    total = 0.0
    if p_one != 0.0:
        carry = pw[s + last]
        zero_n = p_zero / n
        for j in range(last - 1, -1, -1):
            w = carry * (n * inv[j + 1])
            total += w
            carry = pw[s + j] - w * (zero_n * (last - j))
    else:
        n_zero = n / p_zero
        for j in range(last - 1, -1, -1):
            total += pw[s + j] * (n_zero * inv[last - j])
    return total


# -- the row kernel ----------------------------------------------------------


@njit(inline="always", cache=True)
def _shap_row_tree(feature, player, threshold, default_left, is_leaf, value, left, right, frac,
                   categorical, category_bits, root, X, i, out, pd, pz, po, pw, plen,
                   st_node, st_depth, st_zero, st_feat, seg, inv):
    """Add the contributions of the tree rooted at ``root`` for row ``i`` of
    ``X`` to ``out[i, :-1]``.

    The recursion of Algorithm 2 runs as a depth-first walk with an explicit
    stack. The node at depth ``L`` builds its path in segment ``L`` of the
    scratch arrays from its parent's path in segment ``L - 1``, which stays
    intact until both children are done: the walk goes on to the hot child
    at once and stacks the cold one, which is popped only after the hot
    child's whole subtree.
    """
    top = -1
    j = root
    level = 0
    p_zero = 1.0
    p_one = 1.0
    p_feature = -1
    while True:
        s = level * seg
        if level == 0:
            n = 0
        else:
            # Copy the parent's path into this node's segment.
            sp = s - seg
            n = plen[level - 1]
            for q in range(n):
                pd[s + q] = pd[sp + q]
                pz[s + q] = pz[sp + q]
                po[s + q] = po[sp + q]
                pw[s + q] = pw[sp + q]
        n = _extend(pd, pz, po, pw, s, n, p_zero, p_one, p_feature, inv)
        if is_leaf[j]:
            v = value[j]
            for k in range(1, n):
                w = _unwound_sum(pz, po, pw, s, n, k, inv)
                out[i, pd[s + k]] += w * (po[s + k] - pz[s + k]) * v
            if top < 0:
                return
            j = st_node[top]
            level = st_depth[top]
            p_zero = st_zero[top]
            p_one = 0.0  # only cold children are stacked
            p_feature = st_feat[top]
            top -= 1
            continue
        x = X[i, feature[j]]
        # The path tracks players (input columns), which several split
        # features may share; the row's branch comes from the feature.
        f = player[j]
        if np.isnan(x):
            go_left = default_left[j]
        elif categorical[j]:
            go_left = in_bitset(category_bits[j], int(x))
        else:
            go_left = x <= threshold[j]
        if go_left:
            hot = left[j]
            cold = right[j]
        else:
            hot = right[j]
            cold = left[j]
        # A feature met before on the path: take its fractions over and
        # remove its earlier entry, so that each feature appears once.
        in_zero = 1.0
        in_one = 1.0
        for k in range(1, n):
            if pd[s + k] == f:
                in_zero = pz[s + k]
                in_one = po[s + k]
                n = _unwind(pd, pz, po, pw, s, n, k, inv)
                break
        plen[level] = n
        # A child that no subset reaches (both fractions 0) adds nothing and
        # is skipped (UNWIND of its entry would divide by 0).
        cold_zero = in_zero * frac[cold]
        if cold_zero != 0.0:
            top += 1
            st_node[top] = cold
            st_depth[top] = level + 1
            st_zero[top] = cold_zero
            st_feat[top] = f
        hot_zero = in_zero * frac[hot]
        if hot_zero != 0.0 or in_one != 0.0:
            j = hot
            level += 1
            p_zero = hot_zero
            p_one = in_one
            p_feature = f
        else:
            if top < 0:
                return
            j = st_node[top]
            level = st_depth[top]
            p_zero = st_zero[top]
            p_one = 0.0
            p_feature = st_feat[top]
            top -= 1


@njit(parallel=True, cache=True)
def _tree_shap(feature, player, threshold, default_left, is_leaf, value, left, right, frac,
               categorical, category_bits, tree_starts, max_depth, X, out, n_blocks):
    """Add every tree's path-dependent SHAP values of each row of ``X`` to
    ``out[:, :-1]``.

    Parameters
    ----------
    feature, threshold, default_left, is_leaf, value, left, right, frac : \
            ndarray of shape (n_nodes,)
        The nodes of all trees, with absolute child indices and the fraction
        of the parent's rows reaching each node (see :func:`_prepare`).
    player : ndarray of shape (n_nodes,), dtype int64
        The column of ``out`` that each node's feature plays for.
    categorical : ndarray of shape (n_nodes,), dtype bool
        True at categorical splits.
    category_bits : ndarray of shape (n_nodes, BITSET_WORDS), dtype uint32
        The category codes that go left at each categorical split.
    tree_starts : ndarray of shape (n_trees,), dtype int64
        Index of each tree's root.
    max_depth : int
        Largest depth of a leaf.
    X : ndarray of shape (n_rows, n_features), dtype float64
        Raw values, NaN for missing; categorical features as category codes.
    out : ndarray of shape (n_rows, >= n_features), dtype float64
        Updated in place; row ``i`` is written by one thread only.
    n_blocks : int
        Number of row blocks, each with its own scratch buffers (a few per
        thread balance the load).
    """
    n_rows = X.shape[0]
    n_trees = tree_starts.shape[0]
    if n_rows == 0:
        return
    n_blocks = max(1, min(n_rows, n_blocks))
    inv = np.zeros(max_depth + 4, dtype=np.float64)
    for q in range(1, max_depth + 4):
        inv[q] = 1.0 / q
    # A path has at most max_depth + 1 elements; one segment per depth.
    seg = max_depth + 2
    size = (max_depth + 1) * seg
    pd = np.empty((n_blocks, size), dtype=np.int64)
    pz = np.empty((n_blocks, size), dtype=np.float64)
    po = np.empty((n_blocks, size), dtype=np.float64)
    pw = np.empty((n_blocks, size), dtype=np.float64)
    # Path length per depth, and the stack of cold children (at most one
    # per depth).
    plen = np.empty((n_blocks, seg), dtype=np.int64)
    st_node = np.empty((n_blocks, seg), dtype=np.int64)
    st_depth = np.empty((n_blocks, seg), dtype=np.int64)
    st_zero = np.empty((n_blocks, seg), dtype=np.float64)
    st_feat = np.empty((n_blocks, seg), dtype=np.int64)
    for b in prange(n_blocks):
        start = b * n_rows // n_blocks
        stop = (b + 1) * n_rows // n_blocks
        pd_b, pz_b, po_b, pw_b, plen_b = pd[b], pz[b], po[b], pw[b], plen[b]
        st_node_b, st_depth_b, st_zero_b, st_feat_b = st_node[b], st_depth[b], st_zero[b], st_feat[b]
        for i in range(start, stop):
            for t in range(n_trees):
                _shap_row_tree(
                    feature, player, threshold, default_left, is_leaf, value, left, right, frac,
                    categorical, category_bits, tree_starts[t], X, i, out,
                    pd_b, pz_b, po_b, pw_b, plen_b,
                    st_node_b, st_depth_b, st_zero_b, st_feat_b, seg, inv,
                )


def tree_shap(nodes, tree_starts, baseline, X, out=None, feature_columns=None):
    """Path-dependent SHAP values of an ensemble, and its expected value.

    Parameters
    ----------
    nodes : ndarray of shape (n_nodes,), dtype NODE_DTYPE
        Concatenated trees; each node's ``count`` is the cover.
    tree_starts : ndarray of shape (n_trees,), dtype int64
        Offset of each tree's root in ``nodes``.
    baseline : float
        Raw score of the model with no trees.
    X : ndarray or scipy sparse matrix of shape (n_rows, n_features)
        Raw values, NaN for missing (sparse implicit entries are 0.0;
        sparse input is densified a bounded number of rows at a time). The
        columns of categorical features hold category codes, NaN for any
        value that is not a category, as
        :meth:`~.ensemble.TreeEnsemble.encode` makes them.
    out : ndarray of shape (n_rows, n_columns + 1), dtype float64, default=None
        Where to write the result (C-contiguous); allocated if None.
    feature_columns : ndarray of shape (n_features,), dtype int64, default=None
        The input column that each feature (column of ``X``) belongs to
        (:attr:`~.ensemble.TreeEnsemble.feature_columns`, or any map onto
        ``[0, n_columns)`` that reaches every column): the Shapley values
        are those of the columns, each one player however many features
        read it (a column met twice on a path is unwound as a feature met
        twice is). None: every feature is a column of its own.

    Returns
    -------
    out : ndarray of shape (n_rows, n_columns + 1), dtype float64
        Contribution of each column (``n_columns`` is ``n_features`` unless
        ``feature_columns`` is given), and in the last column the expected
        value: ``baseline`` plus, for each tree, the count-weighted mean of
        its leaf values. Each row sums to the ensemble's raw prediction.
    """
    if nodes.dtype != NODE_DTYPE:
        raise ValueError("nodes must have dtype NODE_DTYPE.")
    tree_starts = np.ascontiguousarray(tree_starts, dtype=np.int64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional, got shape {X.shape}.")
    n_rows, n_features = X.shape
    n_columns = n_features if feature_columns is None else int(np.max(feature_columns)) + 1
    shape = (n_rows, n_columns + 1)
    if out is None:
        out = np.zeros(shape, dtype=np.float64)
    else:
        if out.shape != shape or out.dtype != np.float64 or not out.flags.c_contiguous:
            raise ValueError(f"out must be a C-contiguous float64 array of shape {shape}.")
        out[:] = 0.0
    arrays, tree_expected, max_depth = _prepare(nodes, tree_starts)
    feature = arrays[0]
    player = feature if feature_columns is None else np.asarray(
        feature_columns, dtype=np.int64)[np.maximum(feature, 0)]
    arrays = (feature, player) + arrays[1:]
    categorical = (nodes["is_categorical"] != 0) & (nodes["is_leaf"] == 0)
    arrays += (categorical, np.ascontiguousarray(nodes["left_categories"]))
    # A few row blocks per thread balance the load; each block's scratch is
    # allocated once per kernel call.
    n_blocks = 4 * numba.get_num_threads()
    # Summed in tree order, as prediction sums the trees.
    expected = float(baseline)
    for e in tree_expected:
        expected += e
    if sparse.issparse(X):
        X = X.tocsr()
        chunk = max(1, _SPARSE_CHUNK_CELLS // max(1, n_features))
        for start in range(0, n_rows, chunk):
            stop = min(start + chunk, n_rows)
            dense = np.ascontiguousarray(X[start:stop].toarray(), dtype=X_DTYPE)
            _tree_shap(*arrays, tree_starts, max_depth, dense, out[start:stop], n_blocks)
    else:
        X = np.ascontiguousarray(X, dtype=X_DTYPE)
        _tree_shap(*arrays, tree_starts, max_depth, X, out, n_blocks)
    out[:, -1] = expected
    return out
