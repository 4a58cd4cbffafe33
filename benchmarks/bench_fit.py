"""Training speed, memory, prediction speed and JIT cost against LightGBM.

On MSLR-shaped synthetic data from ``make_ranking`` (about 120 documents per
query, 136 features, labels 0-4), both libraries train 500 trees with 31
leaves, at least 20 rows per leaf, 255 bins, learning rate 0.1, on 2 threads,
without early stopping, in this one process. Fits alternate ours / LightGBM
``--repeats`` times and the fastest of each is compared, because these shared
machines have sporadic slow runs.

Printed per size: fit time of each and the ratio ours / LightGBM, peak memory
added by each fit (resident set size sampled every few milliseconds, minus the
size before the fit) and its ratio, and prediction throughput (rows per second)
and its ratio. Then the one-time JIT cost: the first fit of a small model in a
fresh Python process with an empty numba cache, and again with the cache warm.

Caveat: peak memory is measured inside this one process, so a fit can reuse
heap pages that the previous fit freed but the allocator kept; at small sizes
that understates whichever library runs second (LightGBM). Trust the largest
size, or run each library in a process of its own (``/usr/bin/time -v``).

Targets (issue 3): fit ratio <= 1.5 at 5,000 queries (goal < 1.0), memory
ratio <= 1.5, prediction throughput ratio >= 0.5, warm-cache first fit < 3 s.

Run: ``python benchmarks/bench_fit.py [--sizes 1000 5000 20000] [--repeats 3]``.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import threading
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


class PeakMemory:
    """Peak resident memory added while the block runs, sampled by a thread."""

    def __enter__(self):
        self.start = _rss_bytes()
        self.peak = self.start
        self._running = True
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while self._running:
            self.peak = max(self.peak, _rss_bytes())
            time.sleep(0.002)

    def __exit__(self, *exc):
        self._running = False
        self._thread.join()
        self.peak = max(self.peak, _rss_bytes())
        self.added = self.peak - self.start


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


def _timed_fit(make, n_trees, fit, X, y, qid):
    model = make(n_trees)
    with PeakMemory() as memory:
        start = time.perf_counter()
        fit(model, X, y, qid)
        seconds = time.perf_counter() - start
    return model, seconds, memory.added


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
    ours_times, theirs_times, ours_mem, theirs_mem = [], [], [], []
    for repeat in range(repeats):
        ours, seconds, memory = _timed_fit(make_ours, n_trees, fit_ours, X, y, qid)
        ours_times.append(seconds)
        ours_mem.append(memory)
        theirs, seconds, memory = _timed_fit(make_lightgbm, n_trees, fit_lightgbm, X, y, qid)
        theirs_times.append(seconds)
        theirs_mem.append(memory)
        print(
            f"  run {repeat + 1}: ours {ours_times[-1]:7.2f} s, LightGBM {theirs_times[-1]:7.2f} s",
            flush=True,
        )
    X_predict = X[: min(X.shape[0], 200_000)]
    ours_rate = _predict_rate(ours, X_predict, 3)
    theirs_rate = _predict_rate(theirs, X_predict, 3)
    row = dict(
        n_queries=n_queries,
        rows=X.shape[0],
        ours_s=min(ours_times),
        lightgbm_s=min(theirs_times),
        ours_mb=min(ours_mem) / 2**20,
        lightgbm_mb=min(theirs_mem) / 2**20,
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
