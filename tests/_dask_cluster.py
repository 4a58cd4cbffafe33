"""A loopback-only LocalCluster for the Dask tests."""

import contextlib
import os

# The scheduler serves /health and /metrics even without a dashboard, on port
# 8787 unless told otherwise: take a free port.
FREE_HTTP_PORT = {"dashboard_address": "127.0.0.1:0"}


@contextlib.contextmanager
def local_cluster(n_workers=2, *, work_stealing=True):
    """``n_workers`` single-threaded worker processes with one numba thread
    each (as the user guide sets them up), and a client connected to them.

    With ``work_stealing=False`` the scheduler never moves a task to another
    worker once it has chosen one, and it chooses among the workers that hold
    the task's inputs: a test that puts data on a worker can then rely on the
    work that reads it running there."""
    import dask
    from distributed import Client, LocalCluster

    # Dask's nanny writes its pre-spawn environment (OMP_NUM_THREADS and
    # friends, and here NUMBA_NUM_THREADS) into this process's environment
    # before it spawns the workers. Put it back as soon as they are spawned:
    # numba rereads its configuration whenever it compiles, and a
    # NUMBA_NUM_THREADS of 1 in this process's environment then makes any
    # compilation during the tests (a cold cache) fail with "Cannot set
    # NUMBA_NUM_THREADS"; later tests' subprocesses must not see it either.
    saved_environ = dict(os.environ)
    try:
        with dask.config.set({"distributed.nanny.pre-spawn-environ.NUMBA_NUM_THREADS": 1,
                              "distributed.scheduler.work-stealing": work_stealing}):
            cluster = LocalCluster(
                n_workers=n_workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                scheduler_kwargs=FREE_HTTP_PORT,
            )
    finally:
        for key in set(os.environ) - set(saved_environ):
            del os.environ[key]
        os.environ.update(saved_environ)
    client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()
