"""Cold start: wall time of a first small fit in a fresh process.

Each run is a new Python process that imports sklearn_ltr, makes a small
dataset (``make_ranking(n_queries=50, docs_per_query=20, n_features=20,
random_state=0)``), fits ``LambdaMARTRanker(n_estimators=10)`` and predicts.
The whole process is timed from outside (interpreter start-up and
``import sklearn_ltr`` included), in two settings:

- *empty cache*: ``NUMBA_CACHE_DIR`` points to a new empty directory, so
  every numba kernel the fit calls is compiled (a fresh install);
- *warm cache*: the same directory after a first run, so the kernels are
  loaded from disk (every later run of a user).

The fastest and median of ``--runs`` runs are printed for each (and the
process's CPU time, which other processes on a shared machine disturb less),
empty and warm runs alternating. The fastest empty-cache run also reports
numba's ``numba:compile`` events: the compile time of each kernel and type
specialisation (the top ``--top``, in CPU seconds of the compiling thread,
exclusive of the kernels compiled inside it; numba compiles only on a cache
miss), and how many specialisations each kernel got, which should be one.

This is a report, not a test: nothing is asserted. The sklearn_ltr measured
is the one the child process imports: the installed package, or the first
``sklearn_ltr`` on ``PYTHONPATH`` (to compare two source trees).

Run from the repository root::

    python benchmarks/bench_cold_start.py [--runs 3] [--top 15] [--workload lambdamart|yetirank|all]

``--workload all`` fits the four rankers (LambdaMARTRanker, XENDCGRanker,
ListNetRanker, CalibratedRanker) and a LambdaMARTRanker with early stopping
instead of one ranker, to see what the other paths add; ``--workload
yetirank`` fits a YetiRankRanker (symmetric trees) instead.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

# What the child process runs. It prints one JSON line on stdout.
_CHILD = r"""
import json, sys, time
t_start = time.perf_counter()
import numba.core.event as ev

compiles = []  # (dispatcher name, signature, inclusive s, exclusive s)
_stack = []

class _CompileListener(ev.Listener):
    # numba compiles a kernel's callees while typing it, so the events nest;
    # the exclusive time is the kernel's own share. Compiling runs on this
    # thread only, and its CPU time is less disturbed by other processes on a
    # shared machine than wall time.
    def on_start(self, event):
        _stack.append([time.thread_time(), 0.0])

    def on_end(self, event):
        start, nested = _stack.pop()
        elapsed = time.thread_time() - start
        if _stack:
            _stack[-1][1] += elapsed
        dispatcher = event.data["dispatcher"]
        name = f"{dispatcher.py_func.__module__}.{dispatcher.py_func.__qualname__}"
        signature = ", ".join(str(a) for a in event.data["args"])
        compiles.append((name, signature, elapsed, elapsed - nested))

ev.register("numba:compile", _CompileListener())
t_numba = time.perf_counter()
import sklearn_ltr
t_import = time.perf_counter()
from sklearn_ltr.datasets import make_ranking

X, y, qid = make_ranking(n_queries=50, docs_per_query=20, n_features=20, random_state=0)
workload = sys.argv[1]
if workload == "lambdamart":
    models = [sklearn_ltr.LambdaMARTRanker(n_estimators=10)]
elif workload == "yetirank":
    models = [sklearn_ltr.YetiRankRanker(n_estimators=10)]
else:
    models = [
        sklearn_ltr.LambdaMARTRanker(n_estimators=10),
        sklearn_ltr.XENDCGRanker(n_estimators=10),
        sklearn_ltr.ListNetRanker(n_estimators=10),
        sklearn_ltr.CalibratedRanker(n_estimators=10, binarize=True),
        # Early stopping on held-out queries: the validation metric's kernels.
        sklearn_ltr.LambdaMARTRanker(n_estimators=10, early_stopping=True),
    ]
t_data = time.perf_counter()
for model in models:
    model.fit(X, y, qid=qid)
t_fit = time.perf_counter()
for model in models:
    model.predict(X)
t_predict = time.perf_counter()

