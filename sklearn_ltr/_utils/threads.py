"""How many numba threads a ranker's kernels run on: ``n_jobs``."""

from contextlib import contextmanager
from numbers import Integral

import numba

__all__ = ["numba_threads"]


def _n_threads(n_jobs):
    """Numba threads for ``n_jobs``, by scikit-learn's convention.

    None leaves numba's current count (``NUMBA_NUM_THREADS``, all cores,
    unless the caller chose fewer with ``numba.set_num_threads``); -1 is
    ``NUMBA_NUM_THREADS``, -2 one fewer, and so on, never below 1. A
    positive count above ``NUMBA_NUM_THREADS`` is cut to it: numba cannot
    start more threads than it was configured with, and the model does not
    depend on the number of threads, so a saved model with ``n_jobs=16``
    still predicts on a 2-core machine.

    Returns
    -------
    n_threads : int or None
        None for ``n_jobs=None``.

    Raises
    ------
    ValueError
        If ``n_jobs`` is 0 or not an integer.
    """
    if n_jobs is None:
        return None
    if not isinstance(n_jobs, Integral) or n_jobs == 0:
        raise ValueError(
            f"n_jobs must be a positive number of threads, -1 for all cores (-2 for all but "
            f"one, ...) or None, got {n_jobs!r}."
        )
    available = numba.config.NUMBA_NUM_THREADS
    if n_jobs < 0:
        return max(available + 1 + int(n_jobs), 1)
    return min(int(n_jobs), available)


@contextmanager
def numba_threads(n_jobs):
    """Run numba's parallel kernels on ``n_jobs`` threads (see
    :func:`_n_threads`), then restore the previous count.

    Numba's thread count belongs to the calling thread, so a fit in one
    thread never changes the threads of a fit running in another.
    """
    n_threads = _n_threads(n_jobs)
    if n_threads is None:
        yield
        return
    previous = numba.get_num_threads()
    numba.set_num_threads(n_threads)
    try:
        yield
    finally:
        numba.set_num_threads(previous)


def _valid_n_jobs(n_jobs):
    """``n_jobs`` if :func:`_n_threads` takes it, else None: fit's parameter
    validation, which runs later, is the one to refuse it."""
    try:
        _n_threads(n_jobs)
    except ValueError:
        return None
    return n_jobs
