"""Writing one fitted ranker as a model file: ``model.json`` and ``.npy``
arrays in a zip archive (formats 1 and 3).

:mod:`sklearn_ltr.persistence` describes the format, adds pipelines and reads
files back (``persistence.ranker_file``). The writing side lives here, in the
estimator layer, because ``ranker.save_model`` is a method of every ranker:
the rankers write themselves without importing the layer above them. A ranker
with categorical features (or pandas category columns) is written as format
3, which adds the categorical node fields, the bin mapper's categorical mask
and the pandas categories; one with a wide categorical column (split on
through several features) as format 4, which adds the column of each such
feature; one fitted with ``target_statistics="ordered"`` as format 5, which
adds the per-category statistics; one fitted with
``target_statistics="combinations"`` as format 6, which adds the columns
combined and the quantile edges of the numeric ones; any other ranker as
format 1.
"""

import io
import json
import math
import os
import zipfile

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._gbdt.common import BITSET_WORDS, NODE_DTYPE
from .._version import __version__
from .registry import model_classes

__all__ = [
    "CATEGORICAL_VERSION",
    "COMBINATIONS_VERSION",
    "TARGET_STATISTICS_VERSION",
    "WIDE_CATEGORICAL_VERSION",
    "FORMAT_NAME",
    "JSON_MEMBER",
    "OBJECTIVE_ATTRIBUTES",
    "array_dtypes",
    "check_node_dtype",
    "json_param",
    "ranker_content",
    "save_ranker",
    "write_model_file",
]

FORMAT_NAME = "sklearn-ltr-model"
JSON_MEMBER = "model.json"
_RANKER_VERSION = 1
# The first version with categorical features.
CATEGORICAL_VERSION = 3
# The first version with wide categorical columns, split on through several
# features (bin_feature_columns).
WIDE_CATEGORICAL_VERSION = 4
# The first version with target statistics of categorical columns.
TARGET_STATISTICS_VERSION = 5
# The first version with target statistics of combinations of columns.
COMBINATIONS_VERSION = 6




