"""Saving and loading fitted rankers without pickle.

:func:`save_model` writes a fitted :class:`~sklearn_ltr.LambdaMARTRanker`,
:class:`~sklearn_ltr.XENDCGRanker`, :class:`~sklearn_ltr.ListNetRanker` or
:class:`~sklearn_ltr.CalibratedRanker` to one file; :func:`load_model` reads
it back. Loading never executes code from the file (unlike pickle and
joblib): the file holds JSON and plain numeric arrays, and everything is
checked before a ranker is built from it. The loaded ranker predicts
bit-identically (``predict``, ``staged_predict``, ``rank``, ``score``,
``feature_importances_``, ``predict_proba``), and ``fit`` with
``warm_start=True`` continues it exactly as it would have continued the saved
ranker: the file also holds the bin thresholds and the random seeds drawn at
the first fit.

File format (``format_version`` 1)
----------------------------------
A zip archive (the layout of ``numpy.savez_compressed``, so
``numpy.load(path)`` opens it) with these members:

``model.json``
    UTF-8 JSON object:

    - ``"format"``: ``"sklearn-ltr-model"``; ``"format_version"``: ``1``;
      ``"library_version"``: the ``sklearn_ltr.__version__`` that wrote it.
    - ``"estimator"``: class name, one of ``LambdaMARTRanker``,
      ``XENDCGRanker``, ``ListNetRanker``, ``CalibratedRanker``.
    - ``"params"``: ``get_params(deep=False)``; values are null, booleans,
      numbers, strings or lists of them.
    - ``"fitted"``: ``n_features_in_``, ``feature_names_in_`` (list of
      strings, or null), ``n_iter_`` (number of trees), ``objective_``,
      ``do_early_stopping_``, ``n_training_queries`` (optional; the
      number of queries in the training data, so that ``score`` without
      ``qid`` can refuse), and for a Platt-calibrated ``CalibratedRanker``
      ``platt_coef_`` and ``platt_intercept_``.
    - ``"booster"``: ``baseline`` (raw score of the model with no trees),
      ``objective_name``, ``n_features``, ``missing_values_bin_idx``,
      ``n_trees``.
    - ``"bin_mapper"``: ``max_bins``, ``missing_values_bin_idx``,
      ``n_features``.
    - ``"warm_start"``: ``random_seed`` (and ``platt_seed`` or null), the
      seeds a continued fit reuses, and ``validation_queries_unseen``
      (optional; true if every fit held out the same ``validation_fraction``
      queries, so that a continued fit stopping early on them need not warn).
    - ``"arrays"``: for every ``.npy`` member, its ``dtype`` (NumPy
      ``descr``, e.g. ``"<f8"``) and ``shape``; the loader checks them.

    Floats are written with 17 significant digits (Python's ``repr``), so
    they read back bit-identically; a non-finite fitted float is the string
    ``"nan"``, ``"inf"`` or ``"-inf"``.

Trees, as plain little-endian ``.npy`` arrays (NumPy format 1.0: magic
``\\x93NUMPY``, two version bytes, a 2-byte header length, a header that is a
Python dict literal with ``descr``, ``fortran_order`` and ``shape``, then the
raw data). All trees are concatenated into ``N`` nodes:

- ``tree_starts.npy`` (int64, ``n_trees``): index of each tree's root.
- ``node_value.npy`` (float64): leaf value (learning rate applied).
- ``node_feature_idx.npy`` (int32): split feature (0-based column), -1 at
  leaves.
- ``node_num_threshold.npy`` (float64): a row goes left iff
  ``x <= threshold``.
- ``node_missing_go_to_left.npy`` (uint8): where NaN goes (1 = left).
- ``node_left.npy``, ``node_right.npy`` (int32): children, as indices
  *relative to the tree's root* (-1 at leaves). A child's index is always
  larger than its parent's.
- ``node_is_leaf.npy`` (uint8).
- ``node_count.npy`` (uint32), ``node_gain.npy`` (float64),
  ``node_depth.npy`` (int32), ``node_bin_threshold.npy`` (uint8): training
  statistics and the split in bin space; not needed to predict.

Binning and training curves, needed to continue training and for
``train_score_``/``validation_score_``: ``bin_thresholds.npy`` (float64, the
thresholds of every feature, concatenated), ``bin_n_thresholds.npy`` (int64,
``n_features``), ``bin_has_missing.npy`` (uint8, ``n_features``),
``train_score.npy`` and ``validation_score.npy`` (float64).

To predict from another language: for row ``x`` and each tree ``t`` in
order, start at ``k = tree_starts[t]``; while ``node_is_leaf[k] == 0``, take
``v = x[node_feature_idx[k]]`` and go to ``tree_starts[t] + node_left[k]``
if ``v`` is NaN and ``node_missing_go_to_left[k] == 1`` or if ``v`` is not
NaN and ``v <= node_num_threshold[k]``, else to
``tree_starts[t] + node_right[k]``; add ``node_value[k]``. The score is
``baseline + (sum of the leaf values, added in tree order)``. For
``predict_proba`` of a ``CalibratedRanker`` the probability of relevance is
``1 / (1 + exp(-z))`` with ``z = score``, or
``z = platt_coef_ * score + platt_intercept_`` after Platt scaling.

Versions: a reader accepts every ``format_version`` up to its own and
refuses newer files with a ValueError; a new field that older readers can
ignore does not bump the version, a change of meaning does.
"""

