"""``bench_quality.py --all-rankers``: every ranker of ours beside LightGBM,
XGBoost and CatBoost rankers (issue #20).

Each ranker is fitted once per dataset and seed with a fixed number of trees
and no early stopping. Its raw scores after every iteration, on validation and
test data, then give both regimes from that one fit: the test NDCG@10 of the
full model, and that of the model an early-stopping rule on validation
NDCG@10 would keep. The rule is the same for every library (ours, LightGBM,
XGBoost and CatBoost each have their own metric conventions and tie rules), so
the comparison measures the models and not the libraries' stopping code.

Each library's staged scores are checked against its own full prediction
during the run, so a wrong adapter fails loudly instead of reporting numbers.
"""

import os
import platform
import sys
import tempfile
import time
import traceback

import numpy as np

from _alternate import fastest_alternating
from _report import code_version, fmt_p, paired
from bench_quality import _example_split, _mq2008_folds, _sorted_with_groups
from sklearn_ltr import (
    CalibratedRanker, LambdaMARTRanker, ListNetRanker, XENDCGRanker, YetiRankRanker,
)
from sklearn_ltr.datasets import make_ranking
from sklearn_ltr.metrics import ndcg_score, ndcg_score_per_query

FULL = dict(trees=500, patience=30, mq2008_folds=(1, 2, 3, 4, 5),
            make_ranking={"mr1000": 1000, "mr5000": 5000})
QUICK = dict(trees=30, patience=5, mq2008_folds=(1, 2), make_ranking={"mr1000": 100, "mr5000": 200})
SHARED = dict(learning_rate=0.1, leaves=31, min_leaf=20, bins=255, threads=2)
K = 10
DATASETS = ("mq2008", "example", "mr1000", "mr5000")
REFERENCE = "CatBoost YetiRank"
OURS_YETI = "YetiRankRanker"
OURS_YETI_LEAFWISE = "YetiRankRanker lossguide"
OURS_YETI_NO_L2 = "YetiRankRanker l2_regularization=0"
# Where the YetiRank goals hold: fit time and NDCG@10 at least CatBoost's.
YETIRANK_GOAL_DATASETS = ("mr1000", "mr5000")
# Rankers whose fit depends on the seed: random targets (XE-NDCG's gamma),
# sampled permutations (YetiRank), CatBoost's own randomness. The others are
# fitted once whatever --seeds says.
RANDOM = {"XENDCGRanker", "XENDCGRanker symmetric", OURS_YETI, OURS_YETI_LEAFWISE,
          OURS_YETI_NO_L2, "LightGBM rank_xendcg",
          REFERENCE}
RTOL = 1e-5
# MAP objectives need binary labels (ours refuses graded ones): they are
# trained on y >= 1, what sklearn_ltr.metrics.map_score counts as relevant;
# validation and test NDCG@10 still use the graded labels.
BINARY = {"LambdaMART MAP", "XGBoost rank:map"}


def _ours(cls, **kwargs):
    def make(seed, trees):
        s = SHARED
        params = dict(max_leaf_nodes=s["leaves"], min_samples_leaf=s["min_leaf"],
                      max_bins=s["bins"], **kwargs)
        return cls(n_estimators=trees, learning_rate=s["learning_rate"], early_stopping=False,
                   n_jobs=s["threads"], random_state=seed, **params)
    return make


def _lightgbm(objective):
    def make(seed, trees):
        import lightgbm
        s = SHARED
        return lightgbm.LGBMRanker(
            objective=objective, n_estimators=trees, learning_rate=s["learning_rate"],
            num_leaves=s["leaves"], min_child_samples=s["min_leaf"], max_bin=s["bins"],
            n_jobs=s["threads"], random_state=seed, verbose=-1)
    return make


def _xgboost(objective):
    def make(seed, trees):
        import xgboost
        s = SHARED
        # max_bin 256: XGBoost's bins include the one for missing values that
        # LightGBM and ours keep apart from max_bin/max_bins.
        return xgboost.XGBRanker(
            objective=objective, n_estimators=trees, learning_rate=s["learning_rate"],
            tree_method="hist", grow_policy="lossguide", max_leaves=s["leaves"], max_depth=0,
            max_bin=s["bins"] + 1, n_jobs=s["threads"], random_state=seed)
    return make


