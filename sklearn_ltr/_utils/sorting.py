"""The sorts of the objectives and metrics: the stable descending argsort
they rank with, an in-place sort of integer keys, and the order of a few
distinct integer keys by counting.

Ranking a query is ``np.argsort(-scores, kind="mergesort")``: highest score
first, ties in row order, NaN last. Inside numba kernels that call compiled
numba's generic merge sort (and, for ``np.sort``, its quicksort), whose code
is large: about 2 s of compile time on a fresh install, paid again in every
kernel that links it in. This small merge sort gives exactly the same
permutation (a stable sort of a strict weak order has a single result) and
compiles in a fraction of that.
"""

import numpy as np
from numba import njit

# Rows sorted by insertion before the merge passes start (numba's and
# NumPy's merge sorts switch to insertion sort below about 20 rows).
_INSERTION_RUN = 16
# The blocks sort_in_place sorts by a network before its merges.
_KEY_BLOCK = 8


@njit(cache=True, inline="always")
def _ranks_before(values, a, b):
    """Whether row ``a`` ranks strictly before row ``b``: a higher value, or
    a number against NaN. This is numba's NaN-aware ``a < b`` of argsort
    (NaN last) applied to ``-values``."""
    x = values[a]
    y = values[b]
    return x > y or (np.isnan(y) and not np.isnan(x))


@njit(cache=True)
def argsort_descending(values):
    """Stable descending argsort of a 1-d float array, NaN last.

    Parameters
    ----------
    values : ndarray of shape (n,), dtype float64

    Returns
    -------
    order : ndarray of shape (n,), dtype int64
        ``np.argsort(-values, kind="mergesort")``: the rows by decreasing
        value, equal values in row order, NaN at the end.
    """
    n = values.shape[0]
    order = np.empty(n, dtype=np.int64)
    for i in range(n):
        order[i] = i
    # Insertion sort of consecutive runs; a row moves only past rows it
    # strictly ranks before, which keeps equal rows in order.
    for lo in range(0, n, _INSERTION_RUN):
        hi = min(lo + _INSERTION_RUN, n)
        for i in range(lo + 1, hi):
            row = order[i]
            j = i
            while j > lo and _ranks_before(values, row, order[j - 1]):
                order[j] = order[j - 1]
                j -= 1
            order[j] = row
    if n <= _INSERTION_RUN:
        return order
    # Bottom-up merges of neighbouring runs, back and forth between the two
    # buffers; on equal rows the left run's comes first (stability).
    buffer = np.empty(n, dtype=np.int64)
    source = order
    target = buffer
    in_order = True  # whether ``source`` is ``order``
    width = _INSERTION_RUN
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            k = lo
            while i < mid and j < hi:
                if _ranks_before(values, source[j], source[i]):
                    target[k] = source[j]
                    j += 1
                else:
                    target[k] = source[i]
                    i += 1
                k += 1
            while i < mid:
                target[k] = source[i]
                i += 1
                k += 1
            while j < hi:
                target[k] = source[j]
                j += 1
                k += 1
        source, target = target, source
        in_order = not in_order
        width *= 2
    if not in_order:
        for i in range(n):
            order[i] = source[i]
    return order


@njit(cache=True, inline="always")
def _order_two(keys, a, b):
    """Put the smaller of ``keys[a]`` and ``keys[b]`` at ``a``, without a
    branch."""
    x = keys[a]
    y = keys[b]
    keys[a] = min(x, y)
    keys[b] = max(x, y)


@njit(cache=True, inline="always")
def _sort_eight(keys, start):
    """Sort ``keys[start:start + 8]`` by a sorting network (19 compare-
    exchanges in 6 rounds, Knuth TAOCP 5.3.4): its comparisons do not depend
    on the keys, so nothing mispredicts, where an insertion sort of random
    keys mispredicts about once per key."""
    _order_two(keys, start, start + 2)
    _order_two(keys, start + 1, start + 3)
    _order_two(keys, start + 4, start + 6)
    _order_two(keys, start + 5, start + 7)
    _order_two(keys, start, start + 4)
    _order_two(keys, start + 1, start + 5)
    _order_two(keys, start + 2, start + 6)
    _order_two(keys, start + 3, start + 7)
    _order_two(keys, start, start + 1)
    _order_two(keys, start + 2, start + 3)
    _order_two(keys, start + 4, start + 5)
    _order_two(keys, start + 6, start + 7)
    _order_two(keys, start + 2, start + 4)
    _order_two(keys, start + 3, start + 5)
    _order_two(keys, start + 1, start + 4)
    _order_two(keys, start + 3, start + 6)
    _order_two(keys, start + 1, start + 2)
    _order_two(keys, start + 3, start + 4)
    _order_two(keys, start + 5, start + 6)