import io
import json
import math
import os
import zipfile
import zlib

import numpy as np
from sklearn.utils.validation import check_is_fitted

from . import __version__
from ._gbdt.binning import BinMapper, _search_tables
from ._gbdt.booster import Booster
from ._gbdt.common import MAX_BINS, NODE_DTYPE
from ._ranker import LambdaMARTRanker, ListNetRanker, XENDCGRanker
from .calibration import CalibratedRanker

__all__ = ["FORMAT_VERSION", "load_model", "save_model"]

FORMAT_NAME = "sklearn-ltr-model"
FORMAT_VERSION = 1

# The only classes a file may name: loading never imports or calls anything else.
_CLASSES = {
    cls.__name__: cls
    for cls in (LambdaMARTRanker, XENDCGRanker, ListNetRanker, CalibratedRanker)
}

# Node fields of format 1 and their on-disk dtypes. Written explicitly (not
# taken from NODE_DTYPE) so that a change of NODE_DTYPE cannot silently change
# the format: _check_node_dtype fails first.
_NODE_FIELDS = {
    "value": "<f8",
    "count": "<u4",
    "feature_idx": "<i4",
    "num_threshold": "<f8",
    "bin_threshold": "|u1",
    "missing_go_to_left": "|u1",
    "left": "<i4",
    "right": "<i4",
    "gain": "<f8",
    "depth": "<i4",
    "is_leaf": "|u1",
}
_OTHER_ARRAYS = {
    "tree_starts": "<i8",
    "bin_thresholds": "<f8",
    "bin_n_thresholds": "<i8",
    "bin_has_missing": "|u1",
    "train_score": "<f8",
    "validation_score": "<f8",
}
_ARRAY_DTYPES = {**{"node_" + f: d for f, d in _NODE_FIELDS.items()}, **_OTHER_ARRAYS}
_JSON_MEMBER = "model.json"
# Fixed timestamp of zip members: saving the same model twice gives the same bytes.
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def _check_node_dtype():
    if set(NODE_DTYPE.names) != set(_NODE_FIELDS):
        raise RuntimeError(
            "NODE_DTYPE has fields the model file format does not know about "
            f"({sorted(set(NODE_DTYPE.names) ^ set(_NODE_FIELDS))}); bump FORMAT_VERSION "
            "in sklearn_ltr/persistence.py and describe the new fields."
        )


def _source_name(path):
    if isinstance(path, (str, os.PathLike)):
        return os.fspath(path)
    return getattr(path, "name", None) or repr(path)


# -- JSON helpers -------------------------------------------------------------


