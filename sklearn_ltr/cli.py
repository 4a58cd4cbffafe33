"""Command line of sklearn-ltr: ``python -m sklearn_ltr {fit,predict,evaluate,demo}``.

- ``fit`` trains a ranker on a svmlight / LETOR file or a LETOR fold
  directory and writes it with :func:`sklearn_ltr.save_model` (no pickle);
- ``predict`` writes one score per data line, or per-query rankings as TSV;
- ``evaluate`` prints NDCG@k, MRR, MAP and ERR@k of a model on a test set,
  per query on request, and with ``--compare`` a paired t-test against a
  second model;
- ``demo`` trains rankers on the bundled LightGBM lambdarank example data
  with early stopping on held-out training queries and prints a table of test
  NDCG@k and fit times, beside LightGBM when it is installed.

A problem with the user's input (a malformed data line, an unknown or invalid
``--param``, a bad model file) is printed as one line on stderr, naming the
file and line where there is one, and the exit code is 2.
"""

import argparse
import contextlib
import difflib
import io
import os
import re
import sys
import time
import warnings

import numpy as np

from . import __version__
from ._demo import _CUTOFFS, demo
from .datasets import load_letor_folds, load_svmlight_ranking_files
from .datasets._svmlight import _open_binary
from .metrics import (
    err_score_per_query,
    map_score_per_query,
    mrr_score_per_query,
    ndcg_score,
    ndcg_score_per_query,
)
from ._scoring import scoring_metric
from .export._command import add_export_command
from .persistence import load_model, save_model

__all__ = ["main", "parse_param"]

_PROG = "python -m sklearn_ltr"
_RANKERS = {
    "lambdamart": "LambdaMARTRanker",
    "xendcg": "XENDCGRanker",
    "listnet": "ListNetRanker",
    "calibrated": "CalibratedRanker",
}
# The command line fixes the seed so that running the same command twice
# gives the same model; the Python default (None) draws a fresh one.
_CLI_DEFAULTS = {"random_state": 0}
_INTEGER = re.compile(r"[+-]?[0-9]+\Z")
_DOCID = re.compile(rb"docid\s*[=:]\s*(\S+)")


class _UserError(ValueError):
    """A problem with the command line itself (not with a file)."""


# -- parameters -----------------------------------------------------------------


def parse_param(text):
    """Split a ``--param KEY=VALUE`` argument and convert its value.

    The value becomes, in this order: a bool (``true``/``false``, any case),
    None (``none``/``null``), an int (optional sign and digits), a float
    (anything ``float()`` reads, e.g. ``0.05``, ``1e-3``, ``inf``), else the
    string itself. Nothing is evaluated. Underscores keep a value a string:
    Python's ``int("1_0")`` would read it as 10.

    Parameters
    ----------
    text : str
        ``KEY=VALUE``.

    Returns
    -------
    key : str
    value : bool, None, int, float or str

    Raises
    ------
    ValueError
        If ``text`` has no ``=`` or an empty key.
    """
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise _UserError(f"--param expects KEY=VALUE, got {text!r}.")
    value = raw.strip()
    lowered = value.lower()
    if lowered in ("true", "false"):
        return key, lowered == "true"
    if lowered in ("none", "null"):
        return key, None
    if "_" in value:
        return key, value
    if _INTEGER.match(value):
        return key, int(value)
    try:
        return key, float(value)
    except ValueError:
        return key, value


