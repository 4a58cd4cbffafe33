"""Numba kernels of the query-aware ranking metrics.

Every kernel takes rows already grouped by query (query ``q`` owns rows
``offsets[q]:offsets[q + 1]``, in input order inside the query) and writes one
value per query into a buffer allocated by the caller. Queries are independent,
so the loops run in parallel over queries (serially on small inputs, see
``_MIN_PARALLEL_ROWS``) and the results do not depend on the number of threads.

Inside a query, documents are ranked by descending score with a stable sort, so
tied documents keep their input order: that is the ``ties="stable"``
convention. With ``average_ties=True`` the kernels return instead the exact
expectation of the metric when the documents of each tied group are put in a
uniformly random order. All of them walk the ranked list group by group (a
group is a maximal run of equal scores) and use a closed form per group, so
the cost stays linear in the group size instead of factorial.

``k`` is the cutoff as a positive int; the Python side passes a number larger
than any query for "no cutoff".
"""

import functools

import numpy as np
from numba import njit, prange

from .._utils.parallel import pick, serial_twin
from .._utils.sorting import argsort_descending

# Fewer rows than this are scored by the serial twin of a kernel (see
# sklearn_ltr._utils.parallel): ranking a row costs some 20 to 50 ns, so that is
# under 0.2 ms of work, where two threads save little once woken (about
# 0.04 ms); and early stopping on a small validation set compiles no
# parallel kernel.
_MIN_PARALLEL_ROWS = 5_000


def _serial_below_min_rows(parallel_kernel):
    """Run ``parallel_kernel``, or its serial twin on fewer than
    ``_MIN_PARALLEL_ROWS`` rows. Every kernel here takes ``offsets`` as its
    third argument; the two give the same results."""
    serial_kernel = serial_twin(parallel_kernel)

    @functools.wraps(getattr(parallel_kernel, "py_func", parallel_kernel))
    def run(*args):
        offsets = args[2]
        n_rows = int(offsets[-1]) if offsets.shape[0] else 0
        return pick(parallel_kernel, serial_kernel, n_rows, _MIN_PARALLEL_ROWS)(*args)

    run.parallel_kernel = parallel_kernel
    run.serial_kernel = serial_kernel
    return run


@njit(cache=True)
def _rank_query(score):
    # Stable descending order: equal scores keep their input order (LightGBM
    # and XGBoost use std::stable_sort the same way); infinities rank fine.
    # This is np.argsort(-score, kind="mergesort"), which compiles far slower.
    return argsort_descending(score)


# Loops that call _group_end start at ``i = np.int64(0)``: from ``i = 0``
# numba's typing first sees the literal 0 and compiles _group_end once for it
# and once for int64.
@njit(cache=True)
def _group_end(score, rank, i, n):
    # One past the last ranked position whose score equals the score at i.
    j = i + 1
    s = score[rank[i]]
    while j < n and score[rank[j]] == s:
        j += 1
    return j


@_serial_below_min_rows
@njit(parallel=True, cache=True)
def _dcg_per_query(gain, score, offsets, k, discount, average_ties, dcg, ideal):
    """DCG@k and ideal DCG@k of every query.

    ``discount[t]`` is the discount of 0-based position ``t``
    (``1 / log2(t + 2)``), precomputed once by the caller.
    """
    n_queries = offsets.shape[0] - 1
    for q in prange(n_queries):
        start, end = offsets[q], offsets[q + 1]
        n = end - start
        kk = min(k, n)
        g = gain[start:end]
        s = score[start:end]
        rank = _rank_query(s)
        total = 0.0
        if average_ties:
            i = np.int64(0)  # not 0: see _group_end
            while i < kk:
                j = _group_end(s, rank, i, n)
                # Linearity of expectation: every position of the group gets
                # the group's mean gain.
                group_gain = 0.0
                for t in range(i, j):
                    group_gain += g[rank[t]]
                disc = 0.0
                for t in range(i, min(j, kk)):
                    disc += discount[t]
                total += group_gain / (j - i) * disc
                i = j
        else:
            for t in range(kk):
                total += g[rank[t]] * discount[t]
        dcg[q] = total

        # The ideal list: gains by decreasing value (they are never NaN).
        best = argsort_descending(g)
        total = 0.0
        for t in range(kk):
            total += g[best[t]] * discount[t]
        ideal[q] = total


