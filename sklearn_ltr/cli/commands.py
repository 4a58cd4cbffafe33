"""The ``fit``, ``predict`` and ``evaluate`` commands of ``python -m sklearn_ltr``.

Each takes the parsed arguments of :func:`sklearn_ltr.cli.main`; what they read
comes from ``inputs.py``.
"""

import contextlib
import io
import os
import sys
import time
import warnings

import numpy as np

from .._rankers.early_stopping_metric import scoring_metric
from ..metrics import (
    err_score_per_query,
    map_score_per_query,
    mrr_score_per_query,
    ndcg_score,
    ndcg_score_per_query,
)
from ..persistence import save_model
from .inputs import (
    _data_lines,
    _docids,
    _has_qid,
    _load_eval_data,
    _load_file,
    _load_fit_data,
    _make_estimator,
    _model_summary,
    _SavedModel,
    _UserError,
)

__all__ = ["evaluate", "fit", "predict"]


@contextlib.contextmanager
def _output(path):
    """A text file to write, or stdout for ``-``."""
    if path == "-":
        yield sys.stdout
        sys.stdout.flush()
    else:
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            yield fh


# -- fit ---------------------------------------------------------------------------


def fit(args):
    """Train a ranker and save it; print a summary."""
    estimator = _make_estimator(args.ranker, args.param)
    directory = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(directory):  # found out before training, not after
        raise _UserError(f"-o {args.output}: directory {directory} does not exist.")
    start = time.perf_counter()
    train, valid, lines = _load_fit_data(args)
    read_seconds = time.perf_counter() - start
    X, y, qid = train
    # A fold's vali part is there whether or not the ranker stops early;
    # fit refuses a validation set it would not use.
    uses_validation = (estimator.early_stopping is not False
                       or estimator._validation_set_used_otherwise())
    kwargs = {}
    if valid is not None and uses_validation:
        kwargs = dict(X_val=valid[0], y_val=valid[1], qid_val=valid[2])
    if args.position_file is not None:
        kwargs["position"] = _read_positions(args.position_file, X.shape[0], estimator)
    start = time.perf_counter()
    estimator.fit(X, y, qid=qid, **kwargs)
    fit_seconds = time.perf_counter() - start
    save_model(estimator, args.output)

    k = estimator.validation_ndcg_k
    for line in lines:
        print(line)
    trees = f"{estimator.n_iter_} {estimator.grow_policy_} trees"
    if estimator.do_early_stopping_:
        grown = len(estimator.validation_score_) - 1
        source = "the validation set" if valid is not None else "held-out training queries"
        watched = scoring_metric(estimator.scoring, k).name
        trees += (
            f" (early stopping on {watched} of {source}: kept the best {estimator.n_iter_} "
            f"of {grown} grown)"
        )
    print(
        f"{type(estimator).__name__}: {trees}; fit in {fit_seconds:.2f} s "
        f"(data read in {read_seconds:.2f} s)."
    )
    if valid is not None:
        X_val, y_val, qid_val = valid
        value = ndcg_score(y_val, estimator.predict(X_val), qid=qid_val, k=k)
        print(
            f"validation NDCG@{k}: {value:.4f} (gain 2**y - 1, tied scores averaged, "
            "queries without relevant documents count 1)."
        )
    print(f"model written to {args.output}")
    return estimator


def _read_positions(path, n_rows, estimator):
    """The displayed ranks of --position-file, one per training row."""
    if getattr(estimator, "position_debiasing", None) is None:
        raise _UserError(
            f"--position-file {path} is read only with --param position_debiasing="
            "unbiased_lambdamart, ipw or additive (--ranker lambdamart); without it the "
            "positions would be ignored."
        )
    try:
        position = np.loadtxt(path, dtype=np.int64, ndmin=1)
    except (OSError, ValueError) as exc:
        raise _UserError(
            f"--position-file {path}: cannot read one integer per line ({exc})."
        ) from None
    if position.ndim != 1 or position.shape[0] != n_rows:
        raise _UserError(
            f"--position-file {path} has {position.size} value(s); TRAIN has {n_rows} rows: "
            "give one displayed rank per row, in row order."
        )
    if n_rows and position.min() < 1:
        raise _UserError(
            f"--position-file {path} holds {position.min()}: positions are 1-based (1 = the "
            "top of the list). If the file counts from 0 (LightGBM accepts any integer ids), "
            "add 1 to every line."
        )
    return position