def _make_estimator(ranker, param_args):
    """The ranker named on the command line, with its --param values checked."""
    from sklearn.base import BaseEstimator

    import sklearn_ltr

    from ._lightgbm_names import foreign_name_hint, foreign_value_hint

    cls = getattr(sklearn_ltr, _RANKERS[ranker])
    estimator = cls()
    valid = sorted(estimator.get_params(deep=False))
    params = dict(_CLI_DEFAULTS)
    given = set()
    for text in param_args or ():
        key, value = parse_param(text)
        if key not in valid:
            habit = foreign_name_hint(key, value, estimator=cls.__name__, valid=valid,
                                      context="cli", cli_rankers=_RANKERS)
            if habit is not None:
                raise _UserError(f"--param {key}: {cls.__name__} has no parameter {key!r}; {habit}")
            close = difflib.get_close_matches(key, valid, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise _UserError(
                f"--param {key}: {cls.__name__} has no parameter {key!r}{hint}; valid "
                f"parameters: {', '.join(valid)}."
            )
        if key in given:
            raise _UserError(f"--param {key} is given twice.")
        given.add(key)
        params[key] = value
    estimator.set_params(**params)
    try:
        # The checks fit would make, done before any data is read; scikit-learn's
        # own, so that a LightGBM value's hint is spelled as --param below.
        BaseEstimator._validate_params(estimator)
    except ValueError as exc:
        habit = foreign_value_hint(estimator.get_params(deep=False), context="cli")
        raise _UserError(f"--param: {exc}" + (f" {habit}" if habit else "")) from None
    return estimator


# -- reading data ------------------------------------------------------------------


def _data_lines(path):
    """Every data line of a file: those not blank once the comment is cut."""
    with _open_binary(os.fspath(path)) as fh:
        for line in fh:
            if line.split(b"#", 1)[0].strip():
                yield line


def _has_qid(path):
    """Whether the first data line of a file has a ``qid:`` entry."""
    for line in _data_lines(path):
        tokens = line.split(b"#", 1)[0].split(None, 2)
        return len(tokens) > 1 and tokens[1].startswith(b"qid")
    return False


def _docids(path):
    """The ``docid`` of every data line (LETOR comments ``# docid = X``), or None."""
    ids = []
    for line in _data_lines(path):
        match = _DOCID.search(line.split(b"#", 1)[1]) if b"#" in line else None
        ids.append(match.group(1).decode("utf-8", "replace") if match else "")
    return ids if any(ids) else None


def _describe(X, qid):
    n_queries = np.unique(qid).shape[0]
    return f"{X.shape[0]} documents, {n_queries} queries, {X.shape[1]} features"


def _read(files, *, query_files, options, n_features, zero_based):
    """load_svmlight_ranking_files, with the command line's advice for a missing qid.

    ``options`` names the query-file option of each file.
    """
    try:
        loaded = load_svmlight_ranking_files(
            files, n_features=n_features, zero_based=zero_based, query_files=query_files
        )
    except ValueError as exc:
        # The reader's advice names the Python argument; give the option instead.
        for f, option in zip(files, options):
            if str(exc).startswith(f"{f} has no 'qid:' entries"):
                raise _UserError(
                    f"{f} has no 'qid:' entries, so its queries are unknown; pass its "
                    f"LightGBM-style query sizes (one per line) with {option} FILE, or add "
                    "'qid:<int>' after the label on every line."
                ) from None
        raise
    for f, X in zip(files, loaded[0::3]):
        if X.shape[0] == 0:
            raise ValueError(f"{f} has no data lines.")
    return [tuple(loaded[i : i + 3]) for i in range(0, len(loaded), 3)]


def _load_file(path, *, n_features, query_file, zero_based, option="--query-file"):
    return _read([path], query_files=[query_file], options=[option], n_features=n_features,
                 zero_based=zero_based)[0]


def _load_fit_data(args):
    """(train, valid or None, description lines) for ``fit``."""
    if args.valid is None and args.valid_query_file is not None:
        raise _UserError("--valid-query-file needs --valid.")
    if os.path.isdir(args.train):
        if args.query_file is not None:
            raise _UserError("--query-file applies to a TRAIN file, not a LETOR directory.")
        train, vali, _ = load_letor_folds(args.train, args.fold, n_features=args.n_features)
        where = f"{args.train} (fold {args.fold}"
        lines = [f"training set: {where}, train part): {_describe(train[0], train[2])}"]
        if args.valid is None:
            lines.append(f"validation set: {where}, vali part): {_describe(vali[0], vali[2])}")
            return train, vali, lines
        valid = _load_file(
            args.valid,
            n_features=train[0].shape[1],
            query_file=args.valid_query_file,
            zero_based=args.zero_based,
            option="--valid-query-file",
        )
    else:
        if args.fold != 1:
            raise _UserError(f"--fold applies to a LETOR directory; {args.train} is a file.")
        files = [args.train] + ([] if args.valid is None else [args.valid])
        # Read together so that train and validation get the same columns.
        train, *rest = _read(
            files,
            query_files=[args.query_file, args.valid_query_file][: len(files)],
            options=["--query-file", "--valid-query-file"][: len(files)],
            n_features=args.n_features,
            zero_based=args.zero_based,
        )
        valid = rest[0] if rest else None
        lines = [f"training set: {args.train}: {_describe(train[0], train[2])}"]
        if valid is None:
            return train, None, lines
    lines.append(f"validation set: {args.valid}: {_describe(valid[0], valid[2])}")
    return train, valid, lines


def _load_eval_data(args, n_features):
    """(X, y, qid, name) of the evaluation set, with the model's feature count."""
    if os.path.isdir(args.test):
        if args.query_file is not None:
            raise _UserError("--query-file applies to a TEST file, not a LETOR directory.")
        X, y, qid = load_letor_folds(args.test, args.fold, n_features=n_features)[2]
        return X, y, qid, f"{args.test} (fold {args.fold}, test part)"
    if args.fold != 1:
        raise _UserError(f"--fold applies to a LETOR directory; {args.test} is a file.")
    X, y, qid = _load_file(
        args.test, n_features=n_features, query_file=args.query_file, zero_based=args.zero_based
    )
    return X, y, qid, args.test


@contextlib.contextmanager
def _output(path):
    """A text file to write, or stdout for ``-``."""
    if path == "-":
        yield sys.stdout
        sys.stdout.flush()
    else:
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            yield fh


def _model_summary(model):
    ranker = model.ranker
    text = f"{type(ranker).__name__}, {ranker.n_iter_} trees, {model.n_features_in_} features"
    if model.ranker is model.estimator:
        return text
    return f"Pipeline({' -> '.join(name for name, _ in model.estimator.steps)}): {text}"


class _SavedModel:
    """A model file opened for predict and evaluate: a ranker or a Pipeline ending in one.

    ``n_features_in_`` is the number of columns to read from data files. A
    pipeline is given the rows as a dense array, or as
    ``sklearn_ltr.datasets.to_frame(X, qid)`` if it was fitted on that frame
    (the layout without metadata routing, behind ``exclude_qid``).
    """

    def __init__(self, path):
        try:
            self.estimator = load_model(path)
        except ImportError as exc:  # a pipeline file without skops
            raise ValueError(f"Cannot load model file {path}: {exc}") from None
        steps = getattr(self.estimator, "steps", [(None, self.estimator)])
        self.ranker = steps[-1][1]
        # What the first step saw at fit (Pipeline.n_features_in_ fails on a
        # leading "passthrough").
        first = next(s for _, s in steps if s is not None and not isinstance(s, str))
        names = [str(n) for n in getattr(first, "feature_names_in_", [])]
        self.n_features_in_ = first.n_features_in_
        self.as_frame = names == [f"f{j}" for j in range(len(names) - 1)] + ["qid"]
        if self.as_frame:
            self.n_features_in_ -= 1

    def predict(self, X, qid):
        """Scores of the rows ``X`` (as read from a data file) with their ``qid``."""
        if self.as_frame:
            from .datasets import to_frame

            X = to_frame(X, qid)
        elif self.ranker is not self.estimator and hasattr(X, "toarray"):
            # The reader's sparse rows would stop transformers fitted on
            # arrays (StandardScaler cannot center them); dense rows hold
            # the same values.
            X = X.toarray()
        return self.estimator.predict(X)


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
    start = time.perf_counter()
    estimator.fit(X, y, qid=qid, **kwargs)
    fit_seconds = time.perf_counter() - start
    save_model(estimator, args.output)

    k = estimator.validation_ndcg_k
    for line in lines:
        print(line)
    trees = f"{estimator.n_iter_} trees"
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


# -- command line -------------------------------------------------------------------

_DATA_HELP = (
    "svmlight / LETOR text, lines 'label qid:Q idx:val ... [# comment]'; .gz and .bz2 "
    "are decompressed"
)
_FIT_EPILOG = f"""\
TRAIN may also be a LETOR directory, with FoldK/train.txt, vali.txt, test.txt or with
the five parts S1.txt .. S5.txt (plain, .gz or .bz2; fold K then trains on S(K), S(K+1),
S(K+2), validates on S(K+3), tests on S(K+4), modulo 5). The model trains on the train
part of --fold and, unless --valid FILE is given, uses the vali part as validation set;
the test part is only read for the feature count (evaluate MODEL DIR --fold K scores it).

Early stopping: with a validation set (--valid or the fold's vali part), the default
early_stopping='auto' stops when the validation score (--param scoring=map@5, say; by
default NDCG@validation_ndcg_k) has not improved for n_iter_no_change trees and keeps
the trees up to the best score; --param early_stopping=false trains all n_estimators
trees. Without a validation set the library's rule applies: above 10,000 rows,
validation_fraction of the training queries is held out.

Every parameter of the chosen ranker can be set with --param KEY=VALUE (repeatable):
true/false, none, integers and floats are converted, anything else stays a string;
nothing is evaluated. Unlike in Python, random_state defaults to 0 so that a command
gives the same model every time. --ranker calibrated needs labels in [0, 1]: add
--param binarize=true for graded labels.

example:
  {_PROG} fit MQ2008/ --fold 1 --param n_estimators=500 --param learning_rate=0.05 -o m.model
"""
_PREDICT_EPILOG = """\
Without --rankings, OUT has one score per data line of DATA, in file order, written
with Python's repr (they read back as exactly the same floats); DATA then needs no
qid: entries. With --rankings, OUT is TSV with a header: qid, rank (1 = best), row
(0-based index of the document among DATA's data lines), docid (when DATA's comments
hold '# docid = ...', as LETOR 4.0 files do) and score, queries in order of first
appearance and documents best first; tied scores keep file order.
DATA is read with the model's feature count, so it may use fewer feature indices than
the training data (absent features are 0); a larger index is an error (fit
--n-features N leaves room for features the training data lacks).
"""
_EVALUATE_EPILOG = """\
Metrics, per query, then averaged over queries without weights:
  NDCG@k  DCG@k / ideal DCG@k, gain 2**label - 1, discount 1 / log2(rank + 1);
  MRR     1 / rank of the first document with label >= --threshold (no cutoff);
  MAP     average precision, relevant = label >= --threshold (no cutoff);
  ERR@k   expected reciprocal rank (Chapelle et al. 2009), stop probability
          (2**label - 1) / 2**max_grade, max_grade = the largest label in TEST
          unless --max-grade is given.
Tied scores (--ties average, the default): each metric is its expected value over
random orders of the tied documents, so a constant model cannot profit from the file
order; --ties stable keeps file order (LightGBM's and XGBoost's ndcg).
Queries without relevant documents: by default NDCG counts 1 (LightGBM's and XGBoost's
convention) and MRR, MAP and ERR count 0; --no-relevant 0, 1 or skip sets all metrics.
With --compare, each metric gets a two-sided paired t-test of MODEL2 (B) against MODEL
(A) over the queries (scipy.stats.ttest_rel), with no correction for testing several
metrics. --per-query writes TSV: qid, n_docs, n_relevant, then one column per metric
(prefixed A: and B: with --compare), values written with Python's repr.
TEST may be a LETOR directory: the test part of --fold is used. TEST is read with each
model's feature count, as in predict.
"""


def _add_input_options(parser, what, fold=False):
    if fold:
        parser.add_argument("--fold", type=int, default=1, choices=range(1, 6), metavar="K",
                            help="fold of a LETOR directory, 1..5 (default 1)")
    parser.add_argument(
        "--query-file",
        metavar="FILE",
        help=f"LightGBM-style query sizes for {what} (one per line, in row order), for "
        "files without qid: entries",
    )
    parser.add_argument(
        "--zero-based",
        choices=("auto", "true", "false"),
        default="auto",
        help="whether feature indices start at 0; 'auto' (default) assumes 1 unless "
        "index 0 occurs in the file. Pass the same value to fit, predict and evaluate "
        "when a file may lack index 0",
    )


def _invoked_as():
    """How the user started us: the console script names itself."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return "sklearn-ltr" if name == "sklearn-ltr" else _PROG


def _build_parser(prog=_PROG):
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Learning to rank with sklearn-ltr from the command line.",
        epilog=f"Run '{prog} COMMAND --help' for the options of a command.",
    )
    parser.add_argument("--version", action="version", version=f"sklearn-ltr {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    raw = argparse.RawDescriptionHelpFormatter

    p = commands.add_parser(
        "fit", help="train a ranker and save it to a model file", epilog=_FIT_EPILOG,
        formatter_class=raw, description="Train a ranker and save it (no pickle).",
    )
    p.add_argument("train", metavar="TRAIN", help=f"training data: {_DATA_HELP}; or a LETOR "
                   "directory (see below)")
    p.add_argument("-o", "--output", metavar="MODEL", required=True,
                   help="model file to write (sklearn_ltr.save_model format)")
    p.add_argument("--ranker", choices=sorted(_RANKERS), default="lambdamart",
                   help="LambdaMARTRanker (default), XENDCGRanker, ListNetRanker or "
                   "CalibratedRanker")
    p.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="a parameter of the ranker, e.g. n_estimators=500; repeatable")
    p.add_argument("--valid", metavar="FILE", help="validation data for early stopping "
                   "(replaces the vali part of a LETOR directory)")
    p.add_argument("--valid-query-file", metavar="FILE",
                   help="query sizes for --valid, like --query-file")
    p.add_argument("--n-features", type=int, metavar="N",
                   help="number of features (default: the largest index in the files read)")
    _add_input_options(p, "TRAIN", fold=True)
    p.set_defaults(func=fit)

    p = commands.add_parser(
        "predict", help="score a data file with a saved model", epilog=_PREDICT_EPILOG,
        formatter_class=raw, description="Write the scores of a saved model on a data file.",
    )
    p.add_argument("model", metavar="MODEL", help="model file written by fit")
    p.add_argument("data", metavar="DATA", help=_DATA_HELP)
    p.add_argument("-o", "--output", metavar="OUT", required=True,
                   help="output file ('-' for stdout)")
    p.add_argument("--rankings", action="store_true",
                   help="write per-query rankings as TSV instead of bare scores")
    _add_input_options(p, "DATA")
    p.set_defaults(func=predict)

    p = commands.add_parser(
        "evaluate", help="NDCG@k, MRR, MAP and ERR@k of a saved model, optionally "
        "against a second one", epilog=_EVALUATE_EPILOG, formatter_class=raw,
        description="Evaluate a saved model (or compare two) on a test set.",
    )
    p.add_argument("model", metavar="MODEL", help="model file written by fit (A)")
    p.add_argument("test", metavar="TEST", help=f"{_DATA_HELP}; or a LETOR directory")
    p.add_argument("--k", type=int, nargs="+", default=list(_CUTOFFS), metavar="K",
                   help="cutoffs of NDCG@k and ERR@k (default: 1 3 5 10)")
    p.add_argument("--compare", metavar="MODEL2", help="a second model (B): both means "
                   "and a paired t-test per metric")
    p.add_argument("--per-query", metavar="FILE", help="write per-query values as TSV "
                   "('-' for stdout)")
    p.add_argument("--ties", choices=("average", "stable"), default="average",
                   help="handling of tied scores (default: average)")
    p.add_argument("--no-relevant", metavar="VALUE", help="value of queries without "
                   "relevant documents for every metric: a number, or 'skip'")
    p.add_argument("--threshold", type=float, default=1.0,
                   help="smallest relevant label for MRR and MAP (default: 1)")
    p.add_argument("--max-grade", type=float, help="largest possible label, for ERR")
    _add_input_options(p, "TEST", fold=True)
    p.set_defaults(func=evaluate)

    add_export_command(commands, raw, parse_param)

    p = commands.add_parser("demo", help="train on the bundled data and print a results table")
    p.add_argument("--n-estimators", type=int, default=500, help="maximum number of trees")
    p.add_argument("--patience", type=int, default=30, help="early stopping patience")
    p.add_argument("--seed", type=int, default=0, help="random seed")
    p.set_defaults(func=demo)
    return parser


def main(argv=None):
    """Entry point of ``python -m sklearn_ltr``.

    Parameters
    ----------
    argv : list of str, default=None
        The arguments; None reads ``sys.argv[1:]``.

    Returns
    -------
    status : int
        0 on success, 2 on a usage error or invalid input (the message, one
        line, goes to stderr).
    """
    prog = _invoked_as()
    args = _build_parser(prog).parse_args(argv)
    if hasattr(args, "zero_based"):
        args.zero_based = {"auto": "auto", "true": True, "false": False}[args.zero_based]
    try:
        args.func(args)
    except BrokenPipeError:
        # The reader of stdout went away (e.g. '| head'): stop quietly, and
        # keep Python from complaining again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (ValueError, OSError) as exc:
        # Input problems (files, parameters) are the user's to fix: one line,
        # no traceback. Anything else is a bug and keeps its traceback.
        message = " ".join(str(exc).split())
        print(f"{prog} {args.command}: error: {message}", file=sys.stderr)
        return 2
    return 0