def _json_param(name, value):
    """A get_params() value as JSON, or a ValueError naming the parameter."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)) and math.isfinite(value):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_json_param(name, v) for v in value]
    raise ValueError(
        f"Cannot save parameter {name}={value!r}: model files hold only parameters "
        "that are None, bool, int, finite float, str or lists of them. Set it to such "
        "a value (e.g. random_state to an int; the fitted model keeps its own seeds) "
        "before saving."
    )


def _float_to_json(x):
    x = float(x)
    return x if math.isfinite(x) else repr(x)  # "nan", "inf", "-inf"


def _float_from_json(x, what):
    if isinstance(x, bool) or not isinstance(x, (int, float, str)):
        raise _FormatError(f"{what} must be a number, got {x!r}")
    if isinstance(x, str):
        if x not in ("nan", "inf", "-inf"):
            raise _FormatError(f"{what} must be a number, got {x!r}")
    return float(x)


# -- saving -----------------------------------------------------------------


def _npy_bytes(array, dtype):
    buf = io.BytesIO()
    np.lib.format.write_array(
        buf, np.ascontiguousarray(array, dtype=np.dtype(dtype)), allow_pickle=False
    )
    return buf.getvalue()


def save_model(estimator, path):
    """Write a fitted ranker to a file, without pickle.

    See the module docstring for the format; :func:`load_model` reads it.

    Parameters
    ----------
    estimator : LambdaMARTRanker, XENDCGRanker, ListNetRanker or CalibratedRanker
        A fitted ranker (not a subclass or a pipeline).
    path : str, path-like or binary file object
        Destination. A path is written to a temporary file next to it and
        then renamed, so a crash never leaves a half-written model behind.

    Raises
    ------
    ValueError
        If the estimator is not one of the rankers above or a parameter is
        not JSON-safe (for example ``random_state`` holding a RandomState).
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.

    Examples
    --------
    >>> import io
    >>> from sklearn_ltr import LambdaMARTRanker
    >>> from sklearn_ltr.datasets import make_ranking
    >>> from sklearn_ltr.persistence import load_model, save_model
    >>> X, y, qid = make_ranking(n_queries=20, docs_per_query=10, n_features=5, random_state=0)
    >>> ranker = LambdaMARTRanker(n_estimators=5, random_state=0).fit(X, y, qid=qid)
    >>> buf = io.BytesIO()
    >>> save_model(ranker, buf)
    >>> bool((load_model(io.BytesIO(buf.getvalue())).predict(X) == ranker.predict(X)).all())
    True
    """
    _check_node_dtype()
    name = type(estimator).__name__
    if _CLASSES.get(name) is not type(estimator):
        raise ValueError(
            f"save_model saves {', '.join(sorted(_CLASSES))}; got {type(estimator).__name__}."
        )
    check_is_fitted(estimator, "_booster")
    params = {k: _json_param(k, v) for k, v in estimator.get_params(deep=False).items()}
    booster = estimator._booster
    mapper = estimator._bin_mapper

    fitted = {
        "n_features_in_": int(estimator.n_features_in_),
        "feature_names_in_": (
            [str(f) for f in estimator.feature_names_in_]
            if hasattr(estimator, "feature_names_in_")
            else None
        ),
        "n_iter_": int(estimator.n_iter_),
        "objective_": str(estimator.objective_),
        "do_early_stopping_": bool(estimator.do_early_stopping_),
        "n_training_queries": int(getattr(estimator, "_n_training_queries", 1)),
    }
    for attr in ("platt_coef_", "platt_intercept_"):
        if hasattr(estimator, attr):
            fitted[attr] = _float_to_json(getattr(estimator, attr))

    ensemble = estimator._tree_ensemble()
    arrays = {"node_" + f: ensemble.nodes[f] for f in _NODE_FIELDS}
    arrays.update(
        tree_starts=ensemble.tree_starts,
        bin_thresholds=(
            np.concatenate(mapper.bin_thresholds_) if mapper.bin_thresholds_ else np.zeros(0)
        ),
        bin_n_thresholds=np.array([len(t) for t in mapper.bin_thresholds_], dtype=np.int64),
        bin_has_missing=np.asarray(mapper.has_missing_values_, dtype=np.uint8),
        train_score=np.asarray(estimator.train_score_, dtype=np.float64),
        validation_score=np.asarray(estimator.validation_score_, dtype=np.float64),
    )
    blobs = {k: _npy_bytes(v, _ARRAY_DTYPES[k]) for k, v in arrays.items()}

    document = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "library_version": __version__,
        "estimator": name,
        "params": params,
        "fitted": fitted,
        "booster": {
            "objective_name": str(ensemble.objective),
            "baseline": _float_to_json(ensemble.baseline),
            "n_features": int(ensemble.n_features),
            "missing_values_bin_idx": int(booster.missing_values_bin_idx),
            "n_trees": ensemble.n_trees,
        },
        "bin_mapper": {
            "max_bins": int(mapper.max_bins),
            "missing_values_bin_idx": int(mapper.missing_values_bin_idx_),
            "n_features": int(mapper.n_features_in_),
        },
        "warm_start": {
            "random_seed": int(estimator._random_seed),
            "platt_seed": (
                int(estimator._platt_seed) if hasattr(estimator, "_platt_seed") else None
            ),
            "validation_queries_unseen": bool(
                getattr(estimator, "_validation_queries_unseen", False)
            ),
        },
        "arrays": {
            k: {"dtype": _ARRAY_DTYPES[k], "shape": list(np.shape(v))} for k, v in arrays.items()
        },
    }
    text = json.dumps(document, indent=1, allow_nan=False, ensure_ascii=False)

    def write(target):
        with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for member, data in [(_JSON_MEMBER, text.encode("utf-8"))] + [
                (k + ".npy", b) for k, b in blobs.items()
            ]:
                info = zipfile.ZipInfo(member, date_time=_ZIP_DATE)
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, data)

    if isinstance(path, (str, os.PathLike)):
        final = os.fspath(path)
        partial = final + ".partial"
        try:
            write(partial)
            os.replace(partial, final)
        finally:
            if os.path.exists(partial):
                os.remove(partial)
    else:
        write(path)


# -- loading ------------------------------------------------------------------


class _FormatError(Exception):
    """A problem with the file's content; load_model adds the path."""


