"""Model selection on a Dask cluster: loading the numba kernels once per worker.

``GridSearchCV``, ``RandomizedSearchCV`` and ``cross_validate`` run their fits
through joblib, so ``with joblib.parallel_config(backend="dask"):`` sends them
to the workers of a ``dask.distributed`` cluster; nothing here is needed for
that. What this module adds is the numba side. The rankers' kernels are
compiled with ``cache=True``, but every new worker process still has to load
them from the on-disk cache (under a second) or, where no cache exists yet
(another machine, a fresh install, a read-only install), compile them (tens of
seconds). Without a warm-up that cost lands in whichever search tasks happen
to run first on each worker. :func:`warm_up_workers` pays it up front, once
per worker process, and on each host lets a single worker compile before the
others load what it cached.

dask and distributed are an optional dependency (``pip install
sklearn-ltr[dask]``): this module imports them only when called, and
``import sklearn_ltr`` never imports it.
"""

import os
import sys
import time
import warnings

import numba
import numpy as np
import scipy.sparse as sp
from numba.core.dispatcher import Dispatcher

from .._rankers import (
    CalibratedRanker,
    LambdaMARTRanker,
    ListNetRanker,
    XENDCGRanker,
    YetiRankRanker,
)
from .._gbdt import compiled_grower, compiled_symmetric
from .._gbdt.compiled_grower import load_every_variant
from .._gbdt.quickscorer import MIN_TREES
from .._utils.parallel import parallel_kernels_only
from ..metrics import map_score, mrr_score, ndcg_score

__all__ = ["warm_up_workers"]


def _tiny_ranking_data(rng, n_queries=12, docs_per_query=16, n_features=5):
    """Small random ranking data with graded labels 0-4 and a few NaNs."""
    n = n_queries * docs_per_query
    X = rng.normal(size=(n, n_features))
    X[rng.random(size=X.shape) < 0.05] = np.nan
    y = rng.integers(0, 5, size=n).astype(np.float64)
    qid = np.repeat(np.arange(n_queries), docs_per_query)
    return X, y, qid


def _input_variants(X):
    """``X`` as every array a fit or predict may see: float64 and float32,
    C and Fortran order, writable and read-only, dense and CSR."""
    variants = []
    for dtype in (np.float64, np.float32):
        for order in ("C", "F"):
            for writeable in (True, False):
                array = np.array(X, dtype=dtype, order=order)
                array.setflags(write=writeable)
                variants.append(array)
        variants.append(sp.csr_matrix(np.nan_to_num(X).astype(dtype)))
    return variants


def _warm_up():
    """Fit, predict and score every ranker on tiny data in this process.

    Each numba kernel is compiled (or loaded from the cache) the first time a
    process calls it with a given type signature, so the calls below follow
    the paths a model-selection task takes: dense float64 and float32 input,
    sparse CSR input, sample weights, sampled queries, early stopping on a validation set, the
    multiple-objective LambdaMART options, prediction and the ranking scorers.
    They run twice: small inputs use the serial twins of the parallel
    kernels and large ones the parallel kernels (``sklearn_ltr._utils.parallel``),
    so the second run makes the tiny data take the parallel ones.

    Returns
    -------
    seconds : float
        Wall time of the warm-up.
    """
    start = time.perf_counter()
    _warm_up_paths()
    with parallel_kernels_only():
        _warm_up_paths()
    # The tree loops come in variants by which of their kernels may run in
    # parallel; tiny data pick only some of them.
    for loops in (compiled_grower.LOOPS, compiled_symmetric.LOOPS):
        load_every_variant(loops)
    return time.perf_counter() - start


