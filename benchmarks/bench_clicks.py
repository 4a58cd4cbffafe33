"""Click benchmark: learning to rank from simulated clicks, our position
debiasing beside XGBoost's and LightGBM's, on make_ranking worlds whose true
labels are known.

A world is one click model (PBM at eta 0.5, 1 or 2, cascade, DBN) seen
through one production ranker (weak, medium or strong) with a number of
sessions per query. The queries of one ``make_ranking`` call are split into
a labelled slice (the production rankers are trained on it), training and
validation queries (shown to simulated users: only their clicks are used) and
test queries (true labels, at least 2,000 in the full run).

* Production rankers: ``LambdaMARTRanker`` trained on a few labelled queries
  with few trees (``QUALITIES``); their test-set scores are standardised and
  every session adds Gaussian noise (``simulate_clicks(score_noise=...)``),
  so sessions of a query show different orders.
* Clicks: ``simulate_clicks`` on the training and validation queries, top 10
  shown; sessions without a click are dropped (they carry no pair) for every
  model.
* Models, all on the same click log (``MODELS``): LambdaMART on raw clicks;
  our ``position_debiasing="unbiased_lambdamart"`` (the default method),
  ``"ipw"`` with the true propensities (an oracle reference) and
  ``"additive"`` (LightGBM's method on our engine); XGBoost
  ``rank:ndcg`` on raw clicks and with ``lambdarank_unbiased=True``; LightGBM
  ``lambdarank`` on raw clicks and with ``Dataset(position=...)``; LambdaMART
  on the true labels of the documents of the training log (the ceiling).
* Each model grows a fixed number of trees; its scores after every tree give
  two regimes: all trees, and the tree count early stopping on the NDCG@10 of
  the *validation clicks* keeps (the ceiling: validation labels). Test
  NDCG@10 on true labels, paired t-tests over test queries.
* Propensities: our ``position_bias_ ** (1 + position_bias_norm)`` and
  XGBoost's ``ti+ ** (1 + lambdarank_bias_norm)`` against the examination
  curve the click model implies (PBM: ``(1/r)**eta``), mean absolute error
  over positions 2-10; our ``position_bias_unclicked_`` against the
  unclicked-side curve the click model implies (see ``_clicks_report.py``).

Run: ``python benchmarks/bench_clicks.py`` (the full grid of 30 worlds;
``--worlds`` runs a subset: the 12 worlds of ``results/clicks_pbm.md``, one
with 100 sessions per query, took 84 minutes at 3 seeds with ``--jobs 2``
on a 2-core machine, so expect several hours for the grid), or ``--quick``
for a smoke run of about a minute on tiny worlds, written to a temporary
directory unless ``--out`` is given. Every fit runs on one thread;
``--jobs N`` runs N worlds and seeds side by side, with the same numbers.
"""

import argparse
import fnmatch
import os
import platform
import sys
import tempfile
import time
import traceback

import numpy as np
from _clicks_report import plot_propensities, write_report
from _quality_all_rankers import _curves, stopping_iteration
from _report import code_version, minutes_logger

from sklearn_ltr import LambdaMARTRanker
from sklearn_ltr.datasets import make_ranking, simulate_clicks
from sklearn_ltr.metrics import ndcg_score_per_query

SHOWN = 10  # documents per session
MAX_LABEL = 4  # make_ranking's labels 0-4
BIAS_NORM = 1.0  # position_bias_norm = lambdarank_bias_norm (both defaults)
DBN_CONTINUATION = 0.9  # gamma of the DBN worlds
K = 10
# Click models: name -> simulate_clicks keywords.
CLICK_MODELS = {
    "pbm0.5": dict(model="pbm", eta=0.5),
    "pbm1": dict(model="pbm", eta=1.0),
    "pbm2": dict(model="pbm", eta=2.0),
    "cascade": dict(model="cascade"),
    "dbn": dict(model="dbn", continuation=DBN_CONTINUATION),
}
# Production rankers: labelled queries, trees, score noise per session (in
# standard deviations of the standardised scores).
QUALITIES = {
    "weak": dict(queries=20, trees=5, noise=1.0),
    "medium": dict(queries=100, trees=30, noise=0.5),
    "strong": dict(queries=500, trees=100, noise=0.25),
}
FULL = dict(data=dict(n_features=60, docs_per_query=50), production=500, train=1500,
            validation=500, test=2000, trees=300, patience=30, sessions=(10, 100),
            qualities=("weak", "medium", "strong"), clicks=tuple(CLICK_MODELS))
