"""Reading one ranker back from a model file's ``model.json`` and ``.npy``
arrays (formats 1 and 3), checking everything it reads: types, dtypes,
shapes and tree structure, before the ranker is built.

The writing side is ``sklearn_ltr._rankers.model_file``, which also holds
the format's field lists.
"""

import io

import numpy as np

from .._gbdt.binning import BinMapper, _search_tables
from .._gbdt.booster import Booster
from .._gbdt.category_bins import first_binned_features
from .._gbdt.common import BITSET_WORDS, MAX_BINS, NODE_DTYPE, bitset_below
from .._gbdt.grower import GROW_POLICIES
from .._rankers.early_stopping_metric import scoring_metric
from .._rankers.model_file import (
    CATEGORICAL_NODE_FIELDS,
    CATEGORICAL_VERSION,
    COMBINATIONS_VERSION,
    TARGET_STATISTICS_VERSION,
    INNER_SHAPES,
    NODE_FIELDS,
    OBJECTIVE_ATTRIBUTES,
    array_dtypes,
)
from .._rankers.registry import model_classes
from .._rankers.target_statistics import OrderedTargetStatistics
from .._rankers.tree_shape import constraint_record, tree_constraints

__all__ = ["ModelFileError", "build_ranker", "get_field", "read_arrays"]


class ModelFileError(Exception):
    """A problem with a model file's content; load_model adds the file's name."""


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


def _float_from_json(x, what):
    if isinstance(x, bool) or not isinstance(x, (int, float, str)):
        raise ModelFileError(f"{what} must be a number, got {x!r}")
    if isinstance(x, str):
        if x not in ("nan", "inf", "-inf"):
            raise ModelFileError(f"{what} must be a number, got {x!r}")
    return float(x)


def _categories_from_json(spec, n_features):
    """The ``(column, values)`` of one entry of ``fitted.pandas_categories``."""
    what = "an entry of fitted.pandas_categories"
    column = get_field(spec, "column", "int", what)
    dtype = get_field(spec, "dtype", "str", what)
    values = get_field(spec, "values", "any", what)
    if not 0 <= column < n_features:
        raise ModelFileError(f"pandas_categories names column {column}, outside [0, {n_features})")
    if not isinstance(values, list):
        raise ModelFileError(f"the pandas categories of column {column} are not a list")
    if dtype == "str":
        if not all(isinstance(v, str) for v in values):
            raise ModelFileError(f"the pandas categories of column {column} are not all strings")
        array = np.array(values, dtype=object)
    else:
        try:
            dt = np.dtype(dtype)
        except TypeError:
            dt = None
        if dt is None or dt.kind not in "iubf" or dt.str != dtype:
            raise ModelFileError(f"the pandas categories of column {column} have dtype {dtype!r}")
        if dt.kind == "f":
            values = [_float_from_json(v, f"a pandas category of column {column}") for v in values]
        elif not all(isinstance(v, bool) == (dt.kind == "b")
                     and isinstance(v, int) for v in values):
            raise ModelFileError(f"the pandas categories of column {column} are not all {dt}")
        try:
            array = np.array(values, dtype=dt)
        except OverflowError:
            raise ModelFileError(f"a pandas category of column {column} overflows {dt}") from None
        if dt.kind == "f" and np.isnan(array).any():
            raise ModelFileError(f"the pandas categories of column {column} include NaN")
    if np.unique(array).shape[0] != array.shape[0]:
        raise ModelFileError(f"the pandas categories of column {column} repeat a value")
    return column, array


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


