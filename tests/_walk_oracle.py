"""The oracle of the raw-value predictors: a plain-Python walk of the
``NODE_DTYPE`` records, one node at a time (left iff ``x <= num_threshold``,
NaN to ``missing_go_to_left``'s side, the leaf values added in tree order
from 0.0, the sum added to the baseline), and a comparison of scores bit for
bit (as integers, so that even the sign of a zero counts)."""

import numpy as np
from scipy import sparse


def reference_predict(nodes, tree_starts, X, n_trees=None, init=0.0):
    """Scores by walking each row down each tree in plain Python."""
    X = np.asarray(X.toarray() if sparse.issparse(X) else X, dtype=np.float64)
    starts = np.asarray(tree_starts)[:n_trees]
    out = np.empty(X.shape[0])
    for i in range(X.shape[0]):
        acc = 0.0
        for base in starts:
            k = base
            while not nodes[k]["is_leaf"]:
                x = X[i, nodes[k]["feature_idx"]]
                if np.isnan(x):
                    left = nodes[k]["missing_go_to_left"] != 0
                else:
                    left = x <= nodes[k]["num_threshold"]
                k = base + (nodes[k]["left"] if left else nodes[k]["right"])
            acc += nodes[k]["value"]
        out[i] = init + acc
    return out


def assert_bits_equal(a, b):
    assert a.shape == b.shape
    np.testing.assert_array_equal(np.asarray(a, np.float64).view(np.uint64),
                                  np.asarray(b, np.float64).view(np.uint64))