QUICK = dict(data=dict(n_features=20, docs_per_query=20), production=40, train=60,
             validation=20, test=60, trees=15, patience=5, sessions=(10,),
             qualities=("weak", "strong"), clicks=("pbm1", "cascade"),
             worlds=("pbm1-strong-s10", "cascade-weak-s10"),
             quality_overrides={"weak": dict(queries=10, trees=3), "strong": dict(queries=40, trees=15)})
SHARED = dict(learning_rate=0.1, leaves=31, min_leaf=20, bins=255)

# name -> (library, debiasing, learning rate as a multiple of SHARED's); the
# label in tables is the name. Half the learning rate: XGBoost's LambdaMART
# hessian is twice ours, so ours at half the rate takes the Newton steps
# XGBoost takes at the shared one; the clicks guide recommends it on clicks.
MODELS = {
    "LambdaMART clicks": ("ours", None, 1.0),
    "LambdaMART clicks, half learning rate": ("ours", None, 0.5),
    "LambdaMART unbiased_lambdamart": ("ours", "unbiased_lambdamart", 1.0),
    "LambdaMART unbiased_lambdamart, half learning rate": ("ours", "unbiased_lambdamart", 0.5),
    "LambdaMART ipw (true propensities), half learning rate": ("ours", "ipw", 0.5),
    "LambdaMART additive": ("ours", "additive", 1.0),
    "XGBoost rank:ndcg clicks": ("xgboost", None, 1.0),
    "XGBoost lambdarank_unbiased": ("xgboost", "unbiased", 1.0),
    "LightGBM lambdarank clicks": ("lightgbm", None, 1.0),
    "LightGBM lambdarank position": ("lightgbm", "position", 1.0),
    "LambdaMART true labels (ceiling)": ("ours", "labels", 1.0),
}
CEILING = "LambdaMART true labels (ceiling)"


def world_names(config):
    return [f"{c}-{q}-s{s}" for c in config["clicks"] for q in config["qualities"]
            for s in config["sessions"]]


def parse_world(name):
    click, quality, sessions = name.split("-")
    return click, quality, int(sessions[1:])


# -- data, production rankers, clicks ----------------------------------------------


def make_data(config, seed=0):
    """``{"production", "train", "validation", "test"}`` -> (X, y, qid), split
    by query from one make_ranking call (float32 features)."""
    sizes = [config[p] for p in ("production", "train", "validation", "test")]
    X, y, qid = make_ranking(sum(sizes), dtype=np.float32, random_state=seed, **config["data"])
    perm = np.random.default_rng(seed).permutation(np.unique(qid))
    parts, start = {}, 0
    for part, n in zip(("production", "train", "validation", "test"), sizes):
        mask = np.isin(qid, perm[start:start + n])
        parts[part] = (X[mask], y[mask], qid[mask])
        start += n
    return parts


