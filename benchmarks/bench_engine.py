"""Speed of the tree engine against LightGBM on least-squares boosting.

Synthetic dense data (600,000 rows x 136 features by default, a mix of
continuous and discrete features), 200 trees with 31 leaves,
min_samples_leaf=20, 255 bins, learning rate 0.1, 2 threads on both sides.
Our side is the engine with a minimal Python boosting loop: bin once, then
per tree g = raw - y, h = 1 (float32), grow, update raw scores from the leaf
assignment. Runs alternate ours/LightGBM; the ratio uses the fastest run of
each because the machine is shared.

Unweighted, our side declares the constant hessian 1 to its row store, as a
least-squares objective would (``constant_hessian``), so that it builds
gradient-and-count histograms as LightGBM does. With ``--sample-weight`` both
sides fit weighted least squares with random weights in [0.5, 1.5] (our
side: g = w * (raw - y), h = w), so hessians are not constant and both
libraries use their general histogram kernels, as ranking objectives do.

Besides wall time, the process CPU time of each fit is printed: on a shared
machine it is less sensitive to other processes than wall time.

Usage::

    python benchmarks/bench_engine.py [--n-samples 600000] [--n-trees 200] [--repeats 3]
                                      [--sample-weight]
"""

import argparse
import time

import numba
import numpy as np

from sklearn_ltr._gbdt.binning import BinMapper
from sklearn_ltr._gbdt.grower import TreeGrower, _update_raw_predictions
from sklearn_ltr._gbdt.node_rows import NodeRows
from sklearn_ltr._gbdt.predictor import concatenate_trees, predict_raw


def make_data(n_samples, n_features, seed=0):
    """Make a regression problem with continuous and discrete features.

    Parameters
    ----------
    n_samples, n_features : int
        Shape of X.
    seed : int
        Seed of the numpy Generator.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), dtype float64
    y : ndarray of shape (n_samples,), dtype float64
    """
    rng = np.random.default_rng(seed)
    n_cont = (n_features * 7) // 10
    X = np.empty((n_samples, n_features))
    X[:, :n_cont] = rng.standard_normal((n_samples, n_cont))
    n_disc = n_features - n_cont
    # Discrete features with 2 to 40 levels, like counts and flags in LTR data.
    levels = rng.integers(2, 41, size=n_disc)
    X[:, n_cont:] = rng.integers(0, levels, size=(n_samples, n_disc))
    y = (X[:, 0] + np.sin(2 * X[:, 1]) + 0.5 * X[:, 2] * X[:, n_cont]
         + 0.3 * (X[:, n_cont + 1] > 1) + rng.standard_normal(n_samples))
    return X, y


def fit_ours(X, y, n_trees, learning_rate=0.1, num_leaves=31, min_samples_leaf=20,
             max_bins=255, grower_out=None, sample_weight=None):
    """Boost least-squares trees with our engine; return the ensemble and timings."""
    tic = time.perf_counter()
    cpu = time.process_time()
    mapper = BinMapper(max_bins=max_bins, random_state=0).fit(X)
    X_binned = mapper.transform(X)
    t_bin = time.perf_counter() - tic
    rows = NodeRows(X_binned, mapper.missing_values_bin_idx_, mapper.n_bins_non_missing_,
                    constant_hessian=1.0 if sample_weight is None else None)
    grower = TreeGrower(
        rows, mapper.n_bins_non_missing_, mapper.missing_values_bin_idx_,
        bin_thresholds=mapper.bin_thresholds_,
        max_leaf_nodes=num_leaves, min_samples_leaf=min_samples_leaf,
        shrinkage=learning_rate)
    baseline = float(np.average(y, weights=sample_weight))
    raw = np.full(X.shape[0], baseline)
    gradients = np.empty(X.shape[0], dtype=np.float32)
    if sample_weight is None:
        hessians = np.ones(X.shape[0], dtype=np.float32)
    else:
        hessians = sample_weight.astype(np.float32)
    trees = []
    t_grad = 0.0
    t_grow = 0.0
    t_update = 0.0
    for _ in range(n_trees):
        t0 = time.perf_counter()
        if sample_weight is None:
            np.subtract(raw, y, out=gradients, casting="unsafe")
        else:
            np.multiply(raw - y, sample_weight, out=gradients, casting="unsafe")
        t1 = time.perf_counter()
        tree = grower.grow(gradients, hessians)
        t2 = time.perf_counter()
        _update_raw_predictions(raw, tree.partitioned_indices, tree.leaf_starts,
                                tree.leaf_stops, tree.leaf_values)
        t_update += time.perf_counter() - t2
        t_grad += t1 - t0
        t_grow += t2 - t1
        trees.append(tree.nodes)
    total = time.perf_counter() - tic
    cpu = time.process_time() - cpu
    if grower_out is not None:
        grower_out.append(grower)
    stats = dict(total=total, cpu=cpu, binning=t_bin, gradients=t_grad, update=t_update,
                 grow=t_grow, histograms=grower.time_histograms,
                 find_split=grower.time_find_split, partition=grower.time_partition)
    return trees, baseline, raw, stats