@_serial_below_min_rows
@njit(parallel=True, cache=True)
def _reciprocal_rank_per_query(relevant, score, offsets, k, average_ties, out):
    """Reciprocal rank of the first relevant document within the top k."""
    n_queries = offsets.shape[0] - 1
    for q in prange(n_queries):
        start, end = offsets[q], offsets[q + 1]
        n = end - start
        kk = min(k, n)
        rel = relevant[start:end]
        s = score[start:end]
        rank = _rank_query(s)
        value = 0.0
        i = np.int64(0)  # not 0: see _group_end
        while i < kk:
            j = _group_end(s, rank, i, n) if average_ties else i + 1
            m = j - i
            r = 0
            for t in range(i, j):
                r += rel[rank[t]]
            if r > 0:
                # The first relevant document of the group sits at group
                # position jj with P(jj) = C(m - jj, r - 1) / C(m, r); the
                # ratio of consecutive terms avoids large binomials.
                prob = r / m
                for jj in range(1, m - r + 2):
                    if i + jj > kk:
                        break
                    value += prob / (i + jj)
                    if jj < m - r + 1:
                        prob *= (m - jj - r + 1) / (m - jj)
                break
            i = j
        out[q] = value


@_serial_below_min_rows
@njit(parallel=True, cache=True)
def _average_precision_per_query(relevant, score, offsets, k, average_ties, out):
    """Average precision@k; the divisor is min(number of relevant, k)."""
    n_queries = offsets.shape[0] - 1
    for q in prange(n_queries):
        start, end = offsets[q], offsets[q + 1]
        n = end - start
        kk = min(k, n)
        rel = relevant[start:end]
        n_relevant = 0
        for t in range(n):
            n_relevant += rel[t]
        if n_relevant == 0:
            out[q] = 0.0
            continue
        s = score[start:end]
        rank = _rank_query(s)
        total = 0.0
        before = 0  # relevant documents ranked before the current group
        i = np.int64(0)  # not 0: see _group_end
        while i < kk:
            j = _group_end(s, rank, i, n) if average_ties else i + 1
            m = j - i
            r = 0
            for t in range(i, j):
                r += rel[rank[t]]
            if r > 0:
                # Group position jj holds a relevant document with
                # probability r/m; given that, the relevant documents above
                # it inside the group are hypergeometric with mean
                # (jj - 1)(r - 1)/(m - 1).
                for jj in range(1, m + 1):
                    if i + jj > kk:
                        break
                    above = (jj - 1) * (r - 1) / (m - 1) if m > 1 else 0.0
                    total += (r / m) * (before + 1 + above) / (i + jj)
            before += r
            i = j
        out[q] = total / min(n_relevant, k)


@_serial_below_min_rows
@njit(parallel=True, cache=True)
def _precision_per_query(relevant, score, offsets, k, average_ties, out):
    """Expected number of relevant documents in the top k (the caller divides)."""
    n_queries = offsets.shape[0] - 1
    for q in prange(n_queries):
        start, end = offsets[q], offsets[q + 1]
        n = end - start
        kk = min(k, n)
        rel = relevant[start:end]
        s = score[start:end]
        rank = _rank_query(s)
        hits = 0.0
        i = np.int64(0)  # not 0: see _group_end
        while i < kk:
            j = _group_end(s, rank, i, n) if average_ties else i + 1
            r = 0
            for t in range(i, j):
                r += rel[rank[t]]
            # Each position of the group is relevant with probability r/m.
            hits += r * (min(j, kk) - i) / (j - i)
            i = j
        out[q] = hits