def production_scores(parts, quality, seed):
    """A LambdaMARTRanker of the given quality, fitted on its labelled slice;
    its standardised scores of every part, and its test NDCG@10 per query."""
    X, y, q = parts["production"]
    picked = np.unique(q)[:quality["queries"]]
    keep = np.isin(q, picked)
    model = LambdaMARTRanker(n_estimators=quality["trees"], learning_rate=SHARED["learning_rate"],
                             max_leaf_nodes=SHARED["leaves"], early_stopping=False, n_jobs=1,
                             random_state=seed).fit(X[keep], y[keep], qid=q[keep])
    raw = {p: model.predict(parts[p][0]) for p in ("train", "validation", "test")}
    mean, std = raw["train"].mean(), raw["train"].std() or 1.0
    scores = {p: (s - mean) / std for p, s in raw.items()}
    Xt, yt, qt = parts["test"]
    ndcg = ndcg_score_per_query(yt, scores["test"], qid=qt, k=K, no_relevant="skip")[1]
    return scores, ndcg


def attractiveness(y, click_noise=0.1):
    """simulate_clicks's default click probability of an examined document."""
    return click_noise + (1 - click_noise) * (2.0 ** y - 1) / (2.0 ** MAX_LABEL - 1)


def implied_curves(log, y, click):
    """Examination curves the click model implies on the shown lists.

    Per session, the marginal examination probability ``E_r`` of each rank:
    PBM ``(1/r)**eta``; cascade ``prod_{s<r} (1 - a_s)``; DBN ``prod_{s<r}
    gamma (1 - a_s sat_s)`` (the user goes on after no click or an
    unsatisfying click). Then at each rank, over all impressions of the log,
    the clicked side ``t+_r = sum(E_r a) / sum(a)`` (clicks per relevant
    document) and the unclicked side ``t-_r = mean(1 - E_r a) / mean(1 - a)``
    (Hu et al.'s ratio of unclicked to irrelevant), both relative to rank 1
    (where ``E_1 = 1``). Under the PBM ``t+_r = (1/r)**eta`` exactly.
    """
    spec = CLICK_MODELS[click]
    a = attractiveness(y[log.row])
    n_sessions = int(log.session.max()) + 1
    A = np.full((n_sessions, SHOWN), np.nan)
    A[log.session, log.position - 1] = a
    E = np.ones_like(A)
    if spec["model"] == "pbm":
        E[:] = np.arange(1, SHOWN + 1) ** -spec["eta"]
    else:
        sat = (2.0 ** y[log.row] - 1) / (2.0 ** MAX_LABEL - 1)
        S = np.zeros_like(A)
        S[log.session, log.position - 1] = sat
        for r in range(1, SHOWN):
            if spec["model"] == "cascade":
                step = 1 - A[:, r - 1]
            else:
                step = spec["continuation"] * (1 - A[:, r - 1] * S[:, r - 1])
            E[:, r] = E[:, r - 1] * step
    shown = ~np.isnan(A)
    t_plus = np.array([np.sum((E * A)[shown[:, r], r]) / np.sum(A[shown[:, r], r]) for r in range(SHOWN)])
    t_minus = np.array([np.mean(1 - (E * A)[shown[:, r], r]) / np.mean(1 - A[shown[:, r], r])
                        for r in range(SHOWN)])
    return t_plus / t_plus[0], t_minus / t_minus[0]


def click_log(part, scores, spec, noise, n_sessions, seed):
    """Click log of ``part``, sessions with a click only, rows in session then
    position order (XGBoost's lambdarank_unbiased reads positions from it)."""
    X, y, q = part
    log = simulate_clicks(y.astype(int), q, scores=scores, n_sessions=n_sessions, k=SHOWN,
                          max_label=MAX_LABEL, score_noise=noise, random_state=seed, **spec)
    per_session = np.bincount(log.session, weights=log.click)
    keep = per_session[log.session] > 0
    # Renumber the kept sessions 0, 1, ... (still sorted).
    session = np.unique(log.session[keep], return_inverse=True)[1]
    position = log.position[keep]
    assert np.all(np.diff(session) >= 0)
    assert np.all((np.diff(position) == 1) | (np.diff(session) == 1))
    shown = np.bincount(log.position, minlength=SHOWN + 1)[1:]
    ctr = np.bincount(log.position, weights=log.click, minlength=SHOWN + 1)[1:] / np.maximum(shown, 1)
    stats = dict(sessions=int(per_session.shape[0]), kept=int(np.sum(per_session > 0)),
                 clicks=int(log.click.sum()), ctr=ctr)
    return dict(X=X[log.row[keep]], click=log.click[keep].astype(np.float64), session=session,
                position=position, row=log.row[keep], stats=stats, full=log)