def _get(mapping, key, kind, what):
    if not isinstance(mapping, dict) or key not in mapping:
        raise _FormatError(f"{what} has no {key!r} entry")
    value = mapping[key]
    ok = {
        "int": isinstance(value, int) and not isinstance(value, bool),
        "bool": isinstance(value, bool),
        "str": isinstance(value, str),
        "dict": isinstance(value, dict),
        "any": True,
    }[kind]
    if not ok:
        raise _FormatError(f"{what}[{key!r}] must be of type {kind}, got {value!r}")
    return value


def _read_arrays(zf, manifest):
    if not isinstance(manifest, dict) or set(manifest) != set(_ARRAY_DTYPES):
        got = sorted(manifest) if isinstance(manifest, dict) else manifest
        raise _FormatError(f"the array manifest lists {got}, expected {sorted(_ARRAY_DTYPES)}")
    arrays = {}
    for key, dtype in _ARRAY_DTYPES.items():
        spec = manifest[key]
        if not isinstance(spec, dict) or spec.get("dtype") != dtype:
            raise _FormatError(f"array {key!r} is declared as {spec!r}, expected dtype {dtype}")
        try:
            raw = zf.read(key + ".npy")
        except KeyError:
            raise _FormatError(f"member {key}.npy is missing") from None
        try:
            array = np.lib.format.read_array(io.BytesIO(raw), allow_pickle=False)
        except (ValueError, EOFError, OSError, SyntaxError) as exc:
            raise _FormatError(f"member {key}.npy is not a plain .npy array ({exc})") from None
        if array.dtype != np.dtype(dtype) or array.ndim != 1:
            raise _FormatError(
                f"member {key}.npy has dtype {array.dtype.str} and shape {array.shape}, "
                f"expected a 1-d array of {dtype}"
            )
        if list(array.shape) != spec.get("shape"):
            raise _FormatError(
                f"member {key}.npy has shape {list(array.shape)} but model.json says "
                f"{spec.get('shape')}"
            )
        arrays[key] = array
    return arrays


