"""Format 1 of model files: one fitted ranker as ``model.json`` and ``.npy`` arrays.

:mod:`sklearn_ltr.persistence` describes the format and writes and reads the
zip archive; this module turns a ranker into its JSON document and arrays and
back, checking everything it reads.
"""

import io
import math

import numpy as np
from sklearn.utils.validation import check_is_fitted

from . import __version__
from ._gbdt.binning import BinMapper, _search_tables
from ._gbdt.booster import Booster
from ._gbdt.common import MAX_BINS, NODE_DTYPE
from ._registry import model_classes
from ._scoring import scoring_metric

__all__ = [
    "FORMAT_NAME",
    "JSON_MEMBER",
    "ModelFileError",
    "build_ranker",
    "check_node_dtype",
    "get_field",
    "json_param",
    "ranker_content",
    "read_arrays",
]

FORMAT_NAME = "sklearn-ltr-model"
JSON_MEMBER = "model.json"
_RANKER_VERSION = 1


class ModelFileError(Exception):
    """A problem with a model file's content; load_model adds the file's name."""


# Node fields of format 1 and their on-disk dtypes. Written explicitly (not
# taken from NODE_DTYPE) so that a change of NODE_DTYPE cannot silently change
# the format: check_node_dtype fails first.
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


def check_node_dtype():
    if set(NODE_DTYPE.names) != set(_NODE_FIELDS):
        raise RuntimeError(
            "NODE_DTYPE has fields the model file format does not know about "
            f"({sorted(set(NODE_DTYPE.names) ^ set(_NODE_FIELDS))}); bump FORMAT_VERSION "
            "in sklearn_ltr/persistence.py and describe the new fields."
        )


# -- JSON helpers -------------------------------------------------------------