# -- models ---------------------------------------------------------------------------


class _LightGBMFit:
    """What _quality_all_rankers._staged reads of a LightGBM model (booster_):
    LGBMRanker.fit of LightGBM 4.7 takes no ``position``, lightgbm.train does."""

    def __init__(self, booster):
        self.booster_ = booster


def fit_model(name, tr, truth, propensity, trees, seed):
    """Fit one model of ``MODELS`` on the click log ``tr``; returns (library,
    fitted model, (t+, t-) or None)."""
    library, kind, rate_factor = MODELS[name]
    s = SHARED
    if library == "ours":
        learning_rate = s["learning_rate"] * rate_factor
        if kind == "labels":
            X, y, q = truth
            extra, fit_kw = {}, {}
        else:
            X, y, q = tr["X"], tr["click"], tr["session"]
            extra = {} if kind is None else dict(position_debiasing=kind)
            if kind == "unbiased_lambdamart":
                extra["position_bias_norm"] = BIAS_NORM
            if kind == "ipw":
                extra["propensity"] = propensity
            fit_kw = {} if kind is None else dict(position=tr["position"])
        model = LambdaMARTRanker(n_estimators=trees, learning_rate=learning_rate,
                                 max_leaf_nodes=s["leaves"], min_samples_leaf=s["min_leaf"],
                                 max_bins=s["bins"], early_stopping=False, n_jobs=1,
                                 random_state=seed, **extra).fit(X, y, qid=q, **fit_kw)
        biases = None
        if kind == "unbiased_lambdamart":
            biases = (model.position_bias_[:SHOWN], model.position_bias_unclicked_[:SHOWN])
        return library, model, biases
    if library == "xgboost":
        import json

        import xgboost
        model = xgboost.XGBRanker(
            objective="rank:ndcg", lambdarank_pair_method="topk", lambdarank_num_pair_per_sample=SHOWN,
            lambdarank_unbiased=kind == "unbiased", lambdarank_bias_norm=BIAS_NORM,
            n_estimators=trees, learning_rate=s["learning_rate"], tree_method="hist",
            grow_policy="lossguide", max_leaves=s["leaves"], max_depth=0, max_bin=s["bins"] + 1,
            n_jobs=1, random_state=seed)
        # Rows sorted by session, then displayed rank: XGBoost takes a row's
        # index within its query as the position (lambdarank_obj.cc, idx_high).
        model.fit(tr["X"], tr["click"], qid=tr["session"])
        biases = None
        if kind == "unbiased":
            objective = json.loads(model.get_booster().save_config())["learner"]["objective"]
            biases = (np.array(objective["ti+"], dtype=float)[:SHOWN],
                      np.array(objective["tj-"], dtype=float)[:SHOWN])
        return library, model, biases
    import lightgbm
    group = np.bincount(tr["session"])
    data = lightgbm.Dataset(tr["X"], tr["click"], group=group,
                            position=tr["position"] if kind == "position" else None)
    params = dict(objective="lambdarank", learning_rate=s["learning_rate"], num_leaves=s["leaves"],
                  min_child_samples=s["min_leaf"], max_bin=s["bins"], num_threads=1, seed=seed,
                  deterministic=True, verbose=-1)
    booster = lightgbm.train(params, data, num_boost_round=trees)
    return library, _LightGBMFit(booster), None