def _catboost(seed, trees):
    import catboost
    # YetiRank grows symmetric (oblivious) trees only, so CatBoost keeps its
    # tree defaults (depth 6; for YetiRank its l2_leaf_reg default is 1e-20,
    # as get_all_params() reports) instead of the 31-leaf setting.
    return catboost.CatBoostRanker(
        loss_function="YetiRank", iterations=trees, learning_rate=SHARED["learning_rate"],
        border_count=254, thread_count=SHARED["threads"], verbose=0, random_seed=seed,
        allow_writing_files=False)


# name -> (library, factory(seed, trees) -> unfitted model)
RANKERS = {
    "LambdaMART": ("ours", _ours(LambdaMARTRanker)),
    "RankNet": ("ours", _ours(LambdaMARTRanker, target_metric=None)),
    "LambdaMART MAP": ("ours", _ours(LambdaMARTRanker, target_metric="map")),
    "XENDCGRanker": ("ours", _ours(XENDCGRanker)),
    "ListNetRanker": ("ours", _ours(ListNetRanker)),
    # Its defaults grow CatBoost's tree shape (grow_policy="auto": symmetric,
    # depth 6; max_leaf_nodes unused); the row below is the leaf-wise shape of
    # earlier releases.
    OURS_YETI: ("ours", _ours(YetiRankRanker)),
    OURS_YETI_LEAFWISE: ("ours", _ours(YetiRankRanker, grow_policy="lossguide")),
    # Its defaults without their L2 penalty (the penalty of earlier releases).
    OURS_YETI_NO_L2: ("ours", _ours(YetiRankRanker, l2_regularization=0.0)),
    # RCR defaults; graded labels need binarize=True (relevant: y > 0).
    "CalibratedRanker": ("ours", _ours(CalibratedRanker, binarize=True)),
    # The other rankers with symmetric trees of depth 6 (the evidence for
    # their default shapes), and LambdaMART with XGBoost's depth-wise growth
    # to depth 6 (within the shared 31 leaves).
    "LambdaMART symmetric": ("ours", _ours(LambdaMARTRanker, grow_policy="symmetric",
                                           max_depth=6)),
    "XENDCGRanker symmetric": ("ours", _ours(XENDCGRanker, grow_policy="symmetric",
                                             max_depth=6)),
    "ListNetRanker symmetric": ("ours", _ours(ListNetRanker, grow_policy="symmetric",
                                              max_depth=6)),
    "CalibratedRanker symmetric": ("ours", _ours(CalibratedRanker, binarize=True,
                                                 grow_policy="symmetric", max_depth=6)),
    "LambdaMART depthwise": ("ours", _ours(LambdaMARTRanker, grow_policy="depthwise",
                                           max_depth=6)),
    "LightGBM lambdarank": ("lightgbm", _lightgbm("lambdarank")),
    "LightGBM rank_xendcg": ("lightgbm", _lightgbm("rank_xendcg")),
    "XGBoost rank:ndcg": ("xgboost", _xgboost("rank:ndcg")),
    "XGBoost rank:pairwise": ("xgboost", _xgboost("rank:pairwise")),
    "XGBoost rank:map": ("xgboost", _xgboost("rank:map")),
    REFERENCE: ("catboost", _catboost),
}


def _fit(library, model, train, binary=False):
    X, y, qid = train
    if binary:
        y = (y >= 1).astype(y.dtype)
    if library == "ours":
        return model.fit(X, y, qid=qid)
    order = np.argsort(qid, kind="stable")
    if library == "lightgbm":
        Xs, ys, group = _sorted_with_groups(X, y, qid)
        return model.fit(Xs, ys, group=group)
    if library == "xgboost":
        return model.fit(X[order], y[order], qid=qid[order])
    return model.fit(X[order], y[order], group_id=qid[order])


def _close(staged, full, what, constant=False):
    """Fail loudly unless the last staged scores are the full prediction."""
    diff = staged - full
    if constant:
        diff = diff - np.median(diff)
    scale = max(1.0, float(np.max(np.abs(full))))
    if np.max(np.abs(diff)) > RTOL * scale:
        raise AssertionError(
            f"{what}: staged scores differ from the full prediction by up to "
            f"{np.max(np.abs(diff)):.3g} (scale {scale:.3g}); the adapter is wrong")


