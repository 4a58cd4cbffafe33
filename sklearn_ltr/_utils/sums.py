"""Sums whose bits do not depend on how many threads BLAS runs.

``np.dot`` of two float vectors calls BLAS, and OpenBLAS splits a long one
(from about 10,000 entries) between its threads and adds their partial sums:
the result's last bits then depend on the thread count, which differs, for
one, between a search's worker processes (joblib limits them to one BLAS
thread) and the process that started them. NumPy's own reductions run on one
thread in a fixed (pairwise) order.
"""

import numpy as np

__all__ = ["fixed_order_dot"]


def fixed_order_dot(a, b):
    """``sum(a * b)`` as a float, in NumPy's pairwise order, whatever BLAS's
    thread count."""
    return float(np.add.reduce(np.multiply(a, b, dtype=np.float64)))
