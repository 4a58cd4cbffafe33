"""What the commands of ``python -m sklearn_ltr`` read: ``--param`` values and
the ranker they configure (``parse_param``, ``_make_estimator``), svmlight /
LETOR data files and fold directories, and saved model files (``_SavedModel``).

A problem with the command line itself is raised as ``_UserError``, a
``ValueError`` that :func:`sklearn_ltr.cli.main` prints as one line.
"""

import difflib
import os
import re

import numpy as np

from ..datasets import load_letor_folds, load_svmlight_ranking_files
from ..datasets._svmlight import _open_binary
from ..persistence import load_model

_RANKERS = {
    "lambdamart": "LambdaMARTRanker",
    "xendcg": "XENDCGRanker",
    "listnet": "ListNetRanker",
    "yetirank": "YetiRankRanker",
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
    (anything ``float()`` reads, e.g. ``0.05``, ``1e-3``, ``inf``), a list
    of ints or of floats (numbers separated by commas, in optional square
    brackets: ``6,7``, ``[6]``, ``[0,1,3]``; for ``categorical_features``,
    ``monotonic_cst``, ``label_gain``), else the string itself. Nothing is
    evaluated. Underscores keep a value a string: Python's ``int("1_0")``
    would read it as 10.

    Parameters
    ----------
    text : str
        ``KEY=VALUE``.

    Returns
    -------
    key : str
    value : bool, None, int, float, list of int, list of float or str

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
    number = _number(value)
    if number is not None:
        return key, number
    if "," in value or (value.startswith("[") and value.endswith("]")):
        parts = [part.strip() for part in value.strip("[]").split(",")]
        numbers = [_number(part) for part in parts]
        if parts != [""] and all(n is not None for n in numbers):
            if all(isinstance(n, int) for n in numbers):
                return key, numbers
            return key, [float(n) for n in numbers]
    return key, value


def _number(text):
    """``text`` as an int or a float, or None if it is neither."""
    if _INTEGER.match(text):
        return int(text)
    try:
        return float(text)
    except ValueError:
        return None


def _make_estimator(ranker, param_args):
    """The ranker named on the command line, with its --param values checked."""
    from sklearn.base import BaseEstimator

    from .._rankers.foreign_names import foreign_name_hint, foreign_value_hint
    from .._rankers.registry import model_classes

    cls = model_classes()[_RANKERS[ranker]]
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
        if key == "categorical_features" and isinstance(value, int) and not isinstance(
                value, bool):
            value = [value]  # one column, as LightGBM's categorical_feature=6 reads
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
            from ..datasets import to_frame

            X = to_frame(X, qid)
        elif self.ranker is not self.estimator and hasattr(X, "toarray"):
            # The reader's sparse rows would stop transformers fitted on
            # arrays (StandardScaler cannot center them); dense rows hold
            # the same values.
            X = X.toarray()
        return self.estimator.predict(X)