def _staged(library, model, X, n_trees):
    """Raw scores after each iteration (cumulative), checked against the full prediction."""
    if library == "ours":
        last = None
        for scores in model.staged_predict(X):
            last = scores
            yield scores
        _close(last, model.predict(X), "ours")
    elif library == "lightgbm":
        booster = model.booster_
        total = np.zeros(len(X))
        for i in range(booster.current_iteration()):
            total = total + booster.predict(X, start_iteration=i, num_iteration=1, raw_score=True)
            yield total
        _close(total, booster.predict(X, raw_score=True), "LightGBM")
    elif library == "xgboost":
        import xgboost
        booster, data = model.get_booster(), xgboost.DMatrix(X)
        n = booster.num_boosted_rounds()
        total = np.zeros(len(X))
        for i in range(n):
            # Every one-tree prediction adds base_score once: after i + 1 trees
            # the sum is off by i * base_score, the same for every row, so no
            # within-query order (and no NDCG) changes; checked below.
            total = total + booster.predict(data, iteration_range=(i, i + 1), output_margin=True)
            yield total
        full = booster.predict(data, output_margin=True)
        _close(total, full, "XGBoost", constant=True)
    else:
        last = None
        # CatBoostRanker's staged_predict and predict give raw formula values
        # (its base class's prediction_type="RawFormulaVal"); it has no
        # prediction_type argument.
        for scores in model.staged_predict(X, eval_period=1, thread_count=SHARED["threads"]):
            last = np.asarray(scores, dtype=float)
            yield last
        _close(last, model.predict(X, thread_count=SHARED["threads"]), "CatBoost")


def _curves(library, model, val, test, n_trees):
    """Validation NDCG@10 and per-query test NDCG@10 after every iteration.

    Returns
    -------
    val_curve : ndarray of shape (n_trees,)
    test_per_query : ndarray of shape (n_trees, n_test_queries)
        Padded with the last iteration when the library stopped adding trees
        (no split left).
    """
    val_curve, test_rows = [], []
    for val_scores, test_scores in zip(_staged(library, model, val[0], n_trees),
                                       _staged(library, model, test[0], n_trees)):
        val_curve.append(ndcg_score(val[1], val_scores, qid=val[2], k=K, no_relevant="skip"))
        test_rows.append(ndcg_score_per_query(test[1], test_scores, qid=test[2], k=K,
                                              no_relevant="skip")[1])
    if not val_curve:
        raise RuntimeError("no trees were grown")
    pad = n_trees - len(val_curve)
    return np.array(val_curve + val_curve[-1:] * pad), np.array(test_rows + test_rows[-1:] * pad)


def stopping_iteration(val_curve, patience):
    """Trees kept by early stopping on ``val_curve``.

    Stops at the first iteration followed by ``patience`` iterations without
    a strictly higher value and keeps the best iteration up to there (the
    first of equal values), as LightGBM's and our early stopping do.
    """
    best, best_i = -np.inf, 0
    for i, value in enumerate(val_curve):
        if value > best:
            best, best_i = value, i
        elif i - best_i >= patience:
            break
    return best_i + 1


def _make_ranking_split(n_queries):
    X, y, qid = make_ranking(n_queries, random_state=0)
    queries = np.unique(qid)
    perm = np.random.default_rng(0).permutation(queries)
    n_train, n_val = int(0.6 * len(queries)), int(0.2 * len(queries))
    parts = (perm[:n_train], perm[n_train:n_train + n_val], perm[n_train + n_val:])
    return tuple((X[m], y[m], qid[m]) for m in (np.isin(qid, p) for p in parts))


def _splits(name, data_dir, config):
    """(label, train, val, test) of each split of a dataset; MQ2008 has one per fold."""
    if name == "mq2008":
        for label, train, val, test in _mq2008_folds(data_dir):
            if int(label[-1]) in config["mq2008_folds"]:
                yield label, train, val, test
    elif name == "example":
        yield ("LightGBM example", *_example_split(data_dir))
    else:
        n = config["make_ranking"][name]
        yield (f"make_ranking {n}", *_make_ranking_split(n))


def _log(message):
    print(message, file=sys.stderr, flush=True)


def _evaluate(name, split, config, n_seeds):
    """Per-query test NDCG@10 at all trees and early-stopped, trees kept, fit seconds."""
    library, factory = RANKERS[name]
    _, train, val, test = split
    at_all, at_stop, kept, seconds = [], [], [], []
    for seed in range(n_seeds if name in RANDOM else 1):
        model = factory(seed, config["trees"])
        start = time.perf_counter()
        _fit(library, model, train, name in BINARY)
        seconds.append(time.perf_counter() - start)
        val_curve, test_rows = _curves(library, model, val, test, config["trees"])
        n = stopping_iteration(val_curve, config["patience"])
        at_all.append(test_rows[-1])
        at_stop.append(test_rows[n - 1])
        kept.append(n)
    return np.mean(at_all, axis=0), np.mean(at_stop, axis=0), float(np.mean(kept)), seconds[0]