def fit_lightgbm(X, y, n_trees, force_col_wise, sample_weight=None):
    import lightgbm

    tic = time.perf_counter()
    cpu = time.process_time()
    model = lightgbm.LGBMRegressor(
        n_estimators=n_trees, num_leaves=31, min_child_samples=20, max_bin=255,
        learning_rate=0.1, n_jobs=2, verbose=-1,
        force_col_wise=force_col_wise, force_row_wise=not force_col_wise)
    model.fit(X, y, sample_weight=sample_weight)
    return model, time.perf_counter() - tic, time.process_time() - cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=600_000)
    parser.add_argument("--n-features", type=int, default=136)
    parser.add_argument("--n-trees", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-lightgbm", action="store_true")
    parser.add_argument("--sample-weight", action="store_true",
                        help="weighted least squares: non-constant hessians")
    args = parser.parse_args()
    numba.set_num_threads(2)

    # Compile (or load from cache) every kernel on tiny data first.
    Xs, ys = make_data(2_000, 8, seed=1)
    trees, base, _, _ = fit_ours(Xs, ys, 3)
    predict_raw(*concatenate_trees(trees), Xs)

    X, y = make_data(args.n_samples, args.n_features)
    w = None
    if args.sample_weight:
        w = np.random.default_rng(1).uniform(0.5, 1.5, size=len(y))
    print(f"data: {X.shape[0]} x {X.shape[1]}, {args.n_trees} trees, 31 leaves, "
          f"2 threads, {'weighted' if w is not None else 'unweighted'} least squares")
    ours, theirs = [], {True: [], False: []}
    for rep in range(args.repeats):
        trees, base, raw, st = fit_ours(X, y, args.n_trees, sample_weight=w)
        ours.append(st["total"])
        mse = np.average((raw - y) ** 2, weights=w)
        print(f"[{rep}] ours      {st['total']:7.2f}s  train mse {mse:.4f}  "
              + "  ".join(f"{k} {v:.2f}" for k, v in st.items() if k != "total"),
              flush=True)
        if args.no_lightgbm:
            continue
        for col_wise in (True, False):
            model, t, cpu = fit_lightgbm(X, y, args.n_trees, col_wise, sample_weight=w)
            theirs[col_wise].append(t)
            mse = np.average((model.predict(X) - y) ** 2, weights=w)
            name = "col-wise" if col_wise else "row-wise"
            print(f"[{rep}] lightgbm {name} {t:7.2f}s  train mse {mse:.4f}  cpu {cpu:.2f}",
                  flush=True)
    print(f"ours fastest: {min(ours):.2f}s")
    if not args.no_lightgbm:
        for col_wise in (True, False):
            name = "col-wise" if col_wise else "row-wise"
            best = min(theirs[col_wise])
            print(f"lightgbm {name} fastest: {best:.2f}s  ratio ours/theirs "
                  f"{min(ours) / best:.2f}")
        best = min(min(v) for v in theirs.values())
        print(f"ratio vs LightGBM's faster mode: {min(ours) / best:.2f}")


if __name__ == "__main__":
    main()