@njit(cache=True)
def _err_tied_group(R, rank, i, j, kk):
    """Expected ERR contribution of the tied group at ranked positions i..j-1,
    for a prefix product of 1 before the group.

    For document a at group position jj (probability 1/m), the documents above
    it inside the group are a uniformly random (jj-1)-subset of the others, so
    E[prod (1 - R_b)] = e_{jj-1}(others) / C(m-1, jj-1), with e_t the
    elementary symmetric polynomial of the (1 - R_b). ``f[t]`` holds that
    normalised mean directly; the recurrence below is a convex combination,
    so it neither overflows nor cancels.
    """
    m = j - i
    T = min(m, kk - i)  # group positions inside the cutoff
    values = np.empty(m)
    for t in range(m):
        values[t] = R[rank[i + t]]
    distinct = np.unique(values)
    f = np.empty(T)
    total = 0.0
    for v in distinct:
        if v == 0.0:
            continue  # contributes nothing
        count = 0
        for t in range(m):
            if values[t] == v:
                count += 1
        f[:] = 0.0
        f[0] = 1.0
        seen = 0
        skipped = False
        for t in range(m):
            if values[t] == v and not skipped:
                skipped = True  # "all but one copy of v"
                continue
            seen += 1
            x = 1.0 - values[t]
            for tt in range(min(seen, T - 1), 0, -1):
                f[tt] = ((seen - tt) / seen) * f[tt] + (tt / seen) * x * f[tt - 1]
        inner = 0.0
        for jj in range(1, T + 1):
            inner += f[jj - 1] / (i + jj)
        total += count * v / m * inner
    return total


@_serial_below_min_rows
@njit(parallel=True, cache=True)
def _err_per_query(R, score, offsets, k, average_ties, out):
    """Expected Reciprocal Rank@k with stopping probabilities ``R``."""
    n_queries = offsets.shape[0] - 1
    for q in prange(n_queries):
        start, end = offsets[q], offsets[q + 1]
        n = end - start
        kk = min(k, n)
        r = R[start:end]
        s = score[start:end]
        rank = _rank_query(s)
        not_stopped = 1.0  # probability the user reaches the current position
        value = 0.0
        i = np.int64(0)  # not 0: see _group_end
        while i < kk:
            j = _group_end(s, rank, i, n) if average_ties else i + 1
            if j - i == 1:
                value += not_stopped * r[rank[i]] / (i + 1)
            else:
                value += not_stopped * _err_tied_group(r, rank, i, j, kk)
            # The product over the whole group does not depend on its order.
            for t in range(i, j):
                not_stopped *= 1.0 - r[rank[t]]
            i = j
        out[q] = value


@_serial_below_min_rows
@njit(parallel=True, cache=True)
def _ece_per_query(y_true, y_prob, offsets, n_bins, out):
    """Per-query ECE with equal-count bins over documents sorted by y_prob.

    Bin sizes follow ``np.array_split``: the first ``n % n_bins`` bins hold one
    extra document; with fewer documents than bins the rest stay empty.
    """
    n_queries = offsets.shape[0] - 1
    for q in prange(n_queries):
        start, end = offsets[q], offsets[q + 1]
        n = end - start
        order = np.argsort(y_prob[start:end], kind="mergesort")
        base, extra = n // n_bins, n % n_bins
        pos = 0
        total = 0.0
        for b in range(n_bins):
            size = base + (1 if b < extra else 0)
            diff = 0.0
            for t in range(pos, pos + size):
                row = start + order[t]
                diff += y_true[row] - y_prob[row]
            # |B|/|D| * |mean(y) - mean(p)| = |sum(y - p)| / |D|
            total += abs(diff)
            pos += size
        out[q] = total / n