def _warm_up():
    """Fit each of our rankers on tiny data so numba's cache loading is not timed."""
    X, y, qid = make_ranking(20, docs_per_query=20, n_features=5, random_state=0)
    for name, (library, factory) in RANKERS.items():
        if library == "ours":
            try:
                _fit(library, factory(0, 2), (X, y, qid), name in BINARY)
            except Exception as exc:  # reported again when the ranker itself fails
                _log(f"warm-up of {name} failed: {type(exc).__name__}: {exc}")


def _seeds(args, dataset):
    """Seeds per seeded ranker on ``dataset``: ``--seeds``, or on make_ranking
    data ``--seeds-make-ranking`` when given."""
    if dataset.startswith("mr") and args.seeds_make_ranking is not None:
        return args.seeds_make_ranking
    return args.seeds


def _yetirank_rows():
    """Our YetiRank rows timed against CatBoost's: the default one, and the
    leaf-wise one when the table has it."""
    return [name for name in (OURS_YETI, OURS_YETI_LEAFWISE) if name in RANKERS]


def _time_yetirank(train, trees, repeats):
    """Fastest fit seconds of our YetiRank rows and CatBoost YetiRank, alternated."""
    fits = {}
    for name in (*_yetirank_rows(), REFERENCE):
        library, factory = RANKERS[name]
        fits[name] = {SHARED["threads"]: (lambda library=library, factory=factory:
                                          _fit(library, factory(0, trees), train))}
    best = fastest_alternating(fits, [SHARED["threads"]], repeats)
    return {name: best[name, SHARED["threads"]] for name in fits}


def _xgboost_rank_parameters():
    """XGBoost's ranking parameters as a fitted rank:ndcg model reports them."""
    import json

    import xgboost
    X, y, qid = make_ranking(10, docs_per_query=10, n_features=3, random_state=0)
    model = _fit("xgboost", _xgboost("rank:ndcg")(0, 1), (X, y, qid))
    params = json.loads(model.get_booster().save_config())["learner"]["objective"]["lambdarank_param"]
    return ", ".join(f"{k}={v}" for k, v in sorted(params.items())) + f" (xgboost {xgboost.__version__})"


def run(args, argv):
    """Run the ``--all-rankers`` benchmark and write its report."""
    config = QUICK if args.quick else FULL
    out = args.out or (os.path.join(tempfile.gettempdir(), "quality_all_rankers_quick.md") if args.quick
                       else os.path.join(os.path.dirname(__file__), "results", "quality_all_rankers.md"))
    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    if args.rankers:
        # A subset of the table; the YetiRank comparison needs its two rows.
        chosen = {n.strip() for n in args.rankers.split(",") if n.strip()}
        unknown = chosen - set(RANKERS)
        if unknown:
            raise SystemExit(f"--rankers: unknown {sorted(unknown)}; known: {sorted(RANKERS)}")
        for name in list(RANKERS):
            if name not in chosen | {OURS_YETI, REFERENCE}:
                del RANKERS[name]
    unknown = sorted(set(datasets) - set(DATASETS))
    if unknown:
        raise SystemExit(f"--datasets: unknown {unknown}; choose from {','.join(DATASETS)}")
    repeats = 1 if args.quick else args.time_repeats
    load_start, start = os.getloadavg(), time.perf_counter()
    _warm_up()
    results = {}   # dataset -> name -> dict or error string
    for dataset in datasets:
        results[dataset] = per = {}
        splits = list(_splits(dataset, args.data, config))
        for name in RANKERS:
            try:
                parts = [_evaluate(name, split, config, _seeds(args, dataset)) for split in splits]
                per[name] = dict(
                    at_all=np.concatenate([p[0] for p in parts]),
                    at_stop=np.concatenate([p[1] for p in parts]),
                    fold_all=[np.nanmean(p[0]) for p in parts],
                    fold_stop=[np.nanmean(p[1]) for p in parts],
                    trees=float(np.mean([p[2] for p in parts])),
                    seconds=float(np.mean([p[3] for p in parts])))
                _log(f"{dataset} {name}: NDCG@10 {np.nanmean(per[name]['at_all']):.4f} (all), "
                     f"{np.nanmean(per[name]['at_stop']):.4f} ({per[name]['trees']:.0f} trees), "
                     f"fit {per[name]['seconds']:.1f} s")
            except Exception as exc:  # one library failing must not end the run
                per[name] = f"{type(exc).__name__}: {exc}"
                _log(f"{dataset} {name} FAILED: {per[name]}\n{traceback.format_exc()}")
        try:
            per["_timing"] = _time_yetirank(splits[0][1], config["trees"], repeats)
            _log(f"{dataset} timing: {per['_timing']}")
        except Exception as exc:
            per["_timing"] = f"{type(exc).__name__}: {exc}"
            _log(f"{dataset} timing FAILED: {per['_timing']}")
        per["_label"] = "MQ2008 (folds " + ",".join(map(str, config["mq2008_folds"])) + ", pooled)" \
            if dataset == "mq2008" else splits[0][0]
    minutes = (time.perf_counter() - start) / 60
    try:
        xgb_params = _xgboost_rank_parameters()
    except Exception as exc:
        xgb_params = f"unknown ({type(exc).__name__}: {exc})"
    text = _report(results, dict(xgb_params=xgb_params,
        argv=argv, version=code_version(), load_start=load_start, load_end=os.getloadavg(),
        minutes=minutes, config=config, seeds={d: _seeds(args, d) for d in datasets},
        repeats=repeats, quick=args.quick,
        python=platform.python_version()))
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        f.write(text)
    print(text)
    _log(f"wrote {out} ({minutes:.1f} min)")


