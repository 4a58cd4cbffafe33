"""Training speed, memory, prediction speed and JIT cost against LightGBM.

On MSLR-shaped synthetic data from ``make_ranking`` (about 120 documents per
query, 136 features, labels 0-4), both libraries train 500 trees with 31
leaves, at least 20 rows per leaf, 255 bins, learning rate 0.1, on 2 threads,
without early stopping, in this one process. Fits alternate ours / LightGBM
``--repeats`` times and the fastest of each is compared, because these shared
machines have sporadic slow runs.

Printed per size: fit time of each and the ratio ours / LightGBM, peak memory
added by each fit and its ratio, and prediction throughput (rows per second)
and its ratio. Then the one-time JIT cost: the first fit of a small model in a
fresh Python process with an empty numba cache, and again with the cache warm.

Peak memory is measured for each library in a Python process of its own: the
data are written once to ``.npy`` files, the child imports its library, loads
them, warms up, and reports its peak resident set size (``ru_maxrss``) minus
its size just before the fit. Measuring both fits in one process would let the
second reuse heap pages that the first freed but the allocator kept. The
memory fits train ``min(--trees, 100)`` trees: the working set (binned data,
histograms, gradients) is reached in the first iterations, and 500 trees of 31
leaves add well under a megabyte of model.

Targets (issue 3): fit ratio <= 1.5 at 5,000 queries (goal < 1.0), memory
ratio <= 1.5, prediction throughput ratio >= 0.5, warm-cache first fit < 3 s.

Run: ``python benchmarks/bench_fit.py [--sizes 1000 5000 20000] [--repeats 3]``.
"""

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

import numba
import numpy as np

from sklearn_ltr import LambdaMARTRanker
from sklearn_ltr.datasets import make_ranking

N_TREES = 500
PARAMS = dict(leaves=31, min_leaf=20, bins=255, learning_rate=0.1, threads=2)


def _rss_bytes():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def make_ours(n_trees):
    p = PARAMS
    return LambdaMARTRanker(
        n_estimators=n_trees, learning_rate=p["learning_rate"], max_leaf_nodes=p["leaves"],
        min_samples_leaf=p["min_leaf"], max_bins=p["bins"], early_stopping=False, random_state=0,
    )


def make_lightgbm(n_trees):
    import lightgbm

    p = PARAMS
    return lightgbm.LGBMRanker(
        objective="lambdarank", n_estimators=n_trees, learning_rate=p["learning_rate"],
        num_leaves=p["leaves"], min_child_samples=p["min_leaf"], max_bin=p["bins"],
        n_jobs=p["threads"], verbose=-1, random_state=0,
    )


def fit_ours(model, X, y, qid):
    return model.fit(X, y, qid=qid)


def fit_lightgbm(model, X, y, qid):
    # make_ranking returns rows grouped by query, as LightGBM requires.
    return model.fit(X, y, group=np.unique(qid, return_counts=True)[1])


LIBRARIES = {"ours": (make_ours, fit_ours), "lightgbm": (make_lightgbm, fit_lightgbm)}


def _timed_fit(make, n_trees, fit, X, y, qid):
    model = make(n_trees)
    start = time.perf_counter()
    fit(model, X, y, qid)
    return model, time.perf_counter() - start


def _memory_child(library, data_dir, n_trees):
    """Body of the child process: print the peak bytes one fit adds."""
    make, fit = LIBRARIES[library]
    X, y, qid = (np.load(os.path.join(data_dir, f"{name}.npy")) for name in ("X", "y", "qid"))
    # Warm up on a few queries so that loading compiled code is not counted.
    rows = qid < qid[min(len(qid) - 1, 2000)]
    fit(make(2), X[rows], y[rows], qid[rows])
    before = _rss_bytes()
    fit(make(n_trees), X, y, qid)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    print(peak - before)


def _peak_memory(library, data_dir, n_trees):
    out = subprocess.run(
        [sys.executable, __file__, "--memory-child", library, data_dir, str(n_trees)],
        capture_output=True, text=True, check=True,
    )
    return int(out.stdout.strip().splitlines()[-1])


def _predict_rate(model, X, repeats):
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        model.predict(X)
        best = min(best, time.perf_counter() - start)
    return X.shape[0] / best