def read_arrays(zf, manifest, version):
    """The ``.npy`` members of the open zip ``zf``, checked against the
    manifest and the arrays of ``format_version`` ``version``."""
    expected = array_dtypes(version)
    if not isinstance(manifest, dict) or set(manifest) != set(expected):
        got = sorted(manifest) if isinstance(manifest, dict) else manifest
        raise ModelFileError(
            f"the array manifest lists {got}, expected {sorted(expected)} in a file of "
            f"format_version {version}"
        )
    arrays = {}
    for key, dtype in expected.items():
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
        inner = INNER_SHAPES.get(key, ())
        if (array.dtype != np.dtype(dtype) or array.ndim != 1 + len(inner)
                or array.shape[1:] != inner):
            shape = "(n,)" if not inner else f"(n, {', '.join(map(str, inner))})"
            raise ModelFileError(
                f"member {key}.npy has dtype {array.dtype.str} and shape {array.shape}, "
                f"expected an array of {dtype} of shape {shape}"
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
    if any(a["node_" + f].shape[0] != n_nodes for f in (*NODE_FIELDS, *CATEGORICAL_NODE_FIELDS)):
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
    categorical = a["node_is_categorical"]
    if np.any(categorical > 1) or np.any(categorical[~split] != 0):
        raise ModelFileError("node_is_categorical must be 0 or 1, and 0 at leaves")
    numeric = split & (categorical == 0)
    if np.any(np.isnan(a["node_num_threshold"][numeric])):
        raise ModelFileError("a split has a NaN threshold")
    if not np.all(np.isnan(a["node_num_threshold"][split & (categorical == 1)])):
        raise ModelFileError("a categorical split has a threshold (it must be NaN)")
    if np.any(a["node_left_categories"][categorical == 0] != 0):
        raise ModelFileError("node_left_categories is set at a node that is not a categorical split")


def _check_categorical_splits(a, mapper):
    """Splits on categorical features are categorical splits, the others are
    not, and a split's left categories are categories of its feature."""
    split = a["node_is_leaf"] == 0
    feature = a["node_feature_idx"][split]
    categorical = a["node_is_categorical"][split] == 1
    if np.any(categorical != mapper.is_categorical_[feature]):
        raise ModelFileError(
            "a split's node_is_categorical differs from bin_is_categorical of its feature"
        )
    # The bits a feature's splits may set: one per category.
    allowed = np.array([bitset_below(n) for n in mapper.n_bins_non_missing_])
    bits = a["node_left_categories"][split][categorical]
    if np.any(bits & ~allowed[feature[categorical]]):
        raise ModelFileError("a categorical split sends a category its feature does not have left")


def _feature_columns(a, n_features):
    """The input column of each binned feature: ``bin_feature_columns`` of
    a format 4 file, checked, else one feature per column."""
    if "bin_feature_columns" not in a:
        return np.arange(n_features, dtype=np.int64)
    columns = a["bin_feature_columns"]
    if (np.any(np.diff(columns) < 0)
            or not np.array_equal(np.unique(columns), np.arange(n_features))):
        raise ModelFileError(
            f"bin_feature_columns must list every column in [0, {n_features}) in "
            "increasing order"
        )
    return columns


def _rebuild_bin_mapper(a, info, feature_columns):
    n_features = int(feature_columns[-1]) + 1
    n_binned = feature_columns.shape[0]
    max_bins = get_field(info, "max_bins", "int", "bin_mapper")
    missing_bin = get_field(info, "missing_values_bin_idx", "int", "bin_mapper")
    if not 2 <= max_bins <= MAX_BINS or missing_bin != max_bins:
        raise ModelFileError(f"bin_mapper has max_bins={max_bins}, missing bin {missing_bin}")
    if get_field(info, "n_features", "int", "bin_mapper") != n_features:
        raise ModelFileError("bin_mapper.n_features differs from n_features_in_")
    n_thr = a["bin_n_thresholds"]
    thresholds = a["bin_thresholds"]
    is_categorical = a["bin_is_categorical"]
    if any(a[k].shape[0] != n_binned
           for k in ("bin_n_thresholds", "bin_has_missing", "bin_is_categorical")):
        raise ModelFileError(
            "bin_n_thresholds / bin_has_missing / bin_is_categorical need one entry per "
            "binned feature"
        )
    if np.any(is_categorical > 1):
        raise ModelFileError("bin_is_categorical must be 0 or 1")
    is_categorical = is_categorical.astype(bool)
    first = first_binned_features(feature_columns)
    column_is_categorical = is_categorical[first]
    if np.any(is_categorical != column_is_categorical[feature_columns]):
        raise ModelFileError("the binned features of a column are not all categorical or all numeric")
    if np.any(np.bincount(feature_columns)[~column_is_categorical] > 1):
        raise ModelFileError("a numeric column has more than one binned feature")
    # A categorical feature's "thresholds" are its categories, up to max_bins.
    most = np.where(is_categorical, max_bins, max_bins - 1)
    if np.any((n_thr < 0) | (n_thr > most)) or n_thr.sum() != thresholds.shape[0]:
        raise ModelFileError("bin_n_thresholds does not match bin_thresholds")
    per_feature = np.split(thresholds, np.cumsum(n_thr)[:-1]) if n_features else []
    if any(np.any(~(np.diff(t) > 0)) or np.any(np.isnan(t)) for t in per_feature):
        raise ModelFileError("the bin thresholds of a feature are not increasing")
    for f in np.flatnonzero(is_categorical):
        t = per_feature[f]
        if np.any((t < 0) | (t >= 2**31) | (t != np.floor(t))):
            raise ModelFileError(
                f"the categories of feature {f} are not integer codes in [0, 2**31)"
            )
    estimator_mask = column_is_categorical.copy() if is_categorical.any() else None
    mapper = BinMapper(max_bins=max_bins, subsample=None, is_categorical=estimator_mask)
    padded = np.zeros((n_features, max_bins - 1))
    numeric_n_thr = np.where(column_is_categorical, 0, n_thr[first])
    for column, f in enumerate(first):
        padded[column, : numeric_n_thr[column]] = per_feature[f][: numeric_n_thr[column]]
    # Categorical columns are binned by category, not by this table; BinMapper.fit
    # leaves their rows empty too.
    mapper._tables = _search_tables(padded, numeric_n_thr)
    mapper.bin_thresholds_ = [t.copy() for t in per_feature]
    mapper.n_bins_non_missing_ = np.where(is_categorical, n_thr, n_thr + 1).astype(np.uint32)
    mapper.is_categorical_ = is_categorical
    mapper.missing_values_bin_idx_ = missing_bin
    mapper.has_missing_values_ = a["bin_has_missing"].astype(bool)
    mapper.feature_columns_ = feature_columns
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
    if "grow_policy" in classes[name]._get_param_names():
        # Files written before the parameter existed hold leaf-wise trees,
        # whatever the class's default is now.
        params.setdefault("grow_policy", "lossguide")
    try:
        estimator = classes[name](**params)
        estimator._validate_params()
    except (TypeError, ValueError) as exc:
        raise ModelFileError(f"its parameters do not fit {name}: {exc}") from None

    fitted = get_field(document, "fitted", "dict", "model.json")
    booster_info = get_field(document, "booster", "dict", "model.json")
    n_features = get_field(fitted, "n_features_in_", "int", "fitted")
    n_trees = get_field(booster_info, "n_trees", "int", "booster")
    version = get_field(document, "format_version", "int", "model.json")
    n_statistics = (a["target_statistic_columns"].shape[0]
                    if version >= TARGET_STATISTICS_VERSION else 0)
    # The booster reads the input columns, then one column per target statistic.
    n_model_columns = n_features + n_statistics
    if n_features < 1 or get_field(booster_info, "n_features", "int",
                                   "booster") != n_model_columns:
        raise ModelFileError("booster.n_features must be n_features_in_ (positive) plus the "
                             "number of target statistics")
    if get_field(fitted, "n_iter_", "int", "fitted") != n_trees:
        raise ModelFileError(f"n_iter_ differs from the number of trees ({n_trees})")
    if version < CATEGORICAL_VERSION:
        # Files of earlier formats have no categorical feature.
        n_nodes = a["node_value"].shape[0]
        a = {
            **a,
            "node_is_categorical": np.zeros(n_nodes, dtype=np.uint8),
            "node_left_categories": np.zeros((n_nodes, BITSET_WORDS), dtype=np.uint32),
            "bin_is_categorical": np.zeros(n_features, dtype=np.uint8),
        }
    feature_columns = _feature_columns(a, n_model_columns)
    _check_trees(a, n_trees, feature_columns.shape[0])
    mapper = _rebuild_bin_mapper(a, get_field(document, "bin_mapper", "dict", "model.json"),
                                 feature_columns)
    _check_categorical_splits(a, mapper)
    pandas_categories = {}
    if version >= CATEGORICAL_VERSION:
        specs = get_field(fitted, "pandas_categories", "any", "fitted")
        if not isinstance(specs, list):
            raise ModelFileError("fitted.pandas_categories must be a list")
        for spec in specs:
            column, values = _categories_from_json(spec, n_features)
            if column in pandas_categories:
                raise ModelFileError(f"pandas_categories lists column {column} twice")
            pandas_categories[column] = values
            for f in np.flatnonzero(feature_columns == column):
                codes = mapper.bin_thresholds_[f]
                if mapper.is_categorical_[f] and codes.size and codes[-1] >= values.shape[0]:
                    raise ModelFileError(
                        f"feature {column} has category code {codes[-1]:g}, but its column "
                        f"has {values.shape[0]} pandas categories"
                    )

    objective_name = get_field(booster_info, "objective_name", "str", "booster")
    missing_bin = get_field(booster_info, "missing_values_bin_idx", "int", "booster")
    if missing_bin != mapper.missing_values_bin_idx_:
        raise ModelFileError("the booster and the bin mapper disagree on the missing-value bin")
    booster = Booster(
        objective_name=objective_name,
        baseline=_float_from_json(get_field(booster_info, "baseline", "any", "booster"), "baseline"),
        n_features=n_model_columns,
        missing_values_bin_idx=missing_bin,
    )
    nodes = np.zeros(a["node_value"].shape[0], dtype=NODE_DTYPE)
    for f in (*NODE_FIELDS, *CATEGORICAL_NODE_FIELDS):
        nodes[f] = a["node_" + f]
    booster.categories = mapper.feature_categories()
    booster.feature_columns = mapper.wide_feature_columns()
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
    # Files written before grow_policy="auto" hold the shape their
    # grow_policy names.
    estimator.grow_policy_ = (get_field(fitted, "grow_policy_", "str", "fitted")
                              if "grow_policy_" in fitted else estimator.grow_policy)
    if estimator.grow_policy_ not in GROW_POLICIES:
        raise ModelFileError(f"grow_policy_ must be one of {GROW_POLICIES}, "
                             f"got {estimator.grow_policy_!r}")
    if fitted.get("n_training_queries") is not None:  # absent from older files
        estimator._n_training_queries = get_field(fitted, "n_training_queries", "int", "fitted")
    estimator._bin_mapper = mapper
    estimator.is_categorical_ = (mapper.is_categorical if mapper.is_categorical is None
                                 else mapper.is_categorical[:n_features])
    estimator._target_statistics = (
        _target_statistics(a, fitted, estimator.is_categorical_, mapper, version)
        if n_statistics else None)
    fitted_kind = (None if estimator._target_statistics is None
                   else estimator._target_statistics.kind)
    if estimator.target_statistics != fitted_kind:
        raise ModelFileError(f"params.target_statistics is {estimator.target_statistics!r}, "
                             f"but the target_statistic arrays are those of {fitted_kind!r}")
    # The constraints the saved trees were grown with, as far as the saved
    # parameters tell: a warm start refuses others.
    try:
        constraints = tree_constraints(estimator)
    except ValueError as exc:
        raise ModelFileError(f"its constraints do not fit its features: {exc}") from None
    estimator._grown_constraints = constraint_record(*constraints)
    estimator._pandas_categories = dict(sorted(pandas_categories.items()))
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
    estimator._set_objective_attributes(_objective_attributes(fitted, objective_name))
    return estimator


def _target_statistics(a, fitted, is_categorical, mapper, version):
    """The checked statistics of a format 5 or 6 file."""
    columns = a["target_statistic_columns"]
    if is_categorical is None:
        raise ModelFileError("target statistics need categorical columns, and this file has none")
    n_features = is_categorical.shape[0]
    partners = (a["target_statistic_partners"] if version >= COMBINATIONS_VERSION
                else np.full(columns.shape[0], -1))
    single = partners < 0
    n_single = int(np.sum(single))
    if (partners.shape != columns.shape or np.any(single[n_single:]) or n_single == 0
            or np.any(np.diff(columns[:n_single]) <= 0) or columns.min() < 0
            or columns.max() >= n_features or not np.all(is_categorical[columns])):
        raise ModelFileError("target_statistic_columns must be increasing categorical columns, "
                             "then the first column of each combination")
    combined = columns[n_single:]
    if (np.any(partners[n_single:] >= n_features) or np.any(partners[n_single:] == combined)
            or not np.all(np.isin(combined, columns[:n_single]))):
        raise ModelFileError("target_statistic_partners must be other input columns, combined "
                             "with a categorical column that has a statistic of its own")
    if np.any(mapper.is_categorical_[mapper.feature_columns_ >= n_features]):
        raise ModelFileError("a target statistic column is binned as categorical")
    sizes = a["target_statistic_n_categories"]
    categories, values = a["target_statistic_categories"], a["target_statistic_values"]
    if (sizes.shape != columns.shape or np.any(sizes < 0)
            or sizes.sum() != categories.shape[0] or values.shape != categories.shape):
        raise ModelFileError("target_statistic_n_categories does not match the categories "
                             "and values")
    statistics = OrderedTargetStatistics(
        columns, partners if version >= COMBINATIONS_VERSION else None)
    cuts = np.cumsum(sizes)[:-1]
    statistics.categories_ = np.split(categories, cuts)
    statistics.values_ = np.split(values, cuts)
    if any(np.any(~(np.diff(c) > 0)) for c in statistics.categories_) or not np.all(
            np.isfinite(categories)) or not np.all(np.isfinite(values)):
        raise ModelFileError("the target statistics' categories must be increasing and their "
                             "values finite")
    if version >= COMBINATIONS_VERSION:
        n_edges, edges = a["target_statistic_n_edges"], a["target_statistic_edges"]
        numeric_partner = (partners >= 0) & ~np.isin(partners, columns[:n_single])
        if (n_edges.shape != columns.shape or np.any(n_edges < 0)
                or np.any(n_edges[~numeric_partner] > 0) or n_edges.sum() != edges.shape[0]):
            raise ModelFileError("target_statistic_n_edges must count the edges of the numeric "
                                 "partners (none for the other statistics)")
        statistics.edges_ = np.split(edges, np.cumsum(n_edges)[:-1])
        if not np.all(np.isfinite(edges)) or any(np.any(~(np.diff(e) > 0))
                                                 for e in statistics.edges_):
            raise ModelFileError("target_statistic_edges must be finite and increasing")
    statistics.prior_ = _float_from_json(
        get_field(fitted, "target_statistic_prior", "any", "fitted"), "target_statistic_prior")
    if not np.isfinite(statistics.prior_):
        raise ModelFileError("target_statistic_prior must be finite")
    return statistics


def _objective_attributes(fitted, objective_name):
    """The attributes its objective learned (name -> array): in ``fitted``
    exactly for the objectives of ``OBJECTIVE_ATTRIBUTES``, all of them."""
    expected = OBJECTIVE_ATTRIBUTES.get(objective_name, ())
    for owner, names in OBJECTIVE_ATTRIBUTES.items():
        present = [name in fitted for name in names]
        if present != [owner == objective_name] * len(names):
            raise ModelFileError(
                f"{' and '.join(names)} belong{'s' if len(names) == 1 else ''} to models of "
                f"the {owner} objective, and {'are' if len(names) > 1 else 'is'} part of "
                "every such model"
            )
    learned = {}
    for attr in expected:
        values = fitted[attr]
        if not isinstance(values, list) or not values:
            raise ModelFileError(f"fitted.{attr} must be a non-empty list of numbers")
        array = np.array([_float_from_json(v, f"fitted.{attr}") for v in values])
        if not np.all(np.isfinite(array)):
            raise ModelFileError(f"fitted.{attr} must hold finite numbers")
        # Biases are ratios of losses; offsets are scores, of any sign.
        if attr.startswith("position_bias") and np.any(array < 0):
            raise ModelFileError(f"fitted.{attr} must hold finite non-negative numbers")
        learned[attr] = array
    if len({array.shape for array in learned.values()}) > 1:
        raise ModelFileError(f"{' and '.join(expected)} differ in length")
    return learned