def _versions():
    import importlib
    out = []
    for module in ("sklearn_ltr", "numpy", "numba", "lightgbm", "xgboost", "catboost"):
        try:
            out.append(f"{module} {importlib.import_module(module).__version__}")
        except (ImportError, AttributeError):
            out.append(f"{module} not installed")
    return ", ".join(out)


def _cell(values, reference):
    """Mean NDCG@10, and its paired difference from the reference with p."""
    mean = np.nanmean(values)
    if reference is None or values is reference:
        return f"{mean:.4f}"
    (diff, p), = paired(values[None], reference[None])
    mark = "**" if p < 0.05 else ""
    return f"{mean:.4f} ({mark}{diff:+.4f}{mark}, p={fmt_p(p)})"


def _ok(results, dataset, name):
    return isinstance(results[dataset].get(name), dict)


def _dataset_means(results, key):
    """name -> mean NDCG@10 over the datasets (None if a dataset failed)."""
    means = {}
    for name in RANKERS:
        if all(_ok(results, d, name) for d in results):
            means[name] = float(np.mean([np.nanmean(results[d][name][key]) for d in results]))
        else:
            means[name] = None
    return means


def _ndcg_table(results, key, title):
    datasets = list(results)
    means = _dataset_means(results, key)
    best = max((m, n) for n, m in means.items() if m is not None)[1] if any(
        m is not None for m in means.values()) else None
    lines = [f"### {title}", "",
             f"Mean test NDCG@10; in brackets the paired per-query difference from {REFERENCE} "
             "and its t-test p (bold: p < 0.05). Last column: mean over the datasets "
             "(MQ2008 pooled counts once); the highest is bold.", "",
             "| ranker | " + " | ".join(results[d]["_label"] for d in datasets) + " | mean |",
             "|---|" + "---|" * (len(datasets) + 1)]
    for name in RANKERS:
        cells = []
        for d in datasets:
            if _ok(results, d, name):
                ref = results[d][REFERENCE][key] if _ok(results, d, REFERENCE) else None
                cells.append(_cell(results[d][name][key], ref))
            else:
                cells.append("failed")
        mean = "n/a" if means[name] is None else f"{means[name]:.4f}"
        cells.append(f"**{mean}**" if name == best else mean)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines, means, best