def _check_trees(a, n_trees, n_features):
    """Check that every tree is well formed, so prediction cannot loop or read
    out of bounds: children lie inside their tree and after their parent."""
    n_nodes = a["node_value"].shape[0]
    if any(a["node_" + f].shape[0] != n_nodes for f in _NODE_FIELDS):
        raise _FormatError("the node_*.npy arrays have different lengths")
    starts = a["tree_starts"]
    if starts.shape[0] != n_trees:
        raise _FormatError(f"tree_starts has {starts.shape[0]} entries for {n_trees} trees")
    if n_trees == 0:
        if n_nodes:
            raise _FormatError("there are nodes but no trees")
        return
    stops = np.append(starts[1:], n_nodes)
    if starts[0] != 0 or np.any(stops <= starts):
        raise _FormatError("tree_starts must start at 0 and increase, with each tree non-empty")
    tree_of_node = np.repeat(np.arange(n_trees), stops - starts)
    local = np.arange(n_nodes) - starts[tree_of_node]
    size = (stops - starts)[tree_of_node]
    is_leaf = a["node_is_leaf"]
    if np.any(is_leaf > 1) or np.any(a["node_missing_go_to_left"] > 1):
        raise _FormatError("node_is_leaf and node_missing_go_to_left must be 0 or 1")
    split = is_leaf == 0
    feature = a["node_feature_idx"][split]
    if np.any((feature < 0) | (feature >= n_features)):
        raise _FormatError(f"a split uses a feature outside [0, {n_features})")
    for child in ("node_left", "node_right"):
        c = a[child][split]
        if np.any((c <= local[split]) | (c >= size[split])):
            raise _FormatError(f"{child}.npy points outside its tree or backwards")
    if np.any(np.isnan(a["node_num_threshold"][split])):
        raise _FormatError("a split has a NaN threshold")


def _rebuild_bin_mapper(a, info, n_features):
    max_bins = _get(info, "max_bins", "int", "bin_mapper")
    missing_bin = _get(info, "missing_values_bin_idx", "int", "bin_mapper")
    if not 2 <= max_bins <= MAX_BINS or missing_bin != max_bins:
        raise _FormatError(f"bin_mapper has max_bins={max_bins}, missing bin {missing_bin}")
    if _get(info, "n_features", "int", "bin_mapper") != n_features:
        raise _FormatError("bin_mapper.n_features differs from n_features_in_")
    n_thr = a["bin_n_thresholds"]
    thresholds = a["bin_thresholds"]
    if n_thr.shape[0] != n_features or a["bin_has_missing"].shape[0] != n_features:
        raise _FormatError("bin_n_thresholds / bin_has_missing need one entry per feature")
    if np.any((n_thr < 0) | (n_thr > max_bins - 1)) or n_thr.sum() != thresholds.shape[0]:
        raise _FormatError("bin_n_thresholds does not match bin_thresholds")
    per_feature = np.split(thresholds, np.cumsum(n_thr)[:-1]) if n_features else []
    if any(np.any(~(np.diff(t) > 0)) or np.any(np.isnan(t)) for t in per_feature):
        raise _FormatError("the bin thresholds of a feature are not increasing")
    mapper = BinMapper(max_bins=max_bins, subsample=None)
    padded = np.zeros((n_features, max_bins - 1))
    for f, t in enumerate(per_feature):
        padded[f, : t.shape[0]] = t
    mapper._tables = _search_tables(padded, n_thr)
    mapper.bin_thresholds_ = [t.copy() for t in per_feature]
    mapper.n_bins_non_missing_ = (n_thr + 1).astype(np.uint32)
    mapper.missing_values_bin_idx_ = missing_bin
    mapper.has_missing_values_ = a["bin_has_missing"].astype(bool)
    mapper.n_features_in_ = n_features
    return mapper