# Node fields of format 1 and their on-disk dtypes. Written explicitly (not
# taken from NODE_DTYPE) so that a change of NODE_DTYPE cannot silently change
# the format: check_node_dtype fails first.
NODE_FIELDS = {
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
_ARRAY_DTYPES = {**{"node_" + f: d for f, d in NODE_FIELDS.items()}, **_OTHER_ARRAYS}
# What format 3 adds: the node fields of categorical splits and the bin
# mapper's categorical mask.
CATEGORICAL_NODE_FIELDS = {"is_categorical": "|u1", "left_categories": "<u4"}
_CATEGORICAL_ARRAYS = {
    **{"node_" + f: d for f, d in CATEGORICAL_NODE_FIELDS.items()},
    "bin_is_categorical": "|u1",
}
_WIDE_CATEGORICAL_ARRAYS = {"bin_feature_columns": "<i8"}
_TARGET_STATISTICS_ARRAYS = {
    "target_statistic_columns": "<i8",
    "target_statistic_n_categories": "<i8",
    "target_statistic_categories": "<f8",
    "target_statistic_values": "<f8",
}
_COMBINATIONS_ARRAYS = {
    "target_statistic_partners": "<i8",
    "target_statistic_n_edges": "<i8",
    "target_statistic_edges": "<f8",
}
# Arrays of more than one dimension: the shape after the first axis.
INNER_SHAPES = {"node_left_categories": (BITSET_WORDS,)}
# The estimator attributes an objective learns (lists of numbers in the
# file), by objective name; absent from the models of other objectives.
OBJECTIVE_ATTRIBUTES = {
    "lambdarank_unbiased": ("position_bias_", "position_bias_unclicked_"),
    "lambdarank_additive": ("position_offset_",),
}
# Fixed timestamp of zip members: saving the same model twice gives the same bytes.
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def array_dtypes(version):
    """The arrays (name -> dtype) of a file of ``format_version`` ``version``."""
    if version >= TARGET_STATISTICS_VERSION:
        return {**_ARRAY_DTYPES, **_CATEGORICAL_ARRAYS, **_WIDE_CATEGORICAL_ARRAYS,
                **_TARGET_STATISTICS_ARRAYS,
                **(_COMBINATIONS_ARRAYS if version >= COMBINATIONS_VERSION else {})}
    if version >= WIDE_CATEGORICAL_VERSION:
        return {**_ARRAY_DTYPES, **_CATEGORICAL_ARRAYS, **_WIDE_CATEGORICAL_ARRAYS}
    if version >= CATEGORICAL_VERSION:
        return {**_ARRAY_DTYPES, **_CATEGORICAL_ARRAYS}
    return _ARRAY_DTYPES


def check_node_dtype():
    known = set(NODE_FIELDS) | set(CATEGORICAL_NODE_FIELDS)
    if set(NODE_DTYPE.names) != known:
        raise RuntimeError(
            "NODE_DTYPE has fields the model file format does not know about "
            f"({sorted(set(NODE_DTYPE.names) ^ known)}); bump FORMAT_VERSION "
            "in sklearn_ltr/persistence/__init__.py and describe the new fields."
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




def _float_to_json(x):
    x = float(x)
    return x if math.isfinite(x) else repr(x)  # "nan", "inf", "-inf"




def _categories_to_json(column, values, name):
    """One column's pandas categories as ``{"column", "dtype", "values"}``.

    Only categories that JSON holds exactly are saved: all strings, or all
    numbers or booleans of one NumPy dtype (whose ``str`` is kept, so that
    they read back with the dtype they had).
    """
    values = np.asarray(values)
    if values.ndim == 1 and values.dtype.kind in "iub":
        return {"column": column, "dtype": values.dtype.str, "values": values.tolist()}
    if values.ndim == 1 and values.dtype.kind == "f":
        return {"column": column, "dtype": values.dtype.str,
                "values": [_float_to_json(v) for v in values]}
    if values.ndim == 1 and values.dtype.kind in "OU" and all(isinstance(v, str) for v in values):
        return {"column": column, "dtype": "str", "values": [str(v) for v in values]}
    raise ValueError(
        f"Cannot save the categories of column {name!r} (dtype {values.dtype}): model files "
        "hold pandas categories that are all strings, or all numbers or booleans. Convert "
        f"them (e.g. X[{name!r}] = X[{name!r}].cat.rename_categories(str)) and fit again."
    )


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
        "grow_policy_": str(estimator.grow_policy_),
        "n_training_queries": int(getattr(estimator, "_n_training_queries", 1)),
    }
    for attr in ("platt_coef_", "platt_intercept_"):
        if hasattr(estimator, attr):
            fitted[attr] = _float_to_json(getattr(estimator, attr))
    for attr in OBJECTIVE_ATTRIBUTES.get(estimator.objective_, ()):
        if hasattr(estimator, attr):
            fitted[attr] = [_float_to_json(v) for v in getattr(estimator, attr)]

    is_categorical = getattr(mapper, "is_categorical_", None)
    pandas_categories = getattr(estimator, "_pandas_categories", {})
    categorical = (is_categorical is not None and bool(np.any(is_categorical))) or bool(
        pandas_categories)
    if categorical:
        names = fitted["feature_names_in_"]
        fitted["pandas_categories"] = [
            _categories_to_json(int(j), values, names[j] if names else j)
            for j, values in sorted(pandas_categories.items())
        ]

    ensemble = estimator._tree_ensemble()
    node_fields = {**NODE_FIELDS, **(CATEGORICAL_NODE_FIELDS if categorical else {})}
    arrays = {"node_" + f: ensemble.nodes[f] for f in node_fields}
    if categorical:
        arrays["bin_is_categorical"] = np.asarray(is_categorical, dtype=np.uint8)
    statistics = estimator._fitted_statistics()
    wide = mapper.has_wide_columns() or statistics is not None
    if wide:
        arrays["bin_feature_columns"] = mapper.feature_columns_
    if statistics is not None:
        fitted["target_statistic_prior"] = _float_to_json(statistics.prior_)
        arrays.update(
            target_statistic_columns=statistics.columns,
            target_statistic_n_categories=np.array([c.shape[0] for c in statistics.categories_],
                                                   dtype=np.int64),
            target_statistic_categories=np.concatenate(statistics.categories_),
            target_statistic_values=np.concatenate(statistics.values_),
        )
        if statistics.partners is not None:
            arrays.update(
                target_statistic_partners=statistics.partners,
                target_statistic_n_edges=np.array([e.shape[0] for e in statistics.edges_],
                                                  dtype=np.int64),
                target_statistic_edges=np.concatenate(statistics.edges_),
            )
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
    version = (COMBINATIONS_VERSION if statistics is not None and statistics.partners is not None
               else TARGET_STATISTICS_VERSION if statistics is not None
               else WIDE_CATEGORICAL_VERSION if wide
               else CATEGORICAL_VERSION if categorical else _RANKER_VERSION)
    dtypes = array_dtypes(version)
    blobs = {k: _npy_bytes(v, dtypes[k]) for k, v in arrays.items()}

    document = {
        "format": FORMAT_NAME,
        "format_version": version,
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
            k: {"dtype": dtypes[k], "shape": list(np.shape(v))} for k, v in arrays.items()
        },
    }
    return document, blobs


def write_model_file(document, blobs, path, extra=()):
    """Write ``document`` as model.json, ``blobs`` as ``<name>.npy`` and the
    ``(member, bytes)`` pairs of ``extra`` into a zip archive at ``path``.

    A path is written to a temporary file next to it and then renamed, so a
    crash never leaves a half-written model behind.
    """
    text = json.dumps(document, indent=1, allow_nan=False, ensure_ascii=False)
    members = [(JSON_MEMBER, text.encode("utf-8"))]
    members += [(k + ".npy", b) for k, b in blobs.items()] + list(extra)

    def write(target):
        with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for member, data in members:
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


def save_ranker(estimator, path):
    """Write a fitted ranker (not a pipeline) to ``path``; what
    ``ranker.save_model(path)`` and :func:`sklearn_ltr.save_model` do for a
    ranker."""
    check_node_dtype()
    document, blobs = ranker_content(estimator, model_classes())
    write_model_file(document, blobs, path)