def _simple_table(results, title, fmt):
    datasets = list(results)
    lines = [f"### {title}", "", "| ranker | " + " | ".join(results[d]["_label"] for d in datasets) + " |",
             "|---|" + "---|" * len(datasets)]
    for name in RANKERS:
        cells = [fmt(results[d][name]) if _ok(results, d, name) else "failed" for d in datasets]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def _verdict(results, means_all, best_all, means_stop, best_stop):
    lines = ["## Goals", "",
             "1. Our best ranker (highest mean NDCG@10 over the datasets) has the highest mean of "
             "the table, and is not significantly below CatBoost YetiRank (paired t-test, "
             "p < 0.05) on any dataset; at all trees and early-stopped.",
             f"2. {OURS_YETI} at its defaults has at least CatBoost YetiRank's mean NDCG@10 on "
             "make_ranking 1000 and 5000, and fits in at most a third of its time there.", ""]
    met = True
    for key, regime, means, best in (("at_all", "all trees", means_all, best_all),
                                     ("at_stop", "early-stopped", means_stop, best_stop)):
        ours = [(m, n) for n, m in means.items() if m is not None and RANKERS[n][0] == "ours"]
        if not ours:
            lines.append(f"- {regime}: no ranker of ours finished every dataset")
            met = False
            continue
        mean, name = max(ours)
        top = best == name
        met &= top
        lines.append(f"- {regime}: our best is {name} ({mean:.4f}); the table's highest mean is "
                     f"{best} ({means[best]:.4f}): " + ("met" if top else "NOT MET"))
        for d in results:
            if _ok(results, d, name) and _ok(results, d, REFERENCE):
                (diff, p), = paired(results[d][name][key][None], results[d][REFERENCE][key][None])
                worse = diff < 0 and p < 0.05
                met &= not worse
                lines.append(f"  - {results[d]['_label']}: {diff:+.4f} (p={fmt_p(p)}) against "
                             f"{REFERENCE}" + (", SIGNIFICANTLY BELOW" if worse else ""))
    for d in YETIRANK_GOAL_DATASETS:
        if d not in results:
            continue
        label = results[d]["_label"]
        if not (_ok(results, d, OURS_YETI) and _ok(results, d, REFERENCE)):
            lines.append(f"- {label}: no comparison (a fit failed)")
            met = False
            continue
        for key, regime in (("at_all", "all trees"), ("at_stop", "early-stopped")):
            ours, theirs = (np.nanmean(results[d][n][key]) for n in (OURS_YETI, REFERENCE))
            met &= ours >= theirs
            lines.append(f"- {label}, {regime}: {OURS_YETI} {ours:.4f}, {REFERENCE} {theirs:.4f}: "
                         + ("met" if ours >= theirs else "NOT MET"))
        timing = results[d]["_timing"]
        if isinstance(timing, dict):
            ratio = timing[OURS_YETI] / timing[REFERENCE]
            met &= ratio <= 1 / 3
            lines.append(f"- {label}, fit time: {timing[OURS_YETI]:.2f} s / "
                         f"{timing[REFERENCE]:.2f} s = {ratio:.3f} "
                         + ("(met)" if ratio <= 1 / 3 else "(NOT MET)"))
        else:
            lines.append(f"- {label}, fit time: failed ({timing})")
            met = False
    lines += ["", f"**Goals {'MET' if met else 'NOT MET'}.**", ""]
    for ours in _yetirank_rows():
        lines += _comparison_of(ours, results)
    return lines


def _comparison_of(ours, results):
    """Per dataset: NDCG@10 of ``ours`` against CatBoost YetiRank, and the
    alternated fit times."""
    lines = [f"## {ours} against CatBoost YetiRank", ""]
    for d in results:
        label = results[d]["_label"]
        if not (_ok(results, d, ours) and _ok(results, d, REFERENCE)):
            lines.append(f"- {label}: no comparison (a fit failed)")
            continue
        for key, regime in (("at_all", "all trees"), ("at_stop", "early-stopped")):
            (diff, p), = paired(results[d][ours][key][None], results[d][REFERENCE][key][None])
            worse = diff < 0 and p < 0.05
            lines.append(f"- {label}, {regime}: {diff:+.4f} (p={fmt_p(p)}), "
                         + ("significantly worse" if worse else "not significantly worse"))
        timing = results[d]["_timing"]
        if isinstance(timing, dict):
            lines.append(f"- {label}, fit time: {timing[ours]:.2f} s / {timing[REFERENCE]:.2f} s "
                         f"= {timing[ours] / timing[REFERENCE]:.3f}")
        else:
            lines.append(f"- {label}, fit time: failed ({timing})")
    return lines + [""]


# (leaf-wise row, symmetric row) of each ranker of ours that has both.
SHAPE_PAIRS = (("LambdaMART", "LambdaMART symmetric"),
               ("XENDCGRanker", "XENDCGRanker symmetric"),
               ("ListNetRanker", "ListNetRanker symmetric"),
               ("CalibratedRanker", "CalibratedRanker symmetric"),
               (OURS_YETI_LEAFWISE, OURS_YETI))


