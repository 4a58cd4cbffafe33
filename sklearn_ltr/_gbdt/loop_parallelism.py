"""When the compiled tree loops (:mod:`.compiled_grower`,
:mod:`.compiled_symmetric`) run a node's histogram and split scan on the
parallel kernels: from how much work, in which trees.

Kernels called from Python pick their serial or parallel twin by
:func:`~.._utils.parallel.pick`'s thresholds; inside a compiled loop a
parallel region is cheaper to start, so nodes of small data can use both
cores, but only in trees whose features can share the work.
"""

import numba

from .._utils.parallel import may_pick_parallel
from .histogram import _MIN_PARALLEL_CELLS
from .histogram_rows import n_feature_groups
from .wide_histogram import _MIN_PARALLEL_CELLS as _MIN_PARALLEL_WIDE_CELLS
from .wide_histogram import n_wide_groups

__all__ = [
    "LOOP_MIN_PARALLEL_BINS",
    "LOOP_MIN_PARALLEL_CELLS",
    "histograms_may_run_in_parallel",
    "min_parallel_wide_cells",
    "parallel_from_little_work",
]

# In a tree grown with the parallel kernels (see compiled_grower.grow_tree),
# the work from which a node's histogram (rows x features) or scan (bins
# read) runs on them, if the tree has enough features (see
# parallel_from_little_work). A parallel region started inside compiled
# code costs about 1.5 us on numba's OpenMP layer (2 threads) while the
# threads are still spinning from the last one, the time of about 2,000
# histogram cells or 1,000 scanned bins. pick()'s thresholds, for kernels
# called from Python (200,000 cells, 64,000 bins), left nearly every node
# of small data serial.
LOOP_MIN_PARALLEL_CELLS = 2_000
LOOP_MIN_PARALLEL_BINS = 1_000


def parallel_from_little_work(rows, n_used):
    """Whether the compiled loops run a tree's nodes on the parallel kernels
    from LOOP_MIN_PARALLEL_* work, rather than from pick()'s thresholds:
    if the tree's root histogram is large enough for pick() to build it in
    parallel and the tree's features make at least two of the histogram
    kernels' parallel units (groups of 4 or 8 features, see
    :func:`~.histogram_rows.n_feature_groups`) per thread. A tree of small root
    is grown as before, so a first fit on tiny data compiles no parallel
    kernel.

    Nodes run in parallel from little work only if nearly all of them do
    (threads left idle between two regions likely fall asleep and take far
    longer to wake). With fewer groups, the histograms of a node cannot be
    shared evenly and stay serial, and the scans lose more than they gain:
    on 60,000 rows of 8 features (two groups), split finding in 500-tree
    fits took 0.29 to 0.36 s at the low thresholds against 0.15 to 0.16 s
    at pick()'s; raising only the scans' to 8,000 bins made MQ2008 and
    LightGBM's example fits no faster than with pick()'s.
    """
    n_groups = n_feature_groups(rows.features, rows.value_bins, rows.X_binned.shape[0],
                                rows.const_hessian is not None)
    return (may_pick_parallel(n_used * rows.features.shape[0], _MIN_PARALLEL_CELLS)
            and n_groups >= 2 * numba.get_num_threads())


def min_parallel_wide_cells(rows, little_work):
    """The (rows x wide columns) from which a compiled loop builds a node's
    wide-column histograms in parallel: LOOP_MIN_PARALLEL_CELLS if its
    nodes run in parallel from little work (``little_work``, see
    :func:`parallel_from_little_work`) and the wide columns make a group,
    the wide kernel's parallel unit, for every thread; pick()'s threshold
    otherwise.

    With pick()'s threshold alone, a node of fewer than 25,000 rows built
    the blocks of 8 wide columns on one thread after its features'
    histograms were built on all: 150 LambdaMART trees on 1,000
    ``make_ranking`` queries with 8 columns of 500 categories spent 3.9 s
    in histograms on 2 threads (6.1 s on one), 3.3 to 3.5 s with both
    kernels in parallel.
    """
    if little_work and n_wide_groups(rows.n_wide_columns) >= numba.get_num_threads():
        return LOOP_MIN_PARALLEL_CELLS
    return _MIN_PARALLEL_WIDE_CELLS


def histograms_may_run_in_parallel(rows, n_used):
    """Whether pick() could choose a parallel histogram kernel for a tree of
    ``n_used`` rows of ``rows`` (TreeRows): the root's histogram is the
    largest (a node's or a level's rows are at most the root's)."""
    return (may_pick_parallel(n_used * rows.features.shape[0], _MIN_PARALLEL_CELLS)
            or may_pick_parallel(n_used * rows.n_wide_columns, _MIN_PARALLEL_WIDE_CELLS))
