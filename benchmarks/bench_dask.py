"""Data-parallel training on Dask: wall time and peak memory per worker.

Fits ``DaskLambdaMARTRanker`` (``--trees`` trees of 31 leaves, no early
stopping) on about ``--rows`` rows of ``make_ranking`` data (float32, 136
features, 120 documents per query) on a LocalCluster of 1 worker process
and of 2 worker processes, each configuration ``--repeats`` times,
alternating. The machine's cores are shared out: 1 worker runs numba on all
of them, 2 workers on half each.

The data is generated on the workers, one partition per task (whole
queries, each partition its own seed and query ids), dealt round-robin to
the workers and kept there before the fit, as a user's data loaded with
dask and rebalanced would be. Peak memory per worker
is the largest resident size a sampler thread in each worker process saw
(every 20 ms) during the fit; the table also gives the resident size just
before the fit (the process, the kernels and the partitions it holds) and the
difference, what the fit added.

For reference the same model is also fitted by ``LambdaMARTRanker`` in this
process on the same rows (gathered here), once per repeat.

Run: ``python benchmarks/bench_dask.py [--rows 2000000] [--trees 100]``;
``--quick`` is a smoke test on 40,000 rows. Writes nothing; prints a table.
"""

import argparse
import os
import threading
import time

import numpy as np

N_FEATURES = 136
DOCS_PER_QUERY = 120
MB = 1024**2


def _partition_frame(index, n_queries):
    """One partition of whole queries, generated on a worker."""
    from sklearn_ltr.datasets import make_ranking, to_frame

    X, y, qid = make_ranking(n_queries=n_queries, docs_per_query=DOCS_PER_QUERY,
                             n_features=N_FEATURES, dtype=np.float32, random_state=index)
    return to_frame(X, qid + index * n_queries).assign(label=y)


def _rss_bytes():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _start_sampler(dask_worker):
    """Worker side: sample this process's resident size until stopped."""
    state = {"stop": threading.Event(), "start": _rss_bytes(), "peak": _rss_bytes()}

    def sample():
        while not state["stop"].wait(0.02):
            state["peak"] = max(state["peak"], _rss_bytes())

    state["thread"] = threading.Thread(target=sample, daemon=True)
    state["thread"].start()
    # Kept on the worker object: this script's functions reach the workers
    # pickled by value, so a module-level dict would not survive between calls.
    dask_worker.sklearn_ltr_rss_sampler = state


def _stop_sampler(dask_worker):
    state = dask_worker.sklearn_ltr_rss_sampler
    state["stop"].set()
    state["thread"].join()
    return {"start": state["start"], "peak": max(state["peak"], _rss_bytes())}


def _params(n_trees):
    return dict(n_estimators=n_trees, max_leaf_nodes=31, min_samples_leaf=20,
                early_stopping=False, random_state=0)