def _check_header(document):
    """Format name and version, checked before anything else is read."""
    if not isinstance(document, dict):
        raise _FormatError(f"{_JSON_MEMBER} is not a JSON object")
    if document.get("format") != FORMAT_NAME:
        raise _FormatError(f"it is not a sklearn-ltr model (format {document.get('format')!r})")
    version = _get(document, "format_version", "int", "model.json")
    if version > FORMAT_VERSION:
        raise _FormatError(
            f"it has format_version {version}, written by sklearn-ltr "
            f"{document.get('library_version')}; this version ({__version__}) reads format "
            f"versions up to {FORMAT_VERSION}. Upgrade sklearn-ltr"
        )
    if version < 1:
        raise _FormatError(f"format_version {version} is invalid")


def _build(document, a):
    name = _get(document, "estimator", "str", "model.json")
    if name not in _CLASSES:
        raise _FormatError(
            f"estimator {name!r} is not one of the loadable classes {sorted(_CLASSES)}"
        )
    params = _get(document, "params", "dict", "model.json")
    try:
        estimator = _CLASSES[name](**params)
        estimator._validate_params()
    except (TypeError, ValueError) as exc:
        raise _FormatError(f"its parameters do not fit {name}: {exc}") from None

    fitted = _get(document, "fitted", "dict", "model.json")
    booster_info = _get(document, "booster", "dict", "model.json")
    n_features = _get(fitted, "n_features_in_", "int", "fitted")
    n_trees = _get(booster_info, "n_trees", "int", "booster")
    if n_features < 1 or _get(booster_info, "n_features", "int", "booster") != n_features:
        raise _FormatError("booster.n_features and n_features_in_ must be equal and positive")
    if _get(fitted, "n_iter_", "int", "fitted") != n_trees:
        raise _FormatError(f"n_iter_ differs from the number of trees ({n_trees})")
    _check_trees(a, n_trees, n_features)
    mapper = _rebuild_bin_mapper(a, _get(document, "bin_mapper", "dict", "model.json"), n_features)

    objective_name = _get(booster_info, "objective_name", "str", "booster")
    missing_bin = _get(booster_info, "missing_values_bin_idx", "int", "booster")
    if missing_bin != mapper.missing_values_bin_idx_:
        raise _FormatError("the booster and the bin mapper disagree on the missing-value bin")
    booster = Booster(
        objective_name=objective_name,
        baseline=_float_from_json(_get(booster_info, "baseline", "any", "booster"), "baseline"),
        n_features=n_features,
        missing_values_bin_idx=missing_bin,
    )
    nodes = np.zeros(a["node_value"].shape[0], dtype=NODE_DTYPE)
    for f in _NODE_FIELDS:
        nodes[f] = a["node_" + f]
    stops = np.append(a["tree_starts"][1:], nodes.shape[0])
    booster.trees = [nodes[s:e].copy() for s, e in zip(a["tree_starts"], stops)]
    booster.train_scores = a["train_score"]
    booster.validation_scores = a["validation_score"]

    names = _get(fitted, "feature_names_in_", "any", "fitted")
    if names is not None:
        if not (isinstance(names, list) and len(names) == n_features
                and all(isinstance(n, str) for n in names)):
            raise _FormatError("feature_names_in_ must be null or one string per feature")
        estimator.feature_names_in_ = np.asarray(names, dtype=object)
    estimator.n_features_in_ = n_features
    warm = _get(document, "warm_start", "dict", "model.json")
    estimator._random_seed = _get(warm, "random_seed", "int", "warm_start")
    platt_seed = _get(warm, "platt_seed", "any", "warm_start")
    if platt_seed is not None:
        estimator._platt_seed = _get(warm, "platt_seed", "int", "warm_start")
    # Absent from files of earlier releases: assume the held-out queries were
    # trained on, so a warm start with early stopping warns.
    if warm.get("validation_queries_unseen") is not None:
        estimator._validation_queries_unseen = _get(
            warm, "validation_queries_unseen", "bool", "warm_start"
        )
    estimator.do_early_stopping_ = _get(fitted, "do_early_stopping_", "bool", "fitted")
    if fitted.get("n_training_queries") is not None:  # absent from older files
        estimator._n_training_queries = _get(fitted, "n_training_queries", "int", "fitted")
    estimator._bin_mapper = mapper
    estimator._booster = booster
    estimator.n_iter_ = n_trees
    estimator.train_score_ = booster.train_scores
    estimator.validation_score_ = booster.validation_scores
    estimator.objective_ = _get(fitted, "objective_", "str", "fitted")
    if estimator.objective_ != objective_name:
        raise _FormatError("objective_ and booster.objective_name differ")
    has_platt = [k in fitted for k in ("platt_coef_", "platt_intercept_")]
    if any(has_platt):
        if name != "CalibratedRanker" or not all(has_platt):
            raise _FormatError("platt_coef_ and platt_intercept_ belong together, to CalibratedRanker")
        estimator.platt_coef_ = _float_from_json(fitted["platt_coef_"], "platt_coef_")
        estimator.platt_intercept_ = _float_from_json(fitted["platt_intercept_"], "platt_intercept_")
    elif name == "CalibratedRanker" and estimator.calibration == "platt":
        raise _FormatError("a CalibratedRanker with calibration='platt' needs platt_coef_")
    return estimator