def _warm_up_paths():
    """The fits, predictions and scores of :func:`_warm_up`."""
    rng = np.random.default_rng(0)
    X, y, qid = _tiny_ranking_data(rng)
    X_val, y_val, qid_val = _tiny_ranking_data(rng, n_queries=4)
    weight = rng.uniform(0.5, 1.5, size=y.shape[0])
    small = dict(n_estimators=3, max_leaf_nodes=4, min_samples_leaf=2, random_state=0)
    rankers = [
        LambdaMARTRanker(**small),
        LambdaMARTRanker(
            secondary_weight=0.5, lambda_schedule="linear", leaf_estimation="gradient", **small
        ),
        # Sampled queries: the row store gathers their gradients itself.
        LambdaMARTRanker(subsample=0.5, **small),
        XENDCGRanker(**small),
        ListNetRanker(**small),
        YetiRankRanker(**small),
        # Its default growth: symmetric trees, the symmetric loop.
        YetiRankRanker(n_estimators=3, max_depth=3, min_samples_leaf=2, random_state=0),
        CalibratedRanker(binarize=True, **small),
    ]
    for ranker in rankers:
        params = {}
        if getattr(ranker, "secondary_weight", 0) > 0:
            params["y_secondary"] = rng.random(size=y.shape[0])
        ranker.fit(X, y, qid=qid, **params)
        ranker.fit(X, y, qid=qid, sample_weight=weight, X_val=X_val, y_val=y_val,
                   qid_val=qid_val, **params)
        ranker.score(X, y, qid=qid)
        y_score = ranker.predict(X)
    for metric in (ndcg_score, mrr_score, map_score):
        metric(y, y_score, qid=qid)
    # Models of fewer trees are walked; from MIN_TREES trees (of at most 32
    # leaves) prediction runs QuickScorer's kernel.
    LambdaMARTRanker(**{**small, "n_estimators": MIN_TREES}).fit(X, y, qid=qid).predict(X)
    # Binning and prediction read X itself, whose dtype, memory layout and
    # writability are part of the kernels' type signatures: a DataFrame
    # arrives Fortran-ordered, data shipped to a worker or memory-mapped by
    # joblib arrives read-only. The other kernels only see arrays made by fit.
    ranker = rankers[0]
    for variant in _input_variants(X):
        ranker.fit(variant, y, qid=qid).predict(variant)


def _kernel_signatures():
    """Type signatures each numba kernel of sklearn_ltr has in this process.

    A kernel gains a signature when it is compiled or loaded from the cache
    for new argument types, so comparing two snapshots tells whether some
    call between them paid for compiling or loading. The tests use it to check
    that :func:`_warm_up` covers what a search runs.

    Returns
    -------
    signatures : dict of str to set of str
        Keyed by ``"module.function"``, for every kernel of every imported
        ``sklearn_ltr`` module, and ``"module.name[key]"`` for the kernels
        a module keeps in a dict (the variants of the compiled tree loops).
    """
    signatures = {}
    for module_name, module in list(sys.modules.items()):
        if module_name.split(".")[0] != "sklearn_ltr" or module is None:
            continue
        for name, value in list(vars(module).items()):
            kernels = value.items() if isinstance(value, dict) else [(None, value)]
            for key, kernel in kernels:
                if isinstance(kernel, Dispatcher):
                    label = name if key is None else f"{name}[{key}]"
                    signatures[f"{module_name}.{label}"] = {str(sig) for sig in kernel.signatures}
    return signatures