def _difference_table(results, rows, header, note):
    """For each ``(name, first, second)`` of ``rows``: row ``second`` minus
    row ``first``, paired per dataset, at all trees / early-stopped."""
    rows = [(name, a, b) for name, a, b in rows if a in RANKERS and b in RANKERS]
    if not rows:
        return []
    datasets = list(results)
    lines = [header, "", note, "",
             "| ranker | " + " | ".join(results[d]["_label"] for d in datasets) + " |",
             "|---|" + "---|" * len(datasets)]
    for name, first, second in rows:
        cells = []
        for d in datasets:
            if not (_ok(results, d, first) and _ok(results, d, second)):
                cells.append("failed")
                continue
            parts = []
            for key in ("at_all", "at_stop"):
                (diff, p), = paired(results[d][second][key][None], results[d][first][key][None])
                mark = "**" if p < 0.05 else ""
                parts.append(f"{mark}{diff:+.4f}{mark} ({fmt_p(p)})")
            cells.append(" / ".join(parts))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines + [""]


def _shape_table(results, trees):
    """Symmetric minus leaf-wise trees of each ranker, paired per dataset."""
    return _difference_table(
        results, [(symmetric.replace(" symmetric", ""), leafwise, symmetric)
                  for leafwise, symmetric in SHAPE_PAIRS],
        "## Symmetric against leaf-wise trees, per ranker",
        "Test NDCG@10 of the ranker with symmetric depth-6 trees minus the same ranker with "
        f"{SHARED['leaves']}-leaf leaf-wise trees, paired over the test queries (t-test p; "
        f"bold: p < 0.05); {trees} trees / early-stopped.")


def _l2_table(results, trees):
    """YetiRankRanker's defaults minus the same without their L2 penalty."""
    return _difference_table(
        results, [(OURS_YETI, OURS_YETI_NO_L2, OURS_YETI)], "## YetiRankRanker's L2 penalty",
        f"Test NDCG@10 of {OURS_YETI} (defaults: l2_regularization=1) minus {OURS_YETI_NO_L2}, "
        f"paired over the test queries (t-test p; bold: p < 0.05); {trees} trees / "
        "early-stopped.")


