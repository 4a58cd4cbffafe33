"""What the thread-determinism tests share: a serial fit (``n_jobs=1`` runs
the serial twins of the parallel kernels) is compared with a fit whose
kernels are forced onto their parallel versions on two threads, and the
comparison checks that the parallel versions really ran.

The data of these tests are far below the sizes from which the parallel
kernels run by themselves (the ``_MIN_PARALLEL_*`` constants next to each
kernel), so without ``parallel_kernels_only`` both fits would run the same
serial code and a thread-dependent result could never show.
"""

import numba
import pytest

from sklearn_ltr._utils.parallel import parallel_kernels_only

__all__ = ["needs_two_threads", "parallel_kernels_only", "assert_fit_ran_in_parallel",
           "assert_ran_in_parallel"]

needs_two_threads = pytest.mark.skipif(
    numba.config.NUMBA_NUM_THREADS < 2,
    reason="numba was started with one thread (NUMBA_NUM_THREADS < 2): there is no parallel "
    "run to compare with the serial one",
)

# The kernels of every fit: binning, histograms (with or without constant
# hessians) and the split scan (per node, or summed over a level for
# symmetric trees); each entry is satisfied by any one of its names.
_FIT_KERNELS = (
    ("_map_dense_to_bins", "_map_csr_to_bins"),
    ("_build_histogram_of_rows", "_build_histogram_of_rows_const"),
    ("_best_split_of_each_feature", "_summed_gains_of_each_feature"),
)


def assert_ran_in_parallel(picked, *kernels, n_threads=2):
    """Check the Counter of ``parallel_kernels_only``: each of ``kernels``
    (a name, or a tuple of names any one of which will do) was run in its
    parallel version, and every parallel kernel ran on ``n_threads``."""
    ran = {name for name, _ in picked}
    for names in kernels:
        names = (names,) if isinstance(names, str) else names
        assert ran & set(names), f"none of {names} ran in parallel; the parallel kernels run: {ran}"
    threads = {count for _, count in picked}
    assert threads == {n_threads}, f"parallel kernels ran on {threads} threads, not {n_threads}"


def assert_fit_ran_in_parallel(picked, n_threads=2):
    """:func:`assert_ran_in_parallel` for a fit: the engine's kernels and
    the objective's gradient kernel (every one is named ``*_gradient_hessian``)."""
    assert_ran_in_parallel(picked, *_FIT_KERNELS, n_threads=n_threads)
    gradients = {name for name, _ in picked if name.endswith("_gradient_hessian")}
    assert gradients, f"no gradient kernel ran in parallel; the parallel kernels run: {set(picked)}"
