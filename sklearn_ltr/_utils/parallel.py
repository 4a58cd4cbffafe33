"""Serial twins of the parallel kernels, for work too small for threads.

A kernel compiled with ``parallel=True`` takes 0.5 to 1 s longer to compile
than the same loops run serially (numba builds and optimises a separate
threaded function for every ``prange`` loop), and each call pays for waking
the threads: tens of microseconds on an idle machine, far more when the cores
are shared. On small inputs, such as a first fit on a small dataset, the
serial twin is faster both to compile and to run, and a fit that never needs
threads compiles no parallel kernel at all.

A twin runs the same Python function with ``prange`` as a plain ``range``.
Every ``prange`` loop of the kernels that have a twin writes its own part of
the outputs, with no sum across iterations, so both produce bit-identical
results. Which one runs depends on the size of the input and on the number
of numba threads (``n_jobs=1`` always runs the serial twins).
"""

import collections
import contextlib
import types

import numba
import numpy as np
from numba import njit

# Set by parallel_kernels_only(); read by pick().
_parallel_only = False
# While parallel_kernels_only() runs: the Counter it yields, which pick()
# fills, so that a test can tell that the parallel kernels really ran.
_picked = None


def serial_twin(parallel_kernel):
    """The serial version of a ``njit(parallel=True)`` kernel.

    Parameters
    ----------
    parallel_kernel : numba dispatcher
        A kernel compiled with ``parallel=True`` and its other options
        (``cache``, ``fastmath``, ...).

    Returns
    -------
    kernel : numba dispatcher
        The same function compiled with the same options but
        ``parallel=False`` (and ``cache=True``), lazily on its first call
        like any kernel. It has its own name (the kernel's with ``_serial``
        appended) so that numba's on-disk cache, which names entries after
        the function and not after its options, keeps the two apart.
    """
    py_func = getattr(parallel_kernel, "py_func", None)
    if py_func is None:  # NUMBA_DISABLE_JIT: njit gave the Python function itself
        return parallel_kernel
    twin = types.FunctionType(
        py_func.__code__, py_func.__globals__, py_func.__name__ + "_serial",
        py_func.__defaults__, py_func.__closure__,
    )
    twin.__qualname__ = py_func.__qualname__ + "_serial"
    twin.__module__ = py_func.__module__
    twin.__doc__ = f"Serial version of :func:`{py_func.__name__}` (see sklearn_ltr._utils.parallel)."
    options = dict(parallel_kernel.targetoptions)
    options.pop("nopython", None)  # implied by njit, which warns if given
    options["parallel"] = False
    # Every kernel of the package is cached on disk; the twin too.
    return njit(cache=True, **options)(twin)


def per_thread_scratch(shape, dtype=np.float64):
    """An uninitialised array of ``shape`` for every thread numba may start
    (``NUMBA_NUM_THREADS``): ``(NUMBA_NUM_THREADS, *shape)``, which a kernel
    indexes by ``numba.get_thread_id()``, so that its threads share no work
    space and the results do not depend on which thread ran what.

    numba's thread id reads state that its threading layer sets up when it
    starts; a kernel that runs before any parallel region in the process (a
    serial twin, a small fit) would read it uninitialised and crash. Asking
    for the number of threads, done here, starts the layer.
    """
    numba.get_num_threads()
    return np.empty((numba.config.NUMBA_NUM_THREADS, *shape), dtype=dtype)


def pick(parallel_kernel, serial_kernel, work, min_parallel_work):
    """``parallel_kernel`` if ``work`` reaches ``min_parallel_work`` and numba
    may use more than one thread here (``n_jobs``), or within
    :func:`parallel_kernels_only`; else ``serial_kernel``. Both give the same
    results."""
    if _parallel_only:
        # The thread count here is the one the kernel runs on: callers call
        # the kernel they are given at once, inside the same numba_threads().
        _picked[_kernel_name(parallel_kernel), numba.get_num_threads()] += 1
        return parallel_kernel
    # The thread count is asked only for large work: the first call starts
    # numba's thread pool, which a small fit never needs.
    if work >= min_parallel_work and numba.get_num_threads() > 1:
        return parallel_kernel
    return serial_kernel


def may_pick_parallel(largest_work, min_parallel_work):
    """Whether :func:`pick` may choose a parallel kernel for some work of at
    most ``largest_work``, or is made to (:func:`parallel_kernels_only`):
    for a compiled loop that picks its kernels itself, as :func:`pick`
    would, and that is compiled with or without the parallel ones."""
    if _parallel_only:
        return True
    return largest_work >= min_parallel_work and numba.get_num_threads() > 1


def parallel_forced():
    """Whether :func:`parallel_kernels_only` is in effect."""
    return _parallel_only


def count_parallel_runs(parallel_kernel, n_runs):
    """Count ``n_runs`` runs of ``parallel_kernel`` that a compiled loop
    chose itself, as :func:`pick` counts its own choices in
    :func:`parallel_kernels_only`."""
    if _parallel_only and n_runs:
        _picked[_kernel_name(parallel_kernel), numba.get_num_threads()] += n_runs


def _kernel_name(kernel):
    return getattr(getattr(kernel, "py_func", kernel), "__name__", repr(kernel))


@contextlib.contextmanager
def parallel_kernels_only():
    """Run the parallel kernels even on small inputs, in this context.

    For warming up, on small data, the kernels that fits on large data run
    (``sklearn_ltr.dask.warm_up_workers``), and for tests that compare them
    with their serial twins. Not thread-safe: it sets a flag of the module.

    Yields
    ------
    picked : collections.Counter
        How many times :func:`pick` chose each parallel kernel in this
        context, keyed by ``(kernel name, numba threads)``: the name of the
        kernel's Python function and the thread count it ran on. It keeps
        its counts after the context. A nested context counts its picks in
        its own Counter only.
    """
    global _parallel_only, _picked
    previous = _parallel_only, _picked
    _parallel_only, _picked = True, collections.Counter()
    try:
        yield _picked
    finally:
        _parallel_only, _picked = previous