import gc
from numba.core.dispatcher import Dispatcher
# Every kernel object, including those not bound to a module-level name
# (serial twins held by a wrapper).
specialisations = {}
for value in gc.get_objects():
    if isinstance(value, Dispatcher) and value.py_func.__module__.startswith("sklearn_ltr"):
        name = f"{value.py_func.__module__}.{value.py_func.__qualname__}"
        specialisations[name] = [str(s) for s in value.signatures]
print(json.dumps(dict(
    import_numba=t_numba - t_start,
    import_sklearn_ltr=t_import - t_numba,
    fit=t_fit - t_data,
    predict=t_predict - t_fit,
    compiles=compiles,
    specialisations=specialisations,
)))
"""


def _children_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_child(cache_dir, workload):
    """Run one first-fit process; return (wall seconds, its JSON report).

    The report gets the process's CPU seconds (user + system) as ``cpu``.
    """
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    cpu = _children_cpu_seconds()
    tic = time.perf_counter()
    # Run in the cache directory, so that the sklearn_ltr imported is the
    # installed one (or PYTHONPATH's), whatever the current directory holds.
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, workload], env=env, cwd=cache_dir,
        capture_output=True, text=True,
    )
    wall = time.perf_counter() - tic
    if proc.returncode != 0:
        sys.exit(f"the first-fit process failed:\n{proc.stderr}")
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    report["cpu"] = _children_cpu_seconds() - cpu
    return wall, report


def summary(label, walls, reports):
    cpu = [r["cpu"] for r in reports]
    return (f"{label:<12} fastest {min(walls):6.2f} s   median {statistics.median(walls):6.2f} s"
            f"   runs: {', '.join(f'{w:.2f}' for w in walls)}   (CPU: fastest "
            f"{min(cpu):.2f} s, median {statistics.median(cpu):.2f} s)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per setting")
    parser.add_argument("--top", type=int, default=15, help="kernels listed")
    parser.add_argument("--workload", choices=("lambdamart", "yetirank", "all"),
                        default="lambdamart")
    args = parser.parse_args()

    cold, warm, cold_reports, warm_reports = [], [], [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache_dir:
            wall, report = run_child(cache_dir, args.workload)
            cold.append(wall)
            cold_reports.append(report)
            # Alternate empty and warm runs, so that a burst of load on a
            # shared machine does not fall on one setting only.
            wall, report = run_child(cache_dir, args.workload)
            warm.append(wall)
            warm_reports.append(report)

    print(f"workload: {args.workload}; whole-process wall time, {args.runs} runs each")
    print(summary("empty cache", cold, cold_reports))
    print(summary("warm cache", warm, warm_reports))

    # Phases and kernels of the fastest empty-cache run.
    best = cold_reports[cold.index(min(cold))]
    fastest_warm = warm_reports[warm.index(min(warm))]
    for label, report in (("empty cache", best), ("warm cache", fastest_warm)):
        print(f"\nphases ({label}, fastest run): import numba {report['import_numba']:.2f} s, "
              f"import sklearn_ltr {report['import_sklearn_ltr']:.2f} s, "
              f"fit {report['fit']:.2f} s, predict {report['predict']:.2f} s")

    compiles = best["compiles"]
    total = sum(c[3] for c in compiles)
    print(f"\nnumba compiles (empty cache, fastest run): {len(compiles)} functions "
          f"(kernels and numba's own helpers they use), {total:.2f} CPU s in all")
    print(f"top {args.top} by exclusive compile time (inclusive: with the callees it compiled):")
    print(f"{'exclusive':>9} {'inclusive':>9}  kernel [signature]")
    for name, signature, inclusive, exclusive in sorted(compiles, key=lambda c: -c[3])[:args.top]:
        short = name.replace("sklearn_ltr.", "")
        print(f"{exclusive:8.2f}s {inclusive:8.2f}s  {short} [{signature[:90]}]")

    specialisations = best["specialisations"]
    used = {k: v for k, v in specialisations.items() if v}
    n_specs = sum(len(v) for v in used.values())
    print(f"\nkernels used: {len(used)}, specialisations: {n_specs} "
          f"(kernels imported: {len(specialisations)})")
    for name, signatures in sorted(used.items()):
        if len(signatures) > 1:
            print(f"  {len(signatures)} specialisations of {name}:")
            for signature in signatures:
                print(f"      {signature[:150]}")


if __name__ == "__main__":
    main()