def json_param(name, value, owner=""):
    """A get_params() value as JSON, or a ValueError naming the parameter."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)) and math.isfinite(value):
        return float(value)
    if isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.ndim == 1):
        return [json_param(name, v, owner) for v in value]
    if name == "scoring" and not owner:
        raise ValueError(
            f"Cannot save parameter scoring={value!r}: model files hold a scoring given by "
            "its name ('ndcg@10', 'map@5', 'mrr', 'err@10', ...) or None, not a scorer "
            "object. Before saving, set it to the name of the same metric if it has one "
            "(ranker.set_params(scoring='ndcg@5') for ndcg_scorer(5)), or to None."
        )
    if isinstance(value, (set, frozenset)):
        # Written sorted (ints before strings), so that a file does not
        # depend on the order of a set.
        ordered = sorted(value, key=lambda v: (isinstance(v, str), v))
        return [json_param(name, v, owner) for v in ordered]
    if isinstance(value, dict) and all(
        isinstance(k, (str, int, np.integer)) and not isinstance(k, (bool, np.bool_))
        for k in value
    ):
        # As pairs: JSON object keys are strings, and feature 0 (an index)
        # must not come back as the feature named "0".
        return {"items": [[json_param(name, k, owner), json_param(name, v, owner)]
                          for k, v in value.items()]}
    raise ValueError(
        f"Cannot save {owner}parameter {name}={value!r}: model files hold only parameters "
        "that are None, bool, int, finite float, str, lists (or tuples, sets, 1-d arrays) "
        "of them, or dicts from str or int to them. Set it to such a value (e.g. "
        "random_state to an int; the fitted model keeps its own seeds) before saving."
    )


def _param_from_json(name, value):
    """A parameter as :func:`json_param` wrote it: a dict comes back from its
    ``{"items": [[key, value], ...]}`` form."""
    if isinstance(value, list):
        return [_param_from_json(name, v) for v in value]
    if not isinstance(value, dict):
        return value
    items = value.get("items")
    if set(value) != {"items"} or not isinstance(items, list) or not all(
        isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], (str, int))
        and not isinstance(pair[0], bool) for pair in items
    ):
        raise ModelFileError(
            f"params[{name!r}] must be {{\"items\": [[key, value], ...]}} with str or int "
            f"keys, got {value!r}"
        )
    return {key: _param_from_json(name, v) for key, v in items}


def _float_to_json(x):
    x = float(x)
    return x if math.isfinite(x) else repr(x)  # "nan", "inf", "-inf"


def _float_from_json(x, what):
    if isinstance(x, bool) or not isinstance(x, (int, float, str)):
        raise ModelFileError(f"{what} must be a number, got {x!r}")
    if isinstance(x, str):
        if x not in ("nan", "inf", "-inf"):
            raise ModelFileError(f"{what} must be a number, got {x!r}")
    return float(x)


# -- saving -------------------------------------------------------------------


def _npy_bytes(array, dtype):
    buf = io.BytesIO()
    np.lib.format.write_array(
        buf, np.ascontiguousarray(array, dtype=np.dtype(dtype)), allow_pickle=False
    )
    return buf.getvalue()


def ranker_content(estimator, classes):
    """model.json (as a dict) and the .npy members (name -> bytes) of a fitted ranker.

    ``classes`` are the loadable classes; ``estimator`` must be an instance
    of exactly one of them.
    """
    name = type(estimator).__name__
    if classes.get(name) is not type(estimator):
        raise ValueError(
            f"save_model saves {', '.join(sorted(classes))}, or a Pipeline ending in one; "
            f"got {type(estimator).__name__}."
        )
    check_is_fitted(estimator, "_booster")
    params = {k: json_param(k, v) for k, v in estimator.get_params(deep=False).items()}
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
        "format_version": _RANKER_VERSION,
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
    return document, blobs


# -- loading ------------------------------------------------------------------


def get_field(mapping, key, kind, what):
    """``mapping[key]`` if it is of ``kind``, else a ModelFileError naming ``what``."""
    if not isinstance(mapping, dict) or key not in mapping:
        raise ModelFileError(f"{what} has no {key!r} entry")
    value = mapping[key]
    ok = {
        "int": isinstance(value, int) and not isinstance(value, bool),
        "bool": isinstance(value, bool),
        "str": isinstance(value, str),
        "dict": isinstance(value, dict),
        "any": True,
    }[kind]
    if not ok:
        raise ModelFileError(f"{what}[{key!r}] must be of type {kind}, got {value!r}")
    return value


def read_arrays(zf, manifest):
    """The ``.npy`` members of the open zip ``zf``, checked against the manifest."""
    if not isinstance(manifest, dict) or set(manifest) != set(_ARRAY_DTYPES):
        got = sorted(manifest) if isinstance(manifest, dict) else manifest
        raise ModelFileError(f"the array manifest lists {got}, expected {sorted(_ARRAY_DTYPES)}")
    arrays = {}
    for key, dtype in _ARRAY_DTYPES.items():
        spec = manifest[key]
        if not isinstance(spec, dict) or spec.get("dtype") != dtype:
            raise ModelFileError(f"array {key!r} is declared as {spec!r}, expected dtype {dtype}")
        try:
            raw = zf.read(key + ".npy")
        except KeyError:
            raise ModelFileError(f"member {key}.npy is missing") from None
        try:
            array = np.lib.format.read_array(io.BytesIO(raw), allow_pickle=False)
        except (ValueError, EOFError, OSError, SyntaxError) as exc:
            raise ModelFileError(f"member {key}.npy is not a plain .npy array ({exc})") from None
        if array.dtype != np.dtype(dtype) or array.ndim != 1:
            raise ModelFileError(
                f"member {key}.npy has dtype {array.dtype.str} and shape {array.shape}, "
                f"expected a 1-d array of {dtype}"
            )
        if list(array.shape) != spec.get("shape"):
            raise ModelFileError(
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
        raise ModelFileError("the node_*.npy arrays have different lengths")
    starts = a["tree_starts"]
    if starts.shape[0] != n_trees:
        raise ModelFileError(f"tree_starts has {starts.shape[0]} entries for {n_trees} trees")
    if n_trees == 0:
        if n_nodes:
            raise ModelFileError("there are nodes but no trees")
        return
    stops = np.append(starts[1:], n_nodes)
    if starts[0] != 0 or np.any(stops <= starts):
        raise ModelFileError("tree_starts must start at 0 and increase, with each tree non-empty")
    tree_of_node = np.repeat(np.arange(n_trees), stops - starts)
    local = np.arange(n_nodes) - starts[tree_of_node]
    size = (stops - starts)[tree_of_node]
    is_leaf = a["node_is_leaf"]
    if np.any(is_leaf > 1) or np.any(a["node_missing_go_to_left"] > 1):
        raise ModelFileError("node_is_leaf and node_missing_go_to_left must be 0 or 1")
    split = is_leaf == 0
    feature = a["node_feature_idx"][split]
    if np.any((feature < 0) | (feature >= n_features)):
        raise ModelFileError(f"a split uses a feature outside [0, {n_features})")
    for child in ("node_left", "node_right"):
        c = a[child][split]
        if np.any((c <= local[split]) | (c >= size[split])):
            raise ModelFileError(f"{child}.npy points outside its tree or backwards")
    if np.any(np.isnan(a["node_num_threshold"][split])):
        raise ModelFileError("a split has a NaN threshold")


def _rebuild_bin_mapper(a, info, n_features):
    max_bins = get_field(info, "max_bins", "int", "bin_mapper")
    missing_bin = get_field(info, "missing_values_bin_idx", "int", "bin_mapper")
    if not 2 <= max_bins <= MAX_BINS or missing_bin != max_bins:
        raise ModelFileError(f"bin_mapper has max_bins={max_bins}, missing bin {missing_bin}")
    if get_field(info, "n_features", "int", "bin_mapper") != n_features:
        raise ModelFileError("bin_mapper.n_features differs from n_features_in_")
    n_thr = a["bin_n_thresholds"]
    thresholds = a["bin_thresholds"]
    if n_thr.shape[0] != n_features or a["bin_has_missing"].shape[0] != n_features:
        raise ModelFileError("bin_n_thresholds / bin_has_missing need one entry per feature")
    if np.any((n_thr < 0) | (n_thr > max_bins - 1)) or n_thr.sum() != thresholds.shape[0]:
        raise ModelFileError("bin_n_thresholds does not match bin_thresholds")
    per_feature = np.split(thresholds, np.cumsum(n_thr)[:-1]) if n_features else []
    if any(np.any(~(np.diff(t) > 0)) or np.any(np.isnan(t)) for t in per_feature):
        raise ModelFileError("the bin thresholds of a feature are not increasing")
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


def build_ranker(document, a):
    """The ranker of a checked model.json and the arrays of :func:`read_arrays`."""
    name = get_field(document, "estimator", "str", "model.json")
    classes = model_classes()
    if name not in classes:
        raise ModelFileError(
            f"estimator {name!r} is not one of the loadable classes {sorted(classes)}"
        )
    params = get_field(document, "params", "dict", "model.json")
    params = {key: _param_from_json(key, value) for key, value in params.items()}
    try:
        estimator = classes[name](**params)
        estimator._validate_params()
    except (TypeError, ValueError) as exc:
        raise ModelFileError(f"its parameters do not fit {name}: {exc}") from None

    fitted = get_field(document, "fitted", "dict", "model.json")
    booster_info = get_field(document, "booster", "dict", "model.json")
    n_features = get_field(fitted, "n_features_in_", "int", "fitted")
    n_trees = get_field(booster_info, "n_trees", "int", "booster")
    if n_features < 1 or get_field(booster_info, "n_features", "int", "booster") != n_features:
        raise ModelFileError("booster.n_features and n_features_in_ must be equal and positive")
    if get_field(fitted, "n_iter_", "int", "fitted") != n_trees:
        raise ModelFileError(f"n_iter_ differs from the number of trees ({n_trees})")
    _check_trees(a, n_trees, n_features)
    mapper = _rebuild_bin_mapper(a, get_field(document, "bin_mapper", "dict", "model.json"), n_features)

    objective_name = get_field(booster_info, "objective_name", "str", "booster")
    missing_bin = get_field(booster_info, "missing_values_bin_idx", "int", "booster")
    if missing_bin != mapper.missing_values_bin_idx_:
        raise ModelFileError("the booster and the bin mapper disagree on the missing-value bin")
    booster = Booster(
        objective_name=objective_name,
        baseline=_float_from_json(get_field(booster_info, "baseline", "any", "booster"), "baseline"),
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

    names = get_field(fitted, "feature_names_in_", "any", "fitted")
    if names is not None:
        if not (isinstance(names, list) and len(names) == n_features
                and all(isinstance(n, str) for n in names)):
            raise ModelFileError("feature_names_in_ must be null or one string per feature")
        estimator.feature_names_in_ = np.asarray(names, dtype=object)
    estimator.n_features_in_ = n_features
    warm = get_field(document, "warm_start", "dict", "model.json")
    estimator._random_seed = get_field(warm, "random_seed", "int", "warm_start")
    platt_seed = get_field(warm, "platt_seed", "any", "warm_start")
    if platt_seed is not None:
        estimator._platt_seed = get_field(warm, "platt_seed", "int", "warm_start")
    # Absent from files of earlier releases: assume the held-out queries were
    # trained on, so a warm start with early stopping warns.
    if warm.get("validation_queries_unseen") is not None:
        estimator._validation_queries_unseen = get_field(
            warm, "validation_queries_unseen", "bool", "warm_start"
        )
    estimator.do_early_stopping_ = get_field(fitted, "do_early_stopping_", "bool", "fitted")
    if fitted.get("n_training_queries") is not None:  # absent from older files
        estimator._n_training_queries = get_field(fitted, "n_training_queries", "int", "fitted")
    estimator._bin_mapper = mapper
    estimator._booster = booster
    estimator.n_iter_ = n_trees
    estimator.train_score_ = booster.train_scores
    estimator.validation_score_ = booster.validation_scores
    if booster.train_scores.size:
        # Saved parameters are those the scores were recorded with, unless
        # set_params changed them between fit and save_model.
        booster.train_metric = scoring_metric(estimator.scoring, estimator.validation_ndcg_k).name
    estimator.objective_ = get_field(fitted, "objective_", "str", "fitted")
    if estimator.objective_ != objective_name:
        raise ModelFileError("objective_ and booster.objective_name differ")
    has_platt = [k in fitted for k in ("platt_coef_", "platt_intercept_")]
    if any(has_platt):
        if name != "CalibratedRanker" or not all(has_platt):
            raise ModelFileError("platt_coef_ and platt_intercept_ belong together, to CalibratedRanker")
        estimator.platt_coef_ = _float_from_json(fitted["platt_coef_"], "platt_coef_")
        estimator.platt_intercept_ = _float_from_json(fitted["platt_intercept_"], "platt_intercept_")
    elif name == "CalibratedRanker" and estimator.calibration == "platt":
        raise ModelFileError("a CalibratedRanker with calibration='platt' needs platt_coef_")
    return estimator


