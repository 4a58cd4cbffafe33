"""How fit time and memory grow with the number of rows.

Fits one ranker (LambdaMART by default: ``--trees`` trees of 31 leaves, no
early stopping, ``random_state=0``) on ``make_ranking`` data (float32, 136
MSLR-shaped features, about 120 documents per query) of 1, 2, 4 and 8
million rows, then on a single query of 50,000 documents, and prints per
size the fit time (wall and CPU), the peak resident memory of the process,
the memory the fit added on top of the data, and for each doubling of the
rows the growth factor of time and memory (2.0 is linear).

Every fit runs in a Python process of its own, so that one fit's freed but
retained heap cannot hide the next one's peak. The child generates its data
(``make_ranking`` writes in chunks, so generation peaks near the data size),
warms up numba on a tiny fit, records its resident size, fits, and reports
``getrusage(RUSAGE_SELF).ru_maxrss`` (the number the parent would read with
``RUSAGE_CHILDREN``, which is a running maximum over all children and so
cannot separate them). If the peak was already reached before the fit, the
line is marked ``*``: the fit's own addition is then at most what is shown.

The single query is the first 50,000 rows of a larger ``make_ranking`` draw
given one query id (the generator draws query sizes at random).

Run: ``python benchmarks/bench_scale.py [--sizes 1e6 2e6 4e6 8e6] [--trees 100]``;
``--quick`` is a smoke test on tiny sizes. The full run needs about 12 GB of
memory at 8 million rows (4.4 GB of float32 features, 1.1 GB binned) and
a long time on two cores: run it on an idle machine.
"""

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time

import numpy as np
from _memory import rss_bytes

RANKERS = ("lambdamart", "xendcg", "listnet", "calibrated")
GB = 1024**3


def _peak_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def _make_ranker(name, n_trees):
    from sklearn_ltr import CalibratedRanker, LambdaMARTRanker, ListNetRanker, XENDCGRanker

    cls = {
        "lambdamart": LambdaMARTRanker,
        "xendcg": XENDCGRanker,
        "listnet": ListNetRanker,
        "calibrated": CalibratedRanker,
    }[name]
    return cls(n_estimators=n_trees, max_leaf_nodes=31, min_samples_leaf=20,
               early_stopping=False, random_state=0)


def _data(rows, n_features, single_query):
    from sklearn_ltr.datasets import make_ranking

    if single_query:
        # About 1.5 x 120 documents on average per query: enough queries to
        # cover ``rows`` for sure, then cut and relabel as one query.
        X, y, qid = make_ranking(n_queries=max(2, rows // 50 + 1), docs_per_query=120,
                                 n_features=n_features, dtype=np.float32, random_state=0)
        X, y = X[:rows], y[:rows]
        qid = np.zeros(rows, dtype=np.int64)
    else:
        X, y, qid = make_ranking(n_queries=max(1, round(rows / 120)), docs_per_query=120,
                                 n_features=n_features, dtype=np.float32, random_state=0)
    return X, y, qid


def child(spec):
    """Fit once and print a JSON line with time and memory (runs in its own process)."""
    X_small, y_small, q_small = _data(2000, spec["features"], False)
    warm = _make_ranker(spec["ranker"], 2)
    labels = (y_small > 0).astype(np.float64) if spec["ranker"] == "calibrated" else y_small
    warm.fit(X_small, labels, qid=q_small)  # numba compilation / cache load
    del X_small, y_small, q_small, warm

    X, y, qid = _data(spec["rows"], spec["features"], spec["single_query"])
    if spec["ranker"] == "calibrated":
        y = (y > 0).astype(np.float64)
    model = _make_ranker(spec["ranker"], spec["trees"])
    rss_before, peak_before = rss_bytes(), _peak_bytes()
    wall, cpu = time.perf_counter(), time.process_time()
    model.fit(X, y, qid=qid)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak = _peak_bytes()
    print(json.dumps(dict(
        rows=int(X.shape[0]), queries=int(np.unique(qid).size), data_bytes=int(X.nbytes),
        fit_s=wall, cpu_s=cpu, peak_bytes=peak, added_bytes=peak - rss_before,
        peak_before_fit=peak == peak_before, trees=int(model.n_iter_),
    )))


def run_child(spec):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"child failed for {spec}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _growth(a, b, key):
    """Growth factor of ``key`` per doubling of the rows from result a to b."""
    doublings = math.log2(b["rows"] / a["rows"])
    if doublings <= 0 or a[key] <= 0 or b[key] <= 0:
        return float("nan")
    return (b[key] / a[key]) ** (1 / doublings)


def _line(r):
    star = "*" if r["peak_before_fit"] else " "
    return (
        f"{r['rows']:>10,} {r['queries']:>8,} {r['fit_s']:>9.1f} {r['cpu_s']:>9.1f} "
        f"{r['peak_bytes'] / GB:>8.2f} {r['added_bytes'] / GB:>8.2f}{star} "
        f"{r['data_bytes'] / GB:>7.2f}"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e6, 2e6, 4e6, 8e6],
                        help="numbers of rows (e.g. 1e6)")
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--features", type=int, default=136)
    parser.add_argument("--single-query-docs", type=int, default=50_000,
                        help="documents of the single-query fit (0 skips it)")
    parser.add_argument("--ranker", choices=RANKERS, default="lambdamart")
    parser.add_argument("--quick", action="store_true",
                        help="smoke test: 20k and 40k rows, 20 features, 5 trees, 5k-document query")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(json.loads(args.child))
        return
    if args.quick:
        args.sizes, args.trees, args.features, args.single_query_docs = [2e4, 4e4], 5, 20, 5000

    import numba

    from sklearn_ltr import __version__

    print(f"sklearn_ltr {__version__}, {args.ranker}, {args.trees} trees of 31 leaves, "
          f"{args.features} float32 features, numba threads {numba.get_num_threads()}, "
          f"{os.cpu_count()} CPUs; each fit in its own process")
    header = (f"{'rows':>10} {'queries':>8} {'fit s':>9} {'cpu s':>9} {'peak GB':>8} "
              f"{'fit +GB':>9} {'X GB':>7}")
    print(header)
    results = []
    base = dict(trees=args.trees, features=args.features, ranker=args.ranker)
    for rows in sorted(int(s) for s in args.sizes):
        r = run_child(dict(base, rows=rows, single_query=False))
        results.append(r)
        print(_line(r), flush=True)
    if len(results) > 1:
        print("\ngrowth per doubling of rows (2.00 = linear):")
        for a, b in zip(results, results[1:]):
            print(f"  {a['rows']:>10,} -> {b['rows']:>10,}: time x{_growth(a, b, 'fit_s'):.2f}, "
                  f"peak memory x{_growth(a, b, 'peak_bytes'):.2f}, "
                  f"memory added by fit x{_growth(a, b, 'added_bytes'):.2f}")
    if args.single_query_docs:
        print(f"\none query of {args.single_query_docs:,} documents:")
        print(header)
        r = run_child(dict(base, rows=args.single_query_docs, single_query=True))
        print(_line(r), flush=True)
    if any(r["peak_before_fit"] for r in results):
        print("* peak reached before the fit (data generation); the fit added at most that.")


if __name__ == "__main__":
    main()
