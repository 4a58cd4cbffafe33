"""Export formats: write time, file size, and prediction speed of the runtimes.

One ``LambdaMARTRanker(n_estimators=500, max_leaf_nodes=31,
early_stopping=False, random_state=0)`` is fitted on MSLR-shaped data from
``make_ranking`` (``--train-queries`` queries, about 120 documents each, 136
features, no missing values, so the ranklib, solr and xgboost-dump formats
need no ``missing_as``). Then, in this one process:

* **Export**, for every format of :func:`sklearn_ltr.export.export_model`
  (ONNX twice: ``dtype="float32"`` and ``"float64"``): the fastest of
  ``--repeats`` writes to a file, the file size in bytes and its size after
  gzip (level 6). A format whose writer cannot be imported is reported as
  "not available".
* **Prediction** on ``--rows`` rows of other queries (default 200,000), on 1
  and 2 threads, rows per second of the fastest of ``--repeats`` calls. Each
  repeat calls every runtime once, in an order that rotates between repeats,
  so that a slow spell of the shared machine hits all of them alike. The
  runtimes: ours (``model.predict`` on float64, ``numba.set_num_threads``);
  LightGBM (``Booster(model_file=...)`` of the "lightgbm" file,
  ``predict(X float64, num_threads=t)``); XGBoost (``Booster`` of the
  "xgboost" file, ``nthread=t``, ``inplace_predict(X float32,
  predict_type="margin")``, its fastest documented path, zero-copy for a
  C-contiguous float32 array); onnxruntime (the float32 model on float32
  input and the float64 model on float64 input, ``intra_op_num_threads=t``);
  treelite GTIL (``treelite.frontend.load_lightgbm_model`` /
  ``load_xgboost_model`` of the exported files, ``treelite.gtil.predict(...,
  nthread=t, pred_margin=True)``). The cast of ``X`` to float32 is done once,
  outside the timings (its cost is printed). Each runtime's scores are checked
  against ``model.predict``: the largest absolute difference divided by the
  largest absolute score (float32 runtimes should be near 1e-7, float64 ones
  near 1e-15).

The report (a Markdown file, default ``benchmarks/results/export.md``) gives
the machine (``os.cpu_count()``, CPU model), the library versions, both
tables and the runtimes that failed.

Run: ``python benchmarks/bench_export.py [--rows 200000] [--trees 500]
[--repeats 5] [--train-queries 1000] [--output PATH]``, or ``--quick`` for a
smoke run under a minute (small sizes; writes no report unless ``--output``).
"""

import argparse
import gzip
import importlib
import os
import platform
import subprocess
import tempfile
import time

import numba
import numpy as np

from _alternate import fastest_alternating

import sklearn_ltr
from sklearn_ltr import LambdaMARTRanker
from sklearn_ltr.datasets import make_ranking
from sklearn_ltr.export import export_model

# name -> (format, options, file suffix)
EXPORTS = {
    "lightgbm": ("lightgbm", {}, ".txt"),
    "lightgbm-json": ("lightgbm-json", {}, ".json"),
    "xgboost": ("xgboost", {}, ".json"),
    "xgboost-dump": ("xgboost-dump", {}, ".json"),
    "ranklib": ("ranklib", {}, ".txt"),
    "solr": ("solr", {}, ".json"),
    "onnx (float32)": ("onnx", {"dtype": "float32"}, ".onnx"),
    "onnx (float64)": ("onnx", {"dtype": "float64"}, ".onnx"),
}
SERVED_BY = {"lightgbm": "LightGBM, treelite", "xgboost": "XGBoost, treelite",
             "onnx (float32)": "onnxruntime", "onnx (float64)": "onnxruntime",
             "lightgbm-json": "none (Vespa reads it)", "solr": "none (Solr)",
             "xgboost-dump": "none (Elasticsearch/OpenSearch LTR)",
             "ranklib": "none (Elasticsearch/OpenSearch LTR, RankLib)"}
THREADS = (1, 2)
LIBRARIES = ("numpy", "numba", "lightgbm", "xgboost", "onnx", "onnxruntime", "treelite")


def bench_exports(model, directory, repeats):
    """Fastest write time, size and gzip size per format; also the file paths."""
    rows, paths = {}, {}
    for name, (fmt, options, suffix) in EXPORTS.items():
        path = os.path.join(directory, name.replace(" ", "").replace("(", "-").strip(")") + suffix)
        best = np.inf
        try:
            for _ in range(repeats):
                start = time.perf_counter()
                export_model(model, path, fmt, **options)
                best = min(best, time.perf_counter() - start)
        except (ImportError, AttributeError) as exc:
            rows[name] = dict(error=f"not available ({type(exc).__name__})")
            continue
        except ValueError as exc:
            rows[name] = dict(error=f"refused: {exc}")
            continue
        with open(path, "rb") as f:
            data = f.read()
        rows[name] = dict(seconds=best, size=len(data), gzip=len(gzip.compress(data, 6)))
        paths[name] = path
    return rows, paths