def _report(results, meta):
    config = meta["config"]
    trees, patience = config["trees"], config["patience"]
    s = SHARED
    lines = [
        "# Every ranker beside LightGBM, XGBoost and CatBoost", "",
        "QUICK SMOKE RUN: few trees and small data, for checking the script, not for results."
        if meta["quick"] else "", "",
        f"Command: `{' '.join(meta['argv'])}`  ",
        f"Code: {meta['version']}; {_versions()}; Python {meta['python']}  ",
        "Load average (1, 5, 15 min) at start: " + ", ".join(f"{v:.2f}" for v in meta["load_start"])
        + "; at end: " + ", ".join(f"{v:.2f}" for v in meta["load_end"]) + "  ",
        f"Total: {meta['minutes']:.1f} minutes", "",
        "## Settings", "",
        f"- {trees} trees, learning rate {s['learning_rate']}, {s['threads']} threads for every ranker.",
        f"- Ours: max_leaf_nodes={s['leaves']}, min_samples_leaf={s['min_leaf']}, max_bins={s['bins']}, "
        "early_stopping=False, other parameters at their defaults (CalibratedRanker: RCR defaults with "
        "binarize=True, since the labels are graded: relevant is y > 0).",
        f"- LightGBM: num_leaves={s['leaves']}, min_child_samples={s['min_leaf']}, max_bin={s['bins']}.",
        f"- XGBoost: tree_method=hist, grow_policy=lossguide, max_leaves={s['leaves']}, max_depth=0, "
        f"max_bin={s['bins'] + 1}; ranking parameters at XGBoost's defaults: {meta['xgb_params']}.",
        "- YetiRankRanker at its defaults grows symmetric trees of depth 6 (grow_policy='auto'; "
        "CatBoost's tree shape, at most 64 leaves; max_leaf_nodes unused) with "
        "l2_regularization=1; YetiRankRanker lossguide is the leaf-wise shape of earlier "
        "releases (with the same penalty), YetiRankRanker l2_regularization=0 the defaults "
        "without the penalty (that of earlier releases). Rows named symmetric: "
        "grow_policy='symmetric', max_depth=6; depthwise: grow_policy='depthwise', max_depth=6, "
        "within the 31 leaves.",
        "- CatBoost YetiRank: CatBoost grows only symmetric trees for YetiRank, so its tree defaults "
        "are kept (depth 6; its YetiRank default l2_leaf_reg is 1e-20, not the 3 of its other losses); "
        "border_count=254.",
        "- Training rows are sorted by query for LightGBM, XGBoost and CatBoost.",
        f"- {' and '.join(sorted(BINARY))} are trained on binary labels y >= 1 (MAP needs "
        "them; ours refuses graded labels); validation and test NDCG@10 use the graded labels.",
        f"- Each ranker is fitted once per dataset (and seed) with {trees} trees. Its raw scores after "
        "every iteration on validation and test data (ours: staged_predict; LightGBM: one-iteration "
        "raw predictions summed; XGBoost: one-tree margins summed, off by a per-iteration constant "
        "that no within-query order sees; CatBoost: staged_predict, raw formula values) are checked "
        "against each library's full prediction (1e-5 relative) during the run.",
        f"- \"Early-stopped\": the same rule for every ranker on validation NDCG@{K} after each "
        f"iteration: stop at the first iteration followed by {patience} iterations without a strictly "
        "higher value and keep the best iteration up to there. This is the model each library's early "
        f"stopping would keep with that metric and patience, at the cost of one {trees}-tree fit.",
        f"- NDCG@{K}: sklearn_ltr.metrics, exponential gain, ties averaged, queries without relevant "
        "documents skipped. Paired t-tests over the per-query test values (MQ2008: the test queries "
        "of the folds pooled, each query is a test query in one fold).",
        "- Seeds: " + ", ".join(f"{results[d]['_label']} {n}" for d, n in meta["seeds"].items())
        + "; per-query NDCG averaged over them for the rankers that use "
        f"their seed ({', '.join(sorted(RANDOM))}); the others are fitted once. (Our binning "
        "subsamples 200,000 rows with the seed on larger data, so on make_ranking 5,000 the "
        "others depend on the seed a little too.)",
        f"- Data: MQ2008 LETOR folds {','.join(map(str, config['mq2008_folds']))} (train/vali/test); "
        "the LightGBM lambdarank example (20% of training queries held out by query for "
        "validation, its test file for test); make_ranking(n_queries, random_state=0) split "
        "60/20/20 by query with a seeded permutation.",
        f"- Fit time in the tables: the {trees}-tree fit of seed 0 (mean over MQ2008 folds), "
        "measured once. The YetiRank ratio is timed separately: YetiRankRanker and CatBoost "
        f"alternated {meta['repeats']} time(s) on the first split of each dataset, fastest of each, "
        "after a warm-up fit of each of our rankers on tiny data (numba's cached compilation "
        "is not timed).", ""]
    failures = [f"- {results[d]['_label']} {n}: {v}" for d in results for n, v in results[d].items()
                if not n.startswith("_") and isinstance(v, str)]
    table_all, means_all, best_all = _ndcg_table(results, "at_all", f"Test NDCG@{K} at {trees} trees")
    table_stop, means_stop, best_stop = _ndcg_table(results, "at_stop", f"Test NDCG@{K}, early-stopped")
    lines += _verdict(results, means_all, best_all, means_stop, best_stop)
    lines += _shape_table(results, trees)
    lines += _l2_table(results, trees)
    lines += ["## Tables", ""] + table_all + [""] + table_stop + [""]
    lines += _simple_table(results, "Trees kept by early stopping (mean over folds and seeds)",
                           lambda r: f"{r['trees']:.0f}") + [""]
    lines += _simple_table(results, f"Fit seconds, {trees} trees (seed 0, once)",
                           lambda r: f"{r['seconds']:.2f}") + [""]
    if "mq2008" in results and len(config["mq2008_folds"]) > 1:
        folds = config["mq2008_folds"]
        lines += [f"### MQ2008 per fold: mean test NDCG@{K}, {trees} trees / early-stopped", "",
                  "| ranker | " + " | ".join(f"Fold{f}" for f in folds) + " |",
                  "|---|" + "---|" * len(folds)]
        for name in RANKERS:
            if _ok(results, "mq2008", name):
                r = results["mq2008"][name]
                cells = [f"{a:.4f} / {b:.4f}" for a, b in zip(r["fold_all"], r["fold_stop"])]
            else:
                cells = ["failed"] * len(folds)
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
    if failures:
        lines += ["## Failures", ""] + failures + [""]
    return "\n".join(lines) + "\n"
