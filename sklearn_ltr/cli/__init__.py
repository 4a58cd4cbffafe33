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

This module builds the parser and runs a command: the commands themselves
are in ``commands.py`` (``export`` in :mod:`sklearn_ltr.export`, ``demo`` in
``demo.py``), what they read (``--param`` values, data and model files) in
``inputs.py``.
"""

import argparse
import os
import sys

from .._version import __version__
from ..export._command import add_export_command
from .commands import evaluate, fit, predict
from .demo import _CUTOFFS, demo
from .inputs import _RANKERS, parse_param

__all__ = ["main", "parse_param"]

_PROG = "python -m sklearn_ltr"


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
true/false, none, integers, floats and lists of numbers (6,7 or [6]) are converted,
anything else stays a string; nothing is evaluated. Categorical columns of svmlight
files hold integer codes: --param categorical_features=6,7 (or =6 for one) declares
them, by 0-based column number (in a file indexed from 1, feature index 7 is column
6). Unlike in Python, random_state defaults to 0 so that a command
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
                   help="LambdaMARTRanker (default), XENDCGRanker, ListNetRanker, "
                   "YetiRankRanker or CalibratedRanker")
    p.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="a parameter of the ranker, e.g. n_estimators=500; repeatable")
    p.add_argument("--valid", metavar="FILE", help="validation data for early stopping "
                   "(replaces the vali part of a LETOR directory)")
    p.add_argument("--valid-query-file", metavar="FILE",
                   help="query sizes for --valid, like --query-file")
    p.add_argument("--n-features", type=int, metavar="N",
                   help="number of features (default: the largest index in the files read)")
    p.add_argument("--position-file", metavar="FILE",
                   help="the displayed rank (1 = top) of each row of TRAIN, one integer per "
                   "line in row order, like LightGBM's .position file; read with --param "
                   "position_debiasing=unbiased_lambdamart, ipw or additive (lambdamart)")
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


# The command words of LightGBM's and XGBoost's command lines (task=...) and
# of RankLib (-train, -test) that users type here, with ours.
_OTHER_TOOLS_COMMANDS = {
    "train": "fit", "task=train": "fit", "-train": "fit", "refit": "fit",
    "task=refit": "fit", "task=predict": "predict", "task=prediction": "predict",
    "task=pred": "predict", "score": "predict", "rank": "predict", "test": "evaluate",
    "-test": "evaluate", "eval": "evaluate", "task=convert_model": "export",
    "task=dump": "export", "convert": "export", "dump": "export",
}


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
    words = sys.argv[1:] if argv is None else list(argv)
    if words and words[0] in _OTHER_TOOLS_COMMANDS:
        ours = _OTHER_TOOLS_COMMANDS[words[0]]
        print(f"{prog}: error: {words[0]!r} is not a command here; did you mean {ours!r}? "
              f"(Run '{prog} {ours} --help'.)", file=sys.stderr)
        return 2
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