def run_world(name, parts, production, config, seed, log):
    """Every model on one world and seed: per-query test NDCG@10 (all trees,
    early-stopped), trees kept, biases, the implied curves and log statistics."""
    click, quality, n_sessions = parse_world(name)
    spec = CLICK_MODELS[click]
    scores, prod_ndcg = production[quality]
    noise = resolve_quality(config, quality)["noise"]
    world_seed = [seed, list(CLICK_MODELS).index(click), list(QUALITIES).index(quality), n_sessions]
    s_train, s_val = (int(np.random.SeedSequence(world_seed + [i]).generate_state(1)[0]) for i in (1, 2))
    tr = click_log(parts["train"], scores["train"], spec, noise, n_sessions, s_train)
    va = click_log(parts["validation"], scores["validation"], spec, noise, n_sessions, s_val)
    t_plus, t_minus = implied_curves(tr["full"], parts["train"][1], click)
    rows = np.unique(tr["row"])
    Xtr, ytr, qtr = parts["train"]
    truth = (Xtr[rows], ytr[rows], qtr[rows])
    test = parts["test"]
    out = dict(production=prod_ndcg, stats=tr["stats"], implied=(t_plus, t_minus), models={})
    for model_name in MODELS:
        start = time.perf_counter()
        try:
            library, model, biases = fit_model(model_name, tr, truth, t_plus, config["trees"], seed)
            val = (parts["validation"] if model_name == CEILING
                   else (va["X"], va["click"], va["session"]))
            val_curve, test_rows = _curves(library, model, val, test, config["trees"])
            kept = stopping_iteration(val_curve, config["patience"])
            out["models"][model_name] = dict(all=test_rows[-1], stop=test_rows[kept - 1], trees=kept,
                                             biases=biases)
            log(f"  {name} seed {seed} {model_name}: NDCG@10 {np.nanmean(test_rows[-1]):.4f} (all), "
                f"{np.nanmean(test_rows[kept - 1]):.4f} ({kept} trees) "
                f"({time.perf_counter() - start:.1f} s)")
        except Exception as exc:  # one library failing must not end the run
            out["models"][model_name] = f"{type(exc).__name__}: {exc}"
            log(f"  {name} {model_name} FAILED: {out['models'][model_name]}\n{traceback.format_exc()}")
    return out


# A worker process's copy of the data and production scores, set once by
# _start_worker so the tasks do not pickle them again.
_WORKER = {}


def _start_worker(parts, production, config, start):
    _WORKER.update(parts=parts, production=production, config=config,
                   log=minutes_logger(start))


def _run_world_in_worker(world, seed):
    w = _WORKER
    return run_world(world, w["parts"], w["production"], w["config"], seed, w["log"])


def run_worlds(worlds, seeds, parts, production, config, start, jobs):
    """``run_world`` for every world and seed, on ``jobs`` processes (each
    fit single-threaded, so results do not depend on ``jobs``); returns
    world -> list of per-seed results, in seed order."""
    tasks = [(world, seed) for world in worlds for seed in range(seeds)]
    if jobs == 1:
        log = minutes_logger(start)
        done = [run_world(w, parts, production, config, s, log) for w, s in tasks]
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # spawn: the parent has run numba's threads (production rankers),
        # which a forked child must not inherit.
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"),
                                 initializer=_start_worker,
                                 initargs=(parts, production, config, start)) as pool:
            done = list(pool.map(_run_world_in_worker, *zip(*tasks)))
    out = {world: [] for world in worlds}
    for (world, _), result in zip(tasks, done):
        out[world].append(result)
    return out


def resolve_quality(config, quality):
    return {**QUALITIES[quality], **config.get("quality_overrides", {}).get(quality, {})}