def _run_cluster(n_workers, rows, n_trees, n_partitions):
    cores = os.cpu_count() or 2
    numba_threads = max(1, cores // n_workers)
    config = {"distributed.nanny.pre-spawn-environ.NUMBA_NUM_THREADS": numba_threads}
    # The nanny copies its pre-spawn environment into this process's, and a
    # later cluster's workers would inherit the first one's thread count.
    saved_environ = dict(os.environ)
    try:
        return _fit_on_cluster(config, n_workers, rows, n_trees, n_partitions)
    finally:
        os.environ.clear()
        os.environ.update(saved_environ)


def _fit_on_cluster(config, n_workers, rows, n_trees, n_partitions):
    import dask
    import dask.dataframe as dd
    from distributed import Client, LocalCluster, wait

    from sklearn_ltr.dask import DaskLambdaMARTRanker, warm_up_workers

    with dask.config.set(config), LocalCluster(
        n_workers=n_workers, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address=None, memory_limit=0,
    ) as cluster, Client(cluster) as client:
        warm_up_workers(client)
        queries_per_part = max(1, round(rows / DOCS_PER_QUERY / n_partitions))
        meta = _partition_frame(0, 1).iloc[:0]
        # Partitions dealt round-robin: the slowest worker sets the pace of
        # every tree, so the data is spread evenly, as rebalanced data would be.
        workers = sorted(client.nthreads())
        parts = [
            client.submit(_partition_frame, p, queries_per_part, workers=[workers[p % n_workers]])
            for p in range(n_partitions)
        ]
        wait(parts)
        ddf = dd.from_delayed(parts, meta=meta)
        n_rows = int(ddf.shape[0].compute())
        client.run(_start_sampler)
        tic = time.perf_counter()
        ranker = DaskLambdaMARTRanker(**_params(n_trees)).fit(ddf.drop(columns="label"),
                                                             ddf["label"])
        seconds = time.perf_counter() - tic
        memory = client.run(_stop_sampler)
        added = [(m["peak"] - m["start"]) / MB for m in memory.values()]
        resident = [m["start"] / MB for m in memory.values()]
        frame = ddf.compute() if n_workers == 1 else None
    return dict(seconds=seconds, added=added, resident=resident, rows=n_rows,
                trees=ranker.n_iter_, model=ranker.to_local(), frame=frame)


def _run_local(frame, n_trees):
    from sklearn_ltr import LambdaMARTRanker

    X = frame.drop(columns=["label", "qid"])
    tic = time.perf_counter()
    model = LambdaMARTRanker(**_params(n_trees)).fit(X, frame["label"].to_numpy(),
                                                     qid=frame["qid"].to_numpy())
    return time.perf_counter() - tic, model, X


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=2e6)
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--quick", action="store_true", help="40,000 rows, 10 trees, 1 repeat")
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.trees, args.repeats = 40_000, 10, 1
    rows = int(args.rows)

    results = {1: [], 2: [], "local": []}
    for repeat in range(args.repeats):
        for n_workers in (1, 2):
            run = _run_cluster(n_workers, rows, args.trees, args.partitions)
            results[n_workers].append(run)
            print(f"repeat {repeat + 1}: {n_workers} worker(s): {run['seconds']:.1f} s, "
                  f"{run['rows']:,} rows, fit added "
                  + ", ".join(f"{a:.0f}" for a in run["added"]) + " MB per worker", flush=True)
            if n_workers == 1:
                frame = run.pop("frame")
                seconds, local_model, X = _run_local(frame, args.trees)
                results["local"].append(seconds)
                gap = np.max(np.abs(local_model.predict(X) - run["model"].predict(X)))
                print(f"repeat {repeat + 1}: one process (LambdaMARTRanker): {seconds:.1f} s; "
                      f"largest prediction difference from the 1-worker model {gap:.1e}",
                      flush=True)
                del frame, X

    print()
    print(f"DaskLambdaMARTRanker, {results[1][0]['rows']:,} rows x {N_FEATURES} features "
          f"(float32), {args.trees} trees of 31 leaves, {os.cpu_count()} cores; "
          f"fastest time and largest memory of {args.repeats} runs")
    print()
    print("| setup | fit wall time (s) | resident before the fit, per worker (MB) | "
          "peak during the fit, per worker (MB) | fit's addition, per worker (MB) |")
    print("|---|---|---|---|---|")
    print(f"| one process, LambdaMARTRanker | {min(results['local']):.1f} | - | - | - |")
    for n_workers in (1, 2):
        runs = results[n_workers]
        # Fastest time; memory of the run that added the most (the worst case).
        best = min(runs, key=lambda r: r["seconds"])
        most = max(runs, key=lambda r: max(r["added"]))
        print(f"| {n_workers} worker(s) x {max(1, (os.cpu_count() or 2) // n_workers)} numba "
              f"thread(s) | {best['seconds']:.1f} | "
              + " / ".join(f"{r:.0f}" for r in most["resident"]) + " | "
              + " / ".join(f"{r + a:.0f}" for r, a in zip(most["resident"], most["added"]))
              + " | " + " / ".join(f"{a:.0f}" for a in most["added"]) + " |")


if __name__ == "__main__":
    main()