# -- predict -------------------------------------------------------------------------


def _ranking_order(scores, qid):
    """Row indices grouped by query (in order of first appearance), best score first.

    Ties keep row order, as :meth:`sklearn_ltr.LambdaMARTRanker.rank` does.
    """
    _, first, query_index = np.unique(qid, return_index=True, return_inverse=True)
    query_position = np.argsort(np.argsort(first, kind="stable"), kind="stable")[query_index]
    rows = np.arange(scores.shape[0])
    return np.lexsort((rows, -scores, query_position))


def predict(args):
    """Write scores, or per-query rankings, of a saved model on a data file."""
    model = _SavedModel(args.model)
    query_file = args.query_file
    if query_file is None and not args.rankings and not _has_qid(args.data):
        # Scores need no queries: read a file without qid: as one query.
        n_rows = sum(1 for _ in _data_lines(args.data))
        query_file = io.StringIO(f"{n_rows}\n")
    X, _, qid = _load_file(
        args.data, n_features=model.n_features_in_, query_file=query_file,
        zero_based=args.zero_based,
    )
    scores = model.predict(X, qid)
    with _output(args.output) as out:
        if not args.rankings:
            # repr is the shortest text that reads back as the same float.
            out.write("".join(f"{s!r}\n" for s in scores.tolist()))
            return scores
        docids = _docids(args.data)
        header = ["qid", "rank", "row"] + (["docid"] if docids else []) + ["score"]
        out.write("\t".join(header) + "\n")
        previous, rank = None, 0
        for row in _ranking_order(scores, qid).tolist():
            q = int(qid[row])
            rank = 1 if q != previous else rank + 1
            previous = q
            fields = [str(q), str(rank), str(row)] + ([docids[row]] if docids else [])
            out.write("\t".join(fields + [repr(float(scores[row]))]) + "\n")
    return scores


# -- evaluate --------------------------------------------------------------------------


def _metric_table(y, scores, qid, args, max_grade):
    """{name: per-query values} for every metric, queries in sorted qid order."""
    # Without --no-relevant, the library's defaults: NDCG 1, the others 0.
    nr = (1.0, 0.0) if args.no_relevant is None else (args.no_relevant,) * 2
    common = dict(qid=qid, ties=args.ties)
    binary = dict(threshold=args.threshold, no_relevant=nr[1], **common)
    table = {
        f"NDCG@{k}": ndcg_score_per_query(y, scores, k=k, no_relevant=nr[0], **common)[1]
        for k in args.k
    }
    table["MRR"] = mrr_score_per_query(y, scores, **binary)[1]
    table["MAP"] = map_score_per_query(y, scores, **binary)[1]
    for k in args.k:
        table[f"ERR@{k}"] = err_score_per_query(
            y, scores, k=k, max_grade=max_grade, no_relevant=nr[1], **common
        )[1]
    return table


def _mean(values):
    kept = values[~np.isnan(values)]
    return float(np.mean(kept)) if kept.size else float("nan")


def _paired_ttest(a, b):
    """(t, p) of scipy's two-sided paired t-test of b against a, over queries scored by both."""
    from scipy.stats import ttest_rel

    both = ~(np.isnan(a) | np.isnan(b))
    with warnings.catch_warnings():
        # Identical values give nan (scipy warns about the zero variance).
        warnings.simplefilter("ignore", RuntimeWarning)
        result = ttest_rel(b[both], a[both])
    return float(result.statistic), float(result.pvalue)