def average_seeds(runs):
    """One world's runs over seeds -> one result: per-query NDCG averaged over
    seeds, trees and biases averaged; a model failing in any seed fails."""
    first = runs[0]
    out = dict(production=first["production"], stats=first["stats"], implied=first["implied"],
               models={}, n_seeds=len(runs))
    for name in MODELS:
        results = [r["models"][name] for r in runs]
        bad = [r for r in results if isinstance(r, str)]
        if bad:
            out["models"][name] = bad[0]
            continue
        biases = None
        if results[0]["biases"] is not None:
            biases = tuple(np.mean([r["biases"][i] for r in results], axis=0) for i in range(2))
        out["models"][name] = dict(
            all=np.mean([r["all"] for r in results], axis=0),
            stop=np.mean([r["stop"] for r in results], axis=0),
            trees=float(np.mean([r["trees"] for r in results])), biases=biases)
    return out


def _versions():
    import importlib
    out = []
    for module in ("sklearn_ltr", "numpy", "scipy", "numba", "lightgbm", "xgboost"):
        try:
            out.append(f"{module} {importlib.import_module(module).__version__}")
        except (ImportError, AttributeError):
            out.append(f"{module} not installed")
    return ", ".join(out) + f"; Python {platform.python_version()}"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="tiny worlds and few trees, a smoke run of about a minute")
    parser.add_argument("--worlds", default=None,
                        help="comma-separated world names or patterns, e.g. 'pbm*-weak-s10,dbn-*' "
                             "(names: CLICK-QUALITY-sSESSIONS)")
    parser.add_argument("--seeds", type=int, default=None,
                        help="click draws and fits per world (default 3, quick 1)")
    parser.add_argument("--trees", type=int, default=None, help="trees per model")
    parser.add_argument("--jobs", type=int, default=1,
                        help="processes running worlds and seeds side by side (default 1); every "
                             "fit uses one thread, so the results do not depend on it")
    parser.add_argument("--out", default=None,
                        help="report path (default benchmarks/results/clicks.md; quick: a temp file); "
                             "the plot is written beside it")
    args = parser.parse_args(argv)
    config = dict(QUICK if args.quick else FULL)
    if args.trees:
        config["trees"] = args.trees
    seeds = args.seeds or (1 if args.quick else 3)
    known = world_names(config)
    if args.worlds:
        patterns = [p.strip() for p in args.worlds.split(",") if p.strip()]
        worlds = [w for w in known if any(fnmatch.fnmatch(w, p) for p in patterns)]
        if not worlds:
            raise SystemExit(f"--worlds {args.worlds!r} matches none of: {', '.join(known)}")
    else:
        worlds = list(config.get("worlds", known))
    here = os.path.dirname(os.path.abspath(__file__))
    out = args.out or (os.path.join(tempfile.gettempdir(), "bench_clicks_quick", "clicks.md") if args.quick
                       else os.path.join(here, "results", "clicks.md"))
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    load_start, start = os.getloadavg(), time.perf_counter()
    log = minutes_logger(start)
    version = code_version()

    parts = make_data(config)
    production = {}
    for quality in sorted({parse_world(w)[1] for w in worlds}, key=list(QUALITIES).index):
        production[quality] = production_scores(parts, resolve_quality(config, quality), seed=0)
        log(f"production ranker {quality}: test NDCG@10 {np.nanmean(production[quality][1]):.4f}")
    runs = run_worlds(worlds, seeds, parts, production, config, start, args.jobs)
    results = {world: average_seeds(runs[world]) for world in worlds}
    png = os.path.splitext(out)[0] + "_propensities.png"
    plot_propensities(results, png)
    meta = dict(argv=["python", "benchmarks/bench_clicks.py", *argv], version=version,
                versions=_versions(), load_start=load_start, load_end=os.getloadavg(),
                minutes=(time.perf_counter() - start) / 60, config=config, seeds=seeds,
                quick=args.quick, qualities={q: resolve_quality(config, q) for q in production},
                png=os.path.basename(png), n_test=len(np.unique(parts["test"][2])))
    text = write_report(out, results, meta)
    print(text[text.find("## Verdicts"):text.find("## Settings")] if "## Verdicts" in text else text)
    log(f"wrote {out} and {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