def load_model(path):
    """Read a ranker written by :func:`save_model`.

    Nothing in the file is executed: the class comes from a fixed list, and
    the JSON and arrays are checked (types, dtypes, shapes, tree structure)
    before the ranker is built.

    Parameters
    ----------
    path : str, path-like or binary file object
        A file written by :func:`save_model`.

    Returns
    -------
    estimator : LambdaMARTRanker, XENDCGRanker, ListNetRanker or CalibratedRanker
        The fitted ranker. With ``warm_start=True`` and a larger
        ``n_estimators``, ``fit`` continues it exactly as it would have
        continued the saved ranker.

    Raises
    ------
    ValueError
        If the file is corrupted or truncated, is not a model file, has a
        newer ``format_version``, names an unknown class, or its content is
        inconsistent. The message names the file and the problem.
    FileNotFoundError
        If the path does not exist.

    Examples
    --------
    >>> import io, os, tempfile
    >>> from sklearn_ltr import XENDCGRanker, load_model, save_model
    >>> from sklearn_ltr.datasets import make_ranking
    >>> X, y, qid = make_ranking(n_queries=20, docs_per_query=10, n_features=5, random_state=0)
    >>> ranker = XENDCGRanker(n_estimators=5, random_state=0).fit(X, y, qid=qid)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     save_model(ranker, os.path.join(tmp, "ranker.zip"))
    ...     loaded = load_model(os.path.join(tmp, "ranker.zip"))
    >>> loaded, bool((loaded.predict(X) == ranker.predict(X)).all())
    (XENDCGRanker(n_estimators=5, random_state=0), True)
    >>> load_model(io.BytesIO(b"not a model"))
    Traceback (most recent call last):
    ...
    ValueError: Cannot load model file ...: it is not a valid zip archive ...
    """
    name = _source_name(path)
    try:
        with zipfile.ZipFile(path) as zf:
            try:
                raw = zf.read(_JSON_MEMBER)
            except KeyError:
                raise _FormatError(f"it has no {_JSON_MEMBER}; it is not a sklearn-ltr model") from None
            try:
                document = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise _FormatError(f"{_JSON_MEMBER} is not valid UTF-8 JSON ({exc})") from None
            _check_header(document)
            arrays = _read_arrays(zf, document.get("arrays"))
            return _build(document, arrays)
    except _FormatError as exc:
        raise ValueError(f"Cannot load model file {name}: {exc}.") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
        raise ValueError(
            f"Cannot load model file {name}: it is not a valid zip archive (corrupted or "
            f"truncated?): {exc}"
        ) from None