def _conventions(args, max_grade, max_grade_source):
    if args.no_relevant is None:
        no_rel = "NDCG counts 1 (LightGBM's and XGBoost's convention), MRR, MAP and ERR count 0"
    elif args.no_relevant == "skip":
        no_rel = "left out of every mean (blank in --per-query)"
    else:
        no_rel = f"every metric counts {args.no_relevant:g}"
    ties = (
        "each metric is its expected value over the random orders of tied documents"
        if args.ties == "average"
        else "tied documents keep their file order"
    )
    return "\n".join([
        "Conventions: NDCG@k = DCG@k / ideal DCG@k with gain 2**label - 1 and discount "
        "1 / log2(rank + 1);",
        f"ERR@k stops at a document with probability (2**label - 1) / 2**{max_grade:g} "
        f"(max grade {max_grade:g}: {max_grade_source});",
        f"MRR and MAP: relevant means label >= {args.threshold:g}, no cutoff.",
        f"Tied scores: {ties}. Queries without relevant documents: {no_rel}.",
        "Means are unweighted over queries.",
    ])


def _check_eval_options(args):
    if any(k < 1 for k in args.k):
        raise _UserError(f"--k values must be positive integers, got {args.k}.")
    args.k = list(dict.fromkeys(args.k))
    if args.no_relevant is not None and args.no_relevant != "skip":
        try:
            args.no_relevant = float(args.no_relevant)
        except ValueError:
            raise _UserError(
                f"--no-relevant must be a number or 'skip', got {args.no_relevant!r}."
            ) from None


def evaluate(args):
    """Print (and optionally write per query) the metrics of one or two models."""
    _check_eval_options(args)
    models = [_SavedModel(args.model)]
    paths = [args.model]
    if args.compare is not None:
        models.append(_SavedModel(args.compare))
        paths.append(args.compare)
    data = {}  # one read per distinct feature count
    for model in models:
        if model.n_features_in_ not in data:
            data[model.n_features_in_] = _load_eval_data(args, model.n_features_in_)
    _, y, qid, test_name = data[models[0].n_features_in_]
    if args.max_grade is None:
        max_grade, source = float(np.max(y)), "the largest label in the test set"
    else:
        max_grade, source = args.max_grade, "--max-grade"
    tables = []
    for model in models:
        X = data[model.n_features_in_][0]
        tables.append(_metric_table(y, model.predict(X, qid), qid, args, max_grade))

    unique_qids, n_docs = np.unique(qid, return_counts=True)
    n_relevant = np.bincount(np.searchsorted(unique_qids, qid), weights=y >= args.threshold)
    n_without = int(np.sum(np.bincount(np.searchsorted(unique_qids, qid), weights=y > 0) == 0))
    labels = ["A", "B"][: len(models)]
    for label, path, model in zip(labels, paths, models):
        print(f"model {label}: {path} ({_model_summary(model)})")
    print(
        f"test set: {test_name}: {qid.shape[0]} documents, {unique_qids.shape[0]} queries "
        f"({n_without} without a label > 0)"
    )
    print()
    names = list(tables[0])
    if len(models) == 1:
        print(f"{'metric':<10}{'mean':>10}")
        for name in names:
            print(f"{name:<10}{_mean(tables[0][name]):>10.4f}")
    else:
        print(f"{'metric':<10}{'A':>10}{'B':>10}{'B - A':>10}{'t':>10}{'p':>12}")
        for name in names:
            a, b = tables[0][name], tables[1][name]
            t, p = _paired_ttest(a, b)
            print(
                f"{name:<10}{_mean(a):>10.4f}{_mean(b):>10.4f}{_mean(b) - _mean(a):>+10.4f}"
                f"{t:>10.3f}{p:>12.4g}"
            )
    print()
    print(_conventions(args, max_grade, source))
    if len(models) == 2:
        print(
            "t and p: two-sided paired t-test of B against A over the queries "
            "(scipy.stats.ttest_rel), one test per metric, no correction for multiple "
            "comparisons."
        )
    if args.per_query is not None:
        columns = ["qid", "n_docs", "n_relevant"]
        values = []
        for label, table in zip(labels, tables):
            prefix = "" if len(models) == 1 else f"{label}:"
            columns += [prefix + name for name in names]
            values += [table[name] for name in names]
        with _output(args.per_query) as out:
            out.write("\t".join(columns) + "\n")
            for i, q in enumerate(unique_qids.tolist()):
                fields = [str(q), str(int(n_docs[i])), str(int(n_relevant[i]))]
                fields += ["" if np.isnan(v[i]) else repr(float(v[i])) for v in values]
                out.write("\t".join(fields) + "\n")
    return tables