@njit(cache=True, inline="always")
def _place_smaller_front(source, target, i, j, k):
    """One pick of a merge from the front: ``target[k]`` gets the smaller of
    ``source[i]`` and ``source[j]`` (the left one on a tie, for stability);
    returns ``i`` and ``j`` with the taken one advanced. A select, not a
    branch: the picks of random keys are unpredictable."""
    a = source[i]
    b = source[j]
    take_left = a <= b
    target[k] = a if take_left else b
    return i + take_left, j + (not take_left)


@njit(cache=True)
def sort_in_place(keys, spare):
    """Sort integer ``keys`` ascending in place; ``spare`` is scratch of
    the same length and dtype, so nothing is allocated.

    For kernels that sort many short arrays and can pack what they sort
    into one integer each (YetiRank packs a key and its row). Blocks of
    eight are sorted by a network, then merged bottom-up. Every pick of a
    merge is a select rather than a branch: the picks of random keys are
    unpredictable, and a mispredicted branch costs more than the
    comparison. Two runs of equal length are merged from both ends at once,
    the smallest remaining key to the front and the largest to the back:
    two independent chains of loads and compares, which the processor
    overlaps. (On 120 keys: about 10 ns a key, against 15 ns for the same
    merges after insertion sorts and single-ended merges.)
    """
    n = keys.shape[0]
    whole = n - n % _KEY_BLOCK
    for start in range(0, whole, _KEY_BLOCK):
        _sort_eight(keys, start)
    for i in range(whole + 1, n):
        item = keys[i]
        j = i - 1
        while j >= whole and keys[j] > item:
            keys[j + 1] = keys[j]
            j -= 1
        keys[j + 1] = item
    source, target = keys, spare
    in_spare = False
    width = _KEY_BLOCK
    while width < n:
        for left in range(0, n, 2 * width):
            middle = min(left + width, n)
            right = min(left + 2 * width, n)
            if right - middle == width:
                # After ``width`` picks from each end every key is placed;
                # neither end reads past a run, since each end takes at most
                # ``width`` keys, the length of either run.
                i, j, k = left, middle, left
                i_back, j_back, k_back = middle - 1, right - 1, right - 1
                for _ in range(width):
                    i, j = _place_smaller_front(source, target, i, j, k)
                    k += 1
                    a = source[i_back]
                    b = source[j_back]
                    take_left = a > b
                    target[k_back] = a if take_left else b
                    i_back -= take_left
                    j_back -= not take_left
                    k_back -= 1
                continue
            i, j, k = left, middle, left
            while i < middle and j < right:
                i, j = _place_smaller_front(source, target, i, j, k)
                k += 1
            while i < middle:
                target[k] = source[i]
                i += 1
                k += 1
            while j < right:
                target[k] = source[j]
                j += 1
                k += 1
        source, target = target, source
        in_spare = not in_spare
        width *= 2
    if in_spare:
        keys[:] = spare


# Up to this many keys, order_by_counting is faster than sort_in_place
# followed by a pass that reads the order off the sorted keys: 0.51 to 0.58
# of the time for 5 to 20 keys, 0.78 for 40, level at 64 (random 64-bit
# keys, measured on the benchmark machine).
COUNTING_MAX_KEYS = 48


@njit(cache=True)
def order_by_counting(keys, order):
    """Set ``order[r] = i`` where key ``i`` is the ``r``-th smallest of
    ``keys``, which must be distinct: each key's rank is the number of keys
    below it.

    Quadratic, but the inner count has no branch and runs on SIMD lanes,
    where a sort's compares are unpredictable branches or long chains of
    selects: for a few dozen keys it is the faster way to an order (see
    ``COUNTING_MAX_KEYS``).
    """
    n = keys.shape[0]
    for i in range(n):
        key = keys[i]
        rank = 0
        for j in range(n):
            rank += keys[j] < key
        order[rank] = i