def bench_size(n_queries, repeats, n_trees):
    X, y, qid = make_ranking(n_queries=n_queries, random_state=0)
    print(f"\n{n_queries} queries: {X.shape[0]} rows x {X.shape[1]} features, {n_trees} trees", flush=True)
    ours_times, theirs_times = [], []
    for repeat in range(repeats):
        ours, seconds = _timed_fit(make_ours, n_trees, fit_ours, X, y, qid)
        ours_times.append(seconds)
        theirs, seconds = _timed_fit(make_lightgbm, n_trees, fit_lightgbm, X, y, qid)
        theirs_times.append(seconds)
        print(
            f"  run {repeat + 1}: ours {ours_times[-1]:7.2f} s, LightGBM {theirs_times[-1]:7.2f} s",
            flush=True,
        )
    with tempfile.TemporaryDirectory() as data_dir:
        for name, array in (("X", X), ("y", y), ("qid", qid)):
            np.save(os.path.join(data_dir, f"{name}.npy"), array)
        memory_trees = min(n_trees, 100)
        ours_mem = _peak_memory("ours", data_dir, memory_trees)
        theirs_mem = _peak_memory("lightgbm", data_dir, memory_trees)
    print(f"  peak memory added by a fit: ours {ours_mem / 2**20:.0f} MB, LightGBM {theirs_mem / 2**20:.0f} MB",
          flush=True)
    X_predict = X[: min(X.shape[0], 200_000)]
    ours_rate = _predict_rate(ours, X_predict, 3)
    theirs_rate = _predict_rate(theirs, X_predict, 3)
    row = dict(
        n_queries=n_queries,
        rows=X.shape[0],
        ours_s=min(ours_times),
        lightgbm_s=min(theirs_times),
        ours_mb=ours_mem / 2**20,
        lightgbm_mb=theirs_mem / 2**20,
        ours_rate=ours_rate,
        lightgbm_rate=theirs_rate,
    )
    row["fit_ratio"] = row["ours_s"] / row["lightgbm_s"]
    row["mem_ratio"] = row["ours_mb"] / max(row["lightgbm_mb"], 1e-9)
    row["predict_ratio"] = ours_rate / theirs_rate
    print(
        f"  fastest: ours {row['ours_s']:.2f} s, LightGBM {row['lightgbm_s']:.2f} s, ratio "
        f"{row['fit_ratio']:.2f}; memory ratio {row['mem_ratio']:.2f}; predict ratio "
        f"{row['predict_ratio']:.2f}",
        flush=True,
    )
    return row


_JIT_SCRIPT = """
import time
start = time.perf_counter()
from sklearn_ltr import LambdaMARTRanker
from sklearn_ltr.datasets import make_ranking
X, y, qid = make_ranking(n_queries=20, docs_per_query=50, n_features=20, random_state=0)
LambdaMARTRanker(n_estimators=5, early_stopping=True, validation_fraction=0.2).fit(X, y, qid=qid).predict(X)
print(time.perf_counter() - start)
"""


def jit_cost():
    """Seconds for import + first small fit in fresh processes: empty cache, then warm."""
    with tempfile.TemporaryDirectory() as cache_dir:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
        times = []
        for _ in range(2):
            out = subprocess.run(
                [sys.executable, "-c", _JIT_SCRIPT], env=env, capture_output=True, text=True, check=True
            )
            times.append(float(out.stdout.strip().splitlines()[-1]))
    return times


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--memory-child":
        numba.set_num_threads(PARAMS["threads"])
        _memory_child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 20000])
    parser.add_argument("--trees", type=int, default=N_TREES, help="trees per model (500 for the targets)")
    parser.add_argument("--repeats", type=int, default=3, help="alternating fits per size (20000: at most 2)")
    args = parser.parse_args()
    numba.set_num_threads(PARAMS["threads"])

    # Warm the JIT (compiled code is loaded from numba's cache or compiled here).
    X, y, qid = make_ranking(n_queries=30, docs_per_query=40, n_features=20, random_state=0)
    make_ours(5).fit(X, y, qid=qid).predict(X)

    rows = [
        bench_size(n, args.repeats if n < 20000 else min(args.repeats, 2), args.trees)
        for n in args.sizes
    ]
    print(
        f"\n{'queries':>8}{'rows':>10}{'ours s':>9}{'LGBM s':>9}{'ratio':>7}"
        f"{'ours MB':>9}{'LGBM MB':>9}{'ratio':>7}{'ours rows/s':>13}{'LGBM rows/s':>13}{'ratio':>7}"
    )
    for r in rows:
        print(
            f"{r['n_queries']:>8}{r['rows']:>10}{r['ours_s']:>9.2f}{r['lightgbm_s']:>9.2f}{r['fit_ratio']:>7.2f}"
            f"{r['ours_mb']:>9.0f}{r['lightgbm_mb']:>9.0f}{r['mem_ratio']:>7.2f}"
            f"{r['ours_rate']:>13.3g}{r['lightgbm_rate']:>13.3g}{r['predict_ratio']:>7.2f}"
        )
    empty, warm = jit_cost()
    print(f"\nFirst fit in a fresh process (import + small fit): empty numba cache {empty:.1f} s, warm cache {warm:.1f} s")

    verdicts = []
    for r in rows:
        if r["n_queries"] == 5000:
            verdicts.append(("fit ratio <= 1.5 at 5000 queries", r["fit_ratio"] <= 1.5))
        verdicts.append((f"memory ratio <= 1.5 at {r['n_queries']}", r["mem_ratio"] <= 1.5))
        verdicts.append((f"predict ratio >= 0.5 at {r['n_queries']}", r["predict_ratio"] >= 0.5))
    verdicts.append(("warm-cache first fit < 3 s", warm < 3.0))
    print()
    for name, ok in verdicts:
        print(f"{'MET ' if ok else 'MISSED'}  {name}")


if __name__ == "__main__":
    main()