def _usable_cores():
    """Cores this process may run on (its affinity mask where there is one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS and Windows have no sched_getaffinity
        return os.cpu_count() or 1


def _warm_up_on_worker():
    """Worker side of :func:`warm_up_workers`: warm up, report threads and cores."""
    seconds = _warm_up()
    return {
        "seconds": seconds,
        "numba_threads": numba.get_num_threads(),
        "cores": _usable_cores(),
    }


def _oversubscribed_hosts(hosts, dask_threads, reports):
    """Hosts whose workers can run more numba threads at once than they have cores.

    Parameters
    ----------
    hosts : dict of str to str
        Host of each worker address.
    dask_threads : dict of str to int
        Dask threads (concurrent tasks) of each worker address.
    reports : dict of str to dict
        What :func:`_warm_up_on_worker` returned on each worker address.

    Returns
    -------
    problems : list of str
        One sentence per oversubscribed host, empty if there is none. A host
        counts only if some worker there runs numba with more than one
        thread: many single-threaded tasks per core is dask's choice, not
        numba's.
    """
    problems = []
    for host in sorted(set(hosts.values())):
        addresses = sorted(a for a, h in hosts.items() if h == host)
        tasks = sum(dask_threads[a] for a in addresses)
        numba_threads = max(reports[a]["numba_threads"] for a in addresses)
        total = sum(dask_threads[a] * reports[a]["numba_threads"] for a in addresses)
        cores = max(reports[a]["cores"] for a in addresses)
        if numba_threads > 1 and total > cores:
            problems.append(
                f"on {host}, {len(addresses)} worker(s) run up to {tasks} task(s) at once, "
                f"each with up to {numba_threads} numba threads: {total} threads on "
                f"{cores} cores"
            )
    return problems


def warm_up_workers(client, *, workers=None):
    """Load or compile the rankers' numba kernels once in every worker process.

    Runs a tiny fit, prediction and scoring of every ranker as one task on
    each worker, so that the first tasks of a search do not pay for loading
    the cached kernels (under a second per process) or, where the host has no
    cache yet, for compiling them (tens of seconds). On each host one worker
    runs first and the others follow, so that they load the kernels the first
    one cached instead of all compiling the same kernels at once.

    Call it after the workers have started (see
    ``distributed.Client.wait_for_workers``) and again for workers that join
    later; on a worker that is already warm it takes milliseconds.

    Parameters
    ----------
    client : distributed.Client
        Client of the cluster the searches will run on.
    workers : list of str, default=None
        Addresses of the workers to warm up. None means every worker
        connected now.

    Returns
    -------
    seconds : dict of str to float
        Wall time of the warm-up task on each worker, keyed by the worker's
        address (the import of ``sklearn_ltr`` that precedes it is not
        counted).

    Raises
    ------
    ValueError
        If the cluster has no workers, or ``workers`` names an address that
        is not one of them.

    Warns
    -----
    UserWarning
        If the workers of a host can run more numba threads at once than the
        host has cores (``nthreads`` per worker times ``NUMBA_NUM_THREADS``,
        summed over its workers). Every parallel loop of a fit then waits for
        threads that are not running, and fits slow down (by 15 times in one
        measurement where OpenMP's idle threads spun); start each worker with
        ``nthreads=1`` and set ``NUMBA_NUM_THREADS`` to the cores per worker.

    Examples
    --------
    Two worker processes on this machine, one task and one numba thread
    each. ``NUMBA_NUM_THREADS`` must be in a worker's environment before it
    imports numba, which a script that imports sklearn_ltr makes it do at
    start-up, hence the ``pre-spawn-environ`` setting rather than
    ``LocalCluster(env=...)``:

    >>> import dask  # doctest: +SKIP
    >>> from distributed import Client, LocalCluster  # doctest: +SKIP
    >>> from sklearn_ltr.dask import warm_up_workers
    >>> with dask.config.set({"distributed.nanny.pre-spawn-environ.NUMBA_NUM_THREADS": 1}):
    ...     cluster = LocalCluster(n_workers=2, threads_per_worker=1)  # doctest: +SKIP
    >>> client = Client(cluster)  # doctest: +SKIP
    >>> seconds = warm_up_workers(client)  # doctest: +SKIP
    >>> sorted(seconds) == sorted(client.nthreads())  # doctest: +SKIP
    True
    """
    from distributed.comm import get_address_host

    dask_threads = client.nthreads()
    if not dask_threads:
        raise ValueError(
            "client has no workers to warm up; start some first (e.g. "
            "client.wait_for_workers(n_workers=...))."
        )
    if workers is None:
        workers = sorted(dask_threads)
    else:
        workers = list(workers)
        unknown = sorted(set(workers) - set(dask_threads))
        if unknown:
            raise ValueError(
                f"workers has addresses that are not workers of this cluster: {unknown}; "
                f"its workers are {sorted(dask_threads)}."
            )
    hosts = {address: get_address_host(address) for address in workers}
    first_of_host = {}
    for address in workers:
        first_of_host.setdefault(hosts[address], address)
    first = list(first_of_host.values())
    rest = [address for address in workers if address not in first]

    reports = {}
    for batch in (first, rest):
        futures = [
            client.submit(
                _warm_up_on_worker, workers=[address], allow_other_workers=False, pure=False
            )
            for address in batch
        ]
        reports.update(zip(batch, client.gather(futures)))

    problems = _oversubscribed_hosts(hosts, dask_threads, reports)
    if problems:
        warnings.warn(
            "Numba oversubscription: "
            + "; ".join(problems)
            + ". Every parallel loop of a fit then waits for threads that are not running, "
            "so fits slow down. Give each worker one dask thread (nthreads=1) and set "
            "NUMBA_NUM_THREADS in the workers' environment, before they import numba, so "
            "that workers x NUMBA_NUM_THREADS does not exceed the cores of the host.",
            UserWarning,
            stacklevel=2,
        )
    return {address: reports[address]["seconds"] for address in workers}