def make_runtimes(model, paths, X64, X32):
    """name -> (file used, input dtype, {threads: predict()}); failures -> name: message."""
    runtimes, failed = {}, {}

    def ours(t):
        def run():
            numba.set_num_threads(t)
            return model.predict(X64)
        return run
    runtimes["ours (model.predict)"] = ("-", "float64", {t: ours(t) for t in THREADS})

    def add(name, file, dtype, build):
        if file not in paths:
            failed[name] = f"no {file} file"
            return
        try:
            runtimes[name] = (file, dtype, build(paths[file]))
        except Exception as exc:  # report any failure of a third-party API
            failed[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"

    def lightgbm_runtime(path):
        import lightgbm
        booster = lightgbm.Booster(model_file=path)
        return {t: (lambda t=t: booster.predict(X64, num_threads=t)) for t in THREADS}

    def xgboost_runtime(path):
        import xgboost
        boosters = {}
        for t in THREADS:
            boosters[t] = xgboost.Booster(model_file=path)
            boosters[t].set_param({"nthread": t})
        return {t: (lambda b=boosters[t]: b.inplace_predict(X32, predict_type="margin"))
                for t in THREADS}

    def onnx_runtime(X):
        def build(path):
            import onnxruntime
            runs = {}
            for t in THREADS:
                opts = onnxruntime.SessionOptions()
                opts.intra_op_num_threads, opts.inter_op_num_threads = t, 1
                session = onnxruntime.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
                feed = {session.get_inputs()[0].name: X}
                runs[t] = lambda s=session, feed=feed: s.run(None, feed)[0]
            return runs
        return build

    def treelite_runtime(loader_name, X):
        def build(path):
            import treelite
            tl_model = getattr(treelite.frontend, loader_name)(path)
            return {t: (lambda t=t: treelite.gtil.predict(tl_model, X, nthread=t, pred_margin=True))
                    for t in THREADS}
        return build

    add("LightGBM Booster", "lightgbm", "float64", lightgbm_runtime)
    add("XGBoost Booster (inplace_predict)", "xgboost", "float32", xgboost_runtime)
    add("onnxruntime (float32 model)", "onnx (float32)", "float32", onnx_runtime(X32))
    add("onnxruntime (float64 model)", "onnx (float64)", "float64", onnx_runtime(X64))
    add("treelite GTIL (lightgbm file)", "lightgbm", "float64", treelite_runtime("load_lightgbm_model", X64))
    add("treelite GTIL (xgboost file)", "xgboost", "float32",
        treelite_runtime("load_xgboost_model", X32))
    return runtimes, failed


def bench_predict(runtimes, reference, repeats):
    """Fastest seconds per (runtime, threads), and each runtime's relative difference."""
    diffs = {}
    scale = np.max(np.abs(reference))
    for name, (_, _, runs) in runtimes.items():  # warm up (JIT, sessions) and check scores
        diffs[name] = max(np.max(np.abs(np.ravel(run()) - reference)) / scale for run in runs.values())
    runs = {name: runtime[2] for name, runtime in runtimes.items()}
    return fastest_alternating(runs, THREADS, repeats, progress=True), diffs


def machine_info():
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    versions = [f"sklearn_ltr {sklearn_ltr.__version__}"]
    for lib in LIBRARIES:
        try:
            versions.append(f"{lib} {importlib.import_module(lib).__version__}")
        except ImportError:
            versions.append(f"{lib} not installed")
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    except OSError:
        commit = ""
    return cpu, ", ".join(versions), commit or "unknown"


def tables(exports, best, diffs, runtimes, failed, n_rows):
    lines = ["| format | export s | bytes | gzip bytes | gzip / bytes | runtime here |",
             "|---|---:|---:|---:|---:|---|"]
    for name, r in exports.items():
        if "error" in r:
            lines.append(f"| {name} | {r['error']} | - | - | - | - |")
        else:
            lines.append(f"| {name} | {r['seconds']:.3f} | {r['size']:,} | {r['gzip']:,} | "
                         f"{r['gzip'] / r['size']:.2f} | {SERVED_BY[name]} |")
    rate = {key: n_rows / s for key, s in best.items()}
    ours = next(iter(runtimes))
    lines += ["", "| runtime | file | input | rows/s, 1 thread | x ours | rows/s, 2 threads | x ours "
              "| max abs diff / max abs score |", "|---|---|---|---:|---:|---:|---:|---:|"]
    for name, (file, dtype, _) in runtimes.items():
        cells = [f"{rate[name, t]:,.0f} | {rate[name, t] / rate[ours, t]:.2f}" for t in THREADS]
        lines.append(f"| {name} | {file} | {dtype} | {' | '.join(cells)} | {diffs[name]:.1e} |")
    for name, message in failed.items():
        lines.append(f"| {name} | - | - | failed: {message} | - | - | - | - |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000, help="rows to predict")
    parser.add_argument("--trees", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=5, help="exports and predict calls per runtime")
    parser.add_argument("--train-queries", type=int, default=1000)
    parser.add_argument("--output", default=None, help="Markdown report (default "
                        "benchmarks/results/export.md; none with --quick)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 20,000 rows, 50 trees, 2 repeats")
    args = parser.parse_args()
    if args.quick:
        args.rows, args.trees, args.repeats, args.train_queries = 20_000, 50, 2, 100
    output = args.output or (None if args.quick else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "results", "export.md"))
    numba.set_num_threads(2)
    started, load_before = time.perf_counter(), os.getloadavg()[0]

    X, y, qid = make_ranking(n_queries=args.train_queries, random_state=0)
    X_test = make_ranking(n_queries=args.rows // 100 + 10, random_state=1)[0][: args.rows]
    X64 = np.ascontiguousarray(X_test, dtype=np.float64)
    start = time.perf_counter()
    X32 = np.ascontiguousarray(X_test, dtype=np.float32)
    cast_seconds = time.perf_counter() - start
    params = dict(n_estimators=args.trees, max_leaf_nodes=31, early_stopping=False, random_state=0)
    print(f"fitting LambdaMARTRanker({params}) on {X.shape[0]:,} rows x {X.shape[1]} features "
          f"({args.train_queries} queries), 2 numba threads", flush=True)
    start = time.perf_counter()
    model = LambdaMARTRanker(**params).fit(X, y, qid=qid)
    fit_seconds = time.perf_counter() - start
    print(f"  fit in {fit_seconds:.1f} s; predicting {X64.shape[0]:,} rows", flush=True)
    reference = model.predict(X64)

    with tempfile.TemporaryDirectory() as directory:
        exports, paths = bench_exports(model, directory, args.repeats)
        runtimes, failed = make_runtimes(model, paths, X64, X32)
        best, diffs = bench_predict(runtimes, reference, args.repeats)
    numba.set_num_threads(2)

    cpu, versions, commit = machine_info()
    body = tables(exports, best, diffs, runtimes, failed, X64.shape[0])
    print("\n" + body + "\n")
    print(f"casting X ({X64.shape[0]:,} x {X64.shape[1]}) to float32 once took {cast_seconds:.3f} s "
          f"(not in the times above); total run {(time.perf_counter() - started) / 60:.1f} min")
    if output is None:
        return
    unavailable = [n for n, r in exports.items() if "error" in r]
    text = f"""# Export formats: write time, size and prediction speed

Generated by `python benchmarks/bench_export.py --rows {args.rows} --trees {args.trees} --repeats \
{args.repeats} --train-queries {args.train_queries}` at commit {commit} (plus the working tree) in \
{(time.perf_counter() - started) / 60:.1f} minutes (1-minute load average {load_before:.2f} at \
the start, {os.getloadavg()[0]:.2f} at the end).

**Setup.** Machine: `os.cpu_count()` = {os.cpu_count()}, {cpu}, shared with other jobs. Versions: \
{versions}. Model: `LambdaMARTRanker(n_estimators={args.trees}, max_leaf_nodes=31, \
early_stopping=False, random_state=0)` fitted in {fit_seconds:.0f} s on `make_ranking` data \
({X.shape[0]:,} rows x {X.shape[1]} features, {args.train_queries} queries, no missing values). \
Export: fastest of {args.repeats} `export_model` calls writing a file; gzip at level 6. \
Prediction: {X64.shape[0]:,} rows of other queries, fastest of {args.repeats} calls per runtime and \
thread count, calls alternating between the runtimes; "x ours" is the rows/s over ours at the same \
thread count. Float32 inputs were cast once beforehand ({cast_seconds:.2f} s for this X, not \
counted). The last column is max |score - `model.predict`| / max |`model.predict`| on all rows: \
float32 runtimes should be near 1e-7, float64 ones near 1e-15.
{"" if not unavailable else chr(10) + "Not available when this ran: " + ", ".join(unavailable) + "." + chr(10)}
{body}
"""
    with open(output, "w") as f:
        f.write(text)
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
